//! The bucket kernels, and the one place that chooses the architecture's.
//!
//! [`portable`] holds the SWAR code every target runs: the [`Word`] types, their [`Lanes`]
//! masks and the [`Matcher`]s the bucket operations are written against. Where the target has
//! vector registers for them (x86-64, whose baseline includes SSE2), [`x86_64`] replaces the
//! tests of a lookup's and an insert's two buckets at once, and gives the prefetch hint. This
//! module selects between them once, as hashbrown selects its `Group`; the code above it calls
//! [`either_sorted_has`], [`prefetch_t1`] and the [`Word`] methods without knowing which it got.

mod portable;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod x86_64;

pub(crate) use portable::{Lanes, MAX_LANES, Matcher, Slotwise, Windowed, Word};

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
portable::impl_word!(
    u64,
    #[inline(always)]
    fn either_has_lane_equal(a: Self, b: Self, splat: Self, low: Self, top: Self) -> bool {
        x86_64::either_has_lane_equal(a, b, splat, low, top)
    },
    #[inline(always)]
    fn zero_lanes_of_both(a: Self, b: Self, body: Self, top: Self) -> (Self, Self) {
        x86_64::zero_lanes_of_both(a, b, body, top)
    }
);
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
portable::impl_word!(u64);
portable::impl_word!(u128);

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
pub(crate) use portable::either_sorted_has;
/// The word code of [`either_sorted_has`], which tests compare with the one selected.
#[cfg(test)]
pub(crate) use portable::either_sorted_has as portable_either_sorted_has;
/// Whether either of two semi-sorted 13-bit buckets holds a fingerprint (see
/// `semisort::Sorted13`): both at once in vector registers on x86-64, in words elsewhere.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub(crate) use x86_64::either_sorted_has;

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2", not(miri))))]
pub(crate) use portable::prefetch_t1;
/// Asks the CPU to start loading a cache line into the L2: a hint on x86-64, nothing elsewhere
/// and under Miri (which runs no such hint).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2", not(miri)))]
pub(crate) use x86_64::prefetch_t1;
