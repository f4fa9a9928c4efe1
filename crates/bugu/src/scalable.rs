//! [`GrowableFilter`]: a filter that grows as items arrive, without ever holding the items, and
//! whose false-positive rate stays under a target fixed in advance, at every size.
//!
//! # Design
//!
//! A growable filter is a chain of [`CuckooFilter`] *levels*. It starts with one level sized for
//! the initial capacity. Inserts go to the newest level; when the newest level refuses an item
//! (its insertion found no path of moves), the older levels are tried, newest to oldest (they have
//! room again after removals); only when all refuse does the filter add a level `growth factor`
//! times larger than the newest, with narrower room for false positives, and store the item there.
//! An empty level always takes an item, so growth never leaves an empty, useless level behind.
//! Lookups probe every level (newest first, and stop at the first match); keeping the growth
//! factor at least 2 keeps the levels few: `log2(n / initial)` + 1 at most for `n` items. A lookup
//! first starts fetching its buckets in every level too large for a core's private caches, then
//! probes, so that the cache misses of the large levels overlap; batched lookups run each large
//! level's pipelined batch lookup on the hashes not found yet, then probe the small levels.
//!
//! The alternative of rebuilding one larger table is impossible without the keys: a stored
//! fingerprint does not determine its bucket in a table of another size. DESIGN §5 lists the
//! O(1)-lookup designs that duplicate entries instead (Taffy, InfiniFilter, Aleph); they are
//! heavier and left for later.
//!
//! # The false-positive bound
//!
//! Let `p` be the target rate and `r_i` level `i`'s [`CuckooFilter::false_positive_rate`]: for
//! `f`-bit fingerprints in buckets of `b` slots, `r_i = 1 - (1 - 1/(2^f - 1))^(2b)`, the chance that
//! an absent item's fingerprint equals one of the at most `2b` fingerprints in its two buckets of
//! that level when the level is completely full (a less full level compares against fewer
//! fingerprints, so `r_i` bounds it at every occupancy).
//!
//! **Claim.** At every size, the probability that a lookup of an absent item answers "present" is
//! at most `r_0 + r_1 + ... + r_{L-1}` (what [`GrowableFilter::false_positive_rate`] reports),
//! which is below `p` for every number of levels `L`.
//!
//! **Proof.** The growable filter answers "present" only if some level does, so by the union bound
//! (which needs no independence between levels: all levels see the same 64-bit hash) the
//! probability is at most `sum r_i`. Levels are built against a *budget*: `R_0 = p`, and level `i`
//! is given the share `s_i = phi_i * R_i` for a fraction `0 < phi_i < 1` fixed by the
//! [`Tightening`] policy; its fingerprint width is the narrowest whose bound meets the share (the
//! builder's [`false_positive_rate`](crate::Builder::false_positive_rate)), so `r_i <= s_i`, and
//! the budget left is `R_{i+1} = R_i - r_i >= (1 - phi_i) R_i > 0`. By induction `R_L > 0` for
//! every `L`, and `sum_{i<L} r_i = p - R_L < p`. ∎
//!
//! Rounding the width up leaves each level below its share; that slack stays in the budget and
//! widens the shares of later levels (a fixed series would throw it away). Shares are computed in
//! floating point and shrunk by one part in 10^9, far more than the rounding of the few additions
//! involved, so the bound also holds for the computed values. The levels share one hash, so an
//! absent item's false positives in different levels are correlated; the union bound does not care.
//!
//! # Which series
//!
//! Extra fingerprint bits a level needs over a single filter of rate `p` (`log2` of `p / s_i`):
//!
//! | level `i` | 0 | 1 | 3 | 6 | 9 | 13 | 20 | 30 |
//! |---|---|---|---|---|---|---|---|---|
//! | geometric halving, `p / 2^(i+1)` | 1 | 2 | 4 | 7 | 10 | 14 | 21 | 31 |
//! | p-series, `6p / (pi^2 (i+1)^2)` | 0.7 | 2.7 | 4.7 | 6.3 | 7.4 | 8.3 | 9.5 | 10.6 |
//! | geometric, ratio 0.85 (default) | 2.7 | 3.0 | 3.4 | 4.1 | 4.9 | 5.8 | 7.4 | 9.8 |
//!
//! Memory is dominated by the newest, largest levels, so what matters is the extra bits at large
//! `i`: a filter grown from 1,000 to 10M items has 14 levels. Halving (the choice of the
//! `scalable_cuckoo_filter` crate) costs a bit more per level and runs out of 32-bit fingerprints
//! after 26 levels at `p = 0.001` (19 without the budget's carried-over slack). The p-series grows only as `2 log2 i`. A geometric series
//! with ratio 0.85 (the tightening ratio of scalable Bloom filters, Almeida et al. 2007, who
//! recommend 0.8 to 0.9) pays 2.7 bits at the first, small levels and less than the p-series up to
//! level 35 (10^13 items from 1,000). Computed with this module's exact widths and budgets, the
//! bits per item at 10M items grown from 1,000 with `p = 0.001` are 40.7 (halving), 34.5
//! (p-series), 31.1 (ratio 0.85), against 13.7 for a filter sized for 10M from the start; averaged
//! over sizes from 10^4 to 10^9 the ratio 0.85 and 0.9 are best and equal, 0.75 and the p-series
//! 4% and 9% behind. Hence the default `Geometric { ratio: 0.85 }`; [`Tightening`] offers all.
//!
//! Of that memory, a factor of up to `g` (the growth factor; 1.64 at 10M items grown from 1,000
//! by 2) is the newest level's free room, which any chain pays right after growing; the wider
//! fingerprints cost the rest.
//!
//! That factor is a floor for every design that grows by doubling, not only for chains: grown from
//! 1,000 by doubling, a filter holding 10M items has room for `2^14 x 1,000 = 16.4M`, so even with
//! the pre-sized filter's own 13-bit fingerprints it costs `13.7 x 16.4 / 10 = 22.4` bits per item,
//! 1.64x the pre-sized filter's 13.7 (an in-place doubling design such as InfiniFilter or the
//! Taffy cuckoo filter pays the same room and, to bound its rate, longer fingerprints too). Only a
//! smaller growth factor lowers it, and in a chain that multiplies the levels every lookup probes.
//!
//! Lookups probe every level (newest first, stopping at the first match): an absent item costs
//! two bucket probes per level, 28 at 10M items grown from 1,000 (the largest levels' probes
//! miss the CPU caches), against two probes for a filter sized for 10M from the start.
//! One-by-one lookups first start fetching the buckets of every level that does not fit in the
//! cache, so those misses overlap.
//!
//! # Removal
//!
//! A removal never takes a fingerprint that could be another item's copy: it probes every level
//! for a fingerprint matching the item, and
//! - if exactly one level matches, removes one matching fingerprint from it
//!   ([`Removal::Removed`]; [`remove`](FilterMut::remove) returns `true`, [`len`](GrowableFilter::len)
//!   drops by one);
//! - if no level matches, changes nothing ([`Removal::NotFound`]; `false`);
//! - if several levels match, changes nothing ([`Removal::Ambiguous`]; `false`): the item keeps
//!   its copy, which stays as a false positive and is still counted by `len`.
//!
//! [`GrowableFilter::remove_checked`] says which case happened.
//!
//! ```
//! use bugu::{Filter, FilterMut, GrowableFilter, Removal};
//!
//! let mut filter = GrowableFilter::new(1_000)?;
//! for i in 0..100_000u32 {
//!     filter.insert(&i)?;
//! }
//! let (mut removed, mut ambiguous) = (0, 0);
//! for i in 0..50_000u32 {
//!     match filter.remove_checked(&i) {
//!         Removal::Removed { .. } => removed += 1,
//!         Removal::Ambiguous { .. } => ambiguous += 1,
//!         Removal::NotFound => unreachable!("an inserted item always matches"),
//!     }
//! }
//! // Nothing that is still in the filter is lost; the ambiguous removals' copies stay counted.
//! assert!((50_000..100_000u32).all(|i| filter.contains(&i)));
//! assert_eq!((removed + ambiguous, filter.len()), (50_000, 50_000 + ambiguous));
//! assert!(ambiguous < 50); // 5 of these 50,000 removals
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! **Why this never causes a false negative.** Within one level, a fingerprint stored in one of
//! an item's two buckets determines the other bucket (partial-key cuckoo hashing), so a stored
//! fingerprint matches a query for `x` only if it was stored by an item with the same
//! fingerprint *and the same pair of buckets* as `x` in that level. Such copies are
//! interchangeable: whichever one is removed, the level holds the same multiset of
//! (fingerprint, bucket pair), and every item answers every later query as if its own copy had
//! been the one removed. Across levels they are not: levels differ in table size and fingerprint
//! width, so an item matching `x` in one level is in general unrelated to `x` in another, and
//! removing it there takes a copy that other item needs.
//!
//! Now let every removal be of an item that holds a copy: one inserted more times than its
//! removals returned [`Removal::Removed`] (an ambiguous removal leaves the copy, so the item is
//! still held). Let `x` be such an item. Each of its copies sits in a level that matches `x`. If
//! exactly one level matches, all of `x`'s copies are in that level, and the fingerprint removed
//! is interchangeable with one of them: the removal is the same as removing `x`'s own copy, and
//! every other item keeps all of its copies. If several levels match, nothing is removed, and
//! again every item keeps its copies. By induction over the sequence of inserts and removes, in
//! any order, every item still held keeps a copy, so it reads present. The worst outcome of a
//! removal is a leftover false positive.
//!
//! If `x` was never inserted (or all its copies are gone), the one matching level may hold only
//! another item's copy, and removing it can make that item read absent, exactly as in a single
//! [`CuckooFilter`]: only remove what you inserted.
//!
//! **The cost.** A removal of an item in level `j` is ambiguous when another level holds a
//! lookalike, which happens with probability at most `sum_{i != j} r_i < p`, and less at the
//! levels' real loads. An item with copies in several levels (inserted again after the filter
//! grew) cannot be removed while they all remain. Measured (`tests/growth.rs`), grown from 100 to
//! 2M items and removed in random order: 810 of the 2M removals were ambiguous at `p = 0.001`
//! (0.00041 per removal, bound 0.00082) and 7,876 at `p = 0.01` (0.0039, bound 0.0081); grown
//! from 1,000 to 300,000 and removed oldest first, 25 (`p = 0.001`) and 250 (`p = 0.01`);
//! newest first, 1,515 at `p = 0.01` (an older level holding a lookalike). No live key ever read
//! absent. The previous rule (take the newest level's match) lost 2 live keys in the first
//! 200,000 of those random removals at `p = 0.001`.
//!
//! # Multiset semantics and limits
//!
//! Every [`insert`](FilterMut::insert) stores a copy, as in [`CuckooFilter`]. One level stores at
//! most `2 x bucket size` copies of an item (its two buckets full of its fingerprint); when an
//! insert fails because the newest level's two buckets for the item are already full of its copies
//! (and no older level has room), the filter does not grow a level for more copies of one item and
//! returns [`InsertError::Full`]. Copies of one item in two levels make its removals ambiguous
//! (see above). Otherwise an insert fails only
//! - with [`InsertError::Full`] at the configured maximum: [`len`](GrowableFilter::len) equal to
//!   the maximum capacity (levels grow until their capacities sum to it, so that many distinct
//!   items fit), or no level with room and the maximum number of levels reached; or
//!   when the next level's share would need fingerprints wider than 32 bits (with the defaults,
//!   after about 60 levels, far beyond any memory);
//! - with [`InsertError::OutOfMemory`] when the allocator refuses the new level's table (the
//!   process is not aborted).
//!
//! A failed insert changes nothing.

