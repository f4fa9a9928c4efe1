//! What each command does with its key, declared to Redis as the command's key spec. Redis checks
//! a user's ACL key permissions (`%R~pattern`, `%W~pattern`) against it and reports it in
//! `COMMAND INFO`. A module command without one gets Redis's default (read, write and update its
//! key), which would ask a read-only user for write permission even for `CF.EXISTS`.
//!
//! The `redis-module` crate declares key specs only for the commands registered through its
//! `#[command]` attribute, and that registration also sets ACL categories, which Redis 7.0's
//! module API lacks (7.2 and later): it would refuse to load there. So the commands are
//! registered as before and their key specs set here, through `RedisModule_SetCommandInfo`
//! (Redis 7.0 and later), with the crate's own key spec types.

use std::ffi::CString;
use std::mem::size_of;
use std::ptr;

use redis_module::commands::{BeginSearch, FindKeys, KeySpec, KeySpecFlags, get_redis_key_spec};
use redis_module::{Context, Status, raw};

/// Reads the filter and answers from its content (`CF.EXISTS`, `CF.MEXISTS`, `CF.COUNT`,
/// `CF.SCANDUMP`).
pub(crate) const READ: KeySpecFlags = KeySpecFlags::READ_ONLY.union(KeySpecFlags::ACCESS);
/// Reads only the filter's counters and settings (`CF.INFO`).
pub(crate) const READ_METADATA: KeySpecFlags = KeySpecFlags::READ_ONLY;
/// Adds items (`CF.ADD`, `CF.ADDNX`, `CF.INSERT`, `CF.INSERTNX`).
pub(crate) const INSERT: KeySpecFlags = KeySpecFlags::READ_WRITE.union(KeySpecFlags::INSERT);
/// Creates the key, only if it is empty (`CF.RESERVE`).
pub(crate) const CREATE: KeySpecFlags = KeySpecFlags::OVERWRITE.union(KeySpecFlags::INSERT);
/// Removes items (`CF.DEL`).
pub(crate) const DELETE: KeySpecFlags = KeySpecFlags::READ_WRITE.union(KeySpecFlags::DELETE);
/// Writes the key's value from the client's bytes (`CF.LOADCHUNK`, as `RESTORE`).
pub(crate) const RESTORE: KeySpecFlags = KeySpecFlags::OVERWRITE.union(KeySpecFlags::UPDATE);

/// The layout of the structures handed to `RedisModule_SetCommandInfo`, as this build knows them.
static INFO_VERSION: raw::RedisModuleCommandInfoVersion = raw::RedisModuleCommandInfoVersion {
    version: 1,
    sizeof_historyentry: size_of::<raw::RedisModuleCommandHistoryEntry>(),
    sizeof_keyspec: size_of::<raw::RedisModuleCommandKeySpec>(),
    sizeof_arg: size_of::<raw::RedisModuleCommandArg>(),
};

/// Sets each registered command's one key spec: its key is the first argument.
pub(crate) fn declare(ctx: &Context, commands: &[(&str, KeySpecFlags)]) -> Status {
    // SAFETY: the API table is filled when the module loads, before its init runs.
    let (Some(get_command), Some(set_info)) =
        (unsafe { (raw::RedisModule_GetCommand, raw::RedisModule_SetCommandInfo) })
    else {
        ctx.log_warning("bugu: this Redis cannot declare key specs (Redis 7.0 or later is needed)");
        return Status::Err;
    };
    for (name, flags) in commands {
        let Ok(c_name) = CString::new(*name) else {
            return Status::Err;
        };
        // SAFETY: called while the module loads, with a NUL-terminated name.
        let command = unsafe { get_command(ctx.ctx, c_name.as_ptr()) };
        let flags = KeySpecFlags::from_bits_retain(flags.bits());
        let spec = KeySpec::new(None, flags, BeginSearch::new_index(1), FindKeys::new_range(0, 1, 0));
        // Ends with the zeroed spec Redis expects; no notes or keywords, so nothing to free.
        let mut specs = get_redis_key_spec(vec![spec]);
        let info = raw::RedisModuleCommandInfo {
            version: &INFO_VERSION,
            summary: ptr::null(),
            complexity: ptr::null(),
            since: ptr::null(),
            history: ptr::null_mut(),
            tips: ptr::null(),
            arity: 0,
            key_specs: specs.as_mut_ptr(),
            args: ptr::null_mut(),
        };
        // SAFETY: `command` is checked; `info` and the specs it points to outlive the call, and
        // Redis copies what it keeps.
        if command.is_null() || unsafe { set_info(command, &info) } != raw::Status::Ok as i32 {
            ctx.log_warning(&format!("bugu: could not declare the key spec of {name}"));
            return Status::Err;
        }
    }
    Status::Ok
}
