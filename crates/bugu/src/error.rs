//! The errors of this crate: each carries the offending value and reads as a sentence.
//!
//! Every other module may report these, so this one imports none of them: a message states its
//! bounds in words (the configuration's tests pin them to its constants).

use thiserror::Error;

/// A filter configuration that cannot be built.
///
/// ```
/// use bugu::{CuckooFilter, ConfigError};
///
/// let err = CuckooFilter::builder().capacity(0).build().unwrap_err();
/// assert_eq!(err, ConfigError::ZeroCapacity);
/// assert_eq!(err.to_string(), "capacity must be at least 1 item");
/// ```
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The capacity was 0 (or never set).
    #[error("capacity must be at least 1 item")]
    ZeroCapacity,
    /// The capacity is so large that no bucket count for it can even be computed: its table would
    /// not fit in the address space.
    #[error("capacity {0} is too large: the table would not fit in memory")]
    CapacityTooLarge(usize),
    /// A table of this many buckets of this size and width would not fit in this machine's
    /// address space (an allocation holds at most `isize::MAX` bytes). Built filters report it when
    /// their capacity needs such a table; readers of the persistent format, inside
    /// [`InvalidParameter::Config`](crate::persist::InvalidParameter::Config), when the stored
    /// geometry describes one.
    ///
    /// ```
    /// # #[cfg(target_pointer_width = "64")] {
    /// use bugu::{CuckooFilter, ConfigError};
    ///
    /// let err = CuckooFilter::builder().capacity(usize::MAX / 4).fingerprint_bits(32).build().unwrap_err();
    /// assert!(matches!(err, ConfigError::TableTooLarge { bucket_size: 4, fingerprint_bits: 32, .. }));
    /// assert!(err.to_string().ends_with("buckets of 4 x 32 bits does not fit in memory"));
    /// # }
    /// ```
    #[error("a table of {buckets} buckets of {bucket_size} x {fingerprint_bits} bits does not fit in memory")]
    TableTooLarge {
        /// The bucket count.
        buckets: u64,
        /// Slots per bucket.
        bucket_size: usize,
        /// The fingerprint width.
        fingerprint_bits: u32,
    },
    /// The false-positive rate was not strictly between 0 and 1.
    #[error("false-positive rate must be strictly between 0 and 1, got {0}")]
    InvalidFalsePositiveRate(f64),
    /// The false-positive rate needs fingerprints wider than 32 bits.
    #[error(
        "false-positive rate {rate} needs fingerprints wider than 32 bits with {bucket_size} slots per bucket"
    )]
    FalsePositiveRateTooSmall {
        /// The requested rate.
        rate: f64,
        /// The configured bucket size.
        bucket_size: usize,
    },
    /// The fingerprint width was outside 4..=32 bits.
    #[error("fingerprint width must be between 4 and 32 bits, got {0}")]
    InvalidFingerprintBits(u32),
    /// The bucket size was not 2, 4 or 8.
    #[error("bucket size must be 2, 4 or 8 slots, got {0}")]
    InvalidBucketSize(usize),
    /// Semi-sorted buckets were asked for with a bucket size other than 4.
    #[error("semi-sorted buckets need a bucket size of 4, got {0}")]
    SemiSortedBucketSize(usize),
    /// The fingerprints are too narrow, or the buckets too small, for this many items: so many
    /// items would share bucket pairs that the chance of a fill failing before `capacity` items
    /// exceeds [`FIT_FAILURE_BOUND`](crate::FIT_FAILURE_BOUND). The error names a width and a
    /// bucket size that would hold them.
    ///
    /// ```
    /// use bugu::{CuckooFilter, ConfigError};
    ///
    /// let err = CuckooFilter::builder().capacity(1_000_000).fingerprint_bits(4).bucket_size(2).build();
    /// let Err(ConfigError::TooNarrow { wider_bits: Some(bits), .. }) = err else { panic!() };
    /// let wider = CuckooFilter::builder().capacity(1_000_000).fingerprint_bits(bits).bucket_size(2).build();
    /// assert!(wider.is_ok());
    /// ```
    #[error(
        "{fingerprint_bits}-bit fingerprints in buckets of {bucket_size} slots cannot reliably hold {capacity} items \
         (at most {limit}); {}",
        suggestion(*wider_bits, *larger_bucket_size)
    )]
    TooNarrow {
        /// The requested capacity.
        capacity: usize,
        /// The configured fingerprint width.
        fingerprint_bits: u32,
        /// The configured bucket size.
        bucket_size: usize,
        /// The largest capacity this width and bucket size accept.
        limit: usize,
        /// The narrowest width that holds `capacity` items at this bucket size, if any.
        wider_bits: Option<u32>,
        /// The smallest larger bucket size that holds them at this width, if any.
        larger_bucket_size: Option<usize>,
    },
    /// The eviction limit was outside 1..=[`MAX_EVICTION_LIMIT`](crate::MAX_EVICTION_LIMIT).
    #[error("eviction limit must be between 1 and 65535, got {0}")]
    InvalidEvictionLimit(usize),
    /// The configuration is valid but its table of `bytes` bytes could not be allocated (the
    /// allocator refused it; the process is not aborted).
    ///
    /// ```
    /// # #[cfg(target_pointer_width = "64")] {
    /// use bugu::{CuckooFilter, ConfigError};
    ///
    /// // About 2^58 bytes: a valid size, but more than any machine can map.
    /// let err = CuckooFilter::builder().capacity(1 << 57).build().unwrap_err();
    /// assert!(matches!(err, ConfigError::OutOfMemory { bytes } if bytes > 1 << 57));
    /// assert!(err.to_string().starts_with("out of memory: could not allocate"));
    /// # }
    /// ```
    #[error("out of memory: could not allocate {bytes} bytes for the table")]
    OutOfMemory {
        /// The size of the allocation that failed.
        bytes: usize,
    },
}

