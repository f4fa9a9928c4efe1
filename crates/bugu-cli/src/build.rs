//! `bugu build`: a new filter file from a list, sized from its line count. Lists are sets to
//! their users, so a line repeated is stored once and counted as a repeat (`repeats.rs` finds
//! them).

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::create::FilterOptions;
use crate::error::{Failure, Status};
use crate::input::Source;
use crate::repeats::Repeats;
use crate::update::{ItemOptions, insert_all};

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
    let repeats = Repeats::new(lines.unwrap_or(capacity).min(capacity));
    let (status, items) = insert_all(path, filter_options.build(capacity)?, &source, options, Some(repeats))?;
    if items == 0 {
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
