//! The expanding filter's table: buckets of four bit-packed entries, kept in segments that
//! double so that growth adds segments and never copies one.
//!
//! An entry is `fingerprint_bits` of fingerprint and a tail field of `tail_bits + 1` bits: the
//! address bits its bucket's level does not use yet, closed by a marker bit above them. A tail
//! field of 0 is an empty slot, so a fingerprint may be 0. A bucket stores its four
//! fingerprints side by side from its first bit, then its four tail fields: a lookup compares
//! all four fingerprints with a handful of word operations and reads tails only on a match.
//!
//! Buckets are numbered as linear hashing numbers them: with `2^m` initial buckets, a key's bucket
//! at level `L` is the low `m + L` bits of its address bits. Those numbers order the split
//! pointer; [`Segments`] says where each bucket is stored.

use std::marker::PhantomData;

use crate::table::alloc::{AllocFailed, zeroed_buffer};

/// Slots per bucket.
pub(super) const SLOTS: usize = 4;

/// Bytes a bucket's word reads take: a bucket is read as two 8-byte words, one from its first
/// byte (the fingerprints) and one ending at its last byte (the tails), so a bucket of 8 bytes or
/// more is read inside its own bytes. A narrower one (entries under 15 bits) reads 8 bytes from
/// its start, past its end: [`Segments::padding`] bytes follow a segment's last bucket. A
/// segment of a power of two of 8-byte buckets is then a power of two of bytes, with nothing
/// after it to push the allocation into the allocator's next size class.
const WORD: usize = 8;

/// The widest fingerprint: a bucket's four fill one 64-bit word.
pub(super) const MAX_FINGERPRINT_BITS: u32 = 16;

/// The widest tail: a bucket's four tail fields fit in the 8 bytes that end the bucket (with
/// any fingerprint width), which its tails word reads.
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

/// The buckets, in segments that double, each in [`PARTS`] parts: segment 0 holds the `n0 = 2^m`
/// buckets of level 0 and segment `k > 0` the `n0 x 2^(k-1)` buckets whose numbers have `m + k`
/// as their bit length (the siblings made while level `k - 1` split). Growth adds a part at a
/// time, as splits reach it, and never moves one, and a lookup finds its part from the bucket
/// number alone ([`part_of`](Self::part_of)), in a directory with an entry per part, of which
/// a lookup touches the few of the newest segments.
///
/// Parts, rather than whole segments, so that what is allocated stays close to what is in use:
/// a new segment is as large as all before it, and allocated whole it doubled the filter's
/// allocation at the start of every round of splits. In eighths, the part being filled is at
/// most an eighth of the table. (The kernel backs pages only as they are first written either
/// way; an allocator that accounts per block, as Redis's does, counts the whole block.)
///
/// A part comes zeroed from the allocator, so the pages of the newest one are backed by the
/// kernel only as splits first write them (huge pages where the kernel gives them).
///
/// `S` stores each part: an owned table ([`new`](Self::new)) has a `Vec<u8>` per part, and only
/// it has the methods that write; a table [`borrowed`](Segments::borrowed) from bytes has, per
/// part, the slice of those bytes its buckets lie in, so that the bytes' lifetime is the table's
/// and a borrowed table cannot be written.
#[derive(Debug)]
pub(super) struct Segments<S = Vec<u8>> {
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
    /// For each slot, the first bit of its fingerprint and of its tail field in the bucket.
    slot_at: [(u32, u32); SLOTS],
    /// For each slot, the bits of its fingerprint and tail field in the bucket.
    slot_masks: [u128; SLOTS],
    /// The bits of the four tail fields.
    tails_mask: u64,
    /// The lanes of the four tail fields in the tails word.
    tail_lanes: Lanes,
    /// For the top bit of each tail lane, its slot (other entries unused).
    slot_of_tail_top: [u8; 64],
    /// `m`: segment 0 holds `2^m` buckets.
    base_bits: u32,
    /// The first byte of the tails word (the last 8 bytes of a bucket of 8 or more, else its
    /// first), and the bit of that word where the tail fields start.
    tails_byte: usize,
    tails_shift: u32,
    /// For each part, where bucket 0 would start if the part began at bucket 0: its first byte
    /// less the bytes of the buckets numbered before it, so that a bucket's bytes start at
    /// `origins[part] + bucket x bucket_bytes` with no subtraction on the lookup path. One per
    /// part (on the heap: a table has a few dozen parts, of the hundreds its numbers allow, and
    /// a filter of a thousand items must not carry kilobytes of directory); each is derived
    /// from its part's storage in `parts`: an owned buffer's through `Vec::as_mut_ptr`, never
    /// through a reference to it, and the buffers are written only through these pointers; a
    /// borrowed slice's from the slice, and only ever read (no method that writes exists for a
    /// borrowed table).
    origins: Vec<*mut u8>,
    /// The buckets with a number below this have their bytes, and [`span`](Self::span) bytes from
    /// each bucket's start are readable: the one bounds check of a bucket's read.
    readable: usize,
    /// The parts' storage, in bucket order: each holds its part's buckets in use and the
    /// [`span`](Self::span) bytes from the last one's start.
    parts: Vec<S>,
}

