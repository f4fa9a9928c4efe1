//! [`FilterKind`]: which filter a persisted file holds, by its header's code. A module of its own,
//! below the errors that name kinds and the header code that reads them.

use std::fmt;

/// Which filter type a persisted file holds (the header's `kind` field).
///
/// A [`ConcurrentFilter`](crate::ConcurrentFilter) has no kind of its own: it saves the bytes of
/// the equivalent cuckoo filter, so that every reader (the `bugu` command, the Redis module, a
/// [`CuckooView`](crate::CuckooView)) takes them. Codes other than 1, 2 and 3 are refused as
/// unknown.
///
/// ```
/// # use bugu::Persist;
/// use bugu::persist::FilterKind;
///
/// let bytes = bugu::CuckooFilter::new(10)?.to_bytes();
/// assert_eq!(FilterKind::detect(&bytes)?, FilterKind::Cuckoo);
/// assert_eq!(FilterKind::Cuckoo.code(), 1);
/// assert_eq!(FilterKind::from_code(1), Some(FilterKind::Cuckoo));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FilterKind {
    /// A [`CuckooFilter`](crate::CuckooFilter): one section.
    Cuckoo,
    /// A [`GrowableFilter`](crate::GrowableFilter): its growth settings, then one cuckoo filter
    /// section per level.
    Growable,
    /// An [`ExpandingFilter`](crate::ExpandingFilter): its fields, its stash and its buckets.
    Expanding,
}

impl FilterKind {
    /// The kind's code in the header.
    ///
    /// ```
    /// assert_eq!(bugu::persist::FilterKind::Growable.code(), 2);
    /// ```
    pub const fn code(self) -> u16 {
        match self {
            FilterKind::Cuckoo => 1,
            FilterKind::Growable => 2,
            FilterKind::Expanding => 3,
        }
    }

    /// The kind with this code, if any.
    ///
    /// ```
    /// assert_eq!(bugu::persist::FilterKind::from_code(0), None);
    /// ```
    pub const fn from_code(code: u16) -> Option<Self> {
        match code {
            1 => Some(FilterKind::Cuckoo),
            2 => Some(FilterKind::Growable),
            3 => Some(FilterKind::Expanding),
            _ => None,
        }
    }
}

impl fmt::Display for FilterKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FilterKind::Cuckoo => "cuckoo",
            FilterKind::Growable => "growable",
            FilterKind::Expanding => "expanding",
        })
    }
}