use std::fmt;
use std::hash::Hash;
use std::io::{self, Read, Write};
use std::path::Path;

use thiserror::Error;

use crate::config::{Builder, DEFAULT_BUCKET_SIZE, DEFAULT_EVICTION_LIMIT, DEFAULT_SEED};
use crate::error::{ConfigError, InsertError};
use crate::filter::CuckooFilter;
use crate::membership::{Filter, FilterMut};
use crate::persist::{
    Decoder, Encoder, FilterKind, InvalidParameter, PersistError, expect_kind, open, save_atomically,
};
use crate::stats::Stats;

/// The default growth factor: each new level has twice the capacity of the previous one.
pub const DEFAULT_GROWTH_FACTOR: usize = 2;

/// Growth factors accepted.
///
/// At least 2, so that the levels stay few (every lookup probes every level): a factor of 2
/// reaches 10M items from 1,000 in 14 levels, a factor of 1.5 would need 23. At most 16: a level
/// 16 times larger than the last can leave 94% of the memory unused right after it is added, and
/// each doubling of the factor beyond 4 saves only a level or two per thousandfold growth.
///
/// ```
/// assert!(bugu::GROWTH_FACTORS.contains(&bugu::DEFAULT_GROWTH_FACTOR));
/// ```
pub const GROWTH_FACTORS: std::ops::RangeInclusive<usize> = 2..=16;

/// The default target false-positive rate of a growable filter (that of `scalable_cuckoo_filter`).
pub const DEFAULT_TARGET_FALSE_POSITIVE_RATE: f64 = 0.001;

/// The default initial capacity of a growable filter.
pub const DEFAULT_INITIAL_CAPACITY: usize = 1_000;

/// The default tightening policy: each level may use 15% of the false-positive budget left.
pub const DEFAULT_TIGHTENING: Tightening = Tightening::Geometric { ratio: 0.85 };

/// Levels with tables at least this large are prefetched before they are probed: smaller ones
/// stay in a core's private L2 cache (512 KiB on the machines measured) when lookups are frequent.
const PREFETCH_FROM_BYTES: usize = 256 << 10;

/// Shares are shrunk by this factor so that floating-point rounding can never lift the sum of the
/// levels' rates above the target.
const SHARE_SAFETY: f64 = 1.0 - 1e-9;

/// How the false-positive budget is split between levels (see the module docs for the proof and a
/// comparison).
///
/// Level `i` may use the fraction `phi_i` of the budget its predecessors left; any fractions in
/// `(0, 1)` keep the total under the target, the policy only decides which levels get the bits.
///
/// ```
/// use bugu::{GrowableFilter, Tightening};
///
/// // scalable_cuckoo_filter's series: level i gets p / 2^(i+1).
/// let halving = GrowableFilter::builder().tightening(Tightening::Geometric { ratio: 0.5 }).build()?;
/// assert_eq!(halving.tightening(), Tightening::Geometric { ratio: 0.5 });
/// let p_series = GrowableFilter::builder().tightening(Tightening::PSeries).build()?;
/// assert!(p_series.false_positive_rate() < 0.001);
/// # Ok::<(), bugu::GrowableConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Tightening {
    /// Each level takes `1 - ratio` of the budget left: level `i` gets about
    /// `p (1 - ratio) ratio^i` (`ratio` strictly between 0 and 1; 0.5 is `p / 2^(i+1)`). Larger
    /// ratios give the first levels less and the later ones more.
    Geometric {
        /// The ratio between consecutive levels' shares.
        ratio: f64,
    },
    /// Level `i` gets about `6p / (pi^2 (i+1)^2)`: extra bits grow as `2 log2(i+1)`.
    PSeries,
}

impl Tightening {
    /// The fraction of the remaining budget that level `index` may use, in `(0, 1)`.
    fn fraction(self, index: usize) -> f64 {
        let fraction = match self {
            Tightening::Geometric { ratio } => 1.0 - ratio,
            Tightening::PSeries => {
                // Weight (i+1)^-2 over the weights still to come: sum_{k >= i+1} k^-2.
                let n = index as f64 + 1.0;
                let before: f64 = (1..=index).map(|k| 1.0 / (k as f64 * k as f64)).sum();
                let tail = std::f64::consts::PI * std::f64::consts::PI / 6.0 - before;
                (1.0 / (n * n)) / tail.max(1.0 / n)
            }
        };
        fraction.clamp(f64::MIN_POSITIVE, 1.0 - 1e-9)
    }

    fn validate(self) -> Result<(), GrowableConfigError> {
        match self {
            Tightening::Geometric { ratio } if !(ratio > 0.0 && ratio < 1.0) => {
                Err(GrowableConfigError::InvalidTighteningRatio(ratio))
            }
            _ => Ok(()),
        }
    }
}

/// A growable filter configuration that cannot be built.
///
/// ```
/// use bugu::{GrowableConfigError, GrowableFilter};
///
/// let err = GrowableFilter::builder().growth_factor(1).build().unwrap_err();
/// assert_eq!(err, GrowableConfigError::InvalidGrowthFactor(1));
/// assert_eq!(err.to_string(), "growth factor must be between 2 and 16, got 1");
/// ```
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum GrowableConfigError {
    /// The first level's settings are invalid (capacity, bucket size, eviction limit, or a target
    /// rate whose first share needs fingerprints wider than 32 bits).
    #[error(transparent)]
    Level(#[from] ConfigError),
    /// The growth factor was outside [`GROWTH_FACTORS`].
    #[error("growth factor must be between 2 and 16, got {0}")]
    InvalidGrowthFactor(usize),
    /// A geometric tightening ratio was not strictly between 0 and 1.
    #[error("tightening ratio must be strictly between 0 and 1, got {0}")]
    InvalidTighteningRatio(f64),
    /// The maximum number of levels was 0.
    #[error("the maximum number of levels must be at least 1")]
    ZeroMaxLevels,
    /// The maximum capacity was below the first level's capacity.
    #[error("maximum capacity {max} is below the first level's capacity {initial}")]
    MaxCapacityBelowInitial {
        /// The configured maximum.
        max: usize,
        /// The first level's capacity.
        initial: usize,
    },
    /// The filter given to [`GrowableBuilder::build_from`] holds more items than the maximum
    /// capacity allows.
    ///
    /// ```
    /// use bugu::{CuckooFilter, FilterMut, GrowableConfigError, GrowableFilter};
    ///
    /// let mut core = CuckooFilter::builder().capacity(10).false_positive_rate(0.0001).build()?;
    /// for i in 0..11u32 {
    ///     core.insert(&i)?; // a filter may hold a few more items than its capacity
    /// }
    /// let err = GrowableFilter::builder().false_positive_rate(0.001).max_capacity(10).build_from(core);
    /// assert_eq!(err.unwrap_err(), GrowableConfigError::MaxCapacityBelowLen { max: 10, len: 11 });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[error("maximum capacity {max} is below the {len} items the filter holds")]
    MaxCapacityBelowLen {
        /// The configured maximum.
        max: usize,
        /// The items the filter holds.
        len: usize,
    },
    /// The filter given to [`GrowableBuilder::build_from`] has a false-positive bound at or above
    /// the target: no budget is left for further levels.
    #[error("the filter's false-positive bound {bound} is not below the target {target}")]
    FilterAboveTarget {
        /// The filter's [`CuckooFilter::false_positive_rate`].
        bound: f64,
        /// The target rate.
        target: f64,
    },
}

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

/// Settings shared by every level, and the growth rules.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Growth {
    target: f64,
    growth_factor: usize,
    tightening: Tightening,
    max_capacity: Option<usize>,
    max_levels: Option<usize>,
    bucket_size: usize,
    eviction_limit: usize,
    seed: u64,
}

