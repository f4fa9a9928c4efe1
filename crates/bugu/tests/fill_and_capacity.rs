//! How full a filter gets, and whether a filter built for `n` items takes `n` distinct items.

use bugu::{BUCKET_SIZES, CuckooFilter, FINGERPRINT_BITS, FilterMut};

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
        for bits in [8, 12, 13, 16] {
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

#[test]
fn a_filter_built_for_n_items_accepts_n_distinct_items() {
    let capacities = (1..=40).chain([63, 64, 65, 99, 100, 257, 1_000, 5_000]);
    for capacity in capacities {
        for bucket_size in BUCKET_SIZES {
            for bits in FINGERPRINT_BITS {
                for seed in 0..2 {
                    let mut filter = CuckooFilter::builder()
                        .capacity(capacity)
                        .bucket_size(bucket_size)
                        .fingerprint_bits(bits)
                        .seed(seed)
                        .build()
                        .unwrap();
                    for key in 0..capacity as u64 {
                        if let Err(e) = filter.insert(&key) {
                            panic!(
                                "n={capacity} b={bucket_size} f={bits} seed={seed}: item {key} refused: {e}"
                            );
                        }
                    }
                }
            }
        }
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
