//! bugu-redis: a Redis module serving RedisBloom's `CF.*` cuckoo-filter commands, with a bugu
//! growable filter under every key.

mod error;
mod settings;
mod value;
