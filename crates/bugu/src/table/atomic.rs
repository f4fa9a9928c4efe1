//! A table's bytes in atomic words, so that threads can share it: the storage of the concurrent
//! filter's table. Which writer may write which word, and how readers check what they read, is
//! the protocol of `crate::concurrent`; this module only keeps the layout that protocol relies on.
//!
//! fingerprints. Every atomic of the concurrent filter lives here.
//!
//! # Layout
//!
//! The packed bytes are held in `AtomicU64` words, byte `i` of the table being byte `i % 8`
//! (little-endian) of word `i / 8`: converting from and to an owned table is a copy, and a window
//! load reads the one or two (three for a 16-byte window) words it overlaps. Buckets are grouped in
//! blocks of [`BLOCK_BUCKETS`] (64) buckets; since 64 buckets of any width take a whole number of
//! 64-bit words, every word belongs to exactly one block. A block belongs to one stripe (`block mod
//! stripes`), so a word is only ever written by the holder of its stripe's lock, and a write can
//! replace a whole word (load, merge, store) without losing a neighbour's concurrent update.

use super::alloc::{AllocFailed, advise_huge_pages, reserve_buffer};
use super::kernels::Word;
use super::storage::{Region, Storage, StorageMut};

#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, Ordering};

/// Buckets per block: 64 buckets of `bits` bits take `bits` whole 64-bit words.
pub(crate) const BLOCK_BUCKETS: usize = 64;

/// A table's bytes in atomic 64-bit words, plus one word of slack so that every window load
/// reads whole words.
pub(crate) struct AtomicBytes {
    words: Box<[AtomicU64]>,
}

impl AtomicBytes {
    /// Words holding a copy of `bytes`; [`AllocFailed`] if they cannot be allocated.
    pub(crate) fn copy_of(bytes: &[u8]) -> Result<Self, AllocFailed> {
        let count = bytes.len().div_ceil(8) + 1;
        let mut words: Vec<AtomicU64> = Vec::new();
        words.try_reserve_exact(count).map_err(|_| AllocFailed { bytes: count * 8 })?;
        advise_huge_pages(words.as_ptr().cast(), count * 8);
        words.extend(bytes.chunks(8).map(|chunk| {
            let mut raw = [0u8; 8];
            raw[..chunk.len()].copy_from_slice(chunk);
            AtomicU64::new(u64::from_le_bytes(raw))
        }));
        words.push(AtomicU64::new(0));
        Ok(AtomicBytes { words: words.into_boxed_slice() })
    }

    /// `len` zero bytes (and the slack word), allocated zeroed: each page is first written by
    /// the thread that first stores to it, as an owned table's is. (Under loom, copied in.)
    pub(crate) fn zeroed(len: usize) -> Result<Self, AllocFailed> {
        #[cfg(not(loom))]
        return Ok(AtomicBytes {
            words: super::alloc::zeroed_buffer(len.div_ceil(8) + 1)?.into_boxed_slice(),
        });
        #[cfg(loom)]
        AtomicBytes::copy_of(&vec![0; len])
    }

    /// The first `len` bytes, copied out; [`AllocFailed`] if the copy cannot be allocated.
    pub(crate) fn copy_out(&self, len: usize) -> Result<Vec<u8>, AllocFailed> {
        let mut bytes = reserve_buffer(len)?;
        for word in &self.words[..len.div_ceil(8)] {
            bytes.extend_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
        }
        bytes.truncate(len);
        Ok(bytes)
    }

    /// Gives the first `len` bytes to `sink` in chunks of a few KiB, in order: a copy of the
    /// table streamed out without a buffer of its size.
    pub(crate) fn stream_out<E>(
        &self,
        len: usize,
        mut sink: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        const CHUNK_WORDS: usize = 1024;
        let mut chunk = [0u8; CHUNK_WORDS * 8];
        let mut left = len;
        for words in self.words[..len.div_ceil(8)].chunks(CHUNK_WORDS) {
            for (bytes, word) in chunk.chunks_exact_mut(8).zip(words) {
                bytes.copy_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
            }
            let filled = (words.len() * 8).min(left);
            sink(&chunk[..filled])?;
            left -= filled;
        }
        Ok(())
    }

