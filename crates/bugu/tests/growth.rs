//! Growth from a small filter to millions of items: no false negatives, and the false-positive
//! rate under the target after every growth step.
//!
//! The default run grows to 1M items; the full 10M version is ignored by default (it takes about
//! a minute in release mode):
//!
//! ```sh
//! cargo test --release -p bugu --test growth -- --ignored --nocapture
//! ```

use bugu::{Filter, FilterMut, GrowableFilter};

/// Keys from here on are never inserted.
const ABSENT_START: u64 = 1 << 40;

fn measured_rate(filter: &GrowableFilter, absent: &[u64]) -> f64 {
    let positives = filter.contains_hash_batch(absent).into_iter().filter(|&hit| hit).count();
    positives as f64 / absent.len() as f64
}

/// Grows from 1,000 to `items` items; after every growth step (when the level that was newest is
/// full) and at the end, checks every inserted key and measures the rate on `absent` keys.
fn grow(items: u64, absent: u64, target: f64) {
    let mut filter =
        GrowableFilter::builder().initial_capacity(1_000).false_positive_rate(target).build().unwrap();
    let absent: Vec<u64> = (ABSENT_START..ABSENT_START + absent).map(|k| filter.hash_of(&k)).collect();
    let mut levels = filter.level_count();
    let check = |filter: &GrowableFilter, inserted: u64| {
        let missing = (0..inserted).filter(|key| !filter.contains(key)).count();
        assert_eq!(missing, 0, "false negatives at {inserted} items");
        let measured = measured_rate(filter, &absent);
        let (bound, expected) = (filter.false_positive_rate(), filter.expected_false_positive_rate());
        println!(
            "{inserted:>10} items {:>2} levels  measured {measured:.6}  expected {expected:.6}  bound {bound:.6}  \
             {:.2} bits/item",
            filter.level_count(),
            filter.bits_per_item()
        );
        assert!(measured < target, "{inserted} items: measured {measured} >= target {target}");
        assert!(bound < target);
        assert!(measured <= 1.25 * bound, "{inserted} items: measured {measured} > 1.25 x bound {bound}");
        // Not vacuous: the filter does produce the false positives its load predicts.
        assert!(measured >= 0.75 * expected, "{inserted} items: measured {measured} << expected {expected}");
    };
    for key in 0..items {
        filter.insert(&key).unwrap();
        if filter.level_count() > levels {
            levels = filter.level_count();
            check(&filter, key + 1);
        }
    }
    check(&filter, items);
    assert_eq!(filter.len() as u64, items);
    assert_eq!(filter.stats().iter().map(|s| s.items).sum::<usize>(), filter.len());
}

#[test]
fn grows_from_1k_to_1m_with_the_rate_under_target_after_every_step() {
    grow(1_000_000, 200_000, 0.01);
}

#[test]
#[ignore = "10M items: run with `cargo test --release -p bugu --test growth -- --ignored`"]
fn grows_from_1k_to_10m_with_the_rate_under_target_after_every_step() {
    grow(10_000_000, 1_000_000, 0.001);
}

fn grown(items: u64, target: f64) -> GrowableFilter {
    let mut filter =
        GrowableFilter::builder().initial_capacity(1_000).false_positive_rate(target).build().unwrap();
    for key in 0..items {
        filter.insert(&key).unwrap();
    }
    assert!(filter.level_count() >= 8, "{}", filter.level_count());
    filter
}

fn absent_hashes(filter: &GrowableFilter, count: u64) -> Vec<u64> {
    (ABSENT_START..ABSENT_START + count).map(|k| filter.hash_of(&k)).collect()
}

