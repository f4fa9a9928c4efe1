//! Sizing: how many buckets a capacity needs, and whether a configuration can keep the promise
//! that a filter built for `n` items accepts `n` distinct items.
//!
//! Two things can stop a fill before `n` items, and the sizing answers each (the calculation and
//! the measurements behind it are in `docs/sizing.md`):
//!
//! - **The table is too full for the path search.** Cuckoo tables accept items up to a load that
//!   depends on the bucket size (and, for narrow fingerprints, on the width), then fail quickly.
//!   The table is sized for a load a little below the lowest load at which we measured a first
//!   failure (82%, 95% and 97% for buckets of 2, 4 and 8 slots with fingerprints of 8 bits or
//!   more), plus `2 sqrt(m)` buckets of slack for `m` buckets, because small tables scatter more
//!   around the typical fill.
//! - **Too many items share one pair of buckets.** The alternate bucket depends on the fingerprint
//!   alone, so all items with the same fingerprint and the same bucket pair compete for the same
//!   `2b` slots; a `(2b+1)`-th such item can never be stored, whatever the search does. With `f`-bit
//!   fingerprints there are only about `(2^f - 1) m / 2` such pairs, so the chance that one of
//!   them overflows grows with the number of items and falls steeply with `f` and `b`. The
//!   builder estimates the expected number of overflowing groups (pairs, and stars of three
//!   buckets, doubled for larger groups) and accepts a configuration only when it is at most
//!   [`FIT_FAILURE_BOUND`]: it adds
//!   a few buckets where that suffices, and otherwise refuses with
//!   [`ConfigError::TooNarrow`](crate::ConfigError::TooNarrow), naming a width and a bucket size
//!   that hold the capacity. A width derived from a false-positive rate is widened instead.
//!
//! [`capacity_limit`] tells the largest capacity each width and bucket size accepts. The default
//! (12-bit fingerprints in buckets of 4) has no practical limit; buckets of 2 need about 11 bits
//! for a million items and 12 for a hundred million.

use crate::table::{BUCKET_SIZES, FINGERPRINT_BITS};

/// The accepted chance that `n` distinct random items do not all fit in a filter built for `n`
/// items: a configuration whose expected number of overflowing bucket groups exceeds this is
/// refused (or, when the width comes from a false-positive rate, widened).
///
/// ```
/// assert_eq!(bugu::FIT_FAILURE_BOUND, 1e-6);
/// ```
pub const FIT_FAILURE_BOUND: f64 = 1e-6;

/// Occupancy the table is sized for: below the lowest load at which insertion first failed in our
/// measurements (3-4 seeds at 10^6 and 10^7 items, with the default eviction limit; the table and
/// the figures are in `docs/sizing.md`). Narrow fingerprints fill less, because `2^f - 1`
/// fingerprints give each bucket at most that many neighbours, and their first failures come
/// earlier in larger tables (about half a point per tenfold at 7-9 bits in buckets of 4, one to
/// one and a half points at 4-5 bits in buckets of 8): their margins cover that decline out to
/// 10^9 items.
pub(crate) fn graph_load(bucket_size: usize, fingerprint_bits: u32) -> f64 {
    match (bucket_size, fingerprint_bits) {
        (2, 4..=5) => 0.33,
        (2, 6) => 0.74,
        (2, 7) => 0.80,
        (2, _) => 0.82,
        (4, 4) => 0.75,
        (4, 5) => 0.83,
        (4, 6) => 0.90,
        (4, 7) => 0.91,
        (4, 8) => 0.93,
        (4, 9) => 0.94,
        (4, _) => 0.95,
        (_, 4) => 0.82,
        (_, 5) => 0.87,
        (_, 6) => 0.93,
        (_, 7) => 0.95,
        (_, _) => 0.97,
    }
}

/// Buckets for `capacity` items at the target load, plus twice the square root of that as slack
/// (at 10M items the slack is 0.12%); even (the alternate-bucket involution needs an even count),
/// at least 2. `None` on overflow.
pub(crate) fn buckets_for(capacity: usize, bucket_size: usize, fingerprint_bits: u32) -> Option<usize> {
    let exact = capacity as f64 / (bucket_size as f64 * graph_load(bucket_size, fingerprint_bits));
    let with_slack = (exact + 2.0 * exact.sqrt()).ceil();
    if with_slack >= usize::MAX as f64 / 4.0 {
        return None;
    }
    let buckets = (with_slack as usize).max(2);
    Some(buckets + buckets % 2)
}