/// What to change, for [`ConfigError::TooNarrow`].
fn suggestion(wider_bits: Option<u32>, larger_bucket_size: Option<usize>) -> String {
    match (wider_bits, larger_bucket_size) {
        (Some(bits), Some(slots)) => format!("use fingerprint_bits({bits}) or bucket_size({slots})"),
        (Some(bits), None) => format!("use fingerprint_bits({bits})"),
        (None, Some(slots)) => format!("use bucket_size({slots})"),
        (None, None) => "use a smaller capacity".to_string(),
    }
}

/// An insert that could not be done. The filter is unchanged.
///
/// ```
/// use bugu::{CuckooFilter, FilterMut, InsertError};
///
/// let mut filter = CuckooFilter::builder().capacity(100).build()?;
/// // The same item can be stored at most 2 x bucket size times: its copies fill both its buckets.
/// for _ in 0..8 {
///     filter.insert("again")?;
/// }
/// assert_eq!(filter.insert("again"), Err(InsertError::CopyLimit { copies: 8 }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum InsertError {
    /// No room for the item within the eviction limit (for a
    /// [`GrowableFilter`](crate::GrowableFilter): a level was needed and its maximum size, or its
    /// fingerprint widths, allow none); nothing was changed.
    #[error("filter is full: no free slot within the eviction limit (nothing was changed)")]
    Full,
    /// Both of the item's buckets hold nothing but its fingerprint: one item can be stored at most
    /// 2 x bucket size times (copies of a lookalike, an item with the same fingerprint and
    /// buckets, count too). Nothing was changed; remove a copy first, or insert with
    /// [`insert_unique`](crate::FilterMut::insert_unique).
    ///
    /// A [`GrowableFilter`](crate::GrowableFilter) adds a level instead unless its newest level
    /// holds fewer items than its capacity; and it also answers this when copies of the item and
    /// of items sharing its buckets fill them there (`copies` then counts the item's matches,
    /// fewer than 2 x bucket size). An item never inserted meets this there only with a chance
    /// below 10^-6 times the newest level's rate at the default eviction limit (the
    /// [growable docs](crate::growable#multiset-semantics-and-limits) give the bound and what
    /// raises it).
    #[error(
        "no room for another copy: the item's two buckets are full and {copies} of their \
         fingerprints match it; a filter stores at most 2 x bucket size copies of one item \
         (nothing was changed)"
    )]
    CopyLimit {
        /// The copies its buckets hold (2 x bucket size; in a growable filter's newest level, the
        /// matching fingerprints there, at least 1).
        copies: usize,
    },
    /// A [`GrowableFilter`](crate::GrowableFilter) needed a new level and its table of `bytes`
    /// bytes could not be allocated; nothing was changed.
    ///
    /// ```
    /// let err = bugu::InsertError::OutOfMemory { bytes: 1 << 40 };
    /// assert!(err.to_string().starts_with("out of memory"));
    /// ```
    #[error("out of memory: could not allocate {bytes} bytes for a new level (nothing was changed)")]
    OutOfMemory {
        /// The size of the allocation that failed.
        bytes: usize,
    },
    /// An [`ExpandingFilter`](crate::ExpandingFilter) would pass its target false-positive rate
    /// by storing another item: it grew past the size its fingerprint and tail widths were
    /// chosen for (its declared maximum). Nothing was changed.
    #[error(
        "the filter's false-positive bound would pass its target: it is past the maximum size it \
         was built for (nothing was changed)"
    )]
    RateBound,
}

impl InsertError {
    /// Why an insert found no path of moves, given the `copies` of its fingerprint in its two
    /// buckets of `slots` slots: the multiset limit when they hold nothing else (no path can help,
    /// each copy's only other bucket being the other full one), else a full filter.
    pub(crate) fn no_path(copies: usize, slots: usize) -> Self {
        if copies == 2 * slots { InsertError::CopyLimit { copies } } else { InsertError::Full }
    }
}

/// Any error of building a filter from items: a bad configuration or an insert that failed.
///
/// ```
/// use bugu::{CuckooFilter, Error};
///
/// let err = CuckooFilter::builder().capacity(2).build_from_iter(0..1000u32).unwrap_err();
/// assert!(matches!(err, Error::Insert { .. }));
/// assert!(err.to_string().starts_with("insert failed after"));
/// ```
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration was invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// An insert failed after `inserted` items had been stored.
    #[error("insert failed after {inserted} items: {source}")]
    Insert {
        /// Items stored before the failure.
        inserted: usize,
        /// Why the insert failed.
        source: InsertError,
    },
}
