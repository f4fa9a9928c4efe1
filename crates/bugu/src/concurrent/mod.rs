//! [`ConcurrentFilter`]: one cuckoo filter shared by many threads, every operation through `&self`.
//!
//! It is a [`CuckooFilter`] whose table lives in atomic words with a versioned lock per stripe of
//! buckets (the protocol, and why a lookup never misses an item that is being moved, are explained
//! in the `stripes` module and in `docs/concurrency.md`):
//! - **lookups take no lock and write nothing shared**: they read the two buckets between two
//!   reads of a word that writers which move fingerprints change (of the stripes' versions, for
//!   semi-sorted buckets), and read again if such a write overlapped;
//! - **writers lock only the stripes they change**, in ascending order: most inserts lock the
//!   stripe of the one bucket they fill; a remove, an `insert_unique`, or an insert whose buckets
//!   are both full, the stripes of the item's two buckets; an insert that needs a path of moves
//!   searches it without locks, then locks every bucket of the path, checks that the path is
//!   still valid (or searches again) and applies it whole. Writers on other stripes run in
//!   parallel;
//! - **the same answers and the same bytes**: hashing, sizing, configuration and insertion are
//!   those of [`CuckooFilter`]; the same operations from one thread leave the same table, and the
//!   conversions ([`from_filter`](ConcurrentFilter::from_filter),
//!   [`to_filter`](ConcurrentFilter::to_filter)) copy it without rehashing. Files are
//!   [`CuckooFilter`] files (kind 1): the bytes are the same.
//!
//! A failed insert adds nothing and loses nothing, as in [`CuckooFilter`]: a path is applied
//! only whole, under the locks of all its buckets.

mod shared_table;
mod stripes;
mod writer;

use std::cell::RefCell;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::batch::{FAR_LOOKAHEAD, LOOKAHEAD, Located, answer_in_blocks, block_locator, in_blocks};
use crate::config::{Builder, Config, filter_parameters};
use crate::cuckoo::{Inserts, PathSearch};
use crate::error::{ConfigError, InsertError};
use crate::filter::{CuckooFilter, CuckooFilterIn};
use crate::hash::Addressing;
use crate::hash::HashFunction;
use crate::key::{Key, KeyEncoding, Prehashed};
use crate::membership::{Filter, item_updates};
use crate::stats::Stats;
use crate::table::{ANY_GEOMETRY, AllocFailed};
use shared_table::SharedTable;
use stripes::WriteGuard;
use writer::{InsertKind, Writer};

thread_local! {
    /// Each thread's path search and its list of a path's buckets to hold, kept between the
    /// inserts it makes into any concurrent filter.
    static SEARCH: RefCell<(PathSearch, Vec<usize>)> = RefCell::default();
}

/// A cuckoo filter shared between threads: `Send + Sync`, every operation through `&self`,
/// lookups without locks (see [the module docs](crate::concurrent)).
///
/// ```
/// use std::sync::Arc;
/// use bugu::{ConcurrentFilter, Filter};
///
/// let filter = Arc::new(ConcurrentFilter::new(100_000)?);
/// let writers: Vec<_> = (0..2u64)
///     .map(|t| {
///         let filter = Arc::clone(&filter);
///         std::thread::spawn(move || {
///             for i in 0..1_000u64 {
///                 filter.insert(&(t * 1_000 + i)).unwrap();
///             }
///         })
///     })
///     .collect();
/// for writer in writers {
///     writer.join().unwrap();
/// }
/// assert_eq!(filter.len(), 2_000);
/// assert!(filter.contains(&1_999u64));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ConcurrentFilter {
    config: Config,
    shared: SharedTable,
    /// Whether an add-if-absent insert has skipped an item (see
    /// [`CuckooFilterIn::has_skipped_inserts`]); relaxed, as it orders nothing.
    skipped_inserts: AtomicBool,
}