    /// Sets the `width` bits from bit `bit` of the table (a slot) to `value` if they are all zero;
    /// `false`, with nothing changed, if one is set. Only the holder of the lock of the stripe
    /// these bits belong to calls it (a slot's bits lie in its bucket's block, so in one stripe's
    /// words): the concurrent insert's step under its lock, which the free slot it found may have
    /// been taken before. The slot's one or two words are loaded, checked and stored, and no other.
    #[inline(always)]
    pub(crate) fn set_bits_if_zero(&self, bit: usize, width: u32, value: u64) -> bool {
        debug_assert!(width < 64 && value >> width == 0);
        let (first, at) = (bit / 64, (bit % 64) as u32);
        // One bounds check for both words (the slack word makes the second exist for any slot).
        let [low, high] = &self.words[first..first + 2] else { unreachable!("a range of two") };
        let mask = (1u64 << width) - 1;
        let old = low.load(Ordering::Relaxed);
        if at + width <= 64 {
            if (old >> at) & mask != 0 {
                return false;
            }
            set_zero_bits(low, old, value << at);
            return true;
        }
        // The slot spans two words: its low `64 - at` bits in the first, the rest in the second.
        let old_high = high.load(Ordering::Relaxed);
        if (old >> at | old_high << (64 - at)) & mask != 0 {
            return false;
        }
        set_zero_bits(low, old, value << at);
        set_zero_bits(high, old_high, value >> (64 - at));
        true
    }

    /// The 8 bytes starting at byte `offset`, from the two words they overlap.
    #[inline(always)]
    fn load_u64(&self, offset: usize) -> u64 {
        // One bounds check for both words.
        assert!(offset / 8 + 1 < self.words.len(), "a load beyond the table's words");
        // SAFETY: both words exist (just checked).
        unsafe { read_u64(&self.words, offset) }
    }

    /// The `W::BITS / 8` bytes starting at byte `offset`, from the words they overlap, each 8
    /// bytes loaded by `load_u64`.
    #[inline(always)]
    fn load_with<W: Word>(offset: usize, load_u64: impl Fn(usize) -> u64) -> W {
        let low = load_u64(offset) as u128;
        match W::BITS {
            64 => W::from_u128(low),
            _ => W::from_u128(low | (load_u64(offset + 8) as u128) << 64),
        }
    }
}

/// The 8 bytes starting at byte `offset` of `words`, little-endian, by one unaligned load.
///
/// Against two atomic loads of the words and a double-width shift (the portable version below),
/// this saves instructions and a register per bucket, which concurrent lookups far from the
/// caches feel (`docs/concurrency.md`). Miri and loom cannot run inline assembly; they check the
/// portable version.
///
/// # Safety
///
/// Words `offset / 8` and `offset / 8 + 1` exist.
#[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
#[inline(always)]
unsafe fn read_u64(words: &[AtomicU64], offset: usize) -> u64 {
    debug_assert!(offset / 8 + 1 < words.len());
    let bytes = words.as_ptr().cast::<u8>().wrapping_add(offset);
    let value: u64;
    // SAFETY: the 8 bytes lie inside the two words, which the caller guarantees exist, so they
    // are readable. Writers store to these words concurrently (module docs): the load must have
    // the effect of atomic loads, and it has that of the portable version's two relaxed loads.
    // x86-64 reads a load's part within each cache line at once, so every byte comes back as some
    // store to its word (or the initial value) left it, and the two words' parts are read in some
    // order, which two relaxed loads of different words allow too. The block only reads memory
    // (`readonly`); without `pure` it has effects, so it is neither dropped nor moved across the
    // fences and move-word loads around it.
    unsafe {
        std::arch::asm!(
            "mov {value}, qword ptr [{bytes}]",
            bytes = in(reg) bytes,
            value = lateout(reg) value,
            options(nostack, preserves_flags, readonly),
        );
    }
    value
}

/// The 8 bytes starting at byte `offset` of `words`, from the two words they overlap: where
/// inline assembly does not run (Miri, loom, other targets).
///
/// # Safety
///
/// Words `offset / 8` and `offset / 8 + 1` exist.
#[cfg(not(all(target_arch = "x86_64", not(loom), not(miri))))]
#[inline(always)]
unsafe fn read_u64(words: &[AtomicU64], offset: usize) -> u64 {
    // SAFETY: the caller's guarantee, passed on.
    unsafe { read_u64_from_pair(words, offset) }
}