/// Each segment's buckets are kept in `2^PART_BITS` parts (fewer for the first segments of a
/// table of under eight buckets at level 0, whose parts would hold under one bucket).
const PART_BITS: u32 = 3;
/// Parts in a segment.
pub(super) const PARTS: usize = 1 << PART_BITS;

// SAFETY: the pointers in `origins` point only into the storage in `parts` (the heap buffers a
// `Vec<u8>` owns, which stay put as the value moves, or bytes a `&[u8]` borrows for as long as
// the value lives), and are used only as that storage could be: read under `&self`, written
// under `&mut self` and only in a table of owned buffers. So a `Segments<S>` may go to another
// thread whenever its `S` may.
unsafe impl<S: Send> Send for Segments<S> {}
// SAFETY: under `&self` the pointers are only read through, as `&S` would read its bytes (see
// `Send`): sharing a `Segments<S>` between threads is sharing its `S`.
unsafe impl<S: Sync> Sync for Segments<S> {}

impl Clone for Segments<Vec<u8>> {
    fn clone(&self) -> Self {
        let mut copy = Segments { parts: self.parts.clone(), origins: self.origins.clone(), ..*self };
        // The copy's own buffers: its origins are derived from them, not from this table's.
        copy.set_origins();
        copy
    }
}

/// A borrowed table's copy reads the same bytes, borrowed for the same lifetime, so its origins
/// are this table's.
impl Clone for Segments<&[u8]> {
    fn clone(&self) -> Self {
        Segments { parts: self.parts.clone(), origins: self.origins.clone(), ..*self }
    }
}

impl<S> Segments<S> {
    /// A table with no part yet: nothing is readable.
    fn new_empty(widths: Widths, base_bits: u32) -> Self {
        let slot_at: [(u32, u32); SLOTS] = std::array::from_fn(|slot| {
            let slot = slot as u32;
            (slot * widths.fingerprint, SLOTS as u32 * widths.fingerprint + slot * (widths.tail + 1))
        });
        Segments {
            widths,
            bucket_bytes: widths.bucket_bytes(),
            lanes: Lanes::new(widths.fingerprint),
            tail_shift_of_lane_top: std::array::from_fn(|bit| {
                (bit as u32 / widths.fingerprint).min(SLOTS as u32 - 1) * (widths.tail + 1)
            }),
            field_mask: (2 << widths.tail) - 1,
            tails_at: SLOTS * widths.fingerprint as usize,
            slot_at,
            slot_masks: slot_at.map(|(print_at, field_at)| {
                u128::from((1u32 << widths.fingerprint) - 1) << print_at
                    | u128::from((2u32 << widths.tail) - 1) << field_at
            }),
            tails_mask: (1 << (SLOTS as u32 * (widths.tail + 1))) - 1,
            tail_lanes: Lanes::new(widths.tail + 1),
            slot_of_tail_top: std::array::from_fn(|bit| {
                (bit as u32 / (widths.tail + 1)).min(SLOTS as u32 - 1) as u8
            }),
            base_bits,
            tails_byte: widths.bucket_bytes().saturating_sub(WORD),
            tails_shift: (SLOTS * widths.fingerprint as usize
                - 8 * widths.bucket_bytes().saturating_sub(WORD)) as u32,
            origins: Vec::new(),
            readable: 0,
            parts: Vec::new(),
        }
    }

