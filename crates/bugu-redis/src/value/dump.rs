//! `CF.SCANDUMP`, `CF.LOADCHUNK` and the chunks an AOF rewrite writes.
//!
//! A dump is the header (its first chunk), then the filter's bytes in chunks. Every chunk is cut
//! from the live filter as it is asked for: nothing is kept between calls, so a dump left half-way
//! costs no memory. An iterator names a place in a dump and the dump itself:
//!
//! - bits 0..41: one more than the offset in the filter's bytes where the next chunk starts (the
//!   header's iterator is 1: the bytes start at offset 0);
//! - bits 41..63: the dump's stamp, from the filter's count of writes when the dump began
//!   (1..=[`MAX_STAMP`]), or 0 in chunks no dump of this process made (an AOF rewrite's).
//!
//! A write to the filter between two calls changes its stamp, so the dump's next call is refused
//! (`CF.SCANDUMP` cannot resume from a filter that is no longer the one it began). A restore
//! takes the stamp of its first chunk and refuses a chunk of another dump; and a restore's last
//! chunk is checked against the checksum of bugu's format, which a mixture of two states fails.

use std::io::{self, Write};

use bugu::Persist;

use super::header::{Header, MAX_BODY_BYTES, MAX_STAMP, STAMP_BITS};
use super::{CfValue, Ready, Restoring};
use crate::error::CfError;

/// The smallest data chunk `CF.SCANDUMP` sends (the last one may be shorter).
pub(crate) const CHUNK_BYTES: usize = 1 << 20;
/// A larger filter is cut into at most this many data chunks: each chunk costs a pass over the
/// filter's bytes (bugu's writer checksums them on the way), so their number is bounded.
pub(super) const MAX_DATA_CHUNKS: usize = 32;
/// Bits of an iterator that hold the position: those below the stamp.
const POSITION_BITS: u32 = 63 - STAMP_BITS;
const POSITION_MASK: i64 = (1 << POSITION_BITS) - 1;
// Every position a dump names fits its bits.
const _: () = assert!(MAX_BODY_BYTES < POSITION_MASK as u64);

/// One step of a `CF.SCANDUMP`: the next iterator and the chunk, or the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DumpStep {
    Chunk { next: i64, data: Vec<u8> },
    Done,
}

/// An iterator's two parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cursor {
    pub(super) stamp: u32,
    pub(super) position: u64,
}

impl Cursor {
    pub(super) fn encode(self) -> i64 {
        (i64::from(self.stamp) << POSITION_BITS) | self.position as i64
    }

    /// `None` for a negative iterator.
    pub(super) fn decode(iterator: i64) -> Option<Self> {
        let stamp = u32::try_from(iterator >> POSITION_BITS).ok()?;
        Some(Self { stamp, position: (iterator & POSITION_MASK) as u64 })
    }
}

/// The length of the data chunks of a filter whose bytes are `len` long.
pub(super) fn chunk_len(len: usize) -> usize {
    CHUNK_BYTES.max(len.div_ceil(MAX_DATA_CHUNKS))
}

impl Ready {
    /// The stamp of a dump that begins now.
    fn stamp(&self) -> u32 {
        self.writes % MAX_STAMP + 1
    }

    /// One step of `CF.SCANDUMP`: iterator 0 gives the header; an iterator the dump returned gives
    /// the next chunk of the filter's bytes, or the end. Other iterators are refused, and so is
    /// every iterator of a dump once the filter has been written to.
    pub(crate) fn dump_step(&self, iterator: i64) -> Result<DumpStep, CfError> {
        let stamp = self.stamp();
        if iterator == 0 {
            let next = Cursor { stamp, position: 1 }.encode();
            return Ok(DumpStep::Chunk { next, data: self.header().encode().to_vec() });
        }
        let cursor = Cursor::decode(iterator).filter(|c| c.stamp != 0).ok_or(CfError::InvalidPosition)?;
        if cursor.stamp != stamp {
            return Err(CfError::DumpOutdated);
        }
        let len = self.filter.serialized_len();
        let offset = cursor.position.checked_sub(1).and_then(|offset| usize::try_from(offset).ok());
        match offset {
            Some(offset) if offset == len => Ok(DumpStep::Done),
            Some(offset) if offset < len && offset % chunk_len(len) == 0 => {
                let want = chunk_len(len).min(len - offset);
                let data = self.bytes_at(offset, want);
                // Never short: the filter writes all of its serialized length.
                if data.len() != want {
                    return Err(CfError::InvalidPosition);
                }
                let next = Cursor { stamp, position: (offset + data.len()) as u64 + 1 }.encode();
                Ok(DumpStep::Chunk { next, data })
            }
            _ => Err(CfError::InvalidPosition),
        }
    }

    /// `len` bytes of the filter's serialized form from `start` on (within it), written from the
    /// filter itself up to the window's end.
    fn bytes_at(&self, start: usize, len: usize) -> Vec<u8> {
        let mut window = Vec::new();
        let mut chunker = Chunker::new(start, len, |_, chunk| {
            window = chunk;
            false
        });
        // The chunker stops the writing with an error once it has the window.
        let _ = self.filter.write_to(&mut chunker);
        drop(chunker);
        window
    }
}

