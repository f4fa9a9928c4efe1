//! The expanding filter's table: buckets of four bit-packed entries, kept in segments that
//! double so that growth adds segments and never copies one.
//!
//! An entry is `fingerprint_bits` of fingerprint and a tail field of `tail_bits + 1` bits: the
//! address bits its bucket's level does not use yet, closed by a marker bit above them. A tail
//! field of 0 is an empty slot, so a fingerprint may be 0. A bucket stores its four
//! fingerprints side by side from its first bit, then its four tail fields: a lookup compares
//! all four fingerprints with a handful of word operations and reads tails only on a match.
//!
//! A key's bucket at level `L` is `(base, stream)`: its base bucket and the low `L` bits of its
//! address stream, which is linear hashing's bucket `base + initial_buckets x stream`. Those
//! numbers order the split pointer; [`Segments`] says where each bucket is stored.

use crate::table::alloc::{AllocFailed, zeroed_buffer};

/// Slots per bucket.
pub(super) const SLOTS: usize = 4;

/// Bytes read from a bucket's start, and so the padding after a segment's last bucket.
const WINDOW: usize = 16;

/// The widest fingerprint: a bucket's four fill one 64-bit word.
pub(super) const MAX_FINGERPRINT_BITS: u32 = 16;

/// The widest tail: a bucket's four tail fields, read from the byte holding their first bit,
/// fit in one 64-bit word.
pub(super) const MAX_TAIL_BITS: u32 = 13;

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
    pub(super) fn bucket_bytes(self) -> usize {
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
    lanes: Lanes,
    /// For the top bit of each fingerprint lane, the shift of its slot's tail field in the
    /// tails word (other entries unused).
    tail_shift_of_lane_top: [u32; 64],
    /// The bits of one tail field.
    field_mask: u32,
    /// The first bit of a bucket's tail fields: after its four fingerprints.
    tails_at: usize,
    /// The bits of the four tail fields.
    tails_mask: u64,
    /// Buckets of segment 0: the initial bucket count.
    base_buckets: usize,
    segments: Vec<Vec<u8>>,
}

impl Segments {
    /// Segment 0, empty.
    pub(super) fn new(widths: Widths, base_buckets: usize) -> Result<Self, AllocFailed> {
        let mut segments = Segments {
            widths,
            bucket_bytes: widths.bucket_bytes(),
            lanes: Lanes::new(widths.fingerprint),
            tail_shift_of_lane_top: std::array::from_fn(|bit| {
                (bit as u32 / widths.fingerprint).min(SLOTS as u32 - 1) * (widths.tail + 1)
            }),
            field_mask: (2 << widths.tail) - 1,
            tails_at: SLOTS * widths.fingerprint as usize,
            tails_mask: (1 << (SLOTS as u32 * (widths.tail + 1))) - 1,
            base_buckets,
            segments: Vec::new(),
        };
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
        let bytes = buckets.checked_mul(self.bucket_bytes).and_then(|b| b.checked_add(WINDOW));
        let segment = zeroed_buffer::<u8>(bytes.ok_or(AllocFailed { bytes: usize::MAX })?)?;
        self.segments.push(segment);
        Ok(())
    }

    /// Segments holding `bytes`, the bytes of the buckets in use in linear hashing's order (as
    /// [`used_bytes`](Self::used_bytes) gives them), a whole number of buckets.
    pub(super) fn from_used_bytes(
        widths: Widths,
        base_buckets: usize,
        bytes: &[u8],
    ) -> Result<Self, AllocFailed> {
        let mut segments = Segments::new(widths, base_buckets)?;
        let mut rest = bytes;
        for segment in 0.. {
            if segment == segments.segments.len() {
                segments.add_segment()?;
            }
            let take = rest.len().min(segments.capacity(segment) * segments.bucket_bytes);
            let (head, tail) = rest.split_at(take);
            segments.segments[segment][..take].copy_from_slice(head);
            rest = tail;
            if rest.is_empty() {
                break;
            }
        }
        Ok(segments)
    }

