//! Batches: the caller's arrays of keys become hashes (every key checked before any is used), and
//! the operations run over them through the filters' batched paths where the library has them.

use std::ffi::{c_char, c_void};

use crate::args;
use crate::ops::{Target, Update};
use crate::status::{Failure, Outcome, bugu_status, invalid};

/// The hashes of `n` byte keys: `keys[i]` points to `lens[i]` bytes.
///
/// # Safety
/// `keys` and `lens` are NULL or hold `n` values; each `keys[i]` is NULL or points to `lens[i]`
/// readable bytes.
pub(crate) unsafe fn hash_bytes(
    target: &impl Target,
    keys: *const *const c_void,
    lens: *const usize,
    n: usize,
) -> Result<Vec<u64>, Failure> {
    // SAFETY: the caller promises NULL or `n` values in each array.
    let (keys, lens) = unsafe { (args::array(keys, n, "keys")?, args::array(lens, n, "lens")?) };
    let mut hashes = Vec::with_capacity(n);
    for (at, (&key, &len)) in keys.iter().zip(lens).enumerate() {
        if key.is_null() && len != 0 {
            return Err(invalid(format!("keys[{at}] is NULL with a non-zero length")));
        }
        // SAFETY: the caller promises `len` readable bytes at `key`, or `len` 0.
        hashes.push(target.hash_bytes(unsafe { args::bytes(key, len) }?));
    }
    Ok(hashes)
}

/// The hashes of `n` NUL-terminated string keys.
///
/// # Safety
/// `keys` is NULL or holds `n` pointers, each NULL or to a NUL-terminated string.
pub(crate) unsafe fn hash_str(
    target: &impl Target,
    keys: *const *const c_char,
    n: usize,
) -> Result<Vec<u64>, Failure> {
    // SAFETY: the caller promises NULL or `n` pointers.
    let keys = unsafe { args::array(keys, n, "keys") }?;
    let mut hashes = Vec::with_capacity(n);
    for (at, &key) in keys.iter().enumerate() {
        if key.is_null() {
            return Err(invalid(format!("keys[{at}] is NULL")));
        }
        // SAFETY: non-NULL, and the caller promises a NUL-terminated string.
        hashes.push(target.hash_bytes(unsafe { args::text(key) }?));
    }
    Ok(hashes)
}

/// The hashes of `n` unsigned integer keys.
///
/// # Safety
/// `keys` is NULL or holds `n` values.
pub(crate) unsafe fn hash_u64(target: &impl Target, keys: *const u64, n: usize) -> Result<Vec<u64>, Failure> {
    // SAFETY: the caller promises NULL or `n` values.
    Ok(unsafe { args::array(keys, n, "keys") }?.iter().map(|&key| target.hash_u64(key)).collect())
}

/// The hashes of `n` signed integer keys.
///
/// # Safety
/// `keys` is NULL or holds `n` values.
pub(crate) unsafe fn hash_i64(target: &impl Target, keys: *const i64, n: usize) -> Result<Vec<u64>, Failure> {
    // SAFETY: the caller promises NULL or `n` values.
    Ok(unsafe { args::array(keys, n, "keys") }?.iter().map(|&key| target.hash_i64(key)).collect())
}

/// Inserts every hash (the filter's batched insert); each status into `results` unless NULL; the
/// first failure, naming its index.
///
/// # Safety
/// `results` is NULL or holds `hashes.len()` writable statuses.
pub(crate) unsafe fn insert(mut target: impl Update, hashes: &[u64], results: *mut bugu_status) -> Outcome {
    let outcomes = target.add_batch(hashes);
    if !results.is_null() {
        // SAFETY: non-NULL, so the caller promises `hashes.len()` writable statuses.
        let results = unsafe { args::array_mut(results, hashes.len(), "results") }?;
        for (result, outcome) in results.iter_mut().zip(&outcomes) {
            *result = match outcome {
                Ok(()) => bugu_status::BUGU_OK,
                Err(error) => Failure::from(*error).0,
            };
        }
    }
    match outcomes.into_iter().enumerate().find_map(|(at, outcome)| Some((at, outcome.err()?))) {
        Some((at, error)) => {
            let Failure(status, message) = error.into();
            Err(Failure(status, format!("key {at} of the batch: {message}")))
        }
        None => Ok(()),
    }
}

/// Looks up every hash (the filter's batched lookup) into `found`.
///
/// # Safety
/// `found` is NULL (refused unless there are no hashes) or holds `hashes.len()` writable bools.
pub(crate) unsafe fn contains(target: impl Target, hashes: &[u64], found: *mut bool) -> Outcome {
    // SAFETY: the caller's promise.
    let found = unsafe { args::array_mut(found, hashes.len(), "the out-parameter `found`") }?;
    found.copy_from_slice(&target.query_contains_batch(hashes));
    Ok(())
}

/// Counts every hash's matches into `counts`.
///
/// # Safety
/// `counts` is NULL (refused unless there are no hashes) or holds `hashes.len()` writable values.
pub(crate) unsafe fn count(target: impl Target, hashes: &[u64], counts: *mut usize) -> Outcome {
    // SAFETY: the caller's promise.
    let counts = unsafe { args::array_mut(counts, hashes.len(), "the out-parameter `counts`") }?;
    for (count, &hash) in counts.iter_mut().zip(hashes) {
        *count = target.query_count(hash);
    }
    Ok(())
}

/// Removes one copy of every hash, in order; whether each was found into `removed` unless NULL.
///
/// # Safety
/// `removed` is NULL or holds `hashes.len()` writable bools.
pub(crate) unsafe fn remove(mut target: impl Update, hashes: &[u64], removed: *mut bool) -> Outcome {
    let mut answers = if removed.is_null() {
        None
    } else {
        // SAFETY: non-NULL, so the caller promises `hashes.len()` writable bools.
        Some(unsafe { args::array_mut(removed, hashes.len(), "the out-parameter `removed`") }?)
    };
    for (at, &hash) in hashes.iter().enumerate() {
        let was_removed = target.delete(hash);
        if let Some(answers) = answers.as_deref_mut() {
            answers[at] = was_removed;
        }
    }
    Ok(())
}
