//! The cuckoo filter over its storage, [`CuckooFilterIn`]: the addressing scheme, the packed table
//! and the shared insertion algorithm, composed once. Everything that only reads is written for any
//! storage; inserting and removing need the owned one, [`CuckooFilter`].

use std::fmt;
use std::ops::RangeBounds;

use crate::batch::Located;
use crate::config::{Builder, Config, filter_parameters};
use crate::cuckoo::{Inserts, PathSearch};
use crate::error::{ConfigError, Error, InsertError};
use crate::hash::HashFunction;
use crate::key::{BlockHasher, ItemHasher, Key, KeyEncoding, Prehashed};
use crate::membership::{Filter, FilterMut};
use crate::stats::{Bucket, Stats};
use crate::table::{AllocFailed, Kind, PipelinedInserts, Table, default_kind_or_any};

/// A cuckoo filter whose table lives in `S`: one type for every place a filter's bytes can live.
///
/// `S` holds the packed buckets followed by 16 bytes of padding, exactly as the persistent format
/// stores them; only the crate's table code interprets those bytes. The one bound on it,
/// `S: AsRef<[u8]>`, is all that reading needs, so every read-only method — the getters,
/// [`Filter`] (lookups, counts, batches), [`stats`](Self::stats), [`summary`](Self::summary) and
/// [`buckets`](Self::buckets) — is written once for all storages. Inserting and removing
/// ([`FilterMut`], [`clear`](CuckooFilter::clear)) need storage the filter owns, and so does
/// reading a stream ([`Persist`](crate::Persist)); a view's bytes are its
/// [`as_bytes`](crate::CuckooView::as_bytes).
///
/// Two storages are named:
/// - [`CuckooFilter`] (`Vec<u8>`, the default): the owned, mutable filter;
/// - [`CuckooView`](crate::CuckooView) (`&[u8]`): a read-only filter over borrowed bytes of the
///   persistent format, such as a memory-mapped file, opened without copying.
///
/// ```
/// use bugu::{CuckooFilter, CuckooFilterIn, CuckooView, Filter, FilterMut, Persist};
///
/// /// Works for an owned filter and a view alike.
/// fn describe<S: AsRef<[u8]>>(filter: &CuckooFilterIn<S>) -> String {
///     format!("{} items in {} buckets", filter.len(), filter.bucket_count())
/// }
///
/// let mut filter = CuckooFilter::new(100)?;
/// filter.insert("a")?;
/// let bytes = filter.to_bytes();
/// let view = CuckooView::from_bytes(&bytes)?;
/// assert_eq!(describe(&filter), describe(&view));
/// assert!(view.contains("a"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct CuckooFilterIn<S = Vec<u8>> {
    config: Config,
    /// The packed buckets, with the addressing built from their count.
    table: Table<S>,
    len: usize,
    /// Whether `len` is known to equal the table's occupied slots, which `remove` relies on. True
    /// for owned filters (built empty, read with every check, or copied with a count), whose
    /// inserts and removes keep it so, and for views of fully validated bytes; false for views of
    /// trusted bytes, whose owned copies count their table instead.
    len_checked: bool,
    /// The whole persisted filter (header to checksum) whose table this filter reads in place:
    /// `Some` for a view opened on such bytes, which [`as_bytes`](crate::CuckooView::as_bytes) returns and
    /// serializers write as they are; `None` otherwise (owned filters, and the sections of a file
    /// holding several filters, which are not a filter's bytes on their own).
    persisted: Option<S>,
    /// Whether an add-if-absent insert ([`FilterMut::insert_unique`]) has skipped an item
    /// because a matching fingerprint was present (see [`has_skipped_inserts`](Self::has_skipped_inserts)).
    /// Kept in the persisted header's flags.
    skipped_inserts: bool,
    /// Scratch space of the path search: empty until the first insert that needs one.
    search: PathSearch,
}

/// A cuckoo filter: a compact set that answers "have I seen this item?" with no false negatives,
/// a configurable false-positive rate, and deletion. The owned, mutable [`CuckooFilterIn`].
///
/// It is a multiset of fingerprints: every [`insert`](FilterMut::insert) stores a copy (up to
/// `2 x bucket size` copies of one item); [`insert_unique`](FilterMut::insert_unique) stores only
/// if absent; [`remove`](FilterMut::remove) deletes one copy. A failed insert leaves the filter
/// exactly as it was.
///
/// ```
/// use bugu::{CuckooFilter, Filter, FilterMut};
///
/// let mut filter = CuckooFilter::builder().capacity(10_000).false_positive_rate(0.001).build()?;
/// filter.insert("https://example.com/a")?;
/// assert!(filter.contains("https://example.com/a"));
/// assert!(filter.remove("https://example.com/a"));
/// assert!(!filter.contains("https://example.com/a"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
// An alias rather than the struct's default type: `CuckooFilter::from_bytes` and
// `CuckooView::from_bytes` are different constructors, and a path naming the generic struct
// without its storage would find both.
pub type CuckooFilter = CuckooFilterIn<Vec<u8>>;

