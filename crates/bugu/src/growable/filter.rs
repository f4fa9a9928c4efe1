//! [`GrowableFilter`]: the chain of levels, and what it does — inserts (newest level, then older
//! levels with room, then a new level), lookups (every level, the large ones prefetched), removals
//! that never take another item's copy ([`Removal`]), and inspection.

use std::fmt;

use crate::config::Builder;
use crate::error::{ConfigError, InsertError};
use crate::filter::CuckooFilter;
use crate::hash::HashFunction;
use crate::key::{Key, KeyEncoding};
use crate::membership::{Filter, FilterMut};
use crate::stats::Stats;

use super::policy::{Growth, Tightening};

/// Levels with tables at least this large are prefetched before they are probed: smaller ones
/// stay in a core's private L2 cache (512 KiB on the machines measured) when lookups are frequent.
const PREFETCH_FROM_BYTES: usize = 256 << 10;

/// Batches of up to this many hashes are probed item by item once every bucket they need in the
/// large levels has been prefetched: for a few items the pipelined kernels' blocks and buffers
/// cost more than they save.
const SMALL_BATCH: usize = 32;

/// What [`GrowableFilter::remove_checked`] did.
///
/// Only [`Removed`](Self::Removed) changes the filter; [`FilterMut::remove`] returns `true` for it
/// and `false` for the others.
///
/// ```
/// use bugu::{FilterMut, GrowableFilter, Removal};
///
/// let mut filter = GrowableFilter::new(10)?;
/// filter.insert("a")?;
/// assert!(filter.remove_checked("a").is_removed());
/// assert_eq!(filter.remove_checked("a"), Removal::NotFound);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[must_use]
pub enum Removal {
    /// Exactly one level held a matching fingerprint; one copy was removed from it.
    Removed {
        /// The index of that level in [`GrowableFilter::levels`] (0 is the oldest).
        level: usize,
    },
    /// No level held a matching fingerprint; nothing changed.
    NotFound,
    /// Several levels held a matching fingerprint. Any of them may be another item's lookalike,
    /// so nothing was removed (the item still reads present, and [`GrowableFilter::len`] counts
    /// it).
    Ambiguous {
        /// How many levels matched (at least 2).
        levels: usize,
    },
}

impl Removal {
    /// Whether a copy was removed.
    ///
    /// ```
    /// use bugu::Removal;
    /// assert!(Removal::Removed { level: 3 }.is_removed());
    /// assert!(!Removal::Ambiguous { levels: 2 }.is_removed());
    /// assert!(!Removal::NotFound.is_removed());
    /// ```
    pub fn is_removed(self) -> bool {
        matches!(self, Removal::Removed { .. })
    }
}

/// A filter that grows without its keys: a chain of [`CuckooFilter`] levels, each larger than the
/// last and with a narrower false-positive rate, so that the total rate stays below the target at
/// every size (proof in the [module docs](crate::growable)).
///
/// It implements [`Filter`] and [`FilterMut`], so it offers the same [`Key`], byte and
/// pre-hashed entry points, with the same multiset semantics, as [`CuckooFilter`].
///
/// ```
/// use bugu::{Filter, FilterMut, GrowableFilter};
///
/// let mut filter = GrowableFilter::builder()
///     .initial_capacity(1_000)
///     .false_positive_rate(0.001)
///     .build()?;
/// for i in 0..100_000u32 {
///     filter.insert(&i)?;
/// }
/// assert_eq!(filter.len(), 100_000);
/// assert!(filter.level_count() > 1);
/// assert!((0..100_000u32).all(|i| filter.contains(&i)));
/// assert!(filter.false_positive_rate() < 0.001);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct GrowableFilter {
    /// Oldest first; never empty.
    pub(super) levels: Vec<CuckooFilter>,
    pub(super) growth: Growth,
    /// The sum of the levels' lengths.
    pub(super) len: usize,
}

