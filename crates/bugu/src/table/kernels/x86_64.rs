//! Tests of a lookup's two buckets at once in SSE2 registers, one bucket in each 64-bit half,
//! and an insert's free-slot flags of its two buckets (x86-64 only; SSE2 is part of its
//! baseline, so there is nothing to detect). The matchers call these for buckets that fit a
//! `u64`; other targets and wider buckets keep the word code.
//!
//! Why vector registers: a lookup far from the caches waits for its two loads, and the CPU keeps
//! starting the lookups after it until it runs out of some resource. On the machines we measure
//! that resource is the general-purpose register file: each instruction that writes such a
//! register holds one until it retires, behind the loads. In a loop of lookups far from the
//! caches, extra instructions writing general-purpose registers slowed it markedly, while as many
//! register moves (renamed without a new register) or no-ops hardly did (`docs/design.md`,
//! "Buckets"). The tests here write vector registers instead, which have a file of their own, so
//! more lookups are in flight at once. One-by-one inserts gain the same way from computing their
//! free-slot flags here.

use std::arch::x86_64::{
    __m128i, _MM_HINT_T1, _mm_add_epi64, _mm_and_si128, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_cvtsi128_si64,
    _mm_movemask_epi8, _mm_mul_epu32, _mm_or_si128, _mm_prefetch, _mm_set_epi64x, _mm_set1_epi64x,
    _mm_setzero_si128, _mm_srli_epi64, _mm_sub_epi64, _mm_unpackhi_epi64, _mm_xor_si128,
};

use super::portable::Lanes;

// SAFETY (for every `unsafe` block below): the intrinsics compute on values only (no memory
// access) and need SSE2, which this module is compiled only with (`cfg(target_feature = "sse2")`
// on its declaration in `kernels/mod.rs`, true on every x86-64 target).

/// Whether some lane of `a` or of `b` equals the same lane of `splat`: [`Word::either_has_lane_equal`]
/// for `u64` (`low` and `top` as in [`Lanes::any_zero_lane`]). The compiler loads both words
/// straight into the vector register.
///
/// [`Word::either_has_lane_equal`]: super::Word::either_has_lane_equal
#[inline(always)]
pub(super) fn either_has_lane_equal(a: u64, b: u64, splat: u64, low: u64, top: u64) -> bool {
    // SAFETY: see the top of the module.
    let zero_lanes = unsafe {
        let words = _mm_xor_si128(pair(a, b), set(splat));
        let borrows = _mm_sub_epi64(words, set(low));
        // `andnot(x, y)` is `!x & y`.
        _mm_and_si128(_mm_andnot_si128(words, borrows), set(top))
    };
    any_bit(zero_lanes)
}

/// Whether a semi-sorted 13-bit bucket among `words` holds the fingerprint whose high part
/// (its upper 9 bits) is `high` and low nibble `nibble`: the semi-sorted matcher's
/// (`semisort::Sorted13`) test of both buckets at once. The high parts lie above the nibbles'
/// code of `CODE_BITS` bits. `nibbles` are the buckets' four sorted nibbles as its code
/// decodes them; `highs` and `nibble_lanes` the lanes of the high parts (above the code) and
/// of the nibbles; `nibble_to_high` the product that moves nibble flags onto high-part flags
/// (its proof is in `semisort.rs`; it stays below 2^32, as the 32-bit multiplication here
/// needs).
#[inline(always)]
pub(crate) fn either_sorted_has<const CODE_BITS: i32>(
    words: [u64; 2],
    nibbles: [u64; 2],
    (high, nibble): (u32, u32),
    (highs, nibble_lanes): (&Lanes<u64>, &Lanes<u64>),
    nibble_to_high: u64,
) -> bool {
    debug_assert!(nibble_to_high < 1 << 32);
    // SAFETY: see the top of the module.
    let (stored_highs, nibbles) = unsafe {
        (
            _mm_xor_si128(_mm_srli_epi64::<CODE_BITS>(pair(words[0], words[1])), set(highs.splat(high))),
            _mm_xor_si128(pair(nibbles[0], nibbles[1]), set(nibble_lanes.splat(nibble))),
        )
    };
    let (high_flags, nibble_flags) =
        (zero_lanes(stored_highs, highs.body_and_top()), zero_lanes(nibbles, nibble_lanes.body_and_top()));
    // SAFETY: see the top of the module. The nibble flags are below 2^16: the low 32 bits of
    // each half, which the multiplication takes, hold them whole.
    let both = unsafe { _mm_and_si128(high_flags, _mm_mul_epu32(nibble_flags, set(nibble_to_high))) };
    any_bit(both)
}

/// [`Lanes::zero_lanes`] of `a` and of `b` (masks `body` and `top`), computed in one vector
/// register: an insert's free-slot flags of its two buckets, which then take two
/// general-purpose registers instead of a dozen.
#[inline(always)]
pub(super) fn zero_lanes_of_both(a: u64, b: u64, body: u64, top: u64) -> (u64, u64) {
    let flags = zero_lanes(pair(a, b), (body, top));
    // SAFETY: see the top of the module.
    unsafe { (_mm_cvtsi128_si64(flags) as u64, _mm_cvtsi128_si64(_mm_unpackhi_epi64(flags, flags)) as u64) }
}

/// `a` in the low half, `b` in the high one.
#[inline(always)]
fn pair(a: u64, b: u64) -> __m128i {
    // SAFETY: see the top of the module.
    unsafe { _mm_set_epi64x(b as i64, a as i64) }
}

/// `value` in both halves.
#[inline(always)]
fn set(value: u64) -> __m128i {
    // SAFETY: see the top of the module.
    unsafe { _mm_set1_epi64x(value as i64) }
}

/// [`Lanes::zero_lanes`] of both halves, with its masks (`Lanes::body_and_top`): the top bit of
/// every zero lane, exactly.
#[inline(always)]
fn zero_lanes(words: __m128i, (body, top): (u64, u64)) -> __m128i {
    let body = set(body);
    // SAFETY: see the top of the module.
    unsafe {
        let carried =
            _mm_or_si128(_mm_or_si128(_mm_add_epi64(_mm_and_si128(words, body), body), words), body);
        _mm_andnot_si128(carried, set(top))
    }
}

/// Whether any bit of `flags` is set.
#[inline(always)]
fn any_bit(flags: __m128i) -> bool {
    // SAFETY: see the top of the module.
    unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(flags, _mm_setzero_si128())) != 0xFFFF }
}

/// Asks the CPU to start loading the cache line of `address` into the L2 (`prefetcht1`). Only a
/// hint: it never faults and never reads into the program, whatever the address.
#[inline(always)]
pub(crate) fn prefetch_t1(address: *const u8) {
    // SAFETY: SSE is part of the x86-64 baseline, and a prefetch is only a hint (above).
    unsafe { _mm_prefetch::<_MM_HINT_T1>(address.cast()) };
}