impl Builder {
    /// Builds an empty filter. Its table is allocated here, zeroed lazily by the operating system;
    /// an allocation the allocator refuses returns [`ConfigError::OutOfMemory`] with the size
    /// asked for, instead of aborting the process.
    ///
    /// ```
    /// let filter = bugu::CuckooFilter::builder().capacity(1_000).build()?;
    /// assert!(filter.is_empty());
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn build(&self) -> Result<CuckooFilter, ConfigError> {
        CuckooFilter::with_config(self.config()?)
    }

    /// Builds a filter holding every item of `items`. With no capacity set, the filter is sized
    /// for exactly the number of items.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter};
    ///
    /// let filter = CuckooFilter::builder().build_from_iter((0..1000u32).map(|i| format!("item_{i}")))?;
    /// assert_eq!(filter.len(), 1000);
    /// assert!(filter.contains("item_7"));
    ///
    /// let too_many = CuckooFilter::builder().capacity(1).build_from_iter(0..100u32);
    /// assert!(matches!(too_many, Err(bugu::Error::Insert { .. })));
    /// # Ok::<(), bugu::Error>(())
    /// ```
    pub fn build_from_iter<K: Key, I: IntoIterator<Item = K>>(
        &self,
        items: I,
    ) -> Result<CuckooFilter, Error> {
        let hashes: Vec<u64> = items.into_iter().map(|item| self.hash_key(&item)).collect();
        let mut filter = CuckooFilter::with_config(self.config_for_items(hashes.len())?)?;
        for (inserted, &hash) in hashes.iter().enumerate() {
            filter.insert_hash(hash).map_err(|source| Error::Insert { inserted, source })?;
        }
        Ok(filter)
    }
}

impl CuckooFilter {
    /// A builder with the defaults (see [`Builder::new`]).
    ///
    /// ```
    /// let filter = bugu::CuckooFilter::builder().capacity(100).fingerprint_bits(8).build()?;
    /// assert_eq!(filter.fingerprint_bits(), 8);
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn builder() -> Builder {
        Builder::new()
    }

    /// A filter for `capacity` items with the default settings.
    ///
    /// ```
    /// let filter = bugu::CuckooFilter::new(1_000_000)?;
    /// assert_eq!(filter.capacity(), 1_000_000);
    /// assert!(bugu::CuckooFilter::new(0).is_err());
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn new(capacity: usize) -> Result<Self, ConfigError> {
        Builder::new().capacity(capacity).build()
    }

    /// An empty filter; [`ConfigError::OutOfMemory`] if its table cannot be allocated.
    fn with_config(config: Config) -> Result<Self, ConfigError> {
        let table = Table::new(config.geometry())
            .map_err(|failed| ConfigError::OutOfMemory { bytes: failed.bytes })?;
        Ok(CuckooFilter::from_parts(config, table, 0, true))
    }

    /// Records that an add-if-absent insert skipped an item (for filters made of several, which
    /// make that decision themselves).
    pub(crate) fn record_skipped_insert(&mut self) {
        self.skipped_inserts = true;
    }

    /// Empties the filter, keeping its configuration and memory.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut};
    /// let mut filter = CuckooFilter::new(10)?;
    /// filter.insert("a")?;
    /// filter.clear();
    /// assert!(filter.is_empty() && !filter.contains("a"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn clear(&mut self) {
        self.table.clear();
        self.len = 0;
        self.skipped_inserts = false;
    }
}

impl<S: AsRef<[u8]>> CuckooFilterIn<S> {
    /// A filter over an existing table holding `len` fingerprints; the caller has validated the
    /// table against the configuration. `len_checked` says whether `len` is known to be the
    /// table's occupied slots (see [`try_to_owned`](Self::try_to_owned)); an owned filter's must
    /// be, or will be before it can be used (the readers check it before returning the filter),
    /// since `remove` decrements it for every slot it empties.
    pub(crate) fn from_parts(config: Config, table: Table<S>, len: usize, len_checked: bool) -> Self {
        debug_assert_eq!(table.geometry(), config.geometry());
        let search = PathSearch::default();
        CuckooFilterIn { table, config, len, len_checked, persisted: None, skipped_inserts: false, search }
    }

    /// This filter as read in place from `persisted`, the whole persisted filter its table is part
    /// of; `len_checked` says whether the stored item count was compared with the table.
    pub(crate) fn read_in_place(self, persisted: S, len_checked: bool) -> Self {
        CuckooFilterIn { persisted: Some(persisted), len_checked, ..self }
    }