    /// The part holding `bucket`, by its number alone: with `u` the number in units of
    /// `n0 / PARTS` buckets and `e` the bit length of `u` past `PART_BITS + 1` bits (0 in
    /// segments 0 and 1), the part is `PARTS x e` plus the top `PART_BITS + 1` bits of `u`
    /// (as a log-linear histogram buckets its values). Parts follow bucket order, and each of
    /// segment `k`'s parts covers `PARTS` times fewer buckets than the segment.
    #[inline]
    fn part_of(&self, bucket: usize) -> usize {
        let units = (bucket << PART_BITS) >> self.base_bits;
        let exponent = (units | PARTS).ilog2() - PART_BITS;
        ((exponent as usize) << PART_BITS) + (units >> exponent)
    }

    /// The first bucket of `part`: the least bucket number whose [`part_of`](Self::part_of) is
    /// `part` or more (saturating, for parts past any table).
    fn first_bucket(&self, part: usize) -> usize {
        let exponent = (part >> PART_BITS).saturating_sub(1);
        let units = if part < PARTS { part } else { (part & (PARTS - 1)) | PARTS };
        // The least bucket whose number in units (rounded down) reaches `units << exponent`.
        let scaled = (units as u128) << exponent << self.base_bits;
        usize::try_from(scaled.div_ceil(PARTS as u128)).unwrap_or(usize::MAX)
    }

    /// Buckets `part` holds (0 for some of the first parts of a table of under eight buckets at
    /// level 0).
    fn capacity(&self, part: usize) -> usize {
        self.first_bucket(part + 1) - self.first_bucket(part)
    }
}

impl Segments<Vec<u8>> {
    /// The parts of segment 0, empty.
    pub(super) fn new(widths: Widths, base_bits: u32) -> Result<Self, AllocFailed> {
        let mut segments = Segments::new_empty(widths, base_bits);
        segments.reserve((1 << base_bits) - 1)?;
        Ok(segments)
    }

    /// Makes sure `bucket` has its part, adding parts in order up to it if not.
    pub(super) fn reserve(&mut self, bucket: usize) -> Result<(), AllocFailed> {
        while self.part_of(bucket) >= self.parts.len() {
            self.add_part()?;
        }
        Ok(())
    }

    fn add_part(&mut self) -> Result<(), AllocFailed> {
        let buckets = self.capacity(self.parts.len());
        let bytes = buckets.checked_mul(self.bucket_bytes).and_then(|b| b.checked_add(self.padding()));
        let part = zeroed_buffer::<u8>(bytes.ok_or(AllocFailed { bytes: usize::MAX })?)?;
        // Exactly one more entry in each list: their sizes are then a function of the table alone.
        let entry = AllocFailed { bytes: std::mem::size_of::<Vec<u8>>() };
        self.parts.try_reserve_exact(1).map_err(|_| entry)?;
        self.origins.try_reserve_exact(1).map_err(|_| entry)?;
        self.parts.push(part);
        self.origins.push(std::ptr::null_mut());
        self.set_origins();
        Ok(())
    }

    /// Derives `origins` from the buffers, after they were added, copied or written through
    /// references.
    fn set_origins(&mut self) {
        for part in 0..self.parts.len() {
            let first = self.first_bucket(part);
            // `as_mut_ptr` makes no reference to the bytes, so the pointer stays valid until the
            // buffer is written through one (only `from_used_bytes`, which calls this again).
            // The offset wraps out of the buffer; every pointer read from is back inside it.
            self.origins[part] = self.parts[part].as_mut_ptr().wrapping_sub(first * self.bucket_bytes);
        }
        // Parts 0..k hold the buckets numbered below part k's first, all of them.
        self.readable = self.first_bucket(self.parts.len());
    }

