//! Unit tests of the growable filter: the policy's series and budget, the builder's errors, and
//! the filter's inserts, growth and removals (against an exact model, with proptest).

use super::*;
use crate::Persist;
use crate::config::DEFAULT_EVICTION_LIMIT;
use crate::error::{ConfigError, InsertError};
use crate::filter::CuckooFilter;
use crate::hash::{Addressing, HashFunction};
use crate::membership::{Filter, FilterMut};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

/// What identifies an item within one level: its fingerprint and its pair of buckets. Two items
/// with the same signature are indistinguishable in that level.
type Signature = crate::hash::Located;

fn signature(level: &CuckooFilter, hash: u64) -> Signature {
    let (fingerprint, b1, b2) = Addressing::new(level.bucket_count(), level.fingerprint_bits()).locate(hash);
    (fingerprint, b1.min(b2), b1.max(b2))
}

fn lens(filter: &GrowableFilter) -> Vec<usize> {
    filter.levels.iter().map(CuckooFilter::len).collect()
}

/// Everything a failed operation must leave unchanged.
fn snapshot(filter: &GrowableFilter) -> (usize, Vec<Vec<u8>>) {
    (filter.len, filter.levels.iter().map(|level| level.table_bytes().to_vec()).collect())
}

/// Whether every level of `filter` refuses `hash` (tried on copies).
fn levels_refuse(filter: &GrowableFilter, levels: std::ops::Range<usize>, hash: u64) -> bool {
    levels.into_iter().all(|index| filter.levels[index].clone().insert_hash(hash).is_err())
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u16),
    InsertUnique(u16),
    /// Removes the n-th (modulo) key the model holds.
    RemoveLive(usize),
    /// Removes any key, possibly never inserted or already removed (documented to be able to
    /// take another item's fingerprint then: the model follows which).
    Remove(u16),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => any::<u16>().prop_map(Op::Insert),
        2 => any::<u16>().prop_map(Op::InsertUnique),
        3 => any::<usize>().prop_map(Op::RemoveLive),
        1 => any::<u16>().prop_map(Op::Remove),
    ]
}

fn tightening() -> impl Strategy<Value = Tightening> {
    prop_oneof![(0.3f64..0.95).prop_map(|ratio| Tightening::Geometric { ratio }), Just(Tightening::PSeries),]
}

fn builder() -> impl Strategy<Value = GrowableBuilder> {
    (
        (1usize..8, prop::sample::select(crate::BUCKET_SIZES.to_vec())),
        prop::sample::select(vec![0.5, 0.2, 0.05, 0.01, 0.001]),
        (2usize..=4, tightening()),
        (prop::option::of(1usize..6), prop::option::of(0usize..200)),
        any::<u64>(),
    )
        .prop_map(|((initial, b), rate, (growth, policy), (max_levels, extra), seed)| {
            let mut builder = GrowableFilter::builder()
                .initial_capacity(initial)
                .bucket_size(b)
                .false_positive_rate(rate)
                .growth_factor(growth)
                .tightening(policy)
                .eviction_limit(20)
                .seed(seed);
            if let Some(levels) = max_levels {
                builder = builder.max_levels(levels);
            }
            if let Some(extra) = extra {
                builder = builder.max_capacity(initial + extra);
            }
            builder
        })
}

/// The filter's exact content, as multisets of signatures per level, each copy labelled with
/// the key it belongs to; and the keys' inserted-minus-removed counts.
#[derive(Default)]
struct Model {
    levels: Vec<HashMap<Signature, Vec<u16>>>,
    live: HashMap<u16, usize>,
    /// Keys that lost a copy to the removal of a key holding none (documented behaviour).
    victims: HashSet<u16>,
}

impl Model {
    fn copies(&self, filter: &GrowableFilter, hash: u64) -> Vec<usize> {
        self.levels
            .iter()
            .zip(&filter.levels)
            .map(|(level, real)| level.get(&signature(real, hash)).map_or(0, Vec::len))
            .collect()
    }

    fn owns(&self, key: u16) -> bool {
        self.levels.iter().any(|level| level.values().any(|owners| owners.contains(&key)))
    }

