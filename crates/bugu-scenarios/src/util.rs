//! What the three scenarios share: a seeded random generator, a Zipf sampler, timing, a temporary
//! directory and the formatting of the reports.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// SplitMix64 (Steele, Lea and Flood): a tiny, fast, seeded generator. Every workload is drawn from
/// one, so a run is reproducible from its seed.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(crate) fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// A uniform integer in `0..n` (Lemire's multiply-shift; the bias is below `n / 2^64`).
    /// `n` must not be 0.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A uniform index into a slice of `len` elements (`len > 0`).
    pub(crate) fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// A uniform float in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Ranks `0..n` drawn with probability proportional to `1 / (rank + 1)^exponent`: the popularity
/// of web objects. The cumulative weights are computed once; each draw is a binary search.
#[derive(Debug, Clone)]
pub(crate) struct Zipf {
    cumulative: Vec<f64>,
}

impl Zipf {
    /// `n` must be at least 1.
    pub(crate) fn new(n: usize, exponent: f64) -> Self {
        let mut total = 0.0;
        let cumulative = (1..=n)
            .map(|rank| {
                total += (rank as f64).powf(-exponent);
                total
            })
            .collect();
        Zipf { cumulative }
    }

    pub(crate) fn sample(&self, rng: &mut SplitMix64) -> usize {
        let total = self.cumulative.last().copied().unwrap_or(0.0);
        let target = rng.unit() * total;
        self.cumulative.partition_point(|&c| c <= target).min(self.cumulative.len() - 1)
    }
}

/// Runs `f` and says how long it took.
pub(crate) fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let value = f();
    (value, start.elapsed())
}

/// A fresh directory under the system's temporary directory, removed (with its content) when
/// dropped.
#[derive(Debug)]
pub(crate) struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub(crate) fn new(prefix: &str) -> std::io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let name =
            format!("{prefix}-{}-{nanos:09}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let path = std::env::temp_dir().join(name);
        std::fs::create_dir(&path)?;
        Ok(TempDir { path })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Best effort: a directory that cannot be removed is left behind, not a reason to panic.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// An integer written with thousands separators: `1,000,000`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Count(pub(crate) u64);

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.0.to_string();
        let mut out = String::with_capacity(digits.len() + digits.len() / 3);
        for (i, digit) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(digit);
        }
        f.pad(&out)
    }
}

/// A count from a `usize`.
pub(crate) fn count(n: usize) -> Count {
    Count(n as u64)
}

/// A duration in milliseconds with one decimal below a second (`12.3 ms`), else in seconds with
/// two (`2.35 s`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Millis(pub(crate) Duration);

impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seconds = self.0.as_secs_f64();
        if seconds < 1.0 { write!(f, "{:.1} ms", seconds * 1e3) } else { write!(f, "{seconds:.2} s") }
    }
}

/// A rate of operations per second, in millions: `12.3 M/s`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PerSecond {
    pub(crate) operations: u64,
    pub(crate) took: Duration,
}

impl PerSecond {
    pub(crate) fn value(&self) -> f64 {
        self.operations as f64 / self.took.as_secs_f64().max(1e-9)
    }
}

impl fmt::Display for PerSecond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.1} M lookups/s", self.value() / 1e6)
    }
}

/// `part / whole` as a percentage with `decimals` digits; 0 when `whole` is 0.
pub(crate) fn percent(part: u64, whole: u64, decimals: usize) -> String {
    format!("{:.decimals$}%", ratio(part, whole) * 100.0)
}

/// `part / whole`, 0 when `whole` is 0.
pub(crate) fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 / whole as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_have_separators() {
        assert_eq!(Count(0).to_string(), "0");
        assert_eq!(Count(999).to_string(), "999");
        assert_eq!(Count(1_000).to_string(), "1,000");
        assert_eq!(Count(12_345_678).to_string(), "12,345,678");
    }

    #[test]
    fn below_stays_in_range_and_zipf_favours_low_ranks() {
        let mut rng = SplitMix64::new(1);
        assert!((0..1_000).all(|_| rng.below(7) < 7));
        let zipf = Zipf::new(1_000, 1.0);
        let draws: Vec<usize> = (0..10_000).map(|_| zipf.sample(&mut rng)).collect();
        assert!(draws.iter().all(|&rank| rank < 1_000));
        let top = draws.iter().filter(|&&rank| rank < 10).count();
        assert!(top > 3_000, "the 10 most popular of 1,000 ranks get about 39% of draws, got {top}");
    }
}
