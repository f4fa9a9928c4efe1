//! `growth`: bugu's growable filter, grown from a small initial capacity to `--keys` keys, against
//! a bugu `CuckooFilter` sized for all the keys from the start and against
//! `scalable_cuckoo_filter` grown from the same initial capacity: what growing costs, against
//! knowing the size in advance and against the other crate that grows.
//!
//! ```text
//! cargo run --release -p bugu-bench --bin growth                        # 10M keys from 1,000
//! cargo run --release -p bugu-bench --bin growth -- --keys 1e6 --clock thread
//! ```
//!
//! It reuses the comparison harness: the same seeded workload (insert all keys, look up 0%, 50%
//! and 100% present keys, delete half), the same timed phases with medians of repeats, and the
//! same false-negative checks outside the timed loops. It prints one markdown table and the
//! ratios a reader judges growth by: lookup time and bits per item against the pre-sized
//! filter's, and lookup speed against scalable_cuckoo_filter's.

use std::hint::black_box;
use std::process::ExitCode;

use bugu::{CuckooFilter, ExpandingFilter, Filter, FilterMut, GrowableFilter};
use bugu_bench::cli::parse_count;
use bugu_bench::contender::{Contender, Kind, Settings};
use bugu_bench::run::{Measurement, measure_with};
use bugu_bench::timing::Clock;
use bugu_bench::workload::{Key, Workload, u64_keys};
use clap::Parser;

/// Growable filter vs pre-sized filter vs scalable_cuckoo_filter, all fed the same keys.
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
    /// Keys per call of the batched rows.
    #[arg(long, default_value_t = 256)]
    batch: usize,
    /// The clock timing the loops.
    #[arg(long, value_enum, default_value = "wall")]
    clock: Clock,
    /// The expanding filter's declared maximum (it fixes its fingerprint and tail widths).
    #[arg(long, default_value = "1e8", value_parser = parse_count)]
    max_items: usize,
    /// Seed of the keys and of the lookup order.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

/// The rows, each tagged by a `Kind` the harness carries through (it only uses the tag to call
/// `build` and to label the row, which [`Row::label`] replaces).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Row {
    PreSized,
    PreSizedBatched,
    Growable,
    GrowableBatched,
    Expanding,
    Scalable,
}

const ROWS: [Row; 6] =
    [Row::PreSized, Row::PreSizedBatched, Row::Growable, Row::GrowableBatched, Row::Expanding, Row::Scalable];

impl Row {
    fn kind(self) -> Kind {
        match self {
            Row::PreSized => Kind::Bugu { bits: 0, batched: false },
            Row::PreSizedBatched => Kind::Bugu { bits: 0, batched: true },
            Row::Growable => Kind::Bugu { bits: 1, batched: false },
            Row::GrowableBatched => Kind::Bugu { bits: 1, batched: true },
            Row::Expanding => Kind::Bugu { bits: 2, batched: false },
            Row::Scalable => Kind::Scalable,
        }
    }

    fn of(kind: Kind) -> Row {
        ROWS.into_iter().find(|row| row.kind() == kind).expect("only the rows' kinds are measured")
    }

    fn label(self) -> &'static str {
        match self {
            Row::PreSized => "bugu CuckooFilter, sized for all keys",
            Row::PreSizedBatched => "bugu CuckooFilter, sized for all keys, batched",
            Row::Growable => "bugu GrowableFilter, grown",
            Row::GrowableBatched => "bugu GrowableFilter, grown, batched",
            Row::Expanding => "bugu ExpandingFilter, grown",
            Row::Scalable => "scalable_cuckoo_filter 0.5, grown",
        }
    }
}

/// A bugu filter (pre-sized or growable) driven one key at a time or in batches.
struct Bugu<F> {
    filter: F,
    batch: Option<usize>,
    describe: fn(&F) -> String,
    memory: fn(&F) -> usize,
}

