//! [`ExpandingFilter`]: a filter that grows in one table, so a lookup reads two buckets at every
//! size, removes without ambiguity, and keeps its false-positive rate under a target up to a
//! declared maximum size.
//!
//! # How it grows
//!
//! An item's 64-bit hash gives a base bucket among the initial `n0` (a multiply-shift of its high
//! half), a fingerprint (its low bits) and a stream of further address bits. At level `L` the
//! table has `n0 x 2^L` buckets, and an item's bucket is its base bucket plus `n0` times the low
//! `L` bits of its stream: linear hashing. A split pointer runs over the buckets; splitting one
//! moves each of its entries to it or to its new sibling `n0 x 2^L` further on by the next bit of
//! the entry's *tail* — the address bits stored beside its fingerprint — so no item is re-hashed
//! and nothing is copied: buckets live in segments that are only ever added, one per doubling. A few
//! buckets split per insert (whenever entries pass 90% of the slots), so no insert pauses.
//!
//! An entry whose tail is used up when its bucket splits becomes *twins*, one in each half: one
//! of them is wrong, but neither can be told from the other, and together they weigh what the
//! entry did (see below). New entries take tails counted from the lower level, so any entry's
//! known bits reach every bucket it may be moved to, except twins made this round, which are
//! never kicked into a bucket that needs more bits than they know.
//!
//! Each item has two buckets, as in every cuckoo filter: the second's base bucket and stream
//! are the first's transformed by a hash of the fingerprint alone, so an entry moves between
//! them without its item. An insert that finds no room by moving entries leaves the last entry
//! it carried in a small stash, which lookups also read and splits drain.
//!
//! # Matching and removal
//!
//! An entry matches a key when its fingerprint is the key's and its known address bits (the
//! bucket's level plus the tail) are a prefix of the key's stream. A removal deletes the matching
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
mod parts;
mod table;
#[cfg(test)]
mod tests;

pub use config::{DEFAULT_MAX_ITEMS, ExpandingBuilder, ExpandingConfigError};
pub(crate) use parts::{ExpandingFields, MAX_STASH, StashedEntry};

use crate::error::InsertError;
use crate::hash::{HashFunction, mix13};
use crate::key::KeyEncoding;
use crate::membership::{Filter, FilterMut};
use crate::table::alloc::AllocFailed;
use config::MAX_LOAD;
use table::{SLOTS, Segments, Widths, tail_field, tail_len, tail_matches};

/// How many entries an insert moves before it stashes the one it carries.
const MAX_KICKS: usize = 500;

/// Stashed entries past which inserts split more buckets than the load asks for, until the
/// stash drains.
const STASH_TARGET: usize = 8;

/// The most extra splits one insert makes to drain the stash: splits cannot separate copies of
/// one item, so a stash of those must not make an insert split without end.
const STASH_SPLITS: usize = 16;

/// Mixed into a fingerprint to derive its alternate-side transform.
const ALTERNATE_KEY: u64 = 0x6a09_e667_f3bc_c909;

/// Multiplies it: one multiplication (not a full mix) keeps the second bucket's address a short
/// computation, and a fingerprint's few bits need no more to spread over the offsets.
const ALTERNATE_MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

/// A growable cuckoo filter in one table (see the [module docs](self)).
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
#[derive(Debug, Clone)]
pub struct ExpandingFilter {
    widths: Widths,
    /// The initial bucket count, `n0`: even.
    base_buckets: usize,
    level: u32,
    /// The next bucket to split, in `0..n0 x 2^level`; buckets below it are at `level + 1`.
    split: usize,
    segments: Segments,
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
}

/// An entry as seen from one of its two sides: its base bucket, its known address bits (`depth`
/// of them; a key knows all 64) and its fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    base: usize,
    known: u64,
    depth: u32,
    fingerprint: u32,
}

