//! The per-insert figures of a growing filter: every insert timed on its own (the slowest one
//! and the 99.9th percentile), and the filter's memory sampled as it passes given sizes (bits
//! per item at its peak and averaged over those sizes).
//!
//! One fill's slowest insert is mostly what the machine added: on a shared virtual machine a
//! thread is stopped now and then for a millisecond or more, and even its CPU clock runs on
//! (a pre-sized filter's slowest insert read 0.2 to 6 ms from fill to fill). The same keys in
//! the same order give every fill of a filter the same work, so several fills are made
//! ([`InsertProfile::from_fills`]) and each insert's time is its least over them: what the
//! insert itself takes, and what the slowest insert and the percentile are taken from. The
//! slowest insert of each single fill is kept beside it.
//!
//! The fills share one vector of least times, 4 bytes a key (`u32` ns, saturating at about
//! 4.3 s): 400 MB at 10^8 keys however many fills there are, and no fill keeps its own times.
//!
//! Timing one insert reads the clock twice around it, so each figure includes the clock's own
//! cost; [`clock_cost_ns`] measures that cost in the same run, for the report to print beside
//! the figures.

use std::time::Duration;

use crate::timing::Clock;

/// What one fill with every insert timed on its own leaves besides the least times it lowered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TimedFill {
    /// This fill's own slowest insert, in ns.
    pub max_ns: u64,
    /// `(size, bits per item)` when the filter held each of the sampled sizes.
    pub bits_at: Vec<(usize, f64)>,
    /// Inserts that failed.
    pub failed: usize,
}

/// Lowers `least` (an insert's least time so far, ns) to `elapsed` if that is less.
#[inline]
pub fn lower(least: &mut u32, elapsed: Duration) {
    let ns = u32::try_from(elapsed.as_nanos()).unwrap_or(u32::MAX);
    *least = (*least).min(ns);
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
    /// Makes `fills` fills (at least one) of `keys` keys, the same keys in the same order, with
    /// `fill`: it times each insert `i` on its own and [`lower`]s `least[i]` to its time. Each
    /// insert's time is then its least over the fills; the memory samples are the first fill's
    /// (the fills hold the same items), the failures the most any fill had.
    pub fn from_fills(keys: usize, fills: usize, mut fill: impl FnMut(&mut [u32]) -> TimedFill) -> Self {
        let mut least = vec![u32::MAX; keys];
        let mut profile = InsertProfile::default();
        for n in 0..fills.max(1) {
            let TimedFill { max_ns, bits_at, failed } = fill(&mut least);
            profile.fill_max_ns.push(max_ns);
            profile.failed = profile.failed.max(failed);
            if n == 0 {
                profile.bits_at = bits_at;
            }
        }
        profile.max_ns = least.iter().copied().max().map_or(0, u64::from);
        profile.p999_ns = percentile(&mut least, 0.999).map_or(0, u64::from);
        profile
    }

    /// Bits per item averaged over the sampled sizes (`None` if none was reached).
    pub fn bits_averaged(&self) -> Option<f64> {
        mean(self.bits_at.iter().map(|&(_, bits)| bits))
    }

    /// The most bits per item at any sampled size: the peak during growth (`None` if no size
    /// was reached).
    pub fn bits_peak(&self) -> Option<f64> {
        self.bits_at.iter().map(|&(_, bits)| bits).reduce(f64::max)
    }
}

