//! The native half of bugu's Java binding: the `static native` methods of `io.github.bugu.Native`,
//! over the core's filters. A Java `CuckooFilter` holds a [`ConcurrentFilter`] and a
//! `GrowableFilter` an [`AnyFilter`] (a chain of tables) behind a lock; each Java object keeps
//! the address of its handle and makes sure no call uses it after `close`.
//!
//! Keys arrive as bytes (a `String` is encoded to UTF-8 on the Java side: JNI's own strings are
//! "modified UTF-8", which is not UTF-8) or as a `long` (an `int` is widened first), hashed as
//! its 8 bytes little-endian: one key, one meaning, as in every front end of bugu.

mod handle;
mod throw;

use std::path::PathBuf;

use bugu::persist::FilterKind;
use bugu::{AnyFilter, AnyView, ConcurrentFilter, CuckooFilter, GrowableFilter, InsertError, Persist};
use jni::JNIEnv;
use jni::objects::{JByteArray, JClass, JIntArray, JLongArray, JString};
use jni::sys::{JNI_FALSE, JNI_TRUE, jboolean, jbooleanArray, jbyteArray, jdouble, jint, jlong};

use handle::{Handle, HashOps, Key, MappedFilter, ReadOps};
use throw::{Thrown, bugu_exception, guard, illegal_argument};

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

/// A key as a native call received it: a `byte[]`, a short `String` or a `long`.
enum Received<'a, 'local> {
    Bytes(&'a JByteArray<'local>),
    Text(&'a JString<'local>),
    Long(jlong),
}

/// The longest `String` the Java side passes as it is (longer ones arrive as their UTF-8
/// bytes): at 3 bytes per UTF-16 unit at most, its UTF-8 fits [`STACK_KEY`].
const STACK_TEXT: usize = STACK_KEY / 3;

/// Runs `op` on the UTF-8 bytes of a short Java `String`, encoded on the stack as Java's own
/// encoder would (`getBytes(UTF_8)`: an unpaired surrogate becomes `?`), so that a `String`
/// key is the same key whichever way it crosses.
fn with_text<R>(env: &mut JNIEnv<'_>, text: &JString<'_>, op: impl FnOnce(&[u8]) -> R) -> Result<R, Thrown> {
    let raw = env.get_raw();
    let missing = || Thrown::from(jni::errors::Error::JNIEnvMethodNotFound("GetStringRegion"));
    // SAFETY: `raw` is this thread's JNI environment, live for the whole native call, and its
    // function table is the JVM's; `text` is a live local reference to a `String` (the Java
    // side passes a non-null one).
    let (length, region) = unsafe {
        ((**raw).GetStringLength.ok_or_else(missing)?, (**raw).GetStringRegion.ok_or_else(missing)?)
    };
    // SAFETY: as above.
    let units = unsafe { length(raw, text.as_raw()) };
    let units = usize::try_from(units).unwrap_or(usize::MAX);
    if units > STACK_TEXT {
        return Err(illegal_argument(format!(
            "a String key of {units} units crossed as text (at most {STACK_TEXT})"
        )));
    }
    let mut utf16 = [0u16; STACK_TEXT];
    // SAFETY: as above; the buffer holds `units` units, the string's whole length.
    unsafe { region(raw, text.as_raw(), 0, units as jint, utf16.as_mut_ptr()) };
    if env.exception_check()? {
        return Err(Thrown::from(jni::errors::Error::JavaException));
    }
    let mut bytes = [0u8; STACK_KEY];
    let mut len = 0;
    for unit in char::decode_utf16(utf16[..units].iter().copied()) {
        len += unit.unwrap_or('?').encode_utf8(&mut bytes[len..]).len();
    }
    Ok(op(&bytes[..len]))
}

/// Keys up to this many bytes are copied out of their Java array onto the stack: most keys are
/// short, and a heap copy per call cost as much as the lookup.
const STACK_KEY: usize = 256;

/// Runs `op` on the bytes of a Java `byte[]`.
fn with_bytes<R>(
    env: &mut JNIEnv<'_>,
    array: &JByteArray<'_>,
    op: impl FnOnce(&[u8]) -> R,
) -> Result<R, Thrown> {
    let len = usize::try_from(env.get_array_length(array)?).unwrap_or(0);
    if len > STACK_KEY {
        return Ok(op(&env.convert_byte_array(array)?));
    }
    let mut signed = [0i8; STACK_KEY];
    env.get_byte_array_region(array, 0, &mut signed[..len])?;
    let mut bytes = [0u8; STACK_KEY];
    for (byte, &value) in bytes.iter_mut().zip(&signed[..len]) {
        *byte = value as u8;
    }
    Ok(op(&bytes[..len]))
}

