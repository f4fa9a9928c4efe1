//! The memory floor: what an independent random 64-byte line read costs on this machine, from a
//! buffer the size of a filter's table.
//!
//! A lookup of a key whose buckets are not in cache reads two random cache lines. When lookups
//! are batched and prefetched the CPU overlaps many of those misses, and the time per lookup
//! approaches what the memory system delivers: two independent line reads. [`measure`] times a
//! loop that does nothing else — pick a random line, load a word of it, add it to a sum — so its
//! ns per line, doubled, is the floor a batched lookup cannot go below.
//!
//! - The next index comes from a cheap inline generator that never looks at the loaded data, so
//!   the reads are independent and the CPU keeps as many misses in flight as it can, the way it
//!   does for a batch of lookups.
//! - The buffer is written before it is timed, so its pages are real (a never-written page reads
//!   the shared zero page and never misses).
//! - Beside that plain loop, the same loop with a prefetch window: the line `window` reads ahead
//!   is prefetched before the current one is read, as a batched lookup prefetches the buckets of
//!   the keys ahead of the one it compares. Both loops run on the same buffer, alternately, and
//!   read the same sequence of lines; the prefetched one is the floor a prefetching batch is held
//!   to. The prefetch is `prefetcht0` on x86-64; elsewhere the window changes nothing
//!   ([`PREFETCHES`] is false) and both loops measure the same thing.
//! - Like bugu's table (`crates/bugu/src/table`), a buffer of 4 MiB or more is advised to use
//!   transparent huge pages (`MADV_HUGEPAGE`, Linux) before it is first written: the floor then
//!   pays the same TLB cost per read as the lookups it bounds. On 4 KiB pages every read of a
//!   table far beyond the TLB's reach would add a page walk the filter does not pay.

use std::hint::black_box;

use memmap2::MmapMut;

use crate::timing::{Clock, median, ns_per_op};

/// Bytes per cache line.
pub const LINE_BYTES: usize = 64;

/// Buffers from this size on are advised to use huge pages (bugu's table uses the same threshold).
#[cfg(target_os = "linux")]
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

/// Whether a prefetch window issues prefetches on this architecture (x86-64 only).
pub const PREFETCHES: bool = cfg!(target_arch = "x86_64");

/// What [`measure`] found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Floor {
    /// Bytes of the buffer read from (the requested size rounded up to whole lines).
    pub buffer_bytes: usize,
    /// Reads in each timed loop.
    pub reads: usize,
    /// Median ns per read over the repeats, the plain loop.
    pub ns_per_line: f64,
    /// The prefetch window of the second loop (reads ahead), 0 if only the plain loop ran.
    pub window: usize,
    /// Median ns per read over the repeats with the prefetch window (`None` if `window` is 0).
    pub prefetched_ns_per_line: Option<f64>,
}

impl Floor {
    /// The floor per cuckoo lookup: a lookup reads two lines.
    pub fn ns_per_lookup(&self) -> f64 {
        2.0 * self.ns_per_line
    }
}

/// Ns per independent random line read from a buffer of `buffer_bytes` (at least one line):
/// `reads` reads per timed loop, `repeats` loops (at least one), the median kept. With a
/// `window` above 0, each repeat also times the loop that prefetches `window` reads ahead, right
/// after the plain one, on the same buffer.
pub fn measure(buffer_bytes: usize, reads: usize, repeats: usize, window: usize, clock: Clock) -> Floor {
    let buffer = filled_buffer(buffer_bytes.div_ceil(LINE_BYTES).max(1));
    let reads = reads.max(1);
    // Any fixed seeds: the run is reproducible.
    let (mut plain_state, mut prefetched_state) = (0x853c_49e6_748f_ea9b, 0xda3e_39cb_94b9_5bdb);
    let timed = |window: usize, state: &mut u64| {
        let (elapsed, sum) = clock.time(|| read_lines(&buffer, reads, window, state));
        black_box(sum);
        elapsed
    };
    let (mut plain, mut prefetched) = (Vec::new(), Vec::new());
    for _ in 0..repeats.max(1) {
        plain.push(timed(0, &mut plain_state));
        if window > 0 {
            prefetched.push(timed(window, &mut prefetched_state));
        }
    }
    Floor {
        buffer_bytes: buffer.len(),
        reads,
        ns_per_line: ns_per_op(median(&plain), reads),
        window,
        prefetched_ns_per_line: (window > 0).then(|| ns_per_op(median(&prefetched), reads)),
    }
}

/// `lines` lines, advised for huge pages, then written (each line's bytes hold its index, modulo
/// 256).
fn filled_buffer(lines: usize) -> MmapMut {
    advised_bytes(lines * LINE_BYTES, |i| (i / LINE_BYTES) as u8)
}

/// `len` bytes (at least one), on the pages a table of that size gets (huge pages advised from
/// 4 MiB on, like bugu's table): an anonymous mapping, advised before the first write, then
/// written, byte `i` being `byte(i)`. The mapping starts on a page boundary, so a line at a
/// multiple of [`LINE_BYTES`] is one cache line.
///
/// # Panics
/// If the system refuses the mapping.
pub fn advised_bytes(len: usize, mut byte: impl FnMut(usize) -> u8) -> MmapMut {
    let mut buffer = MmapMut::map_anon(len.max(1)).expect("an anonymous mapping");
    // Before the first write: the kernel picks the page size when a page is first touched. The
    // advice is a hint; refused, the buffer stays on 4 KiB pages.
    #[cfg(target_os = "linux")]
    if buffer.len() >= HUGE_PAGE_THRESHOLD {
        let _ = buffer.advise(memmap2::Advice::HugePage);
    }
    for (i, slot) in buffer.iter_mut().enumerate() {
        *slot = byte(i);
    }
    buffer
}

