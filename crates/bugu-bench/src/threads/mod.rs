//! [`bugu::ConcurrentFilter`] against the other ways of sharing a cuckoo filter between threads —
//! `RwLock<CuckooFilter>`, `Mutex<CuckooFilter>` and `atomic-cuckoo-filter` 0.3 — with the
//! single-threaded [`bugu::CuckooFilter`] as the one-thread reference, in the same run.
//!
//! Three workloads, at each key count `n` and thread count:
//! - **lookups**: min(`n`, 10^7) keys, half present, half never inserted, shuffled; each thread a
//!   disjoint slice; the filter is the one the insert phase just filled to capacity;
//! - **90/10 mix**: the filter starts at 80% of its capacity; each thread does 9 lookups (cycling
//!   over its slice of the lookup keys) and then inserts one new key (its slice of the last 20% of
//!   the keys), so the inserts take the filter toward its capacity;
//! - **inserts**: all `n` keys into an empty filter, each thread a disjoint slice.
//!
//! Threads start behind a [`std::sync::Barrier`]; a phase's wall time runs from the first thread's start to
//! the last thread's end. Every contender hashes its keys inside the timed loop (bugu through
//! `contains`/`insert`, which are `hash_of` + the `*_hash` call; `atomic-cuckoo-filter` takes no
//! hashes). After every phase, outside the timing, the present lookup keys (and in the mix the
//! keys it inserted) are looked up again through the same path: one not found is a false negative.
//!
//! A phase that runs past the phase limit stops at the next check of the clock (every 16,384
//! operations per thread); it is reported as capped and skipped in the later rounds of that size.
//!
//! The `threads` binary parses the command line; here are the timed loops (`work`), the run at
//! one size (`run`) and the report (`report`), with the ratios it prints ([`ratios`]).

use std::collections::BTreeMap;
use std::str::FromStr;
use std::time::Duration;

use crate::cli::parse_count;
use crate::targets::Target;
use crate::timing::median;

mod report;
mod run;
#[cfg(test)]
mod tests;
mod work;

pub use report::Report;
pub use run::measure_size;
pub use work::split;

/// Lookups done for each insert in the mix (90% lookups, 10% inserts).
pub const LOOKUPS_PER_INSERT: usize = 9;
/// Share of the capacity filled before the mix starts.
pub const MIX_START_LOAD: f64 = 0.8;
/// Keys per `contains_hash_batch` call in the batched row.
pub const BATCH: usize = 1024;
/// Operations a thread does between two reads of the clock against the phase limit.
const CLOCK_EVERY: usize = 16 * BATCH;

/// A timed workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Workload {
    /// Lookups, half of the keys present, in a full filter.
    Lookups,
    /// 9 lookups then 1 insert, from 80% of the capacity.
    Mix,
    /// Inserts into an empty filter up to its capacity.
    Inserts,
}

impl Workload {
    /// Report order.
    pub const ALL: [Workload; 3] = [Workload::Lookups, Workload::Mix, Workload::Inserts];

    fn name(self) -> &'static str {
        match self {
            Workload::Lookups => "lookups",
            Workload::Mix => "90/10 mix",
            Workload::Inserts => "inserts",
        }
    }
}

/// A row of the report: one filter, driven one way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Row {
    /// `bugu::ConcurrentFilter`, one key per call.
    Concurrent,
    /// `bugu::ConcurrentFilter`, `contains_hash_batch` over [`BATCH`] keys (lookups only).
    ConcurrentBatch,
    /// `bugu::CuckooFilter`, one thread.
    Cuckoo,
    /// `std::sync::RwLock<CuckooFilter>`: lookups under `read()`, inserts under `write()`.
    RwLock,
    /// `std::sync::Mutex<CuckooFilter>`.
    Mutex,
    /// `atomic_cuckoo_filter::CuckooFilter::with_capacity(n)`.
    Atomic,
}

impl Row {
    /// Table order.
    pub const ALL: [Row; 6] =
        [Row::Concurrent, Row::ConcurrentBatch, Row::Cuckoo, Row::RwLock, Row::Mutex, Row::Atomic];

    /// The filters a round runs, in turn (the batched row runs with [`Row::Concurrent`]).
    const SCHEDULE: [Row; 5] = [Row::Concurrent, Row::Cuckoo, Row::RwLock, Row::Mutex, Row::Atomic];

