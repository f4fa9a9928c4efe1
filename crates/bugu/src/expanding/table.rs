//! The expanding filter's table: buckets of four bit-packed entries, kept in segments of the
//! initial bucket count so that growth adds segments and never copies one.
//!
//! An entry is `fingerprint_bits` of fingerprint, then a tail field of `tail_bits + 1` bits: the
//! address bits its bucket's level does not use yet, closed by a marker bit above them. A tail
//! field of 0 is an empty slot, so a fingerprint may be 0.
//!
//! Bucket `(base, stream)` lives in segment `stream` at index `base`: a key's bucket at level
//! `L` is its base bucket and the low `L` bits of its address stream, which is linear hashing's
//! `base + initial_buckets x stream`. Physical bucket numbers order the split pointer.

/// Slots per bucket.
pub(super) const SLOTS: usize = 4;

/// Bytes a bucket's 16-byte window may read past the last bucket of a segment.
const PADDING: usize = 16;

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
    pub(super) fn entry(self) -> u32 {
        self.fingerprint + self.tail + 1
    }

    fn bucket_bytes(self) -> usize {
        (SLOTS * self.entry() as usize).div_ceil(8)
    }

    /// An entry's bits from a fingerprint and a tail field.
    pub(super) fn pack(self, fingerprint: u32, tail_field: u32) -> u32 {
        fingerprint | tail_field << self.fingerprint
    }

    /// An entry's fingerprint and tail field.
    pub(super) fn unpack(self, entry: u32) -> (u32, u32) {
        (entry & ((1 << self.fingerprint) - 1), entry >> self.fingerprint)
    }
}

/// A tail field from `len` address bits `bits`: the bits under a marker bit.
pub(super) fn tail_field(bits: u64, len: u32) -> u32 {
    debug_assert!(len < 32);
    (1 << len) | (bits & ((1 << len) - 1)) as u32
}

/// The number of address bits a non-zero tail field holds.
pub(super) fn tail_len(field: u32) -> u32 {
    debug_assert!(field != 0);
    31 - field.leading_zeros()
}

/// The segments of buckets.
#[derive(Debug, Clone)]
pub(super) struct Segments {
    widths: Widths,
    /// Buckets per segment: the initial bucket count.
    per_segment: usize,
    segments: Vec<Box<[u8]>>,
}

impl Segments {
    /// `count` empty segments of `per_segment` buckets.
    pub(super) fn new(widths: Widths, per_segment: usize, count: usize) -> Self {
        let mut segments = Segments { widths, per_segment, segments: Vec::new() };
        for _ in 0..count {
            segments.push_empty();
        }
        segments
    }

    /// Adds an empty segment after the last.
    pub(super) fn push_empty(&mut self) {
        let bytes = self.per_segment * self.widths.bucket_bytes() + PADDING;
        self.segments.push(vec![0u8; bytes].into_boxed_slice());
    }

    pub(super) fn len(&self) -> usize {
        self.segments.len()
    }

    /// Bytes the segments hold.
    pub(super) fn memory_bytes(&self) -> usize {
        self.segments.iter().map(|segment| segment.len()).sum()
    }

    fn window(&self, segment: usize, base: usize) -> u128 {
        let offset = base * self.widths.bucket_bytes();
        let bytes = &self.segments[segment][offset..offset + 16];
        u128::from_le_bytes(bytes.try_into().expect("a 16-byte window"))
    }

    /// The four entries of bucket `(base, segment)`.
    pub(super) fn bucket(&self, segment: usize, base: usize) -> [u32; SLOTS] {
        let window = self.window(segment, base);
        let bits = self.widths.entry();
        let mask = (1u128 << bits) - 1;
        std::array::from_fn(|slot| ((window >> (slot as u32 * bits)) & mask) as u32)
    }

    /// Writes the four entries of bucket `(base, segment)`.
    pub(super) fn set_bucket(&mut self, segment: usize, base: usize, entries: [u32; SLOTS]) {
        let bits = self.widths.entry();
        let bucket_bits = SLOTS as u32 * bits;
        let mut window = self.window(segment, base) & !((1u128 << bucket_bits) - 1);
        for (slot, entry) in entries.into_iter().enumerate() {
            window |= u128::from(entry) << (slot as u32 * bits);
        }
        let offset = base * self.widths.bucket_bytes();
        self.segments[segment][offset..offset + 16].copy_from_slice(&window.to_le_bytes());
    }

    /// Writes one slot of bucket `(base, segment)`.
    pub(super) fn set(&mut self, segment: usize, base: usize, slot: usize, entry: u32) {
        let mut entries = self.bucket(segment, base);
        entries[slot] = entry;
        self.set_bucket(segment, base, entries);
    }
}