impl CfValue {
    /// Applies one `CF.LOADCHUNK` to the key's current value (`None` if the key is empty).
    /// A header chunk (position 1) starts a new restore on an empty key or one being restored:
    /// the new value is returned, for the caller to store. Every other chunk continues the
    /// restore in progress, in place, and returns `None`. On error nothing changed.
    pub(crate) fn load_chunk(
        current: Option<&mut CfValue>,
        iterator: i64,
        data: &[u8],
    ) -> Result<Option<Self>, CfError> {
        let cursor = Cursor::decode(iterator).ok_or(CfError::InvalidPosition)?;
        if cursor.position == 1 {
            if let Some(Self::Ready(_)) = current {
                return Err(CfError::Exists);
            }
            let header = Header::decode(data)?;
            return Ok(Some(Self::Restoring(Restoring { header, body: Vec::new(), stamp: cursor.stamp })));
        }
        let Some(current) = current else {
            return Err(CfError::InvalidPosition);
        };
        let Self::Restoring(restoring) = current else {
            return Err(CfError::InvalidPosition);
        };
        let end = cursor.position.checked_sub(1).ok_or(CfError::InvalidPosition)?;
        let start = end.checked_sub(data.len() as u64).ok_or(CfError::InvalidPosition)?;
        if start != restoring.body.len() as u64 || end > restoring.header.body_len {
            return Err(CfError::InvalidPosition);
        }
        if cursor.stamp != restoring.stamp {
            return Err(CfError::OtherDump);
        }
        if data.is_empty() {
            return Err(CfError::BadChunk);
        }
        if let Some(ready) = restoring.append(data)? {
            *current = Self::Ready(ready);
        }
        Ok(None)
    }

    /// Calls `emit` with each `(iterator, data)` of the `CF.LOADCHUNK` commands that restore the
    /// value, in chunks of [`CHUNK_BYTES`], streamed from the value (an AOF rewrite writes them).
    /// A restore in progress keeps its stamp, so that its client's next chunks still fit.
    pub(crate) fn for_each_restore_chunk(&self, mut emit: impl FnMut(i64, &[u8])) {
        let (header, stamp) = match self {
            Self::Ready(ready) => (ready.header(), 0),
            Self::Restoring(restoring) => (restoring.header, restoring.stamp),
        };
        emit(Cursor { stamp, position: 1 }.encode(), &header.encode());
        let mut chunker = Chunker::new(0, CHUNK_BYTES, |end, chunk| {
            emit(Cursor { stamp, position: end as u64 + 1 }.encode(), &chunk);
            true
        });
        // Neither writer fails: the chunker takes everything it is given.
        let _ = match self {
            Self::Ready(ready) => ready.filter.write_to(&mut chunker),
            Self::Restoring(restoring) => chunker.write_all(&restoring.body),
        };
        chunker.finish();
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
        match Self::finish(&self.header, &self.body) {
            Some(ready) => Ok(Some(ready)),
            None => {
                self.body.truncate(before);
                Err(CfError::BadChunk)
            }
        }
    }
}

/// A writer that skips its first `skip` bytes, cuts the rest into chunks of `chunk` bytes (the
/// last one, given by [`finish`](Self::finish), may be shorter) and hands each to `emit` with the
/// offset where it ends; once `emit` answers `false`, every write fails, which stops the writer.
struct Chunker<F: FnMut(usize, Vec<u8>) -> bool> {
    skip: usize,
    chunk: usize,
    /// The offset where the buffer starts.
    offset: usize,
    buffer: Vec<u8>,
    emit: F,
    stopped: bool,
}

impl<F: FnMut(usize, Vec<u8>) -> bool> Chunker<F> {
    fn new(skip: usize, chunk: usize, emit: F) -> Self {
        Self { skip, chunk, offset: skip, buffer: Vec::new(), emit, stopped: false }
    }

    /// Hands the buffer to `emit`.
    fn emit(&mut self) {
        let chunk = std::mem::take(&mut self.buffer);
        self.offset += chunk.len();
        self.stopped = !(self.emit)(self.offset, chunk);
    }

    /// Hands over the last, shorter chunk.
    fn finish(mut self) {
        if !self.buffer.is_empty() && !self.stopped {
            self.emit();
        }
    }
}

impl<F: FnMut(usize, Vec<u8>) -> bool> Write for Chunker<F> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.stopped {
            return Err(io::Error::other("the chunker has what it wanted"));
        }
        let skipped = self.skip.min(bytes.len());
        self.skip -= skipped;
        let mut rest = &bytes[skipped..];
        while !rest.is_empty() && !self.stopped {
            if self.buffer.capacity() == 0 {
                self.buffer.reserve_exact(self.chunk);
            }
            let (taken, left) = rest.split_at((self.chunk - self.buffer.len()).min(rest.len()));
            self.buffer.extend_from_slice(taken);
            rest = left;
            if self.buffer.len() == self.chunk {
                self.emit();
            }
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
