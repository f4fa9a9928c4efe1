//! `bugu_filter`: a fixed-size filter, every operation through [`ConcurrentFilter`], so that any
//! function may be called from many threads at once on one handle (except `bugu_filter_free`).

use std::ffi::c_void;

use bugu::{ConcurrentFilter, CuckooFilter};

use crate::handle::{handle, publish, target};
use crate::stats::{bugu_bucket_callback, dump};
use crate::status::{bugu_status, guard, invalid};

/// A fixed-size cuckoo filter, safe to share between threads. Opaque.
#[allow(non_camel_case_types)]
pub struct bugu_filter {
    inner: ConcurrentFilter,
}

handle!(bugu_filter => ConcurrentFilter);

/// A filter's configuration. Start from `bugu_config_default()` and change what you need.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct bugu_config {
    /// Items the filter must hold (at least 1).
    pub capacity: usize,
    /// Target false-positive rate in (0, 1), or 0 to size by `fingerprint_bits`.
    pub false_positive_rate: f64,
    /// Fingerprint width, 4 to 32 bits, or 0 for the default (12) or the width the rate needs.
    /// Set at most one of this and `false_positive_rate`.
    pub fingerprint_bits: u32,
    /// Slots per bucket: 2, 4 or 8.
    pub bucket_size: u32,
    /// The hash seed: filters answer alike only with the same seed.
    pub seed: u64,
    /// How many buckets an insert may examine searching for room.
    pub eviction_limit: u32,
    /// Semi-sorted buckets (bucket size 4 only): one bit less per slot, a little slower.
    pub semi_sorted: bool,
}

/// The default configuration, for `capacity` items.
#[unsafe(no_mangle)]
pub extern "C" fn bugu_config_default(capacity: usize) -> bugu_config {
    bugu_config {
        capacity,
        false_positive_rate: 0.0,
        fingerprint_bits: 0,
        bucket_size: bugu::DEFAULT_BUCKET_SIZE as u32,
        seed: bugu::DEFAULT_SEED,
        eviction_limit: bugu::DEFAULT_EVICTION_LIMIT as u32,
        semi_sorted: false,
    }
}

/// A new filter for `capacity` items at false-positive rate `fpr` (in (0, 1)), in `*out`.
///
/// # Safety
/// `out` is NULL (refused) or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_filter_new(
    capacity: usize,
    fpr: f64,
    out: *mut *mut bugu_filter,
) -> bugu_status {
    let mut config = bugu_config_default(capacity);
    config.false_positive_rate = fpr;
    // SAFETY: a valid config on the stack; `out` as promised by the caller.
    unsafe { bugu_filter_new_with(&config, out) }
}

/// A new filter with this configuration, in `*out`.
///
/// # Safety
/// `config` is NULL (refused) or readable; `out` is NULL (refused) or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_filter_new_with(
    config: *const bugu_config,
    out: *mut *mut bugu_filter,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises NULL or a readable config.
        let config = unsafe { config.as_ref() }.ok_or_else(|| invalid("the config is NULL"))?;
        let mut builder = CuckooFilter::builder()
            .capacity(config.capacity)
            .bucket_size(config.bucket_size as usize)
            .seed(config.seed)
            .eviction_limit(config.eviction_limit as usize)
            .semi_sorted(config.semi_sorted);
        match (config.false_positive_rate, config.fingerprint_bits) {
            (0.0, 0) => {}
            (rate, 0) => builder = builder.false_positive_rate(rate),
            (0.0, bits) => builder = builder.fingerprint_bits(bits),
            _ => return Err(invalid("set either false_positive_rate or fingerprint_bits, not both")),
        }
        publish(builder.build_concurrent()?, out)
    })
}

/// Calls `callback` for every bucket of a copy of the table taken at one moment; a non-zero return
/// stops the walk.
///
/// # Safety
/// `filter` is NULL (refused) or live; `callback` is NULL (refused) or a valid function.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_filter_dump_buckets(
    filter: *const bugu_filter,
    callback: bugu_bucket_callback,
    context: *mut c_void,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises NULL or a live handle.
        let copy = unsafe { target(filter) }?.to_filter()?;
        dump(std::slice::from_ref(&copy), callback, context)
    })
}