fn out_of_memory(failed: AllocFailed) -> ConfigError {
    ConfigError::OutOfMemory { bytes: failed.bytes }
}

/// A [`ConcurrentFilter`] with every stripe held ([`ConcurrentFilter::quiet`]).
pub(crate) struct Quiet<'a> {
    filter: &'a ConcurrentFilter,
    _stripes: WriteGuard<'a>,
}

impl Quiet<'_> {
    /// Items stored: exact, as no write is in progress.
    pub(crate) fn len(&self) -> usize {
        self.filter.shared.items()
    }

    /// Whether an add-if-absent insert has been skipped.
    pub(crate) fn has_skipped_inserts(&self) -> bool {
        self.filter.has_skipped_inserts()
    }

    /// Gives the table's payload (the packed buckets, without padding) to `sink` in chunks.
    pub(crate) fn stream_payload<E>(&self, sink: impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), E> {
        self.filter.shared.stream_payload(sink)
    }
}

impl ConcurrentFilter {
    /// A shared copy of `filter`'s table; [`AllocFailed`] if it cannot be allocated (each public
    /// caller reports that in its own error type).
    pub(crate) fn copy_of<S: AsRef<[u8]>>(filter: &CuckooFilterIn<S>) -> Result<Self, AllocFailed> {
        let shared = SharedTable::copy_of(filter.table(), filter.checked_len())?;
        let skipped_inserts = AtomicBool::new(filter.has_skipped_inserts());
        Ok(ConcurrentFilter { config: *filter.config(), shared, skipped_inserts })
    }

    /// Where items are: the table's own addressing.
    fn addressing(&self) -> &Addressing {
        self.shared.racy().addressing()
    }

    /// The configuration, for the persistent form's sizes.
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// The filter held still: writers wait until the returned guard is dropped (lookups do not),
    /// so what it reads is the filter of one moment. The persistent form is written this way,
    /// with no copy of the table.
    pub(crate) fn quiet(&self) -> Quiet<'_> {
        Quiet { filter: self, _stripes: self.shared.lock_all() }
    }

    /// A copy of the table as it is at one moment: writers wait while it is copied.
    fn snapshot(&self) -> Result<CuckooFilter, AllocFailed> {
        let _quiet = self.shared.lock_all();
        let table = self.shared.copy_out()?;
        let filter = CuckooFilter::from_parts(self.config, table, self.shared.items(), true);
        Ok(filter.with_skipped_inserts(self.has_skipped_inserts()))
    }
}

impl Builder {
    /// Builds an empty [`ConcurrentFilter`] with this configuration.
    ///
    /// ```
    /// let filter = bugu::CuckooFilter::builder().capacity(1_000).false_positive_rate(0.001).build_concurrent()?;
    /// assert!(filter.is_empty());
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn build_concurrent(&self) -> Result<ConcurrentFilter, ConfigError> {
        let config = self.config()?;
        let shared = SharedTable::empty(config.geometry()).map_err(out_of_memory)?;
        Ok(ConcurrentFilter { config, shared, skipped_inserts: AtomicBool::new(false) })
    }
}

impl ConcurrentFilter {
    /// A builder with the defaults; finish it with [`Builder::build_concurrent`].
    ///
    /// ```
    /// let filter = bugu::ConcurrentFilter::builder().capacity(100).fingerprint_bits(8).build_concurrent()?;
    /// assert_eq!(filter.fingerprint_bits(), 8);
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn builder() -> Builder {
        Builder::new()
    }

    /// A filter for `capacity` items with the default settings.
    ///
    /// ```
    /// let filter = bugu::ConcurrentFilter::new(1_000)?;
    /// assert_eq!(filter.capacity(), 1_000);
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn new(capacity: usize) -> Result<Self, ConfigError> {
        Builder::new().capacity(capacity).build_concurrent()
    }

