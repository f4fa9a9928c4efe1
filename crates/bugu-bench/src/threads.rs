//! [`ConcurrentFilter`] against the other ways of sharing a cuckoo filter between threads —
//! `RwLock<CuckooFilter>`, `Mutex<CuckooFilter>` and `atomic-cuckoo-filter` 0.3 — with the
//! single-threaded [`CuckooFilter`] as the one-thread reference, in the same run.
//!
//! Three workloads, at each key count `n` and thread count:
//! - **lookups**: min(`n`, 10^7) keys, half present, half never inserted, shuffled; each thread a
//!   disjoint slice; the filter is the one the insert phase just filled to capacity;
//! - **90/10 mix**: the filter starts at 80% of its capacity; each thread does 9 lookups (cycling
//!   over its slice of the lookup keys) and then inserts one new key (its slice of the last 20% of
//!   the keys), so the inserts take the filter toward its capacity;
//! - **inserts**: all `n` keys into an empty filter, each thread a disjoint slice.
//!
//! Threads start behind a [`Barrier`]; a phase's wall time runs from the first thread's start to
//! the last thread's end. Every contender hashes its keys inside the timed loop (bugu through
//! `contains`/`insert`, which are `hash_of` + the `*_hash` call; `atomic-cuckoo-filter` takes no
//! hashes). After every phase, outside the timing, the present lookup keys (and in the mix the
//! keys it inserted) are looked up again through the same path: one not found is a false negative.
//!
//! A phase that runs past the phase limit stops at the next check of the clock (every 16,384
//! operations per thread); it is reported as capped and skipped in the later rounds of that size.
//!
//! The `threads` binary parses the command line; the run and the report are here.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::hint::black_box;
use std::str::FromStr;
use std::sync::{Barrier, Mutex, RwLock};
use std::time::{Duration, Instant};

use bugu::{ConcurrentFilter, CuckooFilter, Filter, FilterMut};

use crate::cli::parse_count;
use crate::contender::grouped;
use crate::timing::{Clock, median};
use crate::workload::{SplitMix64, u64_keys};

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

/// What a ratio must be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Goal {
    /// At most this.
    AtMost(f64),
    /// At least this.
    AtLeast(f64),
    /// No target: shown for context.
    Info,
}

impl Goal {
    /// `Some(met)` for a target, `None` for context.
    pub fn met(self, value: f64) -> Option<bool> {
        match self {
            Goal::AtMost(limit) => Some(value <= limit),
            Goal::AtLeast(limit) => Some(value >= limit),
            Goal::Info => None,
        }
    }

    fn describe(self) -> String {
        match self {
            Goal::AtMost(limit) => format!("<= {limit:.2}"),
            Goal::AtLeast(limit) => format!(">= {limit:.2}"),
            Goal::Info => "(context)".to_string(),
        }
    }
}

/// A ratio of two figures, with its goal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    /// What is divided by what, in words.
    pub ratio: &'static str,
    /// Numerator.
    pub numerator: Figure,
    /// Denominator.
    pub denominator: Figure,
    /// What it must be.
    pub goal: Goal,
}