    fn stored(&self) -> usize {
        self.levels.iter().flat_map(|level| level.values()).map(Vec::len).sum()
    }
}

/// Checks which level took a successful insert, against the policy, and records it.
fn record_insert(
    before: &GrowableFilter,
    after: &GrowableFilter,
    model: &mut Model,
    key: u16,
    hash: u64,
) -> Result<(), TestCaseError> {
    let (old, new) = (lens(before), lens(after));
    prop_assert!(new.len() == old.len() || new.len() == old.len() + 1);
    let changed: Vec<usize> =
        (0..new.len()).filter(|&i| new[i] != old.get(i).copied().unwrap_or(0)).collect();
    prop_assert_eq!(changed.len(), 1);
    let level = changed[0];
    prop_assert_eq!(new[level], old.get(level).copied().unwrap_or(0) + 1);
    let newest = old.len() - 1;
    if level == old.len() {
        prop_assert!(levels_refuse(before, 0..old.len(), hash), "grew while a level had room");
        prop_assert_eq!(copies_refused(before, hash), None, "grew for copies below capacity");
        model.levels.push(HashMap::new());
    } else if level < newest {
        prop_assert!(levels_refuse(before, level + 1..old.len(), hash), "skipped a newer level");
    }
    let signature = signature(&after.levels[level], hash);
    model.levels[level].entry(signature).or_default().push(key);
    *model.live.entry(key).or_default() += 1;
    Ok(())
}

/// The matches that make an insert every level refuses fail rather than grow: those in the
/// newest level's buckets for it, while that level is below its capacity.
fn copies_refused(filter: &GrowableFilter, hash: u64) -> Option<usize> {
    let newest = filter.levels.last().unwrap();
    let copies = newest.count_hash(hash);
    (copies > 0 && newest.len() < newest.capacity()).then_some(copies)
}

