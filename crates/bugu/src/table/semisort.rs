//! Semi-sorted buckets (Fan et al. 2014, efficient/cuckoofilter `packedtable.h`): one bit saved
//! per fingerprint in buckets of 4.
//!
//! The order of a bucket's fingerprints carries no information, so we store them sorted by their
//! low 4 bits. Four sorted 4-bit values are one of C(19, 4) = 3876 multisets, which fits in a
//! 12-bit code instead of 16 bits. A bucket of four `f`-bit fingerprints then takes
//! `12 + 4 (f - 4)` = `4 f - 4` bits: the code, then the four high parts (`f - 4` bits each) in
//! the same sorted order. An empty slot is fingerprint 0, as everywhere.
//!
//! Every width from 4 to 32 bits works (at 4 bits the high parts are empty); unlike the C++
//! version there is no width with a special case (its special cases give false negatives at 5,
//! 7 and 9 bits), and the tests cover every width.

use super::kernels::{self, Lanes, MAX_LANES, Matcher, Word};

/// Slots per semi-sorted bucket: the scheme is defined for 4.
pub(crate) const SLOTS: usize = 4;
/// Bits of the code for the sorted low nibbles.
pub(crate) const CODE_BITS: u32 = 12;
const CODES: usize = 3876;

/// Bits of a bucket of four `bits`-bit fingerprints: the code, then four high parts.
#[inline(always)]
pub(crate) const fn bucket_bits(bits: u32) -> usize {
    (SLOTS as u32 * bits - 4) as usize
}

/// `DECODE[code]`: the four sorted nibbles, nibble `k` in bits `4k..4k+4`. The table covers all
/// 4096 values of a 12-bit field: codes from 3876 on are invalid (readers reject them) and decode
/// to zeros, so corrupt bytes can never make a lookup index out of bounds.
static DECODE: [u16; 1 << CODE_BITS] = decode_table();

/// Whether a stored bucket (its bits at the bottom) has a valid code.
pub(crate) fn is_valid(bucket: u128) -> bool {
    (bucket as usize & ((1 << CODE_BITS) - 1)) < CODES
}

/// `binomial(n, k)` for the ranking below (n < 20, k <= 4).
const fn binomial(n: u32, k: u32) -> u32 {
    if k > n {
        return 0;
    }
    let mut result = 1;
    let mut i = 0;
    while i < k {
        result = result * (n - i) / (i + 1);
        i += 1;
    }
    result
}

/// `BINOMIAL[k][n]` = `binomial(n, k)` for the ranks below: looked up, not computed, on the
/// insert path.
static BINOMIAL: [[u16; 20]; 5] = {
    let mut table = [[0u16; 20]; 5];
    let mut k = 0;
    while k < 5 {
        let mut n = 0;
        while n < 20 {
            table[k][n] = binomial(n as u32, k as u32) as u16;
            n += 1;
        }
        k += 1;
    }
    table
};

/// The code of sorted nibbles `a <= b <= c <= d`: the rank of the 4-subset `{a, b+1, c+2, d+3}`
/// of `0..19` in the combinatorial number system. Codes run over `0..3876` in sorted order.
const fn encode_sorted(a: u32, b: u32, c: u32, d: u32) -> u32 {
    binomial(a, 1) + binomial(b + 1, 2) + binomial(c + 2, 3) + binomial(d + 3, 4)
}

/// [`encode_sorted`] by table lookups.
#[inline(always)]
fn code_of_sorted([a, b, c, d]: [u32; SLOTS]) -> u32 {
    a + (BINOMIAL[2][b as usize + 1] + BINOMIAL[3][c as usize + 2] + BINOMIAL[4][d as usize + 3]) as u32
}

const fn decode_table() -> [u16; 1 << CODE_BITS] {
    let mut table = [0u16; 1 << CODE_BITS];
    let mut d = 0;
    while d < 16 {
        let mut c = 0;
        while c <= d {
            let mut b = 0;
            while b <= c {
                let mut a = 0;
                while a <= b {
                    table[encode_sorted(a, b, c, d) as usize] = (a | b << 4 | c << 8 | d << 12) as u16;
                    a += 1;
                }
                b += 1;
            }
            c += 1;
        }
        d += 1;
    }
    table
}