/// The targets the issue sets (and a few ratios shown for context), in report order.
pub fn targets() -> Vec<Target> {
    use Measure::{Throughput, Time};
    use Workload::{Inserts, Lookups, Mix};
    let figure = |workload, row, threads, measure| Figure { workload, row, threads, measure };
    let target = |ratio, numerator, denominator, goal| Target { ratio, numerator, denominator, goal };
    vec![
        target(
            "1-thread lookups: ConcurrentFilter time / CuckooFilter time",
            figure(Lookups, Row::Concurrent, 1, Time),
            figure(Lookups, Row::Cuckoo, 1, Time),
            Goal::AtMost(1.2),
        ),
        target(
            "lookups: ConcurrentFilter 2-thread / 1-thread throughput",
            figure(Lookups, Row::Concurrent, 2, Throughput),
            figure(Lookups, Row::Concurrent, 1, Throughput),
            Goal::AtLeast(1.8),
        ),
        target(
            "90/10 mix: ConcurrentFilter 2-thread / 1-thread throughput",
            figure(Mix, Row::Concurrent, 2, Throughput),
            figure(Mix, Row::Concurrent, 1, Throughput),
            Goal::AtLeast(1.5),
        ),
        target(
            "2-thread lookups: ConcurrentFilter / atomic-cuckoo-filter throughput",
            figure(Lookups, Row::Concurrent, 2, Throughput),
            figure(Lookups, Row::Atomic, 2, Throughput),
            Goal::AtLeast(3.0),
        ),
        target(
            "1-thread lookups: ConcurrentFilter batched time / CuckooFilter time",
            figure(Lookups, Row::ConcurrentBatch, 1, Time),
            figure(Lookups, Row::Cuckoo, 1, Time),
            Goal::Info,
        ),
        target(
            "lookups: ConcurrentFilter batched 2-thread / 1-thread throughput",
            figure(Lookups, Row::ConcurrentBatch, 2, Throughput),
            figure(Lookups, Row::ConcurrentBatch, 1, Throughput),
            Goal::Info,
        ),
        target(
            "2-thread lookups: ConcurrentFilter batched / atomic-cuckoo-filter throughput",
            figure(Lookups, Row::ConcurrentBatch, 2, Throughput),
            figure(Lookups, Row::Atomic, 2, Throughput),
            Goal::Info,
        ),
        target(
            "2-thread 90/10 mix: ConcurrentFilter / RwLock<CuckooFilter> throughput",
            figure(Mix, Row::Concurrent, 2, Throughput),
            figure(Mix, Row::RwLock, 2, Throughput),
            Goal::Info,
        ),
        target(
            "inserts: ConcurrentFilter 2-thread / 1-thread throughput",
            figure(Inserts, Row::Concurrent, 2, Throughput),
            figure(Inserts, Row::Concurrent, 1, Throughput),
            Goal::Info,
        ),
        target(
            "1-thread inserts: ConcurrentFilter time / CuckooFilter time",
            figure(Inserts, Row::Concurrent, 1, Time),
            figure(Inserts, Row::Cuckoo, 1, Time),
            Goal::Info,
        ),
    ]
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

    /// The target's ratio of the medians, if both figures were measured.
    pub fn ratio(&self, target: &Target) -> Option<f64> {
        Some(self.figure(target.numerator)? / self.figure(target.denominator)?)
    }

    /// The target's ratio within each round that measured both figures.
    pub fn ratio_per_round(&self, target: &Target) -> Vec<f64> {
        let figure = |samples: &Samples, f: Figure| {
            samples.get(&(f.workload, f.row, f.threads)).map(|s| value(f.measure, s.ns_per_op()))
        };
        self.rounds
            .iter()
            .filter_map(|r| {
                Some(figure(&r.samples, target.numerator)? / figure(&r.samples, target.denominator)?)
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

// ---------------------------------------------------------------------------------------------
// The timed loops.

/// What one thread did in a phase.
#[derive(Debug, Default)]
struct Work {
    ops: u64,
    /// Keys of the thread's share of inserts it got to (all of them unless capped).
    inserted: usize,
    /// Keys whose insert was refused.
    failed: Vec<u64>,
    capped: bool,
}

/// A filter as one thread drives it.
trait Ops {
    fn contains(&self, key: &u64) -> bool;
    /// `false` if the insert was refused.
    fn insert(&mut self, key: &u64) -> bool;
}

/// A filter every thread drives through `&self`.
trait Shared: Sync {
    fn contains(&self, key: &u64) -> bool;
    fn insert(&self, key: &u64) -> bool;
    /// Configuration and memory, in words.
    fn describe(&self) -> String;
    /// The filter, if it is a [`ConcurrentFilter`] (which has the batched row too).
    fn as_concurrent(&self) -> Option<&ConcurrentFilter> {
        None
    }
}

fn describe_bugu(filter: &CuckooFilter) -> String {
    format!(
        "{}-bit fp, {} slots, {} buckets, {}",
        filter.fingerprint_bits(),
        filter.bucket_size(),
        grouped(filter.bucket_count()),
        crate::report::mib(filter.memory_bytes())
    )
}

impl Shared for ConcurrentFilter {
    #[inline]
    fn contains(&self, key: &u64) -> bool {
        Filter::contains(self, key)
    }
    #[inline]
    fn insert(&self, key: &u64) -> bool {
        ConcurrentFilter::insert(self, key).is_ok()
    }
    fn describe(&self) -> String {
        format!(
            "{}-bit fp, {} slots, {} buckets, {} (table and stripes)",
            self.fingerprint_bits(),
            self.bucket_size(),
            grouped(self.bucket_count()),
            crate::report::mib(self.memory_bytes())
        )
    }
    fn as_concurrent(&self) -> Option<&ConcurrentFilter> {
        Some(self)
    }
}

impl Shared for RwLock<CuckooFilter> {
    #[inline]
    fn contains(&self, key: &u64) -> bool {
        self.read().expect("no thread panics holding the lock").contains(key)
    }
    #[inline]
    fn insert(&self, key: &u64) -> bool {
        self.write().expect("no thread panics holding the lock").insert(key).is_ok()
    }
    fn describe(&self) -> String {
        describe_bugu(&self.read().expect("no thread panics holding the lock"))
    }
}

impl Shared for Mutex<CuckooFilter> {
    #[inline]
    fn contains(&self, key: &u64) -> bool {
        self.lock().expect("no thread panics holding the lock").contains(key)
    }
    #[inline]
    fn insert(&self, key: &u64) -> bool {
        self.lock().expect("no thread panics holding the lock").insert(key).is_ok()
    }
    fn describe(&self) -> String {
        describe_bugu(&self.lock().expect("no thread panics holding the lock"))
    }
}

impl Shared for atomic_cuckoo_filter::CuckooFilter {
    #[inline]
    fn contains(&self, key: &u64) -> bool {
        atomic_cuckoo_filter::CuckooFilter::contains(self, key)
    }
    #[inline]
    fn insert(&self, key: &u64) -> bool {
        atomic_cuckoo_filter::CuckooFilter::insert(self, key).is_ok()
    }
    fn describe(&self) -> String {
        // As in `contender::atomic`: 16-bit fingerprints, 4 slots, capacity() slots in 64-bit words.
        let slots = self.capacity();
        format!(
            "with_capacity(n): 16-bit fp, 4 slots, {} buckets (a power of two), {} (computed: slots x 16 bits)",
            grouped(slots / 4),
            crate::report::mib((slots * 16).div_ceil(64) * 8)
        )
    }
}

/// A shared filter as one of its threads sees it.
struct Handle<'a, S>(&'a S);

impl<S: Shared> Ops for Handle<'_, S> {
    #[inline]
    fn contains(&self, key: &u64) -> bool {
        self.0.contains(key)
    }
    #[inline]
    fn insert(&mut self, key: &u64) -> bool {
        self.0.insert(key)
    }
}

/// The single-threaded filter, borrowed by its one thread.
struct Exclusive<'a>(&'a mut CuckooFilter);

impl Ops for Exclusive<'_> {
    #[inline]
    fn contains(&self, key: &u64) -> bool {
        self.0.contains(key)
    }
    #[inline]
    fn insert(&mut self, key: &u64) -> bool {
        self.0.insert(key).is_ok()
    }
}

