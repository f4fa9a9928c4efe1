//! Where a table's bytes live: the two traits every probe and every write go through.
//!
//! A table reads its buckets as little-endian windows of 8 or 16 bytes ([`Storage::load`]) and
//! writes a fingerprint by replacing some bits of such a window ([`StorageMut::store_bits`]).
//! Any byte slice stores a table (an owned `Vec<u8>`, a borrowed `&[u8]` of a memory-mapped
//! file); so do the atomic words of a table shared between threads ([`super::atomic`]), which
//! implement the same two traits, so that the probes and the insertion algorithm are written once.

use super::kernels::Word;

/// Bytes a table can be read from.
///
/// # Safety
///
/// The table's unchecked loads trust an implementor's answers. An implementor promises:
/// - [`region`](Self::region) gives a [`Region`] over the storage's bytes, whose
///   [`len`](Region::len) the storage holds at least while it is borrowed;
/// - if [`KEEPS_ITS_LENGTH`](Self::KEEPS_ITS_LENGTH) is true, every region it gives is at least
///   as long as the first one (its length never shrinks), so a length checked once, when a table
///   is built over it, holds for every later lookup;
/// - [`StorageMut::fill_zero_bits_unchecked`], if it implements that too, is sound for every
///   window inside its region as last taken.
pub(crate) unsafe trait Storage {
    /// Whether [`region`](Self::region) is always at least as long as the table built over this
    /// storage (checked when the table is built): true only for storage this crate allocates for
    /// a table and never resizes (the shared table's atomic words). Unsafe code relies on it: a
    /// lookup over such storage makes no length check of its own. Any other storage (an
    /// `AsRef<[u8]>` can answer differently on each call) is checked on every lookup.
    const KEEPS_ITS_LENGTH: bool = false;

    /// The storage's bytes, taken once for the loads of one lookup (see [`Region`]).
    type Region<'a>: Region
    where
        Self: 'a;

    /// The `W::BITS / 8` little-endian bytes starting at byte `offset`.
    fn load<W: Word>(&self, offset: usize) -> W;
    /// The bytes as one region, for loads its caller has bounds-checked as a whole.
    fn region(&self) -> Self::Region<'_>;
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
    /// Sets the bits of `value` in the window at byte `offset`, where they are all zero (a free
    /// slot's): [`store_bits`](Self::store_bits) with `value` as its mask, which a byte slice
    /// does with one `or` into memory and without a bounds check.
    ///
    /// # Safety
    /// The window is inside the storage's [`region`](Storage::region) as last taken (which
    /// storage this crate writes never shrinks): `offset + W::BITS / 8 <= region().len()`.
    unsafe fn fill_zero_bits_unchecked<W: Word>(&mut self, offset: usize, value: W);
}

/// A storage's bytes taken once, so that one length check covers every load a lookup makes from
/// them: a lookup checks [`len`](Region::len) once and then loads without checks (see
/// [`Table::contains_hash`](super::Table::contains_hash)).
///
/// # Safety
///
/// An implementor promises that [`load_unchecked`](Region::load_unchecked) is sound for every
/// `offset` with `offset + W::BITS / 8 <= self.len()`: [`len`](Region::len) never overstates the
/// bytes it may read.
pub(crate) unsafe trait Region: Copy {
    /// Bytes from the start that [`load_unchecked`](Region::load_unchecked) may read.
    fn len(self) -> usize;
    /// The `W::BITS / 8` little-endian bytes starting at byte `offset`.
    ///
    /// # Safety
    /// `offset + W::BITS / 8 <= self.len()`.
    unsafe fn load_unchecked<W: Word>(self, offset: usize) -> W;
}

// SAFETY: `len` is the slice's length, and `load_unchecked` reads inside it when the caller keeps
// its promise.
unsafe impl Region for &[u8] {
    #[inline(always)]
    fn len(self) -> usize {
        <[u8]>::len(self)
    }

    #[inline(always)]
    unsafe fn load_unchecked<W: Word>(self, offset: usize) -> W {
        debug_assert!(offset + W::BITS as usize / 8 <= self.len());
        // SAFETY: the caller guarantees that the `W::BITS / 8` bytes from `offset` are inside the
        // slice; `read_unaligned` needs no alignment, and any bytes are a valid array of `u8`.
        let bytes = unsafe { self.as_ptr().add(offset).cast::<W::Bytes>().read_unaligned() };
        W::from_le_bytes(bytes)
    }
}

// SAFETY: the region is the slice `as_ref` gives, borrowed with the storage; `KEEPS_ITS_LENGTH` is
// false (an `AsRef` may answer differently on each call, so every lookup checks the length).
unsafe impl<S: AsRef<[u8]>> Storage for S {
    type Region<'a>
        = &'a [u8]
    where
        S: 'a;

    #[inline(always)]
    fn load<W: Word>(&self, offset: usize) -> W {
        W::load(self.as_ref(), offset)
    }

    #[inline(always)]
    fn region(&self) -> &[u8] {
        self.as_ref()
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

    #[inline(always)]
    unsafe fn fill_zero_bits_unchecked<W: Word>(&mut self, offset: usize, value: W) {
        debug_assert!(offset + W::BITS as usize / 8 <= self.len());
        // SAFETY: the caller guarantees that the `W::BITS / 8` bytes from `offset` are inside the
        // vector; unaligned reads and writes need no alignment, and any bytes are valid `u8`s.
        unsafe {
            let window = self.as_mut_ptr().add(offset).cast::<W::Bytes>();
            window.write_unaligned((W::from_le_bytes(window.read_unaligned()) | value).to_le_bytes());
        }
    }
}