/// Removing every key, newest first: every removal finds its own copy (newer levels only hold
/// newer keys, already removed), so the filter ends exactly empty.
#[test]
fn removing_everything_newest_first_leaves_an_empty_filter() {
    const ITEMS: u64 = 300_000;
    let target = 0.01;
    let mut filter = grown(ITEMS, target);
    let levels = filter.level_count();
    // Halfway: the removed keys answer yes only at the false-positive rate, the kept ones always.
    for key in (ITEMS / 2..ITEMS).rev() {
        assert!(filter.remove(&key), "{key} not removed");
    }
    let removed: Vec<u64> = (ITEMS / 2..ITEMS).map(|k| filter.hash_of(&k)).collect();
    let still_present = measured_rate(&filter, &removed);
    let absent = measured_rate(&filter, &absent_hashes(&filter, 150_000));
    println!("halfway: removed keys present {still_present:.6}, absent keys present {absent:.6}");
    assert!(still_present <= 1.25 * filter.false_positive_rate() && still_present < target);
    assert!((0..ITEMS / 2).all(|key| filter.contains(&key)));

    for key in (0..ITEMS / 2).rev() {
        assert!(filter.remove(&key), "{key} not removed");
    }
    assert_eq!(filter.len(), 0);
    assert!(filter.is_empty());
    assert_eq!(filter.level_count(), levels);
    assert!(filter.stats().iter().all(|s| s.items == 0));
    // Every table is empty: not even false positives remain.
    assert_eq!((0..ITEMS).filter(|key| filter.contains(key)).count(), 0);
    assert_eq!(measured_rate(&filter, &absent_hashes(&filter, 100_000)), 0.0);
}

/// Removing every key, oldest first: a removal can take a newer level's lookalike (documented);
/// that key's own removal then finds nothing, and the first key's copy stays. Both happen at most
/// at the false-positive bound per removal.
#[test]
fn removing_everything_oldest_first_loses_at_most_the_documented_share() {
    const ITEMS: u64 = 300_000;
    for target in [0.01, 0.001] {
        let mut filter = grown(ITEMS, target);
        let bound = filter.false_positive_rate();
        let mut failed = 0;
        let mut lost_while_kept = 0;
        for key in 0..ITEMS {
            if !filter.remove(&key) {
                failed += 1;
            }
            if key == ITEMS / 2 {
                lost_while_kept = (ITEMS / 2 + 1..ITEMS).filter(|k| !filter.contains(k)).count();
                let removed: Vec<u64> = (0..=ITEMS / 2).map(|k| filter.hash_of(&k)).collect();
                let still_present = measured_rate(&filter, &removed);
                println!(
                    "p={target} halfway: removed keys present {still_present:.6}, kept keys lost {lost_while_kept}"
                );
                assert!(still_present < 2.0 * bound, "{still_present}");
            }
        }
        println!("p={target}: {failed} of {ITEMS} removals found nothing; len {}", filter.len());
        // Each failed removal left one stale copy behind.
        assert_eq!(filter.len(), failed);
        assert!((failed as f64) < bound * ITEMS as f64, "{failed}");
        assert!(lost_while_kept as f64 <= bound * ITEMS as f64, "{lost_while_kept}");
        let left = filter.stats().iter().map(|s| s.items).sum::<usize>();
        assert_eq!(left, failed);
    }
}

#[test]
fn batched_answers_match_one_by_one_across_levels() {
    let mut filter =
        GrowableFilter::builder().initial_capacity(100).false_positive_rate(0.05).build().unwrap();
    let hashes: Vec<u64> = (0..50_000u64).map(|k| filter.hash_of(&k)).collect();
    let results = filter.insert_hash_batch(&hashes[..20_000]);
    assert!(results.iter().all(Result::is_ok));
    assert!(filter.level_count() > 5);
    let batch = filter.contains_hash_batch(&hashes);
    let single: Vec<bool> = hashes.iter().map(|&h| filter.contains_hash(h)).collect();
    assert_eq!(batch, single);
    assert!(batch[..20_000].iter().all(|&b| b));
    let keys: Vec<u64> = (0..50_000).collect();
    assert_eq!(filter.contains_batch(&keys), single);
    assert!(filter.contains_hash_batch(&[]).is_empty());
}
