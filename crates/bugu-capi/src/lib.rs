//! A C library over bugu: `bugu_filter` (fixed size, every function safe from many threads),
//! `bugu_growable` (grows without the original keys, a chain of tables) and `bugu_expanding`
//! (grows in one table). The header `include/bugu.h` is generated
//! from this crate by cbindgen; `include/cuckoo_filter.h` offers the common `cf_*` shape over it.
//! Details: `docs/c.md` in the repository.
//!
//! Every function catches panics, refuses NULL handles and NULL keys with a non-zero length, and
//! answers a [`bugu_status`]; `bugu_last_error_message` says why the last call on the thread failed.
//! Keys follow the project's encoding: bytes are bytes, strings their bytes, integers 8 bytes
//! little-endian (signed ones sign-extended).

mod args;
mod batch;
mod expanding;
mod filter;
mod growable;
mod handle;
mod keys;
mod ops;
mod stats;
mod status;

pub use expanding::*;
pub use filter::*;
pub use growable::*;
pub use keys::*;
pub use stats::{bugu_bucket_callback, bugu_stats};
pub use status::*;
