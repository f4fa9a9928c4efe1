//! The four filter classes (`CuckooFilter`, `ConcurrentFilter`, `GrowableFilter`,
//! `ExpandingFilter`), written once ([`filter_class!`]): the `set` vocabulary, the batch calls
//! (keys copied out holding the interpreter's lock, the work done without it), statistics,
//! bytes, files and pickling.

use std::path::PathBuf;

use bugu::{ConcurrentFilter, CuckooFilter, Filter, FilterMut, Persist, Summary};
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyMemoryView, PyTuple, PyType};

use crate::backend::{Backend, Growable, new_expanding, new_growable, read_error, write_error};
use crate::errors::{batch_insert_error, config_error, insert_error, shield};
use crate::keys::{Keys, with_key};

/// Calls `work` with the bytes of a bytes-like object (`bytes`, `bytearray`, `memoryview`).
pub(crate) fn with_buffer<R>(data: &Bound<'_, PyAny>, work: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
    if let Ok(bytes) = data.cast::<PyBytes>() {
        Ok(work(bytes.as_bytes()))
    } else if let Ok(array) = data.cast::<PyByteArray>() {
        Ok(work(&array.to_vec()))
    } else if data.cast::<PyMemoryView>().is_ok() {
        let bytes = data.call_method0("tobytes")?;
        Ok(work(bytes.cast::<PyBytes>()?.as_bytes()))
    } else {
        Err(PyTypeError::new_err(format!(
            "expected bytes, bytearray or memoryview, not {}",
            data.get_type().name()?
        )))
    }
}

/// `stats()` as a dict: the library's `Summary`, under its field names, so that Python, Rust and
/// the other front ends name each figure alike.
pub(crate) fn stats_dict<'py>(py: Python<'py>, summary: &Summary) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("kind", summary.kind.to_string())?;
    dict.set_item("items", summary.items)?;
    dict.set_item("capacity", summary.capacity)?;
    dict.set_item("max_capacity", summary.max_capacity)?;
    dict.set_item("levels", summary.levels)?;
    dict.set_item("buckets", summary.buckets)?;
    dict.set_item("bucket_size", summary.bucket_size)?;
    dict.set_item("fingerprint_bits", summary.fingerprint_bits)?;
    dict.set_item("load_factor", summary.load_factor)?;
    dict.set_item("bits_per_item", summary.bits_per_item)?;
    dict.set_item("memory_bytes", summary.memory_bytes)?;
    dict.set_item("target_false_positive_rate", summary.target_false_positive_rate)?;
    dict.set_item("false_positive_rate_bound", summary.false_positive_rate_bound)?;
    dict.set_item("expected_false_positive_rate", summary.expected_false_positive_rate)?;
    Ok(dict)
}