/// Checks that a refused insert was allowed to be refused, and changed nothing.
fn check_refusal(
    before: &GrowableFilter,
    after: &GrowableFilter,
    error: InsertError,
    hash: u64,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(snapshot(before), snapshot(after));
    // At the maximum number of items, refused whatever room the levels have.
    if before.max_capacity() == Some(before.len()) {
        return Ok(());
    }
    prop_assert!(levels_refuse(before, 0..before.levels.len(), hash));
    if let Some(copies) = copies_refused(before, hash) {
        prop_assert_eq!(error, InsertError::CopyLimit { copies });
        return Ok(());
    }
    prop_assert_eq!(error, InsertError::Full);
    let at_maximum = matches!(before.next_level(), Err(InsertError::Full));
    prop_assert!(at_maximum, "refused an insert it could grow for");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn behaves_like_an_exact_model_while_growing(
        builder in builder(),
        universe in 4u16..64,
        ops in proptest::collection::vec(op(), 1..300),
    ) {
        let mut filter = builder.build().unwrap();
        let mut model = Model { levels: vec![HashMap::new()], ..Model::default() };
        let target = filter.target_false_positive_rate();
        for op in ops {
            let before = filter.clone();
            match op {
                Op::Insert(key) => {
                    let key = key % universe;
                    let hash = filter.hash_of(&key);
                    match filter.insert(&key) {
                        Ok(()) => record_insert(&before, &filter, &mut model, key, hash)?,
                        Err(error) => check_refusal(&before, &filter, error, hash)?,
                    }
                }
                Op::InsertUnique(key) => {
                    let key = key % universe;
                    let hash = filter.hash_of(&key);
                    match filter.insert_unique(&key) {
                        Ok(true) => {
                            prop_assert!(!before.contains(&key));
                            record_insert(&before, &filter, &mut model, key, hash)?;
                        }
                        Ok(false) => {
                            prop_assert!(before.contains(&key));
                            prop_assert_eq!(snapshot(&before), snapshot(&filter));
                        }
                        Err(error) => {
                            prop_assert!(!before.contains(&key));
                            check_refusal(&before, &filter, error, hash)?;
                        }
                    }
                }
                Op::RemoveLive(_) | Op::Remove(_) => {
                    let key = match op {
                        Op::Remove(key) => key % universe,
                        Op::RemoveLive(n) => {
                            let mut live: Vec<u16> =
                                model.live.iter().filter(|(_, c)| **c > 0).map(|(k, _)| *k).collect();
                            if live.is_empty() {
                                continue;
                            }
                            live.sort_unstable();
                            live[n % live.len()]
                        }
                        _ => unreachable!(),
                    };
                    let hash = filter.hash_of(&key);
                    // Removed only if exactly one level holds a matching fingerprint.
                    let matching: Vec<usize> = model
                        .copies(&filter, hash)
                        .iter()
                        .enumerate()
                        .filter(|&(_, &c)| c > 0)
                        .map(|(level, _)| level)
                        .collect();
                    let expected = match matching[..] {
                        [] => Removal::NotFound,
                        [level] => Removal::Removed { level },
                        _ => Removal::Ambiguous { levels: matching.len() },
                    };
                    prop_assert_eq!(filter.remove_hash_checked(hash), expected);
                    // The trait's answer agrees, and does the same.
                    let mut by_trait = before.clone();
                    prop_assert_eq!(by_trait.remove(&key), expected.is_removed());
                    prop_assert_eq!(snapshot(&by_trait), snapshot(&filter));
                    if let Removal::Removed { level } = expected {
                        let (old, new) = (lens(&before), lens(&filter));
                        prop_assert_eq!(new[level] + 1, old[level]);
                        let owns = model.owns(key);
                        let signature = signature(&filter.levels[level], hash);
                        let owners = model.levels[level].get_mut(&signature).unwrap();
                        match owners.iter().position(|&owner| owner == key) {
                            Some(at) => { owners.swap_remove(at); }
                            None => {
                                // Every copy of a key matches it, and only this level
                                // matched: so the key holds no copy at all. It was never
                                // inserted, or removed already, or lost its copy to such a
                                // removal before (the documented misuse and its sequel).
                                prop_assert!(!owns, "took another's copy from a key with its own");
                                prop_assert!(matches!(op, Op::Remove(_)) || model.victims.contains(&key));
                                model.victims.insert(owners.pop().unwrap());
                            }
                        }
                        if owners.is_empty() {
                            model.levels[level].remove(&signature);
                        }
                        if let Some(count) = model.live.get_mut(&key).filter(|c| **c > 0) {
                            *count -= 1;
                        }
                    } else {
                        prop_assert_eq!(snapshot(&before), snapshot(&filter));
                    }
                }
            }
            // The filter is exactly the model: same levels, same fingerprints.
            prop_assert_eq!(filter.level_count(), model.levels.len());
            prop_assert_eq!(filter.len(), model.stored());
            prop_assert!(filter.max_capacity().is_none_or(|max| filter.len() <= max));
            prop_assert_eq!(filter.levels.iter().map(CuckooFilter::len).sum::<usize>(), filter.len());
            prop_assert!(filter.false_positive_rate() < target);
            let hashes: Vec<u64> = (0..universe).map(|key| filter.hash_of(&key)).collect();
            let batch = filter.contains_hash_batch(&hashes);
            for key in 0..universe {
                let hash = hashes[key as usize];
                let copies = model.copies(&filter, hash);
                prop_assert_eq!(filter.contains(&key), copies.iter().any(|&c| c > 0), "key {}", key);
                prop_assert_eq!(batch[key as usize], filter.contains(&key));
                prop_assert_eq!(filter.count(&key), copies.iter().sum::<usize>());
                // Never a false negative for a key inserted more often than removed, whatever
                // the order of removals: only removing a key that holds no copy can take
                // another key's copy.
                let live = model.live.get(&key).is_some_and(|&c| c > 0);
                if live && !model.victims.contains(&key) {
                    prop_assert!(model.owns(key), "{} lost its copies", key);
                }
                if model.owns(key) {
                    prop_assert!(filter.contains(&key), "false negative for {}", key);
                }
            }
        }
        prop_assert_eq!(filter.stats().iter().map(|s| s.items).sum::<usize>(), filter.len());
    }
}

