//! `bugu check`: which items may be in a filter, like `grep -F -f`: prints the items that may be
//! present (or, with `--absent`, the others; with `--count`, only how many), through the batched
//! lookups of a memory-mapped file. Exit status 0 if every item may be present, 1 if some is
//! absent.

use std::io::{BufWriter, IsTerminal, Write};
use std::path::Path;

use crate::error::{Failure, Status};
use crate::files::Mapped;
use crate::input::Source;
use crate::progress::Progress;

/// What `check` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Show {
    /// The absent items instead of those that may be present.
    pub(crate) absent: bool,
    /// Only how many there are.
    pub(crate) count: bool,
}

pub(crate) fn check(
    path: &Path,
    source: &Source,
    show: Show,
    hex: bool,
    quiet: bool,
) -> Result<Status, Failure> {
    let mapped = Mapped::open(path)?;
    let filter = mapped.query();
    let summary = !quiet && std::io::stderr().is_terminal();
    let mut progress = Progress::start(source, summary);
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let (mut present, mut absent) = (0u64, 0u64);
    source.for_each_block(hex, |block, bytes| {
        let hashes: Vec<u64> = block.iter().map(|(_, item)| filter.hash_of_bytes(item)).collect();
        for (found, (raw, _)) in filter.contains_hash_batch(&hashes).into_iter().zip(block) {
            if found {
                present += 1;
            } else {
                absent += 1;
            }
            if found != show.absent && !show.count {
                out.write_all(raw).and_then(|()| out.write_all(b"\n")).map_err(Failure::output)?;
            }
        }
        progress.advance(block.len(), bytes);
        Ok(())
    })?;
    if show.count {
        writeln!(out, "{}", if show.absent { absent } else { present }).map_err(Failure::output)?;
    }
    out.flush().map_err(Failure::output)?;
    progress.finish(&format!("checked {}: {present} may be present, {absent} absent", present + absent));
    Ok(if absent == 0 { Status::All } else { Status::Some })
}
