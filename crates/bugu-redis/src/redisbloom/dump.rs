//! RedisBloom's dump format, which `CF.SCANDUMP`, `CF.LOADCHUNK` and the AOF rewrite share.
//!
//! A dump is a 38-byte header at iterator 1, then the sub-filters' slots in order. An iterator
//! is one more than a byte offset in all the sub-filters' slots laid end to end; the iterator
//! sent with a chunk is the one after it. A sub-filter of up to 16 MiB is one chunk; a larger
//! one is cut into 16 MiB pieces. The header, little-endian:
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 8 | items |
//! | 8 | 8 | buckets of the first sub-filter |
//! | 16 | 8 | deletes |
//! | 24 | 8 | sub-filters |
//! | 32 | 2 | bucket size |
//! | 34 | 2 | max iterations |
//! | 36 | 2 | expansion |
//!
//! A restore is RedisBloom's: the header makes a filter of that shape with every slot empty,
//! and each chunk writes its bytes where its iterator says (within one sub-filter). There is no
//! checksum to check: the key answers from what has arrived.

use super::{RedisBloomFilter, Shape};
use crate::error::CfError;
use crate::value::dump::DumpStep;

/// Length of a dump's header.
pub(crate) const HEADER_BYTES: usize = 38;
/// The longest chunk of slots.
const CHUNK_BYTES: u64 = 16 << 20;

impl Shape {
    fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut header = [0; HEADER_BYTES];
        for (at, field) in [self.items, self.buckets, self.deletes, self.filters].into_iter().enumerate() {
            header[8 * at..8 * at + 8].copy_from_slice(&field.to_le_bytes());
        }
        // Each was validated to fit 16 bits.
        for (at, field) in [self.bucket_size, self.max_iterations, self.expansion].into_iter().enumerate() {
            header[32 + 2 * at..34 + 2 * at].copy_from_slice(&(field as u16).to_le_bytes());
        }
        header
    }

    fn decode(header: &[u8; HEADER_BYTES]) -> Self {
        let u64_at = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"));
        let u16_at = |at: usize| u64::from(u16::from_le_bytes([header[at], header[at + 1]]));
        Self {
            items: u64_at(0),
            buckets: u64_at(8),
            deletes: u64_at(16),
            filters: u64_at(24),
            bucket_size: u16_at(32),
            max_iterations: u16_at(34),
            expansion: u16_at(36),
        }
    }
}

/// The byte offset an iterator names (one less than it); `None` for iterators below 1.
fn offset_before(iterator: i64) -> Option<u64> {
    u64::try_from(iterator.checked_sub(1)?).ok()
}

impl RedisBloomFilter {
    /// A filter from a dump's header, every slot empty; `None` if the header is not one of a
    /// filter RedisBloom can have made (see [`RedisBloomFilter::new`]).
    pub(crate) fn from_header(header: &[u8; HEADER_BYTES]) -> Option<Self> {
        Self::empty(Shape::decode(header))
    }

    /// The sub-filter holding byte `offset` of the slots laid end to end, and the offset in it;
    /// `None` past the end.
    fn locate(&self, mut offset: u64) -> Option<(usize, u64)> {
        for (index, slots) in self.filters.iter().enumerate() {
            let len = slots.len() as u64;
            if offset < len {
                return Some((index, offset));
            }
            offset -= len;
        }
        None
    }

    /// The chunk that starts at `offset`, as (sub-filter, start in it, length); `None` at the
    /// end. An offset inside a sub-filter that is sent whole is no chunk's start.
    fn chunk_at(&self, offset: u64) -> Result<Option<(usize, usize, usize)>, CfError> {
        let Some((index, start)) = self.locate(offset) else {
            return if offset == self.slot_total() { Ok(None) } else { Err(CfError::InvalidPosition) };
        };
        let len = self.filters[index].len() as u64;
        if len <= CHUNK_BYTES && start != 0 {
            return Err(CfError::InvalidPosition);
        }
        let take = (len - start).min(CHUNK_BYTES);
        Ok(Some((index, start as usize, take as usize)))
    }

    fn slot_total(&self) -> u64 {
        self.filters.iter().map(|slots| slots.len() as u64).sum()
    }

    /// One step of `CF.SCANDUMP`: iterator 0 gives the header, the iterator sent with a chunk
    /// gives the next chunk, or the end. Unlike RedisBloom, a filter without items is dumped
    /// too, so that a restore gives back its shape.
    pub(crate) fn dump_step(&self, iterator: i64) -> Result<DumpStep, CfError> {
        if iterator == 0 {
            return Ok(DumpStep::Chunk { next: 1, data: self.shape().encode().to_vec() });
        }
        let offset = offset_before(iterator).ok_or(CfError::InvalidPosition)?;
        Ok(match self.chunk_at(offset)? {
            Some((index, start, len)) => DumpStep::Chunk {
                next: iterator + len as i64,
                data: self.filters[index][start..start + len].to_vec(),
            },
            None => DumpStep::Done,
        })
    }

    /// Calls `emit` with each `(iterator, data)` of the `CF.LOADCHUNK` commands that restore the
    /// filter (the AOF rewrite writes them), the same chunks `CF.SCANDUMP` sends.
    pub(crate) fn for_each_restore_chunk(&self, mut emit: impl FnMut(i64, &[u8])) {
        emit(1, &self.shape().encode());
        let mut offset = 0u64;
        while let Ok(Some((index, start, len))) = self.chunk_at(offset) {
            offset += len as u64;
            emit(offset as i64 + 1, &self.filters[index][start..start + len]);
        }
    }

    /// One `CF.LOADCHUNK` of slots (any iterator but the header's): its bytes end just before
    /// `iterator - 1` and must lie within one sub-filter.
    pub(crate) fn load_chunk(&mut self, iterator: i64, data: &[u8]) -> Result<(), CfError> {
        let end = offset_before(iterator).ok_or(CfError::BadChunk)?;
        let start =
            end.checked_sub(data.len() as u64).filter(|_| !data.is_empty()).ok_or(CfError::BadChunk)?;
        let (index, at) = self.locate(start).ok_or(CfError::BadChunk)?;
        let slots = &mut self.filters[index];
        let at = at as usize;
        let target = slots.get_mut(at..at + data.len()).ok_or(CfError::BadChunk)?;
        target.copy_from_slice(data);
        Ok(())
    }
}
