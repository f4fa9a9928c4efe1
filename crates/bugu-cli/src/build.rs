//! `bugu build`: a new filter file from a list, sized from its line count. Lists are sets to
//! their users, so a line repeated is stored once and counted as a repeat.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::create::FilterOptions;
use crate::error::{Failure, Status};
use crate::input::Source;
use crate::update::{ItemOptions, insert_all};

/// The full 64-bit hashes of the items seen so far. Two lines are the same key to the filter
/// exactly when their hashes are equal (the filter stores nothing else of them), so this finds
/// every repeat and never takes a different key for one. A fingerprint lookup would not do: a
/// different key whose fingerprint is already there (a look-alike) would be skipped, and read
/// absent once the look-alike is removed.
pub(crate) struct Seen(HashSet<u64, BuildHasherDefault<Passthrough>>);

impl Seen {
    fn with_capacity(items: usize) -> Self {
        Self(HashSet::with_capacity_and_hasher(items, BuildHasherDefault::default()))
    }

    /// Whether `hash` is seen for the first time (it is then remembered).
    pub(crate) fn first(&mut self, hash: u64) -> bool {
        self.0.insert(hash)
    }
}

/// The keys are already uniform 64-bit hashes: a hasher that passes them through costs nothing.
#[derive(Default)]
pub(crate) struct Passthrough(u64);

impl Hasher for Passthrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used; any other input is folded in, to stay a correct hasher.
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

/// Builds a new filter file from a list, in one pass through the batched inserts; sized from
/// the number of lines unless a capacity is given. An empty list makes a filter only of a
/// capacity given: sized from nothing, it would hold one item.
pub(crate) fn build(
    path: &Path,
    input: Option<PathBuf>,
    capacity: Option<usize>,
    filter_options: &FilterOptions,
    options: ItemOptions,
) -> Result<Status, Failure> {
    filter_options.check_target(path)?;
    let source = Source::new(Vec::new(), input)?;
    let lines = match &source {
        Source::File(list) => Some(count_lines(list)?),
        _ => None,
    };
    let capacity = match (capacity, lines, &source) {
        (Some(capacity), _, _) => capacity,
        (None, Some(0), Source::File(list)) => {
            return Err(Failure::message(
                "the list is empty: no count to size the filter from (give --capacity N for an empty filter of N items)",
            )
            .in_file(list));
        }
        (None, Some(lines), _) => lines,
        (None, _, _) => {
            return Err(Failure::message("give --capacity when the list comes from standard input"));
        }
    };
    let seen = Seen::with_capacity(lines.unwrap_or(capacity).min(capacity));
    let status = insert_all(path, filter_options.build(capacity)?, &source, options, Some(seen))?;
    if lines == Some(0) {
        options
            .output
            .note(path, &format!("the list is empty: an empty filter for --capacity {capacity} items"));
    }
    Ok(status)
}

/// Lines in a file: newlines, plus a last line without one.
fn count_lines(path: &Path) -> Result<usize, Failure> {
    let mut file = std::fs::File::open(path).map_err(|error| Failure::io(path, &error))?;
    let mut buffer = vec![0u8; 1 << 20];
    let (mut lines, mut last) = (0, b'\n');
    loop {
        let read = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(Failure::io(path, &error)),
        };
        lines += memchr::memchr_iter(b'\n', &buffer[..read]).count();
        last = buffer[read - 1];
    }
    Ok(lines + usize::from(last != b'\n'))
}