/// Where a match was found.
#[derive(Debug, Clone, Copy)]
enum Place {
    Slot { stream: usize, base: usize, slot: usize },
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
        let (widths, base_buckets) = builder.plan()?;
        Self::with_widths(builder, widths, base_buckets)
            .map_err(|failed| ExpandingConfigError::OutOfMemory { bytes: failed.bytes })
    }

    /// A filter with the given widths, whatever the builder's plan would choose.
    fn with_widths(
        builder: &ExpandingBuilder,
        widths: Widths,
        base_buckets: usize,
    ) -> Result<Self, AllocFailed> {
        Ok(ExpandingFilter {
            widths,
            base_buckets,
            level: 0,
            split: 0,
            segments: Segments::new(widths, base_buckets)?,
            stash: Vec::new(),
            len: 0,
            entries: 0,
            weight: 0,
            // The bound 2 W / (n0 2^f) at most the rate, with W in units of 2^-64.
            weight_limit: (builder.rate * base_buckets as f64 * 2f64.powi(widths.fingerprint as i32 + 63))
                as u128,
            rate: builder.rate,
            max_items: builder.max_items,
            seed: builder.seed,
            rng: builder.seed ^ 0x9e37_79b9_7f4a_7c15 | 1,
        })
    }

    /// Items stored.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no item is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of the table and the stash.
    pub fn memory_bytes(&self) -> usize {
        self.segments.memory_bytes(self.buckets()) + self.stash.capacity() * std::mem::size_of::<Entry>()
    }

    /// The declared maximum the widths were chosen for.
    pub fn max_items(&self) -> u64 {
        self.max_items
    }

    /// Buckets in use.
    fn buckets(&self) -> usize {
        (self.base_buckets << self.level) + self.split
    }

    /// Every bucket in use, as `(stream, base, level)`, in linear hashing's order.
    fn buckets_in_use(&self) -> impl Iterator<Item = (usize, usize, u32)> + '_ {
        (0..self.buckets()).map(|bucket| {
            let split = bucket < self.split || bucket >= self.base_buckets << self.level;
            (bucket / self.base_buckets, bucket % self.base_buckets, self.level + u32::from(split))
        })
    }

    /// The bound on the false-positive rate for a weight (in units of 2^-64).
    fn bound_of(&self, weight: u128) -> f64 {
        2.0 * weight as f64
            / 2f64.powi(64)
            / (self.base_buckets as f64 * 2f64.powi(self.widths.fingerprint as i32))
    }

    /// What the filter holds, and its bound.
    pub fn stats(&self) -> ExpandingStats {
        let mut tail_histogram = vec![0; self.widths.tail as usize + 1];
        for (stream, base, _) in self.buckets_in_use() {
            for entry in self.segments.bucket(stream, base) {
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
            level: self.level,
            split_pointer: self.split,
            stash: self.stash.len(),
            fingerprint_bits: self.widths.fingerprint,
            tail_bits: self.widths.tail,
            tail_histogram,
            memory_bytes,
            bits_per_item: memory_bytes as f64 * 8.0 / self.len.max(1) as f64,
            rate_bound: self.bound_of(self.weight),
            target_rate: self.rate,
        }
    }

    /// A key's first side: base bucket, stream, fingerprint. The stream is the hash's low word
    /// above the fingerprint, continued by a mix of the whole hash only while the table reads
    /// further than that: a key's bits past `level + 1 + tail` are never compared, so its
    /// `depth` of 64 stands for "all the bits any bucket or entry asks of it".
    #[inline]
    fn key(&self, hash: u64) -> Entry {
        let fingerprint_bits = self.widths.fingerprint;
        let base = (((hash >> 32) * self.base_buckets as u64) >> 32) as usize;
        let fingerprint = (hash & mask(fingerprint_bits)) as u32;
        let mut stream = u64::from(hash as u32 >> fingerprint_bits);
        if self.level + 1 + self.widths.tail > 32 - fingerprint_bits {
            stream |= mix13(hash) << (32 - fingerprint_bits);
        }
        Entry { base, known: stream, depth: 64, fingerprint }
    }

    /// The same entry seen from its other side: base `(-base - r) mod n0` for an odd `r` from
    /// the fingerprint (never the same bucket, as `n0` is even), stream XOR a hash of the
    /// fingerprint. Applying it twice gives the entry back.
    #[inline]
    fn other_side(&self, entry: Entry) -> Entry {
        let n0 = self.base_buckets;
        let transform = (u64::from(entry.fingerprint) ^ ALTERNATE_KEY).wrapping_mul(ALTERNATE_MULTIPLIER);
        let offset = ((((transform >> 32) * n0 as u64) >> 32) as usize) | 1;
        // In 2..2 n0, as base and offset are under n0: one subtraction brings it under n0.
        let mut base = 2 * n0 - entry.base - offset;
        if base >= n0 {
            base -= n0;
        }
        Entry { base, known: (entry.known ^ transform) & mask(entry.depth), ..entry }
    }

    /// The level of the bucket an entry's known bits lead to on this side: one more than the
    /// filter's when that bucket is under the split pointer.
    #[inline]
    fn level_of(&self, entry: &Entry) -> u32 {
        let low = low_bits(entry.known, self.level);
        self.level + u32::from(entry.base + self.base_buckets * (low as usize) < self.split)
    }

    /// The bucket an entry lives in on this side, `(stream, level)`; `None` if that bucket has
    /// split and the entry does not know the bit that chose between its halves.
    #[inline]
    fn locate(&self, entry: Entry) -> Option<(usize, u32)> {
        let level = self.level_of(&entry);
        (entry.depth >= level).then(|| (low_bits(entry.known, level) as usize, level))
    }

    /// Whether a stored entry matches a key in a bucket at `level`: same fingerprint, and the
    /// tail's bits (those under its marker) equal the key's next bits.
    #[inline]
    fn slot_matches(&self, stored: u32, key: &Entry, level: u32) -> bool {
        let (fingerprint, field) = self.widths.unpack(stored);
        fingerprint == key.fingerprint && tail_matches(field, (key.known >> level) as u32)
    }

    /// Whether a stashed entry matches a key seen from the same side.
    fn stashed_matches(stashed: &Entry, key: &Entry) -> bool {
        stashed.base == key.base
            && stashed.fingerprint == key.fingerprint
            && (stashed.known ^ key.known) & mask(stashed.depth) == 0
    }

    /// Every entry that matches a key, with its known bits: in the key's bucket on each side,
    /// then in the stash. Behind counts and removals; lookups take the short way
    /// ([`Filter::contains_hash`]) with the same predicates.
    fn matches(&self, hash: u64) -> impl Iterator<Item = (u32, Place)> + '_ {
        let first = self.key(hash);
        let sides = [first, self.other_side(first)];
        let in_buckets = sides.into_iter().flat_map(move |key| {
            let level = self.level_of(&key);
            let stream = low_bits(key.known, level) as usize;
            let entries = self.segments.bucket(stream, key.base);
            entries
                .into_iter()
                .enumerate()
                .filter(move |&(_, stored)| self.slot_matches(stored, &key, level))
                .map(move |(slot, stored)| {
                    let depth = level + tail_len(self.widths.unpack(stored).1);
                    (depth, Place::Slot { stream, base: key.base, slot })
                })
        });
        let in_stash = self.stash.iter().enumerate().filter_map(move |(index, stashed)| {
            sides
                .iter()
                .any(|key| Self::stashed_matches(stashed, key))
                .then_some((stashed.depth, Place::Stash(index)))
        });
        in_buckets.chain(in_stash)
    }

    /// The entry stored in a slot, seen from the bucket's side.
    fn decode(&self, stream: usize, base: usize, level: u32, stored: u32) -> Entry {
        let (fingerprint, field) = self.widths.unpack(stored);
        let tail = tail_len(field);
        let known = stream as u64 | (u64::from(field) & mask(tail)) << level;
        Entry { base, known, depth: level + tail, fingerprint }
    }

    fn encode(&self, entry: Entry, level: u32) -> u32 {
        debug_assert!(entry.depth >= level && entry.depth - level <= self.widths.tail);
        self.widths.pack(entry.fingerprint, tail_field(entry.known >> level, entry.depth - level))
    }

    fn next_random(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    /// Stores an entry in a free slot of either of its buckets; else moves entries to make room;
    /// the entry left without a place then goes to the stash.
    fn place(&mut self, entry: Entry) {
        if entry.depth < self.level {
            // Stashed while its bucket's round ran, it misses the bits the table now uses.
            return self.place_as_twins(entry);
        }
        if let Some(sides) = self.store_in_emptier(entry) {
            self.kick_in(entry, sides);
        }
    }

    /// Stores an entry in the emptier of its buckets when either has room: keeping the two
    /// sides balanced keeps later kicks short, above all in the buckets a round has not split
    /// yet, which hold the most. Otherwise gives back its sides that have a bucket.
    fn store_in_emptier(&mut self, entry: Entry) -> Option<[Option<Entry>; 2]> {
        let sides = [entry, self.other_side(entry)];
        let located = sides.map(|side| self.locate(side).map(|at| (side, at)));
        let emptier = located
            .into_iter()
            .flatten()
            .map(|(side, (stream, level))| {
                let bucket = self.segments.bucket(stream, side.base);
                let free = bucket.iter().filter(|&&stored| stored == 0).count();
                (free, side, stream, level, bucket)
            })
            .max_by_key(|&(free, ..)| free);
        match emptier {
            Some((free, side, stream, level, bucket)) if free > 0 => {
                let slot = bucket.iter().position(|&stored| stored == 0).expect("a free slot");
                let stored = self.encode(side, level);
                self.segments.set(stream, side.base, slot, stored);
                None
            }
            _ => Some(located.map(|at| at.map(|(side, _)| side))),
        }
    }

    /// Stores an entry whose buckets are full by moving entries along a path; the entry left
    /// without a place at its end goes to the stash.
    fn kick_in(&mut self, entry: Entry, sides: [Option<Entry>; 2]) {
        let mut carried = match sides {
            [Some(first), Some(second)] => [first, second][self.next_random() as usize % 2],
            [Some(side), None] | [None, Some(side)] => side,
            // Twins of this round known to neither side's half: give each half its own.
            [None, None] => return self.place_as_twins(entry),
        };
        for _ in 0..MAX_KICKS {
            let (stream, level) = self.locate(carried).expect("carried entries are located");
            let mut bucket = self.segments.bucket(stream, carried.base);
            if let Some(slot) = bucket.iter().position(|&stored| stored == 0) {
                bucket[slot] = self.encode(carried, level);
                self.segments.set_bucket(stream, carried.base, bucket);
                return;
            }
            // Each entry here seen from its other bucket, where it could go.
            let moves: [Option<(Entry, (usize, u32))>; SLOTS] = std::array::from_fn(|slot| {
                let moved = self.other_side(self.decode(stream, carried.base, level, bucket[slot]));
                self.locate(moved).map(|at| (moved, at))
            });
            // One step ahead: an entry whose other bucket has room ends the path now. The four
            // reads are independent, so they cost about one random access, and paths get short.
            let room = moves.iter().enumerate().find_map(|(slot, &candidate)| {
                let (moved, (to_stream, to_level)) = candidate?;
                let target = self.segments.bucket(to_stream, moved.base);
                let free = target.iter().position(|&stored| stored == 0)?;
                Some((slot, moved, to_stream, to_level, target, free))
            });
            if let Some((slot, moved, to_stream, to_level, mut target, free)) = room {
                target[free] = self.encode(moved, to_level);
                self.segments.set_bucket(to_stream, moved.base, target);
                bucket[slot] = self.encode(carried, level);
                self.segments.set_bucket(stream, carried.base, bucket);
                return;
            }
            let start = self.next_random() as usize;
            let victim =
                (0..SLOTS).map(|i| (start + i) % SLOTS).find_map(|slot| Some((slot, moves[slot]?.0)));
            let Some((slot, moved)) = victim else { break };
            bucket[slot] = self.encode(carried, level);
            self.segments.set_bucket(stream, carried.base, bucket);
            carried = moved;
        }
        self.stash.push(carried);
    }

    /// Stores an entry that knows one bit too few for either of its buckets as two entries, one
    /// per value of that bit.
    fn place_as_twins(&mut self, entry: Entry) {
        let depth = entry.depth + 1;
        self.entries += 1;
        self.place(Entry { depth, ..entry });
        self.place(Entry { depth, known: entry.known | 1 << entry.depth, ..entry });
    }

    /// The stream bits of the bucket the next split fills.
    fn next_sibling(&self) -> usize {
        (1 << self.level) + self.split / self.base_buckets
    }

    /// Splits the bucket under the split pointer; `false` if the memory for its sibling could
    /// not be had (nothing changed).
    fn split_one(&mut self) -> bool {
        let (n0, level) = (self.base_buckets, self.level);
        let (base, low) = (self.split % n0, self.split / n0);
        let sibling = self.next_sibling();
        if self.segments.reserve(sibling).is_err() {
            return false;
        }
        let (mut stay, mut go) = ([0u32; SLOTS], [0u32; SLOTS]);
        let (mut kept, mut moved) = (0, 0);
        for stored in self.segments.bucket(low, base) {
            let (fingerprint, field) = self.widths.unpack(stored);
            if field == 0 {
                continue;
            }
            if field == 1 {
                // The tail is used up: twins, one per half.
                stay[kept] = stored;
                go[moved] = stored;
                (kept, moved) = (kept + 1, moved + 1);
                self.entries += 1;
            } else if field & 1 == 0 {
                stay[kept] = self.widths.pack(fingerprint, field >> 1);
                kept += 1;
            } else {
                go[moved] = self.widths.pack(fingerprint, field >> 1);
                moved += 1;
            }
        }
        self.segments.set_bucket(low, base, stay);
        self.segments.set_bucket(sibling, base, go);
        self.split += 1;
        if self.split == n0 << level {
            self.level += 1;
            self.split = 0;
        }
        true
    }

    /// Places the stash's entries again, after splits made room.
    fn drain_stash(&mut self) {
        for entry in std::mem::take(&mut self.stash) {
            self.place(entry);
        }
    }

    /// Whether `entries` entries pass the load the table is held at.
    fn over_load(&self, entries: usize) -> bool {
        entries as f64 > MAX_LOAD * (self.buckets() * SLOTS) as f64
    }

    /// Splits buckets until entries are under the load, and more while the stash is long.
    fn grow(&mut self) {
        let mut split_any = false;
        while self.over_load(self.entries) {
            if !self.split_one() {
                break;
            }
            split_any = true;
        }
        for _ in 0..STASH_SPLITS {
            if self.stash.len() <= STASH_TARGET || !self.split_one() {
                break;
            }
            self.drain_stash();
        }
        if split_any && !self.stash.is_empty() {
            self.drain_stash();
        }
    }
}

