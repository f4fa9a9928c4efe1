//! The expanding filter's table: buckets of four bit-packed entries, kept in segments of the
//! initial bucket count so that growth adds segments and never copies one.
//!
//! An entry is `fingerprint_bits` of fingerprint, then a tail field of `tail_bits + 1` bits: the
//! address bits its bucket's level does not use yet, closed by a marker bit above them. A tail
//! field of 0 is an empty slot, so a fingerprint may be 0.
//!
//! A key's bucket at level `L` is `(base, stream)`: its base bucket and the low `L` bits of its
//! address stream, which is linear hashing's bucket `base + initial_buckets x stream`. Those
//! numbers order the split pointer; [`Segments`] says where each bucket is stored.

use crate::table::alloc::{AllocFailed, zeroed_buffer};

/// Slots per bucket.
pub(super) const SLOTS: usize = 4;

/// Bytes a bucket's window may read past the last bucket of a segment: reads cover 16 bytes
/// from a bucket's start, and the 8-byte word of its last slot at most 19 (4 x 31 bits).
const PADDING: usize = WINDOW;

/// The bytes read from a bucket's start.
const WINDOW: usize = 24;

/// The widths of an entry's parts, fixed for a filter's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Widths {
    /// Fingerprint bits.
    pub(super) fingerprint: u32,
    /// The most address bits a tail holds.
    pub(super) tail: u32,
}

impl Widths {
    /// Bits of one entry: fingerprint, tail and marker.
    #[inline]
    pub(super) fn entry(self) -> u32 {
        self.fingerprint + self.tail + 1
    }

    #[inline]
    fn bucket_bytes(self) -> usize {
        (SLOTS * self.entry() as usize).div_ceil(8)
    }

    /// An entry's bits from a fingerprint and a tail field.
    #[inline]
    pub(super) fn pack(self, fingerprint: u32, tail_field: u32) -> u32 {
        fingerprint | tail_field << self.fingerprint
    }

    /// An entry's fingerprint and tail field.
    #[inline]
    pub(super) fn unpack(self, entry: u32) -> (u32, u32) {
        (entry & ((1 << self.fingerprint) - 1), entry >> self.fingerprint)
    }
}

/// A tail field from `len` address bits `bits`: the bits under a marker bit.
#[inline]
pub(super) fn tail_field(bits: u64, len: u32) -> u32 {
    debug_assert!(len < 32);
    (1 << len) | (bits & ((1 << len) - 1)) as u32
}

/// The number of address bits a non-zero tail field holds.
#[inline]
pub(super) fn tail_len(field: u32) -> u32 {
    debug_assert!(field != 0);
    31 - field.leading_zeros()
}

/// The buckets, in segments that double: segment 0 holds the `n0` buckets of level 0 and
/// segment `k > 0` the `n0 x 2^(k-1)` buckets whose stream bits have `k` as their bit length
/// (the siblings made while level `k - 1` split). Growth adds a segment once per doubling and
/// never moves one, and a lookup finds its segment from the stream bits alone, in a directory
/// of at most 65 entries that stays in the first-level cache.
///
/// A segment comes zeroed from the allocator, so the pages of the newest one are backed by the
/// kernel only as splits first write them (huge pages where the kernel gives them).
#[derive(Debug, Clone)]
pub(super) struct Segments {
    widths: Widths,
    bucket_bytes: usize,
    /// Buckets of segment 0: the initial bucket count.
    base_buckets: usize,
    segments: Vec<Vec<u8>>,
}

impl Segments {
    /// Segment 0, empty.
    pub(super) fn new(widths: Widths, base_buckets: usize) -> Result<Self, AllocFailed> {
        let mut segments =
            Segments { widths, bucket_bytes: widths.bucket_bytes(), base_buckets, segments: Vec::new() };
        segments.add_segment()?;
        Ok(segments)
    }

    /// Buckets a segment holds.
    fn capacity(&self, segment: usize) -> usize {
        self.base_buckets << segment.saturating_sub(1)
    }