    /// This filter with its record of skipped add-if-absent inserts set to `skipped` (as read from
    /// a persisted header, or carried over from the filter this one copies).
    pub(crate) fn with_skipped_inserts(self, skipped: bool) -> Self {
        CuckooFilterIn { skipped_inserts: skipped, ..self }
    }

    /// Whether an add-if-absent insert ([`insert_unique`](FilterMut::insert_unique) and its
    /// variants) has ever returned `Ok(false)` on this filter (or on the filter it was saved from)
    /// since it was built or last cleared.
    ///
    /// Such an insert stores nothing when a matching fingerprint is present, and that fingerprint
    /// may belong to another item (a false positive). If that other item is removed later, the
    /// skipped item reads absent: a false negative. A filter that has skipped inserts should only
    /// take removals if its user accepts that risk; the `bugu` command refuses them unless told
    /// otherwise. The flag is kept through saving and loading.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut, Persist};
    /// let mut filter = CuckooFilter::new(100)?;
    /// filter.insert_unique("a")?;
    /// assert!(!filter.has_skipped_inserts());
    /// filter.insert_unique("a")?; // present: skipped
    /// assert!(filter.has_skipped_inserts());
    /// assert!(CuckooFilter::from_bytes(&filter.to_bytes())?.has_skipped_inserts());
    /// filter.clear();
    /// assert!(!filter.has_skipped_inserts());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn has_skipped_inserts(&self) -> bool {
        self.skipped_inserts
    }

    /// The whole persisted filter this one reads in place, if it does.
    pub(crate) fn persisted(&self) -> Option<&S> {
        self.persisted.as_ref()
    }

    /// An owned, mutable copy; [`AllocFailed`] if the table's copy cannot be allocated.
    ///
    /// The copy's item count is the table's occupied slots, which `remove` relies on: a count
    /// that was not checked (trusted bytes) is replaced by counting the table here, so a wrong
    /// count cannot make a later `remove` underflow.
    pub(crate) fn try_to_owned(&self) -> Result<CuckooFilter, AllocFailed> {
        let table = self.table.try_to_owned()?;
        let owned = CuckooFilter::from_parts(self.config, table, self.checked_len(), true);
        Ok(owned.with_skipped_inserts(self.skipped_inserts))
    }

    /// The number of stored fingerprints, counted in the table if the stored count was taken on
    /// trust.
    pub(crate) fn checked_len(&self) -> usize {
        if self.len_checked { self.len } else { self.table.occupied_slots() }
    }

    /// The validated configuration (for the persistence writers).
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// The packed table, with its addressing (for the persistence writers, and for filters made
    /// of several levels, which start fetching every level's buckets before probing any).
    #[inline]
    pub(crate) fn table(&self) -> &Table<S> {
        &self.table
    }

    /// Number of stored fingerprints (inserts minus successful removes). A view reports the count
    /// its bytes store: compared with the table by [`CuckooView::from_bytes`](crate::CuckooView::from_bytes),
    /// taken on trust by [`CuckooView::from_trusted_bytes`](crate::CuckooView::from_trusted_bytes).
    ///
    /// ```
    /// use bugu::{CuckooFilter, FilterMut};
    /// let mut filter = CuckooFilter::new(10)?;
    /// filter.insert("a")?;
    /// filter.insert("a")?;
    /// assert_eq!(filter.len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes of memory the table occupies (the packed buckets plus 16 bytes of padding).
    ///
    /// ```
    /// let filter = bugu::CuckooFilter::builder().capacity(1_000).fingerprint_bits(12).build()?;
    /// assert_eq!(filter.memory_bytes(), 296 * 4 * 12 / 8 + 16);
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn memory_bytes(&self) -> usize {
        self.table.memory_bytes()
    }

    /// Bytes of the scratch space an insert's search for a path of moves keeps for the next one:
    /// 0 until an insert first finds both of its buckets full, then one block of at most a few
    /// kilobytes (bounded by the eviction limit), besides the table's
    /// [`memory_bytes`](Self::memory_bytes).
    ///
    /// ```
    /// let filter = bugu::CuckooFilter::new(1_000)?;
    /// assert_eq!(filter.scratch_bytes(), 0);
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn scratch_bytes(&self) -> usize {
        self.search.memory_bytes()
    }

    filter_parameters!(
        uses: "use bugu::{CuckooFilter, Filter, FilterMut};",
        new: "let mut filter = bugu::CuckooFilter::"
    );

    /// Occupancy statistics (walks the whole table).
    ///
    /// ```
    /// use bugu::{CuckooFilter, FilterMut};
    /// let mut filter = CuckooFilter::new(100)?;
    /// filter.insert("a")?;
    /// let stats = filter.stats();
    /// assert_eq!(stats.items, 1);
    /// assert_eq!(stats.fullest_bucket.map(|(_, n)| n), Some(1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stats(&self) -> Stats {
        Stats::collect(&self.table)
    }

    /// The buckets in `range` (clamped to the table) with their fingerprints, for debugging.
    ///
    /// ```
    /// let filter = bugu::CuckooFilter::new(100)?;
    /// let first: Vec<_> = filter.buckets(0..2).collect();
    /// assert_eq!(first.len(), 2);
    /// assert_eq!(first[1].index, 1);
    /// assert_eq!(filter.buckets(..).count(), filter.bucket_count());
    /// assert_eq!(filter.buckets(10_000..).count(), 0);
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn buckets(&self, range: impl RangeBounds<usize>) -> impl Iterator<Item = Bucket> + '_ {
        use std::ops::Bound::*;
        let count = self.table.buckets();
        let start = match range.start_bound() {
            Included(&s) => s,
            Excluded(&s) => s.saturating_add(1),
            Unbounded => 0,
        };
        let end = match range.end_bound() {
            Included(&e) => e.saturating_add(1),
            Excluded(&e) => e,
            Unbounded => count,
        };
        (start.min(count)..end.min(count)).map(|index| Bucket::read(&self.table, index))
    }

    /// What batches hash items with: this filter's function and seed, matched once per block.
    fn item_hasher(&self) -> ItemHasher {
        let Config { hash_function: function, seed, key_encoding: encoding, .. } = self.config;
        ItemHasher { function, seed, encoding }
    }

    #[cfg(test)]
    pub(crate) fn table_bytes(&self) -> &[u8] {
        self.table.payload()
    }
}

