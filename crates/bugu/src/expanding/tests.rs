use std::collections::HashMap;

use proptest::prelude::*;

use super::config::MAX_LOAD;
use super::table::Widths;
use super::*;
use crate::Persist;

fn filter_with(initial: usize, fingerprint: u32, tail: u32) -> ExpandingFilter {
    let builder = ExpandingFilter::builder().initial_capacity(initial).false_positive_rate(0.999);
    let (_, base_bits, split) = builder.plan().unwrap();
    ExpandingFilter::with_widths(&builder, Widths { fingerprint, tail }, base_bits, split).unwrap()
}

/// Every invariant the filter keeps, checked from its table.
fn check_invariants(filter: &ExpandingFilter) {
    let stats = filter.stats();
    let in_table: usize = stats.tail_histogram.iter().sum();
    assert_eq!(in_table + stats.stash, filter.entries, "entries are counted");
    let mut weight = 0u128;
    for (bucket, level) in filter.buckets_in_use() {
        for stored in filter.segments.bucket(bucket) {
            if stored != 0 {
                let entry = filter.decode(bucket, level, stored);
                assert!(entry.depth >= filter.level, "an entry knows the lower level's bits");
                assert!(
                    entry.depth <= filter.level + filter.widths.tail,
                    "no entry knows more than inserts give"
                );
                weight += 1u128 << (64 - entry.depth);
            }
        }
    }
    for entry in &filter.stash {
        assert!(
            entry.depth <= filter.level + filter.widths.tail,
            "no stashed entry knows more than inserts give"
        );
        weight += 1u128 << (64 - entry.depth);
    }
    assert_eq!(weight, filter.weight, "the weight is the sum over entries");
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u16),
    Remove(u16),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![3 => any::<u16>().prop_map(Op::Insert), 1 => any::<u16>().prop_map(Op::Remove)],
        1..1500,
    )
}

