//! A key opened by its name as Redis passed it: how every command reaches its filter.
//!
//! The `redis-module` crate's key types ask Redis for the key's type twice on every access (once
//! to tell an empty key, once more to check the module type) and wrap each answer in conversions:
//! about as many instructions as the filter's own lookup. Here each access is the three calls
//! Redis needs: the key's type, its module type, its value.

use std::ffi::c_void;

use redis_module::native_types::RedisType;
use redis_module::{Context, RedisError, raw};

use crate::datatype::{CF_TYPE, REDISBLOOM_TYPE};
use crate::error::CfError;
use crate::redisbloom::RedisBloomFilter;
use crate::stored::{KeyValue, NewValue};
use crate::value::CfValue;

/// An open key; closed when dropped.
pub(crate) struct OpenKey {
    key: *mut raw::RedisModuleKey,
}

impl OpenKey {
    /// Opens the key named `name` for reading (`write: false`) or for reading and writing.
    pub(crate) fn open(ctx: &Context, name: *mut raw::RedisModuleString, write: bool) -> Self {
        let mode = if write { raw::KeyMode::READ | raw::KeyMode::WRITE } else { raw::KeyMode::READ };
        Self { key: raw::open_key(ctx.ctx, name, mode) }
    }

    /// The value under the key, of either type; `None` if the key is empty.
    ///
    /// The reference is Redis's value, valid while the key stays open and unchanged; the commands
    /// use it within the call that opened the key, as the crate's `get_value` does.
    pub(crate) fn value(&self) -> Result<Option<KeyValue<'_>>, CfError> {
        // SAFETY: the API table is filled when the module loads; `self.key` is an open key (or
        // null for a missing key opened for reading, which Redis reports as empty).
        let (Some(key_type), Some(module_type), Some(get_value)) = (unsafe {
            (
                raw::RedisModule_KeyType,
                raw::RedisModule_ModuleTypeGetType,
                raw::RedisModule_ModuleTypeGetValue,
            )
        }) else {
            return Err(CfError::WrongType);
        };
        // SAFETY: as above.
        match unsafe { key_type(self.key) } as isize {
            raw::REDISMODULE_KEYTYPE_EMPTY => return Ok(None),
            raw::REDISMODULE_KEYTYPE_MODULE => {}
            _ => return Err(CfError::WrongType),
        }
        // SAFETY: as above; the key holds a module value.
        let found = unsafe { module_type(self.key) };
        let bugu = found == *CF_TYPE.raw_type.borrow();
        if !bugu && (found.is_null() || found != *REDISBLOOM_TYPE.raw_type.borrow()) {
            return Err(CfError::WrongType);
        }
        // SAFETY: as above; the key holds a value of one of this module's types.
        let value = unsafe { get_value(self.key) };
        Ok(Some(if bugu {
            // SAFETY: a key of bugu's type holds a `Box<CfValue>` made raw by `set_value`,
            // `rdb_load` or `copy`, alive while the key holds it.
            KeyValue::Bugu(unsafe { &mut *value.cast::<CfValue>() })
        } else {
            // SAFETY: likewise, a key of RedisBloom's type holds a `Box<RedisBloomFilter>`.
            KeyValue::RedisBloom(unsafe { &mut *value.cast::<RedisBloomFilter>() })
        }))
    }

    /// Stores a value under the writable key, as the type its variant names; Redis frees the value
    /// it held, if any (a restore restarted by a new header chunk).
    pub(crate) fn set_value(&self, value: NewValue) -> Result<(), RedisError> {
        match value {
            NewValue::Bugu(value) => self.set_typed(&CF_TYPE, value),
            NewValue::RedisBloom(filter) => self.set_typed(&REDISBLOOM_TYPE, filter),
        }
    }

    fn set_typed<T>(&self, redis_type: &RedisType, value: T) -> Result<(), RedisError> {
        // SAFETY: the API table is filled when the module loads.
        let Some(set_value) = (unsafe { raw::RedisModule_ModuleTypeSetValue }) else {
            return Err(RedisError::Str("ERR the module API is missing"));
        };
        let raw_type = *redis_type.raw_type.borrow();
        if raw_type.is_null() {
            // A type not registered (RedisBloom's, with the takeover off).
            return Err(CfError::WrongType.into());
        }
        let value = Box::into_raw(Box::new(value));
        // SAFETY: `self.key` is open for writing; on success Redis owns the box and frees it
        // through the type's `free`, which drops a `Box<T>` (`datatype` pairs each type with the
        // Rust type of its values).
        let status = unsafe { set_value(self.key, raw_type, value.cast::<c_void>()) };
        if status == raw::REDISMODULE_OK as i32 {
            Ok(())
        } else {
            // SAFETY: Redis refused the value and did not take it: the box is still ours.
            drop(unsafe { Box::from_raw(value) });
            Err(CfError::WrongType.into())
        }
    }
}

impl Drop for OpenKey {
    fn drop(&mut self) {
        if !self.key.is_null() {
            raw::close_key(self.key);
        }
    }
}
