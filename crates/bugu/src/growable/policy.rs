//! The growth rules: the defaults, how the false-positive budget is split between levels
//! ([`Tightening`]), and [`Growth`], the settings every level shares, which decide the builder of
//! each new level (its capacity and its share of the budget) or that no level may be added.
//!
//! The proof that the shares keep the total rate below the target, and the comparison of the
//! series, are in the [module docs](crate::growable).

use crate::config::Builder;
use crate::error::InsertError;
use crate::filter::CuckooFilter;
use crate::hash::HashFunction;

use super::error::GrowableConfigError;

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

/// A growth factor must be in [`GROWTH_FACTORS`] (the builder's rule, and the format reader's).
pub(crate) fn check_growth_factor(factor: usize) -> Result<(), GrowableConfigError> {
    match GROWTH_FACTORS.contains(&factor) {
        true => Ok(()),
        false => Err(GrowableConfigError::InvalidGrowthFactor(factor)),
    }
}

/// The most levels a growable filter holds, whatever its `max_levels`: growth stops there
/// ([`InsertError::Full`]), and the byte format accepts no more. Capacities at least double from at
/// least 1 item, so only a filter built by hand from bytes can come near it.
///
/// ```
/// assert_eq!(bugu::MAX_LEVELS, 64);
/// ```
pub const MAX_LEVELS: usize = 64;

/// The default target false-positive rate of a growable filter (that of `scalable_cuckoo_filter`).
pub const DEFAULT_TARGET_FALSE_POSITIVE_RATE: f64 = 0.001;

/// The default initial capacity of a growable filter.
pub const DEFAULT_INITIAL_CAPACITY: usize = 1_000;

/// The default tightening policy: each level may use 15% of the false-positive budget left.
pub const DEFAULT_TIGHTENING: Tightening = Tightening::Geometric { ratio: 0.85 };

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
    pub(super) fn fraction(self, index: usize) -> f64 {
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

    /// Checks the policy's parameters (a geometric ratio strictly between 0 and 1): the builder's
    /// rule, and the format reader's.
    pub(crate) fn validate(self) -> Result<(), GrowableConfigError> {
        match self {
            Tightening::Geometric { ratio } if !(ratio > 0.0 && ratio < 1.0) => {
                Err(GrowableConfigError::InvalidTighteningRatio(ratio))
            }
            _ => Ok(()),
        }
    }
}

/// Settings shared by every level, and the growth rules.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Growth {
    pub(crate) target: f64,
    pub(crate) growth_factor: usize,
    pub(crate) tightening: Tightening,
    pub(crate) max_capacity: Option<usize>,
    pub(crate) max_levels: Option<usize>,
    pub(crate) bucket_size: usize,
    pub(crate) eviction_limit: usize,
    pub(crate) seed: u64,
    pub(crate) hash_function: HashFunction,
}

impl Growth {
    /// The builder of level `index` with `capacity` items, given the rates of the levels before it:
    /// its share of the budget is `fraction(index) x (target - sum of their rates)`.
    pub(super) fn level_builder(&self, index: usize, capacity: usize, used: f64) -> Builder {
        let share = self.tightening.fraction(index) * (self.target - used) * SHARE_SAFETY;
        Builder::new()
            .capacity(capacity)
            .bucket_size(self.bucket_size)
            .eviction_limit(self.eviction_limit)
            .seed(self.seed)
            .hash_function(self.hash_function)
            .false_positive_rate(share)
    }

    /// The builder of the level that follows `levels` (oldest first, never empty): `growth factor`
    /// times the newest level's capacity, cut to the room a maximum capacity leaves, with its share
    /// of the budget the levels left; or [`InsertError::Full`] if the maximum forbids one.
    pub(super) fn next_level_builder(&self, levels: &[CuckooFilter]) -> Result<Builder, InsertError> {
        let index = levels.len();
        if index >= MAX_LEVELS || self.max_levels.is_some_and(|max| index >= max) {
            return Err(InsertError::Full);
        }
        let newest = levels[index - 1].capacity();
        let mut capacity = newest.saturating_mul(self.growth_factor);
        if let Some(max) = self.max_capacity {
            let room = max.saturating_sub(levels.iter().map(CuckooFilter::capacity).sum());
            if room == 0 {
                return Err(InsertError::Full);
            }
            capacity = capacity.min(room);
        }
        let used: f64 = levels.iter().map(CuckooFilter::false_positive_rate).sum();
        if used >= self.target {
            return Err(InsertError::Full);
        }
        Ok(self.level_builder(index, capacity, used))
    }
}
