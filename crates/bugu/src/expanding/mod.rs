//! [`ExpandingFilter`]: a filter that grows in one table, so a lookup reads two buckets at every
//! size, removes without ambiguity, and keeps its false-positive rate under a target up to a
//! declared maximum size.
//!
//! # How it grows
//!
//! An item's 64-bit hash gives a fingerprint (its low bits) and address bits (the rest). With
//! `n0 = 2^m` initial buckets, at level `L` the table has `n0 x 2^L` buckets and an item's bucket
//! is the low `m + L` bits of its address: linear hashing. A split pointer runs over the buckets;
//! splitting one moves each of its entries to it or to its new sibling `n0 x 2^L` further on by
//! the next bit of
//! the entry's *tail* — the address bits stored beside its fingerprint — so no item is re-hashed
//! and nothing is copied: buckets live in segments that are only ever added, one per doubling. A few
//! buckets split per insert (whenever entries pass 80% of the slots), so no insert pauses.
//!
//! An entry whose tail is used up when its bucket splits becomes *twins*, one in each half: one
//! of them is wrong, but neither can be told from the other, and together they weigh what the
//! entry did (see below). New entries take tails counted from the lower level, so any entry's
//! known bits reach every bucket it may be moved to, except twins made this round, which are
//! never kicked into a bucket that needs more bits than they know.
//!
//! Each item has two buckets, as in every cuckoo filter: the second's address bits are the
//! first's XOR a hash of the fingerprint alone (odd, so the two differ in the lowest bit at every
//! level), so an entry moves between them without its item. An insert that finds no room by moving entries leaves the last entry
//! it carried in a small stash, which lookups also read and splits drain.
//!
//! # Matching and removal
//!
//! An entry matches a key when its fingerprint is the key's and its known address bits (the
//! bucket's level plus the tail) are a prefix of the key's address bits. A removal deletes the matching
//! entry with the most known bits: every match is a prefix of the key's bits, so a shorter match
//! left behind also matches whichever live key it belongs to. No removal order causes a false
//! negative.
//!
//! # The bound
//!
//! An entry with `k` known bits matches an absent key with probability `2 x 2^-(f + k) / n0` (two
//! buckets, `f`-bit fingerprints). The filter keeps `W`, the sum of `2^-k` over its entries, exactly
//! (splits and twins leave it unchanged), and [`ExpandingStats::rate_bound`] is `2 W / (n0 2^f)`.
//! An insert that would raise it above the target fails with
//! [`InsertError::RateBound`]; the widths are chosen so that this happens only past the declared
//! maximum.

mod config;
mod insert;
mod parts;
mod table;
#[cfg(test)]
mod tests;

pub use config::{DEFAULT_MAX_ITEMS, ExpandingBuilder, ExpandingConfigError};
pub(crate) use parts::{ExpandingFields, MAX_STASH, StashedEntry};

use crate::batch::LOOKAHEAD;
use crate::error::InsertError;
use crate::hash::HashFunction;
use crate::key::KeyEncoding;
use crate::membership::{Filter, FilterMut};
use crate::table::alloc::AllocFailed;
use table::{Probed, SLOTS, Segments, Widths, tail_field, tail_len, tail_matches};

/// Mixed into a fingerprint to derive its alternate-side transform.
const ALTERNATE_KEY: u64 = 0x6a09_e667_f3bc_c909;

/// Multiplies it: one multiplication (not a full mix) keeps the second bucket's address a short
/// computation, and a fingerprint's few bits need no more to spread over the address bits.
const ALTERNATE_MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

