//! SWAR ("SIMD within a register") probes of a whole bucket at once.
//!
//! A bucket of `b` lanes of `f` bits is loaded into one machine word; [`Lanes::zero_lanes`] sets
//! the top bit of every lane that is zero, exactly (no borrow crosses a lane, unlike the classic
//! `haszero` trick whose higher lanes may report false zeros). Finding a fingerprint is finding a
//! zero after XOR with the fingerprint repeated in every lane. A lookup, which only asks whether
//! any lane matches, uses that classic trick ([`Lanes::any_zero_lane`]): its answer to that
//! question is exact.
//!
//! The [`Matcher`] trait, which the table's bucket operations are written against, lives here
//! with its SWAR implementation ([`Windowed`]) and its fallback for buckets no word holds
//! ([`Slotwise`]: slot by slot).

use std::ops::{Add, BitAnd, BitOr, BitXor, Not, Shl, Shr};

/// A machine word the probes can run on (`u64` or `u128`).
pub(crate) trait Word:
    Copy
    + Eq
    + Add<Output = Self>
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
{
    const BITS: u32;
    const ZERO: Self;
    /// The word's little-endian bytes: exactly `[u8; BITS / 8]`, which the unchecked loads
    /// (`storage::Region`) read from memory as they are.
    type Bytes: Copy;
    fn from_le_bytes(bytes: Self::Bytes) -> Self;
    fn to_le_bytes(self) -> Self::Bytes;
    /// Loads `BITS / 8` little-endian bytes starting at `offset`.
    fn load(bytes: &[u8], offset: usize) -> Self;
    /// Stores `BITS / 8` little-endian bytes starting at `offset`.
    fn store(self, bytes: &mut [u8], offset: usize);
    fn from_u128(value: u128) -> Self;
    fn to_u128(self) -> u128;
    /// The low 64 bits.
    fn low_u64(self) -> u64;
    fn splat_mul(self, value: u32) -> Self;
    fn wrapping_mul(self, other: Self) -> Self;
    fn wrapping_sub(self, other: Self) -> Self;
    fn trailing_zeros(self) -> u32;
    fn leading_zeros(self) -> u32;
    /// Whether some lane of `a` or of `b` equals the same lane of `splat`, by
    /// [`Lanes::any_zero_lane`]'s test with the lane masks `low` and `top`: a lookup's question,
    /// asked of its two buckets at once.
    #[inline(always)]
    fn either_has_lane_equal(a: Self, b: Self, splat: Self, low: Self, top: Self) -> bool {
        either_has_lane_equal_in_words(a, b, splat, low, top)
    }
    /// [`Lanes::zero_lanes`] of `a` and of `b` (with its masks `body` and `top`): an insert's
    /// free-slot flags of its two buckets, which a word type may compute for both at once.
    #[inline(always)]
    fn zero_lanes_of_both(a: Self, b: Self, body: Self, top: Self) -> (Self, Self) {
        (zero_lanes(a, body, top), zero_lanes(b, body, top))
    }
}

/// [`Word::either_has_lane_equal`] in general-purpose registers: the code of every word type
/// without vector code of its own.
#[inline(always)]
fn either_has_lane_equal_in_words<W: Word>(a: W, b: W, splat: W, low: W, top: W) -> bool {
    any_zero_lane(a ^ splat, low, top) | any_zero_lane(b ^ splat, low, top) != W::ZERO
}

/// [`Lanes::zero_lanes`] with its masks given.
#[inline(always)]
fn zero_lanes<W: Word>(word: W, body: W, top: W) -> W {
    !(((word & body) + body) | word | body) & top
}

/// [`Lanes::any_zero_lane`] with its masks given: the borrow test.
#[inline(always)]
fn any_zero_lane<W: Word>(word: W, low: W, top: W) -> W {
    word.wrapping_sub(low) & !word & top
}

