//! What every handle is: a box around one filter that persists through [`Persist`] and reports
//! through `summary()`, so that getting at the filter, handing a new one to the caller and writing
//! its bytes are written once here rather than once per handle.

use bugu::Persist;

use crate::args;
use crate::status::{Failure, Outcome, bugu_status, invalid};

/// A handle type and the filter it boxes.
pub(crate) trait Handle: Sized {
    type Inner: Persist;
    fn wrap(inner: Self::Inner) -> Self;
    fn inner(&self) -> &Self::Inner;
    fn inner_mut(&mut self) -> &mut Self::Inner;
}

/// Implements [`Handle`] for a handle struct whose one field is `inner`. The structs stay
/// written out in their modules: cbindgen declares the opaque types from the source as written.
macro_rules! handle {
    ($handle:ty => $inner:ty) => {
        impl $crate::handle::Handle for $handle {
            type Inner = $inner;
            fn wrap(inner: $inner) -> Self {
                Self { inner }
            }
            fn inner(&self) -> &$inner {
                &self.inner
            }
            fn inner_mut(&mut self) -> &mut $inner {
                &mut self.inner
            }
        }
    };
}
pub(crate) use handle;

/// The handle's filter; NULL is refused.
///
/// # Safety
/// `handle` is NULL or a live handle from this library.
pub(crate) unsafe fn target<'a, H: Handle + 'a>(handle: *const H) -> Result<&'a H::Inner, Failure> {
    // SAFETY: the caller promises NULL or a live handle.
    unsafe { handle.as_ref() }.map(H::inner).ok_or_else(|| invalid("the filter handle is NULL"))
}

/// The handle's filter, to update; NULL is refused.
///
/// # Safety
/// `handle` is NULL or a live handle that no other call uses at the moment.
pub(crate) unsafe fn target_mut<'a, H: Handle + 'a>(handle: *mut H) -> Result<&'a mut H::Inner, Failure> {
    // SAFETY: the caller promises NULL or a live handle used by no one else now.
    unsafe { handle.as_mut() }.map(H::inner_mut).ok_or_else(|| invalid("the filter handle is NULL"))
}

/// Gives the caller a new handle around `inner` in `*out`; a NULL `out` is refused (and the
/// filter dropped).
pub(crate) fn publish<H: Handle>(inner: H::Inner, out: *mut *mut H) -> Outcome {
    if out.is_null() {
        return Err(invalid("the out-parameter for the new filter is NULL"));
    }
    // SAFETY: non-NULL, and the caller promises it is writable.
    unsafe { out.write(Box::into_raw(Box::new(H::wrap(inner)))) };
    Ok(())
}

/// Writes the filter's bytes straight into the caller's buffer, or says how many are needed: the
/// length is known without building the bytes, so asking for it costs nothing and no copy of a
/// large filter is made on the way.
///
/// # Safety
/// `buffer` holds `capacity` writable bytes (or is NULL with 0); `written` is NULL or writable.
pub(crate) unsafe fn to_buffer<F: Persist>(
    filter: &F,
    buffer: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> Outcome {
    let len = filter.serialized_len();
    // SAFETY: the caller's promise.
    unsafe { args::write(written, len, "the out-parameter `written`") }?;
    if len > capacity {
        return Err(Failure(
            bugu_status::BUGU_BUFFER_TOO_SMALL,
            format!("the buffer holds {capacity} bytes; the filter needs {len}"),
        ));
    }
    // SAFETY: the caller promises `capacity` writable bytes, at least `len`.
    let mut rest = unsafe { args::array_mut(buffer, len, "the buffer") }?;
    filter.write_to(&mut rest)?;
    debug_assert!(rest.is_empty(), "serialized_len is the length write_to writes");
    Ok(())
}
