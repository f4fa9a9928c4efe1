//! From a hash to where its item lives in a table: the fingerprint and both candidate buckets,
//! one hash at a time ([`Addressing::locate`]) or a block at a time ([`LocatedBlock`]).
//!
//! Private to the crate: users hand the filters items or hashes, never places. Persisted tables
//! depend on it as they do on the hash, so it never changes either.

/// A hash's fingerprint, primary bucket and alternate bucket, as [`Addressing::locate`] gives them.
pub(crate) type Located = (u32, usize, usize);

/// Derives fingerprints and bucket indices from a 64-bit hash for a table of `buckets` buckets.
///
/// - primary bucket: Lemire's multiply-shift reduction of the whole hash (any bucket count, no
///   division);
/// - fingerprint: the low 32 bits reduced the same way onto `1..=2^f - 1`, uniform and never 0
///   (0 marks an empty slot);
/// - alternate bucket: FastFilter's involution for any *even* bucket count `n`: an odd offset `r`
///   derived from the fingerprint, `alt(i) = (n - i - r) mod n`. Applying it twice returns `i`,
///   and since `2i + r` is odd it never equals `i`.
///
/// Memory safety relies on one property: for any bucket count `n >= 1`, [`locate`](Self::locate)
/// gives buckets below `n` (the primary is `floor(h * n / 2^64)`; the offset is at most
/// `max(1, n - 1)`, so `i + r` lies in `1..=2n - 2` or is 1, and both arms of `alternate` land in
/// `0..n`). Lookups load a table's buckets without bounds checks on it (`table/`); the proptest
/// in this module's tests checks it for even and odd counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Addressing {
    buckets: u64,
    half: u64,
    fingerprint_range: u64,
}

/// Spreads fingerprints before they choose an alternate bucket (Knuth's multiplicative constant).
const FINGERPRINT_MIX: u64 = 0x9E37_79B9_7F4A_7C15;

impl Addressing {
    /// `buckets` must be at least 1, and even for the alternate to be an involution (the
    /// configuration guarantees both; tests of the bare table also use odd counts).
    pub(crate) fn new(buckets: usize, fingerprint_bits: u32) -> Self {
        assert!(buckets >= 1, "a table has at least one bucket");
        debug_assert!((1..=32).contains(&fingerprint_bits));
        Addressing {
            buckets: buckets as u64,
            half: buckets as u64 / 2,
            fingerprint_range: (1u64 << fingerprint_bits) - 1,
        }
    }

    #[inline]
    pub(crate) fn fingerprint(&self, hash: u64) -> u32 {
        (((hash & 0xFFFF_FFFF) * self.fingerprint_range) >> 32) as u32 + 1
    }

    #[inline]
    pub(crate) fn alternate(&self, bucket: usize, fingerprint: u32) -> usize {
        self.alternate_by(bucket, fingerprint, mul_high)
    }

    /// [`alternate`](Self::alternate), the high half of its product taken by `mul_high`.
    #[inline(always)]
    fn alternate_by(&self, bucket: usize, fingerprint: u32, mul_high: impl Fn(u64, u64) -> u64) -> usize {
        let mixed = (fingerprint as u64).wrapping_mul(FINGERPRINT_MIX);
        let offset = 2 * mul_high(mixed, self.half) + 1;
        // (n - bucket - offset) mod n, with bucket + offset in 1..2n - 1.
        let sum = bucket as u64 + offset;
        (if sum <= self.buckets { self.buckets - sum } else { 2 * self.buckets - sum }) as usize
    }

    /// The fingerprint and both candidate buckets of a hash.
    #[inline]
    pub(crate) fn locate(&self, hash: u64) -> Located {
        self.locate_by(hash, mul_high)
    }

    /// [`locate`](Self::locate), the high halves of its products taken by `mul_high`.
    #[inline(always)]
    fn locate_by(&self, hash: u64, mul_high: impl Fn(u64, u64) -> u64) -> Located {
        let fingerprint = self.fingerprint(hash);
        let primary = mul_high(hash, self.buckets) as usize;
        (fingerprint, primary, self.alternate_by(primary, fingerprint, mul_high))
    }

    /// Whether the table has fewer than `2^32` buckets, so that
    /// [`locate_block_narrow`](Self::locate_block_narrow) places hashes as
    /// [`locate`](Self::locate) does.
    #[inline]
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) fn is_narrow(&self) -> bool {
        self.buckets <= u32::MAX as u64
    }

    /// [`locate`](Self::locate) for each hash of a block, lane `i` for hash `i`.
    #[inline(always)]
    pub(crate) fn locate_block<const N: usize>(&self, hashes: &[u64; N], block: &mut LocatedBlock<N>) {
        self.locate_block_by(hashes, block, mul_high);
    }

    /// [`locate_block`](Self::locate_block) as a loop over lanes of 64-bit arithmetic that
    /// vector units run: the high halves of the products come from 32-bit products
    /// ([`mul_high_narrow`]), which gives `locate`'s places for a [narrow](Self::is_narrow)
    /// table. For any other table the buckets are still below the count (as [`Addressing`]
    /// argues for `locate`: the narrow products are never larger), only not where `locate` puts
    /// them.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) fn locate_block_narrow<const N: usize>(&self, hashes: &[u64; N], block: &mut LocatedBlock<N>) {
        self.locate_block_by(hashes, block, mul_high_narrow);
    }

    #[inline(always)]
    fn locate_block_by<const N: usize>(
        &self,
        hashes: &[u64; N],
        block: &mut LocatedBlock<N>,
        mul_high: impl Fn(u64, u64) -> u64 + Copy,
    ) {
        for (i, &hash) in hashes.iter().enumerate() {
            (block.fingerprints[i], block.primaries[i], block.alternates[i]) = self.locate_by(hash, mul_high);
        }
    }
}

