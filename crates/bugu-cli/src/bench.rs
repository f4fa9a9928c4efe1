//! `bugu bench`: the "Bloom vs cuckoo" table measured on this machine — memory, insert time,
//! query time and false-positive rate of bugu and of a Bloom filter (fastbloom) configured for
//! the same target rate — through the comparison harness of `bugu-bench`.

use std::path::Path;

use bugu_bench::compare::{self, KeyType, Options};
use bugu_bench::report::charts;
use bugu_bench::seed_table;
use bugu_bench::timing::Clock;

use crate::error::{Failure, Status, print};

pub(crate) fn bench(
    sizes: Option<Vec<usize>>,
    fpr: f64,
    repeats: usize,
    plot: Option<&Path>,
) -> Result<Status, Failure> {
    if !(fpr > 0.0 && fpr < 0.5) {
        return Err(Failure::message(format!("--fpr must be between 0 and 0.5, got {fpr}")));
    }
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
    print(&(seed_table::render(&report) + "\n"))?;
    for warning in report.warnings() {
        eprintln!("bugu: {warning}");
    }
    if let Some(path) = plot {
        charts::lookup_chart(&report, path)
            .map_err(|error| Failure::message(format!("cannot draw the chart: {error}")).in_file(path))?;
        eprintln!("bugu: chart written to {}", path.display());
    }
    Ok(Status::All)
}
