//! The C++ reference's cuckoo filter, transcribed into Rust: FastFilter's
//! `CuckooFilterStable<uint64_t, 12, SingleTable, SimpleMixSplit>` (fastfilter_cpp,
//! `src/cuckoo/cuckoofilter_stable.h` and `singletable.h`), its lookup and its insert, so that
//! bugu can be timed against it in one process ([`crate::lookup_kernels`],
//! [`crate::insert_kernels`]) instead of against a binary run minutes apart.
//!
//! What it does, as the C++ does:
//! - hash: MurmurHash3's 64-bit finaliser of key + seed; bucket `reduce(low 32 bits, n)`
//!   (Lemire's reduction); tag the high half's low 12 bits, 0 read as 1;
//! - alternate bucket `n - i - r` (plus `n` when negative, in `i32`), `r` odd from the tag;
//! - lookup: one unaligned 8-byte load per bucket, unchecked, and the `haszero12` test;
//! - insert (`AddImpl`): the first free slot of the primary bucket; else, up to 500 times, the
//!   alternate bucket's first free slot, or a tag kicked out of a slot picked by libc's `rand()`
//!   for the walk to carry on with; after 500 kicks the last tag goes to a one-entry victim cache
//!   and every later insert is refused. Tags are read and written as unaligned 16-bit words. As
//!   in the C++ benchmark's binary, the hash is inlined into the caller and the rest is a call.
//!
//! Its table is sized as the C++ sizes it and zero-filled on huge pages (advised like bugu's), so
//! that bugu is compared with a reference that misses the TLB no more than bugu does (the C++
//! binary's table, on 4 KiB pages, misses it more).

use memmap2::MmapMut;

use crate::memory_floor;
use crate::workload::SplitMix64;

/// Bytes per bucket: four 12-bit tags.
const BUCKET_BYTES: usize = 6;
/// Slots per bucket.
const SLOTS: usize = 4;
/// The C++ filter's `kMaxCuckooCount`: kicks before an insert gives up.
const MAX_KICKS: u32 = 500;

/// FastFilter's `CuckooFilterStable<uint64_t, 12>`: lookup ([`contains`](Self::contains)) and
/// insert ([`add`](Self::add)).
pub struct ReferenceFilter {
    /// The packed buckets and 8 bytes more, so that the last bucket's 8-byte load stays inside.
    bytes: MmapMut,
    buckets: u32,
    seed: u64,
    /// Tags stored (the victim's not counted).
    items: usize,
    /// Where the last insert that ran out of kicks left its homeless tag: `(bucket, tag)`.
    victim: Option<(u32, u32)>,
}

impl ReferenceFilter {
    /// A table sized as the reference sizes one for `keys` keys (`(10 + keys / 0.94 / 4) / 2 * 2`
    /// buckets), of random bytes: for lookups, which do not branch on what they read.
    ///
    /// # Panics
    /// If that is more buckets than the reference's `i32` bucket arithmetic addresses.
    pub fn random(keys: usize, seed: u64) -> Self {
        let mut random = SplitMix64::new(seed);
        Self::with_bytes(keys, random.next_u64(), |_| random.next_u64() as u8)
    }

    /// An empty filter for `keys` keys, its zeros written (as the C++ constructor's `memset`
    /// writes them) before any insert.
    ///
    /// # Panics
    /// As [`random`](Self::random).
    pub fn empty(keys: usize, seed: u64) -> Self {
        Self::with_bytes(keys, seed, |_| 0)
    }

    fn with_bytes(keys: usize, seed: u64, byte: impl FnMut(usize) -> u8) -> Self {
        let buckets = ((10.0 + keys as f64 / 0.94 / SLOTS as f64) as u64 / 2 * 2).max(2);
        // The alternate is computed in `i32`, as the reference computes it.
        let buckets = i32::try_from(buckets).expect("the reference indexes buckets with an i32") as u32;
        let bytes = memory_floor::advised_bytes(buckets as usize * BUCKET_BYTES + 8, byte);
        ReferenceFilter { bytes, buckets, seed, items: 0, victim: None }
    }

    /// Bytes the table takes.
    pub fn memory_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Tags stored in the table.
    pub fn len(&self) -> usize {
        self.items
    }

    /// Whether the table holds no tag.
    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    /// Whether the key's tag is in either of its buckets (the victim cache, empty in every timed
    /// lookup, is not read).
    #[inline(always)]
    pub fn contains(&self, key: u64) -> bool {
        let (tag, b1) = self.primary(key);
        let b2 = self.alternate(b1, tag);
        let pattern = 0x0010_0100_1001u64 * u64::from(tag);
        // SAFETY: `primary` and `alternate` give buckets below `buckets` (see `alternate`; the
        // tests check both).
        let (w1, w2) = unsafe { (self.window(b1), self.window(b2)) };
        has_zero_12(w1 ^ pattern) | has_zero_12(w2 ^ pattern)
    }

