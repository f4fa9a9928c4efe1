//! `bugu check`: which items may be in a filter, like `grep -F -f`: prints the items that may be
//! present (or, with `--absent`, the others; with `--count`, only how many), through the batched
//! lookups of a memory-mapped file. Exit status 0 if every item may be present, 1 if some is
//! absent.

use std::io::{BufWriter, IsTerminal, Write};
use std::path::Path;

use bugu::Filter;
use serde_json::json;

use crate::error::{Failure, Status};
use crate::files::Mapped;
use crate::input::Source;
use crate::progress::Progress;
use crate::report::{Done, Output};

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
    output: Output,
) -> Result<Status, Failure> {
    let mapped = Mapped::open(path)?;
    let filter = mapped.view(path)?;
    // The summary line goes with the bar, to a person at a terminal: a pipe gets the items alone.
    let terminal = std::io::stderr().is_terminal();
    let mut progress = Progress::start(source, !output.quiet);
    // The items shown: printed one per line, or gathered for the JSON result.
    let lines = !show.count && output.for_person();
    let mut gathered = Vec::new();
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
            if found != show.absent {
                if lines {
                    out.write_all(raw).and_then(|()| out.write_all(b"\n")).map_err(Failure::output)?;
                } else if output.json && !show.count {
                    gathered.push(String::from_utf8_lossy(raw).into_owned());
                }
            }
        }
        progress.advance(block.len(), bytes);
        Ok(())
    })?;
    if show.count && output.for_person() {
        writeln!(out, "{}", if show.absent { absent } else { present }).map_err(Failure::output)?;
    }
    out.flush().map_err(Failure::output)?;
    drop(out);
    let (items, seconds) = progress.finish();
    let text = format!("checked {}: {present} may be present, {absent} absent", present + absent);
    let mut fields = json!({ "may_be_present": present, "absent": absent });
    if !show.count {
        fields[if show.absent { "absent_items" } else { "present_items" }] = json!(gathered);
    }
    output.summary(Done { file: path, text: &text, items, seconds }, terminal, fields)?;
    Ok(if absent == 0 { Status::All } else { Status::Some })
}