/// A fingerprint's sort key: its low nibble above its high part (`nibble << (bits - 4) | high`),
/// so that the integer order of keys is a bucket's stored order (by low nibble, then high part),
/// and a key splits straight into what the bucket stores. An empty slot's key is 0, the least.
#[inline(always)]
fn key_of(fingerprint: u32, bits: u32) -> u32 {
    (fingerprint & 0xF) << (bits - 4) | fingerprint >> 4
}

/// The keys of a stored bucket (its bits at the bottom of `bucket`, garbage above allowed), in
/// its stored order.
#[inline(always)]
fn decode_keys<W: Word>(bucket: W, bits: u32) -> [u32; SLOTS] {
    let nibbles = DECODE[(bucket.low_u64() as usize) & ((1 << CODE_BITS) - 1)] as u32;
    let high_bits = bits - 4;
    let highs = bucket >> CODE_BITS;
    let high_mask = W::from_u128((1u128 << high_bits) - 1);
    std::array::from_fn(|k| {
        let high = ((highs >> (k as u32 * high_bits)) & high_mask).low_u64() as u32;
        ((nibbles >> (4 * k)) & 0xF) << high_bits | high
    })
}

/// Packs four keys in sorted order into a semi-sorted bucket (low `4 bits - 4` bits of the
/// result, in a word `W` that holds them): the code of the nibbles, then the high parts in the
/// same order. The code is only valid if the nibbles are in order.
#[inline(always)]
fn pack_sorted<W: Word>(keys: [u32; SLOTS], bits: u32) -> W {
    let high_bits = bits - 4;
    let mut bucket = W::from_u128(code_of_sorted(keys.map(|key| key >> high_bits & 0xF)) as u128);
    let high_mask = (1u32 << high_bits) - 1;
    for (k, key) in keys.iter().enumerate() {
        bucket = bucket | W::from_u128((key & high_mask) as u128) << (CODE_BITS + k as u32 * high_bits);
    }
    bucket
}