/// The 8 bytes starting at byte `offset` of `words`, by two relaxed loads of the words they
/// overlap and a shift.
///
/// # Safety
///
/// Words `offset / 8` and `offset / 8 + 1` exist.
#[cfg_attr(all(target_arch = "x86_64", not(loom), not(miri), not(test)), allow(dead_code))]
#[inline(always)]
unsafe fn read_u64_from_pair(words: &[AtomicU64], offset: usize) -> u64 {
    debug_assert!(offset / 8 + 1 < words.len());
    // SAFETY: the caller guarantees that both words exist.
    let (low, high) = unsafe { (words.get_unchecked(offset / 8), words.get_unchecked(offset / 8 + 1)) };
    let pair = (high.load(Ordering::Relaxed) as u128) << 64 | low.load(Ordering::Relaxed) as u128;
    // A double-width shift: one instruction on x86-64.
    (pair >> ((offset % 8) as u32 * 8)) as u64
}

/// The words as a region: a load of 8 bytes reads the word after them too, so the last word
/// (the slack word) is not counted in the length.
// SAFETY: `len` counts every word but the last, and `load_unchecked` reads a window and, at
// most, the word after it (below).
unsafe impl Region for &AtomicBytes {
    #[inline(always)]
    fn len(self) -> usize {
        (self.words.len() - 1) * 8
    }

    #[inline(always)]
    unsafe fn load_unchecked<W: Word>(self, offset: usize) -> W {
        debug_assert!(offset + W::BITS as usize / 8 <= self.len());
        AtomicBytes::load_with(offset, |offset| {
            // SAFETY: the caller guarantees `offset + 8 <= len()` for every 8 bytes loaded, so
            // `offset / 8 + 1 <= len() / 8 = words.len() - 1`: both words exist.
            unsafe { read_u64(&self.words, offset) }
        })
    }
}

// SAFETY: the region is the words themselves; they are a private boxed slice, allocated once and
// never resized, so `KEEPS_ITS_LENGTH` holds. `fill_zero_bits_unchecked` (of `&AtomicBytes`) is
// the checked `store_bits`.
unsafe impl Storage for AtomicBytes {
    // The words are a private boxed slice, allocated once for a table and never resized; the
    // shared table checks their length against its table's when it is built (`SharedTable::over`).
    const KEEPS_ITS_LENGTH: bool = true;

    type Region<'a> = &'a AtomicBytes;

    #[inline(always)]
    fn load<W: Word>(&self, offset: usize) -> W {
        AtomicBytes::load_with(offset, |offset| self.load_u64(offset))
    }

    #[inline(always)]
    fn region(&self) -> &AtomicBytes {
        self
    }

    #[inline(always)]
    fn address(&self, offset: usize) -> *const u8 {
        self.words.as_ptr().cast::<u8>().wrapping_add(offset)
    }

    fn memory_bytes(&self) -> usize {
        self.words.len() * 8
    }
}

// SAFETY: as for `AtomicBytes`, whose answers these are.
unsafe impl Storage for &AtomicBytes {
    type Region<'a>
        = &'a AtomicBytes
    where
        Self: 'a;

    #[inline(always)]
    fn load<W: Word>(&self, offset: usize) -> W {
        (**self).load(offset)
    }

    #[inline(always)]
    fn region(&self) -> &AtomicBytes {
        self
    }

    #[inline(always)]
    fn address(&self, offset: usize) -> *const u8 {
        (**self).address(offset)
    }

    fn memory_bytes(&self) -> usize {
        (**self).memory_bytes()
    }
}

/// Writes through a shared reference: only by the holder of the lock of the stripe the written
/// bits belong to (see the module docs), which the concurrent filter's write guard ensures
/// (`crate::concurrent`).
impl StorageMut for &AtomicBytes {
    #[inline(always)]
    fn store_bits<W: Word>(&mut self, offset: usize, value: W, mask: W) {
        let (first, shift) = (offset / 8, (offset % 8) as u32 * 8);
        let (mask, value) = (mask.to_u128(), value.to_u128());
        // The window's bits as they fall on its first, second and third word.
        let on_word = |bits: u128| {
            let beyond = if shift == 0 { 0 } else { (bits >> (128 - shift)) as u64 };
            [(bits << shift) as u64, ((bits << shift) >> 64) as u64, beyond]
        };
        for (k, (mask, value)) in on_word(mask).into_iter().zip(on_word(value)).enumerate() {
            // Words without bits to change are not touched: they may belong to another block.
            if mask != 0 {
                replace_bits(&self.words[first + k], mask, value);
            }
        }
    }