/// Walks the plan of levels (without allocating them) until the series is exhausted.
fn plan(growth: &Growth, initial: usize, levels: usize) -> Vec<(u32, f64, f64)> {
    let (mut used, mut capacity, mut plan) = (0.0, initial, Vec::new());
    for index in 0..levels {
        let builder = growth.level_builder(index, capacity, used);
        let share = growth.tightening.fraction(index) * (growth.target - used);
        let Ok(config) = builder.config() else { break };
        let rate = crate::sizing::false_positive_bound(config.fingerprint_bits, config.bucket_size, 1.0);
        assert!(rate <= share, "level {index}: rate {rate} above its share {share}");
        used += rate;
        plan.push((config.fingerprint_bits, rate, used));
        capacity = capacity.saturating_mul(growth.growth_factor).min(1 << 40);
    }
    plan
}

fn growth(target: f64, tightening: Tightening, bucket_size: usize) -> Growth {
    Growth {
        target,
        growth_factor: 2,
        tightening,
        max_capacity: None,
        max_levels: None,
        bucket_size,
        eviction_limit: DEFAULT_EVICTION_LIMIT,
        seed: 0,
        hash_function: HashFunction::default(),
    }
}

#[test]
fn the_rate_budget_is_never_exceeded_however_long_the_chain() {
    let policies = [
        Tightening::Geometric { ratio: 0.5 },
        Tightening::Geometric { ratio: 0.85 },
        Tightening::Geometric { ratio: 0.99 },
        Tightening::PSeries,
    ];
    for target in [0.9, 0.5, 0.1, 0.01, 1e-3, 1e-5, 1e-7] {
        for bucket_size in crate::BUCKET_SIZES {
            for policy in policies {
                let plan = plan(&growth(target, policy, bucket_size), 1000, 300);
                for &(bits, _, used) in &plan {
                    assert!(used < target, "{target} {policy:?} b={bucket_size}: {used}");
                    assert!(crate::FINGERPRINT_BITS.contains(&bits));
                }
                // Widths never shrink: later levels get narrower shares.
                assert!(plan.windows(2).all(|w| w[0].0 <= w[1].0), "{policy:?}: {plan:?}");
            }
        }
    }
}

#[test]
fn the_series_compare_as_documented() {
    // Fingerprint widths of 14 levels at p = 0.001, b = 4: the module docs' figures.
    let widths = |policy| -> Vec<u32> {
        plan(&growth(0.001, policy, 4), 1000, 14).iter().map(|level| level.0).collect()
    };
    let halving = widths(Tightening::Geometric { ratio: 0.5 });
    let p_series = widths(Tightening::PSeries);
    let default = widths(DEFAULT_TIGHTENING);
    assert_eq!(halving, [14, 15, 16, 17, 18, 19, 19, 20, 20, 21, 22, 23, 24, 24]);
    assert_eq!(p_series, [14, 16, 17, 17, 18, 18, 19, 19, 19, 19, 20, 20, 20, 20]);
    assert_eq!(default, [16, 16, 17, 17, 17, 17, 17, 17, 18, 18, 18, 18, 18, 18]);
    // Halving runs out of 32-bit fingerprints after 26 levels; the default goes on.
    assert_eq!(plan(&growth(0.001, Tightening::Geometric { ratio: 0.5 }, 4), 1000, 100).len(), 26);
    assert!(plan(&growth(0.001, DEFAULT_TIGHTENING, 4), 1000, 100).len() > 60);
}

#[test]
fn p_series_fractions_reproduce_the_series() {
    // With shares used exactly, level i gets 6p / (pi^2 (i+1)^2).
    let (mut left, p) = (1.0, 1.0);
    for index in 0..50 {
        let share = Tightening::PSeries.fraction(index) * left;
        let n = index as f64 + 1.0;
        let expected = 6.0 * p / (std::f64::consts::PI.powi(2) * n * n);
        assert!((share / expected - 1.0).abs() < 1e-9, "level {index}: {share} vs {expected}");
        left -= share;
    }
    let geometric = Tightening::Geometric { ratio: 0.5 };
    assert_eq!(geometric.fraction(0), 0.5);
    assert_eq!(geometric.fraction(40), 0.5);
}

