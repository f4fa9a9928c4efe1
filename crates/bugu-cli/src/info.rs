//! `bugu info` (a filter's parameters and statistics, as text or JSON) and `bugu dump` (the
//! contents of a range of buckets).

use std::io::{BufWriter, Write};
use std::ops::Range;
use std::path::Path;

use bugu::{CuckooFilter, Filter, Stats};
use serde_json::{Value, json};

use crate::error::{Failure, Status, print};
use crate::files::Owned;
use crate::report::Output;

/// Prints a filter's parameters and statistics; with `-q` only checks the file (exit 0 if it is a
/// sound filter).
pub(crate) fn info(path: &Path, output: Output) -> Result<Status, Failure> {
    let filter = Owned::load(path)?;
    if output.quiet {
        return Ok(Status::All);
    }
    let file_bytes = std::fs::metadata(path).map_err(|error| Failure::io(path, &error))?.len();
    let report = describe(&filter, path, file_bytes);
    let text = match output.json {
        true => to_json(&report)? + "\n",
        false => text(&report, &filter),
    };
    print(&text)?;
    Ok(Status::All)
}

fn to_json(value: &Value) -> Result<String, Failure> {
    serde_json::to_string_pretty(value).map_err(|error| Failure::message(error.to_string()))
}

/// The parameters and statistics of one table.
fn level(filter: &CuckooFilter) -> Value {
    let stats = filter.stats();
    json!({
        "capacity": filter.capacity(),
        "items": filter.len(),
        "buckets": filter.bucket_count(),
        "bucket_size": filter.bucket_size(),
        "fingerprint_bits": filter.fingerprint_bits(),
        "memory_bytes": filter.memory_bytes(),
        "load_factor": filter.load_factor(),
        "false_positive_rate": filter.false_positive_rate(),
        "empty_bucket_share": stats.empty_bucket_share,
        "full_bucket_share": stats.full_bucket_share,
        "fill_histogram": stats.fill_histogram,
    })
}

fn describe(filter: &Owned, path: &Path, file_bytes: u64) -> Value {
    let mut report = match filter {
        Owned::Fixed(filter) => {
            let mut report = level(filter);
            report["kind"] = json!("cuckoo");
            report["expected_false_positive_rate"] = json!(filter.expected_false_positive_rate());
            report["bits_per_item"] = json!(filter.bits_per_item());
            report["eviction_limit"] = json!(filter.eviction_limit());
            report["seed"] = json!(filter.seed());
            report["hash_function"] = json!(filter.hash_function().name());
            report
        }
        Owned::Growable(filter) => json!({
            "kind": "growable",
            "capacity": filter.capacity(),
            "max_capacity": filter.max_capacity(),
            "items": filter.len(),
            "memory_bytes": filter.memory_bytes(),
            "bits_per_item": filter.bits_per_item(),
            "target_false_positive_rate": filter.target_false_positive_rate(),
            "false_positive_rate": filter.false_positive_rate(),
            "expected_false_positive_rate": filter.expected_false_positive_rate(),
            "growth_factor": filter.growth_factor(),
            "bucket_size": filter.bucket_size(),
            "eviction_limit": filter.eviction_limit(),
            "seed": filter.seed(),
            "hash_function": filter.hash_function().name(),
            "levels": filter.levels().iter().map(level).collect::<Vec<_>>(),
        }),
        Owned::Expanding(filter) => {
            let stats = filter.stats();
            json!({
                "kind": "expanding",
                "max_capacity": filter.max_items(),
                "items": stats.len,
                "memory_bytes": stats.memory_bytes,
                "bits_per_item": stats.bits_per_item,
                "target_false_positive_rate": stats.target_rate,
                "false_positive_rate": stats.target_rate,
                "expected_false_positive_rate": stats.rate_bound,
                "bucket_size": stats.bucket_size,
                "load_factor": stats.load_factor,
                "fingerprint_bits": stats.fingerprint_bits,
                "tail_bits": stats.tail_bits,
                "buckets": stats.buckets,
                "level": stats.level,
                "split_pointer": stats.split_pointer,
                "entries": stats.entries,
                "twins": stats.twins,
                "stash": stats.stash,
                "tail_histogram": stats.tail_histogram,
                "seed": filter.seed(),
                "hash_function": filter.hash_function().name(),
            })
        }
    };
    report["file"] = json!(path.display().to_string());
    report["file_bytes"] = json!(file_bytes);
    report
}

