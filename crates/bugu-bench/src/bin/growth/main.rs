//! `growth`: bugu's growable filters — the chain `GrowableFilter` and the one-table
//! `ExpandingFilter` — grown from a small initial capacity to `--keys` keys, against a bugu
//! `CuckooFilter` sized for all the keys from the start and against the crates that grow,
//! `qfilter` resizeable and `scalable_cuckoo_filter`: what growing costs, against knowing the
//! size in advance and against the others that grow.
//!
//! ```text
//! cargo run --release -p bugu-bench --bin growth                        # 10M keys from 1,000
//! cargo run --release -p bugu-bench --bin growth -- --keys 1e6 --clock thread
//! cargo run --release -p bugu-bench --bin growth -- --keys 1e8 --repeats 1 --insert-fills 1 --clock thread --skip scalable
//! cargo run --release -p bugu-bench --bin growth -- --curve             # ratios at 8 sizes
//! ```
//!
//! It reuses the comparison harness: the same seeded workload (insert all keys, look up 0%, 50%
//! and 100% present keys, delete half), the same timed phases with medians of repeats, and the
//! same false-negative checks outside the timed loops. Further fills per one-by-one row
//! (`--insert-fills`, 3 by default, 1 for a run at 10^8 keys) time each insert on its own, its
//! time the least over the fills (the slowest insert, the 99.9th percentile; each fill's own
//! slowest beside them), and sample the memory at 16 log-spaced sizes per decade from 10^5 (from
//! 10^3 below 10^5 keys) up to `--keys`: bits per item at its peak during growth and averaged
//! over those sizes. `--skip ROW,...` leaves rows out (`pre-sized`, `pre-sized-batched`,
//! `chain`, `chain-batched`, `expanding`, `expanding-batched`, `qfilter`, `scalable`): a skipped
//! row is neither built, measured nor filled, and a ratio that needs it is "n/a (row skipped)",
//! neither met nor missed.
//!
//! It prints one markdown table and the ratios the project judges growth by, each next to its
//! `--target` (the project's by default) with "met" or "missed". The targets are all of the
//! `ExpandingFilter` (one by one unless said batched): its amortized insert at most 2x the
//! pre-sized filter's and 0.6x qfilter's; its absent and present lookups at most 1.5x the
//! pre-sized filter's, one by one and batched, and 0.8x qfilter's; its bits per item at most 24
//! at every sampled size, and averaged over the sizes from 10^5 at most 0.75x qfilter's; its
//! slowest single insert at most 200 µs; its false-positive rate at most the target rate. The
//! final bits per item, against the pre-sized filter and qfilter, and the bits averaged against
//! pre-sized filters are reported without a target. `--curve` measures instead the lookup ratio
//! of the expanding filter to a pre-sized one at 8 sizes from 10^3 to `--curve-max` and draws
//! it (its targets: at most 2x at every size). Reports go to `--out-dir`.

use std::path::PathBuf;
use std::process::ExitCode;

use bugu_bench::cli::parse_count;
use bugu_bench::contender::Settings;
use bugu_bench::growth::curve::{self, CurveSettings};
use bugu_bench::growth::profile::{InsertProfile, bits_per_item, sample_sizes};
use bugu_bench::growth::rows::{ROWS, Row, RowSettings, pre_sized};
use bugu_bench::report::save;
use bugu_bench::run::{Measurement, measure_with};
use bugu_bench::targets::{RatioRow, Target, check_names, table_worded};
use bugu_bench::timing::Clock;
use bugu_bench::workload::{Workload, u64_keys};
use clap::Parser;

mod report;

/// The project's targets for growth, the default `--target`s (passing any `--target` replaces
/// them all). Every ratio is the `ExpandingFilter`'s against the row its name says (pre-sized
/// when none).
const DEFAULT_TARGETS: [&str; 14] = [
    "insert<=2.0",
    "qfilter-insert<=0.6",
    "lookup-absent<=1.5",
    "lookup-present<=1.5",
    "lookup-absent-batched<=1.5",
    "lookup-present-batched<=1.5",
    "qfilter-absent<=0.8",
    "qfilter-present<=0.8",
    "bits-peak<=24",
    "qfilter-bits-averaged<=0.75",
    "slowest-insert-us<=200",
    "fpr-over-target<=1",
    "curve-absent-max<=2",
    "curve-present-max<=2",
];