#[test]
fn bad_settings_are_typed_errors() {
    let err = |builder: GrowableBuilder| builder.build().unwrap_err();
    assert_eq!(
        err(GrowableFilter::builder().growth_factor(17)),
        GrowableConfigError::InvalidGrowthFactor(17)
    );
    for ratio in [0.0, 1.0, -0.5, f64::NAN] {
        let e = err(GrowableFilter::builder().tightening(Tightening::Geometric { ratio }));
        assert!(matches!(e, GrowableConfigError::InvalidTighteningRatio(_)), "{e}");
    }
    assert_eq!(err(GrowableFilter::builder().max_levels(0)), GrowableConfigError::ZeroMaxLevels);
    assert_eq!(
        err(GrowableFilter::builder().initial_capacity(100).max_capacity(99)),
        GrowableConfigError::MaxCapacityBelowInitial { max: 99, initial: 100 }
    );
    assert_eq!(
        err(GrowableFilter::builder().initial_capacity(0)),
        GrowableConfigError::Level(ConfigError::ZeroCapacity)
    );
    assert!(matches!(
        err(GrowableFilter::builder().false_positive_rate(1.0)),
        GrowableConfigError::Level(ConfigError::InvalidFalsePositiveRate(_))
    ));
    assert!(matches!(
        err(GrowableFilter::builder().false_positive_rate(1e-11)),
        GrowableConfigError::Level(ConfigError::FalsePositiveRateTooSmall { .. })
    ));
    assert!(matches!(
        err(GrowableFilter::builder().bucket_size(3)),
        GrowableConfigError::Level(ConfigError::InvalidBucketSize(3))
    ));
}

fn fill_until_levels(filter: &mut GrowableFilter, levels: usize, start: u64) -> u64 {
    let mut key = start;
    while filter.level_count() < levels {
        filter.insert(&key).unwrap();
        key += 1;
    }
    key
}

/// Inserts `key`, `key + 1`, ... until one is refused: the error and the filter as it was before
/// that insert (`key` is left at the refused key).
fn insert_until_refused(filter: &mut GrowableFilter, key: &mut u64) -> (InsertError, (usize, Vec<Vec<u8>>)) {
    loop {
        let before = snapshot(filter);
        match filter.insert(&*key) {
            Ok(()) => *key += 1,
            Err(error) => return (error, before),
        }
    }
}

#[test]
fn the_maximum_refuses_inserts_without_change() {
    let mut filter = GrowableFilter::builder().initial_capacity(50).max_levels(2).build().unwrap();
    let mut key = fill_until_levels(&mut filter, 2, 0);
    let refused = insert_until_refused(&mut filter, &mut key);
    assert_eq!(refused.0, InsertError::Full);
    assert_eq!(refused.1, snapshot(&filter));
    assert_eq!(filter.level_count(), 2);
    assert!(filter.len() >= 150, "{}", filter.len());
    assert!((0..key).all(|k| filter.contains(&k)));

    // A maximum capacity cuts the last level to fit, and bounds the items held: the first
    // level alone holds more than its capacity of 100, yet exactly 250 items go in.
    let mut filter = GrowableFilter::builder().initial_capacity(100).max_capacity(250).build().unwrap();
    let mut key = 0u64;
    let (error, before) = insert_until_refused(&mut filter, &mut key);
    assert_eq!((error, before), (InsertError::Full, snapshot(&filter)));
    assert_eq!(filter.capacity(), 250);
    assert_eq!(filter.levels()[1].capacity(), 150);
    assert_eq!((filter.len(), key), (250, 250));
    assert!(filter.levels()[0].len() > 100, "{}", filter.levels()[0].len());
    // A filter holding more than the maximum cannot start a growable one.
    let mut core = CuckooFilter::new(100).unwrap();
    let mut key = 0u64;
    while core.len() <= 100 {
        core.insert(&key).unwrap();
        key += 1;
    }
    assert_eq!(
        GrowableFilter::builder().max_capacity(100).build_from(core.clone()).unwrap_err(),
        GrowableConfigError::MaxCapacityBelowLen { max: 100, len: 101 }
    );
    assert!(GrowableFilter::builder().max_capacity(101).build_from(core).is_ok());
}

