//! `bugu info` (a filter's parameters and statistics, as text or JSON) and `bugu dump` (the
//! contents of a range of buckets).

use std::io::{BufWriter, Write};
use std::ops::Range;
use std::path::Path;

use bugu::{AnyFilter, CuckooFilter, Filter, Stats, Summary};
use serde_json::{Value, json};

use crate::error::{Failure, Status, print};
use crate::files;
use crate::report::Output;

/// Prints a filter's parameters and statistics; with `-q` only checks the file (exit 0 if it is a
/// sound filter).
pub(crate) fn info(path: &Path, output: Output) -> Result<Status, Failure> {
    let filter = files::load(path)?;
    if output.quiet {
        return Ok(Status::All);
    }
    let file_bytes = std::fs::metadata(path).map_err(|error| Failure::io(path, &error))?.len();
    let summary = filter.summary();
    let text = match output.json {
        true => to_json(&describe(&filter, &summary, path, file_bytes))? + "\n",
        false => text(&filter, &summary, path, file_bytes),
    };
    print(&text)?;
    Ok(Status::All)
}

fn to_json(value: &Value) -> Result<String, Failure> {
    serde_json::to_string_pretty(value).map_err(|error| Failure::message(error.to_string()))
}

/// The report of `info --json`: the summary's fields under their own names (its count of
/// tables as `level_count`, since a chain's `levels` lists them), then what only one kind has.
fn describe(filter: &AnyFilter, summary: &Summary, path: &Path, file_bytes: u64) -> Value {
    let report = json!({
        "file": path.display().to_string(),
        "file_bytes": file_bytes,
        "kind": summary.kind.to_string(),
        "items": summary.items,
        "capacity": summary.capacity,
        "max_capacity": summary.max_capacity,
        "level_count": summary.levels,
        "buckets": summary.buckets,
        "bucket_size": summary.bucket_size,
        "fingerprint_bits": summary.fingerprint_bits,
        "load_factor": summary.load_factor,
        "bits_per_item": summary.bits_per_item,
        "memory_bytes": summary.memory_bytes,
        "target_false_positive_rate": summary.target_false_positive_rate,
        "false_positive_rate_bound": summary.false_positive_rate_bound,
        "expected_false_positive_rate": summary.expected_false_positive_rate,
        "seed": filter.seed(),
        "hash_function": filter.hash_function().name(),
    });
    let own = match filter {
        AnyFilter::Fixed(table) => {
            let mut own = fill(&table.stats());
            own["eviction_limit"] = json!(table.eviction_limit());
            own
        }
        AnyFilter::Chain(chain) => json!({
            "growth_factor": chain.growth_factor(),
            "eviction_limit": chain.eviction_limit(),
            "levels": chain.levels().iter().map(level).collect::<Vec<_>>(),
        }),
        AnyFilter::OneTable(table) => {
            let stats = table.stats();
            json!({
                "tail_bits": stats.tail_bits,
                "level": stats.level,
                "split_pointer": stats.split_pointer,
                "entries": stats.entries,
                "twins": stats.twins,
                "stash": stats.stash,
                "tail_histogram": stats.tail_histogram,
            })
        }
        // A kind newer than this command: its summary says what every kind has.
        _ => json!({}),
    };
    merged(report, own)
}

/// How full a cuckoo table's buckets are.
fn fill(stats: &Stats) -> Value {
    json!({
        "empty_bucket_share": stats.empty_bucket_share,
        "full_bucket_share": stats.full_bucket_share,
        "fill_histogram": stats.fill_histogram,
    })
}

/// One level of a chain: its sizes and its own bound, and how full its buckets are.
fn level(table: &CuckooFilter) -> Value {
    let summary = table.summary();
    let sizes = json!({
        "capacity": summary.capacity,
        "items": summary.items,
        "buckets": summary.buckets,
        "bucket_size": summary.bucket_size,
        "fingerprint_bits": summary.fingerprint_bits,
        "memory_bytes": summary.memory_bytes,
        "load_factor": summary.load_factor,
        "false_positive_rate_bound": summary.false_positive_rate_bound,
    });
    merged(sizes, fill(&table.stats()))
}

/// The fields of two JSON objects in one.
fn merged(mut first: Value, second: Value) -> Value {
    if let (Some(first), Value::Object(second)) = (first.as_object_mut(), second) {
        first.extend(second);
    }
    first
}

/// A rate as a percentage.
fn percent(rate: f64) -> String {
    format!("{:.4}%", rate * 100.0)
}

