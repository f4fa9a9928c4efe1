//! bugu-redis: a Redis module serving RedisBloom's `CF.*` cuckoo-filter commands, with a bugu
//! growable filter under every key.
//!
//! - `settings`: what `CF.RESERVE` asks for and how it maps onto bugu's settings;
//! - `args`: parsing of the commands' arguments;
//! - `value`: the value under a key, its saved form and its chunked dump and restore (no Redis
//!   in it, so it is tested without a server);
//! - `redisbloom`: RedisBloom's filters, in its layout, with its hashing, RDB encoding and dump
//!   format (no Redis in it either), so that keys RedisBloom wrote answer as before;
//! - `stored`: a key's value of either type, as the commands reach it;
//! - `module_args`: the module's load-time arguments;
//! - `error`: every error reply's text;
//! - `commands`, `direct`, `key`, `keyspecs` and `datatype`: the thin layer that talks to Redis;
//! - `alloc`: the module's allocator, Redis's, and what its blocks cost.
//!
//! Load it with `redis-server --loadmodule target/release/libbugu_redis.so`; `docs/redis.md`
//! describes the commands, the choices made and how it is tested.

mod alloc;
mod args;
mod error;
mod module_args;
mod redisbloom;
mod settings;
mod stored;
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
            allocator: (alloc::RedisAllocator, alloc::RedisAllocator),
            data_types: [CF_TYPE],
            init: init,
            commands: [$([$name, $handler, $flags, 1, 1, 1, ""]),*],
        }

        /// Once bugu's type and the crate's commands are registered: the module's arguments
        /// read, I/O errors handled and RedisBloom's type registered, the commands `direct`
        /// registers itself (with their key specs), then the others' key specs.
        fn init(ctx: &redis_module::Context, args: &[redis_module::RedisString]) -> redis_module::Status {
            use redis_module::Status;
            let arguments: Vec<&[u8]> = args.iter().map(redis_module::RedisString::as_slice).collect();
            match module_args::parse(&arguments) {
                Ok(parsed) => redisbloom::set_takeover(parsed.redisbloom_data),
                Err(message) => {
                    ctx.log_warning(&message);
                    return Status::Err;
                }
            }
            match datatype::init(ctx, args) {
                Status::Ok => match direct::register(ctx) {
                    Status::Ok => keyspecs::declare(ctx, &[$(($name, $key_spec)),*]),
                    failed => failed,
                },
                failed => failed,
            }
        }
    };
}

// CF.ADD, CF.ADDNX, CF.EXISTS and CF.MEXISTS are registered by `init`, through `direct`.
#[cfg(not(test))]
module! {
    ["CF.RESERVE", commands::reserve, "write deny-oom", keyspecs::CREATE],
    ["CF.INSERT", commands::insert, "write deny-oom", keyspecs::INSERT],
    ["CF.INSERTNX", commands::insert_nx, "write deny-oom", keyspecs::INSERT],
    ["CF.COUNT", commands::count, "readonly fast", keyspecs::READ],
    ["CF.DEL", commands::del, "write fast", keyspecs::DELETE],
    ["CF.INFO", commands::info, "readonly fast", keyspecs::READ_METADATA],
    ["CF.SCANDUMP", commands::scandump, "readonly", keyspecs::READ],
    ["CF.LOADCHUNK", commands::loadchunk, "write deny-oom", keyspecs::RESTORE],
}