    /// Inserts the key as `CuckooFilterStable::Add` does: `false` once the victim cache is taken
    /// (the C++ returns `NotEnoughSpace`), else `true`, also when this insert's walk ran out of
    /// kicks and left its last tag in the victim cache (the C++ returns `Ok`).
    #[inline(always)]
    pub fn add(&mut self, key: u64) -> bool {
        if self.victim.is_some() {
            return false;
        }
        let (tag, bucket) = self.primary(key);
        self.add_at(bucket, tag)
    }

    /// `AddImpl`: out of line, as the C++ benchmark's loop calls it (`Add`, the hash and the
    /// victim check, is inlined into that loop; checked in its disassembly).
    #[inline(never)]
    fn add_at(&mut self, mut bucket: u32, mut tag: u32) -> bool {
        for kicks in 0..MAX_KICKS {
            // SAFETY: buckets come from `primary` and `alternate`, below `buckets`.
            if let Some(slot) = (0..SLOTS).find(|&slot| unsafe { self.tag(bucket, slot) } == 0) {
                // SAFETY: as above.
                unsafe { self.set_tag(bucket, slot, tag) };
                self.items += 1;
                return true;
            }
            if kicks > 0 {
                // SAFETY: `rand` has no preconditions (the C++ calls the same function).
                let slot = unsafe { libc::rand() } as usize % SLOTS;
                // SAFETY: as above.
                let old = unsafe { self.tag(bucket, slot) };
                // SAFETY: as above.
                unsafe { self.set_tag(bucket, slot, tag) };
                tag = old;
            }
            bucket = self.alternate(bucket, tag);
        }
        self.victim = Some((bucket, tag));
        true
    }

    /// The key's tag and primary bucket.
    #[inline(always)]
    fn primary(&self, key: u64) -> (u32, u32) {
        let hash = murmur3_fmix64(key.wrapping_add(self.seed));
        let mut tag = (hash >> 32) as u32 & 0xfff;
        tag += u32::from(tag == 0);
        (tag, reduce(hash, self.buckets))
    }

    /// The other bucket of a tag in `bucket`: `n - bucket - r`, plus `n` when negative, with `r`
    /// odd in `1..n`; so in `0..n` for any `bucket < n`, never `bucket` itself (`n` is even), and
    /// an involution.
    #[inline(always)]
    fn alternate(&self, bucket: u32, tag: u32) -> u32 {
        let b2 = self.buckets as i32 - bucket as i32 - self.offset(tag) as i32;
        (if b2 < 0 { b2 + self.buckets as i32 } else { b2 }) as u32
    }

    /// The odd offset, in `1..buckets`, from which a tag's alternate bucket is found.
    #[inline(always)]
    fn offset(&self, tag: u32) -> u32 {
        (reduce(u64::from(tag).wrapping_mul(0xc4ce_b9fe_1a85_ec53), self.buckets >> 1) << 1) + 1
    }

    /// The 8 bytes from the start of a bucket, as the reference loads them: unchecked, as the
    /// reference's load is (a check per load does not compile away, and made the kernel bugu is
    /// judged against six instructions longer).
    ///
    /// # Safety
    /// `bucket < self.buckets`.
    #[inline(always)]
    unsafe fn window(&self, bucket: u32) -> u64 {
        // SAFETY: the caller guarantees `bucket < buckets`, so the 8 bytes from the bucket's start
        // are inside the table's `buckets * 6 + 8` bytes.
        u64::from_le(unsafe {
            self.bytes.as_ptr().add(self.tag_offset(bucket, 0)).cast::<u64>().read_unaligned()
        })
    }

    /// The tag in a slot: `ReadTag`, a 16-bit load shifted for odd slots.
    ///
    /// # Safety
    /// `bucket < self.buckets` and `slot < 4`.
    #[inline(always)]
    unsafe fn tag(&self, bucket: u32, slot: usize) -> u32 {
        // SAFETY: the caller's bounds put the two bytes inside the bucket's six.
        let word =
            unsafe { self.bytes.as_ptr().add(self.tag_offset(bucket, slot)).cast::<u16>().read_unaligned() };
        u32::from(u16::from_le(word) >> ((slot & 1) << 2)) & 0xfff
    }

