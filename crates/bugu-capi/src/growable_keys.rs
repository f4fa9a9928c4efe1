//! The key operations of `bugu_growable`: every operation for bytes, strings and integers.

use std::ffi::{c_char, c_void};

use crate::args;
use crate::growable::{bugu_growable, target, target_mut};
use crate::ops::{self, Target};
use crate::status::{bugu_status, guard};

/// Stores one copy of the key. `BUGU_FULL` or `BUGU_COPY_LIMIT` when there is no room (nothing changed). The key: the `len` bytes at `key` (NULL allowed when `len` is 0).
///
/// # Safety
/// `filter` is NULL or a live handle; `key` points to `len` readable bytes, or `len` is 0; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_insert(
    filter: *mut bugu_growable,
    key: *const c_void,
    len: usize,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target_mut(filter) }?;
        // SAFETY: the caller promises `key` points to `len` readable bytes, or `len` is 0.
        let hash = target.hash_bytes(unsafe { args::bytes(key, len) }?);
        ops::insert(target, hash)
    })
}

/// Stores one copy of the key. `BUGU_FULL` or `BUGU_COPY_LIMIT` when there is no room (nothing changed). The key: the bytes of the NUL-terminated string `key`.
///
/// # Safety
/// `filter` is NULL or a live handle; `key` is a NUL-terminated string; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_insert_str(
    filter: *mut bugu_growable,
    key: *const c_char,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target_mut(filter) }?;
        // SAFETY: the caller promises `key` is a NUL-terminated string.
        let hash = target.hash_bytes(unsafe { args::text(key) }?);
        ops::insert(target, hash)
    })
}

/// Stores one copy of the key. `BUGU_FULL` or `BUGU_COPY_LIMIT` when there is no room (nothing changed). The key: the integer `key` (8 bytes, little-endian).
///
/// # Safety
/// `filter` is NULL or a live handle; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_insert_u64(filter: *mut bugu_growable, key: u64) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target_mut(filter) }?;
        let hash = target.hash_u64(key);
        ops::insert(target, hash)
    })
}

/// Stores one copy of the key. `BUGU_FULL` or `BUGU_COPY_LIMIT` when there is no room (nothing changed). The key: the integer `key` (8 bytes, little-endian, as its `_u64` value when non-negative).
///
/// # Safety
/// `filter` is NULL or a live handle; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_insert_i64(filter: *mut bugu_growable, key: i64) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target_mut(filter) }?;
        let hash = target.hash_i64(key);
        ops::insert(target, hash)
    })
}

/// Stores the key unless it may be present; `*added` (may be NULL) tells whether it was stored. The key: the `len` bytes at `key` (NULL allowed when `len` is 0).
///
/// # Safety
/// `filter` is NULL or a live handle; `key` points to `len` readable bytes, or `len` is 0; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_insert_unique(
    filter: *mut bugu_growable,
    key: *const c_void,
    len: usize,
    added: *mut bool,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target_mut(filter) }?;
        // SAFETY: the caller promises `key` points to `len` readable bytes, or `len` is 0.
        let hash = target.hash_bytes(unsafe { args::bytes(key, len) }?);
        // SAFETY: the caller promises a writable out-parameter or NULL.
        unsafe { ops::insert_unique(target, hash, added) }
    })
}

/// Stores the key unless it may be present; `*added` (may be NULL) tells whether it was stored. The key: the bytes of the NUL-terminated string `key`.
///
/// # Safety
/// `filter` is NULL or a live handle; `key` is a NUL-terminated string; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_insert_unique_str(
    filter: *mut bugu_growable,
    key: *const c_char,
    added: *mut bool,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target_mut(filter) }?;
        // SAFETY: the caller promises `key` is a NUL-terminated string.
        let hash = target.hash_bytes(unsafe { args::text(key) }?);
        // SAFETY: the caller promises a writable out-parameter or NULL.
        unsafe { ops::insert_unique(target, hash, added) }
    })
}

