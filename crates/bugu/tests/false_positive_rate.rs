//! The measured false-positive rate against the formula's bound.

use bugu::{CuckooFilter, Filter, FilterMut};

#[test]
fn measured_rate_at_full_load_is_within_the_bound() {
    const ITEMS: u64 = 200_000;
    const ABSENT: u64 = 1_000_000;
    let plain = [8, 12, 16].map(|bits| (bits, false));
    let semi_sorted = [5, 8, 9, 13, 16].map(|bits| (bits, true));
    for (bits, semi_sorted) in plain.into_iter().chain(semi_sorted) {
        let mut filter = CuckooFilter::builder()
            .capacity(ITEMS as usize)
            .fingerprint_bits(bits)
            .semi_sorted(semi_sorted)
            .build()
            .unwrap();
        for key in 0..ITEMS {
            filter.insert(&key).unwrap();
        }
        // Keys from a disjoint range are certainly absent.
        let false_positives = (ITEMS..ITEMS + ABSENT).filter(|key| filter.contains(key)).count();
        let measured = false_positives as f64 / ABSENT as f64;
        let bound = filter.false_positive_rate();
        assert!(
            measured <= 1.25 * bound,
            "f={bits} semi-sorted={semi_sorted}: measured {measured:.6} > 1.25 x bound {bound:.6}"
        );
        // And the filter is not vacuously empty: the expected rate at this load is close.
        let expected = filter.expected_false_positive_rate();
        assert!(
            measured >= 0.75 * expected,
            "f={bits} semi-sorted={semi_sorted}: measured {measured:.6} far below expected {expected:.6}"
        );
    }
}

#[test]
fn string_keys_behave_like_integer_keys() {
    let mut filter = CuckooFilter::builder().capacity(100_000).fingerprint_bits(8).build().unwrap();
    for i in 0..100_000 {
        filter.insert(&format!("user_{i}")).unwrap();
    }
    let false_positives = (0..200_000).filter(|i| filter.contains(&format!("absent_{i}"))).count();
    let measured = false_positives as f64 / 200_000.0;
    assert!(measured <= 1.25 * filter.false_positive_rate(), "{measured}");
}
