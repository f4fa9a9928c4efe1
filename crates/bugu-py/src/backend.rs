//! The filter types behind the Python classes, seen through one trait: what the classes need
//! beyond the library's `Filter` trait (sizes, statistics, bytes and files, copies).
//!
//! The growable type Python calls `GrowableFilter` is named here once ([`Growable`]), so that
//! switching it to another implementation changes this file alone.

use std::path::Path;

use bugu::persist::FilterKind;
use bugu::{ConcurrentFilter, CuckooFilter, ExpandingFilter, Filter, Persist, PersistError};
use pyo3::PyResult;

use crate::errors::{config_error, growable_config_error, persist_error};

/// The growable filter behind Python's `GrowableFilter`.
pub(crate) type Growable = bugu::GrowableFilter;

/// A new growable filter from the Python arguments.
pub(crate) fn new_growable(
    capacity: usize,
    false_positive_rate: f64,
    bucket_size: usize,
    seed: u64,
    max_capacity: Option<usize>,
) -> PyResult<Growable> {
    let builder = Growable::builder()
        .initial_capacity(capacity)
        .false_positive_rate(false_positive_rate)
        .bucket_size(bucket_size)
        .seed(seed);
    let builder = match max_capacity {
        Some(max) => builder.max_capacity(max),
        None => builder,
    };
    builder.build().map_err(growable_config_error)
}

/// What `stats()` reports.
pub(crate) struct Summary {
    pub(crate) items: usize,
    pub(crate) levels: usize,
    pub(crate) buckets: usize,
    pub(crate) bucket_size: usize,
    pub(crate) fingerprint_bits: u32,
    pub(crate) capacity: usize,
    pub(crate) load_factor: f64,
    pub(crate) bits_per_item: f64,
    pub(crate) memory_bytes: usize,
    /// The bound the configuration guarantees at full occupancy.
    pub(crate) false_positive_rate: f64,
    /// The rate expected at the current load.
    pub(crate) estimated_false_positive_rate: f64,
}

/// A filter type the Python classes wrap.
pub(crate) trait Backend: Filter + Send + Sync + Sized {
    /// The Python class's name, for messages.
    const NAME: &'static str;
    fn items(&self) -> usize;
    fn summary(&self) -> Summary;
    fn encoded(&self) -> PyResult<Vec<u8>>;
    fn decoded(bytes: &[u8]) -> PyResult<Self>;
    /// Saves atomically: the file is replaced whole or not at all.
    fn write_file(&self, path: &Path) -> PyResult<()>;
    fn read_file(path: &Path) -> PyResult<Self>;
    fn duplicate(&self) -> PyResult<Self>;
    /// An empty filter with the same configuration.
    fn emptied(&self) -> PyResult<Self>;
}

/// A new growable filter in one table from the Python arguments.
pub(crate) fn new_expanding(
    capacity: usize,
    false_positive_rate: f64,
    seed: u64,
    max_items: Option<u64>,
) -> PyResult<ExpandingFilter> {
    let builder = ExpandingFilter::builder()
        .initial_capacity(capacity)
        .false_positive_rate(false_positive_rate)
        .seed(seed);
    let builder = match max_items {
        Some(max) => builder.max_items(max),
        None => builder,
    };
    builder.build().map_err(crate::errors::expanding_config_error)
}

/// A reader's error, naming the class to use when the bytes hold another kind of filter.
fn read_error(error: PersistError) -> pyo3::PyErr {
    let class = match error {
        PersistError::WrongKind { found: FilterKind::Growable, .. } => "GrowableFilter",
        PersistError::WrongKind { found: FilterKind::Expanding, .. } => "ExpandingFilter",
        _ => return persist_error(error),
    };
    crate::errors::CorruptFilterError::new_err(format!("{error} (read it with bugu.{class})"))
}

/// The copying and persisting methods of a filter that owns its table and has `to_bytes`,
/// `from_bytes`, `save`, `load`, `clone` and `clear`; `$error` maps its reading errors.
macro_rules! owned_filter_methods {
    ($filter:ty, $error:expr) => {
        fn encoded(&self) -> PyResult<Vec<u8>> {
            Ok(<$filter>::to_bytes(self))
        }

        fn decoded(bytes: &[u8]) -> PyResult<Self> {
            <$filter>::from_bytes(bytes).map_err($error)
        }

        fn write_file(&self, path: &Path) -> PyResult<()> {
            Ok(<$filter>::save(self, path)?)
        }

        fn read_file(path: &Path) -> PyResult<Self> {
            <$filter>::load(path).map_err($error)
        }

        fn duplicate(&self) -> PyResult<Self> {
            Ok(self.clone())
        }

        fn emptied(&self) -> PyResult<Self> {
            let mut empty = self.clone();
            empty.clear();
            Ok(empty)
        }
    };
}