/// The false-positive bound of a lookup in a filter at `load` occupancy: the chance that one of the
/// `2 b load` fingerprints it compares against matches by accident.
pub(crate) fn false_positive_bound(fingerprint_bits: u32, bucket_size: usize, load: f64) -> f64 {
    let per_comparison = 1.0 / ((1u64 << fingerprint_bits) - 1) as f64;
    let comparisons = 2.0 * bucket_size as f64 * load;
    -f64::exp_m1(comparisons * f64::ln_1p(-per_comparison))
}

/// The expected number of bucket groups that receive more items than they have slots, when
/// `items` distinct random items go into `buckets` buckets of `bucket_size` slots with
/// `fingerprint_bits`-bit fingerprints. Each such group makes the fill fail, so this bounds the
/// chance of a failure from this cause (union bound).
///
/// The alternate bucket is `alt(i) = (n - i - r) mod n` with an odd offset `r` drawn from the
/// fingerprint, so items are grouped by `(r, {i, alt(i)})`: `d` distinct offsets (at most
/// `2^f - 1`, at most `n / 2`) each pair the `n` buckets perfectly, giving `d n / 2` pairs; each
/// item lands in a given pair with probability `p = 2 / (d n)`. Counted:
/// - a pair with more than `2b` items (`d n / 2` pairs);
/// - a star of three buckets, `alt_r1(i), i, alt_r2(i)`, whose two pairs hold more than `3b` items
///   (`n (d choose 2)` stars, each item joining with probability `2p`).
///
/// Larger groups need still more coincidences: `docs/sizing.md` shows they add little, and the
/// measured fills agree with this estimate.
pub(crate) fn overflow_expectation(
    items: usize,
    buckets: usize,
    bucket_size: usize,
    fingerprint_bits: u32,
) -> f64 {
    let n = buckets as f64;
    let fingerprints = ((1u64 << fingerprint_bits) - 1) as f64;
    // Offsets are drawn from `n / 2` values: fingerprints that draw the same one share its pairs.
    let half = (buckets / 2) as f64;
    let offsets = half * -f64::exp_m1(fingerprints * f64::ln_1p(-1.0 / half));
    let offsets = offsets.max(1.0);
    let p = 2.0 / (offsets * n);
    let b = bucket_size as u32;
    let pairs = offsets * n / 2.0 * binomial_tail(items, p, 2 * b + 1);
    let stars = n * offsets * (offsets - 1.0) / 2.0 * binomial_tail(items, 2.0 * p, 3 * b + 1);
    pairs + stars
}

/// `P(X >= k)` for `X ~ Binomial(trials, p)`: the chance that a group which each of `trials`
/// items joins with probability `p` receives at least `k` of them. Summed from the `k`-th term
/// upwards (the terms shrink quickly when the mean is well below `k`, the only case that matters
/// here), starting in logarithms so that tiny probabilities do not underflow.
fn binomial_tail(trials: usize, p: f64, k: u32) -> f64 {
    if (trials as u64) < k as u64 || p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 || trials as f64 * p >= k as f64 {
        // Not a sparse regime: the group overflows about as often as not; count it as certain.
        return 1.0;
    }
    let n = trials as f64;
    let ln_choose: f64 = (0..k).map(|j| (n - j as f64).ln() - (j as f64 + 1.0).ln()).sum();
    let mut term = (ln_choose + k as f64 * p.ln() + (n - k as f64) * f64::ln_1p(-p)).exp();
    let odds = p / (1.0 - p);
    let mut sum = 0.0;
    let mut j = k as f64;
    while term > sum * 1e-17 && j <= n {
        sum += term;
        term *= (n - j) / (j + 1.0) * odds;
        j += 1.0;
    }
    sum.min(1.0)
}

/// Whether a table of `buckets` buckets keeps the fit promise for `capacity` items. The estimate
/// counts pairs and stars; groups of four buckets and more add less than the stars do (each needs
/// `b` more items in one more bucket, and stars add at most 0.3 of the pairs' share, in the
/// narrowest configuration), so twice the estimate bounds them all.
pub(crate) fn fits(capacity: usize, buckets: usize, bucket_size: usize, fingerprint_bits: u32) -> bool {
    2.0 * overflow_expectation(capacity, buckets, bucket_size, fingerprint_bits) <= FIT_FAILURE_BOUND
}

