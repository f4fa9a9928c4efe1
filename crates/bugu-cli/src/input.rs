//! Where items come from: the command line, a file (`--input`), or standard input; one item per
//! line, taken as raw bytes (only the line ending, `\n` or `\r\n`, is removed), or hex-encoded
//! with `--hex`.
//!
//! Input is read in large blocks and split without allocating per line; the caller gets the
//! items a block at a time, the shape the library's batched operations want.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::Failure;

/// Bytes read at a time.
const BLOCK_BYTES: usize = 1 << 20;

/// One item: the text as given, and the bytes it stands for (the same unless hex-encoded).
pub(crate) type Item<'a> = (&'a [u8], &'a [u8]);

/// Where a command reads its items.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    /// Items given as arguments.
    Args(Vec<OsString>),
    /// One item per line of a file.
    File(PathBuf),
    /// One item per line of standard input.
    Stdin,
}

impl Source {
    /// Arguments if any, else `--input` (where `-` means standard input), else standard input.
    pub(crate) fn new(items: Vec<OsString>, input: Option<PathBuf>) -> Result<Self, Failure> {
        match (items.is_empty(), input) {
            (false, Some(_)) => Err(Failure::message("give items as arguments or with --input, not both")),
            (false, None) => Ok(Self::Args(items)),
            (true, Some(path)) if path == Path::new("-") => Ok(Self::Stdin),
            (true, Some(path)) => Ok(Self::File(path)),
            (true, None) => Ok(Self::Stdin),
        }
    }

    /// The length of the input in bytes, when it is a file (for a progress bar).
    pub(crate) fn len_hint(&self) -> Option<u64> {
        match self {
            Self::File(path) => std::fs::metadata(path).ok().map(|meta| meta.len()),
            _ => None,
        }
    }