impl GrowableFilter {
    /// A filter of these levels (oldest first, never empty) and settings, as built or read back.
    pub(crate) fn from_parts(levels: Vec<CuckooFilter>, growth: Growth) -> Self {
        debug_assert!(!levels.is_empty());
        let len = levels.iter().map(CuckooFilter::len).sum();
        GrowableFilter { levels, growth, len }
    }

    /// The settings every level shares, and the growth rules.
    pub(crate) fn growth(&self) -> &Growth {
        &self.growth
    }

    /// Number of stored fingerprints in all levels (inserts minus successful removes).
    ///
    /// ```
    /// use bugu::{FilterMut, GrowableFilter};
    /// let mut filter = GrowableFilter::new(10)?;
    /// for i in 0..100u32 {
    ///     filter.insert(&i)?;
    /// }
    /// assert_eq!(filter.len(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is stored.
    ///
    /// ```
    /// assert!(bugu::GrowableFilter::new(10)?.is_empty());
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The sum of the levels' capacities: how many items the filter holds before it next grows
    /// (about; each level may hold a few more than its capacity).
    ///
    /// ```
    /// use bugu::{FilterMut, GrowableFilter};
    /// let mut filter = GrowableFilter::new(100)?;
    /// assert_eq!(filter.capacity(), 100);
    /// for i in 0..250u32 {
    ///     filter.insert(&i)?;
    /// }
    /// assert_eq!(filter.capacity(), 100 + 200);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.levels.iter().map(CuckooFilter::capacity).sum()
    }

    /// The number of levels (at least 1).
    ///
    /// ```
    /// assert_eq!(bugu::GrowableFilter::new(10)?.level_count(), 1);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn level_count(&self) -> usize {
        self.levels.len()
    }

    /// The levels, oldest (smallest) first, for inspection.
    ///
    /// ```
    /// use bugu::{FilterMut, GrowableFilter};
    /// let mut filter = GrowableFilter::new(100)?;
    /// for i in 0..1_000u32 {
    ///     filter.insert(&i)?;
    /// }
    /// let levels = filter.levels();
    /// assert_eq!(levels[1].capacity(), 2 * levels[0].capacity());
    /// assert!(levels[1].fingerprint_bits() >= levels[0].fingerprint_bits());
    /// assert_eq!(levels.iter().map(|level| level.len()).sum::<usize>(), 1_000);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn levels(&self) -> &[CuckooFilter] {
        &self.levels
    }

    /// Occupancy statistics of every level, oldest first (walks every table).
    ///
    /// ```
    /// use bugu::{FilterMut, GrowableFilter};
    /// let mut filter = GrowableFilter::new(100)?;
    /// for i in 0..500u32 {
    ///     filter.insert(&i)?;
    /// }
    /// let stats = filter.stats();
    /// assert_eq!(stats.len(), filter.level_count());
    /// assert_eq!(stats.iter().map(|s| s.items).sum::<usize>(), 500);
    /// for level in &stats {
    ///     println!("{level}");
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stats(&self) -> Vec<Stats> {
        self.levels.iter().map(CuckooFilter::stats).collect()
    }

    /// Bytes of memory the levels' tables occupy.
    ///
    /// ```
    /// let filter = bugu::GrowableFilter::new(1_000)?;
    /// assert_eq!(filter.memory_bytes(), filter.levels()[0].memory_bytes());
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn memory_bytes(&self) -> usize {
        self.levels.iter().map(CuckooFilter::memory_bytes).sum()
    }

    /// Bits of memory per stored item; infinite while the filter is empty.
    ///
    /// ```
    /// use bugu::{FilterMut, GrowableFilter};
    /// let mut filter = GrowableFilter::new(1_000)?;
    /// for i in 0..1_000u32 {
    ///     filter.insert(&i)?;
    /// }
    /// assert!(filter.bits_per_item() < 20.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bits_per_item(&self) -> f64 {
        self.memory_bytes() as f64 * 8.0 / self.len as f64
    }

    /// The proven false-positive bound: the sum of the levels' bounds at full occupancy. It is
    /// below [`target_false_positive_rate`](Self::target_false_positive_rate) at every size.
    ///
    /// ```
    /// use bugu::{FilterMut, GrowableFilter};
    /// let mut filter = GrowableFilter::builder().initial_capacity(10).false_positive_rate(0.01).build()?;
    /// for i in 0..10_000u32 {
    ///     filter.insert(&i)?;
    ///     assert!(filter.false_positive_rate() < 0.01);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn false_positive_rate(&self) -> f64 {
        self.levels.iter().map(CuckooFilter::false_positive_rate).sum()
    }

    /// The configured target rate: the bound the filter keeps at every size.
    ///
    /// ```
    /// assert_eq!(bugu::GrowableFilter::new(10)?.target_false_positive_rate(), 0.001);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn target_false_positive_rate(&self) -> f64 {
        self.growth.target
    }

    /// The false-positive rate expected at the levels' current loads (0 when empty).
    ///
    /// ```
    /// use bugu::{FilterMut, GrowableFilter};
    /// let mut filter = GrowableFilter::new(100)?;
    /// assert_eq!(filter.expected_false_positive_rate(), 0.0);
    /// filter.insert("a")?;
    /// assert!(filter.expected_false_positive_rate() < filter.false_positive_rate());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn expected_false_positive_rate(&self) -> f64 {
        self.levels.iter().map(CuckooFilter::expected_false_positive_rate).sum()
    }

    /// The growth factor.
    ///
    /// ```
    /// assert_eq!(bugu::GrowableFilter::new(10)?.growth_factor(), 2);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn growth_factor(&self) -> usize {
        self.growth.growth_factor
    }

    /// The tightening policy.
    ///
    /// ```
    /// assert_eq!(bugu::GrowableFilter::new(10)?.tightening(), bugu::DEFAULT_TIGHTENING);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn tightening(&self) -> Tightening {
        self.growth.tightening
    }

    /// The most items the filter holds ([`len`](Self::len) never exceeds it once set; see
    /// [`GrowableBuilder::max_capacity`](super::GrowableBuilder::max_capacity)), if one was set.
    ///
    /// ```
    /// assert_eq!(bugu::GrowableFilter::new(10)?.max_capacity(), None);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn max_capacity(&self) -> Option<usize> {
        self.growth.max_capacity
    }

    /// The maximum number of levels, if one was set.
    ///
    /// ```
    /// assert_eq!(bugu::GrowableFilter::new(10)?.max_levels(), None);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn max_levels(&self) -> Option<usize> {
        self.growth.max_levels
    }

    /// Slots per bucket in every level.
    ///
    /// ```
    /// assert_eq!(bugu::GrowableFilter::new(10)?.bucket_size(), 4);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn bucket_size(&self) -> usize {
        self.growth.bucket_size
    }

    /// The eviction limit of every level.
    ///
    /// ```
    /// assert_eq!(bugu::GrowableFilter::new(10)?.eviction_limit(), 500);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn eviction_limit(&self) -> usize {
        self.growth.eviction_limit
    }

    /// Removes one copy of `item` if that cannot take another item's copy, and says what happened.
    ///
    /// Every level is probed for a fingerprint matching `item`:
    /// - none matches: [`Removal::NotFound`], nothing changes;
    /// - exactly one level matches: one matching fingerprint is removed from it,
    ///   [`Removal::Removed`] with that level's index, and [`len`](Self::len) drops by one;
    /// - several levels match: [`Removal::Ambiguous`] with how many, nothing changes. One of the
    ///   matches may be another item's lookalike, and which one cannot be told, so the item's copy
    ///   stays (a leftover false positive) rather than risking another item's.
    ///
    /// An item that was inserted and not yet removed therefore never reads absent, whatever the
    /// order of removals (the argument is in the [module docs](crate::growable#removal)). Removing an
    /// item that was never inserted can still take the copy of another item that shares its
    /// fingerprint and buckets in the one matching level, as in a [`CuckooFilter`]: only remove
    /// what you inserted. [`remove`](FilterMut::remove) is `true` exactly for
    /// [`Removal::Removed`].
    ///
    /// ```
    /// use bugu::{Filter, FilterMut, GrowableFilter, Removal};
    ///
    /// let mut filter = GrowableFilter::new(100)?;
    /// filter.insert("once")?;
    /// assert_eq!(filter.remove_checked("once"), Removal::Removed { level: 0 });
    /// assert_eq!(filter.remove_checked("once"), Removal::NotFound);
    ///
    /// // One copy in the first level, one in a level added by growth: the removal cannot tell the
    /// // item's copies from another item's lookalike, so it removes neither.
    /// filter.insert("twice")?;
    /// for i in 0..1_000u32 {
    ///     filter.insert(&i)?;
    /// }
    /// filter.insert("twice")?;
    /// let len = filter.len();
    /// assert_eq!(filter.remove_checked("twice"), Removal::Ambiguous { levels: 2 });
    /// assert!(!filter.remove("twice"));
    /// assert_eq!((filter.len(), filter.count("twice")), (len, 2));
    /// assert!((0..1_000u32).all(|i| filter.contains(&i)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn remove_checked<K: Key + ?Sized>(&mut self, item: &K) -> Removal {
        let hash = self.hash_of(item);
        self.remove_hash_checked(hash)
    }

    /// [`remove_checked`](Self::remove_checked) for a pre-computed hash (see [`Filter::hash_of`]).
    ///
    /// ```
    /// use bugu::{Filter, FilterMut, GrowableFilter, Removal};
    ///
    /// let mut filter = GrowableFilter::new(10)?;
    /// let hash = filter.hash_of("a");
    /// filter.insert_hash(hash)?;
    /// assert_eq!(filter.remove_hash_checked(hash), Removal::Removed { level: 0 });
    /// assert_eq!(filter.remove_hash_checked(hash), Removal::NotFound);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn remove_hash_checked(&mut self, hash: u64) -> Removal {
        let mut matching = (0..self.levels.len()).filter(|&index| self.levels[index].contains_hash(hash));
        let Some(level) = matching.next() else {
            return Removal::NotFound;
        };
        let others = matching.count();
        if others > 0 {
            return Removal::Ambiguous { levels: others + 1 };
        }
        let removed = self.levels[level].remove_hash(hash);
        debug_assert!(removed, "level {level} matched but removed nothing");
        self.len -= 1;
        Removal::Removed { level }
    }

    /// Whether an add-if-absent insert has skipped an item since the filter was built or last
    /// cleared; removing items may then cause false negatives (see
    /// [`CuckooFilterIn::has_skipped_inserts`](crate::CuckooFilterIn::has_skipped_inserts)). Kept
    /// through saving and loading.
    ///
    /// ```
    /// use bugu::{FilterMut, GrowableFilter, Persist};
    /// let mut filter = GrowableFilter::new(10)?;
    /// filter.insert_unique("a")?;
    /// filter.insert_unique("a")?;
    /// assert!(GrowableFilter::from_bytes(&filter.to_bytes())?.has_skipped_inserts());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn has_skipped_inserts(&self) -> bool {
        self.levels.iter().any(CuckooFilter::has_skipped_inserts)
    }

    /// Empties the filter and shrinks it back to its first level (keeping that level's memory).
    /// Growing again adds the same levels as before.
    ///
    /// ```
    /// use bugu::{Filter, FilterMut, GrowableFilter};
    /// let mut filter = GrowableFilter::new(10)?;
    /// for i in 0..100u32 {
    ///     filter.insert(&i)?;
    /// }
    /// filter.clear();
    /// assert!(filter.is_empty() && !filter.contains(&1u32));
    /// assert_eq!((filter.level_count(), filter.capacity()), (1, 10));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn clear(&mut self) {
        self.levels.truncate(1);
        self.levels[0].clear();
        self.len = 0;
    }

    /// The level that growth would add next, allocated; [`InsertError::Full`] at the maximum.
    pub(super) fn next_level(&self) -> Result<CuckooFilter, InsertError> {
        // Building allocates the table fallibly: a refusal is an error, not an abort.
        self.next_level_builder()?.build().map_err(|error| match error {
            ConfigError::OutOfMemory { bytes } => InsertError::OutOfMemory { bytes },
            ConfigError::CapacityTooLarge(_) | ConfigError::TableTooLarge { .. } => {
                InsertError::OutOfMemory { bytes: usize::MAX }
            }
            // The share needs fingerprints wider than 32 bits: the series is exhausted.
            _ => InsertError::Full,
        })
    }

    /// The builder of the next level, or [`InsertError::Full`] if the maximum forbids one.
    pub(super) fn next_level_builder(&self) -> Result<Builder, InsertError> {
        // Every level hashes typed keys by the first level's rule: a filter read from a file of
        // the older rule grows by that rule.
        let builder = self.growth.next_level_builder(&self.levels)?;
        Ok(builder.key_encoding(self.levels[0].key_encoding()))
    }

    /// How many of the oldest levels are small enough to stay in the CPU's private caches
    /// (tables under [`PREFETCH_FROM_BYTES`]); the levels after them are the large ones.
    #[inline]
    fn cached_levels(&self) -> usize {
        self.levels.partition_point(|level| level.memory_bytes() < PREFETCH_FROM_BYTES)
    }

    /// Why an insert that every level refused fails instead of opening a level, if it does:
    /// the newest level is below its capacity and the item's buckets there already hold its
    /// fingerprint, so copies (the item's, its lookalikes', or those of items sharing its
    /// buckets) are what fills them.
    ///
    /// Below its capacity the builder's sizing makes a level refusing a distinct item as unlikely
    /// as a fill of distinct items failing ([`FIT_FAILURE_BOUND`](crate::FIT_FAILURE_BOUND)), and
    /// the match must be a false positive besides; growing for copies instead would let items
    /// inserted without end add level after level. At or past its capacity lookalikes fill
    /// buckets far more often, and a new level, which starts empty, takes the item: one item's
    /// copies then open at most one level, itself below its capacity.
    fn refusal_without_growth(&self, newest: usize, hash: u64) -> Option<InsertError> {
        let level = &self.levels[newest];
        if level.len() >= level.capacity() {
            return None;
        }
        match level.count_hash(hash) {
            0 => None,
            copies => Some(InsertError::CopyLimit { copies }),
        }
    }

    /// Inserts into a level older than the newest, newest to oldest; the index of the level that
    /// took it.
    fn insert_older(&mut self, hash: u64) -> Option<usize> {
        let newest = self.levels.len() - 1;
        (0..newest).rev().find(|&index| self.levels[index].insert_hash(hash).is_ok())
    }
}