/// The figures the table mode reports, by target name, in the report's order: the targeted
/// ones first, then those reported without a default target.
const TABLE_RATIOS: [&str; 16] = [
    "insert",
    "qfilter-insert",
    "lookup-absent",
    "lookup-present",
    "lookup-absent-batched",
    "lookup-present-batched",
    "qfilter-absent",
    "qfilter-present",
    "bits-peak",
    "qfilter-bits-averaged",
    "slowest-insert-us",
    "fpr-over-target",
    "bits-final",
    "bits-averaged",
    "bits-per-item",
    "qfilter-bits",
];

/// The figures the curve mode reports.
const CURVE_RATIOS: [&str; 2] = ["curve-absent-max", "curve-present-max"];

/// Growable filters vs a pre-sized filter vs the crates that grow, all fed the same keys.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    /// Keys inserted (1e7 or 10_000_000).
    #[arg(long, default_value = "1e7", value_parser = parse_count)]
    keys: usize,
    /// Initial capacity of the growing filters.
    #[arg(long, default_value = "1000", value_parser = parse_count)]
    initial: usize,
    /// Target false-positive rate of every filter (scalable_cuckoo_filter's default is 0.001).
    #[arg(long, default_value_t = 0.001)]
    fpr: f64,
    /// Timed repeats of each phase; the median is reported.
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// At most this many keys in each lookup mix.
    #[arg(long, default_value = "2e6", value_parser = parse_count)]
    max_lookups: usize,
    /// Per-insert fills of each one-by-one row, at least 1: each insert's time is its least over
    /// them (the same keys give every fill the same work; the machine's pauses differ). Each
    /// fill times every insert on its own and reads the clock twice per key, so it takes longer
    /// than the timed insert phase: pass 1 at 10^8 keys (the slowest insert is then one fill's,
    /// the machine's pauses included).
    #[arg(long, default_value = "3", value_parser = parse_count)]
    insert_fills: usize,
    /// Rows to leave out, comma-separated or repeated: a skipped row is neither built, measured
    /// nor filled, and every ratio that needs it is "n/a (row skipped)", neither met nor missed.
    /// At 10^8 keys the scalable row alone has run past ten minutes: `--skip scalable`.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "ROW")]
    skip: Vec<Row>,
    /// Keys per call of the batched rows.
    #[arg(long, default_value_t = 256)]
    batch: usize,
    /// The clock timing the loops (and each insert of the per-insert fill).
    #[arg(long, value_enum, default_value = "wall")]
    clock: Clock,
    /// Declared maximum of the expanding filter (it fixes its fingerprint and tail widths) and
    /// of qfilter's resizeable filter.
    #[arg(long, default_value = "1e8", value_parser = parse_count)]
    max_items: usize,
    /// Seed of the keys and of the lookup order.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// What a figure must be, `NAME<=LIMIT` or `NAME>=LIMIT`, repeatable; the project's
    /// targets by default.
    #[arg(long = "target", default_values = DEFAULT_TARGETS)]
    targets: Vec<Target>,
    /// Measure the lookup-ratio curve over 8 sizes instead of the table.
    #[arg(long)]
    curve: bool,
    /// The curve's largest size (its smallest is 10^3).
    #[arg(long, default_value = "1e7", value_parser = parse_count)]
    curve_max: usize,
    /// Lookups each timed sample of the curve covers at least (small sizes repeat their loop).
    #[arg(long, default_value = "1048576", value_parser = parse_count)]
    curve_sample: usize,
    /// Where the reports (growth.md; growth-curve.md and growth-curve.svg) go.
    #[arg(long, default_value = "target/bench-results")]
    out_dir: PathBuf,
}