macro_rules! impl_word {
    ($t:ty $(, $extra:item)*) => {
        impl Word for $t {
            $($extra)*
            const BITS: u32 = <$t>::BITS;
            const ZERO: Self = 0;
            type Bytes = [u8; std::mem::size_of::<$t>()];
            #[inline(always)]
            fn from_le_bytes(bytes: Self::Bytes) -> Self {
                <$t>::from_le_bytes(bytes)
            }
            #[inline(always)]
            fn to_le_bytes(self) -> Self::Bytes {
                <$t>::to_le_bytes(self)
            }
            #[inline(always)]
            fn load(bytes: &[u8], offset: usize) -> Self {
                const N: usize = std::mem::size_of::<$t>();
                // Sliced from `offset`, then its first N bytes: two bounds checks. Slicing
                // `offset..offset + N` adds an overflow check of the sum to every lookup.
                let window: &[u8; N] = bytes[offset..].first_chunk().expect("a window inside the table");
                <$t>::from_le_bytes(*window)
            }
            #[inline(always)]
            fn store(self, bytes: &mut [u8], offset: usize) {
                const N: usize = std::mem::size_of::<$t>();
                let window: &mut [u8; N] =
                    bytes[offset..].first_chunk_mut().expect("a window inside the table");
                *window = self.to_le_bytes();
            }
            #[inline(always)]
            fn from_u128(value: u128) -> Self {
                value as $t
            }
            #[inline(always)]
            fn to_u128(self) -> u128 {
                self as u128
            }
            #[inline(always)]
            fn low_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn splat_mul(self, value: u32) -> Self {
                self.wrapping_mul(value as $t)
            }
            #[inline(always)]
            fn wrapping_mul(self, other: Self) -> Self {
                <$t>::wrapping_mul(self, other)
            }
            #[inline(always)]
            fn wrapping_sub(self, other: Self) -> Self {
                <$t>::wrapping_sub(self, other)
            }
            #[inline(always)]
            fn trailing_zeros(self) -> u32 {
                <$t>::trailing_zeros(self)
            }
            #[inline(always)]
            fn leading_zeros(self) -> u32 {
                <$t>::leading_zeros(self)
            }
        }
    };
}
pub(super) use impl_word;

/// Whether either of two semi-sorted 13-bit buckets holds a fingerprint, in words: the code of
/// targets without vector code for it, one bucket after the other as the matcher's own
/// `matches` tests each (the arguments are those of the x86-64 version).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline(always)]
pub(crate) fn either_sorted_has<const CODE_BITS: i32>(
    words: [u64; 2],
    nibbles: [u64; 2],
    (high, nibble): (u32, u32),
    (highs, nibble_lanes): (&Lanes<u64>, &Lanes<u64>),
    nibble_to_high: u64,
) -> bool {
    let has = |word: u64, nibbles: u64| {
        highs.matching_lanes(word >> CODE_BITS, high)
            & nibble_lanes.matching_lanes(nibbles, nibble).wrapping_mul(nibble_to_high)
    };
    has(words[0], nibbles[0]) | has(words[1], nibbles[1]) != 0
}

/// No prefetch where the target has no hint for it (or under Miri, which runs no hint).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2", not(miri)), allow(dead_code))]
#[inline(always)]
pub(crate) fn prefetch_t1(_address: *const u8) {}

/// Lane masks for `lanes` lanes of `bits` bits in a word `W`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lanes<W> {
    /// The lowest bit of every lane: multiplying by a value repeats it in every lane.
    low: W,
    /// Every bit of every lane except its top bit.
    body: W,
    /// The top bit of every lane.
    top: W,
    bits: u32,
    /// How many lanes: kept, since counting `top`'s bits is a long sequence of shifts, masks and
    /// adds without the `popcnt` instruction (see [`count_flagged`](Self::count_flagged)).
    count: u32,
}

/// The most lanes [`Lanes::values`] reads: the largest bucket there is.
pub(crate) const MAX_LANES: usize = 8;

impl<W: Word> Lanes<W> {
    #[inline(always)]
    pub(crate) fn new(lanes: usize, bits: u32) -> Self {
        debug_assert!(lanes as u32 * bits <= W::BITS);
        let (mut low, mut top) = (0u128, 0u128);
        for lane in 0..lanes as u32 {
            low |= 1 << (lane * bits);
            top |= 1 << (lane * bits + bits - 1);
        }
        let body = low.wrapping_mul((1u128 << (bits - 1)) - 1);
        Lanes {
            low: W::from_u128(low),
            body: W::from_u128(body),
            top: W::from_u128(top),
            bits,
            count: lanes as u32,
        }
    }