/// The `q` quantile of `samples` by nearest rank (the smallest sample with at least a fraction
/// `q` of the samples at or below it); `None` for no samples. Reorders `samples`.
pub fn percentile<T: Ord + Copy>(samples: &mut [T], q: f64) -> Option<T> {
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

/// Memory samples per decade of sizes.
pub const SAMPLES_PER_DECADE: u32 = 16;

/// The sizes the memory is sampled at (bits per item at its peak and averaged): 16 sizes per
/// decade, log-spaced, from 10^5 (from 10^3 when `keys` is below 10^5) up to `keys`, and `keys`
/// itself (the end of the fill); none when `keys` is below 10^3. Sorted, distinct.
pub fn sample_sizes(keys: usize) -> Vec<usize> {
    let low = if keys >= 100_000 { 100_000 } else { 1_000 };
    let mut sizes: Vec<usize> = (0..)
        .map(|step| {
            (low as f64 * 10f64.powf(f64::from(step) / f64::from(SAMPLES_PER_DECADE))).round() as usize
        })
        .take_while(|&size| size <= keys)
        .collect();
    if keys >= low && sizes.last() != Some(&keys) {
        sizes.push(keys);
    }
    sizes.dedup();
    sizes
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
        assert_eq!(percentile::<u64>(&mut [], 0.5), None);
        // 10,000 samples: the 99.9th percentile is the 9,990th smallest, above the 10 largest.
        let mut spiky: Vec<u64> =
            (0..10_000).map(|i| if i % 1000 == 3 { 1_000_000 + i } else { i % 50 }).collect();
        assert_eq!(percentile(&mut spiky, 0.999), Some(49));
    }

    /// A fill that times insert `i` as `times_ns[i]`, like `Contender::insert_timed`.
    fn fill(
        times_ns: Vec<u64>,
        bits_at: Vec<(usize, f64)>,
        failed: usize,
    ) -> impl FnMut(&mut [u32]) -> TimedFill {
        move |least| {
            assert_eq!(least.len(), times_ns.len());
            for (least, &ns) in least.iter_mut().zip(&times_ns) {
                lower(least, Duration::from_nanos(ns));
            }
            TimedFill {
                max_ns: times_ns.iter().copied().max().unwrap_or(0),
                bits_at: bits_at.clone(),
                failed,
            }
        }
    }

    #[test]
    fn profiles_keep_the_slowest_and_the_peak_and_average_the_samples() {
        let samples = vec![(100_000, 20.0), (115_478, 26.0), (133_352, 21.0)];
        let profile = InsertProfile::from_fills(5, 1, fill(vec![10, 30, 20, 5_000, 40], samples, 1));
        assert_eq!(profile.max_ns, 5_000);
        assert_eq!(profile.p999_ns, 5_000, "5 samples: the 99.9th percentile is the largest");
        assert_eq!(profile.fill_max_ns, [5_000]);
        assert_eq!(profile.bits_averaged(), Some(22.333333333333332));
        assert_eq!(profile.bits_peak(), Some(26.0), "the peak during growth, not the last sample");
        assert_eq!(profile.failed, 1);
        let none = InsertProfile::from_fills(0, 1, |_| TimedFill::default());
        assert_eq!((none.bits_averaged(), none.bits_peak(), none.max_ns), (None, None, 0));
        assert_eq!(mean([1.0, 2.0, 6.0]), Some(3.0));
        // Times past u32::MAX ns saturate instead of wrapping.
        let mut least = u32::MAX;
        lower(&mut least, Duration::from_secs(5));
        assert_eq!(least, u32::MAX);
        lower(&mut least, Duration::from_nanos(7));
        assert_eq!(least, 7);
    }

    #[test]
    fn each_insert_counts_its_least_time_over_the_fills() {
        // Each fill was stopped once, at another insert; insert 3 is slow in every fill.
        let mut fills = [
            fill(vec![9_000, 10, 12, 700, 11], vec![(4, 32.0)], 0),
            fill(vec![10, 11, 6_000, 650, 12], vec![(4, 99.0)], 2),
            fill(vec![11, 8_000, 10, 720, 10], vec![(4, 99.0)], 1),
        ];
        let mut next = 0;
        let profile = InsertProfile::from_fills(5, 3, |least| {
            next += 1;
            fills[next - 1](least)
        });
        assert_eq!(profile.max_ns, 650, "insert 3's least time");
        assert_eq!(profile.fill_max_ns, [9_000, 6_000, 8_000]);
        assert_eq!(profile.p999_ns, 650);
        assert_eq!(profile.failed, 2);
        assert_eq!(profile.bits_at, [(4, 32.0)], "the first fill's samples");
    }

    #[test]
    fn sampled_sizes_are_sixteen_a_decade_up_to_the_key_count() {
        let sizes = sample_sizes(100_000_000);
        assert_eq!(sizes.len(), 3 * 16 + 1, "10^5..10^8, both ends");
        assert_eq!(sizes[..3], [100_000, 115_478, 133_352]);
        assert_eq!((sizes[16], sizes[32], sizes[48]), (1_000_000, 10_000_000, 100_000_000));
        assert!(sizes.windows(2).all(|w| w[0] < w[1] && w[1] as f64 / w[0] as f64 <= 1.16), "{sizes:?}");
        // The last sample is the key count, between two sizes of the grid or on one.
        let sizes = sample_sizes(250_000);
        assert_eq!((sizes[0], sizes.last()), (100_000, Some(&250_000)));
        assert_eq!(sizes.len(), 8, "{sizes:?}");
        assert_eq!(sample_sizes(100_000), [100_000]);
        // Below 10^5 keys the samples start at 10^3.
        let sizes = sample_sizes(99_999);
        assert_eq!((sizes[0], sizes[16], sizes.last()), (1_000, 10_000, Some(&99_999)));
        assert_eq!(sizes.len(), 33);
        assert_eq!(sample_sizes(1_000), [1_000]);
        assert_eq!(sample_sizes(999), Vec::<usize>::new());
        assert_eq!(bits_per_item(1_000, 400), 20.0);
        assert_eq!(nanos(Duration::from_micros(3)), 3_000);
        assert!(clock_cost_ns(Clock::Wall, 101) < 1_000_000, "reading the clock takes under 1 ms");
    }
}