impl<F: Filter + FilterMut, K: Key> Contender<K> for Bugu<F> {
    fn config(&self) -> String {
        let mut text = (self.describe)(&self.filter);
        if let Some(batch) = self.batch {
            text.push_str(&format!("; contains_batch / insert_batch, {batch} keys per call"));
        }
        text
    }

    fn memory_source(&self) -> &'static str {
        "memory_bytes()"
    }

    fn memory_bytes(&self) -> usize {
        (self.memory)(&self.filter)
    }

    fn insert_all(&mut self, keys: &[K]) -> Vec<usize> {
        let mut failed = Vec::new();
        match self.batch {
            None => {
                for (i, key) in keys.iter().enumerate() {
                    if self.filter.insert(key).is_err() {
                        failed.push(i);
                    }
                }
            }
            Some(batch) => {
                for (c, chunk) in keys.chunks(batch).enumerate() {
                    for (i, result) in self.filter.insert_batch(chunk).iter().enumerate() {
                        if result.is_err() {
                            failed.push(c * batch + i);
                        }
                    }
                }
            }
        }
        failed
    }

    #[inline]
    fn contains(&self, key: &K) -> bool {
        self.filter.contains(key)
    }

    fn count_present(&self, keys: &[K]) -> usize {
        match self.batch {
            None => keys.iter().map(|key| black_box(self.filter.contains(key)) as usize).sum(),
            Some(batch) => keys
                .chunks(batch)
                .map(|chunk| black_box(self.filter.contains_batch(chunk)).iter().filter(|&&hit| hit).count())
                .sum(),
        }
    }

    fn remove_all(&mut self, keys: &[K]) -> Option<usize> {
        Some(keys.iter().filter(|key| !self.filter.remove(*key)).count())
    }
}

