//! `bugu.open(path)`: a filter file mapped read-only, held with the library's [`AnyView`] of it.
//! The view is validated once, when the file is opened, and every query goes straight to it: a
//! fixed-size filter and a filter in one table are read in place (only the pages a lookup touches
//! are read), a chain of tables is read into memory (its levels are separate tables).

use std::fs::File;
use std::path::PathBuf;

use bugu::persist::FilterKind;
use bugu::{AnyView, Filter, Summary};
use memmap2::Mmap;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::classes::stats_dict;
use crate::errors::{persist_error, shield};
use crate::keys::{Keys, with_key};

self_cell::self_cell!(
    /// The map and the view that borrows it, in one value: a Python object cannot hold a borrow
    /// of its own field, and the map must outlive the view. The view is reached through
    /// `with_dependent` (the library's view is invariant over its storage, so it cannot be lent out
    /// with a shorter lifetime).
    struct MappedFilter {
        owner: Mmap,
        #[not_covariant]
        dependent: AnyView,
    }
);

/// A filter file opened read-only by `bugu.open`: queries, sizes and statistics, no updates.
#[pyclass(module = "bugu", name = "FilterView", frozen)]
pub(crate) struct FilterView {
    file: MappedFilter,
}

impl FilterView {
    /// Runs `work` on the view.
    fn with_view<R>(&self, work: impl FnOnce(&AnyView<'_>) -> R) -> R {
        self.file.with_dependent(|_, view| work(view))
    }

    fn summary(&self) -> Summary {
        self.with_view(|view| view.summary())
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
            let file = MappedFilter::try_new(map, |map| AnyView::from_bytes(map)).map_err(persist_error)?;
            Ok(FilterView { file })
        })
    })
}

#[pymethods]
impl FilterView {
    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        shield(|| self.with_view(|view| with_key(key, |bytes| view.contains_bytes(bytes))))
    }

    /// How many copies of `key` the filter holds.
    fn count(&self, key: &Bound<'_, PyAny>) -> PyResult<usize> {
        shield(|| self.with_view(|view| with_key(key, |bytes| view.count_bytes(bytes))))
    }

    /// One bool per key of `keys`, through the batched lookup and without holding the GIL.
    fn contains_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        shield(|| {
            let keys = Keys::collect(keys)?;
            Ok(self.with_view(|view| {
                py.detach(|| view.contains_hash_batch(&keys.hashes(|bytes| view.hash_of_bytes(bytes))))
            }))
        })
    }

    fn __len__(&self) -> usize {
        self.with_view(|view| view.len())
    }

    fn __bool__(&self) -> bool {
        self.with_view(|view| !view.is_empty())
    }

    /// The statistics `CuckooFilter.stats()` gives.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        shield(|| stats_dict(py, &self.summary()))
    }

    #[getter]
    fn capacity(&self) -> usize {
        self.summary().capacity
    }

    #[getter]
    fn fingerprint_bits(&self) -> u32 {
        self.summary().fingerprint_bits
    }

    #[getter]
    fn bucket_size(&self) -> usize {
        self.summary().bucket_size
    }

    #[getter]
    fn false_positive_rate_bound(&self) -> f64 {
        self.summary().false_positive_rate_bound
    }

    #[getter]
    fn target_false_positive_rate(&self) -> Option<f64> {
        self.summary().target_false_positive_rate
    }

    /// Bytes of the table (or tables): a fixed filter's and a one-table filter's are mapped, not
    /// copied; a chain's levels are read into memory.
    #[getter]
    fn memory_bytes(&self) -> usize {
        self.summary().memory_bytes
    }

    #[getter]
    fn seed(&self) -> u64 {
        self.with_view(|view| view.seed())
    }

    /// Whether the file holds a growable filter (a chain of tables, or one table).
    #[getter]
    fn growable(&self) -> bool {
        self.with_view(|view| view.kind()) != FilterKind::Cuckoo
    }

    /// The file's bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.file.borrow_owner())
    }

    fn __repr__(&self) -> String {
        let summary = self.summary();
        let growable = if self.growable() { "True" } else { "False" };
        format!("bugu.FilterView(len={}, capacity={}, growable={growable})", summary.items, summary.capacity)
    }
}