    /// The row's label in the tables.
    pub fn label(self) -> &'static str {
        match self {
            Row::Concurrent => "bugu::ConcurrentFilter",
            Row::ConcurrentBatch => "bugu::ConcurrentFilter, contains_hash_batch x1024",
            Row::Cuckoo => "bugu::CuckooFilter (single-threaded)",
            Row::RwLock => "RwLock<CuckooFilter>",
            Row::Mutex => "Mutex<CuckooFilter>",
            Row::Atomic => "atomic-cuckoo-filter 0.3",
        }
    }

    /// The name `--skip` knows it by.
    pub fn name(self) -> &'static str {
        match self {
            Row::Concurrent => "concurrent",
            Row::ConcurrentBatch => "batch",
            Row::Cuckoo => "cuckoo",
            Row::RwLock => "rwlock",
            Row::Mutex => "mutex",
            Row::Atomic => "atomic",
        }
    }

    /// Whether the row has a figure for `workload`.
    pub fn runs(self, workload: Workload) -> bool {
        self != Row::ConcurrentBatch || workload == Workload::Lookups
    }

    /// The thread counts the row runs with: the single-threaded filter with 1 only.
    pub fn threads(self, asked: &[usize]) -> Vec<usize> {
        if self == Row::Cuckoo { vec![1] } else { asked.to_vec() }
    }
}

/// `--skip NAME[@KEYS]`: a row left out, at every size or at one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Skip {
    /// The row (skipping `concurrent` skips the batched row as well).
    pub row: Row,
    /// The key count it applies to; every size if `None`.
    pub keys: Option<usize>,
}

impl Skip {
    /// Whether `row` is skipped at `keys` keys.
    pub fn applies(&self, row: Row, keys: usize) -> bool {
        let row_matches = self.row == row || (self.row == Row::Concurrent && row == Row::ConcurrentBatch);
        row_matches && self.keys.is_none_or(|k| k == keys)
    }
}

impl FromStr for Skip {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (name, keys) = match text.trim().split_once('@') {
            Some((name, keys)) => (name, Some(parse_count(keys)?)),
            None => (text.trim(), None),
        };
        let row = Row::ALL.into_iter().find(|row| row.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Row::ALL.iter().map(|row| row.name()).collect();
            format!("unknown contender {name:?} (one of {})", names.join(", "))
        })?;
        Ok(Skip { row, keys })
    }
}

/// What a run measures, besides the sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Keys looked up in the lookup phase, at most.
    pub max_lookups: usize,
    /// Operations of the mix, at most (`None`: the inserts go all the way to the capacity).
    pub max_mix_ops: Option<usize>,
    /// A phase running longer stops early, is reported as capped and is skipped in later rounds.
    pub phase_limit: Duration,
    /// Rows left out.
    pub skip: Vec<Skip>,
    /// What named ratios must be (`--target`); the report shows their verdicts.
    pub targets: Vec<Target>,
    /// Seed of the keys and of the lookup order.
    pub seed: u64,
}

/// The mix at one size: how many keys are in the filter before it, how many it inserts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MixPlan {
    /// Keys inserted before the mix (untimed): 80% of the capacity.
    pub prefill: usize,
    /// Keys the mix inserts; it does [`LOOKUPS_PER_INSERT`] lookups per insert.
    pub inserts: usize,
}

impl MixPlan {
    /// The mix for `keys` keys: from 80% of the capacity to the capacity, or fewer inserts if
    /// `max_ops` caps the operations.
    pub fn new(keys: usize, max_ops: Option<usize>) -> Self {
        let prefill = (keys as f64 * MIX_START_LOAD).round() as usize;
        let to_capacity = keys - prefill;
        let inserts = max_ops.map_or(to_capacity, |ops| to_capacity.min(ops / (LOOKUPS_PER_INSERT + 1)));
        MixPlan { prefill, inserts }
    }

    /// Lookups and inserts together.
    pub fn ops(&self) -> usize {
        self.inserts * (LOOKUPS_PER_INSERT + 1)
    }
}

/// One timed phase of one row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Operations done, over all threads.
    pub ops: u64,
    /// Wall time of the phase: first thread's start to last thread's end.
    pub wall_ns: f64,
    /// Each thread's own time over its own operations, averaged over the threads.
    pub per_thread_ns: f64,
    /// The threads' CPU time over (wall time x threads): below 1 when they were descheduled.
    pub cpu_share: f64,
    /// Inserts refused.
    pub failed: u64,
    /// Keys checked after the phase.
    pub checked: u64,
    /// Of those, the ones reported absent although inserted: false negatives.
    pub missing: u64,
    /// Whether the phase stopped at the phase limit before its last operation.
    pub capped: bool,
}