    /// Parts holding `bytes`, the bytes of the buckets in use in linear hashing's order (as
    /// [`used_bytes`](Self::used_bytes) gives them), a whole number of buckets.
    pub(super) fn from_used_bytes(widths: Widths, base_bits: u32, bytes: &[u8]) -> Result<Self, AllocFailed> {
        let mut segments = Segments::new(widths, base_bits)?;
        let mut rest = bytes;
        for part in 0.. {
            if rest.is_empty() {
                break;
            }
            if part == segments.parts.len() {
                segments.add_part()?;
            }
            let take = rest.len().min(segments.capacity(part) * segments.bucket_bytes);
            let (head, tail) = rest.split_at(take);
            segments.parts[part][..take].copy_from_slice(head);
            rest = tail;
        }
        segments.set_origins();
        Ok(segments)
    }

    /// Empties `bucket`.
    pub(super) fn clear_bucket(&mut self, bucket: usize) {
        self.write_words(bucket, Words { prints: 0, tails: 0 });
    }

    /// Writes a whole bucket from its two words, as [`read`](Segments::read) gives them.
    #[inline]
    fn write_words(&mut self, bucket: usize, words: Words) {
        let bucket_bits = SLOTS as u32 * self.widths.entry();
        self.write_bits(
            bucket,
            (1u128 << bucket_bits) - 1,
            u128::from(words.prints) | u128::from(words.tails) << self.tails_at,
        );
    }

    /// Splits `low` between itself and `sibling`, an empty bucket: each entry goes to the
    /// bucket the lowest bit of its tail names, and drops that bit; an entry whose tail holds
    /// no bit goes to both, as twins. Entries keep their slots, so nothing is searched or
    /// moved within a bucket. Returns the number of twins made.
    pub(super) fn split_bucket(&mut self, low: usize, sibling: usize) -> usize {
        let Widths { fingerprint, tail } = self.widths;
        let words = self.read(low);
        let (mut stay, mut go) = (Words { prints: 0, tails: 0 }, Words { prints: 0, tails: 0 });
        let mut twins = 0;
        for slot in 0..SLOTS as u32 {
            let (print_at, field_at) = (slot * fingerprint, slot * (tail + 1));
            let field = (words.tails >> field_at) & u64::from(self.field_mask);
            let print = words.prints & (((1u64 << fingerprint) - 1) << print_at);
            if field == 1 {
                twins += 1;
                for half in [&mut stay, &mut go] {
                    half.prints |= print;
                    half.tails |= 1 << field_at;
                }
            } else if field != 0 {
                let half = if field & 1 == 0 { &mut stay } else { &mut go };
                half.prints |= print;
                half.tails |= (field >> 1) << field_at;
            }
        }
        self.write_words(low, stay);
        self.write_words(sibling, go);
        twins
    }

    /// Writes one slot of `bucket`, leaving the others as they are.
    #[inline]
    pub(super) fn set(&mut self, bucket: usize, slot: usize, entry: u32) {
        let (print, field) = self.widths.unpack(entry);
        let (print_at, field_at) = self.slot_at[slot];
        let bits = u128::from(print) << print_at | u128::from(field) << field_at;
        self.write_bits(bucket, self.slot_masks[slot], bits);
    }

    /// Replaces the bits `mask` selects (within the bucket's) of `bucket` with `bits`.
    // Always: left to LLVM's inliner, the insert path (moves of entries above all) took about 1%
    // more instructions once this lost its check that the table is owned (callgrind, a million
    // inserts: 2985 per insert, against 2954 with the check and 2897 inlined always).
    #[inline(always)]
    fn write_bits(&mut self, bucket: usize, mask: u128, bits: u128) {
        let window = self.window(bucket);
        // SAFETY: the window of a bucket, from `window`, just now.
        let new = self.laid_over(unsafe { self.words_at(window) }) & !mask | bits;
        // SAFETY: as in `words_at`, both words lie in the `span` bytes from `window`, in a
        // buffer this table owns and `&mut self` has to itself; its origin came from
        // `Vec::as_mut_ptr` (`set_origins`), so it may be written through. Where the words
        // overlap both hold the same bytes of `new`; bits outside `mask` are written back as
        // they were read.
        unsafe {
            window
                .add(self.tails_byte)
                .cast::<u64>()
                .write_unaligned(((new >> (8 * self.tails_byte)) as u64).to_le());
            window.cast::<u64>().write_unaligned((new as u64).to_le());
        }
    }
}

