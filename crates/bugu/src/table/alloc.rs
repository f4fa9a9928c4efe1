//! A table's memory: zeroed buffers from the allocator, never aborting on failure, and the
//! advice to back large ones with transparent huge pages.

/// A table's buffer of `bytes` bytes (payload and padding) could not be allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AllocFailed {
    pub(crate) bytes: usize,
}

/// Tables at least this large ask the kernel for transparent huge pages.
pub(super) const HUGE_PAGE_THRESHOLD: usize = 4 << 20;
const HUGE_PAGE: usize = 2 << 20;

/// Element types whose all-zero bytes are a valid value, for [`zeroed_buffer`].
///
/// # Safety
///
/// An implementor must be valid (and mean "zero") when all its bytes are zero.
pub(crate) unsafe trait ZeroIsValid {}

// SAFETY: every bit pattern is a `u8`.
unsafe impl ZeroIsValid for u8 {}

// SAFETY: `AtomicU64` has the size, alignment and bit validity of `u64` (its documentation
// guarantees the in-memory representation), so zero bytes are the atomic holding 0. (Loom's
// atomics are not plain words: the shared table copies zeros in under loom instead.)
#[cfg(not(loom))]
unsafe impl ZeroIsValid for std::sync::atomic::AtomicU64 {}

/// A zero-filled buffer of `len` elements, or [`AllocFailed`] if the allocator refuses it; large
/// ones are advised to use huge pages (fewer TLB misses on the random accesses every lookup makes).
///
/// The memory comes zeroed from the allocator (`calloc`: fresh pages from the kernel are not
/// written), so the pages are faulted in on first use, after the advice, as huge pages where the
/// kernel allows, and by the thread that first writes them. `vec![0; len]` would do the same but
/// abort the process on failure, and `try_reserve` then `resize` would write every page up front.
pub(crate) fn zeroed_buffer<T: ZeroIsValid>(len: usize) -> Result<Vec<T>, AllocFailed> {
    let failed = AllocFailed { bytes: len.saturating_mul(std::mem::size_of::<T>()) };
    let layout = std::alloc::Layout::array::<T>(len).map_err(|_| failed)?;
    if layout.size() == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the layout's size is not zero (checked above).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(failed);
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout of `[T; len]`, the
    // layout a `Vec<T>` of capacity `len` deallocates with; its `len` elements are initialised
    // (all-zero bytes, a valid `T` by `ZeroIsValid`); the Vec takes sole ownership of the
    // allocation.
    let buffer = unsafe { Vec::from_raw_parts(ptr.cast::<T>(), len, len) };
    advise_huge_pages(buffer.as_ptr().cast(), layout.size());
    Ok(buffer)
}

/// An empty buffer with room for a table of `len` bytes (payload and padding), advised like
/// [`zeroed_buffer`]'s before anything is written to it: for readers that fill a table from a
/// file, and for copies of a table. [`AllocFailed`] if the allocator refuses it.
pub(crate) fn reserve_buffer(len: usize) -> Result<Vec<u8>, AllocFailed> {
    let mut buffer = Vec::new();
    buffer.try_reserve_exact(len).map_err(|_| AllocFailed { bytes: len })?;
    advise_huge_pages(buffer.as_ptr(), buffer.capacity());
    Ok(buffer)
}

/// Advises huge pages for the whole 2 MiB pages inside the `len` bytes of an allocation starting
/// at `start`, if they are at least [`HUGE_PAGE_THRESHOLD`] bytes.
#[cfg(all(target_os = "linux", not(miri)))]
pub(super) fn advise_huge_pages(start: *const u8, len: usize) {
    if len < HUGE_PAGE_THRESHOLD {
        return;
    }
    let aligned = (start as usize).next_multiple_of(HUGE_PAGE);
    let end = (start as usize + len) / HUGE_PAGE * HUGE_PAGE;
    if end > aligned {
        // SAFETY: [aligned, end) lies inside the allocation of `len` bytes at `start`; MADV_HUGEPAGE
        // only changes how the kernel backs those pages, never their contents or validity. Failure
        // is harmless.
        unsafe {
            libc::madvise(aligned as *mut libc::c_void, end - aligned, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(any(not(target_os = "linux"), miri))]
pub(super) fn advise_huge_pages(_start: *const u8, _len: usize) {}
