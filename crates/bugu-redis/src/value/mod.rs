//! The value stored under a key: a bugu growable filter (an [`AnyFilter`]: a chain, or one table)
//! with what RedisBloom's commands report about it, or a filter being restored chunk by chunk
//! through `CF.LOADCHUNK`.
//!
//! Nothing here touches Redis, so every path is tested here without a server:
//! - `key_filter`: a filter built from the module's settings, and its settings recovered;
//! - `header`: the header a saved value and a dump share, and the range of a dump's stamp;
//! - `saved`: the saved form (RDB, `DUMP`, digests);
//! - `dump`: `CF.SCANDUMP`'s chunks, `CF.LOADCHUNK`'s restore and the AOF rewrite's chunks.
//!
//! The value is made of the parts in `key_filter` and `header`; `saved` and `dump` each add what
//! they do to it, and are named by their own paths (`value::saved::Encoding`,
//! `value::dump::DumpStep`) rather than through this module, so that the value depends on neither
//! and each depends only on the value and the header.

use std::hash::{BuildHasher, RandomState};

use bugu::persist::{FilterKind, PersistError};
use bugu::{AnyFilter, Filter, FilterMut, InsertError, Persist};

use crate::alloc::block_size;
use crate::error::CfError;
use crate::settings::Settings;
use crate::value::dump::DumpStep;

pub(crate) mod dump;
mod header;
mod key_filter;
pub(crate) mod saved;

use header::Header;

/// The value under a key.
pub(crate) enum CfValue {
    Ready(Ready),
    Restoring(Restoring),
}

/// A filter that answers commands.
pub(crate) struct Ready {
    filter: AnyFilter,
    settings: Settings,
    deleted: u64,
    /// Counts the writes to the filter, from a random start: a `CF.SCANDUMP` names the count it
    /// began at in its iterators, so that it notices a write between two of its calls.
    writes: u32,
}

/// A restore that has received its header and some of the filter's bytes.
pub(crate) struct Restoring {
    header: Header,
    body: Vec<u8>,
    /// The stamp of the dump being restored, from its first chunk's iterator: every later chunk
    /// must carry the same one.
    stamp: u32,
}

/// What `CF.INFO` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Info {
    pub(crate) size: u64,
    pub(crate) buckets: u64,
    pub(crate) filters: u64,
    pub(crate) inserted: u64,
    pub(crate) deleted: u64,
    pub(crate) bucket_size: u64,
    pub(crate) expansion: u64,
    pub(crate) max_iterations: u64,
    /// Which layout the key's filter has: one of [`Info::CHAIN`], [`Info::ONE_TABLE`],
    /// [`Info::REDISBLOOM`].
    pub(crate) layout: &'static str,
}

impl Info {
    /// A bugu chain of levels.
    pub(crate) const CHAIN: &'static str = "bugu-chain";
    /// A bugu table that splits as it grows.
    pub(crate) const ONE_TABLE: &'static str = "bugu-onetable";
    /// RedisBloom's layout, with its hashing: a key RedisBloom wrote.
    pub(crate) const REDISBLOOM: &'static str = "redisbloom";
}

/// What the commands ask of a key's filter, whichever layout it has.
pub(crate) trait KeyFilter {
    /// Whether a write command may insert at all (checked once, before any of its items).
    fn check_writable(&self) -> Result<(), CfError> {
        Ok(())
    }
    /// Adds one copy of an item.
    fn add(&mut self, item: &[u8]) -> Result<(), CfError>;
    /// Adds an item unless it may be present already; `true` if it was added.
    fn add_unique(&mut self, item: &[u8]) -> Result<bool, CfError>;
    /// Whether an item may be present.
    fn contains(&self, item: &[u8]) -> bool;
    /// [`contains`](Self::contains) for each item, in order.
    fn contains_each(&self, items: &mut dyn Iterator<Item = &[u8]>) -> Vec<bool> {
        items.map(|item| self.contains(item)).collect()
    }
    /// How many copies of an item may be present (an upper bound).
    fn count(&self, item: &[u8]) -> u64;
    /// Removes one copy of an item; `false` if none was removed.
    fn delete(&mut self, item: &[u8]) -> bool;
    /// What `CF.INFO` reports.
    fn info(&self) -> Info;
    /// One step of `CF.SCANDUMP`.
    fn dump_step(&self, iterator: i64) -> Result<DumpStep, CfError>;
}

impl CfValue {
    /// An empty filter with these settings.
    pub(crate) fn reserve(settings: Settings) -> Result<Self, CfError> {
        let filter = key_filter::build(&settings)?;
        Ok(Self::Ready(Ready::new(filter, settings, 0)))
    }

    /// The filter, unless a restore is in progress.
    pub(crate) fn ready(&self) -> Result<&Ready, CfError> {
        match self {
            Self::Ready(ready) => Ok(ready),
            Self::Restoring(_) => Err(CfError::RestoreInProgress),
        }
    }

    /// The filter for a change, unless a restore is in progress; counts the write, which ends a
    /// dump in progress.
    pub(crate) fn ready_mut(&mut self) -> Result<&mut Ready, CfError> {
        match self {
            Self::Ready(ready) => {
                ready.writes = ready.writes.wrapping_add(1);
                Ok(ready)
            }
            Self::Restoring(_) => Err(CfError::RestoreInProgress),
        }
    }

    /// Bytes of memory the value holds (for `MEMORY USAGE`): every block it allocated, as the
    /// allocator counts it.
    pub(crate) fn memory_usage(&self) -> usize {
        match self {
            Self::Ready(ready) => ready.memory_usage(),
            Self::Restoring(restoring) => {
                block_size(std::mem::size_of::<Self>()) + block_size(restoring.body.capacity())
            }
        }
    }
}