impl Sample {
    /// Wall-clock ns per operation: wall time / operations of all threads.
    pub fn ns_per_op(&self) -> f64 {
        self.wall_ns / self.ops.max(1) as f64
    }
}

/// Which figure a ratio divides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Wall-clock ns per operation.
    Time,
    /// Operations per second, all threads together.
    Throughput,
}

/// One row's figure: a workload, a row, a thread count, and which measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Figure {
    /// The workload.
    pub workload: Workload,
    /// The row.
    pub row: Row,
    /// Threads.
    pub threads: usize,
    /// What is read.
    pub measure: Measure,
}

/// A ratio of two figures, under the short name a `--target` refers to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    /// The short name.
    pub name: &'static str,
    /// What is divided by what, in words.
    pub label: &'static str,
    /// Numerator.
    pub numerator: Figure,
    /// Denominator.
    pub denominator: Figure,
}

/// The ratios the report prints, in report order: the single-threaded cost of sharing, the
/// scaling from 1 to 2 threads, and the standing against the other ways of sharing a filter.
pub fn ratios() -> Vec<Ratio> {
    use Measure::{Throughput, Time};
    use Workload::{Inserts, Lookups, Mix};
    let figure = |workload, row, threads, measure| Figure { workload, row, threads, measure };
    let ratio = |name, label, numerator, denominator| Ratio { name, label, numerator, denominator };
    vec![
        ratio(
            "lookup-1t-vs-cuckoo",
            "1-thread lookups: ConcurrentFilter time / CuckooFilter time",
            figure(Lookups, Row::Concurrent, 1, Time),
            figure(Lookups, Row::Cuckoo, 1, Time),
        ),
        ratio(
            "lookup-scaling",
            "lookups: ConcurrentFilter 2-thread / 1-thread throughput",
            figure(Lookups, Row::Concurrent, 2, Throughput),
            figure(Lookups, Row::Concurrent, 1, Throughput),
        ),
        ratio(
            "mix-scaling",
            "90/10 mix: ConcurrentFilter 2-thread / 1-thread throughput",
            figure(Mix, Row::Concurrent, 2, Throughput),
            figure(Mix, Row::Concurrent, 1, Throughput),
        ),
        ratio(
            "lookup-2t-vs-atomic",
            "2-thread lookups: ConcurrentFilter / atomic-cuckoo-filter throughput",
            figure(Lookups, Row::Concurrent, 2, Throughput),
            figure(Lookups, Row::Atomic, 2, Throughput),
        ),
        ratio(
            "batch-1t-vs-cuckoo",
            "1-thread lookups: ConcurrentFilter batched time / CuckooFilter time",
            figure(Lookups, Row::ConcurrentBatch, 1, Time),
            figure(Lookups, Row::Cuckoo, 1, Time),
        ),
        ratio(
            "batch-scaling",
            "lookups: ConcurrentFilter batched 2-thread / 1-thread throughput",
            figure(Lookups, Row::ConcurrentBatch, 2, Throughput),
            figure(Lookups, Row::ConcurrentBatch, 1, Throughput),
        ),
        ratio(
            "batch-2t-vs-atomic",
            "2-thread lookups: ConcurrentFilter batched / atomic-cuckoo-filter throughput",
            figure(Lookups, Row::ConcurrentBatch, 2, Throughput),
            figure(Lookups, Row::Atomic, 2, Throughput),
        ),
        ratio(
            "mix-2t-vs-rwlock",
            "2-thread 90/10 mix: ConcurrentFilter / RwLock<CuckooFilter> throughput",
            figure(Mix, Row::Concurrent, 2, Throughput),
            figure(Mix, Row::RwLock, 2, Throughput),
        ),
        ratio(
            "insert-scaling",
            "inserts: ConcurrentFilter 2-thread / 1-thread throughput",
            figure(Inserts, Row::Concurrent, 2, Throughput),
            figure(Inserts, Row::Concurrent, 1, Throughput),
        ),
        ratio(
            "insert-1t-vs-cuckoo",
            "1-thread inserts: ConcurrentFilter time / CuckooFilter time",
            figure(Inserts, Row::Concurrent, 1, Time),
            figure(Inserts, Row::Cuckoo, 1, Time),
        ),
    ]
}

/// The short names of [`ratios`], for checking the `--target`s.
pub fn ratio_names() -> Vec<&'static str> {
    ratios().iter().map(|ratio| ratio.name).collect()
}

