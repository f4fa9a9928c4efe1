use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use proptest::prelude::*;

use super::*;
use crate::filter::tests::{Op, op, small_filter};
use crate::membership::FilterMut;
use crate::{Persist, PersistError};

/// The table bytes of a concurrent filter, through the conversion.
fn bytes_of(filter: &ConcurrentFilter) -> Vec<u8> {
    filter.to_filter().unwrap().table_bytes().to_vec()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// From one thread, the concurrent filter answers exactly as a `CuckooFilter` and holds the
    /// same bytes after every operation.
    #[test]
    fn one_thread_gives_the_answers_and_bytes_of_a_cuckoo_filter(
        builder in small_filter(),
        ops in proptest::collection::vec(op(), 1..200),
    ) {
        let builder = builder.eviction_limit(20);
        let mut plain = builder.build().unwrap();
        let shared = builder.build_concurrent().unwrap();
        let mut live: HashMap<u16, usize> = HashMap::new();
        for op in ops {
            match op {
                Op::Insert(key) => {
                    let result = plain.insert(&key);
                    prop_assert_eq!(shared.insert(&key), result);
                    if result.is_ok() {
                        *live.entry(key).or_default() += 1;
                    }
                }
                Op::InsertUnique(key) => {
                    let result = plain.insert_unique(&key);
                    prop_assert_eq!(shared.insert_unique(&key), result);
                    if result == Ok(true) {
                        *live.entry(key).or_default() += 1;
                    }
                }
                Op::RemoveLive(n) => {
                    let mut keys: Vec<u16> = live.iter().filter(|(_, c)| **c > 0).map(|(k, _)| *k).collect();
                    keys.sort_unstable();
                    if let Some(&key) = keys.get(n % keys.len().max(1)) {
                        prop_assert_eq!(shared.remove(&key), plain.remove(&key));
                        *live.get_mut(&key).unwrap() -= 1;
                    }
                }
                Op::Contains(key) => {
                    prop_assert_eq!(shared.contains(&key), plain.contains(&key));
                    prop_assert_eq!(shared.count(&key), plain.count(&key));
                }
            }
            prop_assert_eq!(shared.len(), plain.len());
            prop_assert_eq!(bytes_of(&shared), plain.table_bytes());
        }
        prop_assert_eq!(shared.stats(), Stats { memory_bytes: shared.memory_bytes(), ..plain.stats() });
        prop_assert_eq!(shared.to_filter().unwrap().to_bytes(), plain.to_bytes());
    }

    #[test]
    fn batches_give_the_answers_and_bytes_of_a_cuckoo_filter(
        builder in small_filter(),
        keys in proptest::collection::vec(0u32..200, 0..150),
        probes in proptest::collection::vec(0u32..400, 0..100),
    ) {
        let mut plain = builder.build().unwrap();
        let shared = builder.build_concurrent().unwrap();
        prop_assert_eq!(shared.insert_batch(&keys), plain.insert_batch(&keys));
        prop_assert_eq!(bytes_of(&shared), plain.table_bytes());
        prop_assert_eq!(shared.contains_batch(&probes), plain.contains_batch(&probes));
    }
}

/// The geometries whose common insert is compiled for them alone (the ten hot ones), and two that
/// take the code for any geometry: `(bucket size, fingerprint bits, semi-sorted)`.
const GEOMETRIES: [(usize, u32, bool); 12] = [
    (2, 8, false),
    (2, 12, false),
    (2, 16, false),
    (4, 8, false),
    (4, 12, false),
    (4, 16, false),
    (8, 8, false),
    (8, 12, false),
    (8, 16, false),
    (4, 13, true),
    (2, 11, false),
    (4, 15, true),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// In every geometry with code of its own, from one thread: inserts past the capacity (free
    /// slots, paths of moves, refusals) and removals leave the bytes and answers of a
    /// `CuckooFilter`.
    #[test]
    fn each_geometry_s_inserts_give_the_bytes_of_a_cuckoo_filter(
        geometry in prop::sample::select(GEOMETRIES.to_vec()),
        capacity in 20usize..3_000,
        seed in any::<u64>(),
    ) {
        let (bucket_size, bits, semi_sorted) = geometry;
        // Narrow fingerprints in small buckets hold only so many items.
        let capacity = capacity.min(crate::sizing::capacity_limit(bucket_size, bits));
        let builder = CuckooFilter::builder()
            .capacity(capacity)
            .bucket_size(bucket_size)
            .fingerprint_bits(bits)
            .semi_sorted(semi_sorted)
            .seed(seed);
        let mut plain = builder.build().unwrap();
        let shared = builder.build_concurrent().unwrap();
        for i in 0..capacity as u64 * 11 / 10 {
            prop_assert_eq!(shared.insert(&i), plain.insert(&i));
        }
        prop_assert_eq!(bytes_of(&shared), plain.table_bytes());
        for i in (0..capacity as u64).step_by(3) {
            prop_assert_eq!(shared.remove(&i), plain.remove(&i));
        }
        for i in capacity as u64 * 2..capacity as u64 * 2 + capacity as u64 / 2 {
            prop_assert_eq!(shared.insert(&i), plain.insert(&i));
        }
        prop_assert_eq!(shared.len(), plain.len());
        prop_assert_eq!(bytes_of(&shared), plain.table_bytes());
    }
}

