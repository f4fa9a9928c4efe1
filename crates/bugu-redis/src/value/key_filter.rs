//! The filter under a key: a chain of levels (bugu's [`GrowableFilter`], the default) or one
//! table that splits as it grows (bugu's [`ExpandingFilter`], `GROWTH ONETABLE`), with what the
//! commands ask of either. Both hash an item's bytes the same way, so an item means the same in
//! both.

use std::io::{self, Write};

use bugu::persist::{FilterKind, PersistError};
use bugu::{ExpandingFilter, Filter, FilterMut, GrowableFilter, InsertError};

use crate::alloc::block_size;

/// How a key's filter grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Growth {
    /// New levels, each larger than the last: inserts cost what a fixed filter's do, lookups
    /// and removals probe every level.
    #[default]
    Chain,
    /// One table that splits a few buckets per insert: lookups probe two buckets at any size,
    /// removals are always exact, inserts cost more.
    OneTable,
}

/// A key's filter.
#[derive(Debug, Clone)]
pub(crate) enum KeyFilter {
    Chain(GrowableFilter),
    OneTable(Box<ExpandingFilter>),
}

/// Runs `$body` with `$filter` bound to whichever filter `$value` holds.
macro_rules! either {
    ($value:expr, $filter:ident => $body:expr) => {
        match $value {
            KeyFilter::Chain($filter) => $body,
            KeyFilter::OneTable($filter) => $body,
        }
    };
}

impl KeyFilter {
    /// A filter from bugu's bytes of either kind.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Result<Self, PersistError> {
        match FilterKind::detect(bytes)? {
            FilterKind::Growable => GrowableFilter::from_bytes(bytes).map(Self::Chain),
            FilterKind::Expanding => {
                ExpandingFilter::from_bytes(bytes).map(|filter| Self::OneTable(Box::new(filter)))
            }
            found => Err(PersistError::WrongKind { expected: FilterKind::Growable, found }),
        }
    }

    pub(crate) fn add(&mut self, item: &[u8]) -> Result<(), InsertError> {
        either!(self, filter => filter.insert_hash(filter.hash_of_bytes(item)))
    }

    pub(crate) fn add_unique(&mut self, item: &[u8]) -> Result<bool, InsertError> {
        either!(self, filter => filter.insert_unique_hash(filter.hash_of_bytes(item)))
    }

    pub(crate) fn contains(&self, item: &[u8]) -> bool {
        either!(self, filter => filter.contains_bytes(item))
    }

    pub(crate) fn count(&self, item: &[u8]) -> usize {
        either!(self, filter => filter.count_bytes(item))
    }

    pub(crate) fn remove(&mut self, item: &[u8]) -> bool {
        either!(self, filter => filter.remove_hash(filter.hash_of_bytes(item)))
    }

    pub(crate) fn len(&self) -> usize {
        either!(self, filter => filter.len())
    }

    /// Length of the filter's bytes in bugu's format.
    pub(crate) fn serialized_len(&self) -> usize {
        either!(self, filter => filter.serialized_len())
    }

    /// Writes the filter's bytes in bugu's format.
    pub(crate) fn write_to<W: Write>(&self, writer: W) -> io::Result<()> {
        either!(self, filter => filter.write_to(writer))
    }

    /// Buckets, over all levels of a chain.
    pub(crate) fn buckets(&self) -> usize {
        match self {
            Self::Chain(filter) => filter.levels().iter().map(|level| level.bucket_count()).sum(),
            Self::OneTable(filter) => filter.bucket_count(),
        }
    }

    /// Sub-filters: a chain's levels, or the one table.
    pub(crate) fn filters(&self) -> usize {
        match self {
            Self::Chain(filter) => filter.level_count(),
            Self::OneTable(_) => 1,
        }
    }

    /// Bytes the filter's heap blocks take, as the allocator counts them: a chain's tables and
    /// its list of levels, or the one table's segments, lists and its box. Working buffers are
    /// left out ([`scratch_bytes`](Self::scratch_bytes)).
    pub(crate) fn allocated_bytes(&self) -> usize {
        match self {
            Self::Chain(filter) => {
                let levels = filter.levels();
                let tables: usize = levels.iter().map(|level| block_size(level.memory_bytes())).sum();
                tables + block_size(std::mem::size_of_val(levels))
            }
            Self::OneTable(filter) => {
                let blocks: usize = filter.heap_blocks().map(block_size).sum();
                blocks + block_size(std::mem::size_of::<ExpandingFilter>())
            }
        }
    }

    /// Bytes of the working buffers an insert keeps between calls: each level's search space in
    /// a chain; the one table keeps none.
    pub(crate) fn scratch_bytes(&self) -> usize {
        match self {
            Self::Chain(filter) => {
                filter.levels().iter().map(|level| block_size(level.scratch_bytes())).sum()
            }
            Self::OneTable(_) => 0,
        }
    }
}
