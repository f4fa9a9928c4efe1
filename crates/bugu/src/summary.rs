//! [`Summary`]: what a filter of any kind holds and promises, in fields that mean the same for
//! every kind, so that every front end reports them under one set of names.

use crate::concurrent::ConcurrentFilter;
use crate::expanding::ExpandingFilterIn;
use crate::filter::CuckooFilterIn;
use crate::growable::GrowableFilter;
use crate::persist::FilterKind;

/// Sizes, occupancy and false-positive rates of a filter, from `summary()` on every filter type
/// and on [`AnyFilterIn`](crate::AnyFilterIn).
///
/// Two rates are kept apart. [`target_false_positive_rate`](Self::target_false_positive_rate)
/// is what a growing filter was configured to stay under at every size; a fixed filter has
/// none. [`false_positive_rate_bound`](Self::false_positive_rate_bound) is the bound that holds
/// for the filter as it is: a fixed filter's at full occupancy, a chain's as the sum of its
/// levels', a filter in one table's from the entries it holds; always below the target.
///
/// ```
/// use bugu::{CuckooFilter, FilterMut, GrowableFilter};
///
/// let mut fixed = CuckooFilter::builder().capacity(1_000).false_positive_rate(0.01).build()?;
/// fixed.insert("a")?;
/// let summary = fixed.summary();
/// assert_eq!((summary.items, summary.levels, summary.target_false_positive_rate), (1, 1, None));
/// assert!(summary.false_positive_rate_bound <= 0.01);
///
/// let grown = GrowableFilter::builder().initial_capacity(100).false_positive_rate(0.01).build()?;
/// let summary = grown.summary();
/// assert_eq!(summary.target_false_positive_rate, Some(0.01));
/// assert!(summary.false_positive_rate_bound < 0.01);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Summary {
    /// The kind of file the filter is saved as (a concurrent filter saves a fixed one's).
    pub kind: FilterKind,
    /// Items stored (inserts minus removals).
    pub items: usize,
    /// Items the filter is sized for now: a fixed filter's capacity, the sum of a chain's
    /// levels' (each takes items past it until its buckets are full), or where a filter in one
    /// table next splits.
    pub capacity: usize,
    /// The most items a growing filter takes, if it has a maximum; `None` for a fixed filter
    /// (see [`capacity`](Self::capacity)) and for a growing one without a maximum.
    pub max_capacity: Option<u64>,
    /// Tables: a chain's levels, 1 for every other kind.
    pub levels: usize,
    /// Buckets, over all tables.
    pub buckets: usize,
    /// Slots per bucket.
    pub bucket_size: usize,
    /// Fingerprint width in bits (a chain's newest, widest level).
    pub fingerprint_bits: u32,
    /// Stored entries over slots, over all tables.
    pub load_factor: f64,
    /// Bits of memory per stored item (per one item when empty).
    pub bits_per_item: f64,
    /// Bytes of memory the tables take; for a view, the bytes of the table it reads in place.
    pub memory_bytes: usize,
    /// The rate a growing filter was configured to stay under at every size; `None` for a
    /// fixed filter.
    pub target_false_positive_rate: Option<f64>,
    /// The bound on the false-positive rate that holds for the filter as it is (see the type's
    /// docs).
    pub false_positive_rate_bound: f64,
    /// The rate expected at the current load: at most the bound.
    pub expected_false_positive_rate: f64,
}

/// `memory_bytes` in bits per stored item, counting an empty filter as holding one.
fn bits_per_item(memory_bytes: usize, items: usize) -> f64 {
    memory_bytes as f64 * 8.0 / items.max(1) as f64
}

/// The summary of one fixed table, from the getters the owned, viewed and concurrent filters
/// share.
macro_rules! fixed_summary {
    ($filter:expr) => {{
        let filter = $filter;
        Summary {
            kind: FilterKind::Cuckoo,
            items: filter.len(),
            capacity: filter.capacity(),
            max_capacity: None,
            levels: 1,
            buckets: filter.bucket_count(),
            bucket_size: filter.bucket_size(),
            fingerprint_bits: filter.fingerprint_bits(),
            load_factor: filter.load_factor(),
            bits_per_item: bits_per_item(filter.memory_bytes(), filter.len()),
            memory_bytes: filter.memory_bytes(),
            target_false_positive_rate: None,
            false_positive_rate_bound: filter.false_positive_rate(),
            expected_false_positive_rate: filter.expected_false_positive_rate(),
        }
    }};
}

impl<S: AsRef<[u8]>> CuckooFilterIn<S> {
    /// Sizes, occupancy and rates ([`Summary`]), in constant time.
    pub fn summary(&self) -> Summary {
        fixed_summary!(self)
    }
}

impl ConcurrentFilter {
    /// Sizes, occupancy and rates ([`Summary`]), in constant time; the item count is exact when
    /// no write is in progress.
    ///
    /// ```
    /// let filter = bugu::ConcurrentFilter::new(100)?;
    /// filter.insert("a")?;
    /// assert_eq!(filter.summary().items, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn summary(&self) -> Summary {
        fixed_summary!(self)
    }
}

impl GrowableFilter {
    /// Sizes, occupancy and rates over all levels ([`Summary`]), in time linear in the levels.
    pub fn summary(&self) -> Summary {
        let levels = self.levels();
        let slots: usize = levels.iter().map(|level| level.bucket_count() * level.bucket_size()).sum();
        Summary {
            kind: FilterKind::Growable,
            items: self.len(),
            capacity: self.capacity(),
            max_capacity: self.max_capacity().map(|max| max as u64),
            levels: levels.len(),
            buckets: levels.iter().map(|level| level.bucket_count()).sum(),
            bucket_size: self.bucket_size(),
            fingerprint_bits: levels.last().map_or(0, |level| level.fingerprint_bits()),
            load_factor: self.len() as f64 / slots.max(1) as f64,
            bits_per_item: bits_per_item(self.memory_bytes(), self.len()),
            memory_bytes: self.memory_bytes(),
            target_false_positive_rate: Some(self.target_false_positive_rate()),
            false_positive_rate_bound: self.false_positive_rate(),
            expected_false_positive_rate: self.expected_false_positive_rate(),
        }
    }
}

impl<S: AsRef<[u8]>> ExpandingFilterIn<S> {
    /// Sizes, occupancy and rates ([`Summary`]), in constant time ([`stats`](Self::stats)
    /// walks the table). Its entries bound its rate, so the expected rate is that bound.
    pub fn summary(&self) -> Summary {
        let memory_bytes = self.table_bytes();
        let bound = self.false_positive_rate_bound();
        Summary {
            kind: FilterKind::Expanding,
            items: self.len(),
            capacity: self.capacity(),
            max_capacity: Some(self.max_items()),
            levels: 1,
            buckets: self.bucket_count(),
            bucket_size: Self::BUCKET_SIZE,
            fingerprint_bits: self.fingerprint_bits(),
            load_factor: self.load_factor(),
            bits_per_item: bits_per_item(memory_bytes, self.len()),
            memory_bytes,
            target_false_positive_rate: Some(self.target_false_positive_rate()),
            false_positive_rate_bound: bound,
            expected_false_positive_rate: bound,
        }
    }
}
