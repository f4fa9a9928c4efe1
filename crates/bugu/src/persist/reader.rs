//! Reading from a stream: [`Decoder`] reads a file through any [`Read`], hashing every byte on the
//! way, and checks the checksum at the end — one pass, no second copy of the filter.
//!
//! Allocation follows the input, never a length it claims: when the input's size is known (a
//! file, whose length the caller passes), a section larger than what remains is refused before
//! anything is allocated; when it is not (a socket, a pipe), the table grows geometrically as
//! bytes actually arrive (from 8 KiB, doubling, the last step exact), so a short hostile stream
//! that claims 2^60 buckets costs 8 KiB before it is found truncated.

use std::io::{self, Read};

use xxhash_rust::xxh3::Xxh3;

use crate::filter::CuckooFilter;
use crate::table::{PADDING, reserve_buffer};

use super::error::PersistError;
use super::format::{
    CHECKSUM_LEN, Flags, HEADER_LEN, SECTION_PARAMS_LEN, Section, check_content, check_zeros, parse_header,
};
use super::kind::FilterKind;

/// The first allocation for a table read from a stream of unknown length.
const FIRST_CHUNK: usize = 8 << 10;

/// Reads one persisted filter from a stream: [`header`](Self::header), then the filter type's own
/// fields and [`section`](Self::section)s, then [`finish`](Self::finish), which checks the
/// checksum and only then reports content errors (so that random corruption reads as a checksum
/// mismatch). Nothing read may be used unless `finish` succeeds.
///
/// ```text
/// let mut decoder = Decoder::new(reader, None);
/// expect_kind(decoder.header()?, FilterKind::Growable)?;
/// let levels = decoder.read_u64("level count")?;   // validate before use: bound it by the input
/// for _ in 0..levels { chain.push(decoder.section()?); }
/// decoder.finish()?;
/// ```
pub(crate) struct Decoder<R: Read> {
    inner: R,
    hasher: Xxh3,
    /// Bytes consumed so far.
    offset: u64,
    /// Total bytes the input is known to hold, counted from its start, if known.
    available: Option<u64>,
    /// The first content error, reported by `finish` once the checksum has passed.
    deferred: Option<PersistError>,
    /// The header's flags, which every section read after it takes.
    flags: Option<Flags>,
}

impl<R: Read> Decoder<R> {
    /// A decoder at the start of `inner`; `available` is the input's total length if known.
    pub(crate) fn new(inner: R, available: Option<u64>) -> Self {
        Decoder { inner, hasher: Xxh3::new(), offset: 0, available, deferred: None, flags: None }
    }