impl Cli {
    /// The rows measured: every row but the skipped ones, in table order.
    fn rows(&self) -> Vec<Row> {
        ROWS.into_iter().filter(|row| !self.skip.contains(row)).collect()
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !(cli.fpr > 0.0 && cli.fpr < 1.0) {
        eprintln!("--fpr must be strictly between 0 and 1");
        return ExitCode::FAILURE;
    }
    let known: Vec<&str> = TABLE_RATIOS.iter().chain(&CURVE_RATIOS).copied().collect();
    if let Err(error) = check_names(&cli.targets, &known) {
        eprintln!("{error}");
        return ExitCode::FAILURE;
    }
    let (text, lost) = if cli.curve { run_curve(&cli) } else { run_table(&cli) };
    print!("{text}");
    let file = if cli.curve { "growth-curve.md" } else { "growth.md" };
    if let Err(error) = save(&cli.out_dir.join(file), &text) {
        eprintln!("{error}");
        return ExitCode::FAILURE;
    }
    // No filter may lose a key on insert, and no bugu filter on delete either: a growable
    // filter's delete that cannot tell two levels' copies apart removes nothing (it shows as a
    // failed delete, not a loss). A peer's losses after deletes are shown in the table.
    if lost {
        eprintln!("a filter lost keys or refused inserts: see the table");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// The table mode: every row not skipped through the harness, then the per-insert fill of each
/// one-by-one row. The report, and whether any filter lost a key or refused an insert.
///
/// At 10^8 keys the keys take 800 MB: the one workload is borrowed by every row (never copied),
/// and the fills share one vector of least times, 4 bytes a key.
fn run_table(cli: &Cli) -> (String, bool) {
    let lookups = cli.max_lookups.min(cli.keys);
    let present = u64_keys(cli.seed, 0, cli.keys);
    let absent = u64_keys(cli.seed, cli.keys as u64, lookups);
    let workload = Workload::new(present, &absent, lookups, cli.seed);
    drop(absent);
    let rows = RowSettings {
        keys: cli.keys,
        initial: cli.initial,
        fpr: cli.fpr,
        max_items: cli.max_items,
        batch: cli.batch,
    };
    let settings = Settings { capacity: cli.keys, fpr: cli.fpr, batch: cli.batch };
    let measured = cli.rows();
    let kinds: Vec<_> = measured.iter().map(|row| row.kind()).collect();
    eprintln!("{} keys grown from {}, p = {}, {} repeats", cli.keys, cli.initial, cli.fpr, cli.repeats);
    let results = measure_with(
        &kinds,
        |kind, _| Row::of(kind).build(&rows),
        &workload,
        &settings,
        cli.repeats,
        cli.clock,
    );
    let sizes = sample_sizes(cli.keys);
    let profiles: Vec<(Row, InsertProfile)> = measured
        .iter()
        .filter(|row| !row.batched())
        .map(|&row| {
            eprintln!("  per-insert fills: {} x {}", row.label(), cli.insert_fills);
            let keys = &workload.present;
            let mut profile = InsertProfile::from_fills(keys.len(), cli.insert_fills, |least| {
                row.build(&rows).insert_timed(keys, cli.clock, &sizes, least)
            });
            if row == Row::PreSized {
                // A filter pre-sized for each size, not the one sized for all the keys.
                profile.bits_at = sizes
                    .iter()
                    .map(|&size| (size, bits_per_item(pre_sized(size, cli.fpr).memory_bytes(), size)))
                    .collect();
            }
            (row, profile)
        })
        .collect();
    let is_peer = |m: &Measurement| matches!(Row::of(m.kind), Row::QFilter | Row::Scalable);
    let lost = results.iter().any(|m| {
        let lost = if is_peer(m) { m.false_negatives } else { m.total_false_negatives() };
        lost > 0 || m.failed_inserts > 0
    }) || profiles.iter().any(|(_, p)| p.failed > 0);
    (report::render(cli, &results, &profiles, &sizes), lost)
}

/// The curve mode: the table of ratios at each size, and the chart written beside the report.
fn run_curve(cli: &Cli) -> (String, bool) {
    let settings = CurveSettings {
        initial: cli.initial,
        fpr: cli.fpr,
        max_items: cli.max_items,
        max_lookups: cli.max_lookups,
        min_sample: cli.curve_sample,
        repeats: cli.repeats,
        clock: cli.clock,
        seed: cli.seed,
    };
    let points: Vec<_> = curve::log_sizes(1_000, cli.curve_max, 8)
        .into_iter()
        .map(|size| {
            eprintln!("  curve: {size} items");
            curve::measure(size, &settings)
        })
        .collect();
    let max = |i: usize| points.iter().map(|p| p.ratios()[i]).fold(f64::NAN, f64::max);
    let values = [max(0), max(1)];
    let ratio_rows: Vec<RatioRow<'_>> = CURVE_RATIOS
        .iter()
        .zip(["largest absent-lookup ratio over the sizes", "largest present-lookup ratio over the sizes"])
        .zip(values)
        .map(|((&name, label), value)| RatioRow {
            name,
            label,
            value: Some(value),
            per_round: Vec::new(),
            unmeasured: None,
        })
        .collect();
    let guides: Vec<(f64, String)> = cli
        .targets
        .iter()
        .filter(|t| t.name == CURVE_RATIOS[0])
        .filter_map(|t| match t.bound {
            bugu_bench::targets::Bound::AtMost(limit) => Some((limit, format!("target {limit}x"))),
            bugu_bench::targets::Bound::AtLeast(_) => None,
        })
        .collect();
    let svg_path = cli.out_dir.join("growth-curve.svg");
    let written = curve::chart(&points, cli.initial, &guides).map_err(|error| error.to_string());
    let chart_note = match written.and_then(|svg| save(&svg_path, &svg)) {
        Ok(()) => format!("Chart: {}", svg_path.display()),
        Err(error) => format!("Chart not written: {error}"),
    };
    let (ratios, met) = table_worded(&ratio_rows, &cli.targets, ["met", "missed"]);
    let text = format!(
        "ExpandingFilter grown from {} (declared maximum {}) / CuckooFilter pre-sized for each size; \
         p = {}; lookups one by one, at most {} keys per mix, each sample at least {} lookups; \
         median of {} interleaved repeats; {}.\n\n{}\n{ratios}\n{met} targets met.\n\n{chart_note}\n",
        cli.initial,
        cli.max_items,
        cli.fpr,
        cli.max_lookups,
        cli.curve_sample,
        cli.repeats.max(1),
        cli.clock.describe(),
        curve::table(&points),
    );
    (text, points.iter().any(|p| p.lost > 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("growth").chain(args.iter().copied()))
    }

    #[test]
    fn skipped_rows_are_parsed_by_their_names() {
        assert_eq!(parse(&[]).unwrap().rows(), ROWS, "every row by default");
        let cli = parse(&["--skip", "scalable"]).unwrap();
        assert_eq!(cli.skip, [Row::Scalable]);
        assert!(!cli.rows().contains(&Row::Scalable) && cli.rows().len() == ROWS.len() - 1);
        let cli = parse(&["--skip", "chain,chain-batched", "--skip", "qfilter"]).unwrap();
        assert_eq!(cli.skip, [Row::Growable, Row::GrowableBatched, Row::QFilter]);
        assert_eq!(
            cli.rows(),
            [Row::PreSized, Row::PreSizedBatched, Row::Expanding, Row::ExpandingBatched, Row::Scalable]
        );
        let every: Vec<&str> = ROWS.iter().map(|row| row.name()).collect();
        assert!(parse(&["--skip", &every.join(",")]).unwrap().rows().is_empty());
        let error = parse(&["--skip", "growable"]).unwrap_err().to_string();
        assert!(error.contains("growable") && error.contains("chain"), "{error}");
    }

    #[test]
    fn one_fill_is_allowed_and_none_is_not() {
        assert_eq!(parse(&[]).unwrap().insert_fills, 3);
        assert_eq!(parse(&["--insert-fills", "1"]).unwrap().insert_fills, 1);
        assert!(parse(&["--insert-fills", "0"]).is_err());
    }

    #[test]
    fn the_default_targets_name_known_ratios() {
        let known: Vec<&str> = TABLE_RATIOS.iter().chain(&CURVE_RATIOS).copied().collect();
        let cli = parse(&[]).unwrap();
        assert_eq!(cli.targets.len(), DEFAULT_TARGETS.len());
        assert_eq!(check_names(&cli.targets, &known), Ok(()));
    }
}
