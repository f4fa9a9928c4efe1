//! Locating a block of items at once: their hashes, fingerprints and buckets computed lane by
//! lane, in vector registers where the CPU has them ([`BlockCode`]).
//!
//! The arithmetic is written once, as plain loops over the lanes of a block
//! ([`BlockHasher::hash_block`], [`Addressing::locate_block_narrow`]), and the compiler turns those
//! loops into vector code when it may use AVX2: four 64-bit lanes a register, the high halves of
//! the addressing's products taken from 32-bit products. CPUs with AVX2 (x86-64 since 2013) run
//! that copy, chosen at run time; others locate lane by lane ([`Addressing::locate_block`]). Both
//! give exactly the places [`Addressing::locate`] gives (the tests compare them lane by lane),
//! so a filter answers the same on every machine.
//!
//! Locating a block at once made batched lookups quicker than locating one item at a time, by
//! far with AVX2 and a little lane by lane (`scripts/ab-fills`). A copy for AVX-512 (which
//! multiplies 64-bit lanes natively) was no faster than AVX2's, so there is none.

use crate::hash::{Addressing, LocatedBlock};
use crate::key::BlockHasher;

/// Locates blocks of up to `N` items hashed by `hasher` in a table with this addressing, by the
/// code this CPU runs fastest for it ([`BlockCode`]).
#[inline(always)]
pub(crate) fn block_locator<T, const N: usize>(
    addressing: Addressing,
    hasher: impl BlockHasher<T>,
) -> impl Fn(&[T], &mut LocatedBlock<N>) {
    let code = BlockCode::for_cpu(&addressing);
    move |items, block| code.locate(&addressing, &hasher, items, block)
}

/// The code that locates blocks of items for one table on this CPU. Only
/// [`for_cpu`](Self::for_cpu) makes one, so a value is proof that the CPU runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct BlockCode(Code);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Code {
    /// Lane by lane, in general-purpose registers: any CPU, any table.
    Scalar,
    /// The lanes' loops compiled for AVX2, for tables of fewer than 2^32 buckets.
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

impl BlockCode {
    /// The fastest code this CPU runs for a table with this addressing.
    fn for_cpu(addressing: &Addressing) -> Self {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        if addressing.is_narrow() && std::arch::is_x86_feature_detected!("avx2") {
            return BlockCode(Code::Avx2);
        }
        let _ = addressing;
        BlockCode(Code::Scalar)
    }

    /// Hashes up to `N` items with `hasher` and writes their places by `addressing`
    /// (the one this code was chosen for) into `block`, lane `i` for item `i`; lanes past the
    /// items hold places of no item.
    #[inline(always)]
    fn locate<T, const N: usize>(
        self,
        addressing: &Addressing,
        hasher: &impl BlockHasher<T>,
        items: &[T],
        block: &mut LocatedBlock<N>,
    ) {
        match self.0 {
            Code::Scalar => addressing.locate_block(&hasher.hash_block(items), block),
            // SAFETY: `for_cpu` chose this code on a CPU with AVX2.
            #[cfg(target_arch = "x86_64")]
            Code::Avx2 => unsafe { locate_with_avx2(addressing, hasher, items, block) },
        }
    }

    /// Every code this CPU runs for `addressing`, for tests that compare them.
    #[cfg(test)]
    fn all_for_cpu(addressing: &Addressing) -> Vec<Self> {
        let best = Self::for_cpu(addressing);
        if best.0 == Code::Scalar { vec![best] } else { vec![BlockCode(Code::Scalar), best] }
    }
}

/// [`Addressing::locate_block_narrow`] of `hasher`'s hashes, compiled for AVX2. A wider table
/// would only misplace items: [`Addressing::locate_block_narrow`] gives buckets below the count
/// for any table (its docs).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn locate_with_avx2<T, const N: usize>(
    addressing: &Addressing,
    hasher: &impl BlockHasher<T>,
    items: &[T],
    block: &mut LocatedBlock<N>,
) {
    debug_assert!(addressing.is_narrow());
    addressing.locate_block_narrow(&hasher.hash_block(items), block);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{FAR_LOOKAHEAD, LOOKAHEAD};
    use crate::hash::HashFunction;
    use crate::key::{ItemHasher, KeyEncoding, Prehashed};
    use proptest::prelude::*;

    /// Places `items` with every code this CPU runs and checks each lane against `locate` of
    /// the item's hash.
    fn check_every_code<T>(
        addressing: &Addressing,
        hasher: &impl BlockHasher<T>,
        items: &[T],
        hash: impl Fn(&T) -> u64,
    ) {
        for code in BlockCode::all_for_cpu(addressing) {
            // Both block sizes: a block of the smaller holds the items when there are few.
            let mut far = LocatedBlock::<FAR_LOOKAHEAD>::default();
            code.locate(addressing, hasher, items, &mut far);
            let mut near = LocatedBlock::<LOOKAHEAD>::default();
            let near_items = &items[..items.len().min(LOOKAHEAD)];
            code.locate(addressing, hasher, near_items, &mut near);
            for (i, item) in items.iter().enumerate() {
                let expected = addressing.locate(hash(item));
                assert_eq!(far.get(i), expected, "{code:?}, lane {i} of {FAR_LOOKAHEAD}");
                if i < LOOKAHEAD {
                    assert_eq!(near.get(i), expected, "{code:?}, lane {i} of {LOOKAHEAD}");
                }
            }
        }
    }

    proptest! {
        #[test]
        fn every_code_places_hashes_as_locate_does(
            buckets in prop_oneof![1u64..64, 1u64..=u32::MAX as u64, (u32::MAX as u64 - 64)..=u32::MAX as u64],
            bits in 1u32..=32,
            hashes in prop::collection::vec(any::<u64>(), 0..=FAR_LOOKAHEAD),
        ) {
            let addressing = Addressing::new(buckets as usize, bits);
            check_every_code(&addressing, &Prehashed, &hashes, |&hash| hash);
        }

        #[test]
        fn every_code_places_items_as_their_hashes_say(
            keys in prop::collection::vec(any::<u64>(), 0..=FAR_LOOKAHEAD),
            seed in any::<u64>(),
            buckets in 1usize..1 << 20,
        ) {
            let addressing = Addressing::new(buckets, 12);
            let names: Vec<String> = keys.iter().map(|key| format!("user_{key}")).collect();
            for function in HashFunction::ALL {
                for encoding in [KeyEncoding::Canonical, KeyEncoding::StdHash] {
                    let hasher = ItemHasher { function, seed, encoding };
                    check_every_code(&addressing, &hasher, &keys, |key| encoding.hash(key, function, seed));
                    check_every_code(&addressing, &hasher, &names, |name| encoding.hash(name, function, seed));
                }
            }
        }
    }

    #[test]
    fn tables_of_2_to_the_32_buckets_or_more_are_placed_lane_by_lane() {
        for buckets in [1usize << 32, (1 << 40) + 2, usize::MAX >> 6] {
            let addressing = Addressing::new(buckets, 16);
            assert_eq!(BlockCode::all_for_cpu(&addressing), [BlockCode(Code::Scalar)]);
            let hashes: Vec<u64> =
                (0..FAR_LOOKAHEAD as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
            check_every_code(&addressing, &Prehashed, &hashes, |&hash| hash);
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn cpus_with_avx2_use_it() {
        let addressing = Addressing::new(1000, 12);
        let expected = if cfg!(miri) || !std::arch::is_x86_feature_detected!("avx2") {
            Code::Scalar
        } else {
            Code::Avx2
        };
        assert_eq!(BlockCode::for_cpu(&addressing).0, expected);
    }
}
