//! bugu-redis: a Redis module serving RedisBloom's `CF.*` cuckoo-filter commands, with a bugu
//! growable filter under every key.
//!
//! - `settings`: what `CF.RESERVE` asks for and how it maps onto bugu's settings;
//! - `args`: parsing of the commands' arguments;
//! - `value`: the value under a key, its saved form and its chunked dump and restore (no Redis
//!   in it, so it is tested without a server);
//! - `error`: every error reply's text;
//! - `commands`, `datatype` and `keyspecs`: the thin layer that talks to Redis.
//!
//! Load it with `redis-server --loadmodule target/release/libbugu_redis.so`; `docs/redis.md`
//! describes the commands, the choices made and how it is tested.

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
mod keyspecs;

#[cfg(not(test))]
use datatype::CF_TYPE;

/// The module's entry point, with every command's name, handler, flags and key spec in one row:
/// `redis_module!` registers the commands, `init` declares their key specs.
#[cfg(not(test))]
macro_rules! module {
    ($([$name:expr, $handler:expr, $flags:expr, $key_spec:expr]),* $(,)?) => {
        redis_module::redis_module! {
            name: "bugu",
            version: 1,
            allocator: (redis_module::alloc::RedisAlloc, redis_module::alloc::RedisAlloc),
            data_types: [CF_TYPE],
            init: init,
            commands: [$([$name, $handler, $flags, 1, 1, 1, ""]),*],
        }

        fn init(ctx: &redis_module::Context, args: &[redis_module::RedisString]) -> redis_module::Status {
            match datatype::handle_io_errors(ctx, args) {
                redis_module::Status::Ok => keyspecs::declare(ctx, &[$(($name, $key_spec)),*]),
                failed => failed,
            }
        }
    };
}

#[cfg(not(test))]
module! {
    ["CF.RESERVE", commands::reserve, "write deny-oom", keyspecs::CREATE],
    ["CF.ADD", commands::add, "write deny-oom", keyspecs::INSERT],
    ["CF.ADDNX", commands::add_nx, "write deny-oom", keyspecs::INSERT],
    ["CF.INSERT", commands::insert, "write deny-oom", keyspecs::INSERT],
    ["CF.INSERTNX", commands::insert_nx, "write deny-oom", keyspecs::INSERT],
    ["CF.EXISTS", commands::exists, "readonly fast", keyspecs::READ],
    ["CF.MEXISTS", commands::mexists, "readonly fast", keyspecs::READ],
    ["CF.COUNT", commands::count, "readonly fast", keyspecs::READ],
    ["CF.DEL", commands::del, "write fast", keyspecs::DELETE],
    ["CF.INFO", commands::info, "readonly fast", keyspecs::READ_METADATA],
    ["CF.SCANDUMP", commands::scandump, "readonly", keyspecs::READ],
    ["CF.LOADCHUNK", commands::loadchunk, "write deny-oom", keyspecs::RESTORE],
}