    /// `value` in every lane (its low `bits` bits).
    #[inline(always)]
    pub(crate) fn splat(&self, value: u32) -> W {
        self.low.splat_mul(value)
    }

    /// The masks of [`zero_lanes`](Self::zero_lanes): every bit of every lane but its top bit,
    /// and the top bits.
    #[inline(always)]
    pub(crate) fn body_and_top(&self) -> (W, W) {
        (self.body, self.top)
    }

    /// How many lanes there are.
    #[inline(always)]
    pub(crate) fn count(&self) -> usize {
        self.count as usize
    }

    /// The value of each lane of `word`, lane `k` at index `k`; 0 past the last lane.
    #[inline(always)]
    pub(crate) fn values(&self, word: W) -> [u32; MAX_LANES] {
        debug_assert!(self.count() <= MAX_LANES);
        let mask = (1u64 << self.bits) - 1;
        let mut values = [0; MAX_LANES];
        // A plain loop: `array::from_fn` was not always inlined.
        for (k, value) in values.iter_mut().enumerate().take(self.count()) {
            *value = ((word >> (k as u32 * self.bits)).low_u64() & mask) as u32;
        }
        values
    }

    /// Top bit set in every lane of `word` that is zero; all other bits clear.
    #[inline(always)]
    pub(crate) fn zero_lanes(&self, word: W) -> W {
        zero_lanes(word, self.body, self.top)
    }

    /// Top bit set in every lane of `word` equal to `value`.
    #[inline(always)]
    pub(crate) fn matching_lanes(&self, word: W, value: u32) -> W {
        self.zero_lanes(word ^ self.splat(value))
    }

    /// Not zero exactly when some lane of `word` is zero: the classic borrow test. Which lanes it
    /// flags is not exact (a zero lane's borrow can flag lanes above it), but without a zero lane
    /// no lane borrows, so nothing is flagged. One operation fewer than
    /// [`zero_lanes`](Self::zero_lanes) and one fewer value waiting on the load: a lookup needs
    /// only the yes or no.
    #[inline(always)]
    pub(crate) fn any_zero_lane(&self, word: W) -> W {
        any_zero_lane(word, self.low, self.top)
    }

    /// Not zero exactly when some lane of `word` equals `value` (see
    /// [`any_zero_lane`](Self::any_zero_lane)).
    #[inline(always)]
    pub(crate) fn any_matching_lane(&self, word: W, value: u32) -> W {
        self.any_zero_lane(word ^ self.splat(value))
    }

    /// Whether some lane of `a` or of `b` equals `value`: [`any_matching_lane`] of two words
    /// at once, in vector registers where the word type has code for them
    /// ([`Word::either_has_lane_equal`]).
    ///
    /// [`any_matching_lane`]: Self::any_matching_lane
    #[inline(always)]
    pub(crate) fn either_has_matching_lane(&self, a: W, b: W, value: u32) -> bool {
        W::either_has_lane_equal(a, b, self.splat(value), self.low, self.top)
    }

    /// Index of the lowest lane flagged in `flags`, if any.
    #[inline(always)]
    pub(crate) fn first_lane(&self, flags: W) -> Option<usize> {
        (flags != W::ZERO).then(|| (flags.trailing_zeros() / self.bits) as usize)
    }

    /// How many lanes `flags` flags (top bits only). One multiplication adds every lane's flag
    /// into the top lane (a lane holds counts up to 8 from 4 bits on, so nothing carries into
    /// it from below): without the `popcnt` instruction, which the baseline x86-64 target lacks,
    /// `count_ones` is a long sequence of shifts, masks and adds a word.
    #[inline(always)]
    pub(crate) fn count_flagged(&self, flags: W) -> u32 {
        debug_assert!(self.bits >= 4, "a lane counts up to 8");
        let top_lane = W::BITS - self.top.leading_zeros() - self.bits;
        let sums = (flags >> (self.bits - 1)).wrapping_mul(self.low);
        ((sums >> top_lane).low_u64() & ((1u64 << self.bits) - 1)) as u32
    }
}