    /// A concurrent copy of a filter (owned, or a view of a file): its table copied, nothing
    /// rehashed. [`ConfigError::OutOfMemory`] if the copy cannot be allocated.
    ///
    /// ```
    /// use bugu::{ConcurrentFilter, CuckooFilter, Filter, FilterMut, Persist};
    ///
    /// let mut filter = CuckooFilter::new(1_000)?;
    /// filter.insert("a")?;
    /// let shared = ConcurrentFilter::from_filter(&filter)?;
    /// assert!(shared.contains("a"));
    /// assert_eq!(shared.to_filter()?.to_bytes(), filter.to_bytes());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_filter<S: AsRef<[u8]>>(filter: &CuckooFilterIn<S>) -> Result<Self, ConfigError> {
        ConcurrentFilter::copy_of(filter).map_err(out_of_memory)
    }

    /// A [`CuckooFilter`] with a copy of this filter's table, as it was at one moment: writers wait
    /// while it is copied (lookups do not). [`ConfigError::OutOfMemory`] if the copy cannot be
    /// allocated.
    pub fn to_filter(&self) -> Result<CuckooFilter, ConfigError> {
        self.snapshot().map_err(out_of_memory)
    }

    /// Number of stored fingerprints (inserts minus successful removes), exact when no write is in
    /// progress; while writers run, it may be off by the writes in flight.
    pub fn len(&self) -> usize {
        self.shared.items()
    }

    /// Bytes of memory the table and its stripes take.
    pub fn memory_bytes(&self) -> usize {
        self.shared.memory_bytes()
    }

    filter_parameters!(
        uses: "use bugu::{ConcurrentFilter, Filter};",
        new: "let filter = bugu::ConcurrentFilter::"
    );

    /// Occupancy statistics, read without stopping writers: exact when none runs.
    ///
    /// ```
    /// let filter = bugu::ConcurrentFilter::new(100)?;
    /// filter.insert("a")?;
    /// assert_eq!(filter.stats().items, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stats(&self) -> Stats {
        let mut stats = Stats::collect(self.shared.racy());
        stats.memory_bytes = self.memory_bytes();
        stats
    }

    /// Whether an item located at `(fingerprint, b1, b2)` may be present: both buckets read at
    /// one moment between writes (see the module docs).
    #[inline(always)]
    fn contains_located(&self, located: Located) -> bool {
        self.shared.contains_located(located)
    }

    /// Stores one copy of an item with this hash. On error the filter is unchanged.
    ///
    /// ```
    /// use bugu::{ConcurrentFilter, Filter};
    /// let filter = ConcurrentFilter::new(10)?;
    /// filter.insert_hash(42)?;
    /// assert!(filter.contains_hash(42));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn insert_hash(&self, hash: u64) -> Result<(), InsertError> {
        match self.shared.store_in_emptier(self.addressing().locate(hash)) {
            Some(true) => Ok(()),
            missed => self.insert_hash_after(hash, missed),
        }
    }

    /// [`insert_hash`](Self::insert_hash) after its common step `missed`. The item is located
    /// again from its hash: keeping its place through the common step kept three values alive
    /// across its call, for the few inserts that get here.
    #[inline(never)]
    fn insert_hash_after(&self, hash: u64, missed: Option<bool>) -> Result<(), InsertError> {
        self.insert_after(self.addressing().locate(hash), missed)
    }

    /// Stores one copy of a located fingerprint: in a free slot of the emptier bucket holding
    /// that bucket's stripe alone ([`SharedTable::store_in_emptier`], most inserts), or else
    /// through the whole insert flow.
    #[inline(always)]
    fn insert_one(&self, located: Located) -> Result<(), InsertError> {
        match self.shared.store_in_emptier(located) {
            Some(true) => Ok(()),
            missed => self.insert_after(located, missed),
        }
    }

    /// The rest of an insert whose common step `missed`: `None` if both buckets were full (the
    /// flow starts with the search for a path), `Some(false)` if another writer took the slot or
    /// held its stripe (the flow starts under both buckets' locks).
    fn insert_after(&self, located: Located, missed: Option<bool>) -> Result<(), InsertError> {
        let kind = if missed.is_none() { Writer::AFTER_BOTH_FULL } else { Writer::ANY };
        self.insert_located(located, kind).map(drop)
    }

    /// Stores an item with this hash unless it is present: `Ok(true)` if it was added. Exact
    /// between threads: of several threads adding the same item at once, one adds it.
    ///
    /// ```
    /// let filter = bugu::ConcurrentFilter::new(10)?;
    /// assert_eq!(filter.insert_unique_hash(7), Ok(true));
    /// assert_eq!(filter.insert_unique_hash(7), Ok(false));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn insert_unique_hash(&self, hash: u64) -> Result<bool, InsertError> {
        let located = self.addressing().locate(hash);
        let added = if self.contains_located(located) {
            Ok(false)
        } else {
            self.insert_located(located, Writer::UNIQUE)
        };
        if added == Ok(false) {
            self.skipped_inserts.store(true, Ordering::Relaxed);
        }
        added
    }

    /// Whether an add-if-absent insert has skipped an item since the filter was built (see
    /// [`CuckooFilterIn::has_skipped_inserts`]); kept by [`to_filter`](Self::to_filter) and
    /// [`save`](crate::Persist::save).
    ///
    /// ```
    /// let filter = bugu::ConcurrentFilter::new(10)?;
    /// filter.insert_unique("a")?;
    /// assert!(!filter.has_skipped_inserts());
    /// filter.insert_unique("a")?;
    /// assert!(filter.has_skipped_inserts() && filter.to_filter()?.has_skipped_inserts());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn has_skipped_inserts(&self) -> bool {
        self.skipped_inserts.load(Ordering::Relaxed)
    }

    /// Removes one copy of an item with this hash; `false` if none was found.
    ///
    /// ```
    /// use bugu::{ConcurrentFilter, Filter};
    /// let filter = ConcurrentFilter::new(10)?;
    /// filter.insert_hash(42)?;
    /// assert!(filter.remove_hash(42));
    /// assert!(!filter.contains_hash(42));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn remove_hash(&self, hash: u64) -> bool {
        let (fingerprint, b1, b2) = self.addressing().locate(hash);
        let mut guard = self.shared.lock_two(b1, b2);
        let table = guard.table();
        let Some((bucket, slot)) =
            [b1, b2].into_iter().find_map(|bucket| Some((bucket, table.find(bucket, fingerprint)?)))
        else {
            return false;
        };
        // Another copy may be the one a lookup is looking for, and it may have been stored after
        // the lookup read its bucket: emptying this one would hide both from the lookup.
        if table.count_located((fingerprint, b1, b2)) > 1 {
            guard.begin_moves();
        }
        guard.table().set(bucket, slot, 0);
        guard.count_items(-1);
        true
    }

    /// [`insert_hash`](Self::insert_hash) for many hashes, in order, pipelined as
    /// [`CuckooFilter`]'s batches are; one result per hash.
    ///
    /// ```
    /// use bugu::{ConcurrentFilter, Filter};
    /// let filter = ConcurrentFilter::new(10)?;
    /// assert!(filter.insert_hash_batch(&[1, 2, 3]).iter().all(Result::is_ok));
    /// assert!(filter.contains_hash(2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn insert_hash_batch(&self, hashes: &[u64]) -> Vec<Result<(), InsertError>> {
        let table = self.shared.racy();
        let mut results = vec![Ok(()); hashes.len()];
        let locate = block_locator::<_, LOOKAHEAD>(*table.addressing(), Prehashed);
        in_blocks(
            &mut (),
            hashes,
            &mut results,
            |_, hashes, block| locate(hashes, block),
            |_, located| table.prefetch_located(located),
            |_, (_, b1, b2)| PathSearch::prefetch_for_insert::<ANY_GEOMETRY, _>(table, (b1, b2)),
            |_, located| self.insert_one(located),
        );
        results
    }

    item_updates!(
        vis: (pub),
        receiver: (&),
        setup: "use bugu::{ConcurrentFilter, Filter};\nlet filter = ConcurrentFilter::new(10)?;"
    );

    /// Stores a located fingerprint as `kind` says (with [`Writer::UNIQUE`], only if it is absent
    /// while the item's stripes are held: `Ok(false)` otherwise): the insert flow of every cuckoo
    /// table ([`Inserts`]), through the stripes' locks ([`Writer`]), which count the items. From
    /// one thread this is exactly [`CuckooFilter`]'s insert.
    ///
    /// The search's queue and the list of a path's buckets are the calling thread's, kept
    /// between its inserts as a [`CuckooFilter`] keeps its queue: built anew for each insert,
    /// they were allocated and grown again by every insert that searched.
    fn insert_located(&self, located: Located, kind: InsertKind) -> Result<bool, InsertError> {
        let limit = self.config.eviction_limit;
        let insert = |(search, buckets): &mut (PathSearch, Vec<usize>)| {
            let mut writer = Writer { shared: &self.shared, kind, buckets };
            Inserts { count: (), search, limit }.insert(&mut writer, located)
        };
        SEARCH
            .try_with(|scratch| match scratch.try_borrow_mut() {
                Ok(mut scratch) => insert(&mut scratch),
                // Unreachable (an insert does not run inside another), but harmless.
                Err(_) => insert(&mut Default::default()),
            })
            // While the thread's locals are destroyed: scratch space of its own.
            .unwrap_or_else(|_| insert(&mut Default::default()))
    }
}