/// A growable cuckoo filter in one table (see the [module docs](self)), whose buckets live in
/// `S`.
///
/// Every read-only method — the getters, [`stats`](Self::stats), [`summary`](Self::summary) and
/// [`Filter`] (lookups, counts, batches) — is written once for any `S: AsRef<[u8]>`. Two
/// storages are named:
/// - [`ExpandingFilter`] (`Vec<u8>`, the default): the owned filter, which alone inserts,
///   removes and grows ([`FilterMut`], [`clear`](ExpandingFilter::clear)) and persists
///   ([`Persist`](crate::Persist));
/// - [`ExpandingView`](crate::ExpandingView) (`&[u8]`): a read-only filter over borrowed bytes of
///   the persistent format, such as a memory-mapped file, read in place; it cannot outlive them.
///
/// ```
/// use bugu::{ExpandingFilter, ExpandingFilterIn, ExpandingView, Filter, FilterMut, Persist};
///
/// /// Works for an owned filter and a view alike.
/// fn describe<S: AsRef<[u8]>>(filter: &ExpandingFilterIn<S>) -> String {
///     format!("{} items in {} buckets", filter.len(), filter.bucket_count())
/// }
///
/// let mut filter = ExpandingFilter::new(100)?;
/// filter.insert("a")?;
/// let bytes = filter.to_bytes();
/// let view = ExpandingView::from_bytes(&bytes)?;
/// assert_eq!(describe(&filter), describe(&view));
/// assert!(view.contains("a"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ExpandingFilterIn<S = Vec<u8>> {
    widths: Widths,
    /// `m`: the table has `n0 = 2^m` buckets at level 0.
    base_bits: u32,
    level: u32,
    /// The next bucket to split, in `0..n0 x 2^level`; buckets below it are at `level + 1`.
    split: usize,
    segments: Segments<S>,
    stash: Vec<Entry>,
    len: usize,
    entries: usize,
    /// `W` in units of 2^-64: the sum over entries of 2^(64 - known bits).
    weight: u128,
    /// The largest weight whose bound is within the target rate.
    weight_limit: u128,
    rate: f64,
    max_items: u64,
    seed: u64,
    rng: u64,
    /// Whether an add-if-absent insert skipped an item (see
    /// [`has_skipped_inserts`](Self::has_skipped_inserts)).
    skipped_inserts: bool,
    /// The whole persisted filter whose buckets this one reads in place: `Some` for a view,
    /// which [`as_bytes`](crate::ExpandingView::as_bytes) returns; `None` for an owned filter.
    persisted: Option<S>,
}

/// A growable cuckoo filter in one table (see the [module docs](self)): the owned, mutable
/// [`ExpandingFilterIn`].
///
/// ```
/// use bugu::{Filter, FilterMut};
/// use bugu::expanding::ExpandingFilter;
///
/// let mut filter = ExpandingFilter::new(100)?;
/// for id in 0..10_000u64 {
///     filter.insert(&id)?;
/// }
/// assert!((0..10_000u64).all(|id| filter.contains(&id)));
/// assert!(filter.stats().rate_bound <= 0.001);
/// assert!(filter.remove(&7u64));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
// An alias rather than the struct's default type, as for `CuckooFilter`: the owned filter's and
// the view's `from_bytes` are different constructors.
pub type ExpandingFilter = ExpandingFilterIn<Vec<u8>>;

impl<S: Clone> ExpandingFilterIn<S> {
    /// A copy of this filter over `segments`, a copy of its table.
    fn with_table(&self, segments: Segments<S>) -> Self {
        ExpandingFilterIn { segments, stash: self.stash.clone(), persisted: self.persisted.clone(), ..*self }
    }
}

// `Clone` for each storage rather than for any `S: Clone`: a copy's table must derive its
// directory from its own buffers through `Vec::as_mut_ptr` to be written through, which nothing
// on a generic `S` gives.

/// A copy with its own table.
impl Clone for ExpandingFilter {
    fn clone(&self) -> Self {
        self.with_table(self.segments.clone())
    }
}

/// A copy that reads the same bytes, borrowed for the same lifetime.
impl Clone for ExpandingFilterIn<&[u8]> {
    fn clone(&self) -> Self {
        self.with_table(self.segments.clone())
    }
}

/// An entry as seen from one of its two sides: its known address bits (the `m` of its base
/// bucket and `depth` more; those above are 0) and its fingerprint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Entry {
    address: u64,
    depth: u32,
    fingerprint: u32,
}

