//! bugu-redis: a Redis module serving RedisBloom's `CF.*` cuckoo-filter commands, with a bugu
//! growable filter under every key.
//!
//! - `settings`: what `CF.RESERVE` asks for and how it maps onto bugu's settings;
//! - `args`: parsing of the commands' arguments;
//! - `value`: the value under a key, its saved form and its chunked dump and restore (no Redis
//!   in it, so it is tested without a server);
//! - `error`: every error reply's text;
//! - `commands`, `direct`, `key` and `datatype`: the thin layer that talks to Redis;
//! - `alloc`: the module's allocator, Redis's, and what its blocks cost.
//!
//! Load it with `redis-server --loadmodule target/release/libbugu_redis.so`; `docs/redis.md`
//! describes the commands, the choices made and how it is tested.

mod alloc;
mod args;
mod error;
mod settings;
mod value;

// The layer that talks to Redis, left out of unit tests: they run without a server and must not
// use Redis's allocator.
#[cfg(not(test))]
mod commands;
#[cfg(not(test))]
mod datatype;
#[cfg(not(test))]
mod direct;
#[cfg(not(test))]
mod key;

#[cfg(not(test))]
use datatype::CF_TYPE;
#[cfg(not(test))]
use redis_module::{Context, RedisString, Status};

/// The module's own setup, once its type and the crate's commands are registered: I/O errors
/// handled, then the commands registered without the crate's wrapper.
#[cfg(not(test))]
fn init(ctx: &Context, args: &[RedisString]) -> Status {
    match datatype::handle_io_errors(ctx, args) {
        Status::Ok => direct::register(ctx),
        Status::Err => Status::Err,
    }
}

// The module's entry point.
#[cfg(not(test))]
redis_module::redis_module! {
    name: "bugu",
    version: 1,
    allocator: (alloc::RedisAllocator, alloc::RedisAllocator),
    data_types: [CF_TYPE],
    init: init,
    // CF.ADD, CF.ADDNX and CF.EXISTS are registered by `init` (see `direct`).
    commands: [
        ["CF.RESERVE", commands::reserve, "write deny-oom", 1, 1, 1, ""],
        ["CF.INSERT", commands::insert, "write deny-oom", 1, 1, 1, ""],
        ["CF.INSERTNX", commands::insert_nx, "write deny-oom", 1, 1, 1, ""],
        ["CF.MEXISTS", commands::mexists, "readonly fast", 1, 1, 1, ""],
        ["CF.COUNT", commands::count, "readonly fast", 1, 1, 1, ""],
        ["CF.DEL", commands::del, "write fast", 1, 1, 1, ""],
        ["CF.INFO", commands::info, "readonly fast", 1, 1, 1, ""],
        ["CF.SCANDUMP", commands::scandump, "readonly", 1, 1, 1, ""],
        ["CF.LOADCHUNK", commands::loadchunk, "write deny-oom", 1, 1, 1, ""],
    ],
}