/// The report of `info`: what every kind has from the summary, in one form, and each kind's own
/// lines after it.
fn text(filter: &AnyFilter, summary: &Summary, path: &Path, file_bytes: u64) -> String {
    let mut out = format!("file:                {} ({file_bytes} bytes)\n", path.display());
    let (kind, items) = match filter {
        AnyFilter::Fixed(_) => (
            "cuckoo filter (fixed size)".to_string(),
            format!("{} of capacity {}", summary.items, summary.capacity),
        ),
        // Its levels may each hold a little more than their capacity, and it grows when they
        // are full: the capacity is where it next grows, not a limit.
        AnyFilter::Chain(_) => (
            "growable cuckoo filter (a chain of tables)".to_string(),
            format!(
                "{}; current capacity {} (it grows when full), {}",
                summary.items,
                summary.capacity,
                match summary.max_capacity {
                    Some(max) => format!("maximum {max} items"),
                    None => "no maximum".to_string(),
                }
            ),
        ),
        // Its maximum fixes its entries' widths: past it the bound would pass the target.
        AnyFilter::OneTable(_) => (
            "growable cuckoo filter in one table".to_string(),
            format!(
                "{}; it grows as items arrive, declared for at most {} items",
                summary.items,
                summary.max_capacity.unwrap_or_default()
            ),
        ),
        _ => (
            format!("{} filter", summary.kind),
            format!("{} of capacity {}", summary.items, summary.capacity),
        ),
    };
    out += &format!("kind:                {kind}\nitems:               {items}\n");
    out += &format!(
        "memory:              {} bytes, {:.2} bits per item\n",
        summary.memory_bytes, summary.bits_per_item
    );
    // A filter in one table expects no better than its bound: the figure once, then.
    let expected = match summary.expected_false_positive_rate {
        rate if rate < summary.false_positive_rate_bound => format!("{} expected now, ", percent(rate)),
        _ => String::new(),
    };
    out += &format!(
        "false positives:     {expected}at most {} (the bound)\n",
        percent(summary.false_positive_rate_bound)
    );
    if let Some(target) = summary.target_false_positive_rate {
        out += &format!("target rate:         {} at every size\n", percent(target));
    }
    let hash = format!("seed {}, hash {}", filter.seed(), filter.hash_function().name());
    match filter {
        AnyFilter::Fixed(table) => {
            out += &format!(
                "bucket size:         {}, eviction limit {}, {hash}\n",
                summary.bucket_size,
                table.eviction_limit()
            );
            out += &table.stats().to_string();
        }
        AnyFilter::Chain(chain) => {
            out += &format!(
                "bucket size:         {}, eviction limit {}, {hash}\n",
                summary.bucket_size,
                chain.eviction_limit()
            );
            out += &format!("growth:              x{} per level\n", chain.growth_factor());
            for (index, stats) in chain.stats().iter().enumerate() {
                out += &level_line(index, stats);
            }
        }
        AnyFilter::OneTable(table) => {
            let stats = table.stats();
            out += &format!(
                "entries:             {} fingerprint bits and up to {} tail bits each, {} per bucket; {hash}\n\
                 table:               {} buckets ({:.2}% of slots used), level {}, split pointer {}; {} entries ({} twins), {} stashed\n",
                summary.fingerprint_bits,
                stats.tail_bits,
                summary.bucket_size,
                summary.buckets,
                summary.load_factor * 100.0,
                stats.level,
                stats.split_pointer,
                stats.entries,
                stats.twins,
                stats.stash
            );
        }
        _ => out += &format!("bucket size:         {}, {hash}\n", summary.bucket_size),
    }
    out
}

fn level_line(index: usize, stats: &Stats) -> String {
    format!(
        "level {index}:             {} items in {} x {} slots of {} bits, load {:.2}%, {} bytes\n",
        stats.items,
        stats.buckets,
        stats.bucket_size,
        stats.fingerprint_bits,
        stats.load_factor * 100.0,
        stats.memory_bytes
    )
}

/// `A..B` (B excluded) or `A..=B`.
pub(crate) fn parse_range(text: &str) -> Result<Range<usize>, String> {
    let bad = || format!("expected a bucket range like 0..16 or 0..=15, got {text:?}");
    let (start, end) = text.split_once("..").ok_or_else(bad)?;
    let start: usize = start.trim().parse().map_err(|_| bad())?;
    let end = match end.strip_prefix('=') {
        Some(last) => last.trim().parse::<usize>().map_err(|_| bad())?.checked_add(1).ok_or_else(bad)?,
        None => end.trim().parse().map_err(|_| bad())?,
    };
    if start < end { Ok(start..end) } else { Err(format!("empty bucket range {text:?}")) }
}

/// Prints the buckets in `range` of a filter (of level `level` for a growable one), as lines or
/// as a JSON array of `{"index", "slots"}` (an empty slot is 0).
pub(crate) fn dump(
    path: &Path,
    range: Range<usize>,
    level: usize,
    output: Output,
) -> Result<Status, Failure> {
    let filter = files::load(path)?;
    let table = match &filter {
        AnyFilter::Fixed(filter) if level == 0 => filter,
        AnyFilter::Fixed(_) => {
            return Err(Failure::message("--level applies to a growable filter; this one has one table"));
        }
        AnyFilter::OneTable(_) => {
            return Err(Failure::message(
                "dump shows tables of fingerprints; a filter in one table stores entries of fingerprint and address bits: see `bugu info` for its table",
            ));
        }
        AnyFilter::Chain(growable) => growable.levels().get(level).ok_or_else(|| {
            Failure::message(format!(
                "--level {level}: the filter has {} levels (0 to {})",
                growable.level_count(),
                growable.level_count() - 1
            ))
        })?,
        _ => {
            return Err(Failure::message(format!(
                "dump shows tables of fingerprints, which a {} filter has none of",
                filter.kind()
            )));
        }
    };
    if range.end > table.bucket_count() {
        return Err(Failure::message(format!(
            "buckets {}..{} are outside the filter's {} buckets (0..{})",
            range.start,
            range.end,
            table.bucket_count(),
            table.bucket_count()
        )));
    }
    if output.quiet {
        return Ok(Status::All);
    }
    if output.json {
        let buckets: Vec<Value> = table
            .buckets(range)
            .map(|bucket| json!({ "index": bucket.index, "slots": bucket.slots }))
            .collect();
        return print(&(to_json(&Value::Array(buckets))? + "\n")).map(|()| Status::All);
    }
    let mut out = BufWriter::new(std::io::stdout().lock());
    for bucket in table.buckets(range) {
        writeln!(out, "{bucket}").map_err(Failure::output)?;
    }
    out.flush().map_err(Failure::output)?;
    Ok(Status::All)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(parse_range("0..16"), Ok(0..16));
        assert_eq!(parse_range("3..=3"), Ok(3..4));
        for bad in ["", "5", "a..b", "4..2", "3..3", "1..=x", "-1..3"] {
            assert!(parse_range(bad).is_err(), "{bad}");
        }
    }
}