/// A key located: its two sides, and the bucket and level of each.
#[derive(Debug, Clone, Copy, Default)]
struct KeySides {
    sides: [Entry; 2],
    buckets: [(usize, u32); 2],
}

/// Where a match was found.
#[derive(Debug, Clone, Copy)]
enum Place {
    Slot { bucket: usize, slot: usize },
    Stash(usize),
}

/// What an [`ExpandingFilter`] holds, and its bound.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExpandingStats {
    /// Items stored (inserts minus removals).
    pub len: usize,
    /// Entries in the table and the stash: items plus the extra copies twins made.
    pub entries: usize,
    /// `entries - len`: the copies twins added, including those whose item was removed.
    pub twins: usize,
    /// Buckets in use.
    pub buckets: usize,
    /// Slots per bucket ([`ExpandingFilter::BUCKET_SIZE`]).
    pub bucket_size: usize,
    /// `entries / (buckets x bucket_size)`: the share of the slots in use (the stash aside).
    pub load_factor: f64,
    /// The lower level: buckets below the split pointer are one level higher.
    pub level: u32,
    /// The next bucket to split.
    pub split_pointer: usize,
    /// Entries in the stash.
    pub stash: usize,
    /// Fingerprint bits.
    pub fingerprint_bits: u32,
    /// The most address bits a tail holds.
    pub tail_bits: u32,
    /// Entries by the number of tail bits they hold (index 0 = none left).
    pub tail_histogram: Vec<usize>,
    /// Bytes of the table (segments and stash).
    pub memory_bytes: usize,
    /// `memory_bytes x 8 / len`.
    pub bits_per_item: f64,
    /// The bound on the false-positive rate, from the entries held now.
    pub rate_bound: f64,
    /// The target rate the bound stays under.
    pub target_rate: f64,
}

/// The hash function of every expanding filter. Kind 3 files store no hash id, so the function
/// they were written with is this one for good: named here rather than taken from
/// [`HashFunction::default`], which may move for new filters of the other kinds.
pub(crate) const HASH_FUNCTION: HashFunction = HashFunction::Xxh3Mix8;

#[inline]
fn mask(bits: u32) -> u64 {
    debug_assert!(bits <= 64);
    u64::MAX.checked_shr(64 - bits).unwrap_or(0)
}

/// The low `bits` bits of `value`, for `bits` under 64 (bucket levels are): cheaper than
/// [`mask`] on the lookup path.
#[inline(always)]
fn low_bits(value: u64, bits: u32) -> u64 {
    value & ((1 << bits) - 1)
}

impl ExpandingFilter {
    /// A filter for `initial_capacity` items at first, with the default target rate (0.001) and
    /// declared maximum (2^32 items).
    pub fn new(initial_capacity: usize) -> Result<Self, ExpandingConfigError> {
        Self::builder().initial_capacity(initial_capacity).build()
    }

    /// A builder, with the defaults of [`new`](Self::new).
    pub fn builder() -> ExpandingBuilder {
        ExpandingBuilder::default()
    }

    fn from_builder(builder: &ExpandingBuilder) -> Result<Self, ExpandingConfigError> {
        let (widths, base_bits, split) = builder.plan()?;
        Self::with_widths(builder, widths, base_bits, split)
            .map_err(|failed| ExpandingConfigError::OutOfMemory { bytes: failed.bytes })
    }

    /// A filter with the given widths and `2^base_bits` initial buckets (with `split` of them
    /// split already), whatever the builder's plan would choose.
    fn with_widths(
        builder: &ExpandingBuilder,
        widths: Widths,
        base_bits: u32,
        split: usize,
    ) -> Result<Self, AllocFailed> {
        let mut segments = Segments::new(widths, base_bits)?;
        if split > 0 {
            // The siblings of the buckets split already.
            segments.reserve((1 << base_bits) + split - 1)?;
        }
        Ok(Self::with_segments(builder, widths, base_bits, split, segments))
    }