/// Reads the buckets of one geometry, two ways: it finds a fingerprint in a bucket, as a word with
/// one flag bit for every slot that holds it (how the bits are laid out is the matcher's business;
/// [`slot`](Matcher::slot) maps a flag back to its slot), and it lists a bucket's fingerprints.
/// The bucket operations of the table are written once against this trait.
pub(crate) trait Matcher {
    type Word: Word;
    /// Whether a write picks one of its two buckets (an insert the emptier, a removal the one
    /// holding a copy) with a branch rather than with conditional moves. The pick is a coin
    /// flip, so a branch mispredicts often; it pays only where much work depends on the pick (a
    /// semi-sorted bucket's re-encoding), which the CPU then starts speculatively.
    const CHOOSES_BY_BRANCH: bool = false;
    /// Slots per bucket.
    fn slots(&self) -> usize;
    /// The fingerprint in each slot of `bucket` (0 if empty), slot `k` at index `k`, from one
    /// load of the bucket; 0 past the last slot.
    fn fingerprints(&self, bucket: usize) -> [u32; MAX_LANES];
    /// The flags of the slots of `bucket` that hold `fingerprint` (none: zero).
    fn matches(&self, bucket: usize, fingerprint: u32) -> Self::Word;
    /// Not zero exactly when some slot of `bucket` holds `fingerprint`; its bits need not be
    /// those of [`matches`](Matcher::matches). What a lookup asks, which some matchers answer
    /// more cheaply than which slots.
    #[inline(always)]
    fn matches_any(&self, bucket: usize, fingerprint: u32) -> Self::Word {
        self.matches(bucket, fingerprint)
    }
    /// Whether `b1` or `b2` holds `fingerprint`: a lookup's question, which a matcher may answer
    /// for both buckets at once.
    #[inline(always)]
    fn either_matches(&self, b1: usize, b2: usize, fingerprint: u32) -> bool {
        self.matches_any(b1, fingerprint) | self.matches_any(b2, fingerprint) != Self::Word::ZERO
    }
    /// The flags of the free slots of `b1` and of `b2` (`matches(b, 0)` of each): an insert's
    /// first question, which a matcher may answer for both buckets at once.
    #[inline(always)]
    fn free_in_both(&self, b1: usize, b2: usize) -> (Self::Word, Self::Word) {
        (self.matches(b1, 0), self.matches(b2, 0))
    }
    /// A free slot of `bucket`, if it has one (not necessarily the lowest): what the path search
    /// asks of every bucket it reaches.
    #[inline(always)]
    fn free_slot(&self, bucket: usize) -> Option<usize> {
        self.slot(self.matches(bucket, 0))
    }
    /// Whether `free2` flags more slots than `free1`, both flags of free slots
    /// (`matches(bucket, 0)`): which of two buckets is the emptier. The flags are compared as
    /// numbers, which needs no count: every write into a free slot takes the one with the
    /// lowest flag (a plain bucket's first free slot, a semi-sorted bucket's only one), so
    /// until a removal leaves a hole the free slots of a plain bucket are its last ones and
    /// those of a semi-sorted bucket its first ones, and in either case more of them make a
    /// larger number (equal counts an equal one: the first bucket on a tie, as with counts).
    /// After a removal from a plain bucket it may take the bucket with fewer free slots until
    /// the hole is filled: a worse balance for a while, never a full slot for a free one.
    #[inline(always)]
    fn more_free(&self, free2: Self::Word, free1: Self::Word) -> bool {
        free2.to_u128() > free1.to_u128()
    }
    /// The slot of the lowest flag, if any.
    fn slot(&self, flags: Self::Word) -> Option<usize>;
    /// How many slots `flags` flags.
    fn count(&self, flags: Self::Word) -> u32;
}

/// The plain matcher: each bucket loaded as a word of lanes by `window`, compared lane by lane.
pub(crate) struct Windowed<W, F> {
    lanes: Lanes<W>,
    window: F,
}