#[test]
fn an_exhausted_series_stops_growing() {
    // Halving from 1e-7 with 8 slots: 32-bit fingerprints are reached after a few levels.
    let mut filter = GrowableFilter::builder()
        .initial_capacity(4)
        .bucket_size(8)
        .false_positive_rate(1e-7)
        .tightening(Tightening::Geometric { ratio: 0.5 })
        .build()
        .unwrap();
    let mut key = 0u64;
    let error = loop {
        match filter.insert(&key) {
            Ok(()) => key += 1,
            Err(error) => break error,
        }
    };
    assert_eq!(error, InsertError::Full);
    assert_eq!(filter.levels().last().unwrap().fingerprint_bits(), 32);
    assert!(matches!(filter.next_level_builder().map(|b| b.config()), Ok(Err(_))));
    assert!(filter.false_positive_rate() < 1e-7);
    assert!((0..key).all(|k| filter.contains(&k)));
}

#[test]
fn an_allocation_failure_is_typed_and_changes_nothing() {
    let mut filter = GrowableFilter::new(100).unwrap();
    // A next level of about 2^62 bytes: no machine can map it.
    filter.growth.growth_factor = 1 << 50;
    let mut key = 0u64;
    let (error, before) = insert_until_refused(&mut filter, &mut key);
    assert!(matches!(error, InsertError::OutOfMemory { bytes } if bytes > 1 << 50), "{error:?}");
    assert_eq!(before, snapshot(&filter));
    assert_eq!(filter.level_count(), 1);
    // Capacities beyond the address space are out of memory too.
    filter.growth.growth_factor = usize::MAX / 2;
    assert_eq!(filter.insert(&key), Err(InsertError::OutOfMemory { bytes: usize::MAX }));
}

#[test]
fn copies_of_one_item_do_not_grow_the_filter() {
    let mut filter = GrowableFilter::builder().initial_capacity(100).bucket_size(2).build().unwrap();
    for _ in 0..4 {
        filter.insert("same").unwrap();
    }
    let before = snapshot(&filter);
    assert_eq!(filter.insert("same"), Err(InsertError::CopyLimit { copies: 4 }));
    assert_eq!(before, snapshot(&filter));
    assert_eq!((filter.level_count(), filter.count("same")), (1, 4));
    // Once the filter has grown for other items, the new level takes more copies.
    fill_until_levels(&mut filter, 2, 0);
    for _ in 0..4 {
        filter.insert("same").unwrap();
    }
    assert_eq!(filter.insert("same"), Err(InsertError::CopyLimit { copies: 4 }));
    assert_eq!((filter.level_count(), filter.count("same")), (2, 8));
    // Copies in two levels cannot be told from a lookalike in the other level: they stay.
    let before = snapshot(&filter);
    assert_eq!(filter.remove_checked("same"), Removal::Ambiguous { levels: 2 });
    assert!(!filter.remove("same"));
    assert_eq!(before, snapshot(&filter));
}

#[test]
fn inserts_reuse_room_in_older_levels_before_growing() {
    let mut filter = GrowableFilter::new(100).unwrap();
    let next = fill_until_levels(&mut filter, 2, 0);
    // Fill the second level, then free room in the first.
    let mut key = next;
    while filter.levels[1].clone().insert(&key).is_ok() {
        filter.insert(&key).unwrap();
        key += 1;
    }
    for k in 0..50u64 {
        assert!(filter.remove(&k));
    }
    let level_0 = filter.levels[0].len();
    filter.insert(&key).unwrap();
    assert_eq!(filter.level_count(), 2);
    assert_eq!(filter.levels[0].len(), level_0 + 1);
}