/// Stores the key unless it may be present; `*added` (may be NULL) tells whether it was stored. The key: the integer `key` (8 bytes, little-endian).
///
/// # Safety
/// `filter` is NULL or a live handle; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_insert_unique_u64(
    filter: *mut bugu_growable,
    key: u64,
    added: *mut bool,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target_mut(filter) }?;
        let hash = target.hash_u64(key);
        // SAFETY: the caller promises a writable out-parameter or NULL.
        unsafe { ops::insert_unique(target, hash, added) }
    })
}

/// Stores the key unless it may be present; `*added` (may be NULL) tells whether it was stored. The key: the integer `key` (8 bytes, little-endian, as its `_u64` value when non-negative).
///
/// # Safety
/// `filter` is NULL or a live handle; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_insert_unique_i64(
    filter: *mut bugu_growable,
    key: i64,
    added: *mut bool,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target_mut(filter) }?;
        let hash = target.hash_i64(key);
        // SAFETY: the caller promises a writable out-parameter or NULL.
        unsafe { ops::insert_unique(target, hash, added) }
    })
}

/// Whether the key may be present, in `*found` (false is certain; true is wrong at most at the false-positive rate). The key: the `len` bytes at `key` (NULL allowed when `len` is 0).
///
/// # Safety
/// `filter` is NULL or a live handle; `key` points to `len` readable bytes, or `len` is 0; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_contains(
    filter: *const bugu_growable,
    key: *const c_void,
    len: usize,
    found: *mut bool,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target(filter) }?;
        // SAFETY: the caller promises `key` points to `len` readable bytes, or `len` is 0.
        let hash = target.hash_bytes(unsafe { args::bytes(key, len) }?);
        // SAFETY: the caller promises a writable out-parameter or NULL.
        unsafe { ops::contains(target, hash, found) }
    })
}

/// Whether the key may be present, in `*found` (false is certain; true is wrong at most at the false-positive rate). The key: the bytes of the NUL-terminated string `key`.
///
/// # Safety
/// `filter` is NULL or a live handle; `key` is a NUL-terminated string; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_contains_str(
    filter: *const bugu_growable,
    key: *const c_char,
    found: *mut bool,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target(filter) }?;
        // SAFETY: the caller promises `key` is a NUL-terminated string.
        let hash = target.hash_bytes(unsafe { args::text(key) }?);
        // SAFETY: the caller promises a writable out-parameter or NULL.
        unsafe { ops::contains(target, hash, found) }
    })
}

/// Whether the key may be present, in `*found` (false is certain; true is wrong at most at the false-positive rate). The key: the integer `key` (8 bytes, little-endian).
///
/// # Safety
/// `filter` is NULL or a live handle; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_contains_u64(
    filter: *const bugu_growable,
    key: u64,
    found: *mut bool,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target(filter) }?;
        let hash = target.hash_u64(key);
        // SAFETY: the caller promises a writable out-parameter or NULL.
        unsafe { ops::contains(target, hash, found) }
    })
}

/// Whether the key may be present, in `*found` (false is certain; true is wrong at most at the false-positive rate). The key: the integer `key` (8 bytes, little-endian, as its `_u64` value when non-negative).
///
/// # Safety
/// `filter` is NULL or a live handle; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_contains_i64(
    filter: *const bugu_growable,
    key: i64,
    found: *mut bool,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target(filter) }?;
        let hash = target.hash_i64(key);
        // SAFETY: the caller promises a writable out-parameter or NULL.
        unsafe { ops::contains(target, hash, found) }
    })
}

/// How many stored fingerprints match the key (an upper bound on its copies), in `*count`. The key: the `len` bytes at `key` (NULL allowed when `len` is 0).
///
/// # Safety
/// `filter` is NULL or a live handle; `key` points to `len` readable bytes, or `len` is 0; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_count(
    filter: *const bugu_growable,
    key: *const c_void,
    len: usize,
    count: *mut usize,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target(filter) }?;
        // SAFETY: the caller promises `key` points to `len` readable bytes, or `len` is 0.
        let hash = target.hash_bytes(unsafe { args::bytes(key, len) }?);
        // SAFETY: the caller promises a writable out-parameter or NULL.
        unsafe { ops::count(target, hash, count) }
    })
}