impl<'a> Segments<&'a [u8]> {
    /// A table that reads `buckets` buckets in place from `bytes` (stored in linear hashing's
    /// order, as [`used_bytes`](Segments::used_bytes) gives them), borrowing them for as long as
    /// it lives. `None` if `bytes` do not hold the buckets and [`span`](Segments::span) bytes
    /// from the last one's start.
    pub(super) fn borrowed(widths: Widths, base_bits: u32, bytes: &'a [u8], buckets: usize) -> Option<Self> {
        let mut table = Segments::new_empty(widths, base_bits);
        let last = buckets.checked_sub(1)?;
        if bytes.len() < last.checked_mul(table.bucket_bytes)?.checked_add(table.span())? {
            return None;
        }
        let parts = table.part_of(last) + 1;
        table.parts.try_reserve_exact(parts).ok()?;
        table.origins.try_reserve_exact(parts).ok()?;
        for part in 0..parts {
            // Bucket numbers are contiguous in the bytes: a part is its buckets in use, and the
            // `span` bytes from the last one's start (as an owned part's padding follows its
            // buckets), all inside `bytes` as checked above.
            let first = table.first_bucket(part);
            let end = table.first_bucket(part + 1).min(buckets);
            let slice = &bytes[first * table.bucket_bytes..end * table.bucket_bytes + table.padding()];
            table.parts.push(slice);
            // The offset wraps out of the slice; every pointer read from is back inside it. The
            // pointer is never written through: no method that writes exists for this table.
            table.origins.push(slice.as_ptr().cast_mut().wrapping_sub(first * table.bucket_bytes));
        }
        table.readable = buckets;
        Some(table)
    }
}