fn build<'k>(row: Row, cli: &Cli, settings: &Settings) -> Box<dyn Contender<u64> + 'k> {
    let batch = matches!(row, Row::PreSizedBatched | Row::GrowableBatched).then_some(cli.batch);
    match row {
        Row::PreSized | Row::PreSizedBatched => Box::new(Bugu {
            filter: CuckooFilter::builder()
                .capacity(cli.keys)
                .false_positive_rate(cli.fpr)
                .build()
                .expect("the rate is validated by the command line"),
            batch,
            describe: |f: &CuckooFilter| {
                format!("{}-bit fp, 4 slots, {} buckets", f.fingerprint_bits(), f.bucket_count())
            },
            memory: CuckooFilter::memory_bytes,
        }),
        Row::Growable | Row::GrowableBatched => Box::new(Bugu {
            filter: GrowableFilter::builder()
                .initial_capacity(cli.initial)
                .false_positive_rate(cli.fpr)
                .build()
                .expect("the rate is validated by the command line"),
            batch,
            describe: |f: &GrowableFilter| {
                let widths: Vec<String> =
                    f.levels().iter().map(|level| level.fingerprint_bits().to_string()).collect();
                format!("{} levels, fp bits {}", f.level_count(), widths.join("/"))
            },
            memory: GrowableFilter::memory_bytes,
        }),
        Row::Expanding => Box::new(Bugu {
            filter: ExpandingFilter::builder()
                .initial_capacity(cli.initial)
                .false_positive_rate(cli.fpr)
                .max_items(cli.max_items as u64)
                .build()
                .expect("the rate and maximum are validated by the command line"),
            batch,
            describe: |f: &ExpandingFilter| {
                let stats = f.stats();
                format!(
                    "{}-bit fp, {}-bit tails, level {}, {} twins, stash {}",
                    stats.fingerprint_bits, stats.tail_bits, stats.level, stats.twins, stats.stash
                )
            },
            memory: ExpandingFilter::memory_bytes,
        }),
        // The harness's own scalable_cuckoo_filter contender, with the initial capacity as its
        // capacity hint.
        Row::Scalable => Kind::Scalable.build(&Settings { capacity: cli.initial, ..*settings }),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !(cli.fpr > 0.0 && cli.fpr < 1.0) {
        eprintln!("--fpr must be strictly between 0 and 1");
        return ExitCode::FAILURE;
    }
    let clock = cli.clock;
    let lookups = cli.max_lookups.min(cli.keys);
    let present = u64_keys(cli.seed, 0, cli.keys);
    let absent = u64_keys(cli.seed, cli.keys as u64, lookups);
    let workload = Workload::new(present, &absent, lookups, cli.seed);
    drop(absent);
    let settings = Settings { capacity: cli.keys, fpr: cli.fpr, batch: cli.batch };
    let kinds: Vec<Kind> = ROWS.iter().map(|row| row.kind()).collect();
    eprintln!("{} keys grown from {}, p = {}, {} repeats", cli.keys, cli.initial, cli.fpr, cli.repeats);
    let results = measure_with(
        &kinds,
        |kind, settings| build(Row::of(kind), &cli, settings),
        &workload,
        &settings,
        cli.repeats,
        clock,
    );
    print_table(&cli, clock, &results);
    // No filter may lose a key, on insert or on delete: a growable filter's delete that cannot
    // tell two levels' copies apart removes nothing (it shows as a failed delete, not a loss).
    if results.iter().any(|m| m.false_negatives > 0 || m.failed_inserts > 0) {
        eprintln!("a filter lost keys or refused inserts: see the table");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn print_table(cli: &Cli, clock: Clock, results: &[Measurement]) {
    println!(
        "{} keys (random u64), grown from {}; target false-positive rate {}; {} lookups per mix; \
         median of {} repeats; {}.\n",
        cli.keys,
        cli.initial,
        cli.fpr,
        results[0].lookups,
        cli.repeats.max(1),
        clock.describe()
    );
    println!(
        "| filter | insert ns | lookup 0% ns | lookup 50% ns | lookup 100% ns | delete ns | bits/item | FPR | \
         false neg. | kept keys lost by deletes | failed deletes | configuration |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for m in results {
        println!(
            "| {} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {:.2} | {:.4}% | {} | {} | {} | {} |",
            Row::of(m.kind).label(),
            m.insert_ns,
            m.lookup_ns[0],
            m.lookup_ns[1],
            m.lookup_ns[2],
            m.delete_ns.map_or("-".to_string(), |ns| format!("{ns:.1}")),
            m.bits_per_item(),
            m.fp_rate() * 100.0,
            m.false_negatives,
            m.false_negatives_after_delete.map_or("-".to_string(), |n| n.to_string()),
            m.failed_deletes.map_or("-".to_string(), |n| n.to_string()),
            m.config
        );
    }
    let find = |row: Row| results.iter().find(|m| Row::of(m.kind) == row).expect("every row is measured");
    let ratios = |grown: &Measurement, base: &Measurement, what: &str| {
        println!(
            "\n{what}: lookups 0% {:.2}x, 100% {:.2}x the pre-sized filter's time; bits per item \
             {:.2}x",
            grown.lookup_ns[0] / base.lookup_ns[0],
            grown.lookup_ns[2] / base.lookup_ns[2],
            grown.bits_per_item() / base.bits_per_item(),
        );
    };
    let scalable = find(Row::Scalable);
    ratios(find(Row::Growable), find(Row::PreSized), "one by one");
    ratios(find(Row::Expanding), find(Row::PreSized), "ExpandingFilter, one by one");
    ratios(find(Row::GrowableBatched), find(Row::PreSizedBatched), "batched");
    for row in [Row::Growable, Row::GrowableBatched, Row::Expanding] {
        let grown = find(row);
        println!(
            "{}: {:.2}x faster than scalable_cuckoo_filter at 0%, {:.2}x at 100%",
            row.label(),
            scalable.lookup_ns[0] / grown.lookup_ns[0],
            scalable.lookup_ns[2] / grown.lookup_ns[2],
        );
    }
}
