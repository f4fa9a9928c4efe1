//! The per-insert figures of a growing filter: every insert timed on its own (the slowest one
//! and the 99.9th percentile), and the filter's memory sampled as it passes given sizes (bits
//! per item averaged over those sizes).
//!
//! Timing one insert reads the clock twice around it, so each figure includes the clock's own
//! cost; [`clock_cost_ns`] measures that cost in the same run, for the report to print beside
//! the figures.

use std::time::Duration;

use crate::timing::Clock;

/// What one insert-by-insert pass measured.
#[derive(Debug, Clone, PartialEq)]
pub struct InsertProfile {
    /// The slowest single insert, in ns.
    pub max_ns: u64,
    /// The 99.9th percentile of the per-insert times, in ns.
    pub p999_ns: u64,
    /// `(size, bits per item)` when the filter held each of the sampled sizes.
    pub bits_at: Vec<(usize, f64)>,
    /// Inserts that failed.
    pub failed: usize,
}

impl InsertProfile {
    /// Builds the profile from every insert's time (ns; reordered in place).
    pub fn new(times_ns: &mut [u64], bits_at: Vec<(usize, f64)>, failed: usize) -> Self {
        InsertProfile {
            max_ns: times_ns.iter().copied().max().unwrap_or(0),
            p999_ns: percentile(times_ns, 0.999).unwrap_or(0),
            bits_at,
            failed,
        }
    }

    /// Bits per item averaged over the sampled sizes (`None` if none was reached).
    pub fn bits_averaged(&self) -> Option<f64> {
        mean(self.bits_at.iter().map(|&(_, bits)| bits))
    }
}

/// The `q` quantile of `samples` by nearest rank (the smallest sample with at least a fraction
/// `q` of the samples at or below it); `None` for no samples. Reorders `samples`.
pub fn percentile(samples: &mut [u64], q: f64) -> Option<u64> {
    if samples.is_empty() {
        return None;
    }
    let q = q.clamp(0.0, 1.0);
    let rank = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len());
    let (_, nth, _) = samples.select_nth_unstable(rank - 1);
    Some(*nth)
}

/// The mean of `values`; `None` for none.
pub fn mean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (sum, count) = values.into_iter().fold((0.0, 0usize), |(sum, count), v| (sum + v, count + 1));
    (count > 0).then(|| sum / count as f64)
}

/// The sizes bits per item is averaged over: 10^4, 10^5, 10^6 and 10^7, those not above `keys`.
pub fn sample_sizes(keys: usize) -> Vec<usize> {
    [10_000, 100_000, 1_000_000, 10_000_000].into_iter().filter(|&size| size <= keys).collect()
}

/// Bits per item of `bytes` holding `items`.
pub fn bits_per_item(bytes: usize, items: usize) -> f64 {
    bytes as f64 * 8.0 / items.max(1) as f64
}

/// The median time `clock` reports around nothing, over `samples` readings: what each
/// per-insert figure includes beyond the insert.
pub fn clock_cost_ns(clock: Clock, samples: usize) -> u64 {
    let mut times: Vec<u64> = (0..samples).map(|_| nanos(clock.time(|| ()).0)).collect();
    percentile(&mut times, 0.5).unwrap_or(0)
}

/// A duration in whole ns, saturating.
pub fn nanos(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let mut samples: Vec<u64> = (1..=1000).rev().collect();
        assert_eq!(percentile(&mut samples, 0.999), Some(999));
        assert_eq!(percentile(&mut samples, 1.0), Some(1000));
        assert_eq!(percentile(&mut samples, 0.5), Some(500));
        assert_eq!(percentile(&mut samples, 0.0), Some(1));
        let mut one = [7];
        assert_eq!(percentile(&mut one, 0.999), Some(7));
        assert_eq!(percentile(&mut [], 0.5), None);
        // 10,000 samples: the 99.9th percentile is the 9,990th smallest, above the 10 largest.
        let mut spiky: Vec<u64> =
            (0..10_000).map(|i| if i % 1000 == 3 { 1_000_000 + i } else { i % 50 }).collect();
        assert_eq!(percentile(&mut spiky, 0.999), Some(49));
    }

    #[test]
    fn profiles_keep_the_slowest_and_average_the_samples() {
        let mut times = vec![10, 30, 20, 5_000, 40];
        let profile = InsertProfile::new(&mut times, vec![(10_000, 20.0), (100_000, 24.0)], 1);
        assert_eq!(profile.max_ns, 5_000);
        assert_eq!(profile.p999_ns, 5_000, "5 samples: the 99.9th percentile is the largest");
        assert_eq!(profile.bits_averaged(), Some(22.0));
        assert_eq!(profile.failed, 1);
        assert_eq!(InsertProfile::new(&mut [], Vec::new(), 0).bits_averaged(), None);
        assert_eq!(mean([1.0, 2.0, 6.0]), Some(3.0));
    }

    #[test]
    fn sampled_sizes_stop_at_the_key_count() {
        assert_eq!(sample_sizes(1_000_000), [10_000, 100_000, 1_000_000]);
        assert_eq!(sample_sizes(99_999), [10_000]);
        assert_eq!(sample_sizes(5_000), Vec::<usize>::new());
        assert_eq!(sample_sizes(100_000_000).len(), 4);
        assert_eq!(bits_per_item(1_000, 400), 20.0);
        assert_eq!(nanos(Duration::from_micros(3)), 3_000);
        assert!(clock_cost_ns(Clock::Wall, 101) < 1_000_000, "reading the clock takes under 1 ms");
    }
}
