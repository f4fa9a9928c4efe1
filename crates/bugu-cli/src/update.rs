//! `bugu add` and `bugu remove`: commands that change a filter file, holding its lock from the
//! read to the save. Each reads the items, applies them to the filter in memory, and saves the
//! file atomically; an error (a full filter) saves nothing, leaving the file exactly as it was.

use std::collections::HashSet;
use std::path::Path;

use bugu::{AnyFilter, Filter, FilterMut, InsertError};
use serde_json::json;

use crate::error::{Failure, Status};
use crate::files;
use crate::input::Source;
use crate::progress::Progress;
use crate::repeats::Repeats;
use crate::report::{Done, Output};

/// How items are read and added.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ItemOptions {
    /// Add an item only if it is not already (probably) present.
    pub(crate) unique: bool,
    /// Items are hex-encoded.
    pub(crate) hex: bool,
    pub(crate) output: Output,
}

/// Counts of what an insert did.
#[derive(Debug, Default)]
struct Tally {
    added: u64,
    /// `--unique`: items skipped because their fingerprint was already there.
    present: u64,
    /// `build`: lines whose key an earlier line already gave.
    repeated: u64,
    /// Items not added because their buckets already hold the most copies allowed.
    at_limit: u64,
    /// Those items, each named once, for the report.
    at_limit_items: Vec<String>,
    /// Their hashes, to name each once.
    at_limit_hashes: HashSet<u64>,
}

impl Tally {
    fn text(&self) -> String {
        format!(
            "added {}, already present {}, repeated {}, at copy limit {}",
            self.added, self.present, self.repeated, self.at_limit
        )
    }

    fn json(&self) -> serde_json::Value {
        json!({
            "added": self.added,
            "already_present": self.present,
            "repeated": self.repeated,
            "at_copy_limit": self.at_limit,
            "at_copy_limit_items": self.at_limit_items,
        })
    }

    /// An item whose buckets hold nothing but its copies: it reads present, but this copy was
    /// not added. Said once per item; the other items go on.
    fn copy_limit(&mut self, path: &Path, output: Output, hash: u64, item: &[u8], copies: usize) {
        self.at_limit += 1;
        if self.at_limit_hashes.insert(hash) {
            let item = String::from_utf8_lossy(item).into_owned();
            output.note(
                path,
                &format!("{item:?} has no room for another copy: its buckets are full and hold {copies} matches (at most 2 x bucket size copies of one item fit); not added (it still reads present)"),
            );
            self.at_limit_items.push(item);
        }
    }
}

/// Adds items to an existing filter file.
pub(crate) fn add(path: &Path, source: &Source, options: ItemOptions) -> Result<Status, Failure> {
    let (filter, _lock) = files::load_locked(path, !options.output.quiet)?;
    insert_all(path, filter, source, options, None).map(|(status, _)| status)
}

/// Inserts every item of `source` into `filter`, then saves it to `path`; on a refusal other
/// than an item's copy limit, fails without saving. With `repeats`, an item whose full hash came
/// before is a repeat and skipped. Plain inserts go through the pipelined batch; `--unique` ones
/// one by one (each must see the items before it). Returns the status and the items read.
pub(crate) fn insert_all(
    path: &Path,
    mut filter: AnyFilter,
    source: &Source,
    options: ItemOptions,
    mut repeats: Option<Repeats>,
) -> Result<(Status, u64), Failure> {
    let mut progress = Progress::start(source, !options.output.quiet);
    let mut tally = Tally::default();
    source.for_each_block(options.hex, |block, bytes| {
        let hashes: Vec<u64> = block.iter().map(|(_, item)| filter.hash_of_bytes(item)).collect();
        match repeats.as_mut() {
            Some(repeats) => {
                let fresh = repeats.sift(&filter, &hashes, block);
                insert_each(path, &mut filter, &fresh.hashes, &fresh.items, options, &mut tally)?;
            }
            None => {
                let items: Vec<&[u8]> = block.iter().map(|&(raw, _)| raw).collect();
                insert_each(path, &mut filter, &hashes, &items, options, &mut tally)?;
            }
        }
        progress.advance(block.len(), bytes);
        Ok(())
    })?;
    if let Some(repeats) = repeats.as_mut() {
        let (hashes, held) = repeats.finish();
        let items: Vec<&[u8]> = held.iter().map(Vec::as_slice).collect();
        insert_each(path, &mut filter, &hashes, &items, options, &mut tally)?;
        tally.repeated = repeats.found;
    }
    progress.saving(path);
    files::save(&filter, path)?;
    let (items, seconds) = progress.finish();
    let text = tally.text();
    options.output.summary(Done { file: path, text: &text, items, seconds }, true, tally.json())?;
    Ok((if tally.at_limit == 0 { Status::All } else { Status::Some }, items))
}