/// One thread's part of a phase.
#[derive(Debug, Clone, Copy)]
enum Job<'a> {
    Lookups(&'a [u64]),
    Inserts(&'a [u64]),
    Mix { lookups: &'a [u64], inserts: &'a [u64] },
}

/// Runs `job` against `target` until it is done or `deadline` has passed.
fn work(mut target: impl Ops, job: Job<'_>, deadline: Instant) -> Work {
    let mut work = Work::default();
    match job {
        Job::Lookups(keys) => {
            for chunk in keys.chunks(CLOCK_EVERY) {
                for key in chunk {
                    black_box(target.contains(key));
                }
                work.ops += chunk.len() as u64;
                if work.ops < keys.len() as u64 && Instant::now() >= deadline {
                    work.capped = true;
                    break;
                }
            }
        }
        Job::Inserts(keys) => {
            for chunk in keys.chunks(CLOCK_EVERY) {
                for key in chunk {
                    if !black_box(target.insert(key)) {
                        work.failed.push(*key);
                    }
                }
                work.ops += chunk.len() as u64;
                work.inserted += chunk.len();
                if work.ops < keys.len() as u64 && Instant::now() >= deadline {
                    work.capped = true;
                    break;
                }
            }
        }
        Job::Mix { lookups, inserts } => {
            let mut next = 0;
            let per_chunk = CLOCK_EVERY / (LOOKUPS_PER_INSERT + 1);
            for chunk in inserts.chunks(per_chunk) {
                for key in chunk {
                    for _ in 0..LOOKUPS_PER_INSERT {
                        black_box(target.contains(&lookups[next]));
                        next += 1;
                        if next == lookups.len() {
                            next = 0;
                        }
                    }
                    if !black_box(target.insert(key)) {
                        work.failed.push(*key);
                    }
                }
                work.inserted += chunk.len();
                work.ops += (chunk.len() * (LOOKUPS_PER_INSERT + 1)) as u64;
                if work.inserted < inserts.len() && Instant::now() >= deadline {
                    work.capped = true;
                    break;
                }
            }
        }
    }
    work
}

/// Lookups through `contains_hash_batch`: the keys hashed into a buffer of [`BATCH`], then looked
/// up in one call.
fn work_batched(filter: &ConcurrentFilter, keys: &[u64], deadline: Instant) -> Work {
    let mut work = Work::default();
    let mut hashes = Vec::with_capacity(BATCH);
    for chunk in keys.chunks(CLOCK_EVERY) {
        for batch in chunk.chunks(BATCH) {
            hashes.clear();
            hashes.extend(batch.iter().map(|key| filter.hash_of(key)));
            black_box(filter.contains_hash_batch(&hashes));
        }
        work.ops += chunk.len() as u64;
        if work.ops < keys.len() as u64 && Instant::now() >= deadline {
            work.capped = true;
            break;
        }
    }
    work
}

/// Keys the batched path reports absent.
fn missing_batched(filter: &ConcurrentFilter, keys: &[u64]) -> u64 {
    keys.chunks(BATCH)
        .map(|batch| {
            let hashes: Vec<u64> = batch.iter().map(|key| filter.hash_of(key)).collect();
            filter.contains_hash_batch(&hashes).iter().filter(|&&found| !found).count() as u64
        })
        .sum()
}

/// What a phase returns: its sample (without the check) and the keys whose insert failed.
struct Outcome {
    sample: Sample,
    failed: Vec<u64>,
    /// Per thread, in the order of the jobs: how many keys of its share of inserts it got to.
    inserted: Vec<usize>,
}

/// Runs one worker per thread, all started together behind a barrier, and times them.
fn run_workers<W: FnOnce() -> Work + Send>(workers: Vec<W>) -> Outcome {
    let threads = workers.len();
    let barrier = Barrier::new(threads);
    let results: Vec<(Instant, Instant, Duration, Work)> = std::thread::scope(|scope| {
        let handles: Vec<_> = workers
            .into_iter()
            .map(|worker| {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    let start = Instant::now();
                    let (cpu, work) = Clock::Thread.time(worker);
                    (start, Instant::now(), cpu, work)
                })
            })
            .collect();
        handles.into_iter().map(|handle| handle.join().expect("a worker thread panicked")).collect()
    });
    let first = results.iter().map(|r| r.0).min().expect("at least one thread");
    let last = results.iter().map(|r| r.1).max().expect("at least one thread");
    let wall = last - first;
    let per_thread_ns =
        results.iter().map(|r| (r.1 - r.0).as_nanos() as f64 / r.3.ops.max(1) as f64).sum::<f64>()
            / threads as f64;
    let cpu: Duration = results.iter().map(|r| r.2).sum();
    let mut failed = Vec::new();
    let inserted = results.iter().map(|r| r.3.inserted).collect();
    let mut sample = Sample {
        ops: 0,
        wall_ns: wall.as_nanos() as f64,
        per_thread_ns,
        cpu_share: cpu.as_secs_f64() / (wall.as_secs_f64() * threads as f64).max(1e-9),
        failed: 0,
        checked: 0,
        missing: 0,
        capped: false,
    };
    for (_, _, _, work) in results {
        sample.ops += work.ops;
        sample.capped |= work.capped;
        failed.extend(work.failed);
    }
    sample.failed = failed.len() as u64;
    Outcome { sample, failed, inserted }
}

