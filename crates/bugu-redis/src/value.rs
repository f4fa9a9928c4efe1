//! The value stored under a key: a bugu [`GrowableFilter`] with what RedisBloom's commands report
//! about it, or a filter being restored chunk by chunk through `CF.LOADCHUNK`.
//!
//! Nothing here touches Redis, so every path is tested here without a server:
//! - `saved`: the saved form (RDB, `DUMP`, digests) and the header it shares with a dump;
//! - `dump`: `CF.SCANDUMP`'s chunks, `CF.LOADCHUNK`'s restore and the AOF rewrite's chunks.

use bugu::{Filter, FilterMut, GrowableFilter, InsertError};

use crate::error::CfError;
use crate::settings::Settings;

mod dump;
mod saved;

pub(crate) use dump::DumpStep;
pub(crate) use saved::Encoding;
use saved::Header;

/// The value under a key.
pub(crate) enum CfValue {
    Ready(Ready),
    Restoring(Restoring),
}

/// A filter that answers commands.
pub(crate) struct Ready {
    filter: GrowableFilter,
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
}

impl CfValue {
    /// An empty filter with these settings.
    pub(crate) fn reserve(settings: Settings) -> Result<Self, CfError> {
        let filter = settings.build()?;
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

    /// Bytes of memory the value holds (for `MEMORY USAGE`).
    pub(crate) fn memory_usage(&self) -> usize {
        std::mem::size_of::<Self>()
            + match self {
                Self::Ready(ready) => ready.filter.memory_bytes(),
                Self::Restoring(restoring) => restoring.body.capacity(),
            }
    }
}

impl Restoring {
    /// The filter, from all of its bytes; `None` if they are not a valid filter for the header.
    fn finish(header: &Header, body: &[u8]) -> Option<Ready> {
        let filter = GrowableFilter::from_bytes(body).ok()?;
        let Header { max_iterations, expansion, deleted, .. } = *header;
        let settings = Settings::of_filter(&filter, max_iterations, expansion)?;
        Some(Ready::new(filter, settings, deleted))
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
    fn new(filter: GrowableFilter, settings: Settings, deleted: u64) -> Self {
        Self { filter, settings, deleted, writes: dump::random_start() }
    }

    /// Adds one copy of an item.
    pub(crate) fn add(&mut self, item: &[u8]) -> Result<(), CfError> {
        let hash = self.filter.hash_of_bytes(item);
        self.filter.insert_hash(hash).map_err(|error| self.insert_error(error))
    }

    /// Adds an item unless it may be present already; `true` if it was added.
    pub(crate) fn add_unique(&mut self, item: &[u8]) -> Result<bool, CfError> {
        let hash = self.filter.hash_of_bytes(item);
        self.filter.insert_unique_hash(hash).map_err(|error| self.insert_error(error))
    }

    fn insert_error(&self, error: InsertError) -> CfError {
        match error {
            InsertError::CopyLimit { .. } => CfError::TooManyCopies,
            InsertError::OutOfMemory { .. } => CfError::OutOfMemory,
            _ if self.settings.expansion == 0 => CfError::Full,
            _ => CfError::MaxExpansions,
        }
    }

    /// Whether an item may be present.
    pub(crate) fn contains(&self, item: &[u8]) -> bool {
        self.filter.contains_bytes(item)
    }

    /// How many copies of an item may be present (an upper bound).
    pub(crate) fn count(&self, item: &[u8]) -> usize {
        self.filter.count_bytes(item)
    }

    /// Removes one copy of an item; `false` if none was removed (absent, or present in several
    /// levels, where removing could take another item's copy).
    pub(crate) fn delete(&mut self, item: &[u8]) -> bool {
        let hash = self.filter.hash_of_bytes(item);
        let removed = self.filter.remove_hash(hash);
        self.deleted += u64::from(removed);
        removed
    }

    pub(crate) fn info(&self) -> Info {
        let buckets: usize = self.filter.levels().iter().map(|level| level.bucket_count()).sum();
        Info {
            size: self.filter.memory_bytes() as u64,
            buckets: buckets as u64,
            filters: self.filter.level_count() as u64,
            inserted: self.filter.len() as u64,
            deleted: self.deleted,
            bucket_size: self.settings.bucket_size,
            expansion: self.settings.expansion,
            max_iterations: self.settings.max_iterations,
        }
    }
}

#[cfg(test)]
mod tests;