/// Inserts `hashes` (of the items `items`, for messages) and counts the outcomes; fails on a
/// refusal other than an item's copy limit.
fn insert_each(
    path: &Path,
    filter: &mut AnyFilter,
    hashes: &[u64],
    items: &[&[u8]],
    options: ItemOptions,
    tally: &mut Tally,
) -> Result<(), Failure> {
    // Whether each item was added (`false`: --unique found it present), or why not.
    let results: Vec<Result<bool, InsertError>> = if options.unique {
        hashes.iter().map(|&hash| filter.insert_unique_hash(hash)).collect()
    } else {
        filter.insert_hash_batch(hashes).into_iter().map(|result| result.map(|()| true)).collect()
    };
    for ((result, &hash), &raw) in results.into_iter().zip(hashes).zip(items) {
        match result {
            Ok(true) => tally.added += 1,
            Ok(false) => tally.present += 1,
            Err(InsertError::CopyLimit { copies }) => {
                tally.copy_limit(path, options.output, hash, raw, copies)
            }
            Err(error) => return Err(refusal(path, filter, error, raw, tally)),
        }
    }
    Ok(())
}

/// The failure of an insert that the filter refused: nothing is saved.
fn refusal(path: &Path, filter: &AnyFilter, error: InsertError, item: &[u8], tally: &Tally) -> Failure {
    let item = String::from_utf8_lossy(item);
    let what = match (error, filter.summary().max_capacity) {
        (InsertError::Full, Some(max)) => format!(
            "the filter reached its maximum of {max} items (--max-capacity) at {item:?}; nothing was saved (build a new filter with a larger --max-capacity, or none)"
        ),
        (InsertError::RateBound, Some(max)) => format!(
            "the filter reached the size it was declared for ({max} items, --max-capacity): more items would pass its false-positive rate; stopped at {item:?}, nothing was saved (build a new filter with a larger --max-capacity)"
        ),
        (InsertError::Full, None) => format!(
            "the filter is full after {} new items, at {item:?}; nothing was saved (use a larger --capacity, or --growable)",
            tally.added
        ),
        (other, _) => format!("{other}; nothing was saved"),
    };
    Failure::message(what).in_file(path)
}

/// Why `remove` refuses a filter that skipped add-if-absent inserts.
const SKIPPED_RISK: &str = "refusing to remove: this filter skipped add-if-absent (--unique) inserts \
    of items whose fingerprint it already held, possibly another item's; removing that other item \
    would make the skipped ones read absent (false negatives). Nothing was changed; pass \
    --allow-false-negatives to remove anyway, or rebuild the filter without --unique";

/// Removes one copy of each item; exit status 1 if some item was not found. A filter that
/// skipped add-if-absent inserts is refused unless `allow_false_negatives`.
pub(crate) fn remove(
    path: &Path,
    source: &Source,
    hex: bool,
    allow_false_negatives: bool,
    output: Output,
) -> Result<Status, Failure> {
    let (mut filter, _lock) = files::load_locked(path, !output.quiet)?;
    if filter.has_skipped_inserts() && !allow_false_negatives {
        return Err(Failure::message(SKIPPED_RISK).in_file(path));
    }
    let mut progress = Progress::start(source, !output.quiet);
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
        progress.saving(path);
        files::save(&filter, path)?;
    }
    let (items, seconds) = progress.finish();
    let text = format!("removed {removed}, not found {missing}");
    let fields = json!({ "removed": removed, "not_found": missing });
    output.summary(Done { file: path, text: &text, items, seconds }, true, fields)?;
    Ok(if missing == 0 { Status::All } else { Status::Some })
}
