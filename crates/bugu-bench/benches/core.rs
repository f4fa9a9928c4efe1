//! Criterion micro-benchmarks of the core operations: insert (to capacity), contains of present
//! and absent keys, remove, and batched contains — at a size that fits the caches and at one that
//! does not.
//!
//! The large size defaults to 16M items (about 26 MB at 12 bits per fingerprint): 4M items would
//! take 6.4 MB, which still fits in the 32 MiB L3 of the reference machines. Override it with
//! `BUGU_BENCH_ITEMS=4000000 cargo bench -p bugu-bench --bench core`. The comparison against other
//! crates lives in `crates/bugu-bench`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bugu::{CuckooFilter, Filter, FilterMut};
use bugu_bench::workload::mix64;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

/// Items in the small filter: 10K items, about 16 KB, in L1/L2.
const SMALL: usize = 10_000;
/// Items in the large filter unless `BUGU_BENCH_ITEMS` says otherwise.
const LARGE: usize = 16_000_000;
/// Keys per measured iteration of the lookup and remove benchmarks.
const CHUNK: usize = 1024;

fn large() -> usize {
    std::env::var("BUGU_BENCH_ITEMS").ok().and_then(|v| v.parse().ok()).unwrap_or(LARGE).max(2 * CHUNK)
}

/// `count` distinct random keys from counters `start..` (the harness's mixer is a bijection, so
/// distinct counters give distinct keys).
fn keys(start: u64, count: usize) -> Vec<u64> {
    (start..start + count as u64).map(mix64).collect()
}

fn filter(capacity: usize) -> CuckooFilter {
    CuckooFilter::builder().capacity(capacity).fingerprint_bits(12).bucket_size(4).build().expect("valid")
}

fn filled(present: &[u64]) -> CuckooFilter {
    let mut f = filter(present.len());
    for key in present {
        f.insert(key).expect("a filter accepts its capacity");
    }
    f
}

/// The next chunk of `keys`, wrapping around.
fn next_chunk<'a>(keys: &'a [u64], cursor: &mut usize) -> &'a [u64] {
    if *cursor + CHUNK > keys.len() {
        *cursor = 0;
    }
    let chunk = &keys[*cursor..*cursor + CHUNK];
    *cursor += CHUNK;
    chunk
}

fn core(c: &mut Criterion) {
    for n in [SMALL, large()] {
        let present = keys(0, n);
        let absent = keys(n as u64, n);
        let mut group = c.benchmark_group("core");
        if n > SMALL {
            group.sample_size(10).measurement_time(Duration::from_secs(20));
        }

        // Insert every key into a fresh filter sized for them: the cost up to full capacity.
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("insert_to_capacity", n), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let mut f = filter(n);
                    let start = Instant::now();
                    for key in &present {
                        black_box(f.insert(key)).expect("a filter accepts its capacity");
                    }
                    total += start.elapsed();
                }
                total
            })
        });

        let mut f = filled(&present);
        group.throughput(Throughput::Elements(CHUNK as u64));
        for (name, lookups) in [("contains_hit", &present), ("contains_miss", &absent)] {
            let mut cursor = 0;
            group.bench_function(BenchmarkId::new(name, n), |b| {
                b.iter(|| {
                    let chunk = next_chunk(lookups, &mut cursor);
                    chunk.iter().filter(|key| black_box(f.contains(*key))).count()
                })
            });
        }
        for (name, lookups) in [("contains_batch_hit", &present), ("contains_batch_miss", &absent)] {
            let mut cursor = 0;
            group.bench_function(BenchmarkId::new(name, n), |b| {
                b.iter(|| {
                    let chunk = next_chunk(lookups, &mut cursor);
                    black_box(f.contains_batch(chunk)).iter().filter(|&&hit| hit).count()
                })
            });
        }

        // Remove a chunk (timed), then put it back (untimed) so the filter stays full.
        let mut cursor = 0;
        group.bench_function(BenchmarkId::new("remove", n), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let chunk = next_chunk(&present, &mut cursor);
                    let start = Instant::now();
                    for key in chunk {
                        black_box(f.remove(key));
                    }
                    total += start.elapsed();
                    for key in chunk {
                        f.insert(key).expect("re-inserting removed keys fits");
                    }
                }
                total
            })
        });
        group.finish();
    }
}

criterion_group!(benches, core);
criterion_main!(benches);