/// `keys` cut into `parts` contiguous slices whose lengths differ by at most one.
pub fn split(keys: &[u64], parts: usize) -> Vec<&[u64]> {
    let parts = parts.max(1);
    let (base, extra) = (keys.len() / parts, keys.len() % parts);
    let mut rest = keys;
    (0..parts)
        .map(|i| {
            let (part, tail) = rest.split_at(base + usize::from(i < extra));
            rest = tail;
            part
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The run.

/// The keys of one size.
struct Keys {
    /// All `n` keys, in insertion order; the mix inserts `present[prefill..prefill + inserts]`.
    present: Vec<u64>,
    /// The lookup sequence: half present (from the first 80% of `present`), half absent, shuffled.
    lookups: Vec<u64>,
    /// The present half of `lookups`: checked after every phase.
    present_lookups: Vec<u64>,
    mix: MixPlan,
}

impl Keys {
    fn new(keys: usize, options: &Options) -> Self {
        let mix = MixPlan::new(keys, options.max_mix_ops);
        let present = u64_keys(options.seed, 0, keys);
        let count = keys.min(options.max_lookups);
        let half = count / 2;
        // Present lookups evenly spread over the keys present before the mix, so that they are
        // present in every phase.
        let present_lookups: Vec<u64> =
            (0..half).map(|i| present[(i as u128 * mix.prefill as u128 / half as u128) as usize]).collect();
        let mut lookups = present_lookups.clone();
        lookups.extend(u64_keys(options.seed, keys as u64, count - half));
        SplitMix64::new(options.seed ^ 0x7412_ead5).shuffle(&mut lookups);
        Keys { present, lookups, present_lookups, mix }
    }

    fn jobs(&self, workload: Workload, threads: usize) -> Vec<Job<'_>> {
        match workload {
            Workload::Lookups => split(&self.lookups, threads).into_iter().map(Job::Lookups).collect(),
            Workload::Inserts => split(&self.present, threads).into_iter().map(Job::Inserts).collect(),
            Workload::Mix => {
                let inserts = &self.present[self.mix.prefill..self.mix.prefill + self.mix.inserts];
                split(&self.lookups, threads)
                    .into_iter()
                    .zip(split(inserts, threads))
                    .map(|(lookups, inserts)| Job::Mix { lookups, inserts })
                    .collect()
            }
        }
    }

    /// The keys that must be found after a phase of `workload` with `threads` threads, which got
    /// to `inserted` keys of their shares of inserts: the present lookup keys, and after a mix
    /// the keys it inserted. After an insert phase capped by the limit, the present lookup keys
    /// may not all have been inserted: the first keys each thread inserted are checked instead,
    /// as many in all as there are present lookup keys.
    fn to_check(&self, workload: Workload, threads: usize, inserted: &[usize], capped: bool) -> Vec<&[u64]> {
        let shares = |keys| split(keys, threads).into_iter().zip(inserted);
        match workload {
            Workload::Inserts if capped => {
                let each = self.present_lookups.len() / threads.max(1);
                shares(&self.present).map(|(share, &done)| &share[..done.min(each)]).collect()
            }
            Workload::Lookups | Workload::Inserts => vec![&self.present_lookups[..]],
            Workload::Mix => {
                let mix = &self.present[self.mix.prefill..self.mix.prefill + self.mix.inserts];
                let mut keys = vec![&self.present_lookups[..]];
                keys.extend(shares(mix).map(|(share, &done)| &share[..done]));
                keys
            }
        }
    }
}

/// A filter the run can drive: shared ones with any number of threads, the single-threaded one
/// with one.
trait Subject {
    fn run(&mut self, jobs: Vec<Job<'_>>, deadline: Instant) -> Outcome;
    /// Keys of `keys` reported absent, except those in `failed`.
    fn missing(&self, keys: &[u64], failed: &BTreeSet<u64>) -> u64;
    fn describe(&self) -> String;
    fn as_concurrent(&self) -> Option<&ConcurrentFilter>;
}

impl<S: Shared> Subject for S {
    fn run(&mut self, jobs: Vec<Job<'_>>, deadline: Instant) -> Outcome {
        let filter: &S = self;
        run_workers(jobs.into_iter().map(|job| move || work(Handle(filter), job, deadline)).collect())
    }
    fn missing(&self, keys: &[u64], failed: &BTreeSet<u64>) -> u64 {
        keys.iter().filter(|key| !Shared::contains(self, key) && !failed.contains(key)).count() as u64
    }
    fn describe(&self) -> String {
        Shared::describe(self)
    }
    fn as_concurrent(&self) -> Option<&ConcurrentFilter> {
        Shared::as_concurrent(self)
    }
}

impl Subject for CuckooFilter {
    fn run(&mut self, jobs: Vec<Job<'_>>, deadline: Instant) -> Outcome {
        assert_eq!(jobs.len(), 1, "the single-threaded filter runs with one thread");
        let filter = Exclusive(self);
        let job = jobs[0];
        run_workers(vec![move || work(filter, job, deadline)])
    }
    fn missing(&self, keys: &[u64], failed: &BTreeSet<u64>) -> u64 {
        keys.iter().filter(|key| !self.contains(key) && !failed.contains(key)).count() as u64
    }
    fn describe(&self) -> String {
        describe_bugu(self)
    }
    fn as_concurrent(&self) -> Option<&ConcurrentFilter> {
        None
    }
}

/// The run at one size: keys, the mix's starting filters, and what has been measured so far.
struct SizeRunner<'a> {
    options: &'a Options,
    keys: Keys,
    /// The bugu filter at 80% of its capacity, copied for each mix of the bugu rows.
    bugu_start: Option<CuckooFilter>,
    /// `atomic-cuckoo-filter` at 80%, as its `to_bytes`, for each of its mixes.
    atomic_start: Option<Vec<u8>>,
    /// Phases capped by the limit: skipped in later rounds.
    over_limit: BTreeSet<(Workload, Row, usize)>,
    run: SizeRun,
}

impl<'a> SizeRunner<'a> {
    fn new(keys: usize, options: &'a Options) -> Self {
        let data = Keys::new(keys, options);
        let run = SizeRun {
            keys,
            lookups: data.lookups.len(),
            mix: data.mix,
            configs: BTreeMap::new(),
            rounds_asked: 0,
            rounds: Vec::new(),
            notes: Vec::new(),
        };
        SizeRunner {
            options,
            keys: data,
            bugu_start: None,
            atomic_start: None,
            over_limit: BTreeSet::new(),
            run,
        }
    }

    fn skipped(&self, row: Row) -> bool {
        self.options.skip.iter().any(|skip| skip.applies(row, self.run.keys))
    }

    fn deadline(&self) -> Instant {
        Instant::now() + self.options.phase_limit
    }

    /// Fills the mix's starting filters (untimed).
    fn prepare_mix(&mut self) {
        let prefill = &self.keys.present[..self.keys.mix.prefill];
        let n = self.run.keys;
        if Row::SCHEDULE.iter().any(|&row| row != Row::Atomic && !self.skipped(row)) {
            let started = Instant::now();
            let mut filter = CuckooFilter::new(n).expect("bugu accepts any positive capacity");
            let failed = prefill.iter().filter(|key| filter.insert(*key).is_err()).count();
            assert_eq!(failed, 0, "a bugu filter refused an insert below 80% of its capacity");
            eprintln!("  mix start (bugu, 80%): filled in {:.1} s", started.elapsed().as_secs_f64());
            self.bugu_start = Some(filter);
        }
        if !self.skipped(Row::Atomic) {
            let started = Instant::now();
            let threads = self.options.threads.iter().copied().max().unwrap_or(1);
            let mut filter = atomic_cuckoo_filter::CuckooFilter::with_capacity(n);
            let jobs = split(prefill, threads).into_iter().map(Job::Inserts).collect();
            let outcome = filter.run(jobs, self.deadline());
            let seconds = started.elapsed().as_secs_f64();
            if outcome.sample.capped || outcome.sample.failed > 0 {
                let note = format!(
                    "{}: its 80% starting filter for the mix was not filled within the phase limit ({} of {} \
                     keys in {seconds:.0} s, {} refused): no mix figures.",
                    Row::Atomic.label(),
                    grouped(outcome.sample.ops as usize),
                    grouped(prefill.len()),
                    outcome.sample.failed
                );
                eprintln!("  {note}");
                self.run.notes.push(note);
            } else {
                eprintln!("  mix start (atomic, 80%, {threads} threads): filled in {seconds:.1} s");
                self.atomic_start = Some(filter.to_bytes());
            }
        }
    }

    /// Records a sample after checking the filter; marks it over the limit if it was capped.
    fn record(
        &mut self,
        round: &mut Round,
        key: (Workload, Row, usize),
        outcome: Outcome,
        missing: impl FnOnce(&[&[u64]], &BTreeSet<u64>) -> u64,
    ) {
        let (workload, row, threads) = key;
        let mut sample = outcome.sample;
        let failed: BTreeSet<u64> = outcome.failed.into_iter().collect();
        let to_check = self.keys.to_check(workload, threads, &outcome.inserted, sample.capped);
        sample.checked =
            to_check.iter().flat_map(|k| k.iter()).filter(|k| !failed.contains(k)).count() as u64;
        sample.missing = missing(&to_check, &failed);
        eprintln!(
            "  {:<48} {:<9} {threads} thr: {:>7.1} ns/op wall, {:>7.1} per thread, {:>6.2} Mops/s, cpu {:>3.0}%, \
             failed {}, false neg. {}{}",
            row.label(),
            workload.name(),
            sample.ns_per_op(),
            sample.per_thread_ns,
            1e3 / sample.ns_per_op(),
            sample.cpu_share * 100.0,
            sample.failed,
            sample.missing,
            if sample.capped { " (CAPPED)" } else { "" }
        );
        if sample.capped {
            let round_number = self.run.rounds.len() + 1;
            let planned = match workload {
                Workload::Lookups => self.keys.lookups.len(),
                Workload::Mix => self.keys.mix.ops(),
                Workload::Inserts => self.run.keys,
            };
            self.run.notes.push(format!(
                "{} {} with {threads} thread(s): capped at the phase limit ({} s) in round {round_number} after {} of {} \
                 operations; its figure is from the operations done, and later rounds skip it.",
                row.label(),
                workload.name(),
                self.options.phase_limit.as_secs(),
                grouped(sample.ops as usize),
                grouped(planned)
            ));
            self.over_limit.insert(key);
        }
        round.samples.insert(key, sample);
    }

    /// Whether a phase runs this round.
    fn runs(&self, workload: Workload, row: Row, threads: usize) -> bool {
        !self.skipped(row) && !self.over_limit.contains(&(workload, row, threads))
    }

    /// One row's phases in one round: inserts from empty (the first thread count's filter then
    /// serves the lookups), then the mix.
    fn measure<S: Subject>(
        &mut self,
        round: &mut Round,
        row: Row,
        empty: impl Fn() -> S,
        mix_start: impl Fn(&Self) -> Option<S>,
    ) {
        let threads = row.threads(&self.options.threads);
        for (i, &t) in threads.iter().enumerate() {
            let lookups_here = i == 0;
            if !self.runs(Workload::Inserts, row, t) {
                if lookups_here {
                    self.note_once(format!(
                        "{} lookups: not measured in some rounds, the insert phase that fills their filter being skipped.",
                        row.label()
                    ));
                }
                continue;
            }
            let mut filter = empty();
            let outcome = filter.run(self.keys.jobs(Workload::Inserts, t), self.deadline());
            let capped = outcome.sample.capped;
            self.record(round, (Workload::Inserts, row, t), outcome, |keys, failed| {
                keys.iter().map(|k| filter.missing(k, failed)).sum()
            });
            self.run.configs.entry(row).or_insert_with(|| filter.describe());
            if !lookups_here {
                continue;
            }
            if capped {
                self.note_once(format!(
                    "{} lookups: not measured in a round whose insert phase was capped (the filter was not full).",
                    row.label()
                ));
                continue;
            }
            for &t in &threads {
                if self.runs(Workload::Lookups, row, t) {
                    let outcome = filter.run(self.keys.jobs(Workload::Lookups, t), self.deadline());
                    self.record(round, (Workload::Lookups, row, t), outcome, |keys, failed| {
                        keys.iter().map(|k| filter.missing(k, failed)).sum()
                    });
                }
            }
            if let Some(concurrent) = filter.as_concurrent() {
                for &t in &threads {
                    if self.runs(Workload::Lookups, Row::ConcurrentBatch, t) {
                        let deadline = self.deadline();
                        let workers: Vec<_> = split(&self.keys.lookups, t)
                            .into_iter()
                            .map(|keys| move || work_batched(concurrent, keys, deadline))
                            .collect();
                        let outcome = run_workers(workers);
                        self.record(
                            round,
                            (Workload::Lookups, Row::ConcurrentBatch, t),
                            outcome,
                            |keys, _| keys.iter().map(|k| missing_batched(concurrent, k)).sum(),
                        );
                    }
                }
            }
        }
        for &t in &threads {
            if !self.runs(Workload::Mix, row, t) {
                continue;
            }
            let Some(mut filter) = mix_start(self) else { continue };
            let outcome = filter.run(self.keys.jobs(Workload::Mix, t), self.deadline());
            self.record(round, (Workload::Mix, row, t), outcome, |keys, failed| {
                keys.iter().map(|k| filter.missing(k, failed)).sum()
            });
        }
    }

    fn note_once(&mut self, note: String) {
        if !self.run.notes.contains(&note) {
            self.run.notes.push(note);
        }
    }

    /// One round: every row in turn, starting `offset` places into the schedule.
    fn round(&mut self, offset: usize) {
        let n = self.run.keys;
        let mut order = Row::SCHEDULE.to_vec();
        order.rotate_left(offset % Row::SCHEDULE.len());
        let mut round = Round {
            load: (crate::machine::load_average(), None),
            order: order.clone(),
            samples: Samples::new(),
        };
        for row in order {
            if self.skipped(row) {
                continue;
            }
            let bugu = |runner: &Self| runner.bugu_start.clone();
            match row {
                Row::Concurrent => self.measure(
                    &mut round,
                    row,
                    || ConcurrentFilter::new(n).expect("bugu accepts any positive capacity"),
                    |runner| {
                        let start = runner.bugu_start.as_ref()?;
                        Some(ConcurrentFilter::from_filter(start).expect("memory for a copy of the filter"))
                    },
                ),
                Row::Cuckoo => self.measure(
                    &mut round,
                    row,
                    || CuckooFilter::new(n).expect("bugu accepts any positive capacity"),
                    bugu,
                ),
                Row::RwLock => self.measure(
                    &mut round,
                    row,
                    || RwLock::new(CuckooFilter::new(n).expect("bugu accepts any positive capacity")),
                    |runner| bugu(runner).map(RwLock::new),
                ),
                Row::Mutex => self.measure(
                    &mut round,
                    row,
                    || Mutex::new(CuckooFilter::new(n).expect("bugu accepts any positive capacity")),
                    |runner| bugu(runner).map(Mutex::new),
                ),
                Row::Atomic => self.measure(
                    &mut round,
                    row,
                    || atomic_cuckoo_filter::CuckooFilter::with_capacity(n),
                    |runner| {
                        let bytes = runner.atomic_start.as_ref()?;
                        Some(
                            atomic_cuckoo_filter::CuckooFilter::from_bytes(bytes)
                                .expect("its own bytes load"),
                        )
                    },
                ),
                Row::ConcurrentBatch => unreachable!("the batched row runs with Row::Concurrent"),
            }
        }
        round.load.1 = crate::machine::load_average();
        self.run.rounds.push(round);
    }
}

/// Measures `rounds` rounds at `keys` keys (progress on stderr). With `finish_by`, a round after
/// the first is started only if it would end by then, judging by the previous round's duration.
pub fn measure_size(keys: usize, rounds: usize, options: &Options, finish_by: Option<Instant>) -> SizeRun {
    eprintln!("== {} keys: generating keys", grouped(keys));
    let mut runner = SizeRunner::new(keys, options);
    runner.run.rounds_asked = rounds;
    for row in Row::ALL {
        if runner.skipped(row) {
            runner.run.notes.push(format!("{}: skipped at this size (--skip).", row.label()));
        }
    }
    runner.prepare_mix();
    let mut last_round = Duration::ZERO;
    for round in 0..rounds {
        if let Some(finish_by) = finish_by.filter(|_| round > 0)
            && Instant::now() + last_round > finish_by
        {
            let note = format!(
                "rounds {} to {rounds} not run: one more round (the last took {:.1} min) would have ended after \
                     the run's time budget (--budget-minutes).",
                round + 1,
                last_round.as_secs_f64() / 60.0
            );
            eprintln!("  {note}");
            runner.run.notes.push(note);
            break;
        }
        eprintln!("== {} keys, round {}/{rounds}", grouped(keys), round + 1);
        let started = Instant::now();
        runner.round(round);
        last_round = started.elapsed();
    }
    runner.run
}

// ---------------------------------------------------------------------------------------------
// The report.

/// A whole run, as far as it got.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// CPU model and count.
    pub machine: String,
    /// Load averages at the start and the end of the run.
    pub load: (Option<String>, Option<String>),
    /// The command line, for the reader to repeat it.
    pub command: String,
    /// The options of the run.
    pub options: Options,
    /// The sizes measured so far.
    pub sizes: Vec<SizeRun>,
    /// Seconds the run took so far.
    pub seconds: f64,
}

impl Report {
    /// The markdown report.
    pub fn render(&self) -> String {
        let mut out =
            String::from("# Threads: bugu::ConcurrentFilter against locks and atomic-cuckoo-filter\n\n");
        let _ = writeln!(
            out,
            "{} (a 1-minute load near or above the CPU count means other processes competed for the \
             CPUs). Run time: {:.1} min.\n",
            crate::machine::context(&self.machine, &self.load),
            self.seconds / 60.0
        );
        let _ =
            writeln!(out, "Command: `cargo run --release -p bugu-bench --bin threads -- {}`\n", self.command);
        let limit = self.options.phase_limit.as_secs();
        let _ = write!(
            out,
            "How it is measured:\n\n\
             - **Keys**: `n` distinct seeded random 64-bit keys (`workload::u64_keys`, seed {seed}). **Every \
             contender hashes the key inside the timed loop**: the bugu rows call `contains(&key)` / \
             `insert(&key)` (= `hash_of(&key)` then `contains_hash` / `insert_hash`); the batched row hashes \
             {batch} keys with `hash_of` into a buffer, then calls `contains_hash_batch` on it; \
             `atomic-cuckoo-filter` takes no pre-computed hashes, so its own `contains` / `insert` hash with \
             std's `DefaultHasher`.\n\
             - **Timing**: one thread per share of the work, started together behind a `Barrier` \
             (`std::thread::scope`); wall time = first thread's start to last thread's end. *ns/op (wall)* = \
             wall time / operations of all threads; *Mops/s* = operations of all threads / wall time; \
             *ns/op per thread* = each thread's own time / its own operations, averaged over the threads; *CPU* = \
             the threads' CPU time / (wall time x threads), below ~95% when they were descheduled (the machine \
             is shared). Medians over the rounds; per round the contenders run in turn (the order rotated by \
             one each round), each with all its phases back to back; *x 1 thread* = throughput over the same \
             row's 1-thread throughput.\n\
             - **Lookups**: min(`n`, {max_lookups}) keys, half present (evenly spread over the first 80% of \
             the inserted keys), half never inserted, shuffled; each thread a disjoint contiguous slice. The \
             filter is the one the row's first insert phase (below) filled to capacity.\n\
             - **90/10 mix**: the filter starts at 80% of its capacity (bugu rows: one `CuckooFilter` filled \
             once per size, untimed, and copied with `clone` / `ConcurrentFilter::from_filter`; \
             atomic-cuckoo-filter: its own filter filled once, copied through `to_bytes` / `from_bytes`). \
             Each thread repeats: {lookups_per_insert} lookups (cycling over its slice of the lookup keys), \
             then 1 insert of a new key (its slice of the keys after the first 80%).\n\
             - **Inserts**: all `n` keys into an empty filter, each thread a disjoint contiguous slice.\n\
             - **False negatives**: after every phase, untimed, the present lookup keys (and after a mix, the \
             keys it inserted) are looked up again through the same path (batched for the batched row); one \
             reported absent is a false negative. After an insert phase this is a sample (the present lookup \
             keys), not all `n` keys. Keys whose insert was refused are not checked; after a phase capped by \
             the phase limit, only keys the threads got to are (after a capped insert phase: the first ones \
             each thread inserted).\n\
             - **Filters**: bugu's rows all use bugu's default configuration for capacity `n`; \
             atomic-cuckoo-filter is `with_capacity(n)`, as in the `compare` harness. One filter is measured at \
             a time (the two 80% starting filters of the mix are kept for the whole size).\n\
             - **Phase limit**: {limit} s; a phase still running then stops (the clock is read every {clock} \
             operations per thread), is marked *capped* and is skipped in the later rounds of its size.\n",
            seed = self.options.seed,
            batch = BATCH,
            max_lookups = grouped(self.options.max_lookups),
            lookups_per_insert = LOOKUPS_PER_INSERT,
            clock = grouped(CLOCK_EVERY),
        );
        if self.sizes.iter().any(|size| size.rounds.len() < 3) {
            out.push_str(
                "\n**Fewer than 3 rounds at some size: its figures are less robust against the noise.**\n",
            );
        }
        for size in &self.sizes {
            size.render(&mut out, &self.options.threads);
        }
        out
    }
}

fn verdict(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "pass",
        Some(false) => "FAIL",
        None => "",
    }
}