impl Filter for GrowableFilter {
    #[inline]
    fn seed(&self) -> u64 {
        self.growth.seed
    }

    #[inline]
    fn hash_function(&self) -> HashFunction {
        self.growth.hash_function
    }

    #[inline]
    fn key_encoding(&self) -> KeyEncoding {
        self.levels[0].key_encoding()
    }

    /// Starts fetching the item's buckets in every level too large for the CPU's private caches,
    /// then probes the levels newest first: the cache misses of the large levels overlap instead
    /// of queueing one after another.
    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        if self.levels.len() > 1 {
            for level in self.levels[self.cached_levels()..].iter() {
                level.table().locate_and_prefetch(hash);
            }
        }
        self.levels.iter().rev().any(|level| level.contains_hash(hash))
    }

    #[inline]
    fn count_hash(&self, hash: u64) -> usize {
        self.levels.iter().map(|level| level.count_hash(hash)).sum()
    }

    /// Probes the large levels one at a time, newest first, each with that level's batched
    /// (pipelined) lookup, passing on only the hashes not found yet; then the small levels, which
    /// sit in the CPU's caches and gain nothing from prefetching, with plain probes. A batch of
    /// at most 32 hashes (`SMALL_BATCH`) first prefetches the buckets of every hash in every large
    /// level, then probes hash by hash, so that all of its reads are in flight together.
    fn contains_hash_batch(&self, hashes: &[u64]) -> Vec<bool> {
        if hashes.len() <= SMALL_BATCH {
            for level in &self.levels[self.cached_levels()..] {
                for &hash in hashes {
                    level.table().locate_and_prefetch(hash);
                }
            }
            return hashes
                .iter()
                .map(|&hash| self.levels.iter().rev().any(|level| level.contains_hash(hash)))
                .collect();
        }
        if self.levels.len() == 1 {
            return self.levels[0].contains_hash_batch(hashes);
        }
        let mut found = vec![false; hashes.len()];
        let mut pending: Vec<usize> = (0..hashes.len()).collect();
        let mut pending_hashes = hashes.to_vec();
        let cached = self.cached_levels();
        for level in self.levels[cached..].iter().rev() {
            if pending.is_empty() {
                break;
            }
            let answers = level.contains_hash_batch(&pending_hashes);
            let mut kept = 0;
            for (at, &present) in answers.iter().enumerate() {
                if present {
                    found[pending[at]] = true;
                } else {
                    pending[kept] = pending[at];
                    pending_hashes[kept] = pending_hashes[at];
                    kept += 1;
                }
            }
            pending.truncate(kept);
            pending_hashes.truncate(kept);
        }
        let small = &self.levels[..cached];
        for (&at, &hash) in pending.iter().zip(&pending_hashes) {
            found[at] = small.iter().rev().any(|level| level.contains_hash(hash));
        }
        found
    }

    fn contains_batch<K: Key>(&self, items: &[K]) -> Vec<bool> {
        let hashes: Vec<u64> = items.iter().map(|item| self.hash_of(item)).collect();
        self.contains_hash_batch(&hashes)
    }
}