/// Runs `ops` against a multiset model: a live key is never absent, `len` is the model's, and
/// `count` is at least the model's count.
fn run_model(mut filter: ExpandingFilter, ops: &[Op], key_space: u16) {
    let mut model: HashMap<u16, usize> = HashMap::new();
    for op in ops {
        match *op {
            Op::Insert(key) => {
                let key = key % key_space;
                match filter.insert(&key) {
                    Ok(()) => *model.entry(key).or_default() += 1,
                    Err(InsertError::CopyLimit { copies }) => assert!(copies >= 8 && model[&key] >= 1),
                    Err(error) => panic!("{error}"),
                }
            }
            Op::Remove(key) => {
                let key = key % key_space;
                if let Some(copies) = model.get_mut(&key).filter(|copies| **copies > 0) {
                    assert!(filter.remove(&key), "a live key is removed");
                    *copies -= 1;
                }
            }
        }
    }
    check_invariants(&filter);
    assert_eq!(filter.len(), model.values().sum::<usize>());
    for (key, &copies) in &model {
        assert!(filter.count(key) >= copies, "count of {key} below the model's {copies}");
        if copies > 0 {
            assert!(filter.contains(key), "live key {key} absent");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_live_key_is_never_absent(ops in ops(), initial in 1usize..64) {
        run_model(ExpandingFilter::new(initial).unwrap(), &ops, 4096);
    }

    #[test]
    fn a_live_key_is_never_absent_with_twins_everywhere(ops in ops(), tail in 3u32..5) {
        // Short tails: most early entries become twins as the table grows.
        run_model(filter_with(16, 8, tail), &ops, 4096);
    }

    #[test]
    fn duplicates_and_removals_in_any_order(ops in ops()) {
        // Few keys, many copies: buckets fill with one key's fingerprints and the stash is used.
        run_model(filter_with(2, 6, 4), &ops, 8);
    }
}

#[test]
fn the_other_side_is_an_involution_in_another_bucket() {
    let filter = ExpandingFilter::new(1000).unwrap();
    for hash in (0..10_000u64).map(crate::hash::mix13) {
        let key = filter.key(hash);
        let entry = Entry { address: key.address & mask(filter.base_bits + 12), depth: 12, ..key };
        let other = filter.other_side(entry);
        let base = |entry: Entry| entry.address & mask(filter.base_bits);
        assert_ne!(base(other), base(entry));
        assert_eq!(other.address >> (filter.base_bits + 12), 0, "no bits past the known ones");
        assert_eq!(filter.other_side(other), entry);
    }
}

/// Grows from 1,000 to `n` items, measuring the false-positive rate after every doubling, then
/// removes every item in random order.
fn grow_measure_and_empty(n: u64, tail: Option<u32>) {
    let mut filter = match tail {
        Some(tail) => filter_with(1000, 10, tail),
        None => ExpandingFilter::builder().initial_capacity(1000).max_items(1 << 32).build().unwrap(),
    };
    let target = 0.001;
    let absent = (1u64 << 40)..(1u64 << 40) + 200_000;
    let mut next_check = 2000;
    let key = |i: u64| crate::hash::mix13(i);
    for i in 0..n {
        filter.insert(&key(i)).unwrap();
        if i + 1 == next_check || i + 1 == n {
            next_check *= 2;
            let positives = absent.clone().filter(|&j| filter.contains(&key(j))).count();
            let rate = positives as f64 / (absent.end - absent.start) as f64;
            let stats = filter.stats();
            assert!(
                rate <= stats.rate_bound * 1.2 + 1e-4,
                "{rate} over the bound {} at {}",
                stats.rate_bound,
                i + 1
            );
            if tail.is_none() {
                assert!(stats.rate_bound <= target, "bound {} over the target", stats.rate_bound);
                assert!(rate <= target, "{rate} over the target at {}", i + 1);
                assert!(
                    stats.twins as f64 <= 0.05 * stats.entries as f64,
                    "twins {} of {}",
                    stats.twins,
                    stats.entries
                );
            }
        }
    }
    check_invariants(&filter);
    assert!((0..n).all(|i| filter.contains(&key(i))), "no false negative after growth");
    let mut order: Vec<u64> = (0..n).collect();
    let mut state = 7u64;
    for i in (1..order.len()).rev() {
        state = crate::hash::mix13(state);
        order.swap(i, state as usize % (i + 1));
    }
    let rate_of = |filter: &ExpandingFilter| {
        absent.clone().filter(|&j| filter.contains(&key(j))).count() as f64 / 200_000.0
    };
    for (removed, &i) in order.iter().enumerate() {
        if removed + 1 == order.len() {
            // One item left: the twins of removed items are still there.
            let leftover = rate_of(&filter);
            if tail.is_none() {
                assert!(leftover <= target / 2.0, "leftover rate {leftover} with one item left");
            }
        }
        assert!(filter.remove(&key(i)), "item {i} not removed");
        if removed % 1024 == 0 {
            let probe = order[removed + 1..].iter().step_by(97).take(64);
            assert!(
                probe.copied().all(|j| filter.contains(&key(j))),
                "a live item read absent during removals"
            );
        }
    }
    assert_eq!(filter.len(), 0);
    check_invariants(&filter);
    let stats = filter.stats();
    assert_eq!((stats.entries, stats.twins, stats.rate_bound), (0, 0, 0.0), "the leftover twins are cleared");
    assert_eq!(rate_of(&filter), 0.0);
}

#[test]
fn grown_to_two_million_the_rate_stays_under_target_and_removal_empties_it() {
    grow_measure_and_empty(2_000_000, None);
}

#[test]
fn small_tails_lose_nothing_and_keep_the_bound() {
    grow_measure_and_empty(200_000, Some(4));
}

#[test]
#[ignore = "long: cargo test -p bugu --release -- --ignored grown_to_ten_million"]
fn grown_to_ten_million() {
    grow_measure_and_empty(10_000_000, None);
}

#[test]
fn past_the_declared_maximum_inserts_fail_with_the_rate_bound() {
    let mut filter = ExpandingFilter::builder()
        .initial_capacity(100)
        .max_items(2000)
        .false_positive_rate(0.01)
        .build()
        .unwrap();
    let mut inserted = 0u64;
    let error = loop {
        match filter.insert(&inserted) {
            Ok(()) => inserted += 1,
            Err(error) => break error,
        }
        assert!(inserted < 10_000_000, "never refused");
    };
    assert_eq!(error, InsertError::RateBound);
    assert!(inserted >= 2000, "refused at {inserted}, before the declared maximum");
    assert!(filter.stats().rate_bound <= 0.01);
    assert!((0..inserted).all(|i| filter.contains(&i)));
}

#[test]
fn bad_configurations_are_refused() {
    assert_eq!(ExpandingFilter::new(0).unwrap_err(), ExpandingConfigError::ZeroCapacity);
    assert!(matches!(
        ExpandingFilter::builder().false_positive_rate(0.0).build(),
        Err(ExpandingConfigError::InvalidRate(_))
    ));
    assert!(matches!(
        ExpandingFilter::builder().max_items(10).build(),
        Err(ExpandingConfigError::MaxBelowInitial { .. })
    ));
    assert!(matches!(
        ExpandingFilter::builder().false_positive_rate(1e-9).build(),
        Err(ExpandingConfigError::TooWide { .. })
    ));
}

#[test]
fn widths_for_the_default_target() {
    let stats =
        ExpandingFilter::builder().initial_capacity(1000).max_items(100_000_000).build().unwrap().stats();
    assert_eq!((stats.fingerprint_bits, stats.tail_bits), (9, 8));
}

#[test]
fn batched_lookups_answer_as_one_by_one() {
    // Twins, and buckets on both sides of the split pointer: grown with short tails from two
    // buckets, with some removals.
    let mut filter = filter_with(2, 8, 3);
    for i in 0..30_000u64 {
        filter.insert(&i).unwrap();
        if i % 7 == 0 {
            assert!(filter.remove(&(i / 2)));
        }
    }
    assert!(filter.stats().twins > 0 && filter.split > 0, "the case covers twins mid-round");
    let hashes: Vec<u64> = (0..60_001u64).map(|i| filter.hash_of(&i)).collect();
    let one_by_one: Vec<bool> = hashes.iter().map(|&hash| filter.contains_hash(hash)).collect();
    assert_eq!(filter.contains_hash_batch(&hashes), one_by_one);
    assert!(one_by_one.iter().filter(|&&present| present).count() > 20_000);
    assert_eq!(
        filter.contains_batch(&[7u64, 1 << 40]),
        vec![filter.contains(&7u64), filter.contains(&(1u64 << 40))]
    );
}

/// The bound is the expected number of entries an absent key matches, term by term: an entry
/// knowing `k` address bits past the base bucket's `m` is matched by one side of a random key
/// with probability `2^-(f + m + k)`, the two sides never both, so the expectation is
/// `2 W / (n0 2^f)`. Measured over absent keys, the mean count must be the bound itself, within
/// the sampling error, not merely under it.
#[test]
fn the_bound_is_the_expected_number_of_matches() {
    for (filter, items) in [(filter_with(1000, 7, 4), 300_000u64), (filter_with(100, 6, 9), 100_000)] {
        let mut filter = filter;
        for i in 0..items {
            filter.insert(&i).unwrap();
        }
        let bound = filter.stats().rate_bound;
        let probes = 2_000_000u64;
        let matches: usize = (0..probes).map(|i| filter.count_hash(filter.hash_of(&(i + (1 << 40))))).sum();
        let mean = matches as f64 / probes as f64;
        let sigma = (bound / probes as f64).sqrt();
        assert!(
            (mean - bound).abs() < 5.0 * sigma,
            "mean matches {mean} against the bound {bound} (sigma {sigma})"
        );
    }
}

/// At the start of each level (the split pointer back at 0), `D` doublings after a table of
/// `n0` buckets first filled, the entries inserted at each level weigh `4 x load x n0 2^-t`
/// together, so the bound is `8 x load x (D + 1) x 2^-(f + t)`, the formula the builder sizes
/// widths by
/// (the table starts at exactly `n0` buckets here, so none of the first round is split yet).
#[test]
fn the_bound_after_d_doublings_is_the_formula() {
    // The most items 256 buckets hold at the load.
    let items = (256.0 * SLOTS as f64 * MAX_LOAD) as usize;
    let mut filter = ExpandingFilter::builder().initial_capacity(items).max_items(1 << 30).build().unwrap();
    assert_eq!((filter.base_bits, filter.split), (8, 0), "256 buckets, none split");
    let widths = filter.widths;
    let mut checked = 0;
    let mut level = 0;
    for i in 0..1_000_000u64 {
        filter.insert(&i).unwrap();
        if filter.level != level {
            level = filter.level;
            let expected =
                8.0 * MAX_LOAD * f64::from(level + 1) / 2f64.powi((widths.fingerprint + widths.tail) as i32);
            let bound = filter.stats().rate_bound;
            // Never above it; a little below once the stash has made extra splits, which reach a
            // level with fewer entries.
            assert!(
                (0.99..=1.001).contains(&(bound / expected)),
                "level {level}: bound {bound}, formula {expected}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked} levels checked");
}

/// Every path through the table's unchecked reads and writes, small enough for Miri: growth
/// past several segments with twins and removals, a copy, a file read back, and a view.
#[test]
fn the_table_memory_paths_in_small() {
    // 15-bit entries: 8-byte buckets, the narrowest a view reads in place; twins after 4 doublings.
    let mut filter = filter_with(2, 10, 4);
    for key in 0..1_500u64 {
        filter.insert(&key).unwrap();
    }
    for key in (0..1_500u64).step_by(4) {
        assert!(filter.remove(&key));
    }
    let copy = filter.clone();
    let bytes = filter.to_bytes();
    let loaded = ExpandingFilter::from_bytes(&bytes).unwrap();
    let view = crate::ExpandingView::from_bytes(&bytes).unwrap();
    let keys: Vec<u64> = (0..2_000).collect();
    let answers = filter.contains_batch(&keys);
    for (key, &answer) in keys.iter().zip(&answers) {
        assert_eq!(answer, filter.contains(key));
        assert_eq!((copy.contains(key), loaded.contains(key), view.contains(key)), (answer, answer, answer));
        assert!(answer || key % 4 == 0 || *key >= 1_500, "a live key reads absent");
    }
    assert!(filter.stats().twins > 0);
    drop(filter);
    assert_eq!(copy.to_bytes(), bytes, "the copy owns its table");
}

#[test]
fn heap_blocks_cover_the_pages_in_use_and_each_new_segment() {
    let mut filter = ExpandingFilter::new(1_000).unwrap();
    let mut segments_seen = filter.heap_blocks().count();
    let mut added = 0;
    for key in 0..200_000u64 {
        filter.insert(&key).unwrap();
        if key % 1_000 == 0 {
            let blocks: Vec<usize> = filter.heap_blocks().collect();
            let allocated: usize = blocks.iter().sum();
            assert!(allocated >= filter.memory_bytes(), "{allocated} < {}", filter.memory_bytes());
            // The part being filled is at most an eighth of the table.
            assert!(allocated <= filter.memory_bytes() * 9 / 8 + 64 * 1024, "{allocated} at {key}");
            added += usize::from(blocks.len() > segments_seen);
            segments_seen = blocks.len();
        }
    }
    assert!(added >= 5, "growth from 10^3 to 2 x 10^5 added {added} segments");
}

/// Every width the builder may choose: a bucket's tails word holds all four tail fields, and
/// a table of them keeps its entries through writes to its neighbours, with or without padding.
#[test]
fn every_width_reads_its_tails_inside_one_word() {
    for fingerprint in 1..=super::table::MAX_FINGERPRINT_BITS {
        for tail in 0..=super::table::MAX_TAIL_BITS {
            let widths = Widths { fingerprint, tail };
            let bucket_bytes = widths.bucket_bytes();
            let tails_byte = bucket_bytes.saturating_sub(8);
            let tails_at = 4 * fingerprint as usize;
            assert!(8 * tails_byte <= tails_at, "{widths:?}");
            assert!(tails_at - 8 * tails_byte + 4 * (tail as usize + 1) <= 64, "{widths:?}");
        }
    }
    for (fingerprint, tail) in [(4, 3), (8, 7), (10, 8), (16, 13), (3, 13)] {
        let mut filter = filter_with(40, fingerprint, tail);
        for key in 0..3_000u64 {
            filter.insert(&key).unwrap();
        }
        check_invariants(&filter);
        assert!((0..3_000u64).all(|key| filter.contains(&key)), "({fingerprint}, {tail})");
        for key in (0..3_000u64).step_by(3) {
            assert!(filter.remove(&key));
        }
        assert!((0..3_000u64).filter(|key| key % 3 != 0).all(|key| filter.contains(&key)));
        let loaded = ExpandingFilter::from_bytes(&filter.to_bytes()).unwrap();
        assert!((0..3_000u64).filter(|key| key % 3 != 0).all(|key| loaded.contains(&key)));
    }
}

#[test]
fn a_copy_reports_the_same_heap_blocks() {
    let mut filter = filter_with(8, 10, 4);
    for key in 0..20_000u64 {
        filter.insert(&key).unwrap();
    }
    let copy = filter.clone();
    let loaded = ExpandingFilter::from_bytes(&filter.to_bytes()).unwrap();
    let blocks: Vec<usize> = filter.heap_blocks().collect();
    assert_eq!(copy.heap_blocks().collect::<Vec<_>>(), blocks);
    assert_eq!(loaded.heap_blocks().collect::<Vec<_>>(), blocks);
}

/// A filter of a few items must not carry a large directory inline: what a small Redis key or a
/// Python object costs is mostly this.
#[test]
fn a_small_filter_is_small() {
    let size = std::mem::size_of::<ExpandingFilter>();
    assert!(size <= 1024, "{size} bytes inline");
    let mut filter = ExpandingFilter::new(1_000).unwrap();
    for key in 0..1_000u64 {
        filter.insert(&key).unwrap();
    }
    let allocated: usize = filter.heap_blocks().sum();
    assert!(allocated + size <= 2 * filter.memory_bytes() + 1024, "{allocated} + {size}");
}

#[test]
fn the_constant_time_figures_are_the_stats() {
    let mut filter =
        ExpandingFilter::builder().initial_capacity(100).false_positive_rate(0.002).build().unwrap();
    for key in 0..50_000u64 {
        filter.insert(&key).unwrap();
        if key % 5_000 == 0 {
            let stats = filter.stats();
            assert_eq!(
                (filter.bucket_count(), filter.target_false_positive_rate()),
                (stats.buckets, stats.target_rate)
            );
        }
    }
}

/// A view is the filter over the bytes it borrows: its copy reads the same bytes, its owned copy
/// writes them back as they are, and none of its heap blocks is the table.
#[test]
fn a_view_and_its_copy_read_the_bytes_they_borrow() {
    let mut filter = filter_with(8, 10, 4);
    for key in 0..5_000u64 {
        filter.insert(&key).unwrap();
    }
    let bytes = filter.to_bytes();
    let view = crate::ExpandingView::from_bytes(&bytes).unwrap();
    let copy = view.clone();
    drop(view);
    assert!((0..5_000u64).all(|key| copy.contains(&key)));
    assert_eq!(copy.to_filter().unwrap().to_bytes(), bytes);
    assert_eq!((copy.as_bytes().as_ptr(), copy.memory_bytes()), (bytes.as_ptr(), 0));
    let blocks: usize = copy.heap_blocks().sum();
    assert!(blocks < filter.memory_bytes() / 8, "{blocks} bytes of blocks");
}