    /// The bytes of the first `buckets` buckets in linear hashing's order, segment by segment.
    pub(super) fn used_bytes(&self, buckets: usize) -> impl Iterator<Item = &[u8]> + '_ {
        let mut left = buckets;
        self.segments.iter().enumerate().map_while(move |(segment, bytes)| {
            let used = left.min(self.capacity(segment));
            left -= used;
            (used > 0).then(|| &bytes[..used * self.bucket_bytes])
        })
    }

    /// Whether bucket `(base, stream)` has a bit set past its four entries (in its last byte).
    pub(super) fn stray_bits(&self, stream: usize, base: usize) -> bool {
        let bits = SLOTS as u32 * self.widths.entry();
        let window = u128::from_le_bytes(*self.window(stream, base));
        let bucket = window & ((1u128 << (self.bucket_bytes as u32 * 8)) - 1);
        bucket >> bits != 0
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
                (used * self.bucket_bytes + WINDOW).next_multiple_of(PAGE).min(bytes.len())
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

    /// Bucket `(base, stream)` as its two words: the four fingerprints, and the four tail fields.
    #[inline]
    fn words(&self, stream: usize, base: usize) -> (u64, u64) {
        let window = self.window(stream, base);
        let (head, _) = window.split_first_chunk::<8>().expect("8 bytes");
        let at = self.tails_at / 8;
        // Under 9: fingerprints take at most 64 bits. The mask lets the compiler see it.
        let tails = u64::from_le_bytes(window[at & 15..(at & 15) + 8].try_into().expect("8 bytes"));
        (u64::from_le_bytes(*head) & self.lanes.all, (tails >> (self.tails_at % 8)) & self.tails_mask)
    }

    /// `fingerprint` in each of the four fingerprint lanes, for [`probe`](Self::probe).
    #[inline]
    pub(super) fn broadcast(&self, fingerprint: u32) -> u64 {
        self.lanes.ones * u64::from(fingerprint)
    }

    /// Bucket `(base, stream)` compared with a fingerprint `broadcast` carries in every lane:
    /// the top bit of each lane whose fingerprint equals it, and the bucket's tail fields. The
    /// lanes are compared together: adding each lane's low bits to all-ones-but-the-top carries
    /// into the top bit exactly when a low bit is set, and no carry crosses a lane.
    #[inline]
    pub(super) fn probe(&self, stream: usize, base: usize, broadcast: u64) -> Probe {
        let Lanes { tops, all, .. } = self.lanes;
        let (prints, tails) = self.words(stream, base);
        let difference = prints ^ broadcast;
        let lows = all & !tops;
        let nonzero = ((difference & lows) + lows) | difference;
        Probe { equal: !nonzero & tops, tails }
    }

    /// Whether a slot of a probed bucket holds the fingerprint and a tail that `key_bits` (the
    /// key's address bits past the bucket's level) extend. The lowest equal slot is checked
    /// without branches, so which bucket holds a present key costs no misprediction; the others
    /// only when there are more, which is rare.
    #[inline]
    pub(super) fn probe_holds(&self, probe: Probe, key_bits: u32) -> bool {
        let equal = probe.equal;
        let tail_of_lane = |top: u32| {
            let shift = self.tail_shift_of_lane_top[top as usize & 63];
            (probe.tails >> shift) as u32 & self.field_mask
        };
        let lowest = (equal != 0) & tail_matches(tail_of_lane(equal.trailing_zeros()), key_bits);
        if lowest || equal & equal.wrapping_sub(1) == 0 {
            return lowest;
        }
        let mut others = equal & equal.wrapping_sub(1);
        while others != 0 {
            if tail_matches(tail_of_lane(others.trailing_zeros()), key_bits) {
                return true;
            }
            others &= others - 1;
        }
        false
    }

    /// The segment of bucket `(base, stream)` and its index there.
    #[inline]
    fn address(&self, stream: usize, base: usize) -> (usize, usize) {
        let segment = stream_segment(stream);
        // The stream bits under the top one: the bucket's rank among its segment's rows.
        let row = stream ^ ((1 << segment) >> 1);
        (segment, base + self.base_buckets * row)
    }

    /// The four entries of bucket `(base, stream)`, each as [`Widths::pack`] makes it.
    #[inline]
    pub(super) fn bucket(&self, stream: usize, base: usize) -> [u32; SLOTS] {
        let (prints, tails) = self.words(stream, base);
        let Widths { fingerprint, tail } = self.widths;
        std::array::from_fn(|slot| {
            let slot = slot as u32;
            let print = (prints >> (slot * fingerprint)) as u32 & ((1 << fingerprint) - 1);
            let field = (tails >> (slot * (tail + 1))) as u32 & ((2 << tail) - 1);
            self.widths.pack(print, field)
        })
    }

    /// Writes the four entries of bucket `(base, stream)`.
    pub(super) fn set_bucket(&mut self, stream: usize, base: usize, entries: [u32; SLOTS]) {
        let Widths { fingerprint, tail } = self.widths;
        let (mut prints, mut tails) = (0u64, 0u64);
        for (slot, entry) in entries.into_iter().enumerate() {
            let (print, field) = self.widths.unpack(entry);
            prints |= u64::from(print) << (slot as u32 * fingerprint);
            tails |= u64::from(field) << (slot as u32 * (tail + 1));
        }
        let bucket_bits = SLOTS as u32 * self.widths.entry();
        let bits = u128::from(prints) | u128::from(tails) << self.tails_at;
        let window = u128::from_le_bytes(*self.window(stream, base));
        let window = window & !((1u128 << bucket_bits) - 1) | bits;
        let (segment, index) = self.address(stream, base);
        let offset = index * self.bucket_bytes;
        self.segments[segment][offset..offset + WINDOW].copy_from_slice(&window.to_le_bytes());
    }

    /// Writes one slot of bucket `(base, stream)`.
    pub(super) fn set(&mut self, stream: usize, base: usize, slot: usize, entry: u32) {
        let mut entries = self.bucket(stream, base);
        entries[slot] = entry;
        self.set_bucket(stream, base, entries);
    }
}

