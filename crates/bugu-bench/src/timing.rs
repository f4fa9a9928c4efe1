//! Timing: `Instant` around whole loops (never around one operation, whose cost is below the
//! clock's resolution), repeated, and the median kept — the machines are shared and noisy, and
//! the median ignores the odd run that another process disturbed.

use std::time::{Duration, Instant};

/// Runs `f` once and returns how long it took with its result.
#[inline]
pub fn time<R>(f: impl FnOnce() -> R) -> (Duration, R) {
    let start = Instant::now();
    let result = f();
    (start.elapsed(), result)
}

/// The median of `samples` (the mean of the two middle ones for an even count).
///
/// # Panics
/// If `samples` is empty.
pub fn median(samples: &[Duration]) -> Duration {
    assert!(!samples.is_empty(), "median of no samples");
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 { sorted[mid] } else { (sorted[mid - 1] + sorted[mid]) / 2 }
}

/// Nanoseconds per operation for a loop of `ops` operations that took `elapsed`.
pub fn ns_per_op(elapsed: Duration, ops: usize) -> f64 {
    elapsed.as_nanos() as f64 / ops.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        let ms = Duration::from_millis;
        assert_eq!(median(&[ms(5), ms(1), ms(3)]), ms(3));
        assert_eq!(median(&[ms(4), ms(1), ms(2), ms(100)]), ms(3));
        assert_eq!(ns_per_op(Duration::from_micros(1), 10), 100.0);
    }
}
