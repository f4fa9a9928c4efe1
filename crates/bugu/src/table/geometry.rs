//! A table's shape, and the layout constants every part of the crate shares: the fingerprint
//! widths and bucket sizes a table can have, and the padding after its buckets.

use super::kernels::MAX_LANES;
use super::semisort;

/// Fingerprint widths accepted, in bits.
pub const FINGERPRINT_BITS: std::ops::RangeInclusive<u32> = 4..=32;
/// Bucket sizes accepted, in slots.
pub const BUCKET_SIZES: [usize; 3] = [2, 4, 8];

// Every bucket size fits the array of a bucket's fingerprints (`Matcher::fingerprints`).
const _: () = {
    let mut i = 0;
    while i < BUCKET_SIZES.len() {
        assert!(BUCKET_SIZES[i] <= MAX_LANES);
        i += 1;
    }
};

/// Bytes after the packed buckets so that a 16-byte window load at the last bucket is in bounds.
pub(crate) const PADDING: usize = 16;

/// The shape of a table: how many buckets of how many slots of how many bits, and whether the
/// buckets are semi-sorted (then 4 slots, stored in `4 bits - 4` bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub(crate) buckets: usize,
    pub(crate) slots: usize,
    pub(crate) bits: u32,
    pub(crate) semi_sorted: bool,
}

impl Geometry {
    /// Bits one bucket takes.
    pub(crate) const fn bucket_bits(&self) -> usize {
        match self.semi_sorted {
            true => semisort::bucket_bits(self.bits),
            false => self.slots * self.bits as usize,
        }
    }

    /// Bytes of the packed buckets (without padding), or `None` if the table (with its padding)
    /// would not fit in memory sizes.
    pub(crate) fn payload_len(&self) -> Option<usize> {
        let total_bits = (self.buckets as u128) * (self.bucket_bits() as u128);
        let len = total_bits.div_ceil(8);
        (total_bits <= usize::MAX as u128 && len + PADDING as u128 <= isize::MAX as u128)
            .then_some(len as usize)
    }
}
