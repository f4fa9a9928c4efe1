//! The per-insert figures of a growing filter: every insert timed on its own (the slowest one
//! and the 99.9th percentile), and the filter's memory sampled as it passes given sizes (bits
//! per item averaged over those sizes).
//!
//! One fill's slowest insert is mostly what the machine added: on a shared virtual machine a
//! thread is stopped now and then for a millisecond or more, and even its CPU clock runs on
//! (a pre-sized filter's slowest insert read 0.2 to 6 ms from fill to fill). The same keys in
//! the same order give every fill of a filter the same work, so several fills are made
//! ([`InsertProfile::from_fills`]) and each insert's time is its least over them: what the
//! insert itself takes, and what the slowest insert and the percentile are taken from. The
//! slowest insert of each single fill is kept beside it.
//!
//! Timing one insert reads the clock twice around it, so each figure includes the clock's own
//! cost; [`clock_cost_ns`] measures that cost in the same run, for the report to print beside
//! the figures.

use std::time::Duration;

use crate::timing::Clock;

/// One fill with every insert timed on its own.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedFill {
    /// Each insert's time, in ns, in the order of the keys.
    pub times_ns: Vec<u64>,
    /// `(size, bits per item)` when the filter held each of the sampled sizes.
    pub bits_at: Vec<(usize, f64)>,
    /// Inserts that failed.
    pub failed: usize,
}

/// What the insert-by-insert fills measured (all zero and empty for no fill).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InsertProfile {
    /// The slowest single insert, in ns, each insert timed by its least time over the fills.
    pub max_ns: u64,
    /// The 99.9th percentile of the per-insert times (each its least over the fills), in ns.
    pub p999_ns: u64,
    /// The slowest insert of each fill on its own, in ns, in the order of the fills.
    pub fill_max_ns: Vec<u64>,
    /// `(size, bits per item)` when the filter held each of the sampled sizes.
    pub bits_at: Vec<(usize, f64)>,
    /// Inserts that failed.
    pub failed: usize,
}

impl InsertProfile {
    /// Builds the profile from fills of the same keys in the same order (at least one): each
    /// insert's time is its least over the fills; the memory samples are the first fill's (the
    /// fills hold the same items), the failures the most any fill had.
    pub fn from_fills(fills: impl IntoIterator<Item = TimedFill>) -> Self {
        let mut fills = fills.into_iter();
        let Some(first) = fills.next() else { return InsertProfile::default() };
        let slowest = |times: &[u64]| times.iter().copied().max().unwrap_or(0);
        let mut fill_max_ns = vec![slowest(&first.times_ns)];
        let TimedFill { times_ns: mut least, bits_at, mut failed } = first;
        for fill in fills {
            fill_max_ns.push(slowest(&fill.times_ns));
            failed = failed.max(fill.failed);
            for (least, time) in least.iter_mut().zip(fill.times_ns) {
                *least = (*least).min(time);
            }
        }
        InsertProfile {
            max_ns: slowest(&least),
            p999_ns: percentile(&mut least, 0.999).unwrap_or(0),
            fill_max_ns,
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
        let fill = |times_ns: Vec<u64>, failed| TimedFill {
            times_ns,
            bits_at: vec![(10_000, 20.0), (100_000, 24.0)],
            failed,
        };
        let profile = InsertProfile::from_fills([fill(vec![10, 30, 20, 5_000, 40], 1)]);
        assert_eq!(profile.max_ns, 5_000);
        assert_eq!(profile.p999_ns, 5_000, "5 samples: the 99.9th percentile is the largest");
        assert_eq!(profile.fill_max_ns, [5_000]);
        assert_eq!(profile.bits_averaged(), Some(22.0));
        assert_eq!(profile.failed, 1);
        assert_eq!(InsertProfile::from_fills([]).bits_averaged(), None);
        assert_eq!(mean([1.0, 2.0, 6.0]), Some(3.0));
    }

    #[test]
    fn each_insert_counts_its_least_time_over_the_fills() {
        let fill = |times_ns: Vec<u64>, failed| TimedFill { times_ns, bits_at: Vec::new(), failed };
        // Each fill was stopped once, at another insert; insert 3 is slow in every fill.
        let profile = InsertProfile::from_fills([
            fill(vec![9_000, 10, 12, 700, 11], 0),
            fill(vec![10, 11, 6_000, 650, 12], 2),
            fill(vec![11, 8_000, 10, 720, 10], 1),
        ]);
        assert_eq!(profile.max_ns, 650, "insert 3's least time");
        assert_eq!(profile.fill_max_ns, [9_000, 6_000, 8_000]);
        assert_eq!(profile.p999_ns, 650);
        assert_eq!(profile.failed, 2);
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
