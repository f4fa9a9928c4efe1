//! The native half of bugu's Java binding: the `static native` methods of `io.github.bugu.Native`,
//! over the core's filters. A Java `CuckooFilter` holds a [`bugu::ConcurrentFilter`] and a
//! `GrowableFilter` an [`AnyFilter`] (a chain of tables) behind a lock; each Java object keeps
//! the address of its handle and makes sure no call uses it after `close`.
//!
//! Keys arrive as bytes (a `String` is encoded to UTF-8 on the Java side: JNI's own strings are
//! "modified UTF-8", which is not UTF-8) or as a `long` (an `int` is widened first), hashed as
//! its 8 bytes little-endian: one key, one meaning, as in every front end of bugu.

pub mod batches;
pub mod files;
mod handle;
pub mod keys;
mod throw;

use bugu::{AnyFilter, CuckooFilter, GrowableFilter, InsertError};
use jni::JNIEnv;
use jni::objects::JClass;
use jni::sys::{JNI_FALSE, JNI_TRUE, jboolean, jdouble, jint, jlong};

use handle::{Handle, HashOps, Key};
use throw::{Thrown, guard, illegal_argument};

/// What `insert` answers Java: stored, not stored (already present, for an add-if-absent), or
/// no room (nothing changed).
const STORED: jint = 1;
const NOT_STORED: jint = 0;
const NO_ROOM: jint = -1;

/// The handle behind a Java object's address.
///
/// # Safety
/// `handle` is 0 (refused) or an address from [`publish`] that `free` has not been given, and
/// the Java object makes sure it is not given to `free` while this call runs.
unsafe fn handle<'a>(handle: jlong) -> Result<&'a Handle, Thrown> {
    // SAFETY: the caller promises 0 or a live handle.
    unsafe { (handle as *const Handle).as_ref() }.ok_or_else(Thrown::closed)
}

/// A new handle's address, for the Java object to keep.
fn publish(handle: Handle) -> jlong {
    Box::into_raw(Box::new(handle)) as jlong
}

fn to_usize(value: jlong, what: &str) -> Result<usize, Thrown> {
    usize::try_from(value).map_err(|_| illegal_argument(format!("{what} must be at least 0, got {value}")))
}

/// Stores an item as `insert` answers it.
fn stored(ops: &mut dyn HashOps, key: Key<'_>, unique: bool) -> Result<jint, Thrown> {
    let hash = ops.hash(key);
    match ops.insert(hash, unique) {
        Ok(true) => Ok(STORED),
        Ok(false) => Ok(NOT_STORED),
        Err(InsertError::OutOfMemory { bytes }) => Err(Thrown::out_of_memory(format!(
            "bugu: {bytes} bytes for the filter's growth could not be allocated"
        ))),
        Err(_) => Ok(NO_ROOM),
    }
}

fn flag(value: bool) -> jboolean {
    if value { JNI_TRUE } else { JNI_FALSE }
}

/// A `CuckooFilter`: `fpr` or `bits` (the other 0; both 0 for the default rate).
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_newCuckoo(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    capacity: jlong,
    fpr: jdouble,
    bits: jint,
    bucket_size: jint,
    seed: jlong,
) -> jlong {
    guard(&mut env, 0, |_| {
        let mut builder = CuckooFilter::builder()
            .capacity(to_usize(capacity, "the capacity")?)
            .bucket_size(usize::try_from(bucket_size).unwrap_or(0))
            .seed(seed as u64);
        match (fpr, bits) {
            (0.0, 0) => {}
            (rate, 0) => builder = builder.false_positive_rate(rate),
            (0.0, bits) => builder = builder.fingerprint_bits(u32::try_from(bits).unwrap_or(0)),
            _ => return Err(illegal_argument("set a false-positive rate or fingerprint bits, not both")),
        }
        let filter = builder.build_concurrent().map_err(illegal_argument)?;
        Ok(publish(Handle::Shared(filter)))
    })
}

/// A `GrowableFilter`: a chain of tables from `initial_capacity`, under `fpr` at every size.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_newGrowable(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    initial_capacity: jlong,
    fpr: jdouble,
    seed: jlong,
) -> jlong {
    guard(&mut env, 0, |_| {
        let filter = GrowableFilter::builder()
            .initial_capacity(to_usize(initial_capacity, "the initial capacity")?)
            .false_positive_rate(fpr)
            .seed(seed as u64)
            .build()
            .map_err(illegal_argument)?;
        Ok(publish(Handle::Locked(AnyFilter::from(filter).into())))
    })
}

/// Frees a handle (the Java object calls this once, when no call uses it).
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_free(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    handle: jlong,
) {
    guard(&mut env, (), |_| {
        if handle != 0 {
            // SAFETY: the Java object gives its address here once, after its last call returned.
            drop(unsafe { Box::from_raw(handle as *mut Handle) });
        }
        Ok(())
    });
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_size(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
) -> jlong {
    guard(&mut env, 0, |_| {
        // SAFETY: as in `query`.
        Ok(unsafe { handle(filter) }?.read(|ops| jlong::try_from(ops.len()).unwrap_or(jlong::MAX)))
    })
}