    /// Calls `each` with the items, a block at a time: each item as `(raw, bytes)`, the text as
    /// given and the bytes it stands for (the same unless `hex`). `each` also gets how many input
    /// bytes the block consumed.
    pub(crate) fn for_each_block(
        &self,
        hex: bool,
        mut each: impl FnMut(&[Item<'_>], u64) -> Result<(), Failure>,
    ) -> Result<(), Failure> {
        let mut decoded = Vec::new();
        match self {
            Self::Args(items) => {
                let raw: Vec<&[u8]> = items.iter().map(|item| item.as_bytes()).collect();
                let block = decode_block(&raw, hex, &mut decoded, "argument", 0)?;
                each(&block, 0)
            }
            Self::File(path) => {
                let file = File::open(path).map_err(|error| Failure::io(path, &error))?;
                read_lines(file, path, hex, &mut decoded, &mut each)
            }
            Self::Stdin => read_lines(io::stdin().lock(), Path::new("<stdin>"), hex, &mut decoded, &mut each),
        }
    }
}

/// Reads lines in blocks; a line split across two reads is carried over to the next block.
/// Errors of reading and decoding name the input (`name`); those of `each` pass through.
fn read_lines(
    mut reader: impl Read,
    name: &Path,
    hex: bool,
    decoded: &mut Vec<u8>,
    each: &mut impl FnMut(&[Item<'_>], u64) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let mut buffer = vec![0u8; BLOCK_BYTES];
    let (mut filled, mut line_number) = (0, 0u64);
    loop {
        if filled == buffer.len() {
            // One line longer than the buffer: grow it.
            buffer.resize(buffer.len() * 2, 0);
        }
        let read = match reader.read(&mut buffer[filled..]) {
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(Failure::message(format!("read error: {error}")).in_file(name)),
        };
        filled += read;
        let at_end = read == 0;
        // Complete lines only, unless the input ended.
        let complete = if at_end {
            filled
        } else {
            match memchr::memrchr(b'\n', &buffer[..filled]) {
                Some(last) => last + 1,
                None => continue,
            }
        };
        {
            let text = &buffer[..complete];
            let mut lines = Vec::new();
            let mut start = 0;
            for end in memchr::memchr_iter(b'\n', text) {
                lines.push(strip_cr(&text[start..end]));
                start = end + 1;
            }
            if start < text.len() {
                lines.push(strip_cr(&text[start..]));
            }
            let block = decode_block(&lines, hex, decoded, "line", line_number)
                .map_err(|failure| failure.in_file(name))?;
            line_number += lines.len() as u64;
            each(&block, complete as u64)?;
        }
        if at_end {
            return Ok(());
        }
        buffer.copy_within(complete..filled, 0);
        filled -= complete;
    }
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Pairs each item with the bytes it stands for; with `hex`, decodes into `decoded` first.
fn decode_block<'a>(
    items: &[&'a [u8]],
    hex: bool,
    decoded: &'a mut Vec<u8>,
    what: &str,
    first_number: u64,
) -> Result<Vec<Item<'a>>, Failure> {
    if !hex {
        return Ok(items.iter().map(|&item| (item, item)).collect());
    }
    decoded.clear();
    let mut ends = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        decode_hex(item, decoded).ok_or_else(|| {
            Failure::message(format!(
                "{what} {} is not hex: {}",
                first_number + index as u64 + 1,
                String::from_utf8_lossy(item)
            ))
        })?;
        ends.push(decoded.len());
    }
    let decoded: &'a [u8] = decoded;
    let mut start = 0;
    Ok(items
        .iter()
        .zip(ends)
        .map(|(&item, end)| {
            let bytes = &decoded[start..end];
            start = end;
            (item, bytes)
        })
        .collect())
}

/// Appends the bytes a hex string stands for; `None` if it is not an even number of hex digits.
fn decode_hex(text: &[u8], out: &mut Vec<u8>) -> Option<()> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    for pair in text.chunks_exact(2) {
        out.push(digit(pair[0])? << 4 | digit(pair[1])?);
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every item of a reader, as (raw, bytes) pairs, with a tiny block size forced by long lines.
    /// An item as (raw text, bytes), owned.
    type OwnedItem = (Vec<u8>, Vec<u8>);

    fn items(text: &[u8], hex: bool) -> Result<Vec<OwnedItem>, Failure> {
        let mut all = Vec::new();
        let mut decoded = Vec::new();
        read_lines(text, Path::new("test"), hex, &mut decoded, &mut |block: &[Item<'_>], _| {
            all.extend(block.iter().map(|(raw, bytes)| (raw.to_vec(), bytes.to_vec())));
            Ok(())
        })?;
        Ok(all)
    }

    fn raw(items: &[OwnedItem]) -> Vec<&[u8]> {
        items.iter().map(|(raw, _)| raw.as_slice()).collect()
    }

    #[test]
    fn lines_lose_only_their_endings() {
        let all = items(b"a\r\n b \n\nlast", false).unwrap();
        assert_eq!(raw(&all), [&b"a"[..], b" b ", b"", b"last"]);
        assert_eq!(raw(&items(b"x\n", false).unwrap()), [&b"x"[..]]);
        assert!(items(b"", false).unwrap().is_empty());
    }

    #[test]
    fn lines_across_blocks_and_longer_than_a_block() {
        let long = vec![b'z'; BLOCK_BYTES * 2 + 3];
        let mut text = Vec::new();
        for i in 0..300_000u32 {
            text.extend_from_slice(format!("item-{i}\n").as_bytes());
        }
        text.extend_from_slice(&long);
        text.extend_from_slice(b"\nend\n");
        let all = items(&text, false).unwrap();
        assert_eq!(all.len(), 300_002);
        assert_eq!(all[299_999].0, b"item-299999");
        assert_eq!((all[300_000].0.len(), all[300_001].0.as_slice()), (long.len(), &b"end"[..]));
    }

    #[test]
    fn hex_items() {
        let all = items(b"00ff\r\nABcd\n\n", true).unwrap();
        assert_eq!(
            all,
            [(b"00ff".to_vec(), vec![0, 255]), (b"ABcd".to_vec(), vec![0xab, 0xcd]), (vec![], vec![])]
        );
        for bad in [&b"abc\n"[..], b"zz\n", b"ok00\n"] {
            let error = items(bad, true).unwrap_err();
            assert!(error.to_string().contains("line 1 is not hex"), "{error}");
        }
        assert!(items(b"00\n0g\n", true).unwrap_err().to_string().contains("line 2"));
    }
}
