//! The module's two Redis data types: bugu's own (`bugu-cf01`, a [`CfValue`]) and RedisBloom's
//! (`MBbloomCF`, a [`RedisBloomFilter`], registered unless the takeover is off). For each, how
//! Redis saves, loads, rewrites, copies, measures and frees a value: the callbacks are written
//! once, over [`StoredValue`], and each type is those callbacks for its own Rust type.
//!
//! This module and the module's entry point are the only places that hand values to Redis or take
//! them back as raw pointers.

use std::ffi::{CString, c_int, c_longlong, c_void};

use redis_module::native_types::RedisType;
use redis_module::raw::{self, ModuleOptions};
use redis_module::{Context, RedisString, Status};

use crate::alloc::block_size;
use crate::redisbloom::saved::{FieldSink, FieldSource};
use crate::redisbloom::{self, RedisBloomFilter};
use crate::value::CfValue;
use crate::value::saved::Encoding;

/// What a value of one of the module's types does for Redis.
trait StoredValue: Clone + Sized {
    /// A value from its RDB form in `version`; `None` refuses it (and the RDB or payload).
    fn load(rdb: *mut raw::RedisModuleIO, version: c_int) -> Option<Self>;
    fn save(&self, rdb: *mut raw::RedisModuleIO);
    /// The `CF.LOADCHUNK` commands that restore the value: `(iterator, data)`.
    fn for_each_restore_chunk(&self, emit: impl FnMut(i64, &[u8]));
    fn memory_usage(&self) -> usize;
    /// Feeds the value's content to a digest.
    fn digest(&self, add: impl FnMut(&[u8]));
}

impl StoredValue for CfValue {
    fn load(rdb: *mut raw::RedisModuleIO, version: c_int) -> Option<Self> {
        let encoding = Encoding::of_version(version)?;
        let buffer = raw::load_string_buffer(rdb).ok()?;
        CfValue::from_saved(buffer.as_ref(), encoding)
    }

    fn save(&self, rdb: *mut raw::RedisModuleIO) {
        raw::save_slice(rdb, &self.to_saved());
    }

    fn for_each_restore_chunk(&self, emit: impl FnMut(i64, &[u8])) {
        CfValue::for_each_restore_chunk(self, emit);
    }

    fn memory_usage(&self) -> usize {
        CfValue::memory_usage(self)
    }

    fn digest(&self, mut add: impl FnMut(&[u8])) {
        add(&self.to_saved());
    }
}

/// RDB fields read from or written to Redis.
struct Rdb(*mut raw::RedisModuleIO);

impl FieldSource for Rdb {
    fn unsigned(&mut self) -> Option<u64> {
        raw::load_unsigned(self.0).ok()
    }

    fn bytes(&mut self) -> Option<Vec<u8>> {
        let buffer = raw::load_string_buffer(self.0).ok()?;
        let mut bytes = Vec::new();
        bytes.try_reserve_exact(buffer.as_ref().len()).ok()?;
        bytes.extend_from_slice(buffer.as_ref());
        Some(bytes)
    }
}

impl FieldSink for Rdb {
    fn unsigned(&mut self, value: u64) {
        raw::save_unsigned(self.0, value);
    }

    fn bytes(&mut self, bytes: &[u8]) {
        raw::save_slice(self.0, bytes);
    }
}

/// A digest fed field by field.
struct Digest<F: FnMut(&[u8])>(F);

impl<F: FnMut(&[u8])> FieldSink for Digest<F> {
    fn unsigned(&mut self, value: u64) {
        (self.0)(&value.to_le_bytes());
    }

    fn bytes(&mut self, bytes: &[u8]) {
        (self.0)(bytes);
    }
}

impl StoredValue for RedisBloomFilter {
    fn load(rdb: *mut raw::RedisModuleIO, version: c_int) -> Option<Self> {
        RedisBloomFilter::load(&mut Rdb(rdb), version)
    }

    fn save(&self, rdb: *mut raw::RedisModuleIO) {
        RedisBloomFilter::save(self, &mut Rdb(rdb));
    }

    fn for_each_restore_chunk(&self, emit: impl FnMut(i64, &[u8])) {
        RedisBloomFilter::for_each_restore_chunk(self, emit);
    }

    fn memory_usage(&self) -> usize {
        block_size(std::mem::size_of::<Self>()) + self.heap_bytes()
    }

    fn digest(&self, add: impl FnMut(&[u8])) {
        RedisBloomFilter::save(self, &mut Digest(add));
    }
}

/// The callbacks of a type whose values are `T`.
const fn methods<T: StoredValue>() -> raw::RedisModuleTypeMethods {
    raw::RedisModuleTypeMethods {
        version: raw::REDISMODULE_TYPE_METHOD_VERSION as u64,
        rdb_load: Some(rdb_load::<T>),
        rdb_save: Some(rdb_save::<T>),
        aof_rewrite: Some(aof_rewrite::<T>),
        mem_usage: Some(mem_usage::<T>),
        digest: Some(digest::<T>),
        free: Some(free::<T>),
        aux_load: None,
        aux_save: None,
        aux_save2: None,
        aux_save_triggers: 0,
        free_effort: None,
        unlink: None,
        copy: Some(copy::<T>),
        defrag: None,
        copy2: None,
        free_effort2: None,
        mem_usage2: None,
        unlink2: None,
    }
}