    /// Removes every item (and the flag of skipped inserts); the table keeps the size it grew to.
    ///
    /// ```
    /// use bugu::{ExpandingFilter, Filter, FilterMut};
    /// let mut filter = ExpandingFilter::new(100)?;
    /// for i in 0..1_000u32 {
    ///     filter.insert(&i)?;
    /// }
    /// filter.clear();
    /// assert!(filter.is_empty() && !filter.contains(&7u32));
    /// assert_eq!(filter.stats().rate_bound, 0.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn clear(&mut self) {
        self.clear_leftover_twins();
        self.len = 0;
        self.skipped_inserts = false;
    }

    /// Empties the table once no item is left: what remains are twins whose items are gone (one
    /// copy of an entry that became twins is removed with its item, the other cannot be told
    /// from another item's entry while items are left). Clearing them returns the table to a
    /// false-positive rate of 0 and gives their weight back to the bound.
    fn clear_leftover_twins(&mut self) {
        for bucket in 0..self.buckets() {
            self.segments.clear_bucket(bucket);
        }
        self.stash.clear();
        self.entries = 0;
        self.weight = 0;
    }
}

impl<S: AsRef<[u8]>> ExpandingFilterIn<S> {
    /// An empty filter over `segments`, with the builder's settings.
    fn with_segments(
        builder: &ExpandingBuilder,
        widths: Widths,
        base_bits: u32,
        split: usize,
        segments: Segments<S>,
    ) -> Self {
        ExpandingFilterIn {
            widths,
            base_bits,
            level: 0,
            split,
            segments,
            stash: Vec::new(),
            len: 0,
            entries: 0,
            weight: 0,
            // The bound 2 W / (n0 2^f) at most the rate, with W in units of 2^-64.
            weight_limit: (builder.rate * 2f64.powi((base_bits + widths.fingerprint) as i32 + 63)) as u128,
            rate: builder.rate,
            max_items: builder.max_items,
            seed: builder.seed,
            rng: builder.seed ^ 0x9e37_79b9_7f4a_7c15 | 1,
            skipped_inserts: false,
            persisted: None,
        }
    }