#[test]
fn remove_takes_a_copy_only_when_one_level_matches() {
    let mut filter = GrowableFilter::new(100).unwrap();
    filter.insert("old").unwrap();
    filter.insert("twice").unwrap();
    let next = fill_until_levels(&mut filter, 2, 0);
    filter.insert("new").unwrap();
    filter.insert("twice").unwrap();
    let before = lens(&filter);
    assert_eq!(filter.remove_checked("old"), Removal::Removed { level: 0 });
    assert_eq!(lens(&filter), [before[0] - 1, before[1]]);
    assert_eq!(filter.remove_checked("new"), Removal::Removed { level: 1 });
    assert_eq!(lens(&filter), [before[0] - 1, before[1] - 1]);
    assert_eq!(filter.remove_checked("new"), Removal::NotFound);
    // A copy in each level: either could be another item's lookalike, so neither goes.
    let (len, kept) = (filter.len(), snapshot(&filter));
    assert_eq!(filter.remove_checked("twice"), Removal::Ambiguous { levels: 2 });
    assert!(!filter.remove("twice"));
    assert_eq!((filter.len(), snapshot(&filter)), (len, kept));
    assert_eq!(filter.count("twice"), 2);
    assert!((0..next).all(|key| filter.contains(&key)));
    // Pre-hashed and byte entry points follow the same rule.
    filter.insert_bytes(b"bytes").unwrap();
    assert!(filter.remove_bytes(b"bytes"));
    assert_eq!(filter.remove_hash_checked(filter.hash_of_bytes(b"bytes")), Removal::NotFound);
}

/// A small growable filter of narrow fingerprints in buckets of 2: lookalikes are easy to find.
fn narrow_growable() -> GrowableFilter {
    GrowableFilter::builder().initial_capacity(8).bucket_size(2).false_positive_rate(0.5).build().unwrap()
}

#[test]
fn a_lookalike_in_another_level_makes_the_removal_ambiguous() {
    let mut filter = narrow_growable();
    let next = fill_until_levels(&mut filter, 2, 0);
    let (old, new) = (&filter.levels[0], &filter.levels[1]);
    // x: an item of level 0; y: indistinguishable from x in level 1, absent from level 0. Not
    // every x has such a y (where level 1's bucket pair of x falls relative to level 0's
    // buckets decides it), so try the items of level 0 in turn.
    let (x, y) = (0..next)
        .filter(|x| {
            let hx = filter.hash_of(x);
            old.count_hash(hx) == 1 && new.count_hash(hx) == 0
        })
        .find_map(|x| {
            let hx = filter.hash_of(&x);
            let lookalike = |y: &u64| {
                let hy = filter.hash_of(y);
                signature(new, hy) == signature(new, hx) && !old.contains_hash(hy)
            };
            (next..next + 1_000_000).find(lookalike).map(|y| (x, y))
        })
        .expect("some item of level 0 has a lookalike in level 1");
    filter.insert(&y).unwrap();
    let hx = filter.hash_of(&x);
    assert_eq!(filter.levels[1].count_hash(hx), 1);
    // Under the old rule (newest match first) this removal took y's only copy.
    let (len, before) = (filter.len(), snapshot(&filter));
    assert_eq!(filter.remove_checked(&x), Removal::Ambiguous { levels: 2 });
    assert_eq!((filter.len(), snapshot(&filter)), (len, before));
    assert!(filter.contains(&x) && filter.contains(&y));
    // y matches only in its own level: its removal is safe, and then x's is no longer
    // ambiguous.
    assert_eq!(filter.remove_checked(&y), Removal::Removed { level: 1 });
    assert!(filter.contains(&x));
    assert_eq!(filter.remove_checked(&x), Removal::Removed { level: 0 });
    assert_eq!(filter.len(), len - 2);
    assert!((0..next).filter(|&key| key != x).all(|key| filter.contains(&key)));
}

#[test]
fn removing_a_never_inserted_lookalike_takes_a_copy_as_documented() {
    // As in a single filter: the one matching level's copy is taken, whoever it belonged to.
    let mut filter = narrow_growable();
    let x = 0u64;
    filter.insert(&x).unwrap();
    let level = &filter.levels[0];
    let hx = filter.hash_of(&x);
    let stranger = (1u64..).find(|k| signature(level, filter.hash_of(k)) == signature(level, hx)).unwrap();
    assert_eq!(filter.remove_checked(&stranger), Removal::Removed { level: 0 });
    assert!(!filter.contains(&x));
    assert!(filter.is_empty());
}

