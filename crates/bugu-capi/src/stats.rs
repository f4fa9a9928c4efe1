//! What the handles report: statistics and bucket dumps.

use std::ffi::c_void;

use bugu::{CuckooFilter, Summary};

use crate::args;
use crate::status::{Outcome, invalid};

/// A filter's sizing, occupancy and false-positive rates: every field means the same for every
/// handle (the Rust library's `bugu::Summary`).
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct bugu_stats {
    /// Items stored (inserts minus removals).
    pub items: usize,
    /// Items the filter is sized for now: a fixed filter's capacity, the sum of a growable
    /// filter's levels', or where a one-table filter's table next splits.
    pub capacity: usize,
    /// Buckets, over all levels.
    pub buckets: usize,
    /// Slots per bucket.
    pub bucket_size: usize,
    /// Fingerprint width in bits (a growable filter: of its newest, widest level).
    pub fingerprint_bits: u32,
    /// Levels: a growable filter's tables, 1 for the other handles.
    pub levels: usize,
    /// Stored entries over slots, over all levels.
    pub load_factor: f64,
    /// Bits of memory per stored item (per one item when empty).
    pub bits_per_item: f64,
    /// The bound on the false-positive rate that holds for the filter as it is: a fixed filter's
    /// at full occupancy, the sum of a growable filter's levels', a one-table filter's from the
    /// entries it holds. Never above `target_false_positive_rate` when there is one.
    pub false_positive_rate_bound: f64,
    /// Bytes of memory the tables take.
    pub memory_bytes: usize,
    /// The rate a growable or one-table filter was configured to stay under at every size; 0.0
    /// for a fixed filter, which has no target (its rate is fixed by its size: see
    /// `false_positive_rate_bound`).
    pub target_false_positive_rate: f64,
    /// The rate expected at the current load: at most `false_positive_rate_bound`.
    pub expected_false_positive_rate: f64,
}

/// The one mapping from the core's report to the C struct, used by every handle's `_stats`.
impl From<&Summary> for bugu_stats {
    fn from(summary: &Summary) -> Self {
        bugu_stats {
            items: summary.items,
            capacity: summary.capacity,
            buckets: summary.buckets,
            bucket_size: summary.bucket_size,
            fingerprint_bits: summary.fingerprint_bits,
            levels: summary.levels,
            load_factor: summary.load_factor,
            bits_per_item: summary.bits_per_item,
            false_positive_rate_bound: summary.false_positive_rate_bound,
            memory_bytes: summary.memory_bytes,
            // C has no Option: 0.0 is no rate any filter could be configured to.
            target_false_positive_rate: summary.target_false_positive_rate.unwrap_or(0.0),
            expected_false_positive_rate: summary.expected_false_positive_rate,
        }
    }
}

/// Writes a handle's summary to the caller's `stats`.
///
/// # Safety
/// `stats` is NULL (refused) or writable.
pub(crate) unsafe fn write_stats(summary: &Summary, stats: *mut bugu_stats) -> Outcome {
    // SAFETY: the caller's promise.
    unsafe { args::write(stats, bugu_stats::from(summary), "the out-parameter `stats`") }
}

/// Called with one bucket: its level (0 for a fixed filter), its index, and its `slots`
/// fingerprints (0 = empty slot). Returning non-zero stops the walk.
#[allow(non_camel_case_types)]
pub type bugu_bucket_callback = Option<
    unsafe extern "C" fn(
        context: *mut c_void,
        level: usize,
        index: usize,
        slots: *const u32,
        n: usize,
    ) -> i32,
>;

pub(crate) fn dump(levels: &[CuckooFilter], callback: bugu_bucket_callback, context: *mut c_void) -> Outcome {
    let callback = callback.ok_or_else(|| invalid("the callback is NULL"))?;
    for (level, filter) in levels.iter().enumerate() {
        for bucket in filter.buckets(..) {
            // SAFETY: the caller's function, given a pointer to `slots.len()` values alive for the call.
            let stop =
                unsafe { callback(context, level, bucket.index, bucket.slots.as_ptr(), bucket.slots.len()) };
            if stop != 0 {
                return Ok(());
            }
        }
    }
    Ok(())
}
