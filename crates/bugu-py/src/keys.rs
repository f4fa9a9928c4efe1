//! Python objects as keys: the project's one encoding, as bytes.
//!
//! `str` is its UTF-8 bytes, `bytes`/`bytearray`/`memoryview` their bytes, `int` its value as a
//! 64-bit integer in 8 little-endian bytes (two's complement for negative values), so any value
//! from -2**63 to 2**64 - 1. Every front end hashes these bytes (`hash_of_bytes`), so a filter
//! answers the same here as in the CLI, Redis and Rust. Nothing else is a key: no `str()` or
//! `hash()` fallback, whose results differ between processes.

use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyInt, PyMemoryView, PyString};

/// The error for an integer outside the keys' range.
fn out_of_range() -> PyErr {
    PyOverflowError::new_err("integer key out of range: integer keys are 64-bit, from -2**63 to 2**64 - 1")
}

/// The 8 bytes of an integer key.
fn int_bytes(int: &Bound<'_, PyInt>) -> PyResult<[u8; 8]> {
    match int.extract::<i64>() {
        Ok(value) => Ok(value.to_le_bytes()),
        Err(error) if error.is_instance_of::<PyOverflowError>(int.py()) => match int.extract::<u64>() {
            Ok(value) => Ok(value.to_le_bytes()),
            Err(_) => Err(out_of_range()),
        },
        Err(error) => Err(error),
    }
}

/// Calls `work` with the bytes of the key `item`.
pub(crate) fn with_key<R>(item: &Bound<'_, PyAny>, work: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
    if let Ok(text) = item.cast::<PyString>() {
        let bytes = text.encode_utf8()?;
        Ok(work(bytes.as_bytes()))
    } else if let Ok(int) = item.cast::<PyInt>() {
        Ok(work(&int_bytes(int)?))
    } else if let Ok(bytes) = item.cast::<PyBytes>() {
        Ok(work(bytes.as_bytes()))
    } else if let Ok(array) = item.cast::<PyByteArray>() {
        Ok(work(&array.to_vec()))
    } else if item.cast::<PyMemoryView>().is_ok() {
        let bytes = item.call_method0("tobytes")?;
        Ok(work(bytes.cast::<PyBytes>()?.as_bytes()))
    } else {
        Err(PyTypeError::new_err(format!(
            "a key must be str, bytes, bytearray, memoryview or int, not {}",
            item.get_type().name()?
        )))
    }
}

/// The keys of an iterable, copied out of their objects so that the work on them can run without
/// the interpreter's lock: all keys' bytes in one buffer, and where each ends.
#[derive(Default)]
pub(crate) struct Keys {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Keys {
    /// Collects the keys of `items` (any iterable), in order.
    pub(crate) fn collect(items: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut keys = Keys::default();
        if let Ok(len) = items.len() {
            keys.ends.reserve(len);
        }
        for item in items.try_iter()? {
            with_key(&item?, |bytes| keys.bytes.extend_from_slice(bytes))?;
            keys.ends.push(keys.bytes.len());
        }
        Ok(keys)
    }

    /// Each key's bytes, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(self.ends.iter().copied()).map(|(start, end)| &self.bytes[start..end])
    }

    /// Each key's hash by `hash`.
    pub(crate) fn hashes(&self, hash: impl Fn(&[u8]) -> u64) -> Vec<u64> {
        self.iter().map(hash).collect()
    }
}
