//! RedisBloom's cuckoo filters, kept in RedisBloom's own layout and answered with its own
//! hashing and algorithms, so that a key RedisBloom wrote gives the answers RedisBloom would.
//!
//! The layout, as RedisBloom 2.2 to 8.x keeps it:
//! - one-byte fingerprints, `1..=255` (0 marks an empty slot), `bucket_size` (1..=255) slots per
//!   bucket;
//! - a chain of sub-filters: the first has `buckets` buckets (a power of two), sub-filter `i` has
//!   `buckets × expansion^i`; the newest takes inserts, a lookup checks every one;
//! - an item's hash is MurmurHash64A of its bytes (`hash`); its buckets in a sub-filter are the
//!   two bucket hashes modulo the sub-filter's bucket count.
//!
//! The parts:
//! - `hash`: the item's hash, fingerprint and bucket hashes;
//! - `ops`: lookups, counts, inserts (with RedisBloom's kicks and growth) and deletes (with its
//!   compaction), each a step-for-step equal of RedisBloom's, so that the same commands leave
//!   the same bytes;
//! - `saved`: the RDB encoding of the type `MBbloomCF` (versions 4 and older);
//! - `dump`: `CF.SCANDUMP`'s chunks, `CF.LOADCHUNK`'s restore and the AOF rewrite, in
//!   RedisBloom's chunk format.
//!
//! Nothing here touches Redis, so every path is tested without a server.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::alloc::block_size;
use crate::error::CfError;
use crate::value::dump::DumpStep;
use crate::value::{Info, KeyFilter};

pub(crate) mod dump;
mod hash;
mod ops;
pub(crate) mod saved;

#[cfg(test)]
mod tests;

/// The RDB encoding version RedisBloom writes (and the newest it reads).
pub(crate) const ENCODING_VERSION: i32 = 4;
/// RedisBloom's most sub-filters before an insert is refused ("Maximum expansions reached").
const MAX_FILTERS_FOR_INSERT: usize = 32;
/// The most bytes a value may hold. RedisBloom computes a slot's offset in a sub-filter in 32
/// bits, so it cannot serve a sub-filter over 4 GiB; and a dump's header asks for all of its
/// memory at once, so the amount is bounded before it is allocated.
const MAX_BYTES: u64 = 1 << 32;
/// The largest `EXPANSION` RedisBloom accepts.
const MAX_EXPANSION: u64 = 32_768;

static TAKEOVER: AtomicBool = AtomicBool::new(true);

/// Whether this server serves RedisBloom's data (the module argument `REDISBLOOM-DATA off` says no).
pub(crate) fn takeover_enabled() -> bool {
    TAKEOVER.load(Ordering::Relaxed)
}

/// Set once when the module loads, from its arguments.
pub(crate) fn set_takeover(enabled: bool) {
    TAKEOVER.store(enabled, Ordering::Relaxed);
}

/// A RedisBloom cuckoo filter.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct RedisBloomFilter {
    /// Buckets of the first sub-filter.
    buckets: u64,
    items: u64,
    deletes: u64,
    bucket_size: u64,
    max_iterations: u64,
    expansion: u64,
    /// The sub-filters' slots, oldest first: `bucket_size` one-byte fingerprints per bucket.
    filters: Vec<Vec<u8>>,
}

/// A filter's description: what RedisBloom's header and RDB fields hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Buckets of the first sub-filter.
    pub(crate) buckets: u64,
    pub(crate) items: u64,
    pub(crate) deletes: u64,
    pub(crate) filters: u64,
    pub(crate) bucket_size: u64,
    pub(crate) max_iterations: u64,
    pub(crate) expansion: u64,
}

impl Shape {
    /// Bytes of slots of sub-filter `index`, if the shape is one RedisBloom can have made and
    /// serves correctly (see [`RedisBloomFilter::new`]).
    fn filter_bytes(&self, index: u64) -> Option<u64> {
        let growth = self.expansion.max(1).checked_pow(u32::try_from(index).ok()?)?;
        self.buckets.checked_mul(growth)?.checked_mul(self.bucket_size)
    }