/// A bucket compared with a fingerprint ([`Segments::probe`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Probe {
    /// The top bit of each fingerprint lane holding the fingerprint.
    pub(super) equal: u64,
    /// The bucket's four tail fields.
    tails: u64,
}

/// Whether a tail field holds address bits (it is not an empty slot's 0) and they are the
/// low bits of `key_bits`.
#[inline]
pub(super) fn tail_matches(field: u32, key_bits: u32) -> bool {
    // The marker, the field's top bit (none when the field is 0).
    let marker = 0x8000_0000u32.checked_shr(field.leading_zeros()).unwrap_or(0);
    (marker != 0) & ((field ^ key_bits) & marker.wrapping_sub(1) == 0)
}

/// The masks of a bucket's four fingerprint lanes.
#[derive(Debug, Clone, Copy)]
struct Lanes {
    /// The lowest bit of each lane.
    ones: u64,
    /// The highest bit of each lane.
    tops: u64,
    /// Every bit of the four lanes.
    all: u64,
}

impl Lanes {
    fn new(fingerprint: u32) -> Self {
        let ones = (0..SLOTS as u32).map(|slot| 1u64 << (slot * fingerprint)).sum();
        Lanes { ones, tops: ones << (fingerprint - 1), all: u64::MAX >> (64 - SLOTS as u32 * fingerprint) }
    }
}

/// The segment holding buckets with stream bits `stream`: their bit length.
#[inline]
fn stream_segment(stream: usize) -> usize {
    (usize::BITS - stream.leading_zeros()) as usize
}
