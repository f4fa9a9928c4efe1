//! # bugu (布谷, "cuckoo")
//!
//! A cuckoo filter: a compact set that answers "have I seen this item?" in constant time, with no
//! false negatives, a false-positive rate you choose, and — unlike a Bloom filter — deletion.
//!
//! - **Exact sizing**: a filter for `n` items takes `n / load` slots, not the next power of two.
//! - **Any fingerprint width** from 4 to 32 bits, bit-packed; buckets of 2, 4 or 8 slots.
//! - **Stable hashing**: seeded XXH3-64 over one documented encoding of each key, so a filter saved
//!   on one machine answers the same on another, in every later version and every front end.
//! - **Nothing is lost**: an insert that finds no room fails and changes nothing; deleting an
//!   item that was inserted never makes another inserted item read as absent.
//!
//! The reasoning behind these choices is in the repository's `docs/design.md`.
//!
//! ## Keys
//!
//! A key means the same in every front end ([`key`]): text is its UTF-8 bytes, bytes are bytes,
//! an integer of any width is its value as 8 little-endian bytes; anything else that implements
//! `Hash` is a key when wrapped in [`Hashed`]. So `contains("k")`, `contains_bytes(b"k")`, the
//! line `k` given to the `bugu` command and `CF.EXISTS f k` in Redis ask about one key.
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
//! ## What a filter promises, and its two limits
//!
//! - A filter built for `n` items accepts `n` distinct items, except with a chance below
//!   [`FIT_FAILURE_BOUND`]; configurations too narrow for `n` are refused with
//!   [`ConfigError::TooNarrow`] (see [`sizing`]).
//! - **The multiset limit.** `insert` stores a copy every time, so one item can be stored at most
//!   2 x bucket size times (its copies fill both of its buckets); the next insert of it returns
//!   [`InsertError::CopyLimit`]. Use [`FilterMut::insert_unique`] to store an item once.
//! - **Remove only what you inserted.** A filter stores fingerprints, not items: removing an item
//!   that was never inserted may delete another item's matching fingerprint, which then reads as
//!   absent. For the same reason, add-if-absent and removal do not mix safely: `insert_unique`
//!   skips an item whose fingerprint another item already stored, and removing that other item
//!   later makes the skipped one read absent. Filters record such skips
//!   ([`CuckooFilterIn::has_skipped_inserts`], kept in their files) so that a tool can refuse
//!   removals, as the `bugu` command does.
//!
//! ```
//! use bugu::{CuckooFilter, Filter, FilterMut, InsertError};
//!
//! let mut filter = CuckooFilter::builder().capacity(1_000).bucket_size(2).build()?;
//! for _ in 0..4 {
//!     filter.insert("again")?;
//! }
//! assert_eq!(filter.insert("again"), Err(InsertError::CopyLimit { copies: 4 }));
//! assert_eq!(filter.insert_unique("again"), Ok(false)); // present: nothing to add
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Growing
//!
//! When the final size is unknown, a [`GrowableFilter`] adds larger levels as items arrive and
//! keeps its false-positive rate under a target fixed in advance, at every size (see
//! [`growable`]).
//!
//! ```
//! use bugu::{Filter, FilterMut, GrowableFilter};
//!
//! let mut filter = GrowableFilter::builder().initial_capacity(1_000).false_positive_rate(0.001).build()?;
//! for i in 0..10_000u32 {
//!     filter.insert(&i)?;
//! }
//! assert!(filter.level_count() > 1 && filter.contains(&9_999u32));
//! assert!(filter.false_positive_rate() < 0.001);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Saving and loading
//!
//! Every filter has one portable byte format ([`persist`]): in memory, through any `Write` /
//! `Read`, as files saved atomically, or queried in place through a zero-copy [`CuckooView`].
//!
//! ```
//! use bugu::{CuckooFilter, CuckooView, Filter, FilterMut, GrowableFilter, Persist};
//!
//! let mut filter = CuckooFilter::new(1_000)?;
//! filter.insert("user_123")?;
//! let bytes = filter.to_bytes();
//! assert!(CuckooFilter::from_bytes(&bytes)?.contains("user_123"));
//! assert!(CuckooView::from_bytes(&bytes)?.contains("user_123")); // no copy of the table
//!
//! let path = std::env::temp_dir().join(format!("bugu-crate-docs-{}.bugu", std::process::id()));
//! let grown = GrowableFilter::new(100)?;
//! grown.save(&path)?;
//! assert_eq!(GrowableFilter::load(&path)?.len(), 0);
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Layout of the crate
//!
//! Data flows one way: item → [`key`] (its bytes) → [`hash`] (a 64-bit hash, then a fingerprint
//! and two buckets) → a table.
//!
//! - `table/`: the fixed filters' packed buckets, the only code that knows their memory layout
//!   (and where `unsafe` lives); it stores fingerprints and knows nothing of items.
//! - `cuckoo.rs`: the insertion algorithm (a breadth-first search for a path of moves, applied
//!   only once found), for the fixed, chained and concurrent filters.
//! - [`CuckooFilterIn`] (`filter.rs`) composes them over the table's storage: owned in a
//!   [`CuckooFilter`], borrowed in a [`CuckooView`]. [`ConcurrentFilter`] (`concurrent/`) shares
//!   one table between threads.
//! - Growing without the keys: [`GrowableFilter`] (`growable/`) chains fixed filters;
//!   [`ExpandingFilter`] (`expanding/`) is one table of its own layout that splits as it grows.
//! - [`Filter`] and [`FilterMut`] (`membership.rs`) give every type the same [`Key`], byte and
//!   pre-hashed entry points; [`Persist`] (`persist/`) the same byte format and files.
//! - [`AnyFilterIn`] (`any.rs`) holds a filter of whichever kind a file has, for programs that
//!   open any file; [`Summary`] (`summary.rs`) reports every kind in the same fields.

#![deny(missing_docs)]

mod any;
mod batch;
pub mod concurrent;
mod config;
mod cuckoo;
mod error;
pub mod expanding;
mod filter;
pub mod growable;
pub mod hash;
pub mod key;
mod membership;
pub mod persist;
pub mod sizing;
mod stats;
mod summary;
mod table;

pub use any::{AnyFilter, AnyFilterIn, AnyView};
pub use concurrent::ConcurrentFilter;
pub use config::{
    BUCKET_SIZES, Builder, DEFAULT_BUCKET_SIZE, DEFAULT_EVICTION_LIMIT, DEFAULT_FINGERPRINT_BITS,
    DEFAULT_SEED, FINGERPRINT_BITS, MAX_EVICTION_LIMIT,
};
pub use error::{ConfigError, Error, InsertError};
pub use expanding::{ExpandingFilter, ExpandingFilterIn};
pub use filter::{CuckooFilter, CuckooFilterIn};
pub use growable::{
    DEFAULT_GROWTH_FACTOR, DEFAULT_INITIAL_CAPACITY, DEFAULT_TARGET_FALSE_POSITIVE_RATE, DEFAULT_TIGHTENING,
    GROWTH_FACTORS, GrowableBuilder, GrowableConfigError, GrowableFilter, MAX_LEVELS, Removal, Tightening,
};
pub use key::{Hashed, Key};
pub use membership::{Filter, FilterMut};
pub use persist::{CuckooView, ExpandingView, Persist, PersistError};
pub use sizing::FIT_FAILURE_BOUND;
pub use stats::{Bucket, Stats};
pub use summary::Summary;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