/// Runs a query on one key.
fn query<T>(
    env: &mut JNIEnv<'_>,
    fallback: T,
    filter: jlong,
    key: Received<'_, '_>,
    op: impl FnOnce(&dyn ReadOps, Key<'_>) -> T,
) -> T {
    guard(env, fallback, |env| {
        // SAFETY: the Java object passes its live handle and keeps it live during the call.
        let handle = unsafe { handle(filter) }?;
        match key {
            Received::Bytes(array) => {
                with_bytes(env, array, |bytes| handle.read(|ops| op(ops, Key::Bytes(bytes))))
            }
            Received::Text(text) => {
                with_text(env, text, |bytes| handle.read(|ops| op(ops, Key::Bytes(bytes))))
            }
            Received::Long(value) => Ok(handle.read(|ops| op(ops, Key::Long(value)))),
        }
    })
}

/// Runs an update on one key.
fn update<T>(
    env: &mut JNIEnv<'_>,
    fallback: T,
    filter: jlong,
    key: Received<'_, '_>,
    op: impl FnOnce(&mut dyn HashOps, Key<'_>) -> Result<T, Thrown>,
) -> T {
    guard(env, fallback, |env| {
        // SAFETY: as in `query`.
        let handle = unsafe { handle(filter) }?;
        match key {
            Received::Bytes(array) => {
                with_bytes(env, array, |bytes| handle.update(|ops| op(ops, Key::Bytes(bytes))))??
            }
            Received::Text(text) => {
                with_text(env, text, |bytes| handle.update(|ops| op(ops, Key::Bytes(bytes))))??
            }
            Received::Long(value) => handle.update(|ops| op(ops, Key::Long(value)))?,
        }
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_insertBytes(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
    key: JByteArray<'_>,
    unique: jboolean,
) -> jint {
    update(&mut env, NO_ROOM, filter, Received::Bytes(&key), |ops, key| stored(ops, key, unique != JNI_FALSE))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_insertText(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
    key: JString<'_>,
    unique: jboolean,
) -> jint {
    update(&mut env, NO_ROOM, filter, Received::Text(&key), |ops, key| stored(ops, key, unique != JNI_FALSE))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_containsText(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
    key: JString<'_>,
) -> jboolean {
    query(&mut env, JNI_FALSE, filter, Received::Text(&key), |ops, key| flag(ops.contains(ops.hash(key))))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_deleteText(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
    key: JString<'_>,
) -> jboolean {
    update(&mut env, JNI_FALSE, filter, Received::Text(&key), |ops, key| {
        let hash = ops.hash(key);
        Ok(flag(ops.remove(hash)))
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_countText(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
    key: JString<'_>,
) -> jint {
    query(&mut env, 0, filter, Received::Text(&key), |ops, key| saturate(ops.count(ops.hash(key))))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_insertLong(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
    key: jlong,
    unique: jboolean,
) -> jint {
    update(&mut env, NO_ROOM, filter, Received::Long(key), |ops, key| stored(ops, key, unique != JNI_FALSE))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_containsBytes(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
    key: JByteArray<'_>,
) -> jboolean {
    query(&mut env, JNI_FALSE, filter, Received::Bytes(&key), |ops, key| flag(ops.contains(ops.hash(key))))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_containsLong(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
    key: jlong,
) -> jboolean {
    query(&mut env, JNI_FALSE, filter, Received::Long(key), |ops, key| flag(ops.contains(ops.hash(key))))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_deleteBytes(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
    key: JByteArray<'_>,
) -> jboolean {
    update(&mut env, JNI_FALSE, filter, Received::Bytes(&key), |ops, key| {
        let hash = ops.hash(key);
        Ok(flag(ops.remove(hash)))
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_deleteLong(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
    key: jlong,
) -> jboolean {
    update(&mut env, JNI_FALSE, filter, Received::Long(key), |ops, key| {
        let hash = ops.hash(key);
        Ok(flag(ops.remove(hash)))
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_countBytes(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
    key: JByteArray<'_>,
) -> jint {
    query(&mut env, 0, filter, Received::Bytes(&key), |ops, key| saturate(ops.count(ops.hash(key))))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_countLong(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
    key: jlong,
) -> jint {
    query(&mut env, 0, filter, Received::Long(key), |ops, key| saturate(ops.count(ops.hash(key))))
}

fn saturate(count: usize) -> jint {
    jint::try_from(count).unwrap_or(jint::MAX)
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

/// Looks up (or, with `insert`, stores) every `long` of `keys` in one native call; each answer
/// as a `boolean`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_longs(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
    keys: JLongArray<'_>,
    insert: jboolean,
) -> jbooleanArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let len = env.get_array_length(&keys)?;
        let mut values = vec![0; usize::try_from(len).unwrap_or(0)];
        env.get_long_array_region(&keys, 0, &mut values)?;
        // SAFETY: as in `query`.
        let handle = unsafe { handle(filter) }?;
        let answers = if insert == JNI_FALSE {
            handle.read(|ops| ops.contains_longs(&values)).into_iter().map(flag).collect()
        } else {
            inserted_all(handle, values.iter().map(|&value| Key::Long(value)))?
        };
        booleans(env, &answers)
    })
}

/// [`Java_io_github_bugu_Native_longs`] for keys given as bytes, all in one array: key `i` is
/// `data[ends[i - 1]..ends[i]]` (from 0 for the first), so the batch crosses in two copies.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_flat(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
    data: JByteArray<'_>,
    ends: JIntArray<'_>,
    insert: jboolean,
) -> jbooleanArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let data = env.convert_byte_array(&data)?;
        let mut bounds = vec![0; usize::try_from(env.get_array_length(&ends)?).unwrap_or(0)];
        env.get_int_array_region(&ends, 0, &mut bounds)?;
        let mut keys = Vec::with_capacity(bounds.len());
        let mut start = 0;
        for &end in &bounds {
            let end = usize::try_from(end).ok().filter(|&end| end >= start && end <= data.len());
            let end = end
                .ok_or_else(|| illegal_argument("the batch's key ends are not in order within its bytes"))?;
            keys.push(&data[start..end]);
            start = end;
        }
        // SAFETY: as in `query`.
        let handle = unsafe { handle(filter) }?;
        let answers = if insert == JNI_FALSE {
            handle.read(|ops| ops.contains_byte_keys(&keys)).into_iter().map(flag).collect()
        } else {
            inserted_all(handle, keys.iter().map(|&bytes| Key::Bytes(bytes)))?
        };
        booleans(env, &answers)
    })
}

/// Stores every key: whether each was stored.
fn inserted_all<'k>(handle: &Handle, keys: impl Iterator<Item = Key<'k>>) -> Result<Vec<jboolean>, Thrown> {
    handle.update(|ops| {
        keys.map(|key| stored(ops, key, false).map(|answer| flag(answer == STORED))).collect()
    })?
}

fn booleans(env: &mut JNIEnv<'_>, answers: &[jboolean]) -> Result<jbooleanArray, Thrown> {
    let len =
        jint::try_from(answers.len()).map_err(|_| illegal_argument("a batch of more than 2^31 keys"))?;
    let array = env.new_boolean_array(len)?;
    env.set_boolean_array_region(&array, 0, answers)?;
    Ok(array.into_raw())
}

/// The filter's bytes in bugu's persistent format.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_toBytes(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
) -> jbyteArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: as in `query`.
        let bytes = unsafe { handle(filter) }?.to_bytes();
        Ok(env.byte_array_from_slice(&bytes)?.into_raw())
    })
}

/// Writes the filter to a file atomically.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_save(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
    path: JString<'_>,
) {
    guard(&mut env, (), |env| {
        let path = PathBuf::from(String::from(env.get_string(&path)?));
        // SAFETY: as in `query`.
        unsafe { handle(filter) }?.save(&path)
    });
}

/// A filter of the Java class's kind from bytes (`growable` for a `GrowableFilter`).
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_fromBytes(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    bytes: JByteArray<'_>,
    growable: jboolean,
) -> jlong {
    guard(&mut env, 0, |env| {
        let bytes = env.convert_byte_array(&bytes)?;
        read(&bytes, growable != JNI_FALSE).map(publish)
    })
}

/// A filter of the Java class's kind from a file.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_load(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    path: JString<'_>,
    growable: jboolean,
) -> jlong {
    guard(&mut env, 0, |env| {
        let path = PathBuf::from(String::from(env.get_string(&path)?));
        let bytes =
            std::fs::read(&path).map_err(|error| bugu_exception(format!("{}: {error}", path.display())))?;
        read(&bytes, growable != JNI_FALSE).map(publish)
    })
}

/// A handle from a filter's bytes: a fixed filter for a `CuckooFilter`, a filter that grows for a
/// `GrowableFilter`.
fn read(bytes: &[u8], growable: bool) -> Result<Handle, Thrown> {
    if !growable {
        return ConcurrentFilter::from_bytes(bytes).map(Handle::Shared).map_err(bugu_exception);
    }
    let filter = AnyFilter::from_bytes(bytes).map_err(bugu_exception)?;
    if filter.kind() == FilterKind::Cuckoo {
        return Err(bugu_exception(
            "these bytes hold a fixed-size filter: read them with CuckooFilter.fromByteArray",
        ));
    }
    Ok(Handle::Locked(filter.into()))
}

/// A filter file of any kind mapped read-only (`FilterView.open`): a fixed-size filter and a
/// filter in one table are queried in place, a chain of tables is read into memory.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_open(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    path: JString<'_>,
) -> jlong {
    guard(&mut env, 0, |env| {
        let path = PathBuf::from(String::from(env.get_string(&path)?));
        let failed = |error: std::io::Error| bugu_exception(format!("{}: {error}", path.display()));
        let file = std::fs::File::open(&path).map_err(failed)?;
        if file.metadata().map_err(failed)?.is_dir() {
            return Err(failed(std::io::Error::from(std::io::ErrorKind::IsADirectory)));
        }
        // SAFETY: the map is read-only and private to this handle. bugu never writes a filter
        // file in place (a save renames a new file over the name, leaving this map on the old
        // one); another program truncating or rewriting the file while it is mapped is outside
        // what a mapping can guard against, as with the `bugu` command's and Python's maps.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(failed)?;
        let file = MappedFilter::try_new(map, |map| AnyView::from_bytes(map)).map_err(bugu_exception)?;
        Ok(publish(Handle::View(file)))
    })
}
