//! Reading the caller's pointers: every one is checked for NULL before it is read.

use std::ffi::{CStr, c_char, c_void};

use crate::status::{Failure, invalid};

/// The key `(key, len)`: empty when `len` is 0, refused when `key` is NULL with a non-zero length.
///
/// # Safety
/// Unless NULL, `key` points to `len` readable bytes that live for `'a`.
pub(crate) unsafe fn bytes<'a>(key: *const c_void, len: usize) -> Result<&'a [u8], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if key.is_null() {
        return Err(invalid("the key is NULL with a non-zero length"));
    }
    // SAFETY: non-NULL, and the caller promises `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(key.cast::<u8>(), len) })
}

/// The bytes of a NUL-terminated string, without the NUL.
///
/// # Safety
/// Unless NULL, `key` points to a NUL-terminated string that lives for `'a`.
pub(crate) unsafe fn text<'a>(key: *const c_char) -> Result<&'a [u8], Failure> {
    if key.is_null() {
        return Err(invalid("the string key is NULL"));
    }
    // SAFETY: non-NULL, and the caller promises a NUL-terminated string.
    Ok(unsafe { CStr::from_ptr(key) }.to_bytes())
}

/// An array of `n` values: empty when `n` is 0, refused when NULL with a non-zero count.
///
/// # Safety
/// Unless NULL, `items` points to `n` initialised values that live for `'a`.
pub(crate) unsafe fn array<'a, T>(items: *const T, n: usize, what: &str) -> Result<&'a [T], Failure> {
    if n == 0 {
        return Ok(&[]);
    }
    if items.is_null() {
        return Err(invalid(format!("{what} is NULL with a non-zero count")));
    }
    // SAFETY: non-NULL, and the caller promises `n` values.
    Ok(unsafe { std::slice::from_raw_parts(items, n) })
}

/// A writable array of `n` values, as [`array`].
///
/// # Safety
/// Unless NULL, `items` points to `n` writable values that nothing else accesses during `'a`.
pub(crate) unsafe fn array_mut<'a, T>(items: *mut T, n: usize, what: &str) -> Result<&'a mut [T], Failure> {
    if n == 0 {
        return Ok(&mut []);
    }
    if items.is_null() {
        return Err(invalid(format!("{what} is NULL with a non-zero count")));
    }
    // SAFETY: non-NULL, and the caller promises `n` writable values.
    Ok(unsafe { std::slice::from_raw_parts_mut(items, n) })
}

/// Writes `value` to `out`, refused when NULL.
///
/// # Safety
/// Unless NULL, `out` points to a writable `T`.
pub(crate) unsafe fn write<T>(out: *mut T, value: T, what: &str) -> Result<(), Failure> {
    if out.is_null() {
        return Err(invalid(format!("{what} is NULL")));
    }
    // SAFETY: non-NULL, and the caller promises it is writable.
    unsafe { out.write(value) };
    Ok(())
}

/// Writes `value` to `out` unless it is NULL (an optional out-parameter).
///
/// # Safety
/// Unless NULL, `out` points to a writable `T`.
pub(crate) unsafe fn write_optional<T>(out: *mut T, value: T) {
    if !out.is_null() {
        // SAFETY: non-NULL, and the caller promises it is writable.
        unsafe { out.write(value) };
    }
}

/// A path from a NUL-terminated string (its bytes, as the operating system takes them).
///
/// # Safety
/// As [`text`].
pub(crate) unsafe fn path<'a>(path: *const c_char) -> Result<&'a std::path::Path, Failure> {
    use std::os::unix::ffi::OsStrExt;
    if path.is_null() {
        return Err(invalid("the path is NULL"));
    }
    // SAFETY: non-NULL, and the caller promises a NUL-terminated string.
    let bytes = unsafe { CStr::from_ptr(path) }.to_bytes();
    Ok(std::path::Path::new(std::ffi::OsStr::from_bytes(bytes)))
}
