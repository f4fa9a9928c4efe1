//! "A view answers as fast as the owned filter": `contains` on a 1M-item filter, owned, viewed
//! over a byte vector, and viewed over a memory-mapped file of the same bytes; then batched
//! (`contains_batch`) on the owned filter and on the mapped view.
//!
//! `cargo bench -p bugu-bench --bench view`

use std::hint::black_box;

use bugu::{CuckooFilter, CuckooView, Filter, FilterMut, Persist};
use bugu_bench::workload::SplitMix64;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const ITEMS: u64 = 1_000_000;
/// Lookups per iteration: half present, half absent, in a fixed random order.
const QUERIES: usize = 4096;

fn queries() -> Vec<u64> {
    let mut random = SplitMix64::new(1);
    (0..QUERIES)
        .map(|i| {
            let key = random.below(ITEMS as usize) as u64;
            // Present keys are 0..ITEMS; absent ones lie above.
            if i % 2 == 0 { key } else { ITEMS + key }
        })
        .collect()
}

fn contains_all(filter: &impl Filter, keys: &[u64]) -> usize {
    keys.iter().filter(|key| filter.contains(*key)).count()
}

fn bench_view(c: &mut Criterion) {
    let mut filter = CuckooFilter::new(ITEMS as usize).expect("valid configuration");
    for key in 0..ITEMS {
        filter.insert(&key).expect("the filter is sized for these keys");
    }
    let bytes = filter.to_bytes();
    let path = std::env::temp_dir().join(format!("bugu-bench-view-{}.bugu", std::process::id()));
    filter.save(&path).expect("temporary directory is writable");
    let file = std::fs::File::open(&path).expect("just saved");
    // SAFETY: the file is private to this benchmark and nothing modifies it while it is mapped.
    let map = unsafe { memmap2::Mmap::map(&file) }.expect("mappable file");
    let keys = queries();

    let view = CuckooView::from_bytes(&bytes).expect("valid bytes");
    let mapped = CuckooView::from_bytes(&map).expect("valid file");
    let expected = contains_all(&filter, &keys);
    assert_eq!(contains_all(&view, &keys), expected);
    assert_eq!(contains_all(&mapped, &keys), expected);

    let mut group = c.benchmark_group("contains_1M");
    group.throughput(Throughput::Elements(QUERIES as u64));
    group.bench_function(BenchmarkId::from_parameter("owned"), |b| {
        b.iter(|| contains_all(black_box(&filter), black_box(&keys)))
    });
    group.bench_function(BenchmarkId::from_parameter("view_vec"), |b| {
        b.iter(|| contains_all(black_box(&view), black_box(&keys)))
    });
    group.bench_function(BenchmarkId::from_parameter("view_mmap"), |b| {
        b.iter(|| contains_all(black_box(&mapped), black_box(&keys)))
    });
    // Batches: the pipelined lookup (buckets of upcoming keys prefetched), shared by both.
    group.bench_function(BenchmarkId::from_parameter("owned_batch"), |b| {
        b.iter(|| black_box(&filter).contains_batch(black_box(&keys)))
    });
    group.bench_function(BenchmarkId::from_parameter("view_mmap_batch"), |b| {
        b.iter(|| black_box(&mapped).contains_batch(black_box(&keys)))
    });
    group.finish();

    drop(map);
    let _ = std::fs::remove_file(&path);
}

criterion_group!(benches, bench_view);
criterion_main!(benches);
