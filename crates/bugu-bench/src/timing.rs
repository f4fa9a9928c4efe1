//! Timing: a clock read around whole loops (never around one operation, whose cost is below the
//! clock's resolution), repeated, and the median kept — the machines are shared and noisy, and
//! the median ignores the odd run that another process disturbed.
//!
//! Two clocks: [`Clock::Wall`] (`std::time::Instant`, the default) and [`Clock::Thread`], the
//! CPU time of the measuring thread. When other processes keep the CPUs busy the scheduler takes
//! the thread off the CPU for whole time slices, and wall time then mostly measures the other
//! processes; thread CPU time leaves those slices out (cache pollution by the others remains).

use std::time::{Duration, Instant};

/// Which clock times the loops (the binaries' `--clock`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Clock {
    /// Elapsed real time (std::time::Instant).
    #[default]
    Wall,
    /// CPU time of the measuring thread: leaves out time slices taken by other processes.
    Thread,
}

impl Clock {
    /// A description for report headers.
    pub fn describe(&self) -> &'static str {
        match self {
            Clock::Wall => "wall-clock time (std::time::Instant)",
            Clock::Thread => {
                "thread CPU time (CLOCK_THREAD_CPUTIME_ID: time the thread was descheduled in favour of \
                 other processes is left out)"
            }
        }
    }

    /// Runs `f` once and returns how long it took by this clock, with its result.
    #[inline]
    pub fn time<R>(&self, f: impl FnOnce() -> R) -> (Duration, R) {
        match self {
            Clock::Wall => {
                let start = Instant::now();
                let result = f();
                (start.elapsed(), result)
            }
            Clock::Thread => {
                let start = thread_cpu_time();
                let result = f();
                (thread_cpu_time().saturating_sub(start), result)
            }
        }
    }
}

/// CPU time the calling thread has used so far.
#[cfg(unix)]
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid, writable timespec; the clock id is a constant the kernel knows.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Without a per-thread CPU clock, fall back to elapsed time since the first call.
#[cfg(not(unix))]
fn thread_cpu_time() -> Duration {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed()
}

/// What a median is taken of: timed durations, or figures already in ns (e.g. parsed from another
/// benchmark's output).
pub trait Sample: Copy {
    /// A total order.
    fn order(a: &Self, b: &Self) -> std::cmp::Ordering;
    /// The mean of two.
    fn mean(a: Self, b: Self) -> Self;
}

impl Sample for Duration {
    fn order(a: &Self, b: &Self) -> std::cmp::Ordering {
        a.cmp(b)
    }
    fn mean(a: Self, b: Self) -> Self {
        (a + b) / 2
    }
}

impl Sample for f64 {
    fn order(a: &Self, b: &Self) -> std::cmp::Ordering {
        a.total_cmp(b)
    }
    fn mean(a: Self, b: Self) -> Self {
        (a + b) / 2.0
    }
}

/// The median of `samples` (the mean of the two middle ones for an even count).
///
/// # Panics
/// If `samples` is empty.
pub fn median<T: Sample>(samples: &[T]) -> T {
    assert!(!samples.is_empty(), "median of no samples");
    let mut sorted = samples.to_vec();
    sorted.sort_unstable_by(T::order);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 { sorted[mid] } else { T::mean(sorted[mid - 1], sorted[mid]) }
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
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0]), 2.5);
        assert_eq!(ns_per_op(Duration::from_micros(1), 10), 100.0);
    }

    #[test]
    fn thread_clock_counts_work_not_sleep() {
        let (slept, ()) = Clock::Thread.time(|| std::thread::sleep(Duration::from_millis(50)));
        assert!(slept < Duration::from_millis(25), "sleeping used {slept:?} of CPU");
        let (worked, sum) = Clock::Thread.time(|| (0..20_000_000u64).map(std::hint::black_box).sum::<u64>());
        assert!(sum > 0 && worked > Duration::ZERO);
    }
}