impl<S: AsRef<[u8]>> Filter for CuckooFilterIn<S> {
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

    #[inline(always)]
    fn contains_hash(&self, hash: u64) -> bool {
        self.table.contains_hash(hash)
    }

    /// Pipelined: the buckets of upcoming hashes are prefetched.
    fn contains_hash_batch(&self, hashes: &[u64]) -> Vec<bool> {
        self.table.contains_pipelined(hashes, Prehashed)
    }

    /// Pipelined: the buckets of upcoming items are prefetched.
    fn contains_batch<K: Key>(&self, items: &[K]) -> Vec<bool> {
        self.table.contains_pipelined(items, self.item_hasher())
    }

    #[inline]
    fn count_hash(&self, hash: u64) -> usize {
        self.table.count_located(self.table.addressing().locate(hash))
    }
}

impl CuckooFilter {
    /// The table, and the insert flow over the filter's count, search and limit ([`Inserts`]):
    /// every insert's way past its first step.
    #[inline(always)]
    fn inserts(&mut self) -> (&mut Table, Inserts<'_, &mut usize>) {
        let CuckooFilterIn { table, len, search, config, .. } = self;
        (table, Inserts { count: len, search, limit: config.eviction_limit })
    }

    /// Inserts many items by their hashes, pipelined (see [`crate::batch`]): exactly the results
    /// of one-by-one inserts, in order. Compiled for the default geometry alone where the table
    /// has it, as batched lookups are: an item's prefetch takes an `lea` for a bucket's address
    /// instead of a multiplication by the width the table holds, and its first step does not
    /// dispatch on the table's kind: both are per-item work in the hottest loop of a fill. The
    /// loop runs in the table (`Table::store_pipelined`), the one place that may store without
    /// bounds checks; [`BatchInserts`] is the rest of each item's work.
    fn insert_pipelined<T>(
        &mut self,
        items: &[T],
        hasher: impl BlockHasher<T>,
    ) -> Vec<Result<(), InsertError>> {
        let mut results = vec![Ok(()); items.len()];
        // Below this many items both buckets of an item are rarely full: the check that fetches
        // for the path search would cost every insert a sizeable share of its work for nothing.
        let searches_likely_from = self.table.buckets() * self.table.slots() / 4 * 3;
        let limit = self.config.eviction_limit;
        let CuckooFilterIn { table, len, search, .. } = self;
        let inserts = Inserts { count: *len, search, limit };
        let mut inserts = BatchInserts { inserts, len_out: len, searches_likely_from };
        default_kind_or_any!(table.kind(), KIND => {
            table.store_pipelined::<KIND, T, _>(&mut inserts, items, hasher, &mut results)
        });
        results
    }
}

/// What a pipelined insert does besides the table's first steps: the insert flow every item's
/// first step ends in ([`Inserts`]), with the filter's count.
struct BatchInserts<'a> {
    /// The flow, over a copy of the filter's count kept here while the batch runs (in a register,
    /// not behind the filter) and written back when the batch ends, even by a panic ([`Drop`]).
    inserts: Inserts<'a, usize>,
    len_out: &'a mut usize,
    /// From this many items on, an item's look-ahead fetches what its path search would read.
    searches_likely_from: usize,
}