impl SizeRun {
    fn render(&self, out: &mut String, threads: &[usize]) {
        let _ = writeln!(out, "\n## {} keys\n", grouped(self.keys));
        let _ = writeln!(out, "Filters:\n");
        for (row, config) in &self.configs {
            let _ = writeln!(out, "- {}: {config}", row.label());
        }
        let _ = writeln!(
            out,
            "\n{} of {} round(s) asked for (load average before / after):\n",
            self.rounds.len(),
            self.rounds_asked
        );
        for (i, round) in self.rounds.iter().enumerate() {
            let order: Vec<&str> = round.order.iter().map(|r| r.name()).collect();
            let _ = writeln!(
                out,
                "- round {}: {} / {}; order {}",
                i + 1,
                crate::machine::load_text(&round.load.0),
                crate::machine::load_text(&round.load.1),
                order.join(", ")
            );
        }
        for note in &self.notes {
            let _ = writeln!(out, "\n**Note:** {note}");
        }

        let end_load = (self.mix.prefill + self.mix.inserts) as f64 / self.keys as f64 * 100.0;
        for workload in Workload::ALL {
            let heading = match workload {
                Workload::Lookups => format!("Lookups, half present ({} per phase)", grouped(self.lookups)),
                Workload::Mix => format!(
                    "90% lookups / 10% inserts ({} ops per phase, {} of them inserts: 80% -> {end_load:.0}% of capacity)",
                    grouped(self.mix.ops()),
                    grouped(self.mix.inserts)
                ),
                Workload::Inserts => {
                    format!("Inserts from empty to capacity ({} per phase)", grouped(self.keys))
                }
            };
            let _ = writeln!(out, "\n### {heading}\n");
            out.push_str(
                "| contender | threads | Mops/s | ns/op (wall) | ns/op per thread | CPU | x 1 thread | failed inserts | \
                 false neg. / checked | ns/op (wall) per round |\n\
                 |---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
            );
            for row in Row::ALL.into_iter().filter(|row| row.runs(workload)) {
                let one = self.medians(workload, row, 1);
                for t in row.threads(threads) {
                    let Some(m) = self.medians(workload, row, t) else { continue };
                    let scaling = one.as_ref().map_or_else(
                        || "n/a".to_string(),
                        |one| format!("{:.2}x", m.ops_per_sec() / one.ops_per_sec()),
                    );
                    let rounds: Vec<String> = m.per_round.iter().map(|ns| format!("{ns:.1}")).collect();
                    let _ = writeln!(
                        out,
                        "| {}{} | {t} | {:.2} | {:.1} | {:.1} | {:.0}% | {scaling} | {} | {} / {} | {} |",
                        row.label(),
                        if m.capped { " (capped)" } else { "" },
                        m.ops_per_sec() / 1e6,
                        m.ns_per_op,
                        m.per_thread_ns,
                        m.cpu_share * 100.0,
                        if workload == Workload::Lookups { "-".to_string() } else { m.failed.to_string() },
                        m.missing,
                        grouped(m.checked as usize),
                        rounds.join(", ")
                    );
                }
            }
        }

        let _ = writeln!(out, "\n### Ratios and targets\n");
        out.push_str(
            "| ratio | value (of the medians) | per round | target | verdict |\n|---|---:|---|---:|---|\n",
        );
        for target in targets() {
            let (value, met) = match self.ratio(&target) {
                Some(value) => (format!("{value:.2}"), verdict(target.goal.met(value))),
                None => ("n/a".to_string(), if target.goal == Goal::Info { "" } else { "not measured" }),
            };
            let per_round: Vec<String> =
                self.ratio_per_round(&target).iter().map(|r| format!("{r:.2}")).collect();
            let _ = writeln!(
                out,
                "| {} | {value} | {} | {} | {met} |",
                target.ratio,
                per_round.join(", "),
                target.goal.describe()
            );
        }
        let (missing, checked) = self.false_negatives();
        let _ = writeln!(
            out,
            "| false negatives, every phase of every row and round | {missing} of {} checked | | 0 | {} |",
            grouped(checked as usize),
            if missing == 0 { "pass" } else { "FAIL" }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(ns_per_op: f64, missing: u64) -> Sample {
        Sample {
            ops: 1000,
            wall_ns: ns_per_op * 1000.0,
            per_thread_ns: ns_per_op,
            cpu_share: 1.0,
            failed: 0,
            checked: 10,
            missing,
            capped: false,
        }
    }

    /// A round where ConcurrentFilter looks up at `concurrent_1` ns/op with 1 thread.
    fn round(concurrent_1: f64) -> Round {
        let mut samples = Samples::new();
        samples.insert((Workload::Lookups, Row::Cuckoo, 1), sample(10.0, 0));
        samples.insert((Workload::Lookups, Row::Concurrent, 1), sample(concurrent_1, 0));
        samples.insert((Workload::Lookups, Row::Concurrent, 2), sample(6.0, 0));
        samples.insert((Workload::Lookups, Row::Atomic, 2), sample(20.0, 0));
        samples.insert((Workload::Mix, Row::Concurrent, 1), sample(20.0, 0));
        samples.insert((Workload::Mix, Row::Concurrent, 2), sample(14.0, 0));
        Round { load: (None, None), order: Row::SCHEDULE.to_vec(), samples }
    }

    fn size(rounds: Vec<Round>) -> SizeRun {
        SizeRun {
            keys: 1000,
            lookups: 1000,
            mix: MixPlan::new(1000, None),
            configs: BTreeMap::new(),
            rounds_asked: 3,
            rounds,
            notes: Vec::new(),
        }
    }

    #[test]
    fn ratios_verdicts_and_false_negatives() {
        let run = size(vec![round(11.0), round(13.0), round(12.0)]);
        let all = targets();
        // Medians: ConcurrentFilter 12 ns against CuckooFilter's 10: 1.2, met (at most 1.2).
        assert!((run.ratio(&all[0]).unwrap() - 1.2).abs() < 1e-12);
        assert_eq!(all[0].goal.met(run.ratio(&all[0]).unwrap()), Some(true));
        assert_eq!(run.ratio_per_round(&all[0]).len(), 3);
        // 2 threads at 6 ns/op (wall) against 12: twice the throughput, >= 1.8.
        assert!((run.ratio(&all[1]).unwrap() - 2.0).abs() < 1e-12);
        assert_eq!(all[1].goal.met(2.0), Some(true));
        // Mix 20 -> 14 ns/op: 1.43x, below 1.5.
        let mix = run.ratio(&all[2]).unwrap();
        assert!((mix - 20.0 / 14.0).abs() < 1e-12);
        assert_eq!(all[2].goal.met(mix), Some(false));
        // Against atomic at 2 threads: 20 / 6 = 3.33, >= 3.
        assert_eq!(all[3].goal.met(run.ratio(&all[3]).unwrap()), Some(true));
        // The batched row was not measured: no ratio, and context rows have no verdict.
        assert_eq!(run.ratio(&all[4]), None);
        assert_eq!(all[4].goal.met(1.0), None);
        assert_eq!(run.false_negatives(), (0, 60 * 3));

        let mut bad = round(12.0);
        bad.samples.get_mut(&(Workload::Mix, Row::Concurrent, 2)).unwrap().missing = 2;
        assert_eq!(size(vec![bad]).false_negatives(), (2, 60));
    }

    #[test]
    fn the_report_shows_tables_and_verdicts() {
        let report = Report {
            machine: "test CPU, 2 logical CPUs".into(),
            load: (Some("0.1 0.2 0.3".into()), None),
            command: "--sizes 1000".into(),
            options: Options {
                threads: vec![1, 2],
                max_lookups: 10_000_000,
                max_mix_ops: None,
                phase_limit: Duration::from_secs(60),
                skip: vec![],
                seed: 42,
            },
            sizes: vec![size(vec![round(11.0), round(13.0)])],
            seconds: 90.0,
        };
        let text = report.render();
        assert!(text.contains("Machine: test CPU, 2 logical CPUs."), "{text}");
        assert!(text.contains("Fewer than 3 rounds"));
        assert!(text.contains(
            "| bugu::ConcurrentFilter | 2 | 166.67 | 6.0 | 6.0 | 100% | 2.00x | - | 0 / 20 | 6.0, 6.0 |"
        ));
        assert!(text.contains("| 1-thread lookups: ConcurrentFilter time / CuckooFilter time | 1.20 | 1.10, 1.30 | <= 1.20 | pass |"));
        assert!(text.contains(
            "| false negatives, every phase of every row and round | 0 of 120 checked | | 0 | pass |"
        ));
    }

    #[test]
    fn skips_are_parsed() {
        assert_eq!("atomic".parse(), Ok(Skip { row: Row::Atomic, keys: None }));
        assert_eq!("mutex@1e8".parse(), Ok(Skip { row: Row::Mutex, keys: Some(100_000_000) }));
        assert!("nothing".parse::<Skip>().is_err());
        assert!("atomic@x".parse::<Skip>().is_err());
        let skip: Skip = "concurrent@1000".parse().unwrap();
        assert!(skip.applies(Row::ConcurrentBatch, 1000));
        assert!(!skip.applies(Row::ConcurrentBatch, 2000));
        assert!(!skip.applies(Row::Cuckoo, 1000));
    }

    #[test]
    fn only_keys_a_capped_phase_inserted_are_checked() {
        let options = Options {
            threads: vec![1, 2],
            max_lookups: 1000,
            max_mix_ops: None,
            phase_limit: Duration::from_secs(60),
            skip: vec![],
            seed: 1,
        };
        let keys = Keys::new(1000, &options);
        let lengths = |slices: Vec<&[u64]>| slices.iter().map(|s| s.len()).collect::<Vec<_>>();
        assert_eq!(lengths(keys.to_check(Workload::Inserts, 2, &[500, 500], false)), vec![500]);
        // Capped: each thread's first keys, at most 250 each (500 present lookup keys in all).
        let capped = keys.to_check(Workload::Inserts, 2, &[10, 400], true);
        assert_eq!(lengths(capped.clone()), vec![10, 250]);
        assert_eq!(capped[1][0], keys.present[500]);
        // The mix: the present lookup keys, then what each thread got to of its 100 inserts.
        let mix = keys.to_check(Workload::Mix, 2, &[30, 100], true);
        assert_eq!(lengths(mix.clone()), vec![500, 30, 100]);
        assert_eq!((mix[1][0], mix[2][0]), (keys.present[800], keys.present[900]));
    }

    #[test]
    fn splits_and_mix_plans() {
        let keys: Vec<u64> = (0..7).collect();
        let parts = split(&keys, 3);
        assert_eq!(parts, vec![&[0, 1, 2][..], &[3, 4][..], &[5, 6][..]]);
        assert_eq!(split(&keys, 1), vec![&keys[..]]);
        let plan = MixPlan::new(1000, None);
        assert_eq!((plan.prefill, plan.inserts, plan.ops()), (800, 200, 2000));
        assert_eq!(MixPlan::new(1000, Some(500)).inserts, 50);
    }

    #[test]
    fn every_row_is_measured_without_false_negatives() {
        let options = Options {
            threads: vec![1, 2],
            max_lookups: 4200,
            max_mix_ops: None,
            phase_limit: Duration::from_secs(60),
            skip: vec![],
            seed: 7,
        };
        // 4,200 keys: atomic-cuckoo-filter rounds 1,050 buckets up to 2,048, so it is half full.
        // Two rounds asked, but a budget already spent: only the first runs, and the report says so.
        let run = measure_size(4200, 2, &options, Some(Instant::now()));
        assert_eq!((run.rounds.len(), run.rounds_asked), (1, 2));
        assert!(run.notes.iter().any(|note| note.starts_with("rounds 2 to 2 not run")), "{:?}", run.notes);
        for workload in Workload::ALL {
            for row in Row::ALL.into_iter().filter(|row| row.runs(workload)) {
                for t in row.threads(&options.threads) {
                    let m =
                        run.medians(workload, row, t).unwrap_or_else(|| panic!("{row:?} {workload:?} {t}"));
                    assert_eq!((m.missing, m.failed, m.capped), (0, 0, false), "{row:?} {workload:?} {t}");
                    assert!(m.checked >= 2000);
                }
            }
        }
        assert_eq!(run.rounds[0].samples[&(Workload::Mix, Row::Concurrent, 2)].ops, 8400);
    }
}
