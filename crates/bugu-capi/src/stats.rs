//! What both handles report: statistics, bucket dumps, serialized bytes.

use std::ffi::c_void;

use bugu::CuckooFilter;

use crate::args;
use crate::status::{Failure, Outcome, bugu_status, invalid};

/// A filter's sizing and occupancy.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct bugu_stats {
    /// Stored fingerprints.
    pub items: usize,
    /// Items the filter was sized for (a growable filter: the sum of its levels').
    pub capacity: usize,
    /// Buckets (a growable filter: of all levels).
    pub buckets: usize,
    /// Slots per bucket.
    pub bucket_size: usize,
    /// Fingerprint width in bits (a growable filter: of its newest level).
    pub fingerprint_bits: u32,
    /// Levels: 1 for a fixed filter.
    pub levels: usize,
    /// Stored fingerprints over slots.
    pub load_factor: f64,
    /// Bits of table per stored item.
    pub bits_per_item: f64,
    /// The bound on the false-positive rate.
    pub false_positive_rate: f64,
    /// Bytes of memory the tables take.
    pub memory_bytes: usize,
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

/// Copies `bytes` into the caller's buffer, or says how many are needed.
///
/// # Safety
/// `buffer` holds `capacity` writable bytes (or is NULL with 0); `written` is NULL or writable.
pub(crate) unsafe fn write_buffer(
    bytes: &[u8],
    buffer: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> Outcome {
    // SAFETY: the caller's promise.
    unsafe { args::write(written, bytes.len(), "the out-parameter `written`") }?;
    if bytes.len() > capacity {
        return Err(Failure(
            bugu_status::BUGU_BUFFER_TOO_SMALL,
            format!("the buffer holds {capacity} bytes; the filter needs {}", bytes.len()),
        ));
    }
    // SAFETY: the caller promises `capacity` writable bytes, at least `bytes.len()`.
    let buffer = unsafe { args::array_mut(buffer, bytes.len(), "the buffer") }?;
    buffer.copy_from_slice(bytes);
    Ok(())
}