    /// Bytes consumed so far.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads until `buf` is full or the input ends; returns the bytes read. Not hashed.
    fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.inner.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.offset += filled as u64;
        Ok(filled)
    }

    /// Fills `buf` (hashed), or fails with `Truncated` inside `part`.
    fn fill(&mut self, buf: &mut [u8], part: &'static str) -> Result<(), PersistError> {
        let filled = self.read_some(buf)?;
        self.hasher.update(&buf[..filled]);
        if filled < buf.len() {
            return Err(PersistError::Truncated { offset: self.offset, part });
        }
        Ok(())
    }

    /// Reads and checks the file header; returns the kind it announces. Its flags apply to every
    /// section read after it.
    pub(crate) fn header(&mut self) -> Result<FilterKind, PersistError> {
        let mut header = [0; HEADER_LEN];
        let filled = self.read_some(&mut header)?;
        self.hasher.update(&header[..filled]);
        let header = parse_header(&header[..filled])?;
        self.flags = Some(header.flags);
        Ok(header.kind)
    }

    /// The flags of the header read (`None` before it is).
    pub(crate) fn flags(&self) -> Option<Flags> {
        self.flags
    }

    /// Reads a little-endian `u64` (one of a filter type's own fields).
    pub(crate) fn read_u64(&mut self, part: &'static str) -> Result<u64, PersistError> {
        let mut raw = [0; 8];
        self.fill(&mut raw, part)?;
        Ok(u64::from_le_bytes(raw))
    }

    /// Reads one cuckoo filter section into an owned filter.
    pub(crate) fn section(&mut self) -> Result<CuckooFilter, PersistError> {
        let mut raw = [0; SECTION_PARAMS_LEN];
        self.fill(&mut raw, "section parameters")?;
        let flags = self.flags.expect("the header is read before any section");
        let section = Section::parse(&raw, flags)?;
        let payload_offset = self.offset;
        if let Some(available) = self.available {
            let needed = (section.payload_len + section.tail_len + CHECKSUM_LEN) as u64;
            if available.saturating_sub(payload_offset) < needed {
                return Err(PersistError::Truncated { offset: available, part: "payload" });
            }
        }
        let table_bytes = self.read_payload(section.payload_len, self.available.is_some())?;
        let mut tail = [0; 24];
        let tail = &mut tail[..section.tail_len];
        let tail_offset = self.offset;
        self.fill(tail, "padding")?;
        let table = section.table(table_bytes)?;
        if let Err(e) =
            check_zeros(tail, tail_offset).and_then(|()| check_content(&table, section.len, payload_offset))
        {
            self.deferred.get_or_insert(e);
        }
        // The count is checked with the content, before `finish` lets the filter be used.
        Ok(section.filter(table, true))
    }

    /// Reads `len` bytes into the checksum without keeping them: what a view checks in place.
    pub(crate) fn skip_bytes(&mut self, len: usize, part: &'static str) -> Result<(), PersistError> {
        let mut scratch = [0u8; 8192];
        let mut left = len;
        while left > 0 {
            let take = left.min(scratch.len());
            self.fill(&mut scratch[..take], part)?;
            left -= take;
        }
        Ok(())
    }

    /// Reads `len` bytes of a filter type's own data, allocated as a section's payload is: at
    /// once when the input is known to hold them, else as they arrive.
    pub(crate) fn read_bytes(&mut self, len: usize, part: &'static str) -> Result<Vec<u8>, PersistError> {
        if let Some(available) = self.available
            && available.saturating_sub(self.offset) < len as u64 + CHECKSUM_LEN as u64
        {
            return Err(PersistError::Truncated { offset: available, part });
        }
        let mut bytes = self.read_payload(len, self.available.is_some())?;
        bytes.truncate(len);
        Ok(bytes)
    }

    /// Reads `payload_len` bytes into a buffer with room for the table's padding (zeroed).
    fn read_payload(&mut self, payload_len: usize, proven: bool) -> Result<Vec<u8>, PersistError> {
        let total = payload_len + PADDING;
        let mut bytes = Vec::new();
        if proven {
            // The input holds these bytes: one exact allocation, advised as a new table's is.
            bytes =
                reserve_buffer(total).map_err(|failed| PersistError::OutOfMemory { bytes: failed.bytes })?;
            bytes.resize(payload_len, 0);
            self.fill(&mut bytes, "payload")?;
        } else {
            while bytes.len() < payload_len {
                let len = bytes.len();
                let next = payload_len.min(len.saturating_mul(2).max(FIRST_CHUNK));
                let padding = if next == payload_len { PADDING } else { 0 };
                bytes
                    .try_reserve_exact(next + padding - len)
                    .map_err(|_| PersistError::OutOfMemory { bytes: next + padding })?;
                bytes.resize(next, 0);
                self.fill(&mut bytes[len..], "payload")?;
            }
        }
        bytes.resize(total, 0);
        Ok(bytes)
    }

    /// Reads the checksum and compares it with the bytes read; then reports any content error
    /// found in the sections.
    pub(crate) fn finish(&mut self) -> Result<(), PersistError> {
        let computed = self.hasher.digest();
        let mut raw = [0; CHECKSUM_LEN];
        let filled = self.read_some(&mut raw)?;
        if filled < CHECKSUM_LEN {
            return Err(PersistError::Truncated { offset: self.offset, part: "checksum" });
        }
        let stored = u64::from_le_bytes(raw);
        if stored != computed {
            return Err(PersistError::ChecksumMismatch { stored, computed });
        }
        self.deferred.take().map_or(Ok(()), Err)
    }
}