/// A rate of the report, as a percentage.
fn percent(report: &Value, key: &str) -> String {
    format!("{:.4}%", report[key].as_f64().unwrap_or(0.0) * 100.0)
}

fn text(report: &Value, filter: &Owned) -> String {
    let mut out = format!(
        "file:                {} ({} bytes)\n",
        report["file"].as_str().unwrap_or(""),
        report["file_bytes"]
    );
    let kind = match filter {
        Owned::Fixed(_) => "cuckoo filter (fixed size)",
        Owned::Growable(_) => "growable cuckoo filter (a chain of tables)",
        Owned::Expanding(_) => "growable cuckoo filter in one table",
    };
    out += &format!("kind:                {kind}\n");
    out += &match filter {
        Owned::Fixed(_) => {
            format!("items:               {} of capacity {}\n", report["items"], report["capacity"])
        }
        // Its levels may each hold a little more than their capacity, and it grows when they
        // are full: the capacity is where it next grows, not a limit.
        Owned::Growable(growable) => format!(
            "items:               {}; current capacity {} (it grows when full), {}\n",
            report["items"],
            report["capacity"],
            match growable.max_capacity() {
                Some(max) => format!("maximum {max} items"),
                None => "no maximum".to_string(),
            }
        ),
        Owned::Expanding(_) => format!(
            "items:               {}; it grows as items arrive, declared for at most {} items\n",
            report["items"], report["max_capacity"]
        ),
    };
    out += &format!(
        "memory:              {} bytes, {:.2} bits per item\n",
        report["memory_bytes"],
        report["bits_per_item"].as_f64().unwrap_or(0.0)
    );
    match filter {
        Owned::Fixed(filter) => out += &(tables_lines(report) + &filter.stats().to_string()),
        Owned::Growable(growable) => {
            out += &tables_lines(report);
            out += &format!(
                "target rate:         {} at every size\n",
                percent(report, "target_false_positive_rate")
            );
            out += &format!("growth:              x{} per level\n", growable.growth_factor());
            for (index, stats) in growable.stats().iter().enumerate() {
                out += &level_line(index, stats);
            }
        }
        Owned::Expanding(_) => out += &one_table_lines(report),
    }
    out
}

/// The rate and bucket lines of a filter made of cuckoo tables (fixed, or a chain of them).
fn tables_lines(report: &Value) -> String {
    format!(
        "false positives:     {} expected now, at most {} when full\n\
         bucket size:         {}, eviction limit {}, seed {}, hash {}\n",
        percent(report, "expected_false_positive_rate"),
        percent(report, "false_positive_rate"),
        report["bucket_size"],
        report["eviction_limit"],
        report["seed"],
        report["hash_function"].as_str().unwrap_or("")
    )
}

/// The rate, entry and table lines of a filter grown in one table.
fn one_table_lines(report: &Value) -> String {
    format!(
        "false positives:     at most {} now (the bound), at most {} at every size\n\
         entries:             {} fingerprint bits and up to {} tail bits each, {} per bucket; seed {}, hash {}\n\
         table:               {} buckets ({:.2}% of slots used), level {}, split pointer {}; {} entries ({} twins), {} stashed\n",
        percent(report, "expected_false_positive_rate"),
        percent(report, "target_false_positive_rate"),
        report["fingerprint_bits"],
        report["tail_bits"],
        report["bucket_size"],
        report["seed"],
        report["hash_function"].as_str().unwrap_or(""),
        report["buckets"],
        report["load_factor"].as_f64().unwrap_or(0.0) * 100.0,
        report["level"],
        report["split_pointer"],
        report["entries"],
        report["twins"],
        report["stash"]
    )
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
    let filter = Owned::load(path)?;
    let table = match &filter {
        Owned::Fixed(filter) if level == 0 => filter,
        Owned::Fixed(_) => {
            return Err(Failure::message("--level applies to a growable filter; this one has one table"));
        }
        Owned::Expanding(_) => {
            return Err(Failure::message(
                "dump shows tables of fingerprints; a filter in one table stores entries of fingerprint and address bits: see `bugu info` for its table",
            ));
        }
        Owned::Growable(growable) => growable.levels().get(level).ok_or_else(|| {
            Failure::message(format!(
                "--level {level}: the filter has {} levels (0 to {})",
                growable.level_count(),
                growable.level_count() - 1
            ))
        })?,
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
