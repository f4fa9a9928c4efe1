//! The module's global allocator: Redis's own, so that `INFO memory`, `maxmemory` and
//! `MEMORY USAGE` see every byte the module holds, with one addition the `redis-module` crate's
//! allocator lacks: zeroed memory is asked of Redis as zeroed (`calloc`).
//!
//! bugu allocates every filter table zeroed. Without this, Rust's default `alloc_zeroed` takes
//! plain memory and writes zeros over all of it, so `CF.RESERVE` of a large capacity faults in and
//! writes every page of a table of up to gigabytes while the server waits. `calloc` hands back
//! fresh pages from the kernel untouched (they are zero already): the pages are faulted in later,
//! as inserts first write them.
//!
//! [`block_size`] tells what a block really costs, for the sizes the module reports.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

use redis_module::alloc::RedisAlloc;
use redis_module::raw;

/// The bytes the server's allocator takes for a block of `size` bytes.
///
/// jemalloc, Redis's allocator, rounds every request up to one of its size classes (up to a
/// quarter more: a table of 2^k bytes and its padding takes 1.25 x 2^k), and `used_memory` counts
/// the rounded size. jemalloc says which with `nallocx`, looked up in the server process (as
/// `je_nallocx` where Redis built its own jemalloc, as `nallocx` where it links the system's);
/// where neither is found (Redis built on libc's malloc, or unit tests) the requested size is
/// the best figure known.
pub(crate) fn block_size(size: usize) -> usize {
    type Nallocx = unsafe extern "C" fn(usize, c_int) -> usize;
    static NALLOCX: OnceLock<Option<Nallocx>> = OnceLock::new();
    let nallocx = NALLOCX.get_or_init(|| {
        [c"je_nallocx", c"nallocx"].into_iter().find_map(|name| {
            // SAFETY: `dlsym` with `RTLD_DEFAULT` searches the loaded objects for a NUL-terminated
            // name, and only reads it.
            let symbol = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
            // SAFETY: jemalloc's `nallocx` has this signature (`size_t nallocx(size_t size, int
            // flags)`), under either name.
            (!symbol.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, Nallocx>(symbol) })
        })
    });
    match nallocx {
        // `nallocx` is undefined for 0, and answers 0 for a size it cannot serve.
        // SAFETY: `nallocx` only computes; flags 0 ask for the default alignment and arena.
        Some(nallocx) if size > 0 => match unsafe { nallocx(size, 0) } {
            0 => size,
            block => block,
        },
        _ => size,
    }
}

/// [`RedisAlloc`] with `alloc_zeroed` served by `RedisModule_Calloc`.
#[cfg_attr(test, allow(dead_code))]
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct RedisAllocator;

// SAFETY: every method hands over to Redis's allocator (through `RedisAlloc`, or its `calloc` with
// the same size rounding), which meets `GlobalAlloc`'s contract as `RedisAlloc` does.
unsafe impl GlobalAlloc for RedisAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantees, passed on.
        unsafe { RedisAlloc.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's guarantees, passed on; `ptr` came from Redis's allocator, whether
        // from `alloc` or from `calloc`, and Redis frees both alike.
        unsafe { RedisAlloc.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the API table is filled once when the module loads, before anything allocates
        // through it.
        let Some(calloc) = (unsafe { raw::RedisModule_Calloc }) else {
            // SAFETY: the caller's guarantees, passed on (`RedisAlloc` reports the missing API).
            return unsafe { RedisAlloc.alloc_zeroed(layout) };
        };
        // The size rounded up to a multiple of the alignment, as `RedisAlloc::alloc` does: Redis's
        // allocator aligns blocks of such sizes enough. `Layout` guarantees the rounded size does
        // not overflow.
        let size = layout.size().next_multiple_of(layout.align());
        // SAFETY: `calloc` is Redis's `RedisModule_Calloc`, valid for any count and size.
        unsafe { calloc(1, size) }.cast()
    }
}