impl Filter for ExpandingFilter {
    fn seed(&self) -> u64 {
        self.seed
    }

    fn hash_function(&self) -> HashFunction {
        HashFunction::default()
    }

    fn key_encoding(&self) -> KeyEncoding {
        KeyEncoding::Canonical
    }

    /// Both buckets are read before either is compared, and the stash only when it holds any.
    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        let first = self.key(hash);
        let second = self.other_side(first);
        let (first_level, second_level) = (self.level_of(&first), self.level_of(&second));
        let broadcast = self.segments.broadcast(first.fingerprint);
        // Both buckets are read and compared before any branch, and past the fingerprint test
        // both are checked, so that no branch depends on which bucket or slot holds a key.
        let first_probe =
            self.segments.probe(low_bits(first.known, first_level) as usize, first.base, broadcast);
        let second_probe =
            self.segments.probe(low_bits(second.known, second_level) as usize, second.base, broadcast);
        ((first_probe.equal | second_probe.equal) != 0
            && (self.segments.probe_holds(first_probe, (first.known >> first_level) as u32)
                | self.segments.probe_holds(second_probe, (second.known >> second_level) as u32)))
            || (!self.stash.is_empty()
                && self.stash.iter().any(|stashed| {
                    Self::stashed_matches(stashed, &first) || Self::stashed_matches(stashed, &second)
                }))
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
        let depth = self.level + self.widths.tail;
        if depth >= 64 {
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
        let entry = Entry { known: key.known & mask(depth), depth, ..key };
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
            Place::Slot { stream, base, slot } => self.segments.set(stream, base, slot, 0),
            Place::Stash(index) => {
                self.stash.swap_remove(index);
            }
        }
        self.weight -= 1u128 << (64 - depth);
        self.entries -= 1;
        self.len = self.len.saturating_sub(1);
        true
    }

    fn insert_unique_hash(&mut self, hash: u64) -> Result<bool, InsertError> {
        if self.contains_hash(hash) {
            return Ok(false);
        }
        self.insert_hash(hash).map(|()| true)
    }
}
