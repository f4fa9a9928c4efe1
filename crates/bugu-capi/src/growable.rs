//! `bugu_growable`: a filter that adds capacity as items arrive, without the original keys.
//! The one place that names the Rust type it wraps ([`Inner`]). Not for concurrent use: calls on
//! one handle must not overlap (queries may overlap each other).

use std::ffi::{c_char, c_void};

use bugu::GrowableFilter;

use crate::args;
use crate::stats::{bugu_bucket_callback, bugu_stats, dump, write_buffer};
use crate::status::{Failure, bugu_status, guard, invalid};

/// The growable filter type behind the handle.
type Inner = GrowableFilter;

/// A growable cuckoo filter. Opaque.
#[allow(non_camel_case_types)]
pub struct bugu_growable {
    inner: Inner,
}

/// # Safety
/// `filter` is NULL or a live handle from this library.
pub(crate) unsafe fn target<'a>(filter: *const bugu_growable) -> Result<&'a Inner, Failure> {
    // SAFETY: the caller promises NULL or a live handle.
    unsafe { filter.as_ref() }.map(|f| &f.inner).ok_or_else(|| invalid("the filter handle is NULL"))
}

/// # Safety
/// `filter` is NULL or a live handle that no other call uses at the moment.
pub(crate) unsafe fn target_mut<'a>(filter: *mut bugu_growable) -> Result<&'a mut Inner, Failure> {
    // SAFETY: the caller promises NULL or a live handle used by no one else now.
    unsafe { filter.as_mut() }.map(|f| &mut f.inner).ok_or_else(|| invalid("the filter handle is NULL"))
}

fn publish(inner: Inner, out: *mut *mut bugu_growable) -> Result<(), Failure> {
    if out.is_null() {
        return Err(invalid("the out-parameter for the new filter is NULL"));
    }
    // SAFETY: non-NULL, and the caller promises it is writable.
    unsafe { out.write(Box::into_raw(Box::new(bugu_growable { inner }))) };
    Ok(())
}

/// A new growable filter starting at `initial_capacity` items, keeping its false-positive rate
/// under `fpr` at every size, in `*out`.
///
/// # Safety
/// `out` is NULL (refused) or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_new(
    initial_capacity: usize,
    fpr: f64,
    out: *mut *mut bugu_growable,
) -> bugu_status {
    guard(|| {
        let built = Inner::builder().initial_capacity(initial_capacity).false_positive_rate(fpr).build();
        publish(built.map_err(|error| invalid(error.to_string()))?, out)
    })
}

/// Frees a growable filter (NULL is ignored).
///
/// # Safety
/// `filter` is NULL or a live handle, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_free(filter: *mut bugu_growable) {
    if !filter.is_null() {
        // SAFETY: the caller gives back a handle made by Box::into_raw in `publish`.
        let _ = std::panic::catch_unwind(|| drop(unsafe { Box::from_raw(filter) }));
    }
}

/// Occupancy and sizing over all levels, in `*stats`.
///
/// # Safety
/// `filter` is NULL (refused) or live; `stats` is NULL (refused) or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_stats(
    filter: *const bugu_growable,
    stats: *mut bugu_stats,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises NULL or a live handle.
        let f = unsafe { target(filter) }?;
        let levels = f.levels();
        let slots: usize = levels.iter().map(|l| l.bucket_count() * l.bucket_size()).sum();
        let value = bugu_stats {
            items: f.len(),
            capacity: f.capacity(),
            buckets: levels.iter().map(|l| l.bucket_count()).sum(),
            bucket_size: f.bucket_size(),
            fingerprint_bits: levels.last().map_or(0, |l| l.fingerprint_bits()),
            levels: f.level_count(),
            load_factor: f.len() as f64 / slots.max(1) as f64,
            bits_per_item: f.bits_per_item(),
            false_positive_rate: f.false_positive_rate(),
            memory_bytes: f.memory_bytes(),
        };
        // SAFETY: the caller promises NULL or writable.
        unsafe { args::write(stats, value, "the out-parameter `stats`") }
    })
}

/// Calls `callback` for every bucket of every level; a non-zero return stops the walk.
///
/// # Safety
/// `filter` is NULL (refused) or live; `callback` is NULL (refused) or a valid function.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_dump_buckets(
    filter: *const bugu_growable,
    callback: bugu_bucket_callback,
    context: *mut c_void,
) -> bugu_status {
    // SAFETY: the caller promises NULL or a live handle.
    guard(|| dump(unsafe { target(filter) }?.levels(), callback, context))
}

/// Saves the filter to the file `path`, atomically.
///
/// # Safety
/// `filter` is NULL (refused) or live; `path` is NULL (refused) or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_save(
    filter: *const bugu_growable,
    path: *const c_char,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises NULL or a live handle, and NULL or a NUL-terminated path.
        let (f, path) = unsafe { (target(filter)?, args::path(path)?) };
        Ok(f.save(path)?)
    })
}

/// Loads a growable filter from the file `path`, in `*out`.
///
/// # Safety
/// `path` is NULL (refused) or NUL-terminated; `out` is NULL (refused) or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_load(
    path: *const c_char,
    out: *mut *mut bugu_growable,
) -> bugu_status {
    // SAFETY: the caller promises NULL or a NUL-terminated path.
    guard(|| publish(Inner::load(unsafe { args::path(path) }?)?, out))
}

/// Writes the filter's bytes to `buffer`, as `bugu_filter_to_buffer` does.
///
/// # Safety
/// As `bugu_filter_to_buffer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_to_buffer(
    filter: *const bugu_growable,
    buffer: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises NULL or a live handle.
        let bytes = unsafe { target(filter) }?.to_bytes();
        // SAFETY: the caller's promises on `buffer`, `capacity` and `written`.
        unsafe { write_buffer(&bytes, buffer, capacity, written) }
    })
}

/// Reads a growable filter from `len` bytes at `buffer` (validated), in `*out`.
///
/// # Safety
/// `buffer` holds `len` readable bytes or is NULL with 0; `out` is NULL (refused) or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_from_buffer(
    buffer: *const c_void,
    len: usize,
    out: *mut *mut bugu_growable,
) -> bugu_status {
    // SAFETY: the caller promises `len` readable bytes or NULL with 0.
    guard(|| publish(Inner::from_bytes(unsafe { args::bytes(buffer, len) }?)?, out))
}
