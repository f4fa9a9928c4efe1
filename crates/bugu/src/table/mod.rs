//! Bucket storage: `buckets x slots` fingerprints of `bits` bits, bit-packed little-endian in one
//! contiguous buffer.
//!
//! The table knows nothing of items or hashing: it stores fingerprints (non-zero `u32`s below
//! `2^bits`; 0 marks an empty slot) and answers per-bucket questions. Every probe of a bucket goes
//! through [`Probe`], chosen once when the table is built:
//! - the bucket fits a `u64` window (e.g. 4 x 12 bits): one load, one shift, SWAR over the lanes;
//! - it fits a `u128` window (e.g. 8 x 16 bits, 4 x 32 bits): the same on two words;
//! - otherwise (8 slots of more than 16 bits): slot by slot.
//!
//! The buffer has [`PADDING`] bytes beyond the last bucket, so a window load at any bucket stays in
//! bounds. Bucket `i` starts at bit `i * slots * bits`; slot `s` of it at `s * bits` more.

mod swar;

use swar::{Lanes, Word};

/// Bytes after the packed buckets so that a 16-byte window load at the last bucket is in bounds.
pub(crate) const PADDING: usize = 16;

/// How a bucket is probed; chosen from the geometry when the table is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probe {
    Word64(Lanes<u64>),
    Word128(Lanes<u128>),
    Slotwise,
}

/// The packed fingerprint table, over owned bytes (`Vec<u8>`, the default) or borrowed ones
/// (`&[u8]`, for zero-copy read-only views). `bytes` always holds the payload plus [`PADDING`].
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Table<S = Vec<u8>> {
    bytes: S,
    buckets: usize,
    slots: usize,
    bits: u32,
    probe: Probe,
}

impl Table {
    /// An empty table. The caller has checked that `buckets * slots * bits` fits in memory sizes.
    pub(crate) fn new(buckets: usize, slots: usize, bits: u32) -> Self {
        let bytes = vec![0; Self::payload_len(buckets, slots, bits) + PADDING];
        Table { bytes, buckets, slots, bits, probe: Self::choose_probe(slots, bits) }
    }

    /// Stores a fingerprint (or 0 to empty the slot).
    #[inline]
    pub(crate) fn set(&mut self, bucket: usize, slot: usize, fingerprint: u32) {
        debug_assert!((fingerprint as u64) <= self.slot_mask());
        let bit = self.slot_bit(bucket, slot);
        let (offset, shift) = (bit / 8, bit % 8);
        let window = u64::load(&self.bytes, offset);
        let mask = self.slot_mask() << shift;
        let window = (window & !mask) | ((fingerprint as u64) << shift);
        self.bytes[offset..offset + 8].copy_from_slice(&window.to_le_bytes());
    }

    pub(crate) fn clear(&mut self) {
        self.bytes.fill(0);
    }

    /// Bytes needed for the packed buckets (without padding), or `None` if that overflows.
    pub(crate) fn checked_payload_len(buckets: usize, slots: usize, bits: u32) -> Option<usize> {
        let total_bits = (buckets as u128) * (slots as u128) * (bits as u128);
        let len = total_bits.div_ceil(8).checked_add(PADDING as u128)?;
        usize::try_from(len).ok().map(|len| len - PADDING)
    }

    fn payload_len(buckets: usize, slots: usize, bits: u32) -> usize {
        Table::checked_payload_len(buckets, slots, bits).expect("table size checked by the configuration")
    }

    fn choose_probe(slots: usize, bits: u32) -> Probe {
        let bucket_bits = slots as u32 * bits;
        // A bucket starts at a bit offset that is a multiple of gcd(bucket_bits, 8) within its
        // first byte, so the window must hold the bucket plus that worst-case shift.
        let worst_shift = 8 - gcd(bucket_bits, 8);
        let worst_shift = if worst_shift == 8 { 0 } else { worst_shift };
        if bucket_bits + worst_shift <= u64::BITS {
            Probe::Word64(Lanes::new(slots, bits))
        } else if bucket_bits + worst_shift <= u128::BITS {
            Probe::Word128(Lanes::new(slots, bits))
        } else {
            Probe::Slotwise
        }
    }
}

