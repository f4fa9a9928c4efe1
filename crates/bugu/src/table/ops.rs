//! The bucket operations the table's reads and writes run through [`Table::probe`](super::Table::probe):
//! each written once against a [`Matcher`], and compiled for every geometry's.

use super::kernels::{MAX_LANES, Matcher, Word};
use super::probe::BucketOp;
use crate::batch::{Located, answer_in_blocks};
use crate::hash::LocatedBlock;

/// A bucket's fingerprints as its geometry's matcher lists them: the slot count, and the
/// fingerprints (0 past the last slot).
pub(super) struct ListFingerprints(pub(super) usize);

impl BucketOp for ListFingerprints {
    type Output = (usize, [u32; MAX_LANES]);
    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) -> Self::Output {
        (matcher.slots(), matcher.fingerprints(self.0))
    }
}

pub(super) struct Find {
    pub(super) bucket: usize,
    pub(super) fingerprint: u32,
}

impl BucketOp for Find {
    type Output = Option<usize>;
    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) -> Option<usize> {
        matcher.slot(matcher.matches(self.bucket, self.fingerprint))
    }
}

/// The first slot holding `fingerprint` in bucket `b1`, or else in `b2`, as `(bucket, slot)`.
pub(super) struct FindEither {
    pub(super) buckets: [usize; 2],
    pub(super) fingerprint: u32,
}

impl BucketOp for FindEither {
    type Output = Option<(usize, usize)>;
    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) -> Option<(usize, usize)> {
        let [b1, b2] = self.buckets;
        let (found1, found2) = (matcher.matches(b1, self.fingerprint), matcher.matches(b2, self.fingerprint));
        // Which bucket holds the copy is a coin flip.
        let (bucket, flags) = pick::<M>(found1 == M::Word::ZERO, (b1, found1), (b2, found2));
        matcher.slot(flags).map(|slot| (bucket, slot))
    }
}

pub(super) struct Count {
    pub(super) bucket: usize,
    pub(super) fingerprint: u32,
}

impl BucketOp for Count {
    type Output = usize;
    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) -> usize {
        matcher.count(matcher.matches(self.bucket, self.fingerprint)) as usize
    }
}

pub(super) struct FreeSlotInEmptier {
    pub(super) buckets: [usize; 2],
}

/// Where [`FreeSlotInEmptier`] found a free slot.
pub(crate) struct FreeSlot {
    pub(super) bucket: usize,
    pub(super) slot: usize,
    /// The bit of the flag that names `slot` in the matcher's flags: in a plain bucket, whose
    /// flags are lanes' top bits, where the slot's lane ends (an insert writes from there without
    /// dividing by the lane width, which a division would add to every insert).
    pub(super) flag_bit: u32,
}

impl FreeSlot {
    /// The bucket the slot is in.
    #[inline(always)]
    pub(crate) fn bucket(&self) -> usize {
        self.bucket
    }

    /// The slot's number in its bucket.
    #[inline(always)]
    pub(crate) fn slot(&self) -> usize {
        self.slot
    }
}

/// `second` if `pick_second`, else `first`: a bucket and its flags, picked on a coin flip (which
/// of two buckets is emptier, or holds a copy). By conditional moves
/// (`std::hint::select_unpredictable`: a plain branch-free expression was turned back into a
/// branch where the step was inlined), unless the matcher's work after the pick is long enough
/// that speculating past a branch pays (`Matcher::CHOOSES_BY_BRANCH`).
#[inline(always)]
fn pick<M: Matcher>(
    pick_second: bool,
    first: (usize, M::Word),
    second: (usize, M::Word),
) -> (usize, M::Word) {
    if M::CHOOSES_BY_BRANCH {
        if pick_second { second } else { first }
    } else {
        (
            std::hint::select_unpredictable(pick_second, second.0, first.0),
            std::hint::select_unpredictable(pick_second, second.1, first.1),
        )
    }
}

impl BucketOp for FreeSlotInEmptier {
    type Output = Option<FreeSlot>;
    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) -> Option<FreeSlot> {
        let [b1, b2] = self.buckets;
        let (free1, free2) = matcher.free_in_both(b1, b2);
        let (bucket, flags) = pick::<M>(matcher.more_free(free2, free1), (b1, free1), (b2, free2));
        matcher.slot(flags).map(|slot| FreeSlot { bucket, slot, flag_bit: flags.trailing_zeros() })
    }
}

pub(crate) struct ContainsEither {
    pub(crate) buckets: [usize; 2],
    pub(crate) fingerprint: u32,
}

impl BucketOp for ContainsEither {
    type Output = bool;
    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) -> bool {
        let [b1, b2] = self.buckets;
        matcher.either_matches(b1, b2, self.fingerprint)
    }
    // Inlined down to scalars, so that lookups of the other geometries do not first store this
    // op for the slot-by-slot arm.
    #[inline(always)]
    fn on_slots(self, slots: usize, get: impl Fn(usize, usize) -> u32) -> bool {
        self.buckets.iter().any(|&bucket| (0..slots).any(|slot| get(bucket, slot) == self.fingerprint))
    }
}

pub(super) struct ContainsLocated<L> {
    pub(super) locate: L,
}

impl<L: Fn() -> Located> BucketOp for ContainsLocated<L> {
    type Output = bool;
    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) -> bool {
        let (fingerprint, b1, b2) = (self.locate)();
        ContainsEither { buckets: [b1, b2], fingerprint }.on_words(matcher)
    }
    #[inline(always)]
    fn on_slots(self, slots: usize, get: impl Fn(usize, usize) -> u32) -> bool {
        let (fingerprint, b1, b2) = (self.locate)();
        ContainsEither { buckets: [b1, b2], fingerprint }.on_slots(slots, get)
    }
}

/// [`Table::contains_pipelined`](super::Table::contains_pipelined)'s operation: `found[i]` for `items[i]`, located a block at a
/// time by `locate`, prefetched by `prefetch`.
pub(super) struct ContainsPipelined<'a, T, L, P, const N: usize> {
    pub(super) items: &'a [T],
    pub(super) locate: L,
    pub(super) prefetch: P,
    pub(super) found: &'a mut [bool],
}

impl<T, L, P, const N: usize> BucketOp for ContainsPipelined<'_, T, L, P, N>
where
    L: Fn(&[T], &mut LocatedBlock<N>),
    P: Fn(Located),
{
    type Output = ();
    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) {
        let ContainsPipelined { items, locate, prefetch, found } = self;
        answer_in_blocks(items, found, locate, prefetch, |(fingerprint, b1, b2)| {
            ContainsEither { buckets: [b1, b2], fingerprint }.on_words(matcher)
        });
    }
    fn on_slots(self, slots: usize, get: impl Fn(usize, usize) -> u32) {
        let mut block = LocatedBlock::default();
        for (answers, items) in self.found.chunks_mut(N).zip(self.items.chunks(N)) {
            (self.locate)(items, &mut block);
            for (i, answer) in answers.iter_mut().enumerate() {
                let (fingerprint, b1, b2) = block.get(i);
                *answer = ContainsEither { buckets: [b1, b2], fingerprint }.on_slots(slots, &get);
            }
        }
    }
}
