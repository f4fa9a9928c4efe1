//! The module's global allocator: Redis's own, so that `INFO memory`, `maxmemory` and
//! `MEMORY USAGE` see every byte the module holds, with one addition the `redis-module` crate's
//! allocator lacks: zeroed memory is asked of Redis as zeroed (`calloc`).
//!
//! bugu allocates every filter table zeroed. Without this, Rust's default `alloc_zeroed` takes
//! plain memory and writes zeros over all of it, so `CF.RESERVE` of a large capacity faults in and
//! writes every page of a table of up to gigabytes while the server waits. `calloc` hands back
//! fresh pages from the kernel untouched (they are zero already): the pages are faulted in later,
//! as inserts first write them.

use std::alloc::{GlobalAlloc, Layout};

use redis_module::alloc::RedisAlloc;
use redis_module::raw;

/// [`RedisAlloc`] with `alloc_zeroed` served by `RedisModule_Calloc`.
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