impl<S: AsRef<[u8]>> Table<S> {
    /// A table over existing bytes (payload plus [`PADDING`]); `None` if the length does not match
    /// the geometry.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn from_bytes(bytes: S, buckets: usize, slots: usize, bits: u32) -> Option<Self> {
        let expected = Table::checked_payload_len(buckets, slots, bits)? + PADDING;
        (bytes.as_ref().len() == expected).then(|| Table {
            bytes,
            buckets,
            slots,
            bits,
            probe: Table::choose_probe(slots, bits),
        })
    }

    pub(crate) fn buckets(&self) -> usize {
        self.buckets
    }

    pub(crate) fn slots(&self) -> usize {
        self.slots
    }

    pub(crate) fn bits(&self) -> u32 {
        self.bits
    }

    /// The whole buffer, padding included (what the table costs in memory).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.bytes.as_ref().len()
    }

    /// The packed buckets, without padding: the table's persistent content.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn payload(&self) -> &[u8] {
        let bytes = self.bytes.as_ref();
        &bytes[..bytes.len() - PADDING]
    }

    #[inline(always)]
    fn slot_bit(&self, bucket: usize, slot: usize) -> usize {
        (bucket * self.slots + slot) * self.bits as usize
    }

    #[inline(always)]
    fn slot_mask(&self) -> u64 {
        (1u64 << self.bits) - 1
    }

    /// The fingerprint in a slot (0 if empty).
    #[inline]
    pub(crate) fn get(&self, bucket: usize, slot: usize) -> u32 {
        let bit = self.slot_bit(bucket, slot);
        let window = u64::load(self.bytes.as_ref(), bit / 8);
        ((window >> (bit % 8)) & self.slot_mask()) as u32
    }

    /// The bucket's lanes, shifted down so that lane 0 starts at bit 0 (bits above are garbage).
    #[inline(always)]
    fn window<W: Word>(&self, bucket: usize) -> W {
        let bit = self.slot_bit(bucket, 0);
        W::load(self.bytes.as_ref(), bit / 8) >> (bit % 8) as u32
    }

    /// Runs `swar` on the bucket's window, or `slotwise` on its slots when it fits no word.
    #[inline(always)]
    fn probe<R>(
        &self,
        bucket: usize,
        swar64: impl FnOnce(&Lanes<u64>, u64) -> R,
        swar128: impl FnOnce(&Lanes<u128>, u128) -> R,
        slotwise: impl FnOnce() -> R,
    ) -> R {
        match &self.probe {
            Probe::Word64(lanes) => swar64(lanes, self.window(bucket)),
            Probe::Word128(lanes) => swar128(lanes, self.window(bucket)),
            Probe::Slotwise => slotwise(),
        }
    }

    /// The bucket's fingerprints in slot order.
    #[inline]
    fn slot_values(&self, bucket: usize) -> impl Iterator<Item = u32> + '_ {
        (0..self.slots).map(move |slot| self.get(bucket, slot))
    }

    /// Whether the bucket holds `fingerprint`.
    #[inline]
    pub(crate) fn contains(&self, bucket: usize, fingerprint: u32) -> bool {
        self.find(bucket, fingerprint).is_some()
    }

    /// The first slot holding `fingerprint` (pass 0 to find an empty slot).
    #[inline]
    pub(crate) fn find(&self, bucket: usize, fingerprint: u32) -> Option<usize> {
        self.probe(
            bucket,
            |lanes, w| lanes.first_lane(lanes.matching_lanes(w, fingerprint)),
            |lanes, w| lanes.first_lane(lanes.matching_lanes(w, fingerprint)),
            || self.slot_values(bucket).position(|fp| fp == fingerprint),
        )
    }

    /// How many slots hold `fingerprint` (pass 0 to count empty slots).
    #[inline]
    pub(crate) fn count(&self, bucket: usize, fingerprint: u32) -> usize {
        self.probe(
            bucket,
            |lanes, w| lanes.matching_lanes(w, fingerprint).count_ones() as usize,
            |lanes, w| lanes.matching_lanes(w, fingerprint).count_ones() as usize,
            || self.slot_values(bucket).filter(|&fp| fp == fingerprint).count(),
        )
    }

    /// The number of occupied slots in a bucket.
    #[inline]
    pub(crate) fn occupied(&self, bucket: usize) -> usize {
        self.slots - self.count(bucket, 0)
    }
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_geometry_behaves_like_an_array(
            slots in prop::sample::select(vec![2usize, 4, 8]),
            bits in 4u32..=32,
            buckets in 1usize..20,
            writes in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<u32>()), 0..200),
        ) {
            let mut table = Table::new(buckets, slots, bits);
            let mut model = vec![vec![0u32; slots]; buckets];
            let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
            for (b, s, v) in writes {
                let (b, s) = (b % buckets, s % slots);
                // Small values make repeats and empties common.
                let v = if v % 3 == 0 { v % 5 } else { v & mask };
                table.set(b, s, v);
                model[b][s] = v;
                for (bucket, expected) in model.iter().enumerate() {
                    for (slot, &fp) in expected.iter().enumerate() {
                        prop_assert_eq!(table.get(bucket, slot), fp);
                    }
                    for probe in [0, 1, 2, 3, 4, v] {
                        prop_assert_eq!(table.find(bucket, probe), expected.iter().position(|&x| x == probe));
                        prop_assert_eq!(table.count(bucket, probe), expected.iter().filter(|&&x| x == probe).count());
                    }
                }
            }
            prop_assert_eq!(table.payload().len(), (buckets * slots * bits as usize).div_ceil(8));
        }
    }

    #[test]
    fn a_borrowed_table_reads_like_the_owned_one() {
        let mut owned = Table::new(10, 4, 12);
        owned.set(3, 1, 0xabc);
        let bytes = owned.bytes.clone();
        let view = Table::from_bytes(&bytes[..], 10, 4, 12).unwrap();
        assert_eq!(view.get(3, 1), 0xabc);
        assert_eq!(view.find(3, 0xabc), Some(1));
        assert!(Table::from_bytes(&bytes[1..], 10, 4, 12).is_none());
        assert!(Table::from_bytes(&bytes[..], usize::MAX, 8, 32).is_none());
    }

    #[test]
    fn probes_are_chosen_by_bucket_width() {
        assert!(matches!(Table::new(2, 4, 12).probe, Probe::Word64(_)));
        assert!(matches!(Table::new(2, 4, 13).probe, Probe::Word64(_)));
        assert!(matches!(Table::new(2, 4, 16).probe, Probe::Word64(_)));
        assert!(matches!(Table::new(2, 2, 32).probe, Probe::Word64(_)));
        assert!(matches!(Table::new(2, 2, 31).probe, Probe::Word128(_)));
        assert!(matches!(Table::new(2, 8, 16).probe, Probe::Word128(_)));
        assert!(matches!(Table::new(2, 4, 32).probe, Probe::Word128(_)));
        assert!(matches!(Table::new(2, 8, 17).probe, Probe::Slotwise));
    }
}