impl<W: Word, F: Fn(usize) -> W> Windowed<W, F> {
    #[inline(always)]
    pub(crate) fn new(lanes: Lanes<W>, window: F) -> Self {
        Windowed { lanes, window }
    }
}

impl<W: Word, F: Fn(usize) -> W> Matcher for Windowed<W, F> {
    type Word = W;
    #[inline(always)]
    fn slots(&self) -> usize {
        self.lanes.count()
    }
    #[inline(always)]
    fn fingerprints(&self, bucket: usize) -> [u32; MAX_LANES] {
        self.lanes.values((self.window)(bucket))
    }
    #[inline(always)]
    fn matches(&self, bucket: usize, fingerprint: u32) -> W {
        self.lanes.matching_lanes((self.window)(bucket), fingerprint)
    }
    #[inline(always)]
    fn matches_any(&self, bucket: usize, fingerprint: u32) -> W {
        self.lanes.any_matching_lane((self.window)(bucket), fingerprint)
    }
    #[inline(always)]
    fn either_matches(&self, b1: usize, b2: usize, fingerprint: u32) -> bool {
        self.lanes.either_has_matching_lane((self.window)(b1), (self.window)(b2), fingerprint)
    }
    #[inline(always)]
    fn free_in_both(&self, b1: usize, b2: usize) -> (W, W) {
        let (body, top) = self.lanes.body_and_top();
        W::zero_lanes_of_both((self.window)(b1), (self.window)(b2), body, top)
    }
    /// As the trait's, with `free1`'s lowest bit set first: flags are lanes' top bits, never
    /// bit 0, so the answer is the same, but the compiler then no longer sees the choice of
    /// the emptier bucket's flags as the larger of the two, which it compiled into a branch
    /// (a coin flip, mispredicted) instead of a conditional move; this way one-by-one fills beat
    /// both that branch and counting the free slots (`docs/performance.md`).
    #[inline(always)]
    fn more_free(&self, free2: W, free1: W) -> bool {
        debug_assert!(free1.to_u128() & 1 == 0, "flags are the lanes' top bits");
        free2.to_u128() > (free1.to_u128() | 1)
    }
    #[inline(always)]
    fn slot(&self, flags: W) -> Option<usize> {
        self.lanes.first_lane(flags)
    }
    #[inline(always)]
    fn count(&self, flags: W) -> u32 {
        self.lanes.count_flagged(flags)
    }
}

/// The matcher of buckets that fit no word, read slot by slot through `get(bucket, slot)`: flag
/// `k` is bit `k`.
pub(crate) struct Slotwise<G> {
    slots: usize,
    get: G,
}

impl<G: Fn(usize, usize) -> u32> Slotwise<G> {
    #[inline(always)]
    pub(crate) fn new(slots: usize, get: G) -> Self {
        debug_assert!(slots <= MAX_LANES);
        Slotwise { slots, get }
    }
}