#[test]
fn starting_from_a_filter_continues_its_series() {
    let mut core = CuckooFilter::builder().capacity(200).fingerprint_bits(14).build().unwrap();
    for i in 0..200u32 {
        core.insert(&i).unwrap();
    }
    let bound = core.false_positive_rate();
    // Above the target: refused.
    let refused = GrowableFilter::builder().false_positive_rate(bound).build_from(core.clone());
    assert_eq!(refused.unwrap_err(), GrowableConfigError::FilterAboveTarget { bound, target: bound });
    // Above its default share, below the target: the later levels share what is left.
    let target = bound * 1.5;
    let mut filter = GrowableFilter::builder().false_positive_rate(target).build_from(core.clone()).unwrap();
    assert_eq!((filter.len(), filter.capacity(), filter.level_count()), (200, 200, 1));
    for i in 200..20_000u32 {
        filter.insert(&i).unwrap();
    }
    assert!(filter.level_count() > 4);
    assert!((0..20_000u32).all(|i| filter.contains(&i)));
    assert!(filter.false_positive_rate() < target);
    assert_eq!(filter.levels()[1].capacity(), 400);
    // No target: the filter is the series' first level.
    let derived = GrowableFilter::from_filter(core).unwrap();
    let expected = bound / DEFAULT_TIGHTENING.fraction(0);
    assert!((derived.target_false_positive_rate() / expected - 1.0).abs() < 1e-12);
    assert_eq!(derived.seed(), 0);
    let seeded = CuckooFilter::builder().capacity(10).seed(9).bucket_size(8).build().unwrap();
    let grown = GrowableFilter::builder().seed(1).bucket_size(2).build_from(seeded).unwrap();
    assert_eq!((grown.seed(), grown.bucket_size()), (9, 8));
}

#[test]
fn clear_returns_to_the_first_level_and_regrows_identically() {
    let mut filter = GrowableFilter::new(64).unwrap();
    fill_until_levels(&mut filter, 4, 0);
    let shapes = |f: &GrowableFilter| -> Vec<(usize, u32)> {
        f.levels().iter().map(|l| (l.capacity(), l.fingerprint_bits())).collect()
    };
    let grown = shapes(&filter);
    filter.clear();
    assert_eq!((filter.len(), filter.level_count()), (0, 1));
    fill_until_levels(&mut filter, 4, 0);
    assert_eq!(shapes(&filter), grown);
}

#[test]
fn debug_clone_send_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<GrowableFilter>();
    let mut a = GrowableFilter::new(10).unwrap();
    fill_until_levels(&mut a, 3, 0);
    let mut b = a.clone();
    b.insert("only in b").unwrap();
    assert_eq!(b.len(), a.len() + 1);
    assert!(!a.contains("only in b") || a.count("only in b") < b.count("only in b"));
    let debug = format!("{a:?}");
    assert!(debug.starts_with("GrowableFilter { len: "), "{debug}");
    assert!(debug.contains("levels: 3"), "{debug}");
    assert!(debug.len() < 300);
}

#[test]
fn growth_stops_at_the_most_levels_the_format_reads() {
    // Only bytes built by hand reach 64 levels: here 64 tiny full levels of a loose target. An
    // insert that all refuse must fail instead of adding a 65th level, which the reader would
    // refuse, so that whatever is written reads back.
    let growth = *GrowableFilter::builder().false_positive_rate(0.5).build().unwrap().growth();
    let level = |seed: u64| {
        let mut level =
            CuckooFilter::builder().capacity(1).fingerprint_bits(16).seed(growth.seed).build().unwrap();
        let mut key = seed << 32;
        while level.insert(&key).is_ok() {
            key += 1;
        }
        level
    };
    let mut filter = GrowableFilter::from_parts((0..MAX_LEVELS as u64).map(level).collect(), growth);
    assert!(filter.false_positive_rate() < 0.5);
    let (len, before) = (filter.len(), snapshot(&filter));
    assert_eq!(filter.insert(&u64::MAX), Err(InsertError::Full));
    assert_eq!((filter.len(), snapshot(&filter)), (len, before));
    let copy = GrowableFilter::from_bytes(&filter.to_bytes()).unwrap();
    assert_eq!(copy.level_count(), MAX_LEVELS);
}