/// The summary of a one-table filter (both types have the same getters).
macro_rules! table_summary {
    ($filter:expr) => {{
        let filter = $filter;
        Summary {
            items: filter.len(),
            levels: 1,
            buckets: filter.bucket_count(),
            bucket_size: filter.bucket_size(),
            fingerprint_bits: filter.fingerprint_bits(),
            capacity: filter.capacity(),
            load_factor: filter.load_factor(),
            bits_per_item: filter.bits_per_item(),
            memory_bytes: filter.memory_bytes(),
            false_positive_rate: filter.false_positive_rate(),
            estimated_false_positive_rate: filter.expected_false_positive_rate(),
        }
    }};
}

impl Backend for CuckooFilter {
    const NAME: &'static str = "CuckooFilter";

    fn items(&self) -> usize {
        self.len()
    }

    fn summary(&self) -> Summary {
        table_summary!(self)
    }

    owned_filter_methods!(CuckooFilter, read_error);
}

impl Backend for ConcurrentFilter {
    const NAME: &'static str = "ConcurrentFilter";

    fn items(&self) -> usize {
        self.len()
    }

    fn summary(&self) -> Summary {
        table_summary!(self)
    }

    fn encoded(&self) -> PyResult<Vec<u8>> {
        Ok(self.to_filter().map_err(config_error)?.to_bytes())
    }

    fn decoded(bytes: &[u8]) -> PyResult<Self> {
        let filter = CuckooFilter::from_bytes(bytes).map_err(read_error)?;
        ConcurrentFilter::from_filter(&filter).map_err(config_error)
    }

    fn write_file(&self, path: &Path) -> PyResult<()> {
        Ok(ConcurrentFilter::save(self, path)?)
    }

    fn read_file(path: &Path) -> PyResult<Self> {
        ConcurrentFilter::load(path).map_err(read_error)
    }

    fn duplicate(&self) -> PyResult<Self> {
        let snapshot = self.to_filter().map_err(config_error)?;
        ConcurrentFilter::from_filter(&snapshot).map_err(config_error)
    }

    fn emptied(&self) -> PyResult<Self> {
        let mut empty = self.to_filter().map_err(config_error)?;
        empty.clear();
        ConcurrentFilter::from_filter(&empty).map_err(config_error)
    }
}

impl Backend for Growable {
    const NAME: &'static str = "GrowableFilter";

    fn items(&self) -> usize {
        self.len()
    }

    fn summary(&self) -> Summary {
        let levels = self.levels();
        let buckets = levels.iter().map(CuckooFilter::bucket_count).sum::<usize>();
        let slots = levels.iter().map(|level| level.bucket_count() * level.bucket_size()).sum::<usize>();
        Summary {
            items: self.len(),
            levels: levels.len(),
            buckets,
            bucket_size: self.bucket_size(),
            fingerprint_bits: newest_fingerprint_bits(self),
            capacity: self.capacity(),
            load_factor: self.len() as f64 / slots as f64,
            bits_per_item: self.bits_per_item(),
            memory_bytes: self.memory_bytes(),
            false_positive_rate: self.false_positive_rate(),
            estimated_false_positive_rate: self.expected_false_positive_rate(),
        }
    }

    owned_filter_methods!(Growable, read_error);
}

impl Backend for ExpandingFilter {
    const NAME: &'static str = "ExpandingFilter";

    fn items(&self) -> usize {
        self.len()
    }

    fn summary(&self) -> Summary {
        let stats = self.stats();
        Summary {
            items: stats.len,
            levels: 1,
            buckets: stats.buckets,
            bucket_size: stats.bucket_size,
            fingerprint_bits: stats.fingerprint_bits,
            capacity: self.capacity(),
            load_factor: stats.load_factor,
            bits_per_item: stats.bits_per_item,
            memory_bytes: stats.memory_bytes,
            false_positive_rate: stats.target_rate,
            estimated_false_positive_rate: stats.rate_bound,
        }
    }

    owned_filter_methods!(ExpandingFilter, read_error);
}

/// The fingerprint width of a growable filter's newest level (the widest: levels tighten).
pub(crate) fn newest_fingerprint_bits(filter: &Growable) -> u32 {
    filter.levels().last().map_or(0, CuckooFilter::fingerprint_bits)
}
