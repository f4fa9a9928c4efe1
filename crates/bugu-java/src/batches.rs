//! Native methods on a batch of keys: one call crosses with all of them.

use jni::JNIEnv;
use jni::objects::{JByteArray, JClass, JIntArray, JLongArray};
use jni::sys::{JNI_FALSE, jboolean, jbooleanArray, jint, jlong};

use crate::handle::{Key, ReadOps};
use crate::throw::{Thrown, guard, illegal_argument};
use crate::{STORED, flag, handle, stored};

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
        let keys = values.iter().map(|&value| Key::Long(value));
        answer(env, filter, insert, |ops| ops.contains_longs(&values), keys)
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
        let each = keys.iter().map(|&bytes| Key::Bytes(bytes));
        answer(env, filter, insert, |ops| ops.contains_byte_keys(&keys), each)
    })
}

/// A batch's answers as a Java `boolean[]`: with `insert`, whether each key was stored (one by
/// one); without, `look_up` (the library's batch kernel).
fn answer<'k>(
    env: &mut JNIEnv<'_>,
    filter: jlong,
    insert: jboolean,
    look_up: impl FnOnce(&dyn ReadOps) -> Vec<bool>,
    keys: impl Iterator<Item = Key<'k>>,
) -> Result<jbooleanArray, Thrown> {
    // SAFETY: as in `query`.
    let handle = unsafe { handle(filter) }?;
    let answers: Vec<jboolean> = if insert == JNI_FALSE {
        handle.read(look_up).into_iter().map(flag).collect()
    } else {
        handle.update(|ops| {
            keys.map(|key| stored(ops, key, false).map(|answer| flag(answer == STORED)))
                .collect::<Result<_, _>>()
        })??
    };
    booleans(env, &answers)
}

fn booleans(env: &mut JNIEnv<'_>, answers: &[jboolean]) -> Result<jbooleanArray, Thrown> {
    let len =
        jint::try_from(answers.len()).map_err(|_| illegal_argument("a batch of more than 2^31 keys"))?;
    let array = env.new_boolean_array(len)?;
    env.set_boolean_array_region(&array, 0, answers)?;
    Ok(array.into_raw())
}