/// The samples of one row in one round, by (workload, row, threads).
pub type Samples = BTreeMap<(Workload, Row, usize), Sample>;

/// One round at one size: every row once.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Round {
    /// Load averages (1, 5, 15 min) before and after the round.
    pub load: (Option<String>, Option<String>),
    /// The row order of the round.
    pub order: Vec<Row>,
    /// What each phase measured.
    pub samples: Samples,
}

/// A row's figures over the rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Medians {
    /// Median wall-clock ns per operation.
    pub ns_per_op: f64,
    /// Median per-thread ns per operation.
    pub per_thread_ns: f64,
    /// Median CPU share.
    pub cpu_share: f64,
    /// Operations per phase (of the first round).
    pub ops: u64,
    /// Failed inserts, summed over the rounds.
    pub failed: u64,
    /// Keys checked, summed over the rounds.
    pub checked: u64,
    /// False negatives, summed over the rounds.
    pub missing: u64,
    /// Whether any round was capped.
    pub capped: bool,
    /// Wall-clock ns per operation of each round that ran it, in order.
    pub per_round: Vec<f64>,
}

impl Medians {
    /// Operations per second, all threads together: 10^9 / (wall ns per op).
    pub fn ops_per_sec(&self) -> f64 {
        1e9 / self.ns_per_op
    }

    fn of(samples: &[Sample]) -> Option<Medians> {
        let first = samples.first()?;
        let of = |field: fn(&Sample) -> f64| median(&samples.iter().map(field).collect::<Vec<_>>());
        Some(Medians {
            ns_per_op: of(Sample::ns_per_op),
            per_thread_ns: of(|s| s.per_thread_ns),
            cpu_share: of(|s| s.cpu_share),
            ops: first.ops,
            failed: samples.iter().map(|s| s.failed).sum(),
            checked: samples.iter().map(|s| s.checked).sum(),
            missing: samples.iter().map(|s| s.missing).sum(),
            capped: samples.iter().any(|s| s.capped),
            per_round: samples.iter().map(Sample::ns_per_op).collect(),
        })
    }
}

/// Every round at one key count.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeRun {
    /// Keys the filters are built for (and inserted).
    pub keys: usize,
    /// Keys looked up in the lookup phase (half present).
    pub lookups: usize,
    /// The mix.
    pub mix: MixPlan,
    /// Each filter's configuration and memory, in words.
    pub configs: BTreeMap<Row, String>,
    /// Rounds asked for.
    pub rounds_asked: usize,
    /// The rounds, in the order they ran.
    pub rounds: Vec<Round>,
    /// Skips and caps, in words.
    pub notes: Vec<String>,
}

impl SizeRun {
    /// The row's figures over the rounds, if it ran.
    pub fn medians(&self, workload: Workload, row: Row, threads: usize) -> Option<Medians> {
        let samples: Vec<Sample> =
            self.rounds.iter().filter_map(|r| r.samples.get(&(workload, row, threads)).copied()).collect();
        Medians::of(&samples)
    }

    fn figure(&self, figure: Figure) -> Option<f64> {
        self.medians(figure.workload, figure.row, figure.threads).map(|m| value(figure.measure, m.ns_per_op))
    }

    /// The ratio of the medians, if both figures were measured.
    pub fn ratio(&self, ratio: &Ratio) -> Option<f64> {
        Some(self.figure(ratio.numerator)? / self.figure(ratio.denominator)?)
    }

    /// The ratio within each round that measured both figures.
    pub fn ratio_per_round(&self, ratio: &Ratio) -> Vec<f64> {
        let figure = |samples: &Samples, f: Figure| {
            samples.get(&(f.workload, f.row, f.threads)).map(|s| value(f.measure, s.ns_per_op()))
        };
        self.rounds
            .iter()
            .filter_map(|r| {
                Some(figure(&r.samples, ratio.numerator)? / figure(&r.samples, ratio.denominator)?)
            })
            .collect()
    }

    /// False negatives and keys checked, over every phase and round.
    pub fn false_negatives(&self) -> (u64, u64) {
        let samples = self.rounds.iter().flat_map(|r| r.samples.values());
        samples.fold((0, 0), |(missing, checked), s| (missing + s.missing, checked + s.checked))
    }
}

fn value(measure: Measure, ns_per_op: f64) -> f64 {
    match measure {
        Measure::Time => ns_per_op,
        Measure::Throughput => 1e9 / ns_per_op,
    }
}