/// The bucket count for `capacity` items that also keeps the fit promise: the [`buckets_for`]
/// sizing, enlarged if that alone leaves too many items per bucket pair. `Ok(None)` above
/// [`capacity_limit`]; `Err(())` when the table would not fit in the address space.
pub(crate) fn buckets_that_fit(
    capacity: usize,
    bucket_size: usize,
    fingerprint_bits: u32,
) -> Result<Option<usize>, ()> {
    let sized = buckets_for(capacity, bucket_size, fingerprint_bits).ok_or(())?;
    if fits(capacity, sized, bucket_size, fingerprint_bits) {
        return Ok(Some(sized));
    }
    if capacity > capacity_limit(bucket_size, fingerprint_bits) {
        return Ok(None);
    }
    // Below the limit, `allowance(sized)` more buckets fit, up to rounding: the bucket count
    // is rounded to even and the estimate moves in small steps with it, so search a little beyond.
    let most = sized.checked_add(2 * allowance(sized, fingerprint_bits)).ok_or(())?;
    fewest_buckets_that_fit(capacity, sized, most, bucket_size, fingerprint_bits).map(Some).ok_or(())
}

/// How many buckets the sizing may add to keep the fit promise: `1/f` of the table (beyond that,
/// one more fingerprint bit is the cheaper cure: it doubles the number of bucket pairs), or 64
/// buckets for tiny tables (5 items in buckets of 2 need a few extra buckets at any width).
fn allowance(sized: usize, fingerprint_bits: u32) -> usize {
    (sized / fingerprint_bits as usize).max(64)
}

/// The fewest even bucket count in `(sized, most]` that fits, if `most` does. The expectation falls
/// as buckets are added, so a binary search finds it.
fn fewest_buckets_that_fit(
    capacity: usize,
    sized: usize,
    most: usize,
    bucket_size: usize,
    fingerprint_bits: u32,
) -> Option<usize> {
    if !fits(capacity, most + most % 2, bucket_size, fingerprint_bits) {
        return None;
    }
    let (mut low, mut high) = (sized / 2, most.div_ceil(2));
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if fits(capacity, 2 * mid, bucket_size, fingerprint_bits) {
            high = mid;
        } else {
            low = mid;
        }
    }
    Some(2 * high)
}

/// Whether the builder accepts `capacity` items for this configuration.
fn accepts(capacity: usize, bucket_size: usize, fingerprint_bits: u32) -> bool {
    matches!(buckets_that_fit(capacity, bucket_size, fingerprint_bits), Ok(Some(_)))
}

/// Whether `capacity` items fit within the allowance: the criterion [`capacity_limit`] bounds.
fn within_allowance(capacity: usize, bucket_size: usize, fingerprint_bits: u32) -> bool {
    buckets_for(capacity, bucket_size, fingerprint_bits).is_some_and(|sized| {
        sized
            .checked_add(allowance(sized, fingerprint_bits))
            .is_some_and(|most| fits(capacity, most + most % 2, bucket_size, fingerprint_bits))
    })
}

/// The largest capacity a filter with this bucket size and fingerprint width accepts (0 for a
/// bucket size or width the builder refuses). Above it, the builder returns
/// [`ConfigError::TooNarrow`](crate::ConfigError::TooNarrow).
///
/// ```
/// use bugu::sizing::capacity_limit;
///
/// // The default, 12-bit fingerprints in buckets of 4, has no practical limit.
/// assert!(capacity_limit(4, 12) > 1 << 50);
/// // 8-bit fingerprints in buckets of 2 hold only a few thousand items reliably.
/// assert!(capacity_limit(2, 8) < 10_000);
/// ```
pub fn capacity_limit(bucket_size: usize, fingerprint_bits: u32) -> usize {
    if !BUCKET_SIZES.contains(&bucket_size) || !FINGERPRINT_BITS.contains(&fingerprint_bits) {
        return 0;
    }
    let (mut low, mut high) = (0usize, usize::MAX / 8);
    if within_allowance(high, bucket_size, fingerprint_bits) {
        return high;
    }
    // Invariant: `low` fits (or is 0), `high` does not.
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if within_allowance(mid, bucket_size, fingerprint_bits) {
            low = mid;
        } else {
            high = mid;
        }
    }
    low
}

/// The narrowest width at `bucket_size`, from `from_bits` up, that holds `capacity` items.
pub(crate) fn narrowest_fitting_bits(capacity: usize, bucket_size: usize, from_bits: u32) -> Option<u32> {
    (from_bits..=*FINGERPRINT_BITS.end()).find(|&bits| accepts(capacity, bucket_size, bits))
}