    /// Whether an add-if-absent insert ([`FilterMut::insert_unique`]) has skipped an item because
    /// a matching entry was there. That entry may be another item's (a false positive), and
    /// removing that item would then leave the skipped one reading absent: a false negative. A filter that has skipped inserts should only take removals if
    /// its user accepts that risk; the `bugu` command refuses them unless told otherwise. The
    /// flag is kept through saving and loading.
    ///
    /// ```
    /// use bugu::{ExpandingFilter, Filter, FilterMut};
    /// let mut filter = ExpandingFilter::new(100)?;
    /// filter.insert_unique("a")?;
    /// assert!(!filter.has_skipped_inserts());
    /// filter.insert_unique("a")?; // present: skipped
    /// assert!(filter.has_skipped_inserts());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn has_skipped_inserts(&self) -> bool {
        self.skipped_inserts
    }

    /// Items stored.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no item is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of the table and the stash; 0 for a view, which owns no table.
    pub fn memory_bytes(&self) -> usize {
        if self.reads_in_place() {
            return 0;
        }
        self.segments.memory_bytes(self.buckets()) + self.stash.capacity() * std::mem::size_of::<Entry>()
    }

    /// Bytes of the table wherever it is: [`memory_bytes`](Self::memory_bytes) for an owned
    /// filter, the bytes of the buckets it reads in place for a view.
    pub(crate) fn table_bytes(&self) -> usize {
        if self.reads_in_place() {
            return self.bucket_bytes().map(<[u8]>::len).sum();
        }
        self.memory_bytes()
    }

    /// Whether the buckets are read in place from persisted bytes (a view).
    fn reads_in_place(&self) -> bool {
        self.persisted.is_some()
    }

    /// The sizes in bytes of the heap blocks the filter holds: each segment of its table, and
    /// the lists beside it at their length (their spare capacity, a few bytes, is left out so
    /// that a filter and its copy report the same). A segment is allocated whole when the table
    /// first reaches it and grows into it split by split, so these add up to more than
    /// [`memory_bytes`](Self::memory_bytes), which counts the pages in use: the figure for an
    /// allocator that accounts per block, as Redis's `MEMORY USAGE` and `maxmemory` do. A view's
    /// segments are the bytes it borrows, not blocks of its own: it lists only the lists.
    ///
    /// ```
    /// use bugu::{ExpandingFilter, FilterMut};
    /// let mut filter = ExpandingFilter::new(1_000)?;
    /// for i in 0..5_000u32 {
    ///     filter.insert(&i)?;
    /// }
    /// let allocated: usize = filter.heap_blocks().sum();
    /// assert!(allocated >= filter.memory_bytes());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn heap_blocks(&self) -> impl Iterator<Item = usize> + '_ {
        let stash = std::mem::size_of_val(self.stash.as_slice());
        self.segments.heap_blocks(!self.reads_in_place()).chain((stash > 0).then_some(stash))
    }

    /// The declared maximum the widths were chosen for.
    pub fn max_items(&self) -> u64 {
        self.max_items
    }

    /// Entries the table holds before its next split: the load it is held at times its slots.
    /// It grows past this as items arrive; [`max_items`](Self::max_items) is the limit.
    ///
    /// ```
    /// use bugu::{ExpandingFilter, FilterMut};
    /// let mut filter = ExpandingFilter::new(1_000)?;
    /// assert!(filter.capacity() >= 1_000);
    /// for i in 0..10_000u32 {
    ///     filter.insert(&i)?;
    /// }
    /// assert!(filter.capacity() >= 10_000);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.buckets() * SLOTS * config::LOAD_PERCENT / 100
    }

    /// Buckets in use, in constant time ([`stats`](Self::stats) walks the table for its
    /// histogram).
    pub fn bucket_count(&self) -> usize {
        self.buckets()
    }

    /// The false-positive rate the filter was built to stay under.
    pub fn target_false_positive_rate(&self) -> f64 {
        self.rate
    }

    /// The bound on the false-positive rate from the entries held now, in constant time: always
    /// below [`target_false_positive_rate`](Self::target_false_positive_rate).
    ///
    /// ```
    /// use bugu::{ExpandingFilter, FilterMut};
    /// let mut filter = ExpandingFilter::builder().initial_capacity(100).false_positive_rate(0.01).build()?;
    /// assert_eq!(filter.false_positive_rate_bound(), 0.0);
    /// for i in 0..10_000u32 {
    ///     filter.insert(&i)?;
    /// }
    /// assert!(filter.false_positive_rate_bound() > 0.0 && filter.false_positive_rate_bound() < 0.01);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn false_positive_rate_bound(&self) -> f64 {
        self.bound_of(self.weight)
    }

    /// Fingerprint bits of every entry.
    pub fn fingerprint_bits(&self) -> u32 {
        self.widths.fingerprint
    }

    /// The share of the table's slots in use (the stash aside), in constant time.
    pub fn load_factor(&self) -> f64 {
        (self.entries - self.stash.len()) as f64 / (self.buckets() * SLOTS) as f64
    }

    /// Slots per bucket: fixed by the design (four fingerprints fill one 64-bit word).
    pub const BUCKET_SIZE: usize = SLOTS;

    /// Buckets in use.
    fn buckets(&self) -> usize {
        (1 << (self.base_bits + self.level)) + self.split
    }

    /// Every bucket in use, with its level, in linear hashing's order.
    fn buckets_in_use(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        let round = 1 << (self.base_bits + self.level);
        (0..self.buckets())
            .map(move |bucket| (bucket, self.level + u32::from(bucket < self.split || bucket >= round)))
    }

    /// The bound on the false-positive rate for a weight (in units of 2^-64).
    fn bound_of(&self, weight: u128) -> f64 {
        2.0 * weight as f64 / 2f64.powi(64) / 2f64.powi((self.base_bits + self.widths.fingerprint) as i32)
    }

    /// What the filter holds, and its bound (for a view, `memory_bytes` is 0: see
    /// [`memory_bytes`](Self::memory_bytes)).
    pub fn stats(&self) -> ExpandingStats {
        let mut tail_histogram = vec![0; self.widths.tail as usize + 1];
        for (bucket, _) in self.buckets_in_use() {
            for entry in self.segments.bucket(bucket) {
                let (_, field) = self.widths.unpack(entry);
                if field != 0 {
                    tail_histogram[tail_len(field) as usize] += 1;
                }
            }
        }
        let memory_bytes = self.memory_bytes();
        ExpandingStats {
            len: self.len,
            entries: self.entries,
            twins: self.entries.saturating_sub(self.len),
            buckets: self.buckets(),
            bucket_size: SLOTS,
            load_factor: self.load_factor(),
            level: self.level,
            split_pointer: self.split,
            stash: self.stash.len(),
            fingerprint_bits: self.widths.fingerprint,
            tail_bits: self.widths.tail,
            tail_histogram,
            memory_bytes,
            bits_per_item: memory_bytes as f64 * 8.0 / self.len.max(1) as f64,
            rate_bound: self.false_positive_rate_bound(),
            target_rate: self.rate,
        }
    }

    /// Address bits a key has: the hash's bits above the fingerprint.
    #[inline]
    fn key_depth(&self) -> u32 {
        64 - self.widths.fingerprint - self.base_bits
    }

    /// Whether the table may reach `level`: a key then still has address bits for its bucket
    /// at the level above and for the longest tail an insert stores.
    fn level_fits(&self, level: u32) -> bool {
        level + 1 + self.widths.tail <= self.key_depth()
    }

    /// A key's first side: its fingerprint (the hash's low bits) and address bits (the rest).
    #[inline]
    fn key(&self, hash: u64) -> Entry {
        let fingerprint_bits = self.widths.fingerprint;
        Entry {
            address: hash >> fingerprint_bits,
            depth: self.key_depth(),
            fingerprint: low_bits(hash, fingerprint_bits) as u32,
        }
    }

    /// The same entry seen from its other side: its known address bits XOR an odd hash of the
    /// fingerprint (so never the same bucket). Applying it twice gives the entry back.
    #[inline]
    fn other_side(&self, entry: Entry) -> Entry {
        let transform = (u64::from(entry.fingerprint) ^ ALTERNATE_KEY).wrapping_mul(ALTERNATE_MULTIPLIER) | 1;
        Entry { address: low_bits(entry.address ^ transform, self.base_bits + entry.depth), ..entry }
    }

    /// The bucket an entry's address bits lead to on this side, and its level: one more than
    /// the filter's when its bucket at the filter's level is under the split pointer.
    #[inline]
    fn bucket_of(&self, entry: &Entry) -> (usize, u32) {
        let shift = self.base_bits + self.level;
        let split = (low_bits(entry.address, shift) as usize) < self.split;
        (low_bits(entry.address, shift + u32::from(split)) as usize, self.level + u32::from(split))
    }

    /// The bucket an entry lives in on this side, with its level; `None` if that bucket has
    /// split and the entry does not know the bit that chose between its halves.
    #[inline]
    fn locate(&self, entry: Entry) -> Option<(usize, u32)> {
        let (bucket, level) = self.bucket_of(&entry);
        (entry.depth >= level).then_some((bucket, level))
    }

    /// An entry's address bits past a bucket's level: what its tail holds there.
    #[inline]
    fn bits_past(&self, entry: &Entry, level: u32) -> u64 {
        entry.address >> (self.base_bits + level)
    }

    /// Whether a stored entry matches a key in a bucket at `level`: same fingerprint, and the
    /// tail's bits (those under its marker) equal the key's next bits.
    #[inline]
    fn slot_matches(&self, stored: u32, key: &Entry, level: u32) -> bool {
        let (fingerprint, field) = self.widths.unpack(stored);
        fingerprint == key.fingerprint && tail_matches(field, self.bits_past(key, level) as u32)
    }

    /// Whether a stashed entry matches a key seen from the same side.
    fn stashed_matches(&self, stashed: &Entry, key: &Entry) -> bool {
        stashed.fingerprint == key.fingerprint
            && (stashed.address ^ key.address) & mask(self.base_bits + stashed.depth) == 0
    }

    /// A key's two sides and their buckets with their levels.
    #[inline(always)]
    fn sides_of(&self, hash: u64) -> KeySides {
        let first = self.key(hash);
        let second = self.other_side(first);
        KeySides { sides: [first, second], buckets: [self.bucket_of(&first), self.bucket_of(&second)] }
    }

    /// Whether a located key matches an entry. Both buckets are read and compared before any
    /// branch; then, if either has an equal fingerprint, the lowest such slot of the first that
    /// has one, chosen without a branch: for a present key that is almost always its own entry,
    /// so its lookup costs one tail check. Only if that fails are all equal slots checked, and
    /// the stash only when it holds any.
    #[inline(always)]
    fn holds(&self, key: &KeySides) -> bool {
        let KeySides {
            sides: [first, second],
            buckets: [(first_bucket, first_level), (second_bucket, second_level)],
        } = *key;
        let broadcast = self.segments.broadcast(first.fingerprint);
        let (first_probe, second_probe) =
            (self.segments.probe(first_bucket, broadcast), self.segments.probe(second_bucket, broadcast));
        if (first_probe.equal | second_probe.equal) != 0 {
            let first = (self.segments.tails(first_probe), self.bits_past(&first, first_level) as u32);
            let second = (self.segments.tails(second_probe), self.bits_past(&second, second_level) as u32);
            let (probe, key_bits) = Probed::either(first, second);
            if self.segments.lowest_holds(probe, key_bits)
                || self.segments.probe_holds(first.0, first.1)
                || self.segments.probe_holds(second.0, second.1)
            {
                return true;
            }
        }
        !self.stash.is_empty()
            && self.stash.iter().any(|stashed| {
                let [first, second] = key.sides;
                self.stashed_matches(stashed, &first) || self.stashed_matches(stashed, &second)
            })
    }

    /// Every entry that matches a key, with its known bits: in the key's bucket on each side,
    /// then in the stash. Behind counts and removals; lookups take the short way
    /// ([`Filter::contains_hash`]) with the same predicates.
    fn matches(&self, hash: u64) -> impl Iterator<Item = (u32, Place)> + '_ {
        let first = self.key(hash);
        let sides = [first, self.other_side(first)];
        let in_buckets = sides.into_iter().flat_map(move |key| {
            let (bucket, level) = self.bucket_of(&key);
            let entries = self.segments.bucket(bucket);
            entries
                .into_iter()
                .enumerate()
                .filter(move |&(_, stored)| self.slot_matches(stored, &key, level))
                .map(move |(slot, stored)| {
                    let depth = level + tail_len(self.widths.unpack(stored).1);
                    (depth, Place::Slot { bucket, slot })
                })
        });
        let in_stash = self.stash.iter().enumerate().filter_map(move |(index, stashed)| {
            sides
                .iter()
                .any(|key| self.stashed_matches(stashed, key))
                .then_some((stashed.depth, Place::Stash(index)))
        });
        in_buckets.chain(in_stash)
    }

    /// The entry stored in a slot of `bucket` at `level`, seen from the bucket's side.
    fn decode(&self, bucket: usize, level: u32, stored: u32) -> Entry {
        let (fingerprint, field) = self.widths.unpack(stored);
        let tail = tail_len(field);
        let address = bucket as u64 | low_bits(u64::from(field), tail) << (self.base_bits + level);
        Entry { address, depth: level + tail, fingerprint }
    }

    fn encode(&self, entry: Entry, level: u32) -> u32 {
        debug_assert!(entry.depth >= level && entry.depth - level <= self.widths.tail);
        self.widths.pack(entry.fingerprint, tail_field(self.bits_past(&entry, level), entry.depth - level))
    }
}