impl Growth {
    /// The builder of level `index` with `capacity` items, given the rates of the levels before it:
    /// its share of the budget is `fraction(index) x (target - sum of their rates)`.
    fn level_builder(&self, index: usize, capacity: usize, used: f64) -> Builder {
        let share = self.tightening.fraction(index) * (self.target - used) * SHARE_SAFETY;
        Builder::new()
            .capacity(capacity)
            .bucket_size(self.bucket_size)
            .eviction_limit(self.eviction_limit)
            .seed(self.seed)
            .false_positive_rate(share)
    }
}

/// Builds a [`GrowableFilter`]; every setting is validated by [`build`](Self::build).
///
/// ```
/// use bugu::{GrowableFilter, Tightening};
///
/// let filter = GrowableFilter::builder()
///     .initial_capacity(10_000)
///     .false_positive_rate(0.001)       // the total, at every size
///     .growth_factor(2)                 // 2..=16
///     .tightening(Tightening::PSeries)  // how the rate budget is split between levels
///     .max_capacity(1_000_000)          // optional
///     .build()?;
/// assert_eq!(filter.capacity(), 10_000);
/// assert!(filter.false_positive_rate() < 0.001);
/// # Ok::<(), bugu::GrowableConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct GrowableBuilder {
    initial_capacity: usize,
    target: Option<f64>,
    growth_factor: usize,
    tightening: Tightening,
    max_capacity: Option<usize>,
    max_levels: Option<usize>,
    bucket_size: usize,
    eviction_limit: usize,
    seed: u64,
}

impl Default for GrowableBuilder {
    fn default() -> Self {
        GrowableBuilder {
            initial_capacity: DEFAULT_INITIAL_CAPACITY,
            target: None,
            growth_factor: DEFAULT_GROWTH_FACTOR,
            tightening: DEFAULT_TIGHTENING,
            max_capacity: None,
            max_levels: None,
            bucket_size: DEFAULT_BUCKET_SIZE,
            eviction_limit: DEFAULT_EVICTION_LIMIT,
            seed: DEFAULT_SEED,
        }
    }
}

impl GrowableBuilder {
    /// A builder with the defaults: initial capacity 1,000, target rate 0.001, growth factor 2,
    /// [`DEFAULT_TIGHTENING`], no maximum, 4 slots per bucket, eviction limit 500, seed 0.
    ///
    /// ```
    /// let filter = bugu::GrowableBuilder::new().build()?;
    /// assert_eq!(filter.capacity(), 1_000);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The first level's capacity (default 1,000). Later levels are `growth factor` times larger
    /// than the one before.
    ///
    /// ```
    /// let filter = bugu::GrowableFilter::builder().initial_capacity(64).build()?;
    /// assert_eq!(filter.capacity(), 64);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn initial_capacity(mut self, items: usize) -> Self {
        self.initial_capacity = items;
        self
    }

    /// The target false-positive rate of the whole filter, at every size (default 0.001).
    ///
    /// ```
    /// let filter = bugu::GrowableFilter::builder().false_positive_rate(0.01).build()?;
    /// assert_eq!(filter.target_false_positive_rate(), 0.01);
    /// assert!(filter.false_positive_rate() < 0.01);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn false_positive_rate(mut self, rate: f64) -> Self {
        self.target = Some(rate);
        self
    }

    /// How much larger each new level is than the newest one: 2 (default) to 16.
    ///
    /// ```
    /// let filter = bugu::GrowableFilter::builder().growth_factor(4).build()?;
    /// assert_eq!(filter.growth_factor(), 4);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn growth_factor(mut self, factor: usize) -> Self {
        self.growth_factor = factor;
        self
    }

    /// How the false-positive budget is split between levels (default [`DEFAULT_TIGHTENING`]).
    ///
    /// ```
    /// use bugu::Tightening;
    /// let filter = bugu::GrowableFilter::builder().tightening(Tightening::PSeries).build()?;
    /// assert_eq!(filter.tightening(), Tightening::PSeries);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn tightening(mut self, policy: Tightening) -> Self {
        self.tightening = policy;
        self
    }

    /// The most items the filter holds: an insert that would make [`len`](GrowableFilter::len)
    /// exceed it fails with [`InsertError::Full`] and changes nothing. Default: none.
    ///
    /// The levels grow up to it: their capacities sum to at most `items` (the last level is cut
    /// to fit), and each level, like any [`CuckooFilter`], accepts its capacity in distinct items,
    /// so `items` distinct items fit. Every copy counts, including those left by ambiguous removals
    /// (see [`GrowableFilter::remove_checked`]). It must be at least the initial capacity.
    ///
    /// ```
    /// use bugu::{FilterMut, GrowableFilter, InsertError};
    ///
    /// let mut filter = GrowableFilter::builder().initial_capacity(100).max_capacity(250).build()?;
    /// assert_eq!(filter.max_capacity(), Some(250));
    /// for i in 0..250u32 {
    ///     filter.insert(&i)?;
    /// }
    /// assert_eq!(filter.insert(&250u32), Err(InsertError::Full));
    /// assert_eq!((filter.len(), filter.capacity()), (250, 100 + 150));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn max_capacity(mut self, items: usize) -> Self {
        self.max_capacity = Some(items);
        self
    }

    /// The largest number of levels (at least 1). Default: none.
    ///
    /// ```
    /// let filter = bugu::GrowableFilter::builder().max_levels(3).build()?;
    /// assert_eq!(filter.max_levels(), Some(3));
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn max_levels(mut self, levels: usize) -> Self {
        self.max_levels = Some(levels);
        self
    }

    /// Slots per bucket in every level: 2, 4 (default) or 8.
    ///
    /// ```
    /// let filter = bugu::GrowableFilter::builder().bucket_size(8).build()?;
    /// assert_eq!(filter.bucket_size(), 8);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn bucket_size(mut self, slots: usize) -> Self {
        self.bucket_size = slots;
        self
    }

    /// The eviction limit of every level (see [`Builder::eviction_limit`]; default 500).
    ///
    /// ```
    /// let filter = bugu::GrowableFilter::builder().eviction_limit(100).build()?;
    /// assert_eq!(filter.eviction_limit(), 100);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn eviction_limit(mut self, limit: usize) -> Self {
        self.eviction_limit = limit;
        self
    }

    /// The hash seed (default 0), shared by every level.
    ///
    /// ```
    /// use bugu::Filter;
    /// let filter = bugu::GrowableFilter::builder().seed(7).build()?;
    /// assert_eq!(filter.seed(), 7);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The growth policy these settings describe, for a resolved target and the levels' bucket
    /// size, eviction limit and seed.
    fn growth(&self, target: f64, (bucket_size, eviction_limit, seed): (usize, usize, u64)) -> Growth {
        Growth {
            target,
            growth_factor: self.growth_factor,
            tightening: self.tightening,
            max_capacity: self.max_capacity,
            max_levels: self.max_levels,
            bucket_size,
            eviction_limit,
            seed,
        }
    }

    fn validate(&self, target: f64, initial: usize) -> Result<(), GrowableConfigError> {
        if !GROWTH_FACTORS.contains(&self.growth_factor) {
            return Err(GrowableConfigError::InvalidGrowthFactor(self.growth_factor));
        }
        if !(target > 0.0 && target < 1.0) {
            return Err(ConfigError::InvalidFalsePositiveRate(target).into());
        }
        self.tightening.validate()?;
        if self.max_levels == Some(0) {
            return Err(GrowableConfigError::ZeroMaxLevels);
        }
        match self.max_capacity {
            Some(max) if max < initial => Err(GrowableConfigError::MaxCapacityBelowInitial { max, initial }),
            _ => Ok(()),
        }
    }

    /// Builds an empty filter of one level.
    ///
    /// ```
    /// use bugu::GrowableFilter;
    ///
    /// let filter = GrowableFilter::builder().initial_capacity(1_000).build()?;
    /// assert_eq!(filter.level_count(), 1);
    /// assert!(GrowableFilter::builder().initial_capacity(0).build().is_err());
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn build(&self) -> Result<GrowableFilter, GrowableConfigError> {
        let target = self.target.unwrap_or(DEFAULT_TARGET_FALSE_POSITIVE_RATE);
        self.validate(target, self.initial_capacity)?;
        let growth = self.growth(target, (self.bucket_size, self.eviction_limit, self.seed));
        let first = growth.level_builder(0, self.initial_capacity, 0.0).build()?;
        Ok(GrowableFilter { levels: vec![first], growth, len: 0 })
    }

    /// Builds a growable filter whose first level is `filter`, items and all.
    ///
    /// The bucket size, eviction limit and seed come from `filter` (the builder's are ignored), as
    /// does the first level's capacity. The filter's bound `r_0` takes the first part of the
    /// budget, and later levels share what is left, `p - r_0` (see the module docs):
    /// - with a target set by [`false_positive_rate`](Self::false_positive_rate), `r_0` must be
    ///   below it ([`GrowableConfigError::FilterAboveTarget`] otherwise). If `r_0` is larger than
    ///   the share the policy would have given a first level, the later levels get narrower
    ///   shares (more bits) than in a filter built from scratch; the total stays below the target;
    /// - with no target set, the filter is treated as the first level of the series: the target
    ///   becomes `r_0 / phi_0`, e.g. `r_0 / 0.15` for the default policy.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut, GrowableFilter};
    ///
    /// let mut core = CuckooFilter::builder().capacity(100).false_positive_rate(0.0001).build()?;
    /// core.insert("kept")?;
    /// let mut filter = GrowableFilter::builder().false_positive_rate(0.001).build_from(core)?;
    /// assert!(filter.contains("kept"));
    /// for i in 0..1_000u32 {
    ///     filter.insert(&i)?; // grows past the original capacity
    /// }
    /// assert!(filter.level_count() > 1);
    /// assert!(filter.false_positive_rate() < 0.001);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build_from(&self, filter: CuckooFilter) -> Result<GrowableFilter, GrowableConfigError> {
        let bound = filter.false_positive_rate();
        let target = match self.target {
            Some(target) => target,
            None => (bound / self.tightening.fraction(0)).min(1.0 - f64::EPSILON),
        };
        self.validate(target, filter.capacity())?;
        if let Some(max) = self.max_capacity.filter(|&max| filter.len() > max) {
            return Err(GrowableConfigError::MaxCapacityBelowLen { max, len: filter.len() });
        }
        if bound >= target {
            return Err(GrowableConfigError::FilterAboveTarget { bound, target });
        }
        let growth = self.growth(target, (filter.bucket_size(), filter.eviction_limit(), filter.seed()));
        Ok(GrowableFilter { len: filter.len(), levels: vec![filter], growth })
    }
}

