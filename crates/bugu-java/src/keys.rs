//! Native methods on one key: how a key crosses (bytes, a short `String`, a `long`) and the
//! four operations on it, for each form of key.

use jni::JNIEnv;
use jni::objects::{JByteArray, JClass, JString};
use jni::sys::{JNI_FALSE, jboolean, jint, jlong};

use crate::handle::{HashOps, Key, ReadOps};
use crate::throw::{Thrown, guard, illegal_argument};
use crate::{NO_ROOM, flag, handle, stored};

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

/// What a native method's key argument is, as [`query`] and [`update`] take it.
trait Receive {
    fn received(&self) -> Received<'_, '_>;
}

impl Receive for JByteArray<'_> {
    fn received(&self) -> Received<'_, '_> {
        Received::Bytes(self)
    }
}

impl Receive for JString<'_> {
    fn received(&self) -> Received<'_, '_> {
        Received::Text(self)
    }
}

impl Receive for jlong {
    fn received(&self) -> Received<'_, '_> {
        Received::Long(*self)
    }
}

/// The four key operations for one form of key (`byte[]`, `String`, `long`): JNI wants a
/// function per native method, and each is the same call on another key type.
macro_rules! key_operations {
    ($key:ty => $insert:ident, $contains:ident, $delete:ident, $count:ident) => {
        #[unsafe(no_mangle)]
        pub extern "system" fn $insert(
            mut env: JNIEnv<'_>,
            _class: JClass<'_>,
            filter: jlong,
            key: $key,
            unique: jboolean,
        ) -> jint {
            update(&mut env, NO_ROOM, filter, key.received(), |ops, key| {
                stored(ops, key, unique != JNI_FALSE)
            })
        }

        #[unsafe(no_mangle)]
        pub extern "system" fn $contains(
            mut env: JNIEnv<'_>,
            _class: JClass<'_>,
            filter: jlong,
            key: $key,
        ) -> jboolean {
            query(&mut env, JNI_FALSE, filter, key.received(), |ops, key| flag(ops.contains(ops.hash(key))))
        }

        #[unsafe(no_mangle)]
        pub extern "system" fn $delete(
            mut env: JNIEnv<'_>,
            _class: JClass<'_>,
            filter: jlong,
            key: $key,
        ) -> jboolean {
            update(&mut env, JNI_FALSE, filter, key.received(), |ops, key| {
                let hash = ops.hash(key);
                Ok(flag(ops.remove(hash)))
            })
        }

        #[unsafe(no_mangle)]
        pub extern "system" fn $count(
            mut env: JNIEnv<'_>,
            _class: JClass<'_>,
            filter: jlong,
            key: $key,
        ) -> jint {
            query(&mut env, 0, filter, key.received(), |ops, key| saturate(ops.count(ops.hash(key))))
        }
    };
}

key_operations!(JByteArray<'_> => Java_io_github_bugu_Native_insertBytes, Java_io_github_bugu_Native_containsBytes,
    Java_io_github_bugu_Native_deleteBytes, Java_io_github_bugu_Native_countBytes);
key_operations!(JString<'_> => Java_io_github_bugu_Native_insertText, Java_io_github_bugu_Native_containsText,
    Java_io_github_bugu_Native_deleteText, Java_io_github_bugu_Native_countText);
key_operations!(jlong => Java_io_github_bugu_Native_insertLong, Java_io_github_bugu_Native_containsLong,
    Java_io_github_bugu_Native_deleteLong, Java_io_github_bugu_Native_countLong);

fn saturate(count: usize) -> jint {
    jint::try_from(count).unwrap_or(jint::MAX)
}