/// How many stored fingerprints match the key (an upper bound on its copies), in `*count`. The key: the bytes of the NUL-terminated string `key`.
///
/// # Safety
/// `filter` is NULL or a live handle; `key` is a NUL-terminated string; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_count_str(
    filter: *const bugu_growable,
    key: *const c_char,
    count: *mut usize,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target(filter) }?;
        // SAFETY: the caller promises `key` is a NUL-terminated string.
        let hash = target.hash_bytes(unsafe { args::text(key) }?);
        // SAFETY: the caller promises a writable out-parameter or NULL.
        unsafe { ops::count(target, hash, count) }
    })
}

/// How many stored fingerprints match the key (an upper bound on its copies), in `*count`. The key: the integer `key` (8 bytes, little-endian).
///
/// # Safety
/// `filter` is NULL or a live handle; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_count_u64(
    filter: *const bugu_growable,
    key: u64,
    count: *mut usize,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target(filter) }?;
        let hash = target.hash_u64(key);
        // SAFETY: the caller promises a writable out-parameter or NULL.
        unsafe { ops::count(target, hash, count) }
    })
}

/// How many stored fingerprints match the key (an upper bound on its copies), in `*count`. The key: the integer `key` (8 bytes, little-endian, as its `_u64` value when non-negative).
///
/// # Safety
/// `filter` is NULL or a live handle; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_count_i64(
    filter: *const bugu_growable,
    key: i64,
    count: *mut usize,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target(filter) }?;
        let hash = target.hash_i64(key);
        // SAFETY: the caller promises a writable out-parameter or NULL.
        unsafe { ops::count(target, hash, count) }
    })
}

/// Removes one copy of the key; `*removed` (may be NULL) tells whether one was found. Remove only keys you inserted. The key: the `len` bytes at `key` (NULL allowed when `len` is 0).
///
/// # Safety
/// `filter` is NULL or a live handle; `key` points to `len` readable bytes, or `len` is 0; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_remove(
    filter: *mut bugu_growable,
    key: *const c_void,
    len: usize,
    removed: *mut bool,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target_mut(filter) }?;
        // SAFETY: the caller promises `key` points to `len` readable bytes, or `len` is 0.
        let hash = target.hash_bytes(unsafe { args::bytes(key, len) }?);
        // SAFETY: the caller promises a writable out-parameter or NULL.
        unsafe { ops::remove(target, hash, removed) }
    })
}

/// Removes one copy of the key; `*removed` (may be NULL) tells whether one was found. Remove only keys you inserted. The key: the bytes of the NUL-terminated string `key`.
///
/// # Safety
/// `filter` is NULL or a live handle; `key` is a NUL-terminated string; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_remove_str(
    filter: *mut bugu_growable,
    key: *const c_char,
    removed: *mut bool,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target_mut(filter) }?;
        // SAFETY: the caller promises `key` is a NUL-terminated string.
        let hash = target.hash_bytes(unsafe { args::text(key) }?);
        // SAFETY: the caller promises a writable out-parameter or NULL.
        unsafe { ops::remove(target, hash, removed) }
    })
}

/// Removes one copy of the key; `*removed` (may be NULL) tells whether one was found. Remove only keys you inserted. The key: the integer `key` (8 bytes, little-endian).
///
/// # Safety
/// `filter` is NULL or a live handle; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_remove_u64(
    filter: *mut bugu_growable,
    key: u64,
    removed: *mut bool,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target_mut(filter) }?;
        let hash = target.hash_u64(key);
        // SAFETY: the caller promises a writable out-parameter or NULL.
        unsafe { ops::remove(target, hash, removed) }
    })
}

/// Removes one copy of the key; `*removed` (may be NULL) tells whether one was found. Remove only keys you inserted. The key: the integer `key` (8 bytes, little-endian, as its `_u64` value when non-negative).
///
/// # Safety
/// `filter` is NULL or a live handle; out-parameters are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_remove_i64(
    filter: *mut bugu_growable,
    key: i64,
    removed: *mut bool,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises a live handle or NULL (refused).
        let target = unsafe { target_mut(filter) }?;
        let hash = target.hash_i64(key);
        // SAFETY: the caller promises a writable out-parameter or NULL.
        unsafe { ops::remove(target, hash, removed) }
    })
}
