//! The value stored under a key: a bugu [`GrowableFilter`] with what RedisBloom's commands report
//! about it, or a filter being restored chunk by chunk through `CF.LOADCHUNK`.
//!
//! Nothing here touches Redis: the commands, RDB, AOF and `CF.SCANDUMP` all go through the one
//! saved form below, so every path is tested here without a server.
//!
//! # The saved form
//!
//! A 32-byte header, then the filter's own bytes (bugu's format, kind 2, with its checksum):
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 8 | magic `\x89BUGUCF\n` |
//! | 8 | 2 | version, `1` |
//! | 10 | 2 | `EXPANSION` as reported (0 or a power of two up to 32768) |
//! | 12 | 4 | `MAXITERATIONS` (1..=65535) |
//! | 16 | 8 | items deleted |
//! | 24 | 8 | length of the filter's bytes that follow |
//!
//! All little-endian. RDB stores the whole form as one string; `CF.SCANDUMP` sends the header as
//! its first chunk and the filter's bytes in chunks of at most [`CHUNK_BYTES`]; an AOF rewrite
//! writes the same chunks as `CF.LOADCHUNK` commands. A restore that has received only part of
//! the bytes is saved the same way (header, then the bytes so far), so it survives a restart.

use std::cell::RefCell;

use bugu::{Filter, FilterMut, GrowableFilter, InsertError};

use crate::alloc::block_size;
use crate::error::CfError;
use crate::settings::Settings;

/// The largest chunk `CF.SCANDUMP` sends.
pub(crate) const CHUNK_BYTES: usize = 1 << 20;
/// Length of the saved form's header.
pub(crate) const HEADER_BYTES: usize = 32;
const MAGIC: [u8; 8] = *b"\x89BUGUCF\n";
const VERSION: u16 = 1;
/// The longest filter a header may announce (1 TiB): a bound on what a restore may grow to.
const MAX_BODY_BYTES: u64 = 1 << 40;

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
    /// The filter's bytes while a `CF.SCANDUMP` walks them; dropped by any change and after the
    /// last chunk is sent.
    dump: RefCell<Option<Vec<u8>>>,
}

/// A restore that has received its header and some of the filter's bytes.
pub(crate) struct Restoring {
    header: Header,
    body: Vec<u8>,
}

/// The saved form's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Header {
    expansion: u64,
    max_iterations: u64,
    deleted: u64,
    body_len: u64,
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

/// One step of a `CF.SCANDUMP`: the next iterator and the chunk, or the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DumpStep {
    Chunk { next: i64, data: Vec<u8> },
    Done,
}

impl CfValue {
    /// An empty filter with these settings.
    pub(crate) fn reserve(settings: Settings) -> Result<Self, CfError> {
        let filter = settings.build()?;
        Ok(Self::Ready(Ready { filter, settings, deleted: 0, dump: RefCell::new(None) }))
    }

    /// The filter, unless a restore is in progress.
    pub(crate) fn ready(&self) -> Result<&Ready, CfError> {
        match self {
            Self::Ready(ready) => Ok(ready),
            Self::Restoring(_) => Err(CfError::RestoreInProgress),
        }
    }

