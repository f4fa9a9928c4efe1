//! How an [`ExpandingFilter`](super::ExpandingFilter) is configured: the builder, its errors, and
//! the choice of fingerprint and tail widths from the target rate and the declared maximum.

use thiserror::Error;

use super::table::{MAX_FINGERPRINT_BITS, MAX_TAIL_BITS, SLOTS, Widths};

/// The load the table is held at, in percent of the slots: a bucket splits whenever entries
/// pass it.
pub(super) const LOAD_PERCENT: usize = 80;

/// [`LOAD_PERCENT`] as a share of the slots.
pub(super) const MAX_LOAD: f64 = LOAD_PERCENT as f64 / 100.0;

/// The address bits a tail keeps when the target leaves room: entries stored now become twins
/// only after this many doublings, so twins stay a small share of the entries.
const PREFERRED_TAIL_BITS: u32 = 8;

/// The default declared maximum: 2^32 items.
pub const DEFAULT_MAX_ITEMS: u64 = 1 << 32;

/// An expanding filter configuration that cannot be built.
///
/// ```
/// use bugu::expanding::{ExpandingConfigError, ExpandingFilter};
/// let err = ExpandingFilter::builder().false_positive_rate(2.0).build().unwrap_err();
/// assert_eq!(err, ExpandingConfigError::InvalidRate(2.0));
/// ```
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ExpandingConfigError {
    /// The target rate was not strictly between 0 and 1.
    #[error("false-positive rate must be strictly between 0 and 1, got {0}")]
    InvalidRate(f64),
    /// The initial capacity was 0.
    #[error("initial capacity must be at least 1")]
    ZeroCapacity,
    /// The declared maximum was below the initial capacity.
    #[error("maximum {max} is below the initial capacity {initial}")]
    MaxBelowInitial {
        /// The declared maximum.
        max: u64,
        /// The initial capacity.
        initial: usize,
    },
    /// The initial table could not be allocated.
    #[error("out of memory: could not allocate {bytes} bytes for the initial table")]
    OutOfMemory {
        /// The bytes asked for.
        bytes: usize,
    },
    /// The target and the maximum together need entries wider than a bucket holds.
    #[error(
        "a rate of {rate} up to {max} items needs {bits}-bit entries; at most 30 fit: raise the \
         rate or lower the maximum"
    )]
    TooWide {
        /// The target rate.
        rate: f64,
        /// The declared maximum.
        max: u64,
        /// The entry width it needs.
        bits: u32,
    },
}

/// Builds an [`ExpandingFilter`](super::ExpandingFilter).
///
/// ```
/// use bugu::expanding::ExpandingFilter;
/// let filter = ExpandingFilter::builder()
///     .initial_capacity(1000)
///     .false_positive_rate(0.001)
///     .max_items(100_000_000)
///     .build()?;
/// assert_eq!(filter.stats().fingerprint_bits, 9);
/// # Ok::<(), bugu::expanding::ExpandingConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ExpandingBuilder {
    pub(super) initial_capacity: usize,
    pub(super) rate: f64,
    pub(super) max_items: u64,
    pub(super) seed: u64,
}

impl Default for ExpandingBuilder {
    fn default() -> Self {
        ExpandingBuilder {
            initial_capacity: crate::DEFAULT_INITIAL_CAPACITY,
            rate: crate::DEFAULT_TARGET_FALSE_POSITIVE_RATE,
            max_items: DEFAULT_MAX_ITEMS,
            seed: crate::DEFAULT_SEED,
        }
    }
}

impl ExpandingBuilder {
    /// Items the table is sized for at first (default 1,000).
    pub fn initial_capacity(mut self, items: usize) -> Self {
        self.initial_capacity = items;
        self
    }

    /// The false-positive rate the filter stays under at every size (default 0.001).
    pub fn false_positive_rate(mut self, rate: f64) -> Self {
        self.rate = rate;
        self
    }

    /// The most items the filter is declared to grow to (default 2^32): with the rate, it fixes
    /// the widths of fingerprints and tails. Past it, inserts may fail with
    /// [`InsertError::RateBound`](crate::InsertError::RateBound).
    pub fn max_items(mut self, items: u64) -> Self {
        self.max_items = items;
        self
    }

    /// The hash seed (default [`DEFAULT_SEED`](crate::DEFAULT_SEED)).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Builds the filter.
    pub fn build(&self) -> Result<super::ExpandingFilter, ExpandingConfigError> {
        super::ExpandingFilter::from_builder(self)
    }

    /// The widths the configuration needs, and the initial table: `2^m` buckets (at least 2),
    /// the first `split` of them split already, so that the table starts with the buckets the
    /// initial capacity needs (a power of two would waste up to half of them).
    pub(super) fn plan(&self) -> Result<(Widths, u32, usize), ExpandingConfigError> {
        crate::config::check_false_positive_rate(self.rate)
            .map_err(|_| ExpandingConfigError::InvalidRate(self.rate))?;
        if self.initial_capacity == 0 {
            return Err(ExpandingConfigError::ZeroCapacity);
        }
        if self.max_items < self.initial_capacity as u64 {
            return Err(ExpandingConfigError::MaxBelowInitial {
                max: self.max_items,
                initial: self.initial_capacity,
            });
        }
        let per_slot = SLOTS as f64 * MAX_LOAD;
        let buckets = ((self.initial_capacity as f64 / per_slot).ceil() as usize).max(2);
        let base_bits = buckets.ilog2();
        let doublings = (self.max_items as f64 / (buckets as f64 * per_slot)).log2().ceil().max(0.0);
        // The bound after `d` doublings is about 8 x load x (d + 1) x 2^-(f + t): each doubling adds
        // 4 x load x n0 entries of weight 2^-(level + t), and the bound is 2 W / (n0 2^f).
        let needed = (8.0 * MAX_LOAD * (doublings + 1.0) / self.rate).log2().ceil().max(2.0) as u32;
        // Bits past the widest fingerprint go to the tail, which serves the bound as well.
        let tail = PREFERRED_TAIL_BITS.min(needed / 2).max(needed.saturating_sub(MAX_FINGERPRINT_BITS));
        let widths = Widths { fingerprint: needed - tail, tail };
        // The hash's 64 bits hold the fingerprint, the base bucket's `m` bits, and the address
        // bits of every level up to the maximum's and a tail past it.
        let address_bits = u64::from(needed + base_bits + 2) + doublings as u64;
        if tail > MAX_TAIL_BITS || address_bits > 64 {
            return Err(ExpandingConfigError::TooWide {
                rate: self.rate,
                max: self.max_items,
                bits: widths.entry(),
            });
        }
        Ok((widths, base_bits, buckets - (1 << base_bits)))
    }
}