/// The class `$class` over the filter type `$inner`. `update: (&mut)` makes updates take
/// `&mut self` (one thread's to change); `update: (&)` makes them take `&self`, for a filter that
/// takes updates from many threads at once. `$constructor` is the class's `__new__`.
macro_rules! filter_class {
    ($class:ident, $inner:ty, update: (& $($mutability:ident)?), $constructor:item) => {
        #[pymethods]
        impl $class {
            $constructor

            /// Stores one copy of `key`; raises `FilterFullError` if there is no room.
            fn add(& $($mutability)? self, key: &Bound<'_, PyAny>) -> PyResult<()> {
                shield(|| {
                    let hash = with_key(key, |bytes| self.filter.hash_of_bytes(bytes))?;
                    self.filter.insert_hash(hash).map_err(insert_error)
                })
            }

            /// Stores `key` unless it is (or a key with its fingerprint is) already present;
            /// returns whether it was added.
            fn add_unique(& $($mutability)? self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                shield(|| {
                    let hash = with_key(key, |bytes| self.filter.hash_of_bytes(bytes))?;
                    self.filter.insert_unique_hash(hash).map_err(insert_error)
                })
            }

            /// Adds every key of `keys` (any iterable), through the batched insert and without
            /// holding the GIL. Raises `FilterFullError` if any key found no room (the others
            /// are added).
            fn update(& $($mutability)? self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
                shield(|| {
                    let keys = Keys::collect(keys)?;
                    let filter = & $($mutability)? self.filter;
                    let results = py.detach(|| {
                        let hashes = keys.hashes(|bytes| filter.hash_of_bytes(bytes));
                        filter.insert_hash_batch(&hashes)
                    });
                    batch_insert_error(&results)
                })
            }

            fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                shield(|| with_key(key, |bytes| self.filter.contains_bytes(bytes)))
            }

            /// How many copies of `key` the filter holds (counting matching fingerprints).
            fn count(&self, key: &Bound<'_, PyAny>) -> PyResult<usize> {
                shield(|| with_key(key, |bytes| self.filter.count_bytes(bytes)))
            }

            /// One bool per key of `keys` (any iterable), through the batched lookup and without
            /// holding the GIL.
            fn contains_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
                shield(|| {
                    let keys = Keys::collect(keys)?;
                    let filter = &self.filter;
                    Ok(py.detach(|| filter.contains_hash_batch(&keys.hashes(|bytes| filter.hash_of_bytes(bytes)))))
                })
            }

            /// Removes one copy of `key`; returns whether one was found. Remove only keys that
            /// were added: removing another may delete a matching fingerprint of an added key.
            fn discard(& $($mutability)? self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                shield(|| {
                    let hash = with_key(key, |bytes| self.filter.hash_of_bytes(bytes))?;
                    Ok(self.filter.remove_hash(hash))
                })
            }

            /// Removes one copy of `key`; raises `KeyError` if it is absent.
            fn remove(& $($mutability)? self, key: &Bound<'_, PyAny>) -> PyResult<()> {
                if self.discard(key)? { Ok(()) } else { Err(PyKeyError::new_err(key.clone().unbind())) }
            }

            /// Removes one copy of each key of `keys`, without holding the GIL; one bool per key:
            /// whether a copy was found.
            fn remove_many(& $($mutability)? self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
                shield(|| {
                    let keys = Keys::collect(keys)?;
                    let filter = & $($mutability)? self.filter;
                    Ok(py.detach(|| {
                        let hashes = keys.hashes(|bytes| filter.hash_of_bytes(bytes));
                        hashes.into_iter().map(|hash| filter.remove_hash(hash)).collect()
                    }))
                })
            }

            fn __len__(&self) -> usize {
                self.filter.len()
            }

            fn __bool__(&self) -> bool {
                !self.filter.is_empty()
            }

            /// Removes every key; the configuration stays.
            fn clear(&mut self) -> PyResult<()> {
                shield(|| self.filter.make_empty())
            }

            /// An independent copy.
            fn copy(&self, py: Python<'_>) -> PyResult<Self> {
                shield(|| Ok(Self { filter: py.detach(|| self.filter.duplicate())? }))
            }

            fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
                self.copy(py)
            }

            fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<Self> {
                self.copy(py)
            }

            /// The filter's statistics, named as the library's `Summary`: kind, items, capacity,
            /// max_capacity, levels, buckets, bucket_size, fingerprint_bits, load_factor,
            /// bits_per_item, memory_bytes, target_false_positive_rate (a growing filter's
            /// configured target; None for a fixed one), false_positive_rate_bound (the bound that
            /// holds now) and expected_false_positive_rate (at the current load).
            fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
                shield(|| stats_dict(py, &self.filter.summary()))
            }

            /// The number of keys the filter was sized for (a growable filter: all its levels).
            #[getter]
            fn capacity(&self) -> usize {
                self.filter.summary().capacity
            }

            /// Fingerprint width in bits (a growable filter: its newest level's).
            #[getter]
            fn fingerprint_bits(&self) -> u32 {
                self.filter.summary().fingerprint_bits
            }

            /// Slots per bucket.
            #[getter]
            fn bucket_size(&self) -> usize {
                self.filter.summary().bucket_size
            }

            /// The bound on the false-positive rate that holds for the filter as it is (a fixed
            /// filter's: at full occupancy).
            #[getter]
            fn false_positive_rate_bound(&self) -> f64 {
                self.filter.summary().false_positive_rate_bound
            }

            /// The rate a growing filter was configured to stay under at every size; None for a
            /// fixed filter.
            #[getter]
            fn target_false_positive_rate(&self) -> Option<f64> {
                self.filter.summary().target_false_positive_rate
            }

            /// Bytes of memory the table (or tables) occupy.
            #[getter]
            fn memory_bytes(&self) -> usize {
                self.filter.summary().memory_bytes
            }

            /// The seed keys are hashed with.
            #[getter]
            fn seed(&self) -> u64 {
                self.filter.seed()
            }

            /// The filter in the library's portable format (what `save` writes).
            fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
                shield(|| {
                    let bytes = py.detach(|| self.filter.to_bytes());
                    Ok(PyBytes::new(py, &bytes))
                })
            }

            /// Reads a filter from bytes; raises `CorruptFilterError` if they are not a valid one.
            #[classmethod]
            fn from_bytes(_class: &Bound<'_, PyType>, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
                shield(|| {
                    let filter = with_buffer(data, |bytes| py.detach(|| <$inner>::from_bytes(bytes).map_err(read_error)))??;
                    Ok(Self { filter })
                })
            }

            /// Saves to `path` atomically: the file is replaced whole or not at all.
            fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
                shield(|| py.detach(|| self.filter.save(&path).map_err(write_error)))
            }

            /// Reads a filter file (from this module, the `bugu` command, Rust or Redis).
            #[classmethod]
            fn load(_class: &Bound<'_, PyType>, py: Python<'_>, path: PathBuf) -> PyResult<Self> {
                shield(|| Ok(Self { filter: py.detach(|| <$inner>::load(&path).map_err(read_error))? }))
            }

            fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
                let py = slf.py();
                let from_bytes = slf.get_type().getattr("from_bytes")?;
                let bytes = slf.borrow().to_bytes(py)?;
                PyTuple::new(py, [from_bytes, PyTuple::new(py, [bytes])?.into_any()])
            }

            fn __repr__(&self) -> String {
                let summary = self.filter.summary();
                format!(
                    "bugu.{}(len={}, capacity={}, fingerprint_bits={}, bucket_size={})",
                    <$inner as Backend>::NAME,
                    summary.items,
                    summary.capacity,
                    summary.fingerprint_bits,
                    summary.bucket_size
                )
            }
        }
    };
}

