//! The Redis data type of a filter key: how Redis saves, loads, rewrites, copies, measures and
//! frees a [`CfValue`]. All of it goes through the value's one saved form.
//!
//! This module and the module's entry point are the only places that hand values to Redis or take
//! them back as raw pointers.

use std::ffi::{CString, c_int, c_longlong, c_void};

use redis_module::native_types::RedisType;
use redis_module::raw::{self, ModuleOptions};
use redis_module::{Context, RedisString, Status};

use crate::value::CfValue;
use crate::value::saved::Encoding;

/// The type's name in RDB files: exactly 9 characters, as Redis requires.
pub(crate) const TYPE_NAME: &str = "bugu-cf01";

pub(crate) static CF_TYPE: RedisType = RedisType::new(
    TYPE_NAME,
    Encoding::CURRENT,
    raw::RedisModuleTypeMethods {
        version: raw::REDISMODULE_TYPE_METHOD_VERSION as u64,
        rdb_load: Some(rdb_load),
        rdb_save: Some(rdb_save),
        aof_rewrite: Some(aof_rewrite),
        mem_usage: Some(mem_usage),
        digest: Some(digest),
        free: Some(free),
        aux_load: None,
        aux_save: None,
        aux_save2: None,
        aux_save_triggers: 0,
        free_effort: None,
        unlink: None,
        copy: Some(copy),
        defrag: None,
        copy2: None,
        free_effort2: None,
        mem_usage2: None,
        unlink2: None,
    },
);

/// Called when the module loads: a short or corrupt string in an RDB file or a `RESTORE` payload
/// then comes back to `rdb_load` as an error (which refuses the value) instead of stopping the
/// server.
pub(crate) fn handle_io_errors(ctx: &Context, _args: &[RedisString]) -> Status {
    ctx.set_module_options(ModuleOptions::HANDLE_IO_ERRORS);
    Status::Ok
}

/// The value behind a pointer Redis hands back.
///
/// # Safety
/// `value` must be a pointer this module gave Redis (`Box<CfValue>` turned raw by `set_value`,
/// `rdb_load` or `copy`) and not yet freed.
unsafe fn value_ref<'a>(value: *const c_void) -> &'a CfValue {
    // SAFETY: guaranteed by the caller: a live `Box<CfValue>`'s pointer.
    unsafe { &*value.cast::<CfValue>() }
}

extern "C" fn rdb_load(rdb: *mut raw::RedisModuleIO, encoding_version: c_int) -> *mut c_void {
    // A null pointer makes Redis refuse the RDB (or the RESTORE payload) instead of loading it.
    let Some(encoding) = Encoding::of_version(encoding_version) else {
        return std::ptr::null_mut();
    };
    let Ok(buffer) = raw::load_string_buffer(rdb) else {
        return std::ptr::null_mut();
    };
    match CfValue::from_saved(buffer.as_ref(), encoding) {
        Some(value) => Box::into_raw(Box::new(value)).cast(),
        None => std::ptr::null_mut(),
    }
}

extern "C" fn rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    // SAFETY: Redis passes a value of this type.
    let value = unsafe { value_ref(value) };
    raw::save_slice(rdb, &value.to_saved());
}

/// Rewrites a key as the `CF.LOADCHUNK` commands that restore it.
extern "C" fn aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    // SAFETY: Redis passes a value of this type.
    let value = unsafe { value_ref(value) };
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

extern "C" fn mem_usage(value: *const c_void) -> usize {
    // SAFETY: Redis passes a value of this type.
    unsafe { value_ref(value) }.memory_usage()
}

extern "C" fn digest(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    // SAFETY: Redis passes a value of this type.
    let saved = unsafe { value_ref(value) }.to_saved();
    // SAFETY: the API table is filled once when the module loads, before any callback runs.
    let (Some(add), Some(end)) =
        (unsafe { (raw::RedisModule_DigestAddStringBuffer, raw::RedisModule_DigestEndSequence) })
    else {
        return;
    };
    // SAFETY: `md` is the digest Redis passed; the buffer is valid for its length during the call.
    unsafe {
        add(md, saved.as_ptr().cast(), saved.len());
        end(md);
    }
}

extern "C" fn copy(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    // SAFETY: Redis passes a value of this type.
    let value = unsafe { value_ref(value) };
    Box::into_raw(Box::new(value.clone())).cast()
}

extern "C" fn free(value: *mut c_void) {
    // SAFETY: Redis frees each value once, and every value is a `Box<CfValue>` made raw.
    drop(unsafe { Box::from_raw(value.cast::<CfValue>()) });
}