impl Drop for BatchInserts<'_> {
    fn drop(&mut self) {
        *self.len_out = self.inserts.count;
    }
}

impl PipelinedInserts<Vec<u8>> for BatchInserts<'_> {
    type Output = Result<(), InsertError>;

    #[inline(always)]
    fn ahead<const KIND: Kind>(&self, table: &Table, (_, b1, b2): Located) {
        if self.inserts.count >= self.searches_likely_from {
            PathSearch::prefetch_for_insert::<KIND, _>(table, (b1, b2));
        }
    }

    #[inline(always)]
    fn finish(&mut self, table: &mut Table, first_step: Result<(), Located>) -> Result<(), InsertError> {
        self.inserts.finish(table, first_step.map(|()| true)).map(drop)
    }
}

impl FilterMut for CuckooFilter {
    #[inline]
    fn insert_hash(&mut self, hash: u64) -> Result<(), InsertError> {
        let first_step = self.table.store_hash_in_emptier(hash);
        let (table, mut inserts) = self.inserts();
        inserts.finish(table, first_step.map(|()| true)).map(drop)
    }

    /// Locates the hash once for both the presence check and the insert.
    fn insert_unique_hash(&mut self, hash: u64) -> Result<bool, InsertError> {
        // No prefetch: `contains_located` loads both buckets at once anyway.
        let located = self.table.addressing().locate(hash);
        if self.table.contains_located(|| located) {
            self.skipped_inserts = true;
            return Ok(false);
        }
        let (table, mut inserts) = self.inserts();
        inserts.insert(table, located)
    }

    fn insert_hash_batch(&mut self, hashes: &[u64]) -> Vec<Result<(), InsertError>> {
        self.insert_pipelined(hashes, Prehashed)
    }

    fn insert_batch<K: Key>(&mut self, items: &[K]) -> Vec<Result<(), InsertError>> {
        self.insert_pipelined(items, self.item_hasher())
    }

    #[inline]
    fn remove_hash(&mut self, hash: u64) -> bool {
        // Both buckets are loaded at once, in code compiled for the table's geometry.
        let (fingerprint, b1, b2) = self.table.addressing().locate(hash);
        let removed = self.table.remove_from_either(fingerprint, b1, b2);
        self.len -= removed as usize;
        removed
    }
}

impl<S: AsRef<[u8]>> fmt::Debug for CuckooFilterIn<S> {
    /// A summary: never the table. A view of persisted bytes names itself `CuckooView` and adds
    /// the length of those bytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = if self.persisted.is_some() { "CuckooView" } else { "CuckooFilter" };
        let mut summary = f.debug_struct(name);
        summary
            .field("len", &self.len)
            .field("capacity", &self.config.capacity)
            .field("buckets", &self.config.buckets)
            .field("bucket_size", &self.config.bucket_size)
            .field("fingerprint_bits", &self.config.fingerprint_bits)
            .field("semi_sorted", &self.config.semi_sorted)
            .field("load_factor", &self.load_factor())
            .field("memory_bytes", &self.memory_bytes());
        if let Some(persisted) = &self.persisted {
            summary.field("bytes", &persisted.as_ref().len());
        }
        summary.finish_non_exhaustive()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[derive(Debug, Clone)]
    pub(crate) enum Op {
        Insert(u16),
        InsertUnique(u16),
        /// Removes the n-th (modulo) key that the model holds: removing absent items is documented
        /// to be able to take another item's fingerprint, so the model only removes live ones.
        RemoveLive(usize),
        Contains(u16),
    }