/// `(min, max)` of two keys, without a branch.
#[inline(always)]
fn ordered(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

/// Packs four fingerprints of `bits` bits into a semi-sorted bucket (low `4 bits - 4` bits of the
/// result, in a word `W` that holds them). Any order in, one canonical encoding out: the keys
/// are sorted by a network of five compare-exchanges.
#[cfg(test)]
pub(crate) fn encode<W: Word>(fingerprints: [u32; SLOTS], bits: u32) -> W {
    let mut keys = fingerprints.map(|fingerprint| key_of(fingerprint, bits));
    for (i, j) in [(0, 1), (2, 3), (0, 2), (1, 3), (1, 2)] {
        (keys[i], keys[j]) = ordered(keys[i], keys[j]);
    }
    pack_sorted(keys, bits)
}

/// A stored bucket (its bits at the bottom of `bucket`, garbage above allowed) with slot `slot`
/// (in its stored order) set to `fingerprint`, re-encoded: the bucket's new stored bits.
///
/// The update works on sort keys from decoding to encoding, and it does not sort: the three keys
/// that stay are in order already, and the new one moves down from the top, compared with each
/// (three compare-exchanges; a sorting network takes five, and the slot's key picked among four
/// took more). The result holds the other three fingerprints and the new one whatever the bytes
/// held; its nibbles stay in order, so its code is valid, even if a corrupt bucket's high parts
/// were not in order.
#[inline(always)]
pub(crate) fn with_slot_set<W: Word>(bucket: W, bits: u32, slot: usize, fingerprint: u32) -> W {
    let [k0, k1, k2, k3] = decode_keys(bucket, bits);
    // The keys that stay, in order: those below `slot`, then those above it.
    let kept =
        [if slot == 0 { k1 } else { k0 }, if slot <= 1 { k2 } else { k1 }, if slot <= 2 { k3 } else { k2 }];
    let (moving, top) = ordered(key_of(fingerprint, bits), kept[2]);
    let (moving, third) = ordered(moving, kept[1]);
    let (first, second) = ordered(moving, kept[0]);
    pack_sorted([first, second, third, top], bits)
}

/// The four fingerprints of a stored bucket, in its stored order.
#[inline(always)]
pub(crate) fn fingerprints<W: Word>(bucket: W, bits: u32) -> [u32; SLOTS] {
    let high_bits = bits - 4;
    decode_keys(bucket, bits).map(|key| (key & ((1 << high_bits) - 1)) << 4 | key >> high_bits)
}

/// Unpacks a semi-sorted bucket (its bits at the bottom of `bucket`, garbage above allowed) into
/// four `bits`-bit lanes, lane `k` at bits `k * bits`: the layout the SWAR probes expect. `W` must
/// hold the four lanes: `u64` up to 16 bits, else `u128`. With `bits` a constant the shifts fold
/// into a few masked shifts of the whole word.
#[inline(always)]
pub(crate) fn decode_lanes<W: Word>(bucket: W, bits: u32) -> W {
    let nibbles = W::from_u128(DECODE[(bucket.low_u64() as usize) & ((1 << CODE_BITS) - 1)] as u128);
    let high_bits = bits - 4;
    let high_mask = W::from_u128((1u128 << high_bits) - 1);
    let nibble_mask = W::from_u128(0xF);
    let highs = bucket >> CODE_BITS;
    let mut lanes = W::ZERO;
    for k in 0..SLOTS as u32 {
        let high = (highs >> (k * high_bits)) & high_mask;
        let nibble = (nibbles >> (4 * k)) & nibble_mask;
        lanes = lanes | ((high << 4) | nibble) << (k * bits);
    }
    lanes
}

/// The matcher of semi-sorted buckets of 4 x 13 bits, which compares without decoding whole lanes.
///
/// A stored bucket (48 bits: they start on a byte) is the 12-bit code of the sorted low nibbles,
/// then four 9-bit high parts in the same order. The high parts are compared where they lie
/// (9-bit lanes above the code) and the nibbles as `DECODE` gives them (4-bit lanes); nibble `k`'s
/// flag, at bit `4k + 3`, moves to high lane `k`'s flag at bit `9k + 8` by one multiplication
/// (shifts of `5 (j + 1)` for every `j`: the other 12 products land on bits that are neither a
/// flag nor each other, so nothing carries). A slot matches when both flags are set: about half
/// the work of decoding the bucket into 13-bit lanes.
pub(crate) struct Sorted13<F> {
    window: F,
}

impl<F: Fn(usize) -> u64> Sorted13<F> {
    const HIGH_BITS: u32 = 9;
    const NIBBLE_TO_HIGH: u64 = 1 << 5 | 1 << 10 | 1 << 15 | 1 << 20;

    /// The matcher over buckets loaded by `window` (the bucket's bits at the bottom).
    #[inline(always)]
    pub(crate) fn new(window: F) -> Self {
        Sorted13 { window }
    }

    /// The sorted nibbles of a stored bucket (nibble `k` at bits `4k`), as its code decodes them.
    #[inline(always)]
    fn nibbles(stored: u64) -> u16 {
        DECODE[stored as usize & ((1 << CODE_BITS) - 1)]
    }
}

impl<F: Fn(usize) -> u64> Matcher for Sorted13<F> {
    type Word = u64;
    /// A branch: with conditional moves, one-by-one semi-sorted fills were slower
    /// (`docs/performance.md`).
    const CHOOSES_BY_BRANCH: bool = true;
    #[inline(always)]
    fn slots(&self) -> usize {
        SLOTS
    }
    #[inline(always)]
    fn fingerprints(&self, bucket: usize) -> [u32; MAX_LANES] {
        let stored = fingerprints((self.window)(bucket), 13);
        std::array::from_fn(|k| stored.get(k).copied().unwrap_or(0))
    }
    #[inline(always)]
    fn matches(&self, bucket: usize, fingerprint: u32) -> u64 {
        let stored = (self.window)(bucket);
        let (highs, nibbles) = (Lanes::new(SLOTS, Self::HIGH_BITS), Lanes::new(SLOTS, 4));
        let high_flags = highs.matching_lanes(stored >> CODE_BITS, fingerprint >> 4);
        let nibble_flags = nibbles.matching_lanes(Self::nibbles(stored) as u64, fingerprint & 0xF);
        high_flags & nibble_flags.wrapping_mul(Self::NIBBLE_TO_HIGH)
    }
    /// Both buckets at once in vector registers on x86-64 (`kernels/x86_64.rs` says why: more
    /// lookups in flight than with the word code); other targets test one bucket at a time.
    #[inline(always)]
    fn either_matches(&self, b1: usize, b2: usize, fingerprint: u32) -> bool {
        let words = [(self.window)(b1), (self.window)(b2)];
        kernels::either_sorted_has::<{ CODE_BITS as i32 }>(
            words,
            words.map(|stored| Self::nibbles(stored) as u64),
            (fingerprint >> 4, fingerprint & 0xF),
            (&Lanes::new(SLOTS, Self::HIGH_BITS), &Lanes::new(SLOTS, 4)),
            Self::NIBBLE_TO_HIGH,
        )
    }
    /// Slot 0 or none: a bucket is stored sorted, and an empty slot (fingerprint 0) sorts first.
    /// Bytes not in that order (a corrupt file) may hide a free slot elsewhere: missed, but a
    /// full slot is never taken for a free one. Far cheaper than finding a zero with `matches`.
    #[inline(always)]
    fn free_slot(&self, bucket: usize) -> Option<usize> {
        let stored = (self.window)(bucket);
        let first_nibble = DECODE[stored as usize & ((1 << CODE_BITS) - 1)] & 0xF;
        let first_high = stored >> CODE_BITS & ((1 << Self::HIGH_BITS) - 1);
        (first_nibble == 0 && first_high == 0).then_some(0)
    }
    #[inline(always)]
    fn slot(&self, flags: u64) -> Option<usize> {
        (flags != 0).then(|| (flags.trailing_zeros() / Self::HIGH_BITS) as usize)
    }
    #[inline(always)]
    fn count(&self, flags: u64) -> u32 {
        Lanes::new(SLOTS, Self::HIGH_BITS).count_flagged(flags)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The four fingerprints of a decoded bucket.
    fn split_lanes<W: Word>(lanes: W, bits: u32) -> [u32; SLOTS] {
        let mask = W::from_u128((1u128 << bits) - 1);
        std::array::from_fn(|k| ((lanes >> (k as u32 * bits)) & mask).low_u64() as u32)
    }

    #[test]
    fn codes_enumerate_every_sorted_nibble_quadruple_once() {
        let mut seen = vec![false; CODES];
        for d in 0..16 {
            for c in 0..=d {
                for b in 0..=c {
                    for a in 0..=b {
                        let code = encode_sorted(a, b, c, d) as usize;
                        assert_eq!(code_of_sorted([a, b, c, d]), code as u32);
                        assert!(!seen[code], "code {code} twice");
                        seen[code] = true;
                        assert_eq!(DECODE[code], (a | b << 4 | c << 8 | d << 12) as u16);
                    }
                }
            }
        }
        assert!(seen.iter().all(|&s| s));
        assert!(is_valid(CODES as u128 - 1) && !is_valid(CODES as u128) && !is_valid(4095));
        assert_eq!(decode_lanes(4095u128, 12), 0, "invalid codes decode to zeros");
    }

    proptest! {
        #[test]
        fn the_13_bit_matcher_agrees_with_decoded_lanes(
            raw in any::<[u32; 4]>(), empties in any::<[bool; 4]>(), garbage in any::<u16>(), pick in 0usize..5
        ) {
            let fps: [u32; 4] = std::array::from_fn(|k| if empties[k] { 0 } else { raw[k] & 0x1FFF });
            // The bucket in the low 48 bits of its window, the next bucket's bytes above.
            let window = encode::<u64>(fps, 13) | (garbage as u64) << 48;
            let lanes = split_lanes(decode_lanes(window, 13), 13);
            let matcher = Sorted13::new(|_| window);
            // A stored fingerprint, a neighbour of one (same nibble or same high part), or 0.
            let probe = match pick { 4 => raw[0] & 0x1FFF ^ 0x10, 3 => raw[1] & 0x1FFF ^ 1, k => fps[k] };
            let flags = matcher.matches(0, probe);
            prop_assert_eq!(flags.count_ones() as usize, lanes.iter().filter(|&&fp| fp == probe).count());
            prop_assert_eq!(matcher.slot(flags), lanes.iter().position(|&fp| fp == probe));
            prop_assert_eq!(matcher.count(flags), flags.count_ones());
            prop_assert_eq!(&matcher.fingerprints(0)[..], &[lanes[0], lanes[1], lanes[2], lanes[3], 0, 0, 0, 0][..]);
        }

        #[test]
        fn the_13_bit_matcher_tests_two_buckets_as_each_alone(
            raw in any::<[[u32; 4]; 2]>(), empties in any::<[[bool; 4]; 2]>(), garbage in any::<[u16; 2]>(),
            corrupt in any::<Option<u64>>(), pick in 0usize..10
        ) {
            let fps = |b: usize| -> [u32; 4] {
                std::array::from_fn(|k| if empties[b][k] { 0 } else { raw[b][k] & 0x1FFF })
            };
            let mut windows = [0, 1].map(|b| encode::<u64>(fps(b), 13) | (garbage[b] as u64) << 48);
            // Bytes no insert writes (a corrupt file) are answered alike too.
            if let Some(bytes) = corrupt {
                windows[1] = bytes;
            }
            let matcher = Sorted13::new(|b| windows[b]);
            // A fingerprint of either bucket, a neighbour of one (same nibble or same high part), or 0.
            let probe = match pick {
                9 => raw[0][0] & 0x1FFF ^ 0x10,
                8 => raw[1][1] & 0x1FFF ^ 1,
                k => fps(k / 4)[k % 4],
            };
            let each = matcher.matches(0, probe) | matcher.matches(1, probe) != 0;
            prop_assert_eq!(matcher.either_matches(0, 1, probe), each);
            prop_assert_eq!(matcher.either_matches(1, 0, probe), each);
            // The word code of targets without the vector one answers alike.
            type Plain = Sorted13<fn(usize) -> u64>;
            let portable = kernels::portable_either_sorted_has::<{ CODE_BITS as i32 }>(
                windows,
                windows.map(|stored| Plain::nibbles(stored) as u64),
                (probe >> 4, probe & 0xF),
                (&Lanes::new(SLOTS, Plain::HIGH_BITS), &Lanes::new(SLOTS, 4)),
                Plain::NIBBLE_TO_HIGH,
            );
            prop_assert_eq!(portable, each);
            if corrupt.is_none() {
                prop_assert_eq!(each, fps(0).contains(&probe) || fps(1).contains(&probe));
            }
        }

        #[test]
        fn setting_a_slot_gives_the_canonical_encoding_of_the_new_multiset(
            bits in 4u32..=32, raw in any::<[u32; 4]>(), empties in any::<[bool; 4]>(), slot in 0usize..4, new in any::<u32>()
        ) {
            let mask = if bits == 32 { u32::MAX } else { (1 << bits) - 1 };
            let fps: [u32; 4] = std::array::from_fn(|k| if empties[k] { 0 } else { raw[k] & mask });
            let bucket: u128 = encode(fps, bits);
            let mut expected = fingerprints(bucket, bits);
            expected[slot] = new & mask;
            prop_assert_eq!(with_slot_set(bucket, bits, slot, new & mask), encode::<u128>(expected, bits));
        }

        #[test]
        fn setting_a_slot_of_a_bucket_out_of_order_loses_nothing(stored in any::<u64>(), slot in 0usize..4, new in 0u32..1 << 13) {
            // Any valid code, with high parts in any order (bytes no insert writes).
            let bucket = stored % (1 << 48);
            prop_assume!(is_valid(bucket as u128));
            let mut expected = fingerprints(bucket, 13);
            expected[slot] = new;
            let updated: u64 = with_slot_set(bucket, 13, slot, new);
            prop_assert!(updated < 1 << 48 && is_valid(updated as u128));
            let mut stored_now = fingerprints(updated, 13);
            stored_now.sort_unstable();
            expected.sort_unstable();
            prop_assert_eq!(stored_now, expected);
        }

        #[test]
        fn encoding_round_trips_as_a_multiset(bits in 4u32..=32, raw in any::<[u32; 4]>(), empties in any::<[bool; 4]>()) {
            let mask = if bits == 32 { u32::MAX } else { (1 << bits) - 1 };
            let fps: [u32; 4] = std::array::from_fn(|k| if empties[k] { 0 } else { raw[k] & mask });
            let bucket: u128 = encode(fps, bits);
            prop_assert!(bucket < 1u128 << (4 * bits - 4));
            let mut decoded = split_lanes(decode_lanes(bucket, bits), bits);
            if bits <= 16 {
                prop_assert_eq!(decode_lanes(bucket as u64, bits) as u128, decode_lanes(bucket, bits));
            }
            let mut expected = fps;
            decoded.sort_unstable();
            expected.sort_unstable();
            prop_assert_eq!(decoded, expected);
            // Canonical: any permutation encodes the same.
            let mut reversed = fps;
            reversed.reverse();
            prop_assert_eq!(encode::<u128>(reversed, bits), bucket);
        }
    }
}
