//! The filter types behind the Python classes, seen through one trait: what the library gives
//! every type (queries through `Filter`, bytes and files through `Persist`, a `Summary`) is used
//! as it is, and the trait holds only what differs per class.
//!
//! The growable type Python calls `GrowableFilter` is named here once ([`Growable`]), so that
//! switching it to another implementation changes this file alone.

use std::io;

use bugu::persist::FilterKind;
use bugu::{ConcurrentFilter, CuckooFilter, ExpandingFilter, Filter, Persist, PersistError};
use pyo3::exceptions::PyMemoryError;
use pyo3::{PyErr, PyResult};

use crate::errors::{CorruptFilterError, config_error, growable_config_error, persist_error};

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

/// A filter type the Python classes wrap.
pub(crate) trait Backend: Filter + Persist + Send + Sync {
    /// The Python class's name, for messages.
    const NAME: &'static str;
    /// An independent copy.
    fn duplicate(&self) -> PyResult<Self>;
    /// Removes every item; the configuration stays.
    fn make_empty(&mut self) -> PyResult<()>;
}

/// The backends that own their tables, which copy and clear themselves.
macro_rules! owned_backend {
    ($($filter:ty => $name:literal),* $(,)?) => {$(
        impl Backend for $filter {
            const NAME: &'static str = $name;

            fn duplicate(&self) -> PyResult<Self> {
                Ok(self.clone())
            }

            fn make_empty(&mut self) -> PyResult<()> {
                self.clear();
                Ok(())
            }
        }
    )*};
}

owned_backend!(CuckooFilter => "CuckooFilter", Growable => "GrowableFilter", ExpandingFilter => "ExpandingFilter");

/// A concurrent filter's table is shared memory without `Clone` or `clear`: it is copied and
/// emptied through a plain filter taken at one moment.
impl Backend for ConcurrentFilter {
    const NAME: &'static str = "ConcurrentFilter";

    fn duplicate(&self) -> PyResult<Self> {
        let snapshot = self.to_filter().map_err(config_error)?;
        ConcurrentFilter::from_filter(&snapshot).map_err(config_error)
    }

    fn make_empty(&mut self) -> PyResult<()> {
        let mut empty = self.to_filter().map_err(config_error)?;
        empty.clear();
        *self = ConcurrentFilter::from_filter(&empty).map_err(config_error)?;
        Ok(())
    }
}

/// A writer's error as Python's: `MemoryError` for memory that could not be allocated, `OSError`
/// for the rest.
pub(crate) fn write_error(error: io::Error) -> PyErr {
    match error.kind() {
        io::ErrorKind::OutOfMemory => PyMemoryError::new_err(error.to_string()),
        _ => error.into(),
    }
}

/// A reader's error, naming the class to use when the bytes hold another kind of filter.
pub(crate) fn read_error(error: PersistError) -> PyErr {
    let class = match error {
        PersistError::WrongKind { found: FilterKind::Cuckoo, .. } => "CuckooFilter",
        PersistError::WrongKind { found: FilterKind::Growable, .. } => "GrowableFilter",
        PersistError::WrongKind { found: FilterKind::Expanding, .. } => "ExpandingFilter",
        _ => return persist_error(error),
    };
    CorruptFilterError::new_err(format!("{error} (read it with bugu.{class})"))
}
