//! Copies and lookalikes in a growable filter: a distinct key is not refused because other
//! items' fingerprints fill its buckets, and one key inserted without end adds at most one level.
//!
//! The statistical tests print what they saw; the longer one is ignored by default:
//!
//! ```sh
//! cargo test --release -p bugu --test growth_copies -- --include-ignored --nocapture
//! ```

use bugu::{Filter, FilterMut, GrowableFilter, InsertError, Tightening};

/// Distinct 64-bit hashes from a counter (splitmix64's finaliser), so that the fills below do not
/// depend on how keys are encoded.
fn mixed(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// `count` hashes that differ from `hash` only in bits 32 to 35: the same fingerprint (taken from
/// the low 32 bits) and, but for a primary bucket boundary within 2^36 of `hash`, the same buckets
/// in every level. To the filter they are distinct items that look exactly like `hash`.
fn lookalikes(hash: u64, count: u64) -> Vec<u64> {
    (1..=count).map(|k| hash ^ (k << 32)).collect()
}

/// Inserts distinct hashes, from the `next`-th on, until the filter holds `len` items, all in
/// its first level; the index of the next unused hash.
fn fill_to(filter: &mut GrowableFilter, len: usize, mut next: u64) -> u64 {
    while filter.len() < len {
        filter.insert_hash(mixed(next)).unwrap();
        next += 1;
    }
    assert_eq!((filter.level_count(), filter.len()), (1, len));
    next
}

/// A first level of 34 items (the smallest levels fill past their capacity the most).
fn builder(rate: f64, tightening: Tightening, bucket_size: usize, seed: u64) -> bugu::GrowableBuilder {
    GrowableFilter::builder()
        .initial_capacity(34)
        .false_positive_rate(rate)
        .tightening(tightening)
        .bucket_size(bucket_size)
        .seed(seed)
}

#[test]
fn a_distinct_key_behind_lookalikes_in_a_full_level_opens_a_level() {
    // An overfull level whose buckets for the 142nd key hold 4 of its lookalikes.
    let mut filter = builder(0.95, bugu::DEFAULT_TIGHTENING, 2, 1108).build().unwrap();
    let keys: Vec<u64> = (0..=141u64).map(|i| (1108 << 32) | i).collect();
    for key in &keys {
        assert_eq!(filter.insert(key), Ok(()), "key {key:#x}");
    }
    assert!(keys.iter().all(|key| filter.contains(key)));
    assert_eq!(filter.len(), keys.len());

    // The same, built by hand: 2b lookalikes of an item in a level at its capacity.
    for bucket_size in bugu::BUCKET_SIZES {
        let mut filter =
            GrowableFilter::builder().initial_capacity(1_000).bucket_size(bucket_size).build().unwrap();
        let item = mixed(u64::MAX - 1);
        let copies = 2 * bucket_size;
        let next = fill_to(&mut filter, 500, 0);
        for hash in lookalikes(item, copies as u64) {
            filter.insert_hash(hash).unwrap();
        }
        fill_to(&mut filter, 1_000, next);
        assert_eq!(filter.count_hash(item), copies);
        assert_eq!(filter.insert_hash(item), Ok(()));
        assert_eq!(filter.level_count(), 2);
    }
}

#[test]
fn below_its_capacity_a_level_full_of_lookalikes_refuses_with_copy_limit() {
    // The one case left: the newest level holds fewer items than its capacity, which the
    // builder's sizing makes as unlikely for distinct keys as a fill failing.
    for bucket_size in bugu::BUCKET_SIZES {
        let mut filter =
            GrowableFilter::builder().initial_capacity(100).bucket_size(bucket_size).build().unwrap();
        let item = mixed(7);
        for hash in lookalikes(item, 2 * bucket_size as u64) {
            filter.insert_hash(hash).unwrap();
        }
        let (len, memory) = (filter.len(), filter.memory_bytes());
        assert_eq!(filter.insert_hash(item), Err(InsertError::CopyLimit { copies: 2 * bucket_size }));
        assert_eq!((filter.len(), filter.memory_bytes(), filter.level_count()), (len, memory, 1));
    }
}

/// The settings of a fill at the widest rates.
#[derive(Debug, Clone, Copy)]
struct Widest {
    tightening: Tightening,
    rate: f64,
    bucket_size: usize,
    eviction_limit: usize,
}

/// Every setting at the widest rates the builder accepts: rates near 1 with the default policy
/// give the first levels 5- to 7-bit fingerprints, and a ratio of 0.01 hands the first levels
/// nearly all the budget, hence 4-bit fingerprints.
fn widest(eviction_limit: usize) -> Vec<Widest> {
    let mut settings = Vec::new();
    for tightening in [bugu::DEFAULT_TIGHTENING, Tightening::Geometric { ratio: 0.01 }] {
        for rate in [0.95, 1.0 - f64::EPSILON] {
            for bucket_size in bugu::BUCKET_SIZES {
                settings.push(Widest { tightening, rate, bucket_size, eviction_limit });
            }
        }
    }
    settings
}

/// Fills of `items` distinct hashes, one per seed; returns the refusals, and checks every stored
/// hash reads present.
fn refusals(at: Widest, seeds: u64, items: u64) -> usize {
    let mut refused = 0;
    for seed in 0..seeds {
        let builder = builder(at.rate, at.tightening, at.bucket_size, seed).eviction_limit(at.eviction_limit);
        let mut filter = builder.build().unwrap();
        let hashes: Vec<u64> = (0..items).map(|i| mixed(seed << 32 | i)).collect();
        for &hash in &hashes {
            match filter.insert_hash(hash) {
                Ok(()) => {}
                Err(InsertError::CopyLimit { .. }) => refused += 1,
                Err(error) => panic!("seed {seed}: {error}"),
            }
        }
        assert!(filter.contains_hash_batch(&hashes).iter().all(|&found| found), "seed {seed}");
    }
    refused
}

/// Runs `short` fills of 142 items and `long` fills of 3,000 at every setting; the refusals.
fn measure(eviction_limit: usize, short: u64, long: u64) -> usize {
    let mut total = 0;
    for at in widest(eviction_limit) {
        let (short_refused, long_refused) = (refusals(at, short, 142), refusals(at, long, 3_000));
        println!(
            "{at:?}: {short_refused} refused in {short} fills of 142, {long_refused} in {long} fills of 3,000"
        );
        total += short_refused + long_refused;
    }
    total
}

#[test]
fn distinct_keys_are_never_refused_at_the_widest_rates() {
    assert_eq!(measure(bugu::DEFAULT_EVICTION_LIMIT, 4_000, 500), 0);
}

/// The figures in the growable docs (several minutes in release mode).
#[test]
#[ignore]
fn distinct_keys_refused_by_eviction_limit() {
    for limit in [bugu::DEFAULT_EVICTION_LIMIT, 20] {
        assert_eq!(measure(limit, 20_000, 2_000), 0, "eviction limit {limit}");
    }
    // Far below the default, levels refuse distinct items below their capacity.
    let refused = measure(1, 20_000, 2_000);
    println!("eviction limit 1: {refused} refused");
}

#[test]
fn one_key_inserted_without_end_adds_at_most_one_level() {
    for bucket_size in bugu::BUCKET_SIZES {
        let copies = 2 * bucket_size;
        // A level below its capacity: 2b copies, then refusals, and nothing grows.
        let mut filter =
            GrowableFilter::builder().initial_capacity(100).bucket_size(bucket_size).build().unwrap();
        let memory = filter.memory_bytes();
        let stored = (0..10_000).filter(|_| filter.insert("same").is_ok()).count();
        assert_eq!((stored, filter.level_count(), filter.memory_bytes()), (copies, 1, memory));
        assert_eq!(filter.insert("same"), Err(InsertError::CopyLimit { copies }));

        // A level at its capacity: the copies open one level, which starts empty, and stop there.
        let mut filter =
            GrowableFilter::builder().initial_capacity(100).bucket_size(bucket_size).build().unwrap();
        fill_to(&mut filter, 100, 0);
        let (len, memory) = (filter.len(), filter.memory_bytes());
        let stored = (0..10_000).filter(|_| filter.insert("same").is_ok()).count();
        assert_eq!(filter.level_count(), 2);
        assert_eq!(filter.memory_bytes(), memory + filter.levels()[1].memory_bytes());
        assert!(stored <= 2 * copies && filter.len() == len + stored, "{stored} copies stored");
        assert_eq!(filter.insert("same"), Err(InsertError::CopyLimit { copies }));
    }
}

#[test]
fn many_keys_inserted_without_end_stop_growing() {
    // Each key holds at most 2b copies per level, and copies open a level only once the newest
    // holds its capacity: growth stops when that capacity passes what the keys' copies fill,
    // linear in the keys. (Growing whenever copies crowded an item's buckets made it quadratic.)
    let keys = 64u64;
    for bucket_size in bugu::BUCKET_SIZES {
        let mut filter =
            GrowableFilter::builder().initial_capacity(16).bucket_size(bucket_size).build().unwrap();
        let mut shape = Vec::new();
        for _round in 0..100 {
            for key in 0..keys {
                let _ = filter.insert(&key);
            }
            shape.push((filter.level_count(), filter.memory_bytes()));
        }
        assert!(shape[40..].iter().all(|&at| at == shape[40]), "still growing: {:?}", &shape[40..50]);
        let newest = filter.levels().last().unwrap().capacity();
        let bound = filter.growth_factor() * 2 * bucket_size * keys as usize;
        assert!(newest <= bound, "newest level of {newest} items, bound {bound}");
        assert!((0..keys).all(|key| filter.contains(&key)));
        println!("{keys} keys in buckets of {bucket_size}, 100 rounds: {:?} (levels, bytes)", shape[99]);
    }
}