    /// Checked (it is the safe [`store_bits`](StorageMut::store_bits)): the concurrent filter's
    /// writes take their locks first, and their bounds checks cost little beside.
    #[inline(always)]
    unsafe fn fill_zero_bits_unchecked<W: Word>(&mut self, offset: usize, value: W) {
        self.store_bits(offset, value, value);
    }
}

/// Replaces the bits of `word` set in `mask` by those of `value`. Only the holder of the word's
/// stripe writes it, so a load and a store do; under loom, two read-modify-writes with the same
/// effect (`old & (!mask | value) | value`), because loom's dependency tracking would otherwise
/// hide the race between a reader's load and this store behind the writer's own load.
#[inline(always)]
fn replace_bits(word: &AtomicU64, mask: u64, value: u64) {
    #[cfg(not(loom))]
    word.store((word.load(Ordering::Relaxed) & !mask) | value, Ordering::Relaxed);
    #[cfg(loom)]
    {
        word.fetch_and(!mask | value, Ordering::Relaxed);
        word.fetch_or(value, Ordering::Relaxed);
    }
}

/// Sets the bits of `value` in `word`, which held `old` and has them all zero, as
/// [`replace_bits`] does (under loom, one read-modify-write with the same effect).
#[inline(always)]
fn set_zero_bits(word: &AtomicU64, old: u64, value: u64) {
    #[cfg(not(loom))]
    word.store(old | value, Ordering::Relaxed);
    #[cfg(loom)]
    {
        let _ = old;
        word.fetch_or(value, Ordering::Relaxed);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A window read (by one unaligned load on x86-64) gives the little-endian bytes at its
        /// offset, as two relaxed loads of the words it overlaps do.
        #[test]
        fn a_window_read_gives_the_bytes_at_its_offset(
            values in prop::collection::vec(any::<u64>(), 2..12),
            offset in 0usize..80,
        ) {
            let words: Vec<AtomicU64> = values.iter().map(|&value| AtomicU64::new(value)).collect();
            let offset = offset % (8 * (words.len() - 1));
            let bytes: Vec<u8> = values.iter().flat_map(|value| value.to_le_bytes()).collect();
            let expected = u64::from_le_bytes(bytes[offset..offset + 8].try_into().unwrap());
            // SAFETY: `offset / 8 + 1 < words.len()` (offset is below 8 * (len - 1)).
            let (read, from_pair) = unsafe { (read_u64(&words, offset), read_u64_from_pair(&words, offset)) };
            prop_assert_eq!(read, expected);
            prop_assert_eq!(from_pair, expected);
        }
    }

    proptest! {
        /// Setting a slot's bits if they are zero gives the bytes an owned table's masked store
        /// gives, in one word or across two, and changes nothing where a bit is set.
        #[test]
        fn bits_are_set_only_where_they_are_zero(
            values in prop::collection::vec(any::<u64>(), 5..8),
            bit in 0usize..128,
            width in 1u32..33,
            value in any::<u64>(),
        ) {
            let value = value & ((1 << width) - 1);
            let bytes: Vec<u8> = values.iter().flat_map(|value| value.to_le_bytes()).collect();
            let words = AtomicBytes::copy_of(&bytes).unwrap();
            let occupied = (u128::load(&bytes, bit / 8) >> (bit % 8)) & ((1 << width) - 1) != 0;
            let mut expected = bytes.clone();
            if !occupied {
                let mask = ((1u128 << width) - 1) << (bit % 8);
                expected.store_bits(bit / 8, u128::from(value) << (bit % 8), mask);
            }
            prop_assert_eq!(words.set_bits_if_zero(bit, width, value), !occupied);
            prop_assert_eq!(words.copy_out(bytes.len()).unwrap(), expected);
        }
    }

    #[test]
    fn window_loads_read_the_bytes_in_order() {
        let bytes: Vec<u8> = (0u8..40).collect();
        let words = AtomicBytes::copy_of(&bytes).unwrap();
        for offset in 0..=24 {
            assert_eq!(words.load::<u64>(offset), u64::load(&bytes, offset));
            assert_eq!(words.load::<u128>(offset), u128::load(&bytes, offset));
        }
        assert_eq!(words.copy_out(40).unwrap(), bytes);
    }
}
