//! How full a filter gets, and whether a filter built for `n` items takes `n` distinct items.

use bugu::sizing::capacity_limit;
use bugu::{BUCKET_SIZES, ConfigError, CuckooFilter, FINGERPRINT_BITS, FilterMut};

/// Inserts distinct keys until the first failure; returns the load reached.
fn load_at_first_failure(bucket_size: usize, bits: u32, semi_sorted: bool, seed: u64) -> f64 {
    let mut filter = CuckooFilter::builder()
        .capacity(100_000)
        .bucket_size(bucket_size)
        .fingerprint_bits(bits)
        .semi_sorted(semi_sorted)
        .seed(seed)
        .build()
        .unwrap();
    let mut key = 0u64;
    while filter.insert(&key).is_ok() {
        key += 1;
    }
    filter.load_factor()
}

#[test]
fn fill_before_the_first_failure_reaches_the_published_loads() {
    // Fan et al. 2014 report about 84%, 95% and 98% for 2, 4 and 8 slots per bucket.
    for (bucket_size, semi_sorted, floor) in
        [(2, false, 0.84), (4, false, 0.95), (8, false, 0.98), (4, true, 0.95)]
    {
        // 8-bit fingerprints in buckets of 2 hold only a few thousand items reliably: 10 bits.
        for bits in [10, 12, 13, 16] {
            let seeds = 0..4u64;
            let loads: Vec<f64> =
                seeds.map(|seed| load_at_first_failure(bucket_size, bits, semi_sorted, seed)).collect();
            let mean = loads.iter().sum::<f64>() / loads.len() as f64;
            assert!(
                mean >= floor,
                "b={bucket_size} semi-sorted={semi_sorted} f={bits}: mean load {mean:.4} < {floor} ({loads:?})"
            );
        }
    }
}

/// Builds a filter for `capacity` items, or, if the builder refuses the width as too narrow for
/// that many items, with the width it suggests (checking that the refusal is the typed one).
fn build_or_widen(capacity: usize, bucket_size: usize, bits: u32, seed: u64) -> CuckooFilter {
    let builder = CuckooFilter::builder().capacity(capacity).bucket_size(bucket_size).seed(seed);
    match builder.clone().fingerprint_bits(bits).build() {
        Ok(filter) => filter,
        Err(ConfigError::TooNarrow { wider_bits: Some(wider), limit, .. }) => {
            assert!(
                limit < capacity,
                "b={bucket_size} f={bits}: refused {capacity} items below its limit {limit}"
            );
            assert!(wider > bits);
            assert_eq!(capacity_limit(bucket_size, bits), limit);
            builder.fingerprint_bits(wider).build().unwrap()
        }
        Err(error) => panic!("b={bucket_size} f={bits} n={capacity}: {error}"),
    }
}

/// Inserts keys `seed * 2^40 + 0..capacity`; panics naming the configuration if one is refused.
fn fill_to_capacity(filter: &mut CuckooFilter, capacity: usize, seed: u64) {
    for key in (seed << 40)..(seed << 40) + capacity as u64 {
        if let Err(e) = filter.insert(&key) {
            panic!(
                "n={capacity} b={} f={} seed={seed}: item {} refused at load {:.4}: {e}",
                filter.bucket_size(),
                filter.fingerprint_bits(),
                key - (seed << 40),
                filter.load_factor()
            );
        }
    }
}

#[test]
fn a_filter_built_for_n_items_accepts_n_distinct_items() {
    let capacities = (1..=40).chain([63, 64, 65, 99, 100, 257, 1_000, 5_000, 5_930, 6_803, 7_482, 13_593]);
    for capacity in capacities {
        for bucket_size in BUCKET_SIZES {
            for bits in FINGERPRINT_BITS {
                for seed in [0, 1, 0xdead_beef] {
                    let mut filter = build_or_widen(capacity, bucket_size, bits, seed);
                    fill_to_capacity(&mut filter, capacity, seed);
                }
            }
        }
    }
}

/// Every width with every bucket size at `capacity` items over `seeds`: each accepted (or
/// widened) configuration takes all its items.
fn every_width_fills(bucket_size: usize, capacity: usize, seeds: std::ops::Range<u64>) {
    for bits in FINGERPRINT_BITS {
        for seed in seeds.clone() {
            let mut filter = build_or_widen(capacity, bucket_size, bits, seed);
            fill_to_capacity(&mut filter, capacity, seed);
        }
    }
}

#[test]
fn every_width_in_buckets_of_2_fills_a_million() {
    every_width_fills(2, 1_000_000, 0..3);
}

#[test]
fn every_width_in_buckets_of_4_fills_a_million() {
    every_width_fills(4, 1_000_000, 0..3);
}

#[test]
fn every_width_in_buckets_of_8_fills_a_million() {
    every_width_fills(8, 1_000_000, 0..3);
}