/// A filter that grows without its keys: a chain of [`CuckooFilter`] levels, each larger than the
/// last and with a narrower false-positive rate, so that the total rate stays below the target at
/// every size (proof in the [module docs](crate::scalable)).
///
/// It implements [`Filter`] and [`FilterMut`], so it offers the same `T: Hash`, byte and
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
    levels: Vec<CuckooFilter>,
    growth: Growth,
    len: usize,
}

impl GrowableFilter {
    /// A builder with the defaults (see [`GrowableBuilder::new`]).
    ///
    /// ```
    /// let filter = bugu::GrowableFilter::builder().initial_capacity(10).build()?;
    /// assert_eq!(filter.capacity(), 10);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn builder() -> GrowableBuilder {
        GrowableBuilder::new()
    }

    /// A growable filter starting at `initial_capacity` items, with the other defaults.
    ///
    /// ```
    /// let filter = bugu::GrowableFilter::new(5_000)?;
    /// assert_eq!(filter.capacity(), 5_000);
    /// assert!(bugu::GrowableFilter::new(0).is_err());
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn new(initial_capacity: usize) -> Result<Self, GrowableConfigError> {
        GrowableBuilder::new().initial_capacity(initial_capacity).build()
    }

    /// A growable filter whose first level is `filter`, with the default growth settings and the
    /// target derived from the filter's bound (see [`GrowableBuilder::build_from`]).
    ///
    /// ```
    /// use bugu::{CuckooFilter, GrowableFilter};
    ///
    /// let core = CuckooFilter::builder().capacity(1_000).fingerprint_bits(16).build()?;
    /// let bound = core.false_positive_rate();
    /// let filter = GrowableFilter::from_filter(core)?;
    /// assert!((filter.target_false_positive_rate() - bound / 0.15).abs() < 1e-12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_filter(filter: CuckooFilter) -> Result<Self, GrowableConfigError> {
        GrowableBuilder::new().build_from(filter)
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
    /// [`GrowableBuilder::max_capacity`]), if one was set.
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
    /// order of removals (the argument is in the [module docs](crate::scalable#removal)). Removing an
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
    pub fn remove_checked<T: Hash + ?Sized>(&mut self, item: &T) -> Removal {
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
    fn next_level(&self) -> Result<CuckooFilter, InsertError> {
        // Building allocates the table fallibly: a refusal is an error, not an abort.
        self.next_level_builder()?.build().map_err(|error| match error {
            ConfigError::OutOfMemory { bytes } => InsertError::OutOfMemory { bytes },
            ConfigError::CapacityTooLarge(_) => InsertError::OutOfMemory { bytes: usize::MAX },
            // The share needs fingerprints wider than 32 bits: the series is exhausted.
            _ => InsertError::Full,
        })
    }

    /// The builder of the next level, or [`InsertError::Full`] if the maximum forbids one.
    fn next_level_builder(&self) -> Result<Builder, InsertError> {
        let growth = &self.growth;
        let index = self.levels.len();
        if growth.max_levels.is_some_and(|max| index >= max) {
            return Err(InsertError::Full);
        }
        let newest = self.levels[index - 1].capacity();
        let mut capacity = newest.saturating_mul(growth.growth_factor);
        if let Some(max) = growth.max_capacity {
            let room = max.saturating_sub(self.capacity());
            if room == 0 {
                return Err(InsertError::Full);
            }
            capacity = capacity.min(room);
        }
        let used = self.false_positive_rate();
        if used >= growth.target {
            return Err(InsertError::Full);
        }
        Ok(growth.level_builder(index, capacity, used))
    }

    /// How many of the oldest levels are small enough to stay in the CPU's private caches
    /// (tables under [`PREFETCH_FROM_BYTES`]); the levels after them are the large ones.
    #[inline]
    fn cached_levels(&self) -> usize {
        self.levels.partition_point(|level| level.memory_bytes() < PREFETCH_FROM_BYTES)
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

    /// Starts fetching the item's buckets in every level too large for the CPU's private caches,
    /// then probes the levels newest first: the cache misses of the large levels overlap instead
    /// of queueing one after another.
    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        if self.levels.len() > 1 {
            for level in self.levels[self.cached_levels()..].iter() {
                level.lookup().locate_and_prefetch(hash);
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
    /// sit in the CPU's caches and gain nothing from prefetching, with plain probes.
    fn contains_hash_batch(&self, hashes: &[u64]) -> Vec<bool> {
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

    fn contains_batch<T: Hash>(&self, items: &[T]) -> Vec<bool> {
        let hashes: Vec<u64> = items.iter().map(|item| self.hash_of(item)).collect();
        self.contains_hash_batch(&hashes)
    }
}

impl FilterMut for GrowableFilter {
    /// Stores one copy: in the newest level, else in an older level with room, else in a new
    /// level (see the [module docs](crate::scalable) for when that is refused, including at
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
        // Every level refused. Do not grow a level for more copies of one item.
        if self.levels[newest].count_hash(hash) >= 2 * self.growth.bucket_size {
            return Err(InsertError::Full);
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

    /// Removes one copy if exactly one level holds a matching fingerprint; `false` if nothing was
    /// removed: no level matched, or several did (the removal was ambiguous and is refused, see
    /// [`GrowableFilter::remove_hash_checked`] and the [module docs](crate::scalable)).
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

// ---------------------------------------------------------------------------------------------
// Persistence: kind 2 of the format in `docs/format.md`, built from cuckoo filter sections.

/// Bytes of the growable filter's own fields, after the header.
const GROWABLE_FIELDS_LEN: usize = 56;
/// Levels a persisted growable filter may have. Capacities at least double from a capacity of at
/// least 1 (only a last level cut by a maximum capacity may be smaller), so no filter that fits in
/// memory has more than 64 levels.
const MAX_PERSISTED_LEVELS: u64 = 64;
/// Tightening codes in the persisted fields.
const TIGHTENING_GEOMETRIC: u64 = 1;
const TIGHTENING_P_SERIES: u64 = 2;

fn invalid(field: &'static str, value: u64) -> PersistError {
    InvalidParameter::Growable { field, value }.into()
}

impl GrowableFilter {
    /// The filter in the persistent format (kind 2 of `docs/format.md`): header, the growth
    /// settings, one cuckoo filter section per level, checksum.
    ///
    /// ```
    /// use bugu::{Filter, FilterMut, GrowableFilter};
    ///
    /// let mut filter = GrowableFilter::new(100)?;
    /// for i in 0..1_000u32 {
    ///     filter.insert(&i)?;
    /// }
    /// let bytes = filter.to_bytes();
    /// let copy = GrowableFilter::from_bytes(&bytes)?;
    /// assert_eq!((copy.len(), copy.level_count()), (1_000, filter.level_count()));
    /// assert!((0..1_000u32).all(|i| copy.contains(&i)));
    /// assert_eq!(copy.to_bytes(), bytes);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let bytes =
            self.encode(Vec::with_capacity(self.serialized_len())).expect("writing to a Vec cannot fail");
        debug_assert_eq!(bytes.len(), self.serialized_len());
        bytes
    }

    /// The length of [`to_bytes`](Self::to_bytes): the levels' tables and padding, 40 bytes of
    /// parameters per level (plus up to 7 of alignment), and 80 bytes of header, settings and
    /// checksum.
    ///
    /// ```
    /// let filter = bugu::GrowableFilter::new(1_000)?;
    /// assert_eq!(filter.serialized_len(), filter.to_bytes().len());
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn serialized_len(&self) -> usize {
        let sections: usize =
            self.levels.iter().map(|level| 40 + level.memory_bytes().next_multiple_of(8)).sum();
        crate::persist::HEADER_LEN + GROWABLE_FIELDS_LEN + sections + 8
    }

    /// Writes [`to_bytes`](Self::to_bytes) to `writer`, streaming each level's table without a
    /// second copy. The writer is not flushed.
    ///
    /// ```
    /// use bugu::{Filter, FilterMut, GrowableFilter};
    ///
    /// let mut filter = GrowableFilter::new(10)?;
    /// filter.insert("kept")?;
    /// let mut buffer = Vec::new();
    /// filter.write_to(&mut buffer)?;
    /// assert!(GrowableFilter::read_from(&buffer[..])?.contains("kept"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_to<W: Write>(&self, writer: W) -> io::Result<()> {
        self.encode(writer).map(drop)
    }

    fn encode<W: Write>(&self, writer: W) -> io::Result<W> {
        let growth = &self.growth;
        let (code, ratio) = match growth.tightening {
            Tightening::Geometric { ratio } => (TIGHTENING_GEOMETRIC, ratio.to_bits()),
            Tightening::PSeries => (TIGHTENING_P_SERIES, 0),
        };
        let mut encoder = Encoder::new(writer, FilterKind::Scalable)?;
        for field in [
            growth.target.to_bits(),
            growth.growth_factor as u64,
            code,
            ratio,
            growth.max_capacity.map_or(0, |max| max as u64),
            growth.max_levels.map_or(0, |max| max as u64),
            self.levels.len() as u64,
        ] {
            encoder.write_u64(field)?;
        }
        for level in &self.levels {
            encoder.section(level)?;
        }
        encoder.finish()
    }

    /// Reads one growable filter written by [`write_to`](Self::write_to) from a stream,
    /// validating everything (as [`CuckooFilter::read_from`] does, plus the growth settings and
    /// that the levels' bounds sum to less than the target). Reading stops after the checksum.
    ///
    /// ```
    /// use bugu::{GrowableFilter, PersistError};
    ///
    /// let bytes = bugu::CuckooFilter::new(10)?.to_bytes();
    /// let err = GrowableFilter::read_from(&bytes[..]).unwrap_err();
    /// assert!(matches!(err, PersistError::WrongKind { .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_from<R: Read>(reader: R) -> Result<Self, PersistError> {
        Self::decode(reader, None).map(|(filter, _)| filter)
    }

    /// Reads a growable filter from exactly the bytes of [`to_bytes`](Self::to_bytes).
    ///
    /// ```
    /// use bugu::{GrowableFilter, PersistError};
    ///
    /// let mut bytes = GrowableFilter::new(10)?.to_bytes();
    /// bytes.push(0);
    /// assert!(matches!(GrowableFilter::from_bytes(&bytes), Err(PersistError::TrailingBytes(1))));
    /// assert!(matches!(GrowableFilter::from_bytes(b"junk"), Err(PersistError::BadMagic)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, PersistError> {
        let len = bytes.len() as u64;
        let (filter, consumed) = Self::decode(bytes, Some(len))?;
        if consumed < len {
            return Err(PersistError::TrailingBytes(len - consumed));
        }
        Ok(filter)
    }

    /// Saves the filter to `path` atomically (see [`CuckooFilter::save`]).
    ///
    /// ```
    /// use bugu::{Filter, FilterMut, GrowableFilter};
    ///
    /// let path = std::env::temp_dir().join(format!("bugu-growable-doc-{}", std::process::id()));
    /// let mut filter = GrowableFilter::new(10)?;
    /// for i in 0..100u32 {
    ///     filter.insert(&i)?;
    /// }
    /// filter.save(&path)?;
    /// let loaded = GrowableFilter::load(&path)?;
    /// assert!((0..100u32).all(|i| loaded.contains(&i)));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn save(&self, path: impl AsRef<Path>) -> io::Result<()> {
        save_atomically(path.as_ref(), |writer| self.write_to(writer))
    }

    /// Loads a filter saved by [`save`](Self::save), validating it as
    /// [`from_bytes`](Self::from_bytes) does; the file's length bounds what is allocated.
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("bugu-growable-load-doc-{}", std::process::id()));
    /// bugu::CuckooFilter::new(10)?.save(&path)?;
    /// assert!(bugu::GrowableFilter::load(&path).is_err()); // a cuckoo filter, not a growable one
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<Self, PersistError> {
        let (reader, len) = open(path.as_ref())?;
        let (filter, consumed) = Self::decode(reader, Some(len))?;
        if consumed < len {
            return Err(PersistError::TrailingBytes(len - consumed));
        }
        Ok(filter)
    }

    /// Reads and validates one growable filter; also returns the bytes consumed.
    fn decode<R: Read>(reader: R, available: Option<u64>) -> Result<(Self, u64), PersistError> {
        let mut decoder = Decoder::new(reader, available);
        expect_kind(decoder.header()?, FilterKind::Scalable)?;
        let mut fields = [0u64; GROWABLE_FIELDS_LEN / 8];
        for field in &mut fields {
            *field = decoder.read_u64("growable filter fields")?;
        }
        let [target_bits, growth_factor, code, ratio_bits, max_capacity, max_levels, count] = fields;
        // Every field is checked before anything is sized from it.
        let target = f64::from_bits(target_bits);
        if !(target > 0.0 && target < 1.0) {
            return Err(invalid("target rate, f64 bits", target_bits));
        }
        if !GROWTH_FACTORS.contains(&(growth_factor as usize)) || growth_factor > 16 {
            return Err(invalid("growth factor", growth_factor));
        }
        let tightening = match (code, f64::from_bits(ratio_bits)) {
            (TIGHTENING_GEOMETRIC, ratio) if ratio > 0.0 && ratio < 1.0 => Tightening::Geometric { ratio },
            (TIGHTENING_GEOMETRIC, _) => return Err(invalid("tightening ratio, f64 bits", ratio_bits)),
            (TIGHTENING_P_SERIES, _) if ratio_bits == 0 => Tightening::PSeries,
            (TIGHTENING_P_SERIES, _) => return Err(invalid("tightening ratio, f64 bits", ratio_bits)),
            _ => return Err(invalid("tightening policy", code)),
        };
        if !(1..=MAX_PERSISTED_LEVELS).contains(&count) || (max_levels != 0 && count > max_levels) {
            return Err(invalid("level count", count));
        }
        let mut levels = Vec::with_capacity(count as usize);
        for _ in 0..count {
            levels.push(decoder.section()?);
        }
        decoder.finish()?;
        // The levels must form one growable filter: same hashing and buckets, and a bound below
        // the target (what every later insert relies on).
        let first = &levels[0];
        let (seed, bucket_size, eviction_limit) = (first.seed(), first.bucket_size(), first.eviction_limit());
        for level in &levels[1..] {
            if level.seed() != seed {
                return Err(invalid("levels with different seeds", level.seed()));
            }
            if level.bucket_size() != bucket_size {
                return Err(invalid("levels with different bucket sizes", level.bucket_size() as u64));
            }
            if level.eviction_limit() != eviction_limit {
                return Err(invalid("levels with different eviction limits", level.eviction_limit() as u64));
            }
        }
        let bound: f64 = levels.iter().map(CuckooFilter::false_positive_rate).sum();
        if bound >= target {
            return Err(invalid("levels' bound not below the target, f64 bits", bound.to_bits()));
        }
        let capacity = levels.iter().fold(0u64, |sum, level| sum.saturating_add(level.capacity() as u64));
        if max_capacity != 0 && (capacity > max_capacity || usize::try_from(max_capacity).is_err()) {
            return Err(invalid("maximum capacity", max_capacity));
        }
        let growth = Growth {
            target,
            growth_factor: growth_factor as usize,
            tightening,
            max_capacity: (max_capacity != 0).then_some(max_capacity as usize),
            max_levels: (max_levels != 0).then(|| usize::try_from(max_levels).unwrap_or(usize::MAX)),
            bucket_size,
            eviction_limit,
            seed,
        };
        let len = levels.iter().map(CuckooFilter::len).sum();
        Ok((GrowableFilter { levels, growth, len }, decoder.offset()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::Addressing;
    use proptest::prelude::*;
    use std::collections::{HashMap, HashSet};

    /// What identifies an item within one level: its fingerprint and its pair of buckets. Two items
    /// with the same signature are indistinguishable in that level.
    type Signature = (u32, usize, usize);

    fn signature(level: &CuckooFilter, hash: u64) -> Signature {
        let (fingerprint, b1, b2) =
            Addressing::new(level.bucket_count(), level.fingerprint_bits()).locate(hash);
        (fingerprint, b1.min(b2), b1.max(b2))
    }

    fn lens(filter: &GrowableFilter) -> Vec<usize> {
        filter.levels.iter().map(CuckooFilter::len).collect()
    }

    /// Everything a failed operation must leave unchanged.
    fn snapshot(filter: &GrowableFilter) -> (usize, Vec<Vec<u8>>) {
        (filter.len, filter.levels.iter().map(|level| level.table_bytes().to_vec()).collect())
    }

    /// Whether every level of `filter` refuses `hash` (tried on copies).
    fn levels_refuse(filter: &GrowableFilter, levels: std::ops::Range<usize>, hash: u64) -> bool {
        levels.into_iter().all(|index| filter.levels[index].clone().insert_hash(hash).is_err())
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u16),
        InsertUnique(u16),
        /// Removes the n-th (modulo) key the model holds.
        RemoveLive(usize),
        /// Removes any key, possibly never inserted or already removed (documented to be able to
        /// take another item's fingerprint then: the model follows which).
        Remove(u16),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => any::<u16>().prop_map(Op::Insert),
            2 => any::<u16>().prop_map(Op::InsertUnique),
            3 => any::<usize>().prop_map(Op::RemoveLive),
            1 => any::<u16>().prop_map(Op::Remove),
        ]
    }

    fn tightening() -> impl Strategy<Value = Tightening> {
        prop_oneof![
            (0.3f64..0.95).prop_map(|ratio| Tightening::Geometric { ratio }),
            Just(Tightening::PSeries),
        ]
    }

    fn builder() -> impl Strategy<Value = GrowableBuilder> {
        (
            (1usize..8, prop::sample::select(crate::BUCKET_SIZES.to_vec())),
            prop::sample::select(vec![0.5, 0.2, 0.05, 0.01, 0.001]),
            (2usize..=4, tightening()),
            (prop::option::of(1usize..6), prop::option::of(0usize..200)),
            any::<u64>(),
        )
            .prop_map(|((initial, b), rate, (growth, policy), (max_levels, extra), seed)| {
                let mut builder = GrowableFilter::builder()
                    .initial_capacity(initial)
                    .bucket_size(b)
                    .false_positive_rate(rate)
                    .growth_factor(growth)
                    .tightening(policy)
                    .eviction_limit(20)
                    .seed(seed);
                if let Some(levels) = max_levels {
                    builder = builder.max_levels(levels);
                }
                if let Some(extra) = extra {
                    builder = builder.max_capacity(initial + extra);
                }
                builder
            })
    }

    /// The filter's exact content, as multisets of signatures per level, each copy labelled with
    /// the key it belongs to; and the keys' inserted-minus-removed counts.
    #[derive(Default)]
    struct Model {
        levels: Vec<HashMap<Signature, Vec<u16>>>,
        live: HashMap<u16, usize>,
        /// Keys that lost a copy to the removal of a key holding none (documented behaviour).
        victims: HashSet<u16>,
    }

    impl Model {
        fn copies(&self, filter: &GrowableFilter, hash: u64) -> Vec<usize> {
            self.levels
                .iter()
                .zip(&filter.levels)
                .map(|(level, real)| level.get(&signature(real, hash)).map_or(0, Vec::len))
                .collect()
        }

        fn owns(&self, key: u16) -> bool {
            self.levels.iter().any(|level| level.values().any(|owners| owners.contains(&key)))
        }

        fn stored(&self) -> usize {
            self.levels.iter().flat_map(|level| level.values()).map(Vec::len).sum()
        }
    }

    /// Checks which level took a successful insert, against the policy, and records it.
    fn record_insert(
        before: &GrowableFilter,
        after: &GrowableFilter,
        model: &mut Model,
        key: u16,
        hash: u64,
    ) -> Result<(), TestCaseError> {
        let (old, new) = (lens(before), lens(after));
        prop_assert!(new.len() == old.len() || new.len() == old.len() + 1);
        let changed: Vec<usize> =
            (0..new.len()).filter(|&i| new[i] != old.get(i).copied().unwrap_or(0)).collect();
        prop_assert_eq!(changed.len(), 1);
        let level = changed[0];
        prop_assert_eq!(new[level], old.get(level).copied().unwrap_or(0) + 1);
        let newest = old.len() - 1;
        if level == old.len() {
            prop_assert!(levels_refuse(before, 0..old.len(), hash), "grew while a level had room");
            model.levels.push(HashMap::new());
        } else if level < newest {
            prop_assert!(levels_refuse(before, level + 1..old.len(), hash), "skipped a newer level");
        }
        let signature = signature(&after.levels[level], hash);
        model.levels[level].entry(signature).or_default().push(key);
        *model.live.entry(key).or_default() += 1;
        Ok(())
    }

    /// Checks that a refused insert was allowed to be refused, and changed nothing.
    fn check_refusal(
        before: &GrowableFilter,
        after: &GrowableFilter,
        error: InsertError,
        hash: u64,
    ) -> Result<(), TestCaseError> {
        prop_assert_eq!(error, InsertError::Full);
        prop_assert_eq!(snapshot(before), snapshot(after));
        // At the maximum number of items, refused whatever room the levels have.
        if before.max_capacity() == Some(before.len()) {
            return Ok(());
        }
        prop_assert!(levels_refuse(before, 0..before.levels.len(), hash));
        let newest = before.levels.last().unwrap();
        let saturated = newest.count_hash(hash) >= 2 * before.bucket_size();
        let at_maximum = matches!(before.next_level(), Err(InsertError::Full));
        prop_assert!(saturated || at_maximum, "refused an insert it could grow for");
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn behaves_like_an_exact_model_while_growing(
            builder in builder(),
            universe in 4u16..64,
            ops in proptest::collection::vec(op(), 1..300),
        ) {
            let mut filter = builder.build().unwrap();
            let mut model = Model { levels: vec![HashMap::new()], ..Model::default() };
            let target = filter.target_false_positive_rate();
            for op in ops {
                let before = filter.clone();
                match op {
                    Op::Insert(key) => {
                        let key = key % universe;
                        let hash = filter.hash_of(&key);
                        match filter.insert(&key) {
                            Ok(()) => record_insert(&before, &filter, &mut model, key, hash)?,
                            Err(error) => check_refusal(&before, &filter, error, hash)?,
                        }
                    }
                    Op::InsertUnique(key) => {
                        let key = key % universe;
                        let hash = filter.hash_of(&key);
                        match filter.insert_unique(&key) {
                            Ok(true) => {
                                prop_assert!(!before.contains(&key));
                                record_insert(&before, &filter, &mut model, key, hash)?;
                            }
                            Ok(false) => {
                                prop_assert!(before.contains(&key));
                                prop_assert_eq!(snapshot(&before), snapshot(&filter));
                            }
                            Err(error) => {
                                prop_assert!(!before.contains(&key));
                                check_refusal(&before, &filter, error, hash)?;
                            }
                        }
                    }
                    Op::RemoveLive(_) | Op::Remove(_) => {
                        let key = match op {
                            Op::Remove(key) => key % universe,
                            Op::RemoveLive(n) => {
                                let mut live: Vec<u16> =
                                    model.live.iter().filter(|(_, c)| **c > 0).map(|(k, _)| *k).collect();
                                if live.is_empty() {
                                    continue;
                                }
                                live.sort_unstable();
                                live[n % live.len()]
                            }
                            _ => unreachable!(),
                        };
                        let hash = filter.hash_of(&key);
                        // Removed only if exactly one level holds a matching fingerprint.
                        let matching: Vec<usize> = model
                            .copies(&filter, hash)
                            .iter()
                            .enumerate()
                            .filter(|&(_, &c)| c > 0)
                            .map(|(level, _)| level)
                            .collect();
                        let expected = match matching[..] {
                            [] => Removal::NotFound,
                            [level] => Removal::Removed { level },
                            _ => Removal::Ambiguous { levels: matching.len() },
                        };
                        prop_assert_eq!(filter.remove_hash_checked(hash), expected);
                        // The trait's answer agrees, and does the same.
                        let mut by_trait = before.clone();
                        prop_assert_eq!(by_trait.remove(&key), expected.is_removed());
                        prop_assert_eq!(snapshot(&by_trait), snapshot(&filter));
                        if let Removal::Removed { level } = expected {
                            let (old, new) = (lens(&before), lens(&filter));
                            prop_assert_eq!(new[level] + 1, old[level]);
                            let owns = model.owns(key);
                            let signature = signature(&filter.levels[level], hash);
                            let owners = model.levels[level].get_mut(&signature).unwrap();
                            match owners.iter().position(|&owner| owner == key) {
                                Some(at) => { owners.swap_remove(at); }
                                None => {
                                    // Every copy of a key matches it, and only this level
                                    // matched: so the key holds no copy at all. It was never
                                    // inserted, or removed already, or lost its copy to such a
                                    // removal before (the documented misuse and its sequel).
                                    prop_assert!(!owns, "took another's copy from a key with its own");
                                    prop_assert!(matches!(op, Op::Remove(_)) || model.victims.contains(&key));
                                    model.victims.insert(owners.pop().unwrap());
                                }
                            }
                            if owners.is_empty() {
                                model.levels[level].remove(&signature);
                            }
                            if let Some(count) = model.live.get_mut(&key).filter(|c| **c > 0) {
                                *count -= 1;
                            }
                        } else {
                            prop_assert_eq!(snapshot(&before), snapshot(&filter));
                        }
                    }
                }
                // The filter is exactly the model: same levels, same fingerprints.
                prop_assert_eq!(filter.level_count(), model.levels.len());
                prop_assert_eq!(filter.len(), model.stored());
                prop_assert!(filter.max_capacity().is_none_or(|max| filter.len() <= max));
                prop_assert_eq!(filter.levels.iter().map(CuckooFilter::len).sum::<usize>(), filter.len());
                prop_assert!(filter.false_positive_rate() < target);
                let hashes: Vec<u64> = (0..universe).map(|key| filter.hash_of(&key)).collect();
                let batch = filter.contains_hash_batch(&hashes);
                for key in 0..universe {
                    let hash = hashes[key as usize];
                    let copies = model.copies(&filter, hash);
                    prop_assert_eq!(filter.contains(&key), copies.iter().any(|&c| c > 0), "key {}", key);
                    prop_assert_eq!(batch[key as usize], filter.contains(&key));
                    prop_assert_eq!(filter.count(&key), copies.iter().sum::<usize>());
                    // Never a false negative for a key inserted more often than removed, whatever
                    // the order of removals: only removing a key that holds no copy can take
                    // another key's copy.
                    let live = model.live.get(&key).is_some_and(|&c| c > 0);
                    if live && !model.victims.contains(&key) {
                        prop_assert!(model.owns(key), "{} lost its copies", key);
                    }
                    if model.owns(key) {
                        prop_assert!(filter.contains(&key), "false negative for {}", key);
                    }
                }
            }
            prop_assert_eq!(filter.stats().iter().map(|s| s.items).sum::<usize>(), filter.len());
        }
    }

    /// Walks the plan of levels (without allocating them) until the series is exhausted.
    fn plan(growth: &Growth, initial: usize, levels: usize) -> Vec<(u32, f64, f64)> {
        let (mut used, mut capacity, mut plan) = (0.0, initial, Vec::new());
        for index in 0..levels {
            let builder = growth.level_builder(index, capacity, used);
            let share = growth.tightening.fraction(index) * (growth.target - used);
            let Ok(config) = builder.config() else { break };
            let rate = crate::sizing::false_positive_bound(config.fingerprint_bits, config.bucket_size, 1.0);
            assert!(rate <= share, "level {index}: rate {rate} above its share {share}");
            used += rate;
            plan.push((config.fingerprint_bits, rate, used));
            capacity = capacity.saturating_mul(growth.growth_factor).min(1 << 40);
        }
        plan
    }

    fn growth(target: f64, tightening: Tightening, bucket_size: usize) -> Growth {
        Growth {
            target,
            growth_factor: 2,
            tightening,
            max_capacity: None,
            max_levels: None,
            bucket_size,
            eviction_limit: DEFAULT_EVICTION_LIMIT,
            seed: 0,
        }
    }

    #[test]
    fn the_rate_budget_is_never_exceeded_however_long_the_chain() {
        let policies = [
            Tightening::Geometric { ratio: 0.5 },
            Tightening::Geometric { ratio: 0.85 },
            Tightening::Geometric { ratio: 0.99 },
            Tightening::PSeries,
        ];
        for target in [0.9, 0.5, 0.1, 0.01, 1e-3, 1e-5, 1e-7] {
            for bucket_size in crate::BUCKET_SIZES {
                for policy in policies {
                    let plan = plan(&growth(target, policy, bucket_size), 1000, 300);
                    for &(bits, _, used) in &plan {
                        assert!(used < target, "{target} {policy:?} b={bucket_size}: {used}");
                        assert!(crate::FINGERPRINT_BITS.contains(&bits));
                    }
                    // Widths never shrink: later levels get narrower shares.
                    assert!(plan.windows(2).all(|w| w[0].0 <= w[1].0), "{policy:?}: {plan:?}");
                }
            }
        }
    }

    #[test]
    fn the_series_compare_as_documented() {
        // Fingerprint widths of 14 levels at p = 0.001, b = 4: the module docs' figures.
        let widths = |policy| -> Vec<u32> {
            plan(&growth(0.001, policy, 4), 1000, 14).iter().map(|level| level.0).collect()
        };
        let halving = widths(Tightening::Geometric { ratio: 0.5 });
        let p_series = widths(Tightening::PSeries);
        let default = widths(DEFAULT_TIGHTENING);
        assert_eq!(halving, [14, 15, 16, 17, 18, 19, 19, 20, 20, 21, 22, 23, 24, 24]);
        assert_eq!(p_series, [14, 16, 17, 17, 18, 18, 19, 19, 19, 19, 20, 20, 20, 20]);
        assert_eq!(default, [16, 16, 17, 17, 17, 17, 17, 17, 18, 18, 18, 18, 18, 18]);
        // Halving runs out of 32-bit fingerprints after 26 levels; the default goes on.
        assert_eq!(plan(&growth(0.001, Tightening::Geometric { ratio: 0.5 }, 4), 1000, 100).len(), 26);
        assert!(plan(&growth(0.001, DEFAULT_TIGHTENING, 4), 1000, 100).len() > 60);
    }

    #[test]
    fn p_series_fractions_reproduce_the_series() {
        // With shares used exactly, level i gets 6p / (pi^2 (i+1)^2).
        let (mut left, p) = (1.0, 1.0);
        for index in 0..50 {
            let share = Tightening::PSeries.fraction(index) * left;
            let n = index as f64 + 1.0;
            let expected = 6.0 * p / (std::f64::consts::PI.powi(2) * n * n);
            assert!((share / expected - 1.0).abs() < 1e-9, "level {index}: {share} vs {expected}");
            left -= share;
        }
        let geometric = Tightening::Geometric { ratio: 0.5 };
        assert_eq!(geometric.fraction(0), 0.5);
        assert_eq!(geometric.fraction(40), 0.5);
    }

    #[test]
    fn bad_settings_are_typed_errors() {
        let err = |builder: GrowableBuilder| builder.build().unwrap_err();
        assert_eq!(
            err(GrowableFilter::builder().growth_factor(17)),
            GrowableConfigError::InvalidGrowthFactor(17)
        );
        for ratio in [0.0, 1.0, -0.5, f64::NAN] {
            let e = err(GrowableFilter::builder().tightening(Tightening::Geometric { ratio }));
            assert!(matches!(e, GrowableConfigError::InvalidTighteningRatio(_)), "{e}");
        }
        assert_eq!(err(GrowableFilter::builder().max_levels(0)), GrowableConfigError::ZeroMaxLevels);
        assert_eq!(
            err(GrowableFilter::builder().initial_capacity(100).max_capacity(99)),
            GrowableConfigError::MaxCapacityBelowInitial { max: 99, initial: 100 }
        );
        assert_eq!(
            err(GrowableFilter::builder().initial_capacity(0)),
            GrowableConfigError::Level(ConfigError::ZeroCapacity)
        );
        assert!(matches!(
            err(GrowableFilter::builder().false_positive_rate(1.0)),
            GrowableConfigError::Level(ConfigError::InvalidFalsePositiveRate(_))
        ));
        assert!(matches!(
            err(GrowableFilter::builder().false_positive_rate(1e-11)),
            GrowableConfigError::Level(ConfigError::FalsePositiveRateTooSmall { .. })
        ));
        assert!(matches!(
            err(GrowableFilter::builder().bucket_size(3)),
            GrowableConfigError::Level(ConfigError::InvalidBucketSize(3))
        ));
    }

    fn fill_until_levels(filter: &mut GrowableFilter, levels: usize, start: u64) -> u64 {
        let mut key = start;
        while filter.level_count() < levels {
            filter.insert(&key).unwrap();
            key += 1;
        }
        key
    }

    #[test]
    fn the_maximum_refuses_inserts_without_change() {
        let mut filter = GrowableFilter::builder().initial_capacity(50).max_levels(2).build().unwrap();
        let mut key = fill_until_levels(&mut filter, 2, 0);
        let refused = loop {
            let before = snapshot(&filter);
            match filter.insert(&key) {
                Ok(()) => key += 1,
                Err(error) => break (error, before),
            }
        };
        assert_eq!(refused.0, InsertError::Full);
        assert_eq!(refused.1, snapshot(&filter));
        assert_eq!(filter.level_count(), 2);
        assert!(filter.len() >= 150, "{}", filter.len());
        assert!((0..key).all(|k| filter.contains(&k)));

        // A maximum capacity cuts the last level to fit, and bounds the items held: the first
        // level alone holds more than its capacity of 100, yet exactly 250 items go in.
        let mut filter = GrowableFilter::builder().initial_capacity(100).max_capacity(250).build().unwrap();
        let mut key = 0u64;
        let (error, before) = loop {
            let before = snapshot(&filter);
            match filter.insert(&key) {
                Ok(()) => key += 1,
                Err(error) => break (error, before),
            }
        };
        assert_eq!((error, before), (InsertError::Full, snapshot(&filter)));
        assert_eq!(filter.capacity(), 250);
        assert_eq!(filter.levels()[1].capacity(), 150);
        assert_eq!((filter.len(), key), (250, 250));
        assert!(filter.levels()[0].len() > 100, "{}", filter.levels()[0].len());
        // A filter holding more than the maximum cannot start a growable one.
        let mut core = CuckooFilter::new(100).unwrap();
        let mut key = 0u64;
        while core.len() <= 100 {
            core.insert(&key).unwrap();
            key += 1;
        }
        assert_eq!(
            GrowableFilter::builder().max_capacity(100).build_from(core.clone()).unwrap_err(),
            GrowableConfigError::MaxCapacityBelowLen { max: 100, len: 101 }
        );
        assert!(GrowableFilter::builder().max_capacity(101).build_from(core).is_ok());
    }

    #[test]
    fn an_exhausted_series_stops_growing() {
        // Halving from 1e-7 with 8 slots: 32-bit fingerprints are reached after a few levels.
        let mut filter = GrowableFilter::builder()
            .initial_capacity(4)
            .bucket_size(8)
            .false_positive_rate(1e-7)
            .tightening(Tightening::Geometric { ratio: 0.5 })
            .build()
            .unwrap();
        let mut key = 0u64;
        let error = loop {
            match filter.insert(&key) {
                Ok(()) => key += 1,
                Err(error) => break error,
            }
        };
        assert_eq!(error, InsertError::Full);
        assert_eq!(filter.levels().last().unwrap().fingerprint_bits(), 32);
        assert!(matches!(filter.next_level_builder().map(|b| b.config()), Ok(Err(_))));
        assert!(filter.false_positive_rate() < 1e-7);
        assert!((0..key).all(|k| filter.contains(&k)));
    }

    #[test]
    fn an_allocation_failure_is_typed_and_changes_nothing() {
        let mut filter = GrowableFilter::new(100).unwrap();
        // A next level of about 2^62 bytes: no machine can map it.
        filter.growth.growth_factor = 1 << 50;
        let mut key = 0u64;
        let (error, before) = loop {
            let before = snapshot(&filter);
            match filter.insert(&key) {
                Ok(()) => key += 1,
                Err(error) => break (error, before),
            }
        };
        assert!(matches!(error, InsertError::OutOfMemory { bytes } if bytes > 1 << 50), "{error:?}");
        assert_eq!(before, snapshot(&filter));
        assert_eq!(filter.level_count(), 1);
        // Capacities beyond the address space are out of memory too.
        filter.growth.growth_factor = usize::MAX / 2;
        assert_eq!(filter.insert(&key), Err(InsertError::OutOfMemory { bytes: usize::MAX }));
    }

    #[test]
    fn copies_of_one_item_do_not_grow_the_filter() {
        let mut filter = GrowableFilter::builder().initial_capacity(100).bucket_size(2).build().unwrap();
        for _ in 0..4 {
            filter.insert("same").unwrap();
        }
        let before = snapshot(&filter);
        assert_eq!(filter.insert("same"), Err(InsertError::Full));
        assert_eq!(before, snapshot(&filter));
        assert_eq!((filter.level_count(), filter.count("same")), (1, 4));
        // Once the filter has grown for other items, the new level takes more copies.
        fill_until_levels(&mut filter, 2, 0);
        for _ in 0..4 {
            filter.insert("same").unwrap();
        }
        assert_eq!(filter.insert("same"), Err(InsertError::Full));
        assert_eq!((filter.level_count(), filter.count("same")), (2, 8));
        // Copies in two levels cannot be told from a lookalike in the other level: they stay.
        let before = snapshot(&filter);
        assert_eq!(filter.remove_checked("same"), Removal::Ambiguous { levels: 2 });
        assert!(!filter.remove("same"));
        assert_eq!(before, snapshot(&filter));
    }

    #[test]
    fn inserts_reuse_room_in_older_levels_before_growing() {
        let mut filter = GrowableFilter::new(100).unwrap();
        let next = fill_until_levels(&mut filter, 2, 0);
        // Fill the second level, then free room in the first.
        let mut key = next;
        while filter.levels[1].clone().insert(&key).is_ok() {
            filter.insert(&key).unwrap();
            key += 1;
        }
        for k in 0..50u64 {
            assert!(filter.remove(&k));
        }
        let level_0 = filter.levels[0].len();
        filter.insert(&key).unwrap();
        assert_eq!(filter.level_count(), 2);
        assert_eq!(filter.levels[0].len(), level_0 + 1);
    }

    #[test]
    fn remove_takes_a_copy_only_when_one_level_matches() {
        let mut filter = GrowableFilter::new(100).unwrap();
        filter.insert("old").unwrap();
        filter.insert("twice").unwrap();
        let next = fill_until_levels(&mut filter, 2, 0);
        filter.insert("new").unwrap();
        filter.insert("twice").unwrap();
        let before = lens(&filter);
        assert_eq!(filter.remove_checked("old"), Removal::Removed { level: 0 });
        assert_eq!(lens(&filter), [before[0] - 1, before[1]]);
        assert_eq!(filter.remove_checked("new"), Removal::Removed { level: 1 });
        assert_eq!(lens(&filter), [before[0] - 1, before[1] - 1]);
        assert_eq!(filter.remove_checked("new"), Removal::NotFound);
        // A copy in each level: either could be another item's lookalike, so neither goes.
        let (len, kept) = (filter.len(), snapshot(&filter));
        assert_eq!(filter.remove_checked("twice"), Removal::Ambiguous { levels: 2 });
        assert!(!filter.remove("twice"));
        assert_eq!((filter.len(), snapshot(&filter)), (len, kept));
        assert_eq!(filter.count("twice"), 2);
        assert!((0..next).all(|key| filter.contains(&key)));
        // Pre-hashed and byte entry points follow the same rule.
        filter.insert_bytes(b"bytes").unwrap();
        assert!(filter.remove_bytes(b"bytes"));
        assert_eq!(filter.remove_hash_checked(filter.hash_of_bytes(b"bytes")), Removal::NotFound);
    }

    #[test]
    fn a_lookalike_in_another_level_makes_the_removal_ambiguous() {
        // Narrow fingerprints make lookalikes easy to find.
        let mut filter = GrowableFilter::builder()
            .initial_capacity(8)
            .bucket_size(2)
            .false_positive_rate(0.5)
            .build()
            .unwrap();
        let next = fill_until_levels(&mut filter, 2, 0);
        let (old, new) = (&filter.levels[0], &filter.levels[1]);
        // x: an item of level 0; y: indistinguishable from x in level 1, absent from level 0. Not
        // every x has such a y (where level 1's bucket pair of x falls relative to level 0's
        // buckets decides it), so try the items of level 0 in turn.
        let (x, y) = (0..next)
            .filter(|x| {
                let hx = filter.hash_of(x);
                old.count_hash(hx) == 1 && new.count_hash(hx) == 0
            })
            .find_map(|x| {
                let hx = filter.hash_of(&x);
                let lookalike = |y: &u64| {
                    let hy = filter.hash_of(y);
                    signature(new, hy) == signature(new, hx) && !old.contains_hash(hy)
                };
                (next..next + 1_000_000).find(lookalike).map(|y| (x, y))
            })
            .expect("some item of level 0 has a lookalike in level 1");
        filter.insert(&y).unwrap();
        let hx = filter.hash_of(&x);
        assert_eq!(filter.levels[1].count_hash(hx), 1);
        // Under the old rule (newest match first) this removal took y's only copy.
        let (len, before) = (filter.len(), snapshot(&filter));
        assert_eq!(filter.remove_checked(&x), Removal::Ambiguous { levels: 2 });
        assert_eq!((filter.len(), snapshot(&filter)), (len, before));
        assert!(filter.contains(&x) && filter.contains(&y));
        // y matches only in its own level: its removal is safe, and then x's is no longer
        // ambiguous.
        assert_eq!(filter.remove_checked(&y), Removal::Removed { level: 1 });
        assert!(filter.contains(&x));
        assert_eq!(filter.remove_checked(&x), Removal::Removed { level: 0 });
        assert_eq!(filter.len(), len - 2);
        assert!((0..next).filter(|&key| key != x).all(|key| filter.contains(&key)));
    }

    #[test]
    fn removing_a_never_inserted_lookalike_takes_a_copy_as_documented() {
        // As in a single filter: the one matching level's copy is taken, whoever it belonged to.
        let mut filter = GrowableFilter::builder()
            .initial_capacity(8)
            .bucket_size(2)
            .false_positive_rate(0.5)
            .build()
            .unwrap();
        let x = 0u64;
        filter.insert(&x).unwrap();
        let level = &filter.levels[0];
        let hx = filter.hash_of(&x);
        let stranger =
            (1u64..).find(|k| signature(level, filter.hash_of(k)) == signature(level, hx)).unwrap();
        assert_eq!(filter.remove_checked(&stranger), Removal::Removed { level: 0 });
        assert!(!filter.contains(&x));
        assert!(filter.is_empty());
    }

    #[test]
    fn starting_from_a_filter_continues_its_series() {
        let mut core = CuckooFilter::builder().capacity(200).fingerprint_bits(14).build().unwrap();
        for i in 0..200u32 {
            core.insert(&i).unwrap();
        }
        let bound = core.false_positive_rate();
        // Above the target: refused.
        let refused = GrowableFilter::builder().false_positive_rate(bound).build_from(core.clone());
        assert_eq!(refused.unwrap_err(), GrowableConfigError::FilterAboveTarget { bound, target: bound });
        // Above its default share, below the target: the later levels share what is left.
        let target = bound * 1.5;
        let mut filter =
            GrowableFilter::builder().false_positive_rate(target).build_from(core.clone()).unwrap();
        assert_eq!((filter.len(), filter.capacity(), filter.level_count()), (200, 200, 1));
        for i in 200..20_000u32 {
            filter.insert(&i).unwrap();
        }
        assert!(filter.level_count() > 4);
        assert!((0..20_000u32).all(|i| filter.contains(&i)));
        assert!(filter.false_positive_rate() < target);
        assert_eq!(filter.levels()[1].capacity(), 400);
        // No target: the filter is the series' first level.
        let derived = GrowableFilter::from_filter(core).unwrap();
        let expected = bound / DEFAULT_TIGHTENING.fraction(0);
        assert!((derived.target_false_positive_rate() / expected - 1.0).abs() < 1e-12);
        assert_eq!(derived.seed(), 0);
        let seeded = CuckooFilter::builder().capacity(10).seed(9).bucket_size(8).build().unwrap();
        let grown = GrowableFilter::builder().seed(1).bucket_size(2).build_from(seeded).unwrap();
        assert_eq!((grown.seed(), grown.bucket_size()), (9, 8));
    }

    #[test]
    fn clear_returns_to_the_first_level_and_regrows_identically() {
        let mut filter = GrowableFilter::new(64).unwrap();
        fill_until_levels(&mut filter, 4, 0);
        let shapes = |f: &GrowableFilter| -> Vec<(usize, u32)> {
            f.levels().iter().map(|l| (l.capacity(), l.fingerprint_bits())).collect()
        };
        let grown = shapes(&filter);
        filter.clear();
        assert_eq!((filter.len(), filter.level_count()), (0, 1));
        fill_until_levels(&mut filter, 4, 0);
        assert_eq!(shapes(&filter), grown);
    }

    #[test]
    fn debug_clone_send_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<GrowableFilter>();
        let mut a = GrowableFilter::new(10).unwrap();
        fill_until_levels(&mut a, 3, 0);
        let mut b = a.clone();
        b.insert("only in b").unwrap();
        assert_eq!(b.len(), a.len() + 1);
        assert!(!a.contains("only in b") || a.count("only in b") < b.count("only in b"));
        let debug = format!("{a:?}");
        assert!(debug.starts_with("GrowableFilter { len: "), "{debug}");
        assert!(debug.contains("levels: 3"), "{debug}");
        assert!(debug.len() < 300);
    }
}