/// The common insert reads its buckets without a lock and takes one stripe; here every insert
/// takes the same one. Threads insert into a table of one stripe, racing for the same free slots
/// (a slot taken between the read and the lock sends the insert on under both buckets' locks),
/// while readers look up keys stored before: no insert reported stored is lost, none is stored
/// twice, and no false negative, in each geometry with code of its own for that step and in two
/// without.
#[test]
fn inserts_racing_for_one_stripe_lose_nothing() {
    for (bucket_size, bits, semi_sorted) in GEOMETRIES {
        let filter = CuckooFilter::builder()
            .capacity(1_500)
            .bucket_size(bucket_size)
            .fingerprint_bits(bits)
            .semi_sorted(semi_sorted)
            .build_concurrent()
            .unwrap();
        let filter = Arc::new(filter);
        assert_eq!(filter.shared.striped_len(), 1, "a table of one stripe");
        let pinned: Vec<u64> = (0..200).map(|i| key(99, i)).collect();
        for k in &pinned {
            filter.insert(k).unwrap();
        }
        let done = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (filter, done, pinned) = (Arc::clone(&filter), Arc::clone(&done), pinned.clone());
                thread::spawn(move || {
                    while !done.load(Ordering::Relaxed) {
                        assert!(pinned.iter().all(|k| filter.contains(k)), "false negative for a pinned key");
                    }
                })
            })
            .collect();
        // Rounds of inserts until the table is nearly full, checked, then removed again.
        let writers: Vec<_> = (0..4)
            .map(|t| {
                let filter = Arc::clone(&filter);
                thread::spawn(move || {
                    let mut next = 0;
                    for round in 0..20 {
                        let mut live = Vec::new();
                        while live.len() < 250 {
                            let k = key(t, next);
                            next += 1;
                            if filter.insert(&k).is_ok() {
                                live.push(k);
                            }
                            assert!(
                                live.iter().all(|k| filter.contains(k)),
                                "false negative in {t}, round {round}"
                            );
                        }
                        for k in &live {
                            assert!(filter.remove(k), "a key reported stored was not found to remove");
                        }
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
        for reader in readers {
            reader.join().unwrap();
        }
        // Only the pinned keys are left: each stored once, and the counts agree with the table.
        assert_eq!(filter.len(), pinned.len());
        assert_eq!(filter.stats().items, pinned.len());
        let plain = filter.to_filter().unwrap();
        assert!(pinned.iter().all(|k| plain.count(k) >= 1));
    }
}

#[test]
fn conversions_and_files_keep_the_bytes() {
    let mut plain =
        CuckooFilter::builder().capacity(5_000).semi_sorted(true).fingerprint_bits(13).build().unwrap();
    for i in 0..4_000u32 {
        plain.insert(&i).unwrap();
    }
    let bytes = plain.to_bytes();
    let view = crate::CuckooView::from_bytes(&bytes).unwrap();
    let shared = ConcurrentFilter::from_filter(&view).unwrap();
    assert_eq!(shared.len(), 4_000);
    assert!((0..4_000u32).all(|i| shared.contains(&i)));
    assert_eq!(shared.to_filter().unwrap().to_bytes(), bytes);

    let dir = std::env::temp_dir().join(format!("bugu-concurrent-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("shared.bugu");
    shared.save(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    let loaded = ConcurrentFilter::load(&path).unwrap();
    assert_eq!(loaded.to_filter().unwrap().to_bytes(), bytes);
    std::fs::write(&path, b"not a filter").unwrap();
    assert!(matches!(ConcurrentFilter::load(&path), Err(PersistError::BadMagic)));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn errors_are_those_of_a_cuckoo_filter() {
    let filter = ConcurrentFilter::builder().capacity(1_000).bucket_size(2).build_concurrent().unwrap();
    for _ in 0..4 {
        filter.insert("again").unwrap();
    }
    assert_eq!(filter.insert("again"), Err(InsertError::CopyLimit { copies: 4 }));
    assert_eq!(filter.insert_unique("again"), Ok(false));
    assert!(ConcurrentFilter::new(0).is_err());
    let full = ConcurrentFilter::new(100).unwrap();
    let results: Vec<_> = (0..1_000u32).map(|i| full.insert(&i)).collect();
    let first_failure = results.iter().position(Result::is_err).unwrap();
    assert_eq!(results[first_failure], Err(InsertError::Full));
    assert!(format!("{full:?}").starts_with("ConcurrentFilter {"));
}

#[test]
fn it_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ConcurrentFilter>();
}

/// Keys of thread `t`: disjoint between threads.
fn key(thread: usize, i: usize) -> u64 {
    ((thread as u64) << 40) | i as u64
}

/// `threads` threads insert, look up and remove their own keys for `rounds` rounds, in a table
/// kept nearly full (so inserts move other threads' fingerprints), each checking after every
/// step that every key it holds is found; a reader checks keys inserted before the start that no
/// one removes. Returns the filter and the number of operations run.
fn mixed_workload(threads: usize, capacity: usize, rounds: usize) -> (ConcurrentFilter, u64) {
    mixed_workload_on(ConcurrentFilter::builder().capacity(capacity), threads, rounds)
}

/// [`mixed_workload`] on a filter of any configuration.
fn mixed_workload_on(builder: crate::Builder, threads: usize, rounds: usize) -> (ConcurrentFilter, u64) {
    let filter = Arc::new(builder.build_concurrent().unwrap());
    let capacity = filter.capacity();
    let pinned: Vec<u64> = (0..capacity / 4).map(|i| key(99, i)).collect();
    for k in &pinned {
        filter.insert(k).unwrap();
    }
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (filter, done, pinned) = (Arc::clone(&filter), Arc::clone(&done), pinned.clone());
        thread::spawn(move || {
            let mut checks = 0u64;
            while !done.load(Ordering::Relaxed) {
                for k in &pinned {
                    assert!(filter.contains(k), "false negative for a pinned key");
                }
                checks += pinned.len() as u64;
            }
            checks
        })
    };
    // Each writer holds up to its share of 3/4 of the capacity: near 95% load with the pinned keys.
    let share = capacity * 7 / 10 / threads;
    let writers: Vec<_> = (0..threads)
        .map(|t| {
            let filter = Arc::clone(&filter);
            thread::spawn(move || {
                let mut live: Vec<u64> = Vec::new();
                let (mut next, mut operations) = (0, 0u64);
                for round in 0..rounds {
                    while live.len() < share {
                        let k = key(t, next);
                        next += 1;
                        if filter.insert(&k).is_ok() {
                            live.push(k);
                        }
                        operations += 1;
                    }
                    for k in &live {
                        assert!(filter.contains(k), "false negative in thread {t}, round {round}");
                    }
                    // Remove a third, every third from an offset that changes each round.
                    operations += (live.len() + live.len().div_ceil(3)) as u64;
                    let mut kept = Vec::with_capacity(live.len());
                    for (i, k) in live.into_iter().enumerate() {
                        if (i + round) % 3 == 0 {
                            assert!(filter.remove(&k), "a live key was not removed");
                        } else {
                            kept.push(k);
                        }
                    }
                    live = kept;
                    assert!(filter.contains_batch(&live).into_iter().all(|found| found));
                    operations += live.len() as u64;
                }
                (live.len(), operations)
            })
        })
        .collect();
    let (mut held, mut operations) = (0, 0);
    for writer in writers {
        let (live, ops) = writer.join().unwrap();
        (held, operations) = (held + live, operations + ops);
    }
    done.store(true, Ordering::Relaxed);
    operations += reader.join().unwrap();
    assert_eq!(filter.len(), held + pinned.len());
    let filter = Arc::try_unwrap(filter).unwrap();
    // The count kept per stripe agrees with the table.
    assert_eq!(filter.stats().items, filter.len());
    (filter, operations)
}

/// Checked: with the lookups' move-word check removed, or with paths of moves not counted in the
/// move word, this fails within its 300 rounds.
#[test]
fn threads_never_miss_their_live_keys() {
    for threads in [2, 4, 8] {
        mixed_workload(threads, 20_000, 300);
    }
}

/// The same churn on geometries whose buckets straddle words differently: semi-sorted 13-bit
/// buckets (6 bytes, re-sorted on every write), 8 x 16 bits (16-byte windows over three words),
/// 2 x 11 bits (buckets starting at any bit).
#[test]
fn other_geometries_never_miss_live_keys() {
    let builders = [
        ConcurrentFilter::builder().capacity(20_000).fingerprint_bits(13).semi_sorted(true),
        ConcurrentFilter::builder().capacity(20_000).bucket_size(8).fingerprint_bits(16),
        ConcurrentFilter::builder().capacity(20_000).bucket_size(2).fingerprint_bits(11),
    ];
    for builder in builders {
        mixed_workload_on(builder, 2, 100);
    }
}

/// The soak: 1,000 rounds of the stress workload on a table of 10^6 items, 4 writer threads and a
/// reader: over 10^9 operations, a few minutes (docs/testing.md).
#[test]
#[ignore = "minutes: run with --ignored (docs/testing.md)"]
fn soak_a_billion_operations() {
    let started = std::time::Instant::now();
    let (filter, operations) = mixed_workload(4, 1_000_000, 1_000);
    assert!(operations >= 1_000_000_000, "{operations} operations");
    println!(
        "soak: {operations} operations by 4 threads and a reader in {:.1} s, no false negative, {} items at the end",
        started.elapsed().as_secs_f64(),
        filter.len()
    );
}

#[test]
fn concurrent_inserts_into_a_nearly_full_filter_lose_nothing() {
    for threads in [2, 4, 8] {
        let filter = Arc::new(ConcurrentFilter::new(10_000).unwrap());
        let prefilled = 9_000;
        for i in 0..prefilled {
            filter.insert(&key(99, i)).unwrap();
        }
        let results: Vec<(Vec<u64>, usize)> = (0..threads)
            .map(|t| {
                let filter = Arc::clone(&filter);
                thread::spawn(move || {
                    let (mut stored, mut failures) = (Vec::new(), 0);
                    // Until the table refuses several in a row.
                    let mut i = 0;
                    while failures < 50 {
                        let k = key(t, i);
                        i += 1;
                        match filter.insert(&k) {
                            Ok(()) => stored.push(k),
                            Err(error) => {
                                assert_eq!(error, InsertError::Full);
                                failures += 1;
                            }
                        }
                    }
                    (stored, failures)
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect();
        let stored: usize = results.iter().map(|(s, _)| s.len()).sum();
        // Every success is found; failures added nothing (the count and the table agree).
        for (keys, _) in &results {
            assert!(keys.iter().all(|k| filter.contains(k)));
        }
        assert!((0..prefilled).all(|i| filter.contains(&key(99, i))));
        assert_eq!(filter.len(), prefilled + stored);
        assert_eq!(filter.stats().items, prefilled + stored);
        assert!(filter.load_factor() > 0.9, "load {}", filter.load_factor());
    }
}

#[test]
fn insert_unique_adds_each_item_once_across_threads() {
    let filter = Arc::new(ConcurrentFilter::new(50_000).unwrap());
    let keys: Arc<Vec<u64>> = Arc::new((0..20_000).collect());
    let added: Vec<Vec<bool>> = (0..4)
        .map(|_| {
            let (filter, keys) = (Arc::clone(&filter), Arc::clone(&keys));
            thread::spawn(move || keys.iter().map(|k| filter.insert_unique(k).unwrap()).collect())
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    for (i, k) in keys.iter().enumerate() {
        let adders = added.iter().filter(|thread| thread[i]).count();
        assert!(adders <= 1, "key {k} added {adders} times");
        assert!(filter.contains(k));
    }
    let total: usize = added.iter().map(|thread| thread.iter().filter(|&&a| a).count()).sum();
    assert_eq!(filter.len(), total);
}

/// The persistent bytes are streamed from the shared table in chunks: for tables of every size
/// around a chunk's, they are the bytes of the equivalent cuckoo filter.
#[test]
fn streamed_bytes_are_the_cuckoo_filters_bytes() {
    for capacity in [10, 1_000, 5_461, 5_462, 100_000] {
        for bits in [8, 12, 13] {
            let mut plain =
                CuckooFilter::builder().capacity(capacity).fingerprint_bits(bits).build().unwrap();
            for i in 0..(capacity as u64 * 9 / 10) {
                plain.insert(&i).unwrap();
            }
            let shared = ConcurrentFilter::from_filter(&plain).unwrap();
            let bytes = shared.to_bytes();
            assert_eq!(bytes, plain.to_bytes(), "capacity {capacity}, {bits} bits");
            assert_eq!(bytes.len(), shared.serialized_len());
        }
    }
}