impl<G: Fn(usize, usize) -> u32> Matcher for Slotwise<G> {
    type Word = u64;
    fn slots(&self) -> usize {
        self.slots
    }
    fn fingerprints(&self, bucket: usize) -> [u32; MAX_LANES] {
        std::array::from_fn(|slot| if slot < self.slots { (self.get)(bucket, slot) } else { 0 })
    }
    fn matches(&self, bucket: usize, fingerprint: u32) -> u64 {
        (0..self.slots)
            .filter(|&slot| (self.get)(bucket, slot) == fingerprint)
            .fold(0, |flags, slot| flags | 1 << slot)
    }
    fn slot(&self, flags: u64) -> Option<usize> {
        (flags != 0).then(|| flags.trailing_zeros() as usize)
    }
    fn count(&self, flags: u64) -> u32 {
        flags.count_ones()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pack(values: &[u32], bits: u32) -> u128 {
        values.iter().enumerate().fold(0, |w, (i, &v)| w | (v as u128) << (i as u32 * bits))
    }

    proptest! {
        #[test]
        fn probes_agree_with_a_lane_by_lane_scan(
            bits in 1u32..=32, seed_values in proptest::collection::vec(any::<u32>(), 1..=8),
            probe in any::<u32>(), garbage in any::<u128>()
        ) {
            let lanes_count = seed_values.len().min((128 / bits) as usize);
            let mask = if bits == 32 { u32::MAX } else { (1 << bits) - 1 };
            // Small values so that zeros and repeats are common.
            let values: Vec<u32> = seed_values[..lanes_count].iter().map(|v| (v % 4) & mask).collect();
            let probe = (probe % 4) & mask;
            let used = lanes_count as u32 * bits;
            let above = if used == 128 { 0 } else { garbage << used };
            let word = pack(&values, bits) | above;
            let lanes = Lanes::<u128>::new(lanes_count, bits);
            let zeros = lanes.zero_lanes(word);
            let matches = lanes.matching_lanes(word, probe);
            for (i, &v) in values.iter().enumerate() {
                let top = 1u128 << (i as u32 * bits + bits - 1);
                prop_assert_eq!(zeros & top != 0, v == 0);
                prop_assert_eq!(matches & top != 0, v == probe);
            }
            prop_assert_eq!(matches.count_ones() as usize, values.iter().filter(|&&v| v == probe).count());
            if bits >= 4 {
                prop_assert_eq!(lanes.count_flagged(matches), matches.count_ones());
                prop_assert_eq!(lanes.count_flagged(zeros), zeros.count_ones());
            }
            prop_assert_eq!(lanes.first_lane(matches), values.iter().position(|&v| v == probe));
            prop_assert_eq!(lanes.any_zero_lane(word) != 0, values.contains(&0));
            prop_assert_eq!(lanes.any_matching_lane(word, probe) != 0, values.contains(&probe));
        }

        #[test]
        fn two_buckets_are_probed_at_once_as_one_by_one(
            bits in 1u32..=32, seed_values in proptest::collection::vec(any::<u32>(), 2..=16),
            probe in any::<u32>(), garbage in any::<[u64; 2]>()
        ) {
            // Two words of up to 64 bits of lanes, with garbage above the lanes (the next
            // bucket's bytes), as u64 buckets are loaded.
            let lanes_count = (seed_values.len() / 2).min((64 / bits) as usize);
            let mask = if bits == 32 { u32::MAX } else { (1 << bits) - 1 };
            let values: Vec<u32> = seed_values.iter().map(|v| (v % 4) & mask).collect();
            let (first, second) = (&values[..lanes_count], &values[lanes_count..2 * lanes_count]);
            let probe = (probe % 4) & mask;
            let used = lanes_count as u32 * bits;
            let word = |values: &[u32], garbage: u64| {
                pack(values, bits) as u64 | garbage.checked_shl(used).unwrap_or(0)
            };
            let (a, b) = (word(first, garbage[0]), word(second, garbage[1]));
            let lanes = Lanes::<u64>::new(lanes_count, bits);
            let expected = first.contains(&probe) || second.contains(&probe);
            // The word type's code (SSE2 on x86-64) and the portable one.
            prop_assert_eq!(lanes.either_has_matching_lane(a, b, probe), expected);
            let splat = lanes.low.splat_mul(probe);
            prop_assert_eq!(either_has_lane_equal_in_words(a, b, splat, lanes.low, lanes.top), expected);
            let wide = Lanes::<u128>::new(lanes_count, bits);
            prop_assert_eq!(wide.either_has_matching_lane(a as u128, b as u128, probe), expected);
            // The free-slot flags of both (SSE2 on x86-64), as each word's alone, and exactly
            // the zero lanes.
            let (free_a, free_b) = u64::zero_lanes_of_both(a, b, lanes.body, lanes.top);
            prop_assert_eq!((free_a, free_b), (lanes.zero_lanes(a), lanes.zero_lanes(b)));
            for (flags, values) in [(free_a, first), (free_b, second)] {
                let zero_tops = values.iter().enumerate().filter(|&(_, &v)| v == 0);
                let expected = zero_tops.fold(0, |flags, (i, _)| flags | 1u64 << (i as u32 * bits + bits - 1));
                prop_assert_eq!(flags, expected);
            }
        }
    }
}