/// bugu's type: its name in RDB files is exactly 9 characters, as Redis requires.
pub(crate) static CF_TYPE: RedisType = RedisType::new("bugu-cf01", Encoding::CURRENT, methods::<CfValue>());

/// RedisBloom's type, under RedisBloom's name and encoding version, so that its RDB files and
/// payloads load here and the values saved here load in RedisBloom.
pub(crate) static REDISBLOOM_TYPE: RedisType =
    RedisType::new("MBbloomCF", redisbloom::ENCODING_VERSION, methods::<RedisBloomFilter>());

/// Called when the module loads: a short or corrupt string in an RDB file or a `RESTORE` payload
/// then comes back to `rdb_load` as an error (which refuses the value) instead of stopping the
/// server. RedisBloom's type is registered here, unless the takeover is off.
pub(crate) fn init(ctx: &Context, _args: &[RedisString]) -> Status {
    ctx.set_module_options(ModuleOptions::HANDLE_IO_ERRORS);
    if redisbloom::takeover_enabled() && REDISBLOOM_TYPE.create_data_type(ctx.ctx).is_err() {
        ctx.log_warning("bugu: could not register RedisBloom's type MBbloomCF (is RedisBloom loaded too?)");
        return Status::Err;
    }
    Status::Ok
}

/// The value behind a pointer Redis hands back.
///
/// # Safety
/// `value` must be a pointer this module gave Redis as a `Box<T>` made raw (by `set_value`,
/// `rdb_load` or `copy`, under the type whose callbacks are `T`'s) and not yet freed.
unsafe fn value_ref<'a, T>(value: *const c_void) -> &'a T {
    // SAFETY: guaranteed by the caller: a live `Box<T>`'s pointer.
    unsafe { &*value.cast::<T>() }
}

extern "C" fn rdb_load<T: StoredValue>(rdb: *mut raw::RedisModuleIO, encoding_version: c_int) -> *mut c_void {
    // A null pointer makes Redis refuse the RDB (or the RESTORE payload) instead of loading it.
    match T::load(rdb, encoding_version) {
        Some(value) => Box::into_raw(Box::new(value)).cast(),
        None => std::ptr::null_mut(),
    }
}

extern "C" fn rdb_save<T: StoredValue>(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    // SAFETY: Redis passes a value of this type.
    unsafe { value_ref::<T>(value) }.save(rdb);
}

/// Rewrites a key as the `CF.LOADCHUNK` commands that restore it.
extern "C" fn aof_rewrite<T: StoredValue>(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    // SAFETY: Redis passes a value of this type.
    let value = unsafe { value_ref::<T>(value) };
    let command = CString::new("CF.LOADCHUNK").expect("no NUL");
    let format = CString::new("slb").expect("no NUL");
    // SAFETY: the API table is filled once when the module loads, before any callback runs.
    let Some(emit) = (unsafe { raw::RedisModule_EmitAOF }) else {
        return;
    };
    value.for_each_restore_chunk(|iterator, data| {
        // SAFETY: the format "slb" reads, in order, a module string (the key Redis passed), a long
        // long, and a buffer given as pointer and length (`data` outlives the call).
        unsafe {
            emit(
                aof,
                command.as_ptr(),
                format.as_ptr(),
                key,
                iterator as c_longlong,
                data.as_ptr(),
                data.len(),
            );
        }
    });
}

extern "C" fn mem_usage<T: StoredValue>(value: *const c_void) -> usize {
    // SAFETY: Redis passes a value of this type.
    unsafe { value_ref::<T>(value) }.memory_usage()
}

extern "C" fn digest<T: StoredValue>(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    // SAFETY: the API table is filled once when the module loads, before any callback runs.
    let (Some(add), Some(end)) =
        (unsafe { (raw::RedisModule_DigestAddStringBuffer, raw::RedisModule_DigestEndSequence) })
    else {
        return;
    };
    // SAFETY: Redis passes a value of this type.
    unsafe { value_ref::<T>(value) }.digest(|bytes| {
        // SAFETY: `md` is the digest Redis passed; the buffer is valid for its length during the
        // call.
        unsafe { add(md, bytes.as_ptr().cast_mut().cast(), bytes.len()) };
    });
    // SAFETY: as above.
    unsafe { end(md) };
}

extern "C" fn copy<T: StoredValue>(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    // SAFETY: Redis passes a value of this type.
    let value = unsafe { value_ref::<T>(value) };
    Box::into_raw(Box::new(value.clone())).cast()
}

extern "C" fn free<T: StoredValue>(value: *mut c_void) {
    // SAFETY: Redis frees each value once, and every value of this type is a `Box<T>` made raw.
    drop(unsafe { Box::from_raw(value.cast::<T>()) });
}