impl<S: AsRef<[u8]>> Filter for ExpandingFilterIn<S> {
    fn seed(&self) -> u64 {
        self.seed
    }

    fn hash_function(&self) -> HashFunction {
        HASH_FUNCTION
    }

    fn key_encoding(&self) -> KeyEncoding {
        KeyEncoding::Canonical
    }

    /// Both buckets are read before either is compared, and the stash only when it holds any.
    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        self.holds(&self.sides_of(hash))
    }

    /// Each block of 16 keys is located and its buckets prefetched before any is
    /// probed, so that their memory accesses overlap; the answers are those of
    /// [`contains_hash`](Self::contains_hash).
    fn contains_hash_batch(&self, hashes: &[u64]) -> Vec<bool> {
        let mut answers = Vec::with_capacity(hashes.len());
        let mut block = [KeySides::default(); LOOKAHEAD];
        for hashes in hashes.chunks(LOOKAHEAD) {
            for (sides, &hash) in block.iter_mut().zip(hashes) {
                *sides = self.sides_of(hash);
                for (bucket, _) in sides.buckets {
                    self.segments.prefetch(bucket);
                }
            }
            answers.extend(block[..hashes.len()].iter().map(|sides| self.holds(sides)));
        }
        answers
    }

    fn count_hash(&self, hash: u64) -> usize {
        self.matches(hash).count()
    }
}

