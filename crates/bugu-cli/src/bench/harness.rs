//! The table measured through `bugu-bench`'s comparison harness, so that `bugu bench` and
//! `compare --seed-table` print the same figures from the same code.

use std::path::Path;

use bugu_bench::compare::{self, KeyType, Options};
use bugu_bench::report::charts;
use bugu_bench::seed_table;
use bugu_bench::timing::Clock;

use serde_json::{Value, json};

use crate::error::{Failure, Status, print};
use crate::report::Output;

pub(super) fn measure(
    sizes: Option<Vec<usize>>,
    fpr: f64,
    repeats: usize,
    plot: Option<&Path>,
    output: Output,
) -> Result<Status, Failure> {
    let options = Options {
        sizes: sizes.unwrap_or_else(|| seed_table::SIZES.to_vec()),
        key_type: KeyType::U64,
        repeats: repeats.max(1),
        fpr,
        seed: 42,
        max_lookups: 10_000_000,
        batch: 256,
        kinds: seed_table::KINDS.to_vec(),
        clock: Clock::Wall,
    };
    let report = compare::run(&options);
    if output.json {
        let text =
            serde_json::to_string(&as_json(&report)).map_err(|error| Failure::message(error.to_string()))?;
        print(&(text + "\n"))?;
    } else if !output.quiet {
        print(&(seed_table::render(&report) + "\n"))?;
    }
    if output.for_person() {
        for warning in report.warnings() {
            eprintln!("bugu: {warning}");
        }
    }
    if let Some(path) = plot {
        charts::lookup_chart(&report, path)
            .map_err(|error| Failure::message(format!("cannot draw the chart: {error}")).in_file(path))?;
        if output.for_person() {
            eprintln!("bugu: chart written to {}", path.display());
        }
    }
    Ok(Status::All)
}

/// The table's figures, one object per filter and size.
fn as_json(report: &bugu_bench::report::Report) -> Value {
    let rows: Vec<Value> = report
        .measurements
        .iter()
        .map(|m| {
            json!({
                "filter": m.name,
                "config": m.config,
                "keys": m.keys,
                "memory_bytes": m.memory_bytes,
                "insert_ns": m.insert_ns,
                "lookup_ns": { "absent": m.lookup_ns[0], "half_present": m.lookup_ns[1], "present": m.lookup_ns[2] },
                "lookups": m.lookups,
                "false_positives": m.false_positives,
                // Measured, as against the target above: the two are named apart, as in `info`.
                "measured_false_positive_rate": m.false_positives as f64 / m.lookups.max(1) as f64,
            })
        })
        .collect();
    json!({
        "target_false_positive_rate": report.fpr,
        "repeats": report.repeats,
        "machine": report.machine,
        "warnings": report.warnings(),
        "measurements": rows,
    })
}
