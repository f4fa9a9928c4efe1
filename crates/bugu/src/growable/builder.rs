//! [`GrowableBuilder`]: the settings of a growable filter, validated when it is built, and the
//! ways to build one.

use crate::config::{self, DEFAULT_BUCKET_SIZE, DEFAULT_EVICTION_LIMIT, DEFAULT_SEED};
use crate::filter::CuckooFilter;
use crate::hash::HashFunction;
use crate::membership::Filter;

use super::error::GrowableConfigError;
use super::filter::GrowableFilter;
use super::policy::{
    DEFAULT_GROWTH_FACTOR, DEFAULT_INITIAL_CAPACITY, DEFAULT_TARGET_FALSE_POSITIVE_RATE, DEFAULT_TIGHTENING,
    Growth, Tightening, check_growth_factor,
};

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
    hash_function: HashFunction,
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
            hash_function: HashFunction::default(),
        }
    }
}

impl GrowableBuilder {
    /// A builder with the defaults: initial capacity 1,000, target rate 0.001, growth factor 2,
    /// [`DEFAULT_TIGHTENING`], no maximum, 4 slots per bucket, eviction limit 500, seed 0,
    /// [`HashFunction::Xxh3Mix8`].
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
    /// exceed it fails with [`InsertError::Full`](crate::InsertError::Full) and changes nothing.
    /// Default: none.
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

    /// The eviction limit of every level (see
    /// [`Builder::eviction_limit`](crate::Builder::eviction_limit); default 500).
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

    /// The hash function (default [`HashFunction::Xxh3Mix8`]), shared by every level (see
    /// [`Builder::hash_function`](crate::Builder::hash_function)).
    ///
    /// ```
    /// use bugu::{Filter, hash::HashFunction};
    /// let filter = bugu::GrowableFilter::builder().hash_function(HashFunction::Xxh3).build()?;
    /// assert_eq!(filter.hash_function(), HashFunction::Xxh3);
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn hash_function(mut self, function: HashFunction) -> Self {
        self.hash_function = function;
        self
    }

    /// The growth policy these settings describe, for a resolved target and the levels' bucket
    /// size, eviction limit and hashing.
    fn growth(
        &self,
        target: f64,
        (bucket_size, eviction_limit, (hash_function, seed)): (usize, usize, (HashFunction, u64)),
    ) -> Growth {
        Growth {
            target,
            growth_factor: self.growth_factor,
            tightening: self.tightening,
            max_capacity: self.max_capacity,
            max_levels: self.max_levels,
            bucket_size,
            eviction_limit,
            seed,
            hash_function,
        }
    }

    fn validate(&self, target: f64, initial: usize) -> Result<(), GrowableConfigError> {
        check_growth_factor(self.growth_factor)?;
        config::check_false_positive_rate(target)?;
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
        let growth =
            self.growth(target, (self.bucket_size, self.eviction_limit, (self.hash_function, self.seed)));
        let first = growth.level_builder(0, self.initial_capacity, 0.0).build()?;
        Ok(GrowableFilter::from_parts(vec![first], growth))
    }

    /// Builds a growable filter whose first level is `filter`, items and all.
    ///
    /// The bucket size, eviction limit, seed and hash function come from `filter` (the builder's
    /// are ignored), as does the first level's capacity. The filter's bound `r_0` takes the first
    /// part of the budget, and later levels share what is left, `p - r_0` (see the module docs):
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
        let hashing = (filter.hash_function(), filter.seed());
        let growth = self.growth(target, (filter.bucket_size(), filter.eviction_limit(), hashing));
        Ok(GrowableFilter::from_parts(vec![filter], growth))
    }
}

/// The ways to build a [`GrowableFilter`], beside the builder whose defaults they take.
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
}