impl<S: AsRef<[u8]>> Segments<S> {
    /// The bytes of the first `buckets` buckets in linear hashing's order, part by part.
    pub(super) fn used_bytes(&self, buckets: usize) -> impl Iterator<Item = &[u8]> + '_ {
        let mut left = buckets;
        self.parts.iter().enumerate().filter_map(move |(part, bytes)| {
            let used = left.min(self.capacity(part));
            left -= used;
            (used > 0).then(|| &bytes.as_ref()[..used * self.bucket_bytes])
        })
    }

    /// Whether `bucket` has a bit set past its four entries (in its last byte).
    pub(super) fn stray_bits(&self, bucket: usize) -> bool {
        let bits = SLOTS as u32 * self.widths.entry();
        let used = self.read_bits(bucket) & ((1u128 << (self.bucket_bytes as u32 * 8)) - 1);
        used >> bits != 0
    }

    /// Bytes read from a bucket's start: its own, or 8 for a narrower one.
    #[inline]
    fn span(&self) -> usize {
        self.bucket_bytes.max(WORD)
    }

    /// Bytes after a part's last bucket, which a read of it may take.
    fn padding(&self) -> usize {
        self.span() - self.bucket_bytes
    }

    /// Bytes of the parts the kernel backs when `buckets` buckets are in use: every part but
    /// the newest in full, and the newest up to its last bucket in use, in 4 KiB pages.
    pub(super) fn memory_bytes(&self, buckets: usize) -> usize {
        const PAGE: usize = 4096;
        let mut left = buckets;
        self.parts
            .iter()
            .enumerate()
            .map(|(part, bytes)| {
                let used = left.min(self.capacity(part));
                left -= used;
                (used * self.bucket_bytes + self.padding()).next_multiple_of(PAGE).min(bytes.as_ref().len())
            })
            .sum()
    }

    /// The sizes of the heap blocks the parts take: each part's buffer, allocated whole (and
    /// exactly) when the table first reaches it, if `owned` (a borrowed table's parts are not
    /// its blocks), then the list of parts and the directory.
    pub(super) fn heap_blocks(&self, owned: bool) -> impl Iterator<Item = usize> + '_ {
        let lists = [
            self.parts.capacity() * std::mem::size_of::<S>(),
            self.origins.capacity() * std::mem::size_of::<*mut u8>(),
        ];
        let parts = self.parts.iter().filter(move |_| owned).map(|part| part.as_ref().len());
        parts.chain(lists.into_iter().filter(|&bytes| bytes > 0))
    }

    /// A pointer to the [`span`](Self::span) bytes from the start of `bucket`, which must be in
    /// a part the table has (it panics if not).
    #[inline]
    fn window(&self, bucket: usize) -> *mut u8 {
        let part = self.part_of(bucket);
        assert!(bucket < self.readable, "bucket {bucket} is past the table");
        // The part exists as the bucket is below `readable`, and holds the `span` bytes from the
        // start of each of its buckets below `readable`: an owned buffer has every bucket from
        // its first to the next part's, then the padding; a borrowed slice its buckets in use,
        // then `span` bytes from the last one's start.
        // SAFETY: `part < origins.len()`: parts `0..origins.len()` hold every bucket below
        // `readable` (`set_origins`, `borrowed`), and the bucket is below it (asserted above).
        unsafe { *self.origins.get_unchecked(part) }.wrapping_add(bucket * self.bucket_bytes)
    }

    /// Asks the CPU to start loading `bucket`'s bytes (a hint; nothing is read): the lines of
    /// both of its ends, as a bucket that straddles two lines would otherwise miss on the tails
    /// a present key's lookup reads.
    #[inline]
    pub(super) fn prefetch(&self, bucket: usize) {
        let window = self.window(bucket);
        crate::table::prefetch_t1(window);
        crate::table::prefetch_t1(window.wrapping_add(self.bucket_bytes - 1));
    }

    /// The words of `bucket` as read: its first 8 bytes, and the 8 bytes from `tails_byte`.
    #[inline]
    fn read_words(&self, bucket: usize) -> (u64, u64) {
        // SAFETY: the window of a bucket, from `window`.
        unsafe { self.words_at(self.window(bucket)) }
    }

    /// The two words of the bucket whose window is `window`.
    ///
    /// # Safety
    ///
    /// `window` must come from [`window`](Self::window) on this table.
    #[inline]
    unsafe fn words_at(&self, window: *mut u8) -> (u64, u64) {
        // SAFETY: `window` points to `span` readable bytes of a live part (see `window`): the
        // bucket's own bytes when it has 8 or more, and `tails_byte` is then its length less
        // 8; else 8 bytes with its padding, and `tails_byte` is 0. Both reads lie inside them;
        // any bytes are a valid u64.
        let (head, tails) = unsafe {
            (
                window.cast::<u64>().read_unaligned(),
                window.add(self.tails_byte).cast::<u64>().read_unaligned(),
            )
        };
        (u64::from_le(head), u64::from_le(tails))
    }

    /// The bytes of `bucket` from its start as one number (bits past its `span` are 0): its
    /// two words laid over each other, where they overlap holding the same bytes.
    #[inline]
    fn read_bits(&self, bucket: usize) -> u128 {
        self.laid_over(self.read_words(bucket))
    }

    /// A bucket's two words laid over each other at their bytes' places.
    #[inline]
    fn laid_over(&self, (head, tails): (u64, u64)) -> u128 {
        u128::from(head) | u128::from(tails) << (8 * self.tails_byte)
    }

    /// `bucket` as it is stored: its fingerprints word and its tails word.
    #[inline]
    pub(super) fn read(&self, bucket: usize) -> Words {
        let (head, tails) = self.read_words(bucket);
        Words { prints: head & self.lanes.all, tails: (tails >> self.tails_shift) & self.tails_mask }
    }

    /// `fingerprint` in each of the four fingerprint lanes, for [`probe`](Self::probe).
    #[inline]
    pub(super) fn broadcast(&self, fingerprint: u32) -> u64 {
        self.lanes.ones * u64::from(fingerprint)
    }

    /// `bucket` compared with a fingerprint `broadcast` carries in every lane: the top bit of
    /// each lane whose fingerprint equals it. The lanes are compared together: adding each
    /// lane's low bits to all-ones-but-the-top carries into the top bit exactly when a low bit
    /// is set, and no carry crosses a lane. The tails are read later, and only if a lookup
    /// needs them ([`tails`](Self::tails)): an absent key's rarely does.
    #[inline]
    pub(super) fn probe(&self, bucket: usize, broadcast: u64) -> Probe<'_> {
        let Lanes { tops, all, .. } = self.lanes;
        let window = self.window(bucket);
        // SAFETY: the window of a bucket, from `window`: its `span` bytes are readable, and the
        // first 8 of them hold its fingerprints.
        let prints = u64::from_le(unsafe { window.cast::<u64>().read_unaligned() }) & all;
        let difference = prints ^ broadcast;
        let lows = all & !tops;
        let nonzero = ((difference & lows) + lows) | difference;
        // The tails word's 8 bytes start `tails_byte` into the window, inside its `span` bytes.
        Probe { equal: !nonzero & tops, tails_word: window.wrapping_add(self.tails_byte), table: PhantomData }
    }

    /// A probed bucket's tail fields beside its equal lanes.
    #[inline]
    pub(super) fn tails(&self, probe: Probe<'_>) -> Probed {
        // SAFETY: `probe.tails_word` points to 8 readable bytes of a bucket's window (`probe`),
        // in the table that `Probe<'_>` borrows: its bytes are there and unchanged while it
        // lives. Any bytes are a valid u64.
        let tails = u64::from_le(unsafe { probe.tails_word.cast::<u64>().read_unaligned() });
        Probed { equal: probe.equal, tails: (tails >> self.tails_shift) & self.tails_mask }
    }

    /// The tail field of the slot whose fingerprint lane has its top bit at `top`.
    #[inline]
    fn tail_of_lane(&self, probe: Probed, top: u32) -> u32 {
        let shift = self.tail_shift_of_lane_top[top as usize & 63];
        (probe.tails >> shift) as u32 & self.field_mask
    }

    /// Whether the lowest slot of a probed bucket with an equal fingerprint holds a tail that
    /// `key_bits` (the key's address bits past the bucket's level) extend: the one check a
    /// present key almost always needs, without a branch.
    #[inline]
    pub(super) fn lowest_holds(&self, probe: Probed, key_bits: u32) -> bool {
        (probe.equal != 0) & tail_matches(self.tail_of_lane(probe, probe.equal.trailing_zeros()), key_bits)
    }

    /// Whether any slot of a probed bucket holds the fingerprint and a tail that `key_bits`
    /// extend.
    pub(super) fn probe_holds(&self, probe: Probed, key_bits: u32) -> bool {
        let mut equal = probe.equal;
        while equal != 0 {
            if tail_matches(self.tail_of_lane(probe, equal.trailing_zeros()), key_bits) {
                return true;
            }
            equal &= equal - 1;
        }
        false
    }

    /// The top bit of each empty slot's tail lane (an empty slot's tail field is 0), by the
    /// same carry trick as [`probe`](Self::probe): the slots with room, without a loop.
    #[inline]
    pub(super) fn free_lanes(&self, words: Words) -> u64 {
        let Lanes { tops, all, .. } = self.tail_lanes;
        let lows = all & !tops;
        !(((words.tails & lows) + lows) | words.tails) & tops
    }

    /// The slot of the lowest lane `free_lanes` (not 0) marks.
    #[inline]
    pub(super) fn first_slot(&self, free_lanes: u64) -> usize {
        debug_assert!(free_lanes != 0);
        usize::from(self.slot_of_tail_top[free_lanes.trailing_zeros() as usize & 63])
    }

    /// The entry in one slot of a read bucket, as [`Widths::pack`] makes it.
    #[inline]
    pub(super) fn entry(&self, words: Words, slot: usize) -> u32 {
        let Widths { fingerprint, tail } = self.widths;
        let slot = slot as u32;
        let print = (words.prints >> (slot * fingerprint)) as u32 & ((1 << fingerprint) - 1);
        let field = (words.tails >> (slot * (tail + 1))) as u32 & self.field_mask;
        self.widths.pack(print, field)
    }

    /// The four entries of `bucket`, each as [`Widths::pack`] makes it.
    #[inline]
    pub(super) fn bucket(&self, bucket: usize) -> [u32; SLOTS] {
        let words = self.read(bucket);
        std::array::from_fn(|slot| self.entry(words, slot))
    }
}