    /// The filter for a change, unless a restore is in progress; drops a dump in progress.
    pub(crate) fn ready_mut(&mut self) -> Result<&mut Ready, CfError> {
        match self {
            Self::Ready(ready) => {
                ready.dump.get_mut().take();
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

    /// The saved form (RDB, `DUMP`, digests): the header, then the filter's bytes (or, while
    /// restoring, those received so far).
    pub(crate) fn to_saved(&self) -> Vec<u8> {
        let mut saved = Vec::new();
        self.write_saved(&mut saved);
        saved
    }

    fn write_saved(&self, out: &mut Vec<u8>) {
        match self {
            Self::Ready(ready) => {
                out.extend_from_slice(&ready.header().encode());
                match ready.dump.borrow().as_ref() {
                    Some(bytes) => out.extend_from_slice(bytes),
                    None => ready.filter.write_to(&mut *out).expect("writing to a Vec cannot fail"),
                }
            }
            Self::Restoring(restoring) => {
                out.extend_from_slice(&restoring.header.encode());
                out.extend_from_slice(&restoring.body);
            }
        }
    }

    /// A value from its saved form, validated as the library validates filter bytes; `None` if
    /// the bytes are not a saved value.
    pub(crate) fn from_saved(saved: &[u8]) -> Option<Self> {
        let (header, body) = saved.split_at_checked(HEADER_BYTES)?;
        let header = Header::decode(header).ok()?;
        let mut restoring = Restoring { header, body: Vec::new() };
        match restoring.append(body).ok()? {
            Some(ready) => Some(Self::Ready(ready)),
            None => Some(Self::Restoring(restoring)),
        }
    }

    /// Calls `emit` with each chunk an AOF rewrite replays: `(iterator, data)` pairs for
    /// `CF.LOADCHUNK`, the same as a complete `CF.SCANDUMP` would give.
    pub(crate) fn for_each_restore_chunk(&self, mut emit: impl FnMut(i64, &[u8])) {
        let saved = self.to_saved();
        let (header, body) = saved.split_at(HEADER_BYTES);
        emit(1, header);
        let mut offset = 0;
        for chunk in body.chunks(CHUNK_BYTES) {
            offset += chunk.len();
            emit(iterator_after(offset), chunk);
        }
    }

    /// Applies one `CF.LOADCHUNK` to the key's current value (`None` if the key is empty).
    /// Iterator 1 carries a header and starts a new restore: the new value is returned, for the
    /// caller to store in place of whatever the key held. Every other chunk continues the restore
    /// in progress, in place, and returns `None`. On error nothing changed.
    pub(crate) fn load_chunk(
        current: Option<&mut CfValue>,
        iterator: i64,
        data: &[u8],
    ) -> Result<Option<Self>, CfError> {
        if iterator == 1 {
            let header = Header::decode(data)?;
            return Ok(Some(Self::Restoring(Restoring { header, body: Vec::new() })));
        }
        let Some(current) = current else {
            return Err(CfError::InvalidPosition);
        };
        let Self::Restoring(restoring) = current else {
            return Err(CfError::InvalidPosition);
        };
        let end = iterator
            .checked_sub(1)
            .and_then(|end| u64::try_from(end).ok())
            .ok_or(CfError::InvalidPosition)?;
        let start = end.checked_sub(data.len() as u64).ok_or(CfError::InvalidPosition)?;
        if start != restoring.body.len() as u64 || end > restoring.header.body_len {
            return Err(CfError::InvalidPosition);
        }
        if data.is_empty() {
            return Err(CfError::BadChunk);
        }
        if let Some(ready) = restoring.append(data)? {
            *current = Self::Ready(ready);
        }
        Ok(None)
    }
}

impl Restoring {
    /// Adds bytes of the filter (their position was checked); once all have arrived, reads and
    /// checks the filter and returns it. On error the bytes are taken back off.
    fn append(&mut self, data: &[u8]) -> Result<Option<Ready>, CfError> {
        let before = self.body.len();
        if before as u64 + data.len() as u64 > self.header.body_len {
            return Err(CfError::BadChunk);
        }
        self.body.try_reserve_exact(data.len()).map_err(|_| CfError::OutOfMemory)?;
        self.body.extend_from_slice(data);
        if (self.body.len() as u64) < self.header.body_len {
            return Ok(None);
        }
        match self.finish() {
            Some(ready) => Ok(Some(ready)),
            None => {
                self.body.truncate(before);
                Err(CfError::BadChunk)
            }
        }
    }

    /// The filter, from all of its bytes; `None` if they are not a valid filter for the header.
    fn finish(&self) -> Option<Ready> {
        let filter = GrowableFilter::from_bytes(&self.body).ok()?;
        let Header { max_iterations, expansion, deleted, .. } = self.header;
        let settings = Settings::of_filter(&filter, max_iterations, expansion)?;
        Some(Ready { filter, settings, deleted, dump: RefCell::new(None) })
    }
}

impl Clone for CfValue {
    fn clone(&self) -> Self {
        match self {
            Self::Ready(ready) => Self::Ready(Ready {
                filter: ready.filter.clone(),
                settings: ready.settings,
                deleted: ready.deleted,
                dump: RefCell::new(None),
            }),
            Self::Restoring(restoring) => {
                Self::Restoring(Restoring { header: restoring.header, body: restoring.body.clone() })
            }
        }
    }
}

/// The iterator that follows a chunk ending at byte `offset` of the filter's bytes.
fn iterator_after(offset: usize) -> i64 {
    offset as i64 + 1
}

impl Ready {
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

    /// Bytes of memory the value holds, as the allocator counts them: [`filter_bytes`], each
    /// level's insert search's scratch space, and a dump's copy while one is under way.
    ///
    /// [`filter_bytes`]: Self::filter_bytes
    fn memory_usage(&self) -> usize {
        let scratch: usize = self.filter.levels().iter().map(|level| block_size(level.scratch_bytes())).sum();
        let dump = self.dump.borrow().as_ref().map_or(0, |dump| block_size(dump.capacity()));
        self.filter_bytes() + scratch + dump
    }

    /// Bytes of memory the filter itself holds, as the allocator counts them: the boxed value,
    /// each level's table and the list of levels. What `CF.INFO` reports as `Size`: it leaves out
    /// the working buffers, which a saved and restored copy does not have until it needs them,
    /// so that identical filters report the same size.
    fn filter_bytes(&self) -> usize {
        let levels = self.filter.levels();
        let tables: usize = levels.iter().map(|level| block_size(level.memory_bytes())).sum();
        block_size(std::mem::size_of::<CfValue>()) + tables + block_size(std::mem::size_of_val(levels))
    }

    pub(crate) fn info(&self) -> Info {
        let buckets: usize = self.filter.levels().iter().map(|level| level.bucket_count()).sum();
        Info {
            size: self.filter_bytes() as u64,
            buckets: buckets as u64,
            filters: self.filter.level_count() as u64,
            inserted: self.filter.len() as u64,
            deleted: self.deleted,
            bucket_size: self.settings.bucket_size,
            expansion: self.settings.expansion,
            max_iterations: self.settings.max_iterations,
        }
    }

    fn header(&self) -> Header {
        Header {
            expansion: self.settings.expansion,
            max_iterations: self.settings.max_iterations,
            deleted: self.deleted,
            body_len: self.filter.serialized_len() as u64,
        }
    }

    /// One step of `CF.SCANDUMP`: iterator 0 gives the header (next iterator 1); iterator `i`
    /// gives the filter's bytes from offset `i - 1`, at most [`CHUNK_BYTES`] of them. Only the
    /// iterators a dump returns are accepted: offsets at a chunk boundary.
    pub(crate) fn dump_step(&self, iterator: i64) -> Result<DumpStep, CfError> {
        if iterator == 0 {
            return Ok(DumpStep::Chunk { next: 1, data: self.header().encode().to_vec() });
        }
        let offset = iterator.checked_sub(1).and_then(|offset| usize::try_from(offset).ok());
        let len = self.filter.serialized_len();
        match offset {
            Some(offset) if offset == len => Ok(DumpStep::Done),
            Some(offset) if offset < len && offset % CHUNK_BYTES == 0 => {
                let mut dump = self.dump.borrow_mut();
                let bytes = dump.get_or_insert_with(|| self.filter.to_bytes());
                let end = (offset + CHUNK_BYTES).min(len);
                let data = bytes[offset..end].to_vec();
                if end == len {
                    *dump = None;
                }
                Ok(DumpStep::Chunk { next: iterator_after(end), data })
            }
            _ => Err(CfError::InvalidPosition),
        }
    }
}

impl Header {
    fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut bytes = [0; HEADER_BYTES];
        bytes[..8].copy_from_slice(&MAGIC);
        bytes[8..10].copy_from_slice(&VERSION.to_le_bytes());
        // Both were validated into these ranges.
        bytes[10..12].copy_from_slice(&(self.expansion as u16).to_le_bytes());
        bytes[12..16].copy_from_slice(&(self.max_iterations as u32).to_le_bytes());
        bytes[16..24].copy_from_slice(&self.deleted.to_le_bytes());
        bytes[24..32].copy_from_slice(&self.body_len.to_le_bytes());
        bytes
    }

    fn decode(bytes: &[u8]) -> Result<Self, CfError> {
        let bytes: &[u8; HEADER_BYTES] = bytes.try_into().map_err(|_| CfError::InvalidHeader)?;
        let u16_at = |at: usize| u64::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
        let u32_at =
            |at: usize| u64::from(u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")));
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let header = Self {
            expansion: u16_at(10),
            max_iterations: u32_at(12),
            deleted: u64_at(16),
            body_len: u64_at(24),
        };
        let valid = bytes[..8] == MAGIC
            && u16_at(8) == u64::from(VERSION)
            && (header.expansion == 0 || (header.expansion.is_power_of_two() && header.expansion <= 32_768))
            && (1..=65_535).contains(&header.max_iterations)
            && (1..=MAX_BODY_BYTES).contains(&header.body_len);
        if valid { Ok(header) } else { Err(CfError::InvalidHeader) }
    }
}

#[cfg(test)]
mod tests;
