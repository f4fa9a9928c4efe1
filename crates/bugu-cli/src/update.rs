//! `bugu add`, `bugu remove` and `bugu build`: commands that change a filter file. Each reads
//! the items, applies them to the filter in memory, and saves the file atomically only if every
//! item was applied: a failed command leaves the file exactly as it was.

use std::io::Read;
use std::path::{Path, PathBuf};

use bugu::InsertError;

use crate::create::FilterOptions;
use crate::error::{Failure, Status};
use crate::files::Owned;
use crate::input::Source;
use crate::progress::Progress;

/// How items are read and added.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ItemOptions {
    /// Add an item only if it is not already (probably) present.
    pub(crate) unique: bool,
    /// Items are hex-encoded.
    pub(crate) hex: bool,
    /// No summary line.
    pub(crate) quiet: bool,
}

/// Counts of what a command did.
#[derive(Debug, Default)]
struct Tally {
    added: u64,
    present: u64,
}

impl Tally {
    fn summary(&self) -> String {
        format!("added {}, already present {}, failed 0", self.added, self.present)
    }
}

/// Adds items to an existing filter file.
pub(crate) fn add(path: &Path, source: &Source, options: ItemOptions) -> Result<Status, Failure> {
    insert_all(path, Owned::load(path)?, source, options)
}

/// Inserts every item of `source` into `filter`, then saves it to `path`; on the first refusal,
/// fails without saving. Plain inserts go through the pipelined batch; `--unique` ones one by one
/// (each must see the items before it).
fn insert_all(
    path: &Path,
    mut filter: Owned,
    source: &Source,
    options: ItemOptions,
) -> Result<Status, Failure> {
    let mut progress = Progress::start(source, !options.quiet);
    let mut tally = Tally::default();
    source.for_each_block(options.hex, |block, bytes| {
        let hashes: Vec<u64> = block.iter().map(|(_, item)| filter.hash_of_bytes(item)).collect();
        if options.unique {
            for (&hash, (raw, _)) in hashes.iter().zip(block) {
                match filter.insert_unique_hash(hash) {
                    Ok(true) => tally.added += 1,
                    Ok(false) => tally.present += 1,
                    Err(error) => return Err(refusal(path, error, raw, &tally)),
                }
            }
        } else {
            for (result, (raw, _)) in filter.insert_hash_batch(&hashes).into_iter().zip(block) {
                result.map_err(|error| refusal(path, error, raw, &tally))?;
                tally.added += 1;
            }
        }
        progress.advance(block.len(), bytes);
        Ok(())
    })?;
    filter.save(path)?;
    progress.finish(&tally.summary());
    Ok(Status::All)
}

/// The failure of an insert that the filter refused: nothing is saved.
fn refusal(path: &Path, error: InsertError, item: &[u8], tally: &Tally) -> Failure {
    let item = String::from_utf8_lossy(item);
    let what = match error {
        InsertError::Full => format!(
            "the filter is full after {} new items, at {item:?}; nothing was saved (use a larger --capacity, or --growable)",
            tally.added
        ),
        InsertError::CopyLimit { copies } => format!(
            "{item:?} is already stored {copies} times, the most one item can be; nothing was saved (use --unique to add items once)"
        ),
        other => format!("{other}; nothing was saved"),
    };
    Failure::message(what).in_file(path)
}

/// Removes one copy of each item; exit status 1 if some item was not found.
pub(crate) fn remove(path: &Path, source: &Source, hex: bool, quiet: bool) -> Result<Status, Failure> {
    let mut filter = Owned::load(path)?;
    let mut progress = Progress::start(source, !quiet);
    let (mut removed, mut missing) = (0u64, 0u64);
    source.for_each_block(hex, |block, bytes| {
        for (_, item) in block {
            let hash = filter.hash_of_bytes(item);
            if filter.remove_hash(hash) {
                removed += 1;
            } else {
                missing += 1;
            }
        }
        progress.advance(block.len(), bytes);
        Ok(())
    })?;
    if removed > 0 {
        filter.save(path)?;
    }
    progress.finish(&format!("removed {removed}, not found {missing}"));
    Ok(if missing == 0 { Status::All } else { Status::Some })
}

/// Builds a new filter file from a list, in one pass through the batched inserts; sized from
/// the number of lines unless a capacity is given.
pub(crate) fn build(
    path: &Path,
    input: Option<PathBuf>,
    capacity: Option<usize>,
    filter_options: &FilterOptions,
    options: ItemOptions,
) -> Result<Status, Failure> {
    filter_options.check_target(path)?;
    let source = Source::new(Vec::new(), input)?;
    let capacity = match (capacity, &source) {
        (Some(capacity), _) => capacity,
        (None, Source::File(list)) => count_lines(list)?.max(1),
        (None, _) => return Err(Failure::message("give --capacity when the list comes from standard input")),
    };
    insert_all(path, filter_options.build(capacity)?, &source, options)
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