/// A bucket's two words as stored ([`Segments::read`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Words {
    prints: u64,
    tails: u64,
}

/// A bucket compared with a fingerprint ([`Segments::probe`]), its tails not read yet; it
/// borrows the table, whose bytes it reads them from.
#[derive(Debug, Clone, Copy)]
pub(super) struct Probe<'a> {
    /// The top bit of each fingerprint lane holding the fingerprint.
    pub(super) equal: u64,
    /// The first of the 8 bytes of the bucket's tails word, in the table borrowed for `'a`.
    tails_word: *const u8,
    table: PhantomData<&'a [u8]>,
}

/// A probed bucket with its tail fields ([`Segments::tails`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Probed {
    /// The top bit of each fingerprint lane holding the fingerprint.
    pub(super) equal: u64,
    /// The bucket's four tail fields.
    tails: u64,
}

impl Probed {
    /// The first probe if it found an equal fingerprint, else the second, with its key bits:
    /// chosen with masks, not a branch, as which of a present key's buckets holds it is a coin
    /// toss.
    #[inline]
    pub(super) fn either(first: (Probed, u32), second: (Probed, u32)) -> (Probed, u32) {
        let pick = u64::from(first.0.equal != 0).wrapping_neg();
        let probe = Probed {
            equal: first.0.equal & pick | second.0.equal & !pick,
            tails: first.0.tails & pick | second.0.tails & !pick,
        };
        (probe, first.1 & pick as u32 | second.1 & !pick as u32)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// For every base size: parts follow bucket order without gaps, each bucket lies in the part
    /// `part_of` names, and each segment has at most `PARTS` parts, of equal size when it has at
    /// least `PARTS` buckets.
    #[test]
    fn parts_cover_the_buckets_in_order() {
        for base_bits in 0..=10 {
            let table: Segments = Segments::new_empty(Widths { fingerprint: 10, tail: 8 }, base_bits);
            let mut previous = 0;
            for bucket in 0..(1usize << (base_bits + 9)) {
                let part = table.part_of(bucket);
                assert!(part >= previous, "m {base_bits}, bucket {bucket}");
                assert!(table.first_bucket(part) <= bucket && bucket < table.first_bucket(part + 1));
                previous = part;
            }
            for segment in 1..=9 {
                let (first, last) =
                    ((1usize << (segment - 1)) << base_bits, (1usize << segment << base_bits) - 1);
                let parts = table.part_of(last) - table.part_of(first) + 1;
                assert!(parts <= PARTS, "m {base_bits}, segment {segment}: {parts} parts");
                // Equal parts once the segment has a bucket for each.
                let size = table.capacity(table.part_of(first));
                let equal =
                    (table.part_of(first)..=table.part_of(last)).all(|part| table.capacity(part) == size);
                assert!(equal || last - first + 1 < PARTS, "m {base_bits}, segment {segment}");
            }
        }
        // The largest bucket numbers have parts too (a few hundred at most).
        let table: Segments = Segments::new_empty(Widths { fingerprint: 10, tail: 8 }, 0);
        assert!(table.part_of(usize::MAX >> PART_BITS) < 64 << PART_BITS);
    }
}