    pub(crate) fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u16..48).prop_map(Op::Insert),
            2 => (0u16..48).prop_map(Op::InsertUnique),
            3 => any::<usize>().prop_map(Op::RemoveLive),
            2 => (0u16..48).prop_map(Op::Contains),
        ]
    }

    /// Small filters of every geometry, semi-sorted ones included.
    pub(crate) fn small_filter() -> impl Strategy<Value = Builder> {
        (
            1usize..40,
            prop::sample::select(crate::BUCKET_SIZES.to_vec()),
            4u32..=32,
            any::<u64>(),
            any::<bool>(),
        )
            .prop_map(|(capacity, bucket_size, bits, seed, semi_sorted)| {
                CuckooFilter::builder()
                    // 4-bit fingerprints in buckets of 2 hold fewer than 40 items reliably.
                    .capacity(capacity.min(crate::sizing::capacity_limit(bucket_size, bits)))
                    .bucket_size(bucket_size)
                    .fingerprint_bits(bits)
                    .seed(seed)
                    .semi_sorted(semi_sorted && bucket_size == 4)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn behaves_like_a_multiset_model(
            builder in small_filter(),
            ops in proptest::collection::vec(op(), 1..300),
        ) {
            let mut filter = builder.eviction_limit(20).build().unwrap();
            let mut model: HashMap<u16, usize> = HashMap::new();
            for op in ops {
                match op {
                    Op::Insert(key) => {
                        let before = filter.table_bytes().to_vec();
                        match filter.insert(&key) {
                            Ok(()) => *model.entry(key).or_default() += 1,
                            Err(error) => {
                                // The multiset limit is reported as such: the item's buckets are
                                // full of its fingerprint; anything else is a full table.
                                let copies = filter.count(&key);
                                let expected = match copies == 2 * filter.bucket_size() {
                                    true => InsertError::CopyLimit { copies },
                                    false => InsertError::Full,
                                };
                                prop_assert_eq!(error, expected);
                                prop_assert_eq!(&before[..], filter.table_bytes());
                            }
                        }
                    }
                    Op::InsertUnique(key) => {
                        let before = filter.table_bytes().to_vec();
                        match filter.insert_unique(&key) {
                            Ok(true) => *model.entry(key).or_default() += 1,
                            Ok(false) => prop_assert_eq!(&before[..], filter.table_bytes()),
                            Err(error) => {
                                prop_assert_eq!(error, InsertError::Full);
                                prop_assert_eq!(model.get(&key).copied().unwrap_or(0), 0);
                                prop_assert_eq!(&before[..], filter.table_bytes());
                            }
                        }
                    }
                    Op::RemoveLive(n) => {
                        let mut live: Vec<u16> = model.iter().filter(|(_, c)| **c > 0).map(|(k, _)| *k).collect();
                        live.sort_unstable();
                        if !live.is_empty() {
                            let key = live[n % live.len()];
                            prop_assert!(filter.remove(&key), "live key {} not removed", key);
                            *model.get_mut(&key).unwrap() -= 1;
                        }
                    }
                    Op::Contains(key) => {
                        if model.get(&key).copied().unwrap_or(0) > 0 {
                            prop_assert!(filter.contains(&key), "false negative for {}", key);
                        }
                    }
                }
                prop_assert_eq!(filter.len(), model.values().sum::<usize>());
                for (key, &copies) in &model {
                    prop_assert!(filter.count(key) >= copies);
                    prop_assert_eq!(filter.contains(key), copies > 0 || filter.contains(key));
                    if copies > 0 {
                        prop_assert!(filter.contains(key), "false negative for {}", key);
                    }
                }
            }
            prop_assert_eq!(filter.stats().items, filter.len());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn batches_answer_exactly_like_one_by_one_calls(
            builder in small_filter(),
            keys in proptest::collection::vec(0u32..200, 0..150),
            probes in proptest::collection::vec(0u32..400, 0..100),
        ) {
            let mut batched = builder.build().unwrap();
            let mut single = builder.build().unwrap();
            let batch_results = batched.insert_batch(&keys);
            let single_results: Vec<_> = keys.iter().map(|k| single.insert(k)).collect();
            prop_assert_eq!(batch_results, single_results);
            prop_assert_eq!(batched.table_bytes(), single.table_bytes());
            prop_assert_eq!(batched.len(), single.len());
            let expected: Vec<bool> = probes.iter().map(|p| single.contains(p)).collect();
            prop_assert_eq!(batched.contains_batch(&probes), expected.clone());
            let hashes: Vec<u64> = probes.iter().map(|p| batched.hash_of(p)).collect();
            prop_assert_eq!(batched.contains_hash_batch(&hashes), expected);
        }
    }

    // Batched inserts store through the located step without checking the buckets, and fetch
    // for the path search only past three quarters full: a fill past capacity crosses both, and
    // must leave the bytes and results of one-by-one inserts (small enough for Miri).
    #[test]
    fn a_batched_fill_past_capacity_is_a_one_by_one_fill() {
        for builder in [CuckooFilter::builder(), CuckooFilter::builder().bucket_size(2).fingerprint_bits(8)] {
            let builder = builder.capacity(48).seed(7);
            let (mut batched, mut single) = (builder.build().unwrap(), builder.build().unwrap());
            // A few more keys than slots: some inserts must fail.
            let slots = single.stats().buckets * single.stats().bucket_size;
            let keys: Vec<u64> = (0..slots as u64 + 4).collect();
            let results: Vec<_> = keys.chunks(40).flat_map(|chunk| batched.insert_batch(chunk)).collect();
            let expected: Vec<_> = keys.iter().map(|key| single.insert(key)).collect();
            assert!(expected.iter().any(Result::is_err), "the fill reaches capacity");
            assert_eq!(results, expected);
            assert_eq!(batched.table_bytes(), single.table_bytes());
            assert_eq!(batched.len(), single.len());
        }
    }

    // An add-if-absent insert takes another first step (the checked one, after the lookup) into
    // the same flow as a plain insert: past capacity, with paths of moves and failures, it must
    // store what a plain insert of an absent item stores, and report the same failures.
    #[test]
    fn add_if_absent_inserts_past_capacity_are_plain_inserts_of_absent_items() {
        for builder in [CuckooFilter::builder(), CuckooFilter::builder().bucket_size(2).fingerprint_bits(8)] {
            let builder = builder.capacity(48).seed(11);
            let (mut unique, mut plain) = (builder.build().unwrap(), builder.build().unwrap());
            let slots = plain.stats().buckets * plain.stats().bucket_size;
            let keys: Vec<u64> = (0..slots as u64 + 8).collect();
            let (mut moved, mut failed) = (false, false);
            for key in &keys {
                let expected = match plain.contains(key) {
                    true => Ok(false),
                    false => {
                        let (_, b1, b2) = plain.table.addressing().locate(plain.hash_of(key));
                        let both_full = [b1, b2].iter().all(|&bucket| plain.table.find(bucket, 0).is_none());
                        let result = plain.insert(key);
                        moved |= both_full && result.is_ok();
                        failed |= result.is_err();
                        result.map(|()| true)
                    }
                };
                assert_eq!(unique.insert_unique(key), expected, "key {key}");
                assert_eq!(unique.table_bytes(), plain.table_bytes(), "key {key}");
                assert_eq!(unique.len(), plain.len());
            }
            assert!(moved && failed, "the fill moves fingerprints and reaches capacity");
        }
    }

    // Every hot geometry (the default's batched lookups run code of their own) and one that is
    // not, answering batches of every length around the pipeline's depth as one by one: a
    // small filter, so that present and absent keys and false positives all occur.
    #[test]
    fn batched_lookups_of_every_length_answer_as_one_by_one_lookups() {
        for (bucket_size, bits, semi_sorted) in [(4, 12, false), (2, 8, false), (4, 13, true), (8, 11, false)]
        {
            let mut filter = CuckooFilter::builder()
                .capacity(300)
                .bucket_size(bucket_size)
                .fingerprint_bits(bits)
                .semi_sorted(semi_sorted)
                .build()
                .unwrap();
            for key in 0..300u64 {
                filter.insert(&key).unwrap();
            }
            // Stored keys and absent ones, alternately.
            let probes: Vec<u64> = (0..3 * crate::batch::LOOKAHEAD as u64 + 7)
                .map(|i| if i % 2 == 0 { i } else { 1_000 + i })
                .collect();
            for len in 0..probes.len() {
                let probes = &probes[..len];
                let expected: Vec<bool> = probes.iter().map(|key| filter.contains(key)).collect();
                assert_eq!(
                    filter.contains_batch(probes),
                    expected,
                    "{bucket_size} x {bits} bits, {len} keys"
                );
            }
        }
    }

    #[test]
    fn batched_lookups_in_tables_that_look_far_ahead_answer_as_one_by_one_lookups() {
        // Capacities whose tables fall on either side of the size from which batched lookups
        // look further ahead; a few stored keys suffice, the blocks are what changes.
        for (capacity, far) in [(1_000_000, false), (12_000_000, true)] {
            let mut filter = CuckooFilter::new(capacity).unwrap();
            assert_eq!(filter.table.looks_far_ahead(), far, "capacity {capacity}");
            let stored: Vec<u64> = (0..5_000u64).map(|i| i * 7).collect();
            assert!(filter.insert_batch(&stored).iter().all(Result::is_ok));
            let probes: Vec<u64> = (0..3 * crate::batch::FAR_LOOKAHEAD as u64 * 7 + 5).collect();
            let expected: Vec<bool> = probes.iter().map(|key| filter.contains(key)).collect();
            assert_eq!(filter.contains_batch(&probes), expected, "capacity {capacity}");
            let hashes: Vec<u64> = probes.iter().map(|key| filter.hash_of(key)).collect();
            assert_eq!(filter.contains_hash_batch(&hashes), expected, "capacity {capacity}");
            let shared = crate::ConcurrentFilter::from_filter(&filter).unwrap();
            assert_eq!(shared.contains_hash_batch(&hashes), expected, "capacity {capacity}, shared");
        }
    }

    #[test]
    fn every_width_and_bucket_size_round_trips() {
        for bucket_size in crate::BUCKET_SIZES {
            for bits in crate::FINGERPRINT_BITS {
                // Narrow fingerprints in small buckets hold fewer items reliably (see `sizing`).
                let capacity = crate::sizing::capacity_limit(bucket_size, bits).min(2_000);
                let mut filter = CuckooFilter::builder()
                    .capacity(capacity)
                    .bucket_size(bucket_size)
                    .fingerprint_bits(bits)
                    .build()
                    .unwrap();
                let keys: Vec<String> = (0..capacity).map(|i| format!("key_{i}")).collect();
                for key in &keys {
                    filter.insert(key).unwrap_or_else(|e| panic!("b={bucket_size} f={bits}: {e}"));
                }
                assert!(keys.iter().all(|k| filter.contains(k)), "b={bucket_size} f={bits}: false negative");
                for key in &keys {
                    assert!(filter.remove(key), "b={bucket_size} f={bits}: {key} not removed");
                }
                assert!(filter.is_empty());
                assert!(
                    filter.table_bytes().iter().all(|&b| b == 0),
                    "b={bucket_size} f={bits}: table not empty"
                );
            }
        }
    }

    #[test]
    fn thirteen_bit_semi_sorted_filters_answer_like_plain_ones_for_stored_items() {
        // The 13-bit semi-sorted probe has its own matcher: filled to capacity, every item is
        // found, counted and removed exactly as in a plain 13-bit filter, and a removed item's
        // copies are gone.
        let build = |semi_sorted| {
            CuckooFilter::builder()
                .capacity(20_000)
                .fingerprint_bits(13)
                .semi_sorted(semi_sorted)
                .build()
                .unwrap()
        };
        let (mut semi, mut plain) = (build(true), build(false));
        for i in 0..20_000u64 {
            semi.insert(&i).unwrap();
            plain.insert(&i).unwrap();
        }
        for i in 0..20_000u64 {
            assert!(semi.contains(&i), "{i}");
            assert_eq!(semi.count(&i), plain.count(&i), "{i}");
        }
        for i in (0..20_000u64).step_by(2) {
            assert!(semi.remove(&i) && plain.remove(&i), "{i}");
        }
        for i in (1..20_000u64).step_by(2) {
            assert!(semi.contains(&i), "{i}");
        }
        assert_eq!(semi.len(), plain.len());
        // The table itself holds 10,000 fingerprints (the histogram counts buckets per fill).
        let stored: usize = semi.stats().fill_histogram.iter().enumerate().map(|(fill, n)| fill * n).sum();
        assert_eq!((semi.len(), stored), (10_000, 10_000));
    }

    #[test]
    fn a_full_pair_of_buckets_refuses_the_next_copy_without_change() {
        let mut filter = CuckooFilter::builder().capacity(100).bucket_size(2).build().unwrap();
        for _ in 0..4 {
            filter.insert("same").unwrap();
        }
        let before = filter.table_bytes().to_vec();
        assert_eq!(filter.insert("same"), Err(InsertError::CopyLimit { copies: 4 }));
        assert!(filter.insert("same").unwrap_err().to_string().contains("at most 2 x bucket size copies"));
        assert_eq!(filter.table_bytes(), &before[..]);
        assert_eq!(filter.count("same"), 4);
        assert_eq!(filter.len(), 4);
    }

    #[test]
    fn the_three_ways_of_naming_an_item_are_consistent() {
        for function in HashFunction::ALL {
            let mut filter = CuckooFilter::builder().capacity(100).hash_function(function).build().unwrap();
            filter.insert(&12345u64).unwrap();
            assert!(filter.contains_hash(function.hash_item(&12345u64, 0)));
            assert!(filter.contains_bytes(&12345u64.to_le_bytes()));
            filter.insert_bytes(b"raw").unwrap();
            assert!(filter.contains_hash(function.hash_bytes(b"raw", 0)));
            assert_eq!(filter.hash_of(&7u64), function.hash_item(&7u64, 0));
        }
        // The free functions are id 1's: what hashes computed before id 2 existed match.
        let mut old =
            CuckooFilter::builder().capacity(100).hash_function(HashFunction::Xxh3).build().unwrap();
        old.insert_hash(crate::hash::hash_item(&12345u64, 0)).unwrap();
        assert!(old.contains(&12345u64));
    }

    #[test]
    fn debug_is_a_summary() {
        let filter = CuckooFilter::new(1_000_000).unwrap();
        let debug = format!("{filter:?}");
        assert!(debug.starts_with("CuckooFilter { len: 0, capacity: 1000000"), "{debug}");
        assert!(debug.len() < 300);
    }

    #[test]
    fn filters_are_send_sync_and_clone_independently() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<CuckooFilter>();
        let mut a = CuckooFilter::new(100).unwrap();
        a.insert("a").unwrap();
        let mut b = a.clone();
        b.insert("b").unwrap();
        assert_eq!((a.len(), b.len()), (1, 2));
        assert!(b.contains("a"));
    }
}