/// The high 64 bits of `a * b`.
#[inline(always)]
fn mul_high(a: u64, b: u64) -> u64 {
    ((a as u128 * b as u128) >> 64) as u64
}

/// The high 64 bits of `a * b` for `b < 2^32`, from two 32 x 32-bit products (what vector units
/// multiply): `a * b = (a_hi * b) 2^32 + a_lo * b`, and the sum below cannot overflow. For a
/// larger `b` it gives the product with `b mod 2^32`, which is no larger than the full one.
#[inline(always)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn mul_high_narrow(a: u64, b: u64) -> u64 {
    // Masked (a no-op below 2^32) so that the compiler knows it may use 32-bit products.
    let b = b & 0xFFFF_FFFF;
    let low = (a & 0xFFFF_FFFF) * b;
    let high = (a >> 32) * b;
    (high + (low >> 32)) >> 32
}

/// Where a block of hashes goes: lane `i` holds the fingerprint and both buckets of hash `i`,
/// as [`Addressing::locate`] gives them.
#[derive(Clone, Copy)]
pub(crate) struct LocatedBlock<const N: usize> {
    pub(crate) fingerprints: [u32; N],
    pub(crate) primaries: [usize; N],
    pub(crate) alternates: [usize; N],
}

impl<const N: usize> Default for LocatedBlock<N> {
    fn default() -> Self {
        LocatedBlock { fingerprints: [0; N], primaries: [0; N], alternates: [0; N] }
    }
}

impl<const N: usize> LocatedBlock<N> {
    /// Lane `i`, as [`Addressing::locate`] gives it.
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> Located {
        (self.fingerprints[i], self.primaries[i], self.alternates[i])
    }

    /// Lane `i`, or `None` past the block.
    #[inline(always)]
    pub(crate) fn try_get(&self, i: usize) -> Option<Located> {
        (i < N).then(|| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::hash_item;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn located_buckets_are_below_the_count(buckets in 1usize..1_000_000, bits in 1u32..=32, hash in any::<u64>()) {
            // What lookups' unchecked loads rely on: for any count, odd ones included.
            let (_, i1, i2) = Addressing::new(buckets, bits).locate(hash);
            prop_assert!(i1 < buckets && i2 < buckets);
        }

        #[test]
        fn alternate_is_an_involution_without_fixed_points(
            half in 1usize..1_000_000, bits in 1u32..=32, hash in any::<u64>()
        ) {
            let addressing = Addressing::new(half * 2, bits);
            let (fp, i1, i2) = addressing.locate(hash);
            prop_assert!(fp >= 1 && (fp as u64) < (1u64 << bits));
            prop_assert!(i1 < half * 2 && i2 < half * 2);
            prop_assert_ne!(i1, i2);
            prop_assert_eq!(addressing.alternate(i2, fp), i1);
        }
    }

    #[test]
    fn located_buckets_stay_below_the_count_at_the_extremes() {
        // Tables are at most `isize::MAX` bytes, so counts stay far below 2^63.
        for buckets in
            [1, 2, 3, 4, 5, u32::MAX as usize, 1 << 32, (1 << 32) + 2, (1 << 40) + 1, usize::MAX >> 6]
        {
            for bits in [1, 12, 32] {
                let hashes = [0, 1, 0xFFFF_FFFF, 1 << 32, 1 << 63, u64::MAX];
                let addressing = Addressing::new(buckets, bits);
                for hash in hashes {
                    let (_, i1, i2) = addressing.locate(hash);
                    assert!(i1 < buckets && i2 < buckets, "{buckets} buckets, hash {hash:#x}");
                }
                // The narrow block form too, even for counts of 2^32 or more, where it misplaces.
                let mut block = LocatedBlock::default();
                addressing.locate_block_narrow(&hashes, &mut block);
                for i in 0..hashes.len() {
                    let (_, i1, i2) = block.get(i);
                    assert!(i1 < buckets && i2 < buckets, "{buckets} buckets, block lane {i}");
                }
            }
        }
    }

    #[test]
    fn fingerprints_cover_the_whole_range() {
        let addressing = Addressing::new(2, 4);
        let mut seen = [false; 16];
        for i in 0..10_000u64 {
            seen[addressing.fingerprint(hash_item(&i, 0)) as usize] = true;
        }
        assert!(!seen[0]);
        assert!(seen[1..].iter().all(|&s| s));
    }
}