impl Filter for ConcurrentFilter {
    #[inline]
    fn seed(&self) -> u64 {
        self.config.seed
    }

    #[inline]
    fn hash_function(&self) -> HashFunction {
        self.config.hash_function
    }

    #[inline]
    fn key_encoding(&self) -> KeyEncoding {
        self.config.key_encoding
    }

    // A call through the table's lookup for its geometry, which stays out of line (see
    // `SharedTable::contains_as`).
    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        self.shared.contains_hash(hash)
    }

    fn count_hash(&self, hash: u64) -> usize {
        self.shared.count_located(self.addressing().locate(hash))
    }

    /// Pipelined as [`CuckooFilter`]'s batches are: each item's buckets are fetched 16
    /// items ahead; each answer is read as [`contains_hash`](Self::contains_hash) reads it.
    fn contains_hash_batch(&self, hashes: &[u64]) -> Vec<bool> {
        if self.shared.racy().looks_far_ahead() {
            self.contains_hash_batch_by::<FAR_LOOKAHEAD>(hashes)
        } else {
            self.contains_hash_batch_by::<LOOKAHEAD>(hashes)
        }
    }
}

impl ConcurrentFilter {
    /// [`contains_hash_batch`](Filter::contains_hash_batch) in blocks of `N`.
    fn contains_hash_batch_by<const N: usize>(&self, hashes: &[u64]) -> Vec<bool> {
        let table = self.shared.racy();
        let mut found = vec![false; hashes.len()];
        let locate = block_locator::<_, N>(*table.addressing(), Prehashed);
        answer_in_blocks(
            hashes,
            &mut found,
            locate,
            |located| table.prefetch_located(located),
            |located| self.contains_located(located),
        );
        found
    }
}

impl fmt::Debug for ConcurrentFilter {
    /// A summary: never the table.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConcurrentFilter")
            .field("len", &self.len())
            .field("capacity", &self.config.capacity)
            .field("buckets", &self.config.buckets)
            .field("bucket_size", &self.config.bucket_size)
            .field("fingerprint_bits", &self.config.fingerprint_bits)
            .field("semi_sorted", &self.config.semi_sorted)
            .field("memory_bytes", &self.memory_bytes())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
