//! Python objects as keys: the project's one encoding, as bytes.
//!
//! `str` is its UTF-8 bytes, `bytes`/`bytearray`/`memoryview` their bytes, `int` its value as a
//! 64-bit integer in 8 little-endian bytes (two's complement for negative values), so any value
//! from -2**63 to 2**64 - 1. Every front end hashes these bytes (`hash_of_bytes`), so a filter
//! answers the same here as in the CLI, Redis and Rust. Nothing else is a key: no `str()` or
//! `hash()` fallback, whose results differ between processes.

use pyo3::exceptions::{PyOverflowError, PyRuntimeError, PyTypeError};
use pyo3::ffi::{self, Py_ssize_t, PyObject};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyInt, PyMemoryView, PyString};

unsafe extern "C" {
    /// Exported by every CPython since 3.3 and in the stable ABI since 3.10 (pyo3 declares it
    /// only from there when building for 3.9). The only other way to a str's UTF-8 under the
    /// 3.9 stable ABI, `PyUnicode_AsUTF8String`, allocates a new bytes object for every key.
    fn PyUnicode_AsUTF8AndSize(unicode: *mut PyObject, size: *mut Py_ssize_t) -> *const std::ffi::c_char;
}

/// The UTF-8 bytes of `text`, without copying them.
fn utf8<'a>(text: &'a Bound<'_, PyString>) -> PyResult<&'a [u8]> {
    let mut size: Py_ssize_t = 0;
    // SAFETY: `text` is a live str object and we hold the GIL (a `Bound` proves both). The call
    // returns the str's UTF-8 buffer, which the object owns (computing and caching it on first
    // use for non-ASCII text), or NULL with an exception set (a lone surrogate).
    let data = unsafe { PyUnicode_AsUTF8AndSize(text.as_ptr(), &mut size) };
    if data.is_null() {
        return Err(
            PyErr::take(text.py()).unwrap_or_else(|| PyRuntimeError::new_err("str has no UTF-8 form"))
        );
    }
    // SAFETY: `data` points to `size` bytes owned by the str, which the borrow `'a` of `text`
    // keeps alive; the str is immutable, so the bytes do not change while borrowed.
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size as usize) })
}

/// The error for an integer outside the keys' range.
fn out_of_range() -> PyErr {
    PyOverflowError::new_err("integer key out of range: integer keys are 64-bit, from -2**63 to 2**64 - 1")
}

/// The 8 bytes of an integer key.
fn int_bytes(int: &Bound<'_, PyInt>) -> PyResult<[u8; 8]> {
    let mut overflow: std::ffi::c_int = 0;
    // SAFETY: `int` is a live int object and we hold the GIL (a `Bound` proves both). On success
    // the call returns the value (with no exception set); on overflow it sets `overflow` to 1
    // (too large) or -1 (too small) and returns -1 without an exception.
    let value = unsafe { ffi::PyLong_AsLongLongAndOverflow(int.as_ptr(), &mut overflow) };
    match overflow {
        0 if value == -1 => match PyErr::take(int.py()) {
            Some(error) => Err(error),
            None => Ok(value.to_le_bytes()),
        },
        0 => Ok(value.to_le_bytes()),
        // From 2**63 to 2**64 - 1: the unsigned values, which share their 8 bytes with negatives.
        1 => int.extract::<u64>().map(u64::to_le_bytes).map_err(|_| out_of_range()),
        _ => Err(out_of_range()),
    }
}

/// Calls `work` with the bytes of the key `item`.
pub(crate) fn with_key<R>(item: &Bound<'_, PyAny>, work: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
    if let Ok(text) = item.cast::<PyString>() {
        Ok(work(utf8(text)?))
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
