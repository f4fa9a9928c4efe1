//! `CF.ADD`, `CF.ADDNX`, `CF.EXISTS` and `CF.MEXISTS`, registered with Redis directly rather than
//! through the `redis-module` crate's command table.
//!
//! The crate's wrapper hands a handler its arguments as a `Vec` of retained strings: an
//! allocation, and a retain and a release per argument, on every call. For these one-item
//! commands, the ones clients send by the million, that bookkeeping cost as much as the filter's
//! own work. Here the handler gets the key's name as Redis passed it and the item as a borrowed
//! slice, valid for the call, and nothing is allocated but what Redis itself needs to open the key.

use std::ffi::{CStr, c_int};

use redis_module::{Context, RedisError, RedisResult, RedisString, Status, raw};

use crate::commands;
use crate::keyspecs::{self, KeySpecFlags};

/// A handler of `COMMAND key item`: the key's name as Redis passed it, the item's bytes.
type KeyItemHandler = fn(&Context, *mut raw::RedisModuleString, &[u8]) -> RedisResult;
/// A handler of `COMMAND key item...`: the key's name and the items (at least one) as Redis
/// passed them.
type KeyItemsHandler =
    fn(&Context, *mut raw::RedisModuleString, &[*mut raw::RedisModuleString]) -> RedisResult;

/// The commands, with the flags Redis knows them by (first key, last key and key step are 1) and
/// their key specs.
const COMMANDS: [(&CStr, raw::RedisModuleCmdFunc, &CStr, KeySpecFlags); 4] = [
    (c"CF.ADD", Some(add), c"write deny-oom", keyspecs::INSERT),
    (c"CF.ADDNX", Some(add_nx), c"write deny-oom", keyspecs::INSERT),
    (c"CF.EXISTS", Some(exists), c"readonly fast", keyspecs::READ),
    (c"CF.MEXISTS", Some(mexists), c"readonly fast", keyspecs::READ),
];

/// Registers the commands and declares their key specs; called once while the module loads.
pub(crate) fn register(ctx: &Context) -> Status {
    // SAFETY: the API table is filled before the module's init runs.
    let Some(create) = (unsafe { raw::RedisModule_CreateCommand }) else {
        return Status::Err;
    };
    for (name, handler, flags, _) in COMMANDS {
        // SAFETY: `ctx` is the module's load context; the names and flags are NUL-terminated and
        // static.
        let status = unsafe { create(ctx.ctx, name.as_ptr(), handler, flags.as_ptr(), 1, 1, 1) };
        if status != raw::REDISMODULE_OK as c_int {
            ctx.log_warning(&format!("could not register {}", name.to_string_lossy()));
            return Status::Err;
        }
    }
    let key_specs = COMMANDS.map(|(name, _, _, key_spec)| (name.to_str().expect("ASCII names"), key_spec));
    keyspecs::declare(ctx, &key_specs)
}

/// What a command's handler takes after its name.
#[derive(Clone, Copy)]
enum Handler {
    /// Exactly a key and an item.
    KeyItem(KeyItemHandler),
    /// A key and one item or more.
    KeyItems(KeyItemsHandler),
}

/// Runs `handler` on a command's arguments, checking their number, and sends its reply.
fn run(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
    handler: Handler,
) -> c_int {
    let context = Context::new(ctx);
    let args: &[*mut raw::RedisModuleString] = match usize::try_from(argc) {
        // SAFETY: Redis passes `argc` valid strings in `argv`, alive for the whole call; their
        // bytes are read only during it.
        Ok(count) if count > 0 => unsafe { std::slice::from_raw_parts(argv, count) },
        _ => &[],
    };
    let result = match (handler, args) {
        (Handler::KeyItem(handler), &[_, key, item]) => {
            handler(&context, key, RedisString::string_as_slice(item))
        }
        (Handler::KeyItems(handler), [_, key, items @ ..]) if !items.is_empty() => {
            handler(&context, *key, items)
        }
        _ => Err(RedisError::WrongArity),
    };
    context.reply(result) as c_int
}

/// The C entry point Redis calls for each command: [`run`] with the command's handler.
macro_rules! entry_points {
    ($($name:ident => $handler:expr),* $(,)?) => {$(
        extern "C" fn $name(
            ctx: *mut raw::RedisModuleCtx,
            argv: *mut *mut raw::RedisModuleString,
            argc: c_int,
        ) -> c_int {
            run(ctx, argv, argc, $handler)
        }
    )*};
}

entry_points! {
    add => Handler::KeyItem(commands::add),
    add_nx => Handler::KeyItem(commands::add_nx),
    exists => Handler::KeyItem(commands::exists),
    mexists => Handler::KeyItems(commands::mexists),
}
