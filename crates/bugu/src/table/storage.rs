//! Where a table's bytes live: the two traits every probe and every write go through.
//!
//! A table reads its buckets as little-endian windows of 8 or 16 bytes ([`Storage::load`]) and
//! writes a fingerprint by replacing some bits of such a window ([`StorageMut::store_bits`]).
//! Any byte slice stores a table (an owned `Vec<u8>`, a borrowed `&[u8]` of a memory-mapped
//! file); so do the atomic words of a table shared between threads ([`super::shared`]), which
//! implement the same two traits, so that the probes and the insertion algorithm are written once.

use super::swar::Word;

/// Bytes a table can be read from.
pub(crate) trait Storage {
    /// The `W::BITS / 8` little-endian bytes starting at byte `offset`.
    fn load<W: Word>(&self, offset: usize) -> W;
    /// The address of byte `offset`, only to hint the CPU to fetch it (never dereferenced).
    fn address(&self, offset: usize) -> *const u8;
    /// Bytes of memory the storage takes.
    fn memory_bytes(&self) -> usize;
}

/// Bytes a table can be written to.
pub(crate) trait StorageMut: Storage {
    /// Replaces the bits set in `mask` of the window at byte `offset` by those of `value`
    /// (which has no bits outside `mask`); the other bits of the window are left as they are.
    fn store_bits<W: Word>(&mut self, offset: usize, value: W, mask: W);
}

impl<S: AsRef<[u8]>> Storage for S {
    #[inline(always)]
    fn load<W: Word>(&self, offset: usize) -> W {
        W::load(self.as_ref(), offset)
    }

    #[inline(always)]
    fn address(&self, offset: usize) -> *const u8 {
        self.as_ref().as_ptr().wrapping_add(offset)
    }

    fn memory_bytes(&self) -> usize {
        self.as_ref().len()
    }
}

impl StorageMut for Vec<u8> {
    #[inline(always)]
    fn store_bits<W: Word>(&mut self, offset: usize, value: W, mask: W) {
        let window = W::load(self, offset);
        ((window & !mask) | value).store(self, offset);
    }
}
