//! The timed loops: what one thread does in a phase, the filters as the threads drive them, and
//! the workers started together behind a barrier.

use std::hint::black_box;
use std::sync::{Barrier, Mutex, RwLock};
use std::time::{Duration, Instant};

use bugu::{ConcurrentFilter, CuckooFilter, Filter, FilterMut};

use super::{BATCH, CLOCK_EVERY, LOOKUPS_PER_INSERT, Sample};
use crate::contender::grouped;
use crate::timing::Clock;

/// What one thread did in a phase.
#[derive(Debug, Default)]
pub(super) struct Work {
    pub(super) ops: u64,
    /// Keys of the thread's share of inserts it got to (all of them unless capped).
    pub(super) inserted: usize,
    /// Keys whose insert was refused.
    pub(super) failed: Vec<u64>,
    pub(super) capped: bool,
}

/// A filter as one thread drives it.
pub(super) trait Ops {
    fn contains(&self, key: &u64) -> bool;
    /// `false` if the insert was refused.
    fn insert(&mut self, key: &u64) -> bool;
}

/// A filter every thread drives through `&self`.
pub(super) trait Shared: Sync {
    fn contains(&self, key: &u64) -> bool;
    fn insert(&self, key: &u64) -> bool;
    /// Configuration and memory, in words.
    fn describe(&self) -> String;
    /// The filter, if it is a [`ConcurrentFilter`] (which has the batched row too).
    fn as_concurrent(&self) -> Option<&ConcurrentFilter> {
        None
    }
}

pub(super) fn describe_bugu(filter: &CuckooFilter) -> String {
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
pub(super) struct Handle<'a, S>(pub(super) &'a S);

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
pub(super) struct Exclusive<'a>(pub(super) &'a mut CuckooFilter);

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
pub(super) enum Job<'a> {
    Lookups(&'a [u64]),
    Inserts(&'a [u64]),
    Mix { lookups: &'a [u64], inserts: &'a [u64] },
}

/// Runs `job` against `target` until it is done or `deadline` has passed.
pub(super) fn work(mut target: impl Ops, job: Job<'_>, deadline: Instant) -> Work {
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
pub(super) fn work_batched(filter: &ConcurrentFilter, keys: &[u64], deadline: Instant) -> Work {
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
pub(super) fn missing_batched(filter: &ConcurrentFilter, keys: &[u64]) -> u64 {
    keys.chunks(BATCH)
        .map(|batch| {
            let hashes: Vec<u64> = batch.iter().map(|key| filter.hash_of(key)).collect();
            filter.contains_hash_batch(&hashes).iter().filter(|&&found| !found).count() as u64
        })
        .sum()
}

/// What a phase returns: its sample (without the check) and the keys whose insert failed.
pub(super) struct Outcome {
    pub(super) sample: Sample,
    pub(super) failed: Vec<u64>,
    /// Per thread, in the order of the jobs: how many keys of its share of inserts it got to.
    pub(super) inserted: Vec<usize>,
}

/// Runs one worker per thread, all started together behind a barrier, and times them.
pub(super) fn run_workers<W: FnOnce() -> Work + Send>(workers: Vec<W>) -> Outcome {
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
