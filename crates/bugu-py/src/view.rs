//! `bugu.open(path)`: a filter file mapped read-only. A fixed-size filter is queried in place
//! through the library's zero-copy view (only the pages a lookup touches are read); a growable
//! filter (a chain of tables, or one table) is read into memory.

use std::fs::File;
use std::path::PathBuf;

use bugu::persist::FilterKind;
use bugu::{CuckooView, ExpandingFilter, Filter, Persist};
use memmap2::Mmap;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::backend::{Backend, Growable, Summary};
use crate::classes::stats_dict;
use crate::errors::{CorruptFilterError, persist_error, shield};
use crate::keys::{Keys, with_key};

/// A filter file opened read-only by `bugu.open`: queries, sizes and statistics, no updates.
#[pyclass(module = "bugu", name = "FilterView", frozen)]
pub(crate) struct FilterView {
    map: Mmap,
    /// A growable filter, read from the map; `None` for a fixed-size one, viewed in the map.
    growable: Option<Loaded>,
}

/// A growable filter read from a file.
enum Loaded {
    Chain(Growable),
    OneTable(Box<ExpandingFilter>),
}

/// The filter a view queries: built on the stack for one call, so its size does not matter.
#[allow(clippy::large_enum_variant)]
enum Query<'a> {
    Fixed(CuckooView<'a>),
    Chain(&'a Growable),
    OneTable(&'a ExpandingFilter),
}

/// Runs the same code on any filter of a [`Query`].
macro_rules! on_query {
    ($query:expr, $filter:ident => $body:expr) => {
        match $query {
            Query::Fixed($filter) => $body,
            Query::Chain($filter) => $body,
            Query::OneTable($filter) => $body,
        }
    };
}

impl FilterView {
    fn query(&self) -> PyResult<Query<'_>> {
        match &self.growable {
            Some(Loaded::Chain(filter)) => Ok(Query::Chain(filter)),
            Some(Loaded::OneTable(filter)) => Ok(Query::OneTable(filter)),
            // Checked whole when opened; the map is private and read-only.
            None => CuckooView::from_trusted_bytes(&self.map).map(Query::Fixed).map_err(persist_error),
        }
    }

    fn summary(&self) -> PyResult<Summary> {
        Ok(match self.query()? {
            Query::Fixed(view) => Summary {
                items: view.len(),
                levels: 1,
                buckets: view.bucket_count(),
                bucket_size: view.bucket_size(),
                fingerprint_bits: view.fingerprint_bits(),
                capacity: view.capacity(),
                load_factor: view.load_factor(),
                bits_per_item: view.bits_per_item(),
                memory_bytes: view.memory_bytes(),
                false_positive_rate: view.false_positive_rate(),
                estimated_false_positive_rate: view.expected_false_positive_rate(),
            },
            Query::Chain(filter) => filter.summary(),
            Query::OneTable(filter) => filter.summary(),
        })
    }
}

/// Opens the filter file at `path` read-only, memory-mapped; raises `CorruptFilterError` if it
/// is not a valid filter file.
#[pyfunction]
pub(crate) fn open(py: Python<'_>, path: PathBuf) -> PyResult<FilterView> {
    shield(|| {
        py.detach(|| {
            let file = File::open(&path)?;
            if file.metadata()?.is_dir() {
                return Err(std::io::Error::from(std::io::ErrorKind::IsADirectory).into());
            }
            // SAFETY: the map is read-only and private to this object. bugu never writes a filter
            // file in place (a save renames a new file over the name, leaving this map on the old
            // one); another program truncating or rewriting the file while it is mapped is outside
            // what a mapping can guard against, as with the `bugu` command's maps.
            let map = unsafe { Mmap::map(&file) }?;
            let growable = match FilterKind::detect(&map).map_err(persist_error)? {
                FilterKind::Cuckoo => {
                    CuckooView::from_bytes(&map).map_err(persist_error)?;
                    None
                }
                FilterKind::Growable => {
                    Some(Loaded::Chain(Growable::from_bytes(&map).map_err(persist_error)?))
                }
                FilterKind::Expanding => Some(Loaded::OneTable(Box::new(
                    ExpandingFilter::from_bytes(&map).map_err(persist_error)?,
                ))),
                other => {
                    return Err(CorruptFilterError::new_err(format!(
                        "a {other} filter, which bugu.open cannot read"
                    )));
                }
            };
            Ok(FilterView { map, growable })
        })
    })
}

#[pymethods]
impl FilterView {
    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        shield(|| {
            let query = self.query()?;
            with_key(key, |bytes| on_query!(&query, filter => filter.contains_bytes(bytes)))
        })
    }

    /// How many copies of `key` the filter holds.
    fn count(&self, key: &Bound<'_, PyAny>) -> PyResult<usize> {
        shield(|| {
            let query = self.query()?;
            with_key(key, |bytes| on_query!(&query, filter => filter.count_bytes(bytes)))
        })
    }

    /// One bool per key of `keys`, through the batched lookup and without holding the GIL.
    fn contains_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        shield(|| {
            let keys = Keys::collect(keys)?;
            let query = self.query()?;
            Ok(py.detach(|| {
                on_query!(&query, filter => filter.contains_hash_batch(&keys.hashes(|bytes| filter.hash_of_bytes(bytes))))
            }))
        })
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.summary()?.items)
    }

    fn __bool__(&self) -> PyResult<bool> {
        Ok(self.summary()?.items > 0)
    }

    /// The statistics `CuckooFilter.stats()` gives.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        shield(|| stats_dict(py, &self.summary()?))
    }

    #[getter]
    fn capacity(&self) -> PyResult<usize> {
        Ok(self.summary()?.capacity)
    }

    #[getter]
    fn fingerprint_bits(&self) -> PyResult<u32> {
        Ok(self.summary()?.fingerprint_bits)
    }

    #[getter]
    fn bucket_size(&self) -> PyResult<usize> {
        Ok(self.summary()?.bucket_size)
    }

    #[getter]
    fn false_positive_rate(&self) -> PyResult<f64> {
        Ok(self.summary()?.false_positive_rate)
    }

    /// Bytes of the table (or tables); the view maps them rather than holding a copy.
    #[getter]
    fn memory_bytes(&self) -> PyResult<usize> {
        Ok(self.summary()?.memory_bytes)
    }

    #[getter]
    fn seed(&self) -> PyResult<u64> {
        Ok(on_query!(&self.query()?, filter => filter.seed()))
    }

    /// Whether the file holds a growable filter (a chain of tables, or one table).
    #[getter]
    fn growable(&self) -> bool {
        self.growable.is_some()
    }

    /// The file's bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.map)
    }

    fn __repr__(&self) -> PyResult<String> {
        let summary = self.summary()?;
        Ok(format!(
            "bugu.FilterView(len={}, capacity={}, growable={})",
            summary.items,
            summary.capacity,
            if self.growable.is_some() { "True" } else { "False" }
        ))
    }
}