    /// Stores a tag in a slot: `WriteTag`, a 16-bit read-modify-write.
    ///
    /// # Safety
    /// As [`tag`](Self::tag).
    #[inline(always)]
    unsafe fn set_tag(&mut self, bucket: u32, slot: usize, tag: u32) {
        let (keep, value) = if slot & 1 == 0 { (0xf000, tag as u16) } else { (0x000f, (tag << 4) as u16) };
        let offset = self.tag_offset(bucket, slot);
        // SAFETY: as in `tag`; the table is exclusively borrowed.
        unsafe {
            let word = self.bytes.as_mut_ptr().add(offset).cast::<u16>();
            word.write_unaligned(((u16::from_le(word.read_unaligned()) & keep) | value).to_le());
        }
    }

    /// The byte where a slot's 16-bit word starts: `j + j / 2` into the bucket.
    #[inline(always)]
    fn tag_offset(&self, bucket: u32, slot: usize) -> usize {
        debug_assert!(bucket < self.buckets && slot < SLOTS, "a slot of the table");
        bucket as usize * BUCKET_BYTES + slot + (slot >> 1)
    }
}

/// Lemire's reduction of the low 32 bits onto `0..n`, as the reference computes it.
#[inline(always)]
fn reduce(hash: u64, n: u32) -> u32 {
    (((hash & 0xffff_ffff) * u64::from(n)) >> 32) as u32
}

/// MurmurHash3's 64-bit finaliser, the reference's `murmur64`.
#[inline(always)]
pub fn murmur3_fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The reference's `haszero12` over four 12-bit lanes: the borrow test.
#[inline(always)]
fn has_zero_12(x: u64) -> bool {
    x.wrapping_sub(0x0010_0100_1001) & !x & 0x8008_0080_0800 != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::u64_keys;

    #[test]
    fn the_reference_locates_within_the_table_and_its_alternate_is_an_involution() {
        let filter = ReferenceFilter::random(10_000, 1);
        let mut random = SplitMix64::new(2);
        for _ in 0..100_000 {
            let (tag, b1) = filter.primary(random.next_u64());
            let b2 = filter.alternate(b1, tag);
            assert!((1..4096).contains(&tag) && b1 < filter.buckets && b2 < filter.buckets);
            assert_ne!(b1, b2);
            assert_eq!(filter.alternate(b2, tag), b1);
            // `b2 = n - b1 - r (mod n)`, with `r` the offset.
            let back =
                (2 * filter.buckets as i64 - b2 as i64 - filter.offset(tag) as i64) % filter.buckets as i64;
            assert_eq!(back as u32, b1);
        }
    }

    #[test]
    fn has_zero_12_answers_whether_any_of_four_lanes_is_zero() {
        let mut random = SplitMix64::new(3);
        for _ in 0..100_000 {
            let lanes: [u64; 4] = std::array::from_fn(|_| random.next_u64() % 3);
            let garbage = random.next_u64() << 48;
            let word = lanes.iter().enumerate().fold(garbage, |w, (i, &lane)| w | lane << (12 * i));
            assert_eq!(has_zero_12(word), lanes.contains(&0), "{lanes:?}");
        }
    }

    #[test]
    fn tags_written_read_back_and_leave_their_neighbours() {
        let mut filter = ReferenceFilter::empty(100, 4);
        let tags = [0xabc, 0x123, 0xfff, 0x001];
        for bucket in [0, filter.buckets - 1] {
            for (slot, &tag) in tags.iter().enumerate() {
                // SAFETY: both buckets are below `buckets`, slots below 4.
                unsafe { filter.set_tag(bucket, slot, tag) };
            }
            // SAFETY: as above.
            let read: Vec<u32> = (0..SLOTS).map(|slot| unsafe { filter.tag(bucket, slot) }).collect();
            assert_eq!(read, tags);
        }
    }

    #[test]
    fn a_fill_to_the_reference_capacity_finds_every_key() {
        let keys = u64_keys(5, 0, 20_000);
        let mut filter = ReferenceFilter::empty(keys.len(), 6);
        assert!(filter.is_empty());
        assert!(keys.iter().all(|&key| filter.add(key)));
        // Sized for 94% load: every key fits, with kicks and without the victim cache.
        assert_eq!((filter.len(), filter.victim), (keys.len(), None));
        assert!(keys.iter().all(|&key| filter.contains(key)));
        let absent = u64_keys(5, 1 << 40, 100_000);
        let false_positives = absent.iter().filter(|&&key| filter.contains(key)).count();
        // 8 probes of 12-bit tags at 94% load: about 0.18%.
        assert!((50..400).contains(&false_positives), "{false_positives}");
    }
}
