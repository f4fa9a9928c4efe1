//! The run at one size: the keys, the mix's starting filters, and every row's phases in each
//! round, checked for false negatives outside the timing.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

use bugu::{ConcurrentFilter, CuckooFilter, Filter, FilterMut};

use super::work::{
    Exclusive, Handle, Job, Outcome, Shared, describe_bugu, missing_batched, run_workers, split, work,
    work_batched,
};
use super::{MixPlan, Options, Round, Row, Samples, SizeRun, Workload};
use crate::contender::grouped;
use crate::report::rounds::rotation;
use crate::workload::{SplitMix64, u64_keys};

/// The keys of one size.
pub(super) struct Keys {
    /// All `n` keys, in insertion order; the mix inserts `present[prefill..prefill + inserts]`.
    pub(super) present: Vec<u64>,
    /// The lookup sequence: half present (from the first 80% of `present`), half absent, shuffled.
    lookups: Vec<u64>,
    /// The present half of `lookups`: checked after every phase.
    present_lookups: Vec<u64>,
    mix: MixPlan,
}

impl Keys {
    pub(super) fn new(keys: usize, options: &Options) -> Self {
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
    pub(super) fn to_check(
        &self,
        workload: Workload,
        threads: usize,
        inserted: &[usize],
        capped: bool,
    ) -> Vec<&[u64]> {
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
        let order: Vec<Row> = rotation(offset, Row::SCHEDULE.len()).map(|i| Row::SCHEDULE[i]).collect();
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
