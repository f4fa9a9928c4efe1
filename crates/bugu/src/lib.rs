//! # bugu (布谷, "cuckoo")
//!
//! A cuckoo filter: a compact set that answers "have I seen this item?" in constant time, with no
//! false negatives, a false-positive rate you choose, and — unlike a Bloom filter — deletion.
//!
//! - **Exact sizing**: a filter for `n` items takes `n / load` slots, not the next power of two.
//! - **Any fingerprint width** from 4 to 32 bits, bit-packed; buckets of 2, 4 or 8 slots.
//! - **Stable hashing**: seeded XXH3-64 over a platform-independent byte stream, so a filter saved
//!   on one machine answers the same on another, in every later version.
//! - **Nothing is lost**: an insert that finds no room fails and changes nothing; deletions never
//!   cause false negatives for items that were inserted.
//!
//! ## Quick start
//!
//! ```
//! use bugu::{CuckooFilter, Filter, FilterMut};
//!
//! let mut filter = CuckooFilter::builder()
//!     .capacity(100_000)
//!     .false_positive_rate(0.001)
//!     .build()?;
//!
//! filter.insert("user_123")?;
//! assert!(filter.contains("user_123"));
//!
//! filter.remove("user_123");
//! assert!(!filter.contains("user_123"));
//!
//! // Raw bytes and pre-computed hashes work too.
//! filter.insert_bytes(b"\x01\x02")?;
//! filter.insert_hash(0xdead_beef)?;
//! assert!(filter.contains_hash(0xdead_beef));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Layout of the crate
//!
//! Data flows one way: item → [`hash`] → (fingerprint, two buckets) → table. The packed table knows
//! nothing of items; the insertion algorithm (a breadth-first search for a path of moves, applied
//! only once found) knows buckets and fingerprints; [`CuckooFilterIn`] composes them over the
//! table's storage — owned in a [`CuckooFilter`], borrowed in a [`CuckooView`] — and implements
//! the [`Filter`] and [`FilterMut`] traits, which give every filter type the same `T: Hash`,
//! byte and pre-hashed entry points.

#![deny(missing_docs)]

mod batch;
mod config;
mod cuckoo;
mod error;
mod filter;
pub mod growable;
pub mod hash;
mod membership;
pub mod persist;
pub mod sizing;
mod stats;
mod table;

pub use config::{
    BUCKET_SIZES, Builder, DEFAULT_BUCKET_SIZE, DEFAULT_EVICTION_LIMIT, DEFAULT_FINGERPRINT_BITS,
    DEFAULT_SEED, FINGERPRINT_BITS, MAX_EVICTION_LIMIT,
};
pub use error::{ConfigError, Error, InsertError};
pub use filter::{CuckooFilter, CuckooFilterIn};
pub use growable::{
    DEFAULT_GROWTH_FACTOR, DEFAULT_INITIAL_CAPACITY, DEFAULT_TARGET_FALSE_POSITIVE_RATE, DEFAULT_TIGHTENING,
    GROWTH_FACTORS, GrowableBuilder, GrowableConfigError, GrowableFilter, MAX_LEVELS, Removal, Tightening,
};
pub use membership::{Filter, FilterMut};
pub use persist::{CuckooView, PersistError};
pub use sizing::FIT_FAILURE_BOUND;
pub use stats::{Bucket, Stats};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
