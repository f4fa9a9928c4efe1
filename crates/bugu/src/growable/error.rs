//! [`GrowableConfigError`]: what a growable filter configuration that cannot be built reports.
//! It has a module of its own, under the growth rules and the builder that both return it, so
//! that each of them imports only what lies below it.

use thiserror::Error;

use crate::error::ConfigError;

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
    /// The growth factor was outside [`GROWTH_FACTORS`](crate::GROWTH_FACTORS).
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
    /// The filter given to [`GrowableBuilder::build_from`](super::GrowableBuilder::build_from) holds more items than the maximum
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
    /// The filter given to [`GrowableBuilder::build_from`](super::GrowableBuilder::build_from) has a false-positive bound at or above
    /// the target: no budget is left for further levels.
    #[error("the filter's false-positive bound {bound} is not below the target {target}")]
    FilterAboveTarget {
        /// The filter's [`CuckooFilter::false_positive_rate`](crate::CuckooFilter::false_positive_rate).
        bound: f64,
        /// The target rate.
        target: f64,
    },
}