    /// Makes sure the bucket with stream bits `stream` has its segment, adding the next one if
    /// not.
    pub(super) fn reserve(&mut self, stream: usize) -> Result<(), AllocFailed> {
        if stream_segment(stream) < self.segments.len() { Ok(()) } else { self.add_segment() }
    }

    fn add_segment(&mut self) -> Result<(), AllocFailed> {
        let buckets = self.capacity(self.segments.len());
        let bytes = buckets.checked_mul(self.bucket_bytes).and_then(|b| b.checked_add(PADDING));
        let segment = zeroed_buffer::<u8>(bytes.ok_or(AllocFailed { bytes: usize::MAX })?)?;
        self.segments.push(segment);
        Ok(())
    }

    /// Bytes of the segments the kernel backs when `buckets` buckets are in use: every segment
    /// but the newest in full, and the newest up to its last bucket in use, in 4 KiB pages.
    pub(super) fn memory_bytes(&self, buckets: usize) -> usize {
        const PAGE: usize = 4096;
        let mut left = buckets;
        self.segments
            .iter()
            .enumerate()
            .map(|(segment, bytes)| {
                let used = left.min(self.capacity(segment));
                left -= used;
                (used * self.bucket_bytes + PADDING).next_multiple_of(PAGE).min(bytes.len())
            })
            .sum()
    }

    /// The bytes from the start of bucket `(base, stream)`.
    #[inline]
    fn window(&self, stream: usize, base: usize) -> &[u8; WINDOW] {
        let (segment, index) = self.address(stream, base);
        let offset = index * self.bucket_bytes;
        self.segments[segment][offset..offset + WINDOW].try_into().expect("a window's bytes")
    }

    /// The segment of bucket `(base, stream)` and its index there.
    #[inline]
    fn address(&self, stream: usize, base: usize) -> (usize, usize) {
        let segment = stream_segment(stream);
        // The stream bits under the top one: the bucket's rank among its segment's rows.
        let row = stream ^ ((1 << segment) >> 1);
        (segment, base + self.base_buckets * row)
    }

    /// The four entries of bucket `(base, stream)`: each from the 8-byte word holding it, which
    /// costs fewer instructions than shifting one 16-byte word by a variable amount.
    #[inline]
    pub(super) fn bucket(&self, stream: usize, base: usize) -> [u32; SLOTS] {
        let window = self.window(stream, base);
        let bits = self.widths.entry();
        let mask = (1u64 << bits) - 1;
        std::array::from_fn(|slot| {
            let bit = slot as u32 * bits;
            // At most byte 11 (slot 3 of 31-bit entries); the mask lets the compiler see the
            // word is inside the window.
            let at = (bit / 8) as usize & 15;
            let word = u64::from_le_bytes(window[at..at + 8].try_into().expect("8 bytes"));
            ((word >> (bit % 8)) & mask) as u32
        })
    }

    /// Writes the four entries of bucket `(base, stream)`.
    pub(super) fn set_bucket(&mut self, stream: usize, base: usize, entries: [u32; SLOTS]) {
        let bits = self.widths.entry();
        let bucket_bits = SLOTS as u32 * bits;
        let (head, _) = self.window(stream, base).split_first_chunk::<16>().expect("16 bytes");
        let mut window = u128::from_le_bytes(*head) & !((1u128 << bucket_bits) - 1);
        for (slot, entry) in entries.into_iter().enumerate() {
            window |= u128::from(entry) << (slot as u32 * bits);
        }
        let (segment, index) = self.address(stream, base);
        let offset = index * self.bucket_bytes;
        self.segments[segment][offset..offset + 16].copy_from_slice(&window.to_le_bytes());
    }

    /// Writes one slot of bucket `(base, stream)`.
    pub(super) fn set(&mut self, stream: usize, base: usize, slot: usize, entry: u32) {
        let mut entries = self.bucket(stream, base);
        entries[slot] = entry;
        self.set_bucket(stream, base, entries);
    }
}

/// The segment holding buckets with stream bits `stream`: their bit length.
#[inline]
fn stream_segment(stream: usize) -> usize {
    (usize::BITS - stream.leading_zeros()) as usize
}