impl FilterMut for ExpandingFilter {
    /// Stores one copy. Fails with [`InsertError::RateBound`] past the declared maximum, and
    /// with [`InsertError::CopyLimit`] when the item's two buckets are full and they and the
    /// stash already hold 8 of its fingerprints (splits never separate copies of one item). On
    /// error nothing changed.
    fn insert_hash(&mut self, hash: u64) -> Result<(), InsertError> {
        // Entries know the address bits of the lower level and a full tail: `depth` bits past
        // the base bucket's.
        let depth = self.level + self.widths.tail;
        if !self.level_fits(self.level + 1) {
            return Err(InsertError::RateBound);
        }
        let weight = self.weight + (1u128 << (64 - depth));
        if weight > self.weight_limit {
            return Err(InsertError::RateBound);
        }
        if self.over_load(self.entries + 1) {
            // The split this insert makes may start a segment: have it before changing anything.
            let sibling = self.next_sibling();
            self.segments
                .reserve(sibling)
                .map_err(|failed| InsertError::OutOfMemory { bytes: failed.bytes })?;
        }
        let key = self.key(hash);
        let entry = Entry { address: low_bits(key.address, self.base_bits + depth), depth, ..key };
        let full = self.store_in_emptier(entry);
        if full.is_some() {
            // Both buckets are full: copies of one item past what they and the stash hold could
            // never be placed, as no move separates them.
            let copies = if self.contains_hash(hash) { self.count_hash(hash) } else { 0 };
            if copies >= 2 * SLOTS {
                return Err(InsertError::CopyLimit { copies });
            }
        }
        self.weight = weight;
        self.entries += 1;
        self.len += 1;
        if let Some(sides) = full {
            self.kick_in(entry, sides);
        }
        self.grow();
        Ok(())
    }

    /// Removes the matching entry with the most known bits (see the [module docs](self)).
    fn remove_hash(&mut self, hash: u64) -> bool {
        let Some((depth, place)) = self.matches(hash).max_by_key(|&(depth, _)| depth) else { return false };
        match place {
            Place::Slot { bucket, slot } => self.segments.set(bucket, slot, 0),
            Place::Stash(index) => {
                self.stash.swap_remove(index);
            }
        }
        self.weight -= 1u128 << (64 - depth);
        self.entries -= 1;
        self.len = self.len.saturating_sub(1);
        if self.len == 0 && self.entries > 0 {
            self.clear_leftover_twins();
        }
        true
    }

    fn insert_unique_hash(&mut self, hash: u64) -> Result<bool, InsertError> {
        if self.contains_hash(hash) {
            self.skipped_inserts = true;
            return Ok(false);
        }
        self.insert_hash(hash).map(|()| true)
    }
}