/// A cuckoo filter of fixed capacity, with the `set` vocabulary (one thread at a time).
#[pyclass(module = "bugu", name = "CuckooFilter")]
pub(crate) struct CuckooFilterPy {
    filter: CuckooFilter,
}

/// A filter that grows as keys arrive, keeping its false-positive rate under the target.
#[pyclass(module = "bugu", name = "GrowableFilter")]
pub(crate) struct GrowableFilterPy {
    filter: Growable,
}

/// A filter that grows in one table as keys arrive: lookups take the same time at any size, and
/// removal is exact; its rate stays under the target up to `max_items`.
#[pyclass(module = "bugu", name = "ExpandingFilter")]
pub(crate) struct ExpandingFilterPy {
    filter: bugu::ExpandingFilter,
}

/// A cuckoo filter of fixed capacity that many threads update and query at once.
#[pyclass(module = "bugu", name = "ConcurrentFilter")]
pub(crate) struct ConcurrentFilterPy {
    filter: ConcurrentFilter,
}

/// The builder of a one-table filter from the Python arguments.
fn table_builder(
    capacity: usize,
    false_positive_rate: f64,
    fingerprint_bits: Option<u32>,
    bucket_size: usize,
    seed: u64,
) -> bugu::Builder {
    let builder = CuckooFilter::builder()
        .capacity(capacity)
        .false_positive_rate(false_positive_rate)
        .bucket_size(bucket_size);
    let builder = match fingerprint_bits {
        Some(bits) => builder.fingerprint_bits(bits),
        None => builder,
    };
    builder.seed(seed)
}

filter_class!(
    CuckooFilterPy,
    CuckooFilter,
    update: (&mut),
    /// A filter for `capacity` keys at `false_positive_rate` (or with `fingerprint_bits`-bit
    /// fingerprints, which then decide the rate); `bucket_size` 2, 4 or 8.
    #[new]
    #[pyo3(signature = (capacity, false_positive_rate = 0.001, *, fingerprint_bits = None, bucket_size = 4, seed = 0))]
    fn new(capacity: usize, false_positive_rate: f64, fingerprint_bits: Option<u32>, bucket_size: usize, seed: u64) -> PyResult<Self> {
        shield(|| {
            let builder = table_builder(capacity, false_positive_rate, fingerprint_bits, bucket_size, seed);
            Ok(Self { filter: builder.build().map_err(config_error)? })
        })
    }
);

filter_class!(
    ConcurrentFilterPy,
    ConcurrentFilter,
    update: (&),
    /// A shared filter for `capacity` keys, configured as `CuckooFilter`.
    #[new]
    #[pyo3(signature = (capacity, false_positive_rate = 0.001, *, fingerprint_bits = None, bucket_size = 4, seed = 0))]
    fn new(capacity: usize, false_positive_rate: f64, fingerprint_bits: Option<u32>, bucket_size: usize, seed: u64) -> PyResult<Self> {
        shield(|| {
            let builder = table_builder(capacity, false_positive_rate, fingerprint_bits, bucket_size, seed);
            Ok(Self { filter: builder.build_concurrent().map_err(config_error)? })
        })
    }
);

filter_class!(
    GrowableFilterPy,
    Growable,
    update: (&mut),
    /// A filter whose first level holds `capacity` keys, growing as keys arrive while its
    /// false-positive rate stays under `false_positive_rate`; `max_capacity` (if given) caps it.
    #[new]
    #[pyo3(signature = (capacity, false_positive_rate = 0.001, *, bucket_size = 4, seed = 0, max_capacity = None))]
    fn new(capacity: usize, false_positive_rate: f64, bucket_size: usize, seed: u64, max_capacity: Option<usize>) -> PyResult<Self> {
        shield(|| Ok(Self { filter: new_growable(capacity, false_positive_rate, bucket_size, seed, max_capacity)? }))
    }
);

filter_class!(
    ExpandingFilterPy,
    bugu::ExpandingFilter,
    update: (&mut),
    /// A filter sized for `capacity` keys at first, growing in one table as keys arrive while its
    /// false-positive rate stays under `false_positive_rate`, up to `max_items` (default 2**32),
    /// which fixes its entries' widths.
    #[new]
    #[pyo3(signature = (capacity, false_positive_rate = 0.001, *, seed = 0, max_items = None))]
    fn new(capacity: usize, false_positive_rate: f64, seed: u64, max_items: Option<u64>) -> PyResult<Self> {
        shield(|| Ok(Self { filter: new_expanding(capacity, false_positive_rate, seed, max_items)? }))
    }
);