impl FilterMut for GrowableFilter {
    /// Stores one copy: in the newest level, else in an older level with room, else in a new
    /// level (see the [module docs](crate::growable) for when that is refused, including at
    /// [`GrowableFilter::max_capacity`] items). On error nothing changed.
    fn insert_hash(&mut self, hash: u64) -> Result<(), InsertError> {
        // The maximum bounds the items held, not only the levels' capacities: levels hold a few
        // more items than their capacity.
        if self.growth.max_capacity.is_some_and(|max| self.len >= max) {
            return Err(InsertError::Full);
        }
        let newest = self.levels.len() - 1;
        if self.levels[newest].insert_hash(hash).is_ok() || self.insert_older(hash).is_some() {
            self.len += 1;
            return Ok(());
        }
        if let Some(error) = self.refusal_without_growth(newest, hash) {
            return Err(error);
        }
        let mut level = self.next_level()?;
        self.levels
            .try_reserve(1)
            .map_err(|_| InsertError::OutOfMemory { bytes: std::mem::size_of::<CuckooFilter>() })?;
        // An empty level always has a free slot in the item's first bucket.
        level.insert_hash(hash)?;
        self.levels.push(level);
        self.len += 1;
        Ok(())
    }

    /// Stores the item unless a level holds a matching fingerprint. A skip is recorded (see
    /// [`GrowableFilter::has_skipped_inserts`]).
    fn insert_unique_hash(&mut self, hash: u64) -> Result<bool, InsertError> {
        if self.contains_hash(hash) {
            self.levels[0].record_skipped_insert();
            return Ok(false);
        }
        self.insert_hash(hash).map(|()| true)
    }

    /// Removes one copy if exactly one level holds a matching fingerprint; `false` if nothing was
    /// removed: no level matched, or several did (the removal was ambiguous and is refused, see
    /// [`GrowableFilter::remove_hash_checked`] and the [module docs](crate::growable)).
    fn remove_hash(&mut self, hash: u64) -> bool {
        self.remove_hash_checked(hash).is_removed()
    }
}

impl fmt::Debug for GrowableFilter {
    /// A summary: never the tables.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrowableFilter")
            .field("len", &self.len)
            .field("capacity", &self.capacity())
            .field("levels", &self.levels.len())
            .field("target_false_positive_rate", &self.growth.target)
            .field("false_positive_rate", &self.false_positive_rate())
            .field("memory_bytes", &self.memory_bytes())
            .finish_non_exhaustive()
    }
}