/// The smallest bucket size above `bucket_size` that holds `capacity` items at this width.
pub(crate) fn smallest_fitting_bucket_size(capacity: usize, bucket_size: usize, bits: u32) -> Option<usize> {
    BUCKET_SIZES.into_iter().filter(|&b| b > bucket_size).find(|&b| accepts(capacity, b, bits))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    use crate::hash::{Addressing, hash_item};

    #[test]
    fn binomial_tail_matches_direct_sums() {
        // P(X >= 1) = 1 - (1 - p)^n; P(X >= n) = p^n.
        for (n, p) in [(10usize, 0.01), (1000, 1e-4), (1_000_000, 3e-7)] {
            let one = -f64::exp_m1(n as f64 * f64::ln_1p(-p));
            assert!((binomial_tail(n, p, 1) / one - 1.0).abs() < 1e-9, "{n} {p}");
        }
        assert!((binomial_tail(5, 0.1, 5) / 1e-5 - 1.0).abs() < 1e-9);
        // P(X >= 2) for n = 3, p = 0.1: 3 p^2 (1 - p) + p^3 = 0.028.
        assert!((binomial_tail(3, 0.1, 2) - 0.028).abs() < 1e-12);
        // Fewer items than the group's slots: it cannot overflow.
        assert_eq!(binomial_tail(4, 0.5, 5), 0.0);
        assert_eq!(binomial_tail(100, 0.0, 3), 0.0);
        assert_eq!(binomial_tail(100, 0.5, 3), 1.0);
        assert!(binomial_tail(1_000_000, 1e-7, 25) > 0.0);
    }

    /// Counts the pairs (offset group, bucket pair) that receive more than `2b` of `items` keys.
    fn overflowing_pairs(items: u64, buckets: usize, bucket_size: usize, bits: u32, seed: u64) -> usize {
        let addressing = Addressing::new(buckets, bits);
        let mut groups: HashMap<(usize, usize), usize> = HashMap::new();
        for key in 0..items {
            // A pair {i, j} fixes the offset (r = -(i + j) mod n): the pair alone is the group.
            let (_, b1, b2) = addressing.locate(hash_item(&key, seed));
            *groups.entry((b1.min(b2), b1.max(b2))).or_default() += 1;
        }
        groups.values().filter(|&&count| count > 2 * bucket_size).count()
    }

    #[test]
    fn the_pair_estimate_predicts_the_overflowing_pairs_of_real_hashes() {
        // 4-bit fingerprints, buckets of 2, 10^6 items at loads where overflowing pairs are common:
        // the observed count over 4 seeds must sit within 5 standard deviations of the estimate.
        for load in [0.33, 0.5] {
            let items = 1_000_000usize;
            let buckets = {
                let b = (items as f64 / (2.0 * load)).ceil() as usize;
                b + b % 2
            };
            let seeds = 4;
            let observed: usize =
                (0..seeds).map(|seed| overflowing_pairs(items as u64, buckets, 2, 4, seed)).sum();
            let n = buckets as f64;
            let expected = seeds as f64 * 15.0 * n / 2.0 * binomial_tail(items, 2.0 / (15.0 * n), 5);
            let tolerance = 5.0 * expected.sqrt() + 1.0;
            assert!(
                (observed as f64 - expected).abs() <= tolerance,
                "load {load}: observed {observed} overflowing pairs, expected {expected:.1}"
            );
            assert!(overflow_expectation(items, buckets, 2, 4) >= expected / seeds as f64);
        }
    }

    #[test]
    fn the_default_configuration_holds_any_addressable_capacity() {
        assert!(capacity_limit(4, 12) > 1 << 50);
        assert!(capacity_limit(4, 8) > 100_000_000_000);
    }

    #[test]
    fn narrow_configurations_have_limits_that_grow_with_width_and_bucket_size() {
        // From 8 bits up the sized load no longer changes with the width; below, a wider
        // fingerprint may be sized fuller (buckets of 2: 33% at 5 bits, 74% at 6), which can
        // lower its limit.
        for b in BUCKET_SIZES {
            let limits: Vec<usize> = (8..=32).map(|f| capacity_limit(b, f)).collect();
            assert!(limits.windows(2).all(|w| w[0] <= w[1]), "b={b}: {limits:?}");
        }
        for f in FINGERPRINT_BITS {
            assert!(
                capacity_limit(2, f) <= capacity_limit(4, f) && capacity_limit(4, f) <= capacity_limit(8, f),
                "f={f}"
            );
        }
        // The reported failures: 4-bit x 2 slots at 10^6, 6-bit x 2 slots at 10^7.
        assert!(capacity_limit(2, 4) < 1_000);
        assert!(capacity_limit(2, 6) < 10_000_000);
        assert_eq!(narrowest_fitting_bits(1_000_000, 2, 4).map(|f| accepts(1_000_000, 2, f)), Some(true));
    }
}