    /// Bytes of slots of every sub-filter, if the shape is valid.
    fn sizes(&self) -> Option<Vec<u64>> {
        let valid = self.buckets.is_power_of_two()
            && (1..=255).contains(&self.bucket_size)
            && (1..=65_535).contains(&self.max_iterations)
            && (self.expansion == 0 || (self.expansion.is_power_of_two() && self.expansion <= MAX_EXPANSION))
            && (1..=u64::from(u16::MAX)).contains(&self.filters)
            && (self.expansion != 0 || self.filters == 1);
        if !valid {
            return None;
        }
        let mut total = 0u64;
        let mut sizes = Vec::new();
        for index in 0..self.filters {
            let size = self.filter_bytes(index)?;
            total = total.checked_add(size).filter(|&total| total <= MAX_BYTES)?;
            sizes.push(size);
        }
        Some(sizes)
    }
}

impl RedisBloomFilter {
    /// A filter from its shape and its sub-filters' slots; `None` unless every field is one
    /// RedisBloom can have written: a power-of-two bucket count, bucket size 1..=255, iterations
    /// 1..=65535, expansion 0 (one sub-filter) or a power of two up to 32768, each sub-filter
    /// exactly `buckets × expansion^i` buckets, and at most 4 GiB in all.
    pub(crate) fn new(shape: Shape, filters: Vec<Vec<u8>>) -> Option<Self> {
        let sizes = shape.sizes()?;
        let fits = sizes.len() == filters.len()
            && sizes.iter().zip(&filters).all(|(&size, slots)| size == slots.len() as u64);
        fits.then(|| Self::from_parts(shape, filters))
    }

    /// The filter of a valid shape and slots that fit it.
    fn from_parts(shape: Shape, filters: Vec<Vec<u8>>) -> Self {
        let Shape { buckets, items, deletes, bucket_size, max_iterations, expansion, filters: _ } = shape;
        Self { buckets, items, deletes, bucket_size, max_iterations, expansion, filters }
    }

    /// A filter of this shape with every slot empty (where a restore begins).
    fn empty(shape: Shape) -> Option<Self> {
        let filters = shape.sizes()?.into_iter().map(|size| vec![0; size as usize]).collect();
        Some(Self::from_parts(shape, filters))
    }

    pub(crate) fn shape(&self) -> Shape {
        Shape {
            buckets: self.buckets,
            items: self.items,
            deletes: self.deletes,
            filters: self.filters.len() as u64,
            bucket_size: self.bucket_size,
            max_iterations: self.max_iterations,
            expansion: self.expansion,
        }
    }

    /// Bytes of memory the filter holds, as the allocator counts them, without the value's box.
    pub(crate) fn heap_bytes(&self) -> usize {
        let slots: usize = self.filters.iter().map(|slots| block_size(slots.capacity())).sum();
        block_size(self.filters.capacity() * std::mem::size_of::<Vec<u8>>()) + slots
    }

    /// What `CF.INFO` reports, `Size` as RedisBloom computes it (its structures' sizes and the
    /// slots).
    pub(crate) fn info(&self) -> Info {
        const FILTER_STRUCT: u64 = 40;
        const SUB_FILTER_STRUCT: u64 = 16;
        let shape = self.shape();
        let slots: u64 = self.filters.iter().map(|slots| slots.len() as u64).sum();
        Info {
            size: FILTER_STRUCT + SUB_FILTER_STRUCT * shape.filters + slots,
            buckets: shape.buckets,
            filters: shape.filters,
            inserted: shape.items,
            deleted: shape.deletes,
            bucket_size: shape.bucket_size,
            expansion: shape.expansion,
            max_iterations: shape.max_iterations,
            layout: Info::REDISBLOOM,
        }
    }
}

/// The shape only: the slots would fill pages.
impl std::fmt::Debug for RedisBloomFilter {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("RedisBloomFilter").field("shape", &self.shape()).finish_non_exhaustive()
    }
}

impl KeyFilter for RedisBloomFilter {
    fn check_writable(&self) -> Result<(), CfError> {
        RedisBloomFilter::check_writable(self)
    }

    fn add(&mut self, item: &[u8]) -> Result<(), CfError> {
        RedisBloomFilter::add(self, item)
    }

    fn add_unique(&mut self, item: &[u8]) -> Result<bool, CfError> {
        RedisBloomFilter::add_unique(self, item)
    }

    fn contains(&self, item: &[u8]) -> bool {
        RedisBloomFilter::contains(self, item)
    }

    fn count(&self, item: &[u8]) -> u64 {
        RedisBloomFilter::count(self, item)
    }

    fn delete(&mut self, item: &[u8]) -> bool {
        RedisBloomFilter::delete(self, item)
    }

    fn info(&self) -> Info {
        RedisBloomFilter::info(self)
    }

    fn dump_step(&self, iterator: i64) -> Result<DumpStep, CfError> {
        RedisBloomFilter::dump_step(self, iterator)
    }
}
