//! [`GrowableFilter`]: a filter that grows as items arrive, without ever holding the items, and
//! whose false-positive rate stays under a target fixed in advance, at every size.
//!
//! # Design
//!
//! A growable filter is a chain of [`CuckooFilter`] *levels*. It starts with one level sized for
//! the initial capacity. Inserts go to the newest level; when the newest level refuses an item
//! (its insertion found no path of moves), the older levels are tried, newest to oldest (they have
//! room again after removals); only when all refuse does the filter add a level `growth factor`
//! times larger than the newest, with narrower room for false positives, and store the item there
//! (unless copies filled the item's buckets in a newest level below its capacity: see
//! [Multiset semantics and limits](#multiset-semantics-and-limits)). An empty level always takes
//! an item, so growth never leaves an empty, useless level behind.
//! Lookups probe every level (newest first, and stop at the first match); keeping the growth
//! factor at least 2 keeps the levels few: `log2(n / initial)` + 1 at most for `n` items. A lookup
//! first starts fetching its buckets in every level too large for a core's private caches, then
//! probes, so that the cache misses of the large levels overlap; batched lookups run each large
//! level's pipelined batch lookup on the hashes not found yet, then probe the small levels.
//!
//! The alternative of rebuilding one larger table is impossible without the keys: a stored
//! fingerprint does not determine its bucket in a table of another size. Designs that keep
//! lookups at a constant number of probes do exist (the Taffy cuckoo filter, InfiniFilter, the
//! Aleph filter): they expand the table in place and duplicate or re-home entries as it grows,
//! spending longer fingerprints and more code on it; they are heavier and left for later.
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
//! after 26 levels at `p = 0.001` (19 without the budget's carried-over slack). The p-series
//! grows only as `2 log2 i`. A geometric series with ratio 0.85 (the tightening ratio of scalable
//! Bloom filters, Almeida et al. 2007, who recommend 0.8 to 0.9) pays 2.7 bits at the first, small
//! levels and less than the p-series up to level 35 (10^13 items from 1,000). Computed with this module's exact widths and budgets, the
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
//!   ([`Removal::Removed`]; [`remove`](crate::FilterMut::remove) returns `true`,
//!   [`len`](GrowableFilter::len) drops by one);
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
//! Every [`insert`](crate::FilterMut::insert) stores a copy, as in [`CuckooFilter`]. One level
//! stores at most `2 x bucket size` copies of an item (its two buckets full of its fingerprint).
//! An insert tries the newest level, then the older ones; when every level refuses the item, the
//! filter adds a level for it, except in one case: the newest level holds fewer items than its
//! capacity and the item's buckets there already hold its fingerprint. Then the insert fails with
//! [`InsertError::CopyLimit`], whose `copies` counts those matching fingerprints (`2 x bucket
//! size` when they fill both buckets; fewer when copies of items sharing its buckets fill the
//! rest), and nothing changes.
//!
//! **Why that case.** No level can tell an item's copies from its lookalikes (other items with
//! the same fingerprint and buckets). Growing for every refusal would let a few items inserted
//! without end add level after level, each twice as large. Refusing while the newest level is
//! below its capacity bounds that: copies add a level only when the newest level holds its
//! capacity, and the new level starts empty, so items inserted without end stop growing the
//! filter once its newest level's capacity passes the `2 x bucket size` copies each can put in
//! it. One item adds at most one level; 64 items inserted 100 times each from a first level of 16
//! leave 5, 6 and 7 levels in 2,233, 2,973 and 6,252 bytes (buckets of 2, 4, 8), where growing for
//! every refusal built a newest level of 65,536 items (buckets of 2; `tests/growth_copies.rs`
//! checks the bound). At or past its capacity a level is fuller than
//! its sizing covers and lookalikes fill an item's buckets far more often, so there the filter
//! grows, and the new level takes the item.
//!
//! **When a distinct item is refused.** Without a maximum, an item not inserted before fails only
//! if (a) the newest level holds fewer items than its capacity, (b) every level refuses it, and
//! (c) its fingerprint matches one in its buckets of the newest level. For distinct items at the
//! default eviction limit, (b) below capacity is what the builder's sizing bounds: a level built
//! for `n` items fails to take `n` distinct items with a chance below
//! [`FIT_FAILURE_BOUND`](crate::FIT_FAILURE_BOUND) (10^-6); and (c) is a false positive of that
//! level, at most its rate. So the chance is below 10^-6 times the newest level's rate per level.
//! Measured (`tests/growth_copies.rs`; its ignored test for the larger runs): not one refusal in
//! 20,000 fills of 142 items and 2,000 fills of 3,000 items from a first level of 34, at rates
//! 0.95 and `1 - 2^-52`, tightening ratios 0.85 and 0.01 (which give the first levels 4- to 7-bit
//! fingerprints), buckets of 2, 4 and 8, eviction limits 500 and 20. Refusing every copy limit, as
//! the filter once did, refused 10 items in the suite's shorter run (4,000 fills of 142 and 500 of
//! 3,000 at each setting): 5 at each setting with 4-bit fingerprints in buckets of 2. Three things
//! raise the chance:
//! - an eviction limit far below the default, which makes levels refuse distinct items below
//!   their capacity: at a limit of 1, 8 to 14 refusals per setting in the 22,000 fills above with
//!   buckets of 2, up to 2 with buckets of 4, none with 8;
//! - removals that bring a level filled past its capacity back below it, with its lookalikes;
//! - copies: an item whose buckets are filled by other items' copies is refused, as in a
//!   [`CuckooFilter`].
//!
//! Copies of one item in two levels make its removals ambiguous (see above). Otherwise an insert
//! fails only
//! - with [`InsertError::Full`] at the configured maximum, where the filter would add a level:
//!   [`len`](GrowableFilter::len) equal to the maximum capacity (levels grow until their
//!   capacities sum to it, so that many distinct items fit), or no level with room and the
//!   maximum number of levels reached; or when the next level's share would need fingerprints
//!   wider than 32 bits (with the defaults, after about 60 levels, far beyond any memory);
//! - with [`InsertError::OutOfMemory`] when the allocator refuses the new level's table (the
//!   process is not aborted).
//!
//! A failed insert changes nothing.
//!
//! # Where things live
//!
//! - `policy.rs`: the growth rules — the defaults, [`Tightening`] (how the rate budget is split
//!   between levels) and the settings every level shares, which decide the next level's capacity
//!   and fingerprint width, or that there is none.
//! - `error.rs`: [`GrowableConfigError`], which the growth rules and the builder report.
//! - `builder.rs`: [`GrowableBuilder`], and the constructors of [`GrowableFilter`] that use it.
//! - `filter.rs`: [`GrowableFilter`] — inserts, lookups, removals ([`Removal`]), inspection.
//! - `tests.rs`: unit tests, including a model-checked property test of every operation.
//! - Saving and loading ([`Persist`](crate::Persist)) live with the other kinds' in
//!   [`persist`](crate::persist) (`persist/growable.rs`): kind 2 of the format in
//!   `docs/format.md`, one cuckoo filter section per level.
//!
//! [`CuckooFilter`]: crate::CuckooFilter
//! [`CuckooFilter::false_positive_rate`]: crate::CuckooFilter::false_positive_rate
//! [`InsertError::Full`]: crate::InsertError::Full
//! [`InsertError::CopyLimit`]: crate::InsertError::CopyLimit
//! [`InsertError::OutOfMemory`]: crate::InsertError::OutOfMemory

mod builder;
mod error;
mod filter;
mod policy;
#[cfg(test)]
mod tests;

pub use builder::GrowableBuilder;
pub use error::GrowableConfigError;
pub use filter::{GrowableFilter, Removal};
pub use policy::{
    DEFAULT_GROWTH_FACTOR, DEFAULT_INITIAL_CAPACITY, DEFAULT_TARGET_FALSE_POSITIVE_RATE, DEFAULT_TIGHTENING,
    GROWTH_FACTORS, MAX_LEVELS, Tightening,
};
pub(crate) use policy::{Growth, check_growth_factor};