#[test]
#[ignore = "10^7 items x 29 widths x 3 bucket sizes x 3 seeds, about 15 minutes: \
            cargo test --release -p bugu --test fill_and_capacity -- --ignored"]
fn every_width_fills_ten_million() {
    for bucket_size in BUCKET_SIZES {
        every_width_fills(bucket_size, 10_000_000, 0..3);
    }
}

#[test]
#[ignore = "10^8 items in the default configuration, 2 seeds, a few minutes and 160 MiB each: \
            cargo test --release -p bugu --test fill_and_capacity -- --ignored"]
fn the_default_configuration_fills_a_hundred_million() {
    for seed in 0..2 {
        let mut filter = CuckooFilter::builder().capacity(100_000_000).seed(seed).build().unwrap();
        fill_to_capacity(&mut filter, 100_000_000, seed);
    }
}

#[test]
fn narrow_configurations_fill_up_to_their_limit() {
    // At the largest capacity each accepts, where the chance of a failed fill is highest.
    for (bucket_size, bits, seeds) in
        [(2, 8, 0..40), (2, 9, 0..4), (4, 4, 0..40), (4, 5, 0..3), (2, 4, 0..200)]
    {
        let limit = capacity_limit(bucket_size, bits);
        assert!(limit >= 30, "b={bucket_size} f={bits}: limit {limit}");
        for seed in seeds {
            let mut filter = CuckooFilter::builder()
                .capacity(limit)
                .bucket_size(bucket_size)
                .fingerprint_bits(bits)
                .seed(seed)
                .build()
                .unwrap();
            fill_to_capacity(&mut filter, limit, seed);
        }
        let refused = CuckooFilter::builder()
            .capacity(limit + 1)
            .bucket_size(bucket_size)
            .fingerprint_bits(bits)
            .build();
        assert!(
            matches!(refused, Err(ConfigError::TooNarrow { .. })),
            "b={bucket_size} f={bits}: {refused:?}"
        );
    }
}

#[test]
fn the_reported_narrow_fills_are_refused_with_a_width_that_fills() {
    // 4-bit fingerprints in buckets of 2 lost item 659,467 of a million; the builder now refuses
    // the configuration and names the width and bucket size that hold a million.
    let err =
        CuckooFilter::builder().capacity(1_000_000).fingerprint_bits(4).bucket_size(2).build().unwrap_err();
    assert_eq!(
        err,
        ConfigError::TooNarrow {
            capacity: 1_000_000,
            fingerprint_bits: 4,
            bucket_size: 2,
            limit: capacity_limit(2, 4),
            wider_bits: Some(11),
            larger_bucket_size: Some(8),
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "4-bit fingerprints in buckets of 2 slots cannot reliably hold 1000000 items (at most {}); \
             use fingerprint_bits(11) or bucket_size(8)",
            capacity_limit(2, 4)
        )
    );
    let err =
        CuckooFilter::builder().capacity(1_000_000).fingerprint_bits(5).bucket_size(4).build().unwrap_err();
    assert!(err.to_string().ends_with("use fingerprint_bits(6) or bucket_size(8)"), "{err}");
    // A rate picks a width wide enough for the capacity: 0.1 in buckets of 2 asked for 6 bits.
    let small =
        CuckooFilter::builder().capacity(1_000).false_positive_rate(0.1).bucket_size(2).build().unwrap();
    let large =
        CuckooFilter::builder().capacity(1_000_000).false_positive_rate(0.1).bucket_size(2).build().unwrap();
    assert!(small.fingerprint_bits() < large.fingerprint_bits());
    assert_eq!(large.fingerprint_bits(), 11);
    for seed in 0..3 {
        let mut filter = CuckooFilter::builder()
            .capacity(1_000_000)
            .false_positive_rate(0.1)
            .bucket_size(2)
            .seed(seed)
            .build()
            .unwrap();
        fill_to_capacity(&mut filter, 1_000_000, seed);
    }
}

#[test]
fn large_filters_hold_their_capacity_at_the_advertised_size() {
    // 12-bit fingerprints in buckets of 4 must cost at most 12.8 bits per item at capacity.
    let mut filter = CuckooFilter::builder().capacity(1_000_000).fingerprint_bits(12).build().unwrap();
    for key in 0..1_000_000u64 {
        filter.insert(&key).unwrap();
    }
    assert!(filter.bits_per_item() <= 12.8, "{} bits per item", filter.bits_per_item());
    // Semi-sorted: 13-bit fingerprints in the same space.
    let mut filter =
        CuckooFilter::builder().capacity(1_000_000).fingerprint_bits(13).semi_sorted(true).build().unwrap();
    for key in 0..1_000_000u64 {
        filter.insert(&key).unwrap();
    }
    assert!(filter.bits_per_item() <= 12.8, "semi-sorted: {} bits per item", filter.bits_per_item());
}