impl Restoring {
    /// The filter, from all of its bytes; `None` if they are not a valid filter for the header.
    fn finish(header: &Header, body: &[u8]) -> Option<Ready> {
        let filter = filter_from_bytes(body).ok()?;
        let Header { max_iterations, expansion, deleted, .. } = *header;
        let settings = key_filter::settings(&filter, max_iterations, expansion)?;
        Some(Ready::new(filter, settings, deleted))
    }
}

/// A key's filter from bugu's bytes: a growing filter of either kind. A fixed filter's bytes are
/// refused by their header, unread: no command could have made one, and its settings (a bucket
/// count rather than a capacity to grow from) are none the module keeps.
fn filter_from_bytes(bytes: &[u8]) -> Result<AnyFilter, PersistError> {
    match FilterKind::detect(bytes)? {
        FilterKind::Growable | FilterKind::Expanding => AnyFilter::from_bytes(bytes),
        found => Err(PersistError::WrongKind { expected: FilterKind::Growable, found }),
    }
}

impl Clone for CfValue {
    fn clone(&self) -> Self {
        match self {
            Self::Ready(ready) => {
                Self::Ready(Ready::new(ready.filter.clone(), ready.settings, ready.deleted))
            }
            Self::Restoring(restoring) => Self::Restoring(Restoring {
                header: restoring.header,
                body: restoring.body.clone(),
                stamp: restoring.stamp,
            }),
        }
    }
}

impl Ready {
    /// A filter as it starts in this process: its write count starts anywhere, so that a dump
    /// begun on another value that held this key (before a `DEL`, a `RESTORE`, a restart) is not
    /// taken for a dump of this one.
    fn new(filter: AnyFilter, settings: Settings, deleted: u64) -> Self {
        Self { filter, settings, deleted, writes: random_start() }
    }

    /// The header that describes this filter.
    fn header(&self) -> Header {
        Header {
            expansion: self.settings.expansion,
            max_iterations: self.settings.max_iterations,
            deleted: self.deleted,
            body_len: self.filter.serialized_len() as u64,
        }
    }

    /// Bytes of memory the value holds, as the allocator counts them: the boxed value and every
    /// heap block of the filter, the working buffers of a chain's inserts included (a dump keeps
    /// no copy: its chunks are cut from the filter as they are asked for).
    fn memory_usage(&self) -> usize {
        let blocks: usize = self.filter.heap_blocks().into_iter().map(block_size).sum();
        block_size(std::mem::size_of::<CfValue>()) + blocks
    }

    /// What `CF.INFO` reports as `Size`: [`memory_usage`](Self::memory_usage) without the
    /// working buffers, which a saved and restored copy does not have until it needs them, so
    /// that identical filters report the same size.
    fn filter_bytes(&self) -> usize {
        let scratch: usize = self.filter.scratch_blocks().into_iter().map(block_size).sum();
        self.memory_usage() - scratch
    }
}

impl Ready {
    fn insert_error(&self, error: InsertError) -> CfError {
        match error {
            InsertError::CopyLimit { .. } => CfError::TooManyCopies,
            InsertError::OutOfMemory { .. } => CfError::OutOfMemory,
            _ if self.settings.expansion == 0 => CfError::Full,
            _ => CfError::MaxExpansions,
        }
    }
}

impl KeyFilter for Ready {
    fn add(&mut self, item: &[u8]) -> Result<(), CfError> {
        self.filter.insert_bytes(item).map_err(|error| self.insert_error(error))
    }

    fn add_unique(&mut self, item: &[u8]) -> Result<bool, CfError> {
        self.filter.insert_unique_bytes(item).map_err(|error| self.insert_error(error))
    }

    fn contains(&self, item: &[u8]) -> bool {
        self.filter.contains_bytes(item)
    }

    fn count(&self, item: &[u8]) -> u64 {
        self.filter.count_bytes(item) as u64
    }

    /// All at once, so that a grown filter has the reads of every item and level in flight
    /// together.
    fn contains_each(&self, items: &mut dyn Iterator<Item = &[u8]>) -> Vec<bool> {
        // A command's few items are hashed on the stack; more spill to the heap.
        let mut few = [0u64; 32];
        let mut many = Vec::new();
        let mut count = 0;
        for item in items {
            let hash = self.filter.hash_of_bytes(item);
            if count < few.len() {
                few[count] = hash;
            } else {
                if many.is_empty() {
                    many.extend_from_slice(&few);
                }
                many.push(hash);
            }
            count += 1;
        }
        let hashes = if count <= few.len() { &few[..count] } else { &many[..] };
        self.filter.contains_hash_batch(hashes)
    }

    /// In a chain, an item present in several levels is not removed: removing could take another
    /// item's copy.
    fn delete(&mut self, item: &[u8]) -> bool {
        let removed = self.filter.remove_bytes(item);
        self.deleted += u64::from(removed);
        removed
    }

    fn info(&self) -> Info {
        let summary = self.filter.summary();
        Info {
            size: self.filter_bytes() as u64,
            buckets: summary.buckets as u64,
            filters: summary.levels as u64,
            inserted: self.filter.len() as u64,
            deleted: self.deleted,
            bucket_size: self.settings.bucket_size,
            expansion: self.settings.expansion,
            max_iterations: self.settings.max_iterations,
            layout: match self.filter {
                AnyFilter::OneTable(_) => Info::ONE_TABLE,
                _ => Info::CHAIN,
            },
        }
    }

    fn dump_step(&self, iterator: i64) -> Result<DumpStep, CfError> {
        Ready::dump_step(self, iterator)
    }
}

/// A write count to start from, different in every value and every process.
fn random_start() -> u32 {
    RandomState::new().hash_one(0u8) as u32
}

#[cfg(test)]
mod tests;