/// The timed loop: `reads` loads of one byte from lines picked at random, summed; with a
/// `window` above 0, the line `window` reads ahead is prefetched before each load. The lines read
/// (and so the sum) depend on the starting state only, never on the window. Out of line so that
/// every caller times the same code.
#[inline(never)]
fn read_lines(buffer: &[u8], reads: usize, window: usize, state: &mut u64) -> u64 {
    let lines = (buffer.len() / LINE_BYTES) as u64;
    let mut x = *state;
    // The same sequence, `window` steps ahead of `x`: its lines are the ones prefetched.
    let mut ahead = x;
    for _ in 0..window {
        prefetch(&buffer[next_line(&mut ahead, lines) * LINE_BYTES]);
    }
    let mut sum = 0u64;
    for _ in 0..reads {
        if window > 0 {
            prefetch(&buffer[next_line(&mut ahead, lines) * LINE_BYTES]);
        }
        sum = sum.wrapping_add(u64::from(buffer[next_line(&mut x, lines) * LINE_BYTES]));
    }
    *state = x;
    sum
}

/// The next index in `0..lines` of the sequence whose state is `x`.
#[inline(always)]
fn next_line(x: &mut u64, lines: u64) -> usize {
    // A Weyl sequence through a multiply-xorshift mix: a few instructions, and its only
    // dependency is on `x`, never on a loaded value.
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x ^ (*x >> 32);
    z = z.wrapping_mul(0xd6e8_feb8_6659_fd93);
    z ^= z >> 32;
    // Multiply-shift maps z onto 0..lines without a division.
    ((u128::from(z) * u128::from(lines)) >> 64) as usize
}

/// Asks the CPU to start loading the line of `byte` into the L1 cache (`prefetcht0`); nothing
/// elsewhere.
#[inline(always)]
fn prefetch(byte: &u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of the x86-64 baseline, and a prefetch is only a hint: it never faults
    // and never changes memory, and the address is that of a live reference anyway.
    unsafe {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(byte).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = byte;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_huge_page_buffers_give_a_positive_finite_floor() {
        // One buffer below the huge-page threshold, one above it.
        for bytes in [64 << 10, (4 << 20) + 12_345] {
            let floor = measure(bytes, 100_000, 3, 16, Clock::Wall);
            assert!(floor.buffer_bytes >= bytes && floor.buffer_bytes.is_multiple_of(LINE_BYTES));
            assert!(floor.ns_per_line.is_finite() && floor.ns_per_line > 0.0, "{floor:?}");
            assert_eq!(floor.ns_per_lookup(), 2.0 * floor.ns_per_line);
            let prefetched = floor.prefetched_ns_per_line.unwrap();
            assert!(prefetched.is_finite() && prefetched > 0.0, "{floor:?}");
            assert_eq!(floor.window, 16);
        }
        let plain_only = measure(64 << 10, 1000, 1, 0, Clock::Wall);
        assert_eq!((plain_only.window, plain_only.prefetched_ns_per_line), (0, None));
    }

    #[test]
    fn reads_stay_inside_the_buffer() {
        // One line: every index must be 0, and the sum is 0 + 0 + ...
        let buffer = filled_buffer(1);
        assert_eq!(read_lines(&buffer, 1000, 0, &mut 1), 0);
        assert_eq!(read_lines(&buffer, 1000, 16, &mut 1), 0);
        let buffer = filled_buffer(3);
        let mut state = 7;
        let sum = read_lines(&buffer, 3000, 0, &mut state);
        assert!(sum > 0 && sum <= 2 * 3000);
    }

    /// What a loop over `buffer` returns (the sum of the indices, modulo 256, of the lines it
    /// read: each line holds its own) and the state it leaves, from a fixed start.
    fn sum_and_state(buffer: &[u8], reads: usize, window: usize) -> (u64, u64) {
        let mut state = 0x1234_5678;
        let sum = read_lines(buffer, reads, window, &mut state);
        (sum, state)
    }

    #[test]
    fn the_window_changes_which_lines_are_prefetched_never_which_are_read() {
        let buffer = filled_buffer(10_007);
        let plain = sum_and_state(&buffer, 50_000, 0);
        for window in [1, 4, 16, 64] {
            assert_eq!(sum_and_state(&buffer, 50_000, window), plain, "window {window}");
        }
        // The sum does tell the sequences apart: another start reads other lines.
        let mut other = 0x1234_5679;
        assert_ne!(read_lines(&buffer, 50_000, 16, &mut other), plain.0);
        // And it is the sum of the line indices the generator picks.
        let mut x = 0x1234_5678;
        let expected: u64 = (0..50_000).map(|_| u64::from(next_line(&mut x, 10_007) as u8)).sum();
        assert_eq!((plain.0, plain.1), (expected, x));
        // A window longer than the loop still reads exactly `reads` lines.
        assert_eq!(sum_and_state(&buffer, 10, 0), sum_and_state(&buffer, 10, 100));
    }
}
