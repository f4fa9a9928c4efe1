//! The concurrency protocol, and its writers' side: a versioned lock per stripe of buckets, and
//! the move word that writers which may hide a fingerprint from a reader announce themselves in.
//! The readers' side is [`SharedTable`](super::shared_table::SharedTable)'s lookups; the layout
//! the protocol relies on (each 64-bit word of the table belongs to one block of
//! [`BLOCK_BUCKETS`] buckets, a block to one stripe) is `table::atomic`'s.
//!
//! # Protocol
//!
//! **Writers** lock stripes. Each stripe has a version word, even when the stripe is free, odd
//! while a writer holds it (the version is the lock: a writer takes it by setting its low bit, and
//! releases it by adding one, which makes it even again). A writer takes the stripes of every
//! bucket it will change, in ascending order (no deadlock), changes the buckets, and releases them.
//!
//! **Readers** take no lock and write nothing shared. What a lookup checks depends on which writes
//! can hide a stored fingerprint from it.
//!
//! - *Plain layouts* (each slot its own bits). A write changes the bits of the slots it writes
//!   and no others: it replaces whole words, but with the other slots' bits as they were, since
//!   only the stripe's holder writes a word. A lookup reads each slot of its item's two buckets
//!   from some version of its word. So if one slot holds the item's fingerprint for the whole
//!   lookup, the lookup sees it. An item present for the whole lookup can only be missed if its
//!   fingerprint leaves a slot during the lookup while it stays in another one. That takes
//!   either a *move* (an insert's path of moves), or the removal of one copy of a fingerprint
//!   while another copy of it is in the item's buckets (the other copy perhaps stored in a bucket
//!   the lookup had already read). A slot that is filled or cleared without another copy left
//!   cannot hide an item that is present throughout.
//!
//!   Only these two kinds of writer announce themselves, in one **move word** shared by the whole
//!   table ([`WriteGuard::begin_moves`]). Before its first store, such a writer adds one to the
//!   word's count of writers at work and to its sequence; after its last store, it subtracts one
//!   from the count. A lookup reads the move word, both buckets, and the move word again. If no
//!   such writer was at work and the word is unchanged, none overlapped the read, and a miss is
//!   exact. Otherwise the lookup reads again as below, with the stripes' versions. The frequent
//!   writes (an insert into a free slot, the removal of a single copy) leave the word alone, so it
//!   stays in every core's cache: a lookup pays two loads of a cached line, and no stripe
//!   arithmetic.
//! - *Semi-sorted layout*. A write re-encodes its whole bucket, so any write can hide any
//!   fingerprint of the bucket. A lookup reads the versions of its item's two buckets' stripes,
//!   reads both buckets, then reads the versions again. If both were even and are unchanged, no
//!   write to either bucket overlapped the read. The buckets were then read as they were at one
//!   moment, and the answer is exact for that moment.
//!
//! A lookup whose first attempt overlapped a write reads again with the stripes' versions (which
//! every writer, moves included, holds for its whole write), backing off while one is held. On
//! these retries a *found* fingerprint is returned at once, since a filter's positive answer is
//! only "maybe" anyway. (The first attempt branches only on the versions or the move word: see
//! [`SharedTable::contains_hash`](super::shared_table::SharedTable::contains_hash).) Copying a fingerprint before clearing its old slot is not enough
//! without these checks: a reader could read the destination before the copy and the source after
//! the clear.
//!
//! Memory ordering (the seqlock pattern), the same for a version and for the move word: the
//! writer's odd version (its addition to the move word) is followed by a release fence before its
//! data stores, and its even version (its subtraction) is written with release. The reader loads
//! the first value with acquire, the data relaxed, then issues an acquire fence before loading
//! the value again. If the reader saw any store of a write, the fences make it see that write's
//! odd version or addition (or a later value) on the second read.

use crossbeam_utils::CachePadded;

use crate::table::Table;
use crate::table::atomic::{AtomicBytes, BLOCK_BUCKETS};

#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};

/// At most this many stripes: their versions (128 bytes apart) then fit in a core's L2, so
/// a lookup's two version reads hit the cache, and 2 to 8 threads rarely meet on one stripe.
const MAX_STRIPES: usize = 4096;

/// One stripe per this many bytes of table, so that the stripes (128 bytes each) add under 2% to
/// the table's memory, about 0.2 bits per item.
const BYTES_PER_STRIPE: usize = 8192;

/// One stripe: its version (the lock) and the change it made to the item count.
#[derive(Default)]
pub(super) struct Stripe {
    pub(super) version: AtomicU64,
    /// Items added minus items removed under this stripe's lock (wrapping; only the sum over all
    /// stripes means anything).
    items: AtomicUsize,
}

/// The move word: writers that may hide a stored fingerprint from a reader of its buckets (see
/// the module docs) add [`MOVE_STARTED`] before their first store and subtract [`MOVER`] after
/// their last. Its low bits count the writers at work (at most one per stripe, so far fewer than
/// 2^16); the rest is a sequence that changes with every such writer (wrapping round after 2^48).
const MOVER: u64 = 1;
const MOVERS_MASK: u64 = (1 << 16) - 1;
const MOVE_STARTED: u64 = (1 << 16) + MOVER;

/// A shared table's words with their stripes (each stripe's version and item count) and the
/// move word: what a writer holds ([`WriteGuard`]).
pub(crate) struct StripedTable {
    pub(super) table: Table<AtomicBytes>,
    pub(super) stripes: Box<[CachePadded<Stripe>]>,
    pub(super) moves: CachePadded<AtomicU64>,
}

impl StripedTable {
    /// `table`, which holds `items` fingerprints, with its stripes: one per [`BYTES_PER_STRIPE`]
    /// bytes, a power of two, at most [`MAX_STRIPES`] and at most one per block of buckets.
    pub(super) fn over(table: Table<AtomicBytes>, items: usize) -> Self {
        let blocks = table.buckets().div_ceil(BLOCK_BUCKETS);
        let count = (Table::len_of(table.geometry()) / BYTES_PER_STRIPE)
            .next_power_of_two()
            .min(MAX_STRIPES)
            .min(blocks.next_power_of_two());
        let stripes: Box<[CachePadded<Stripe>]> = (0..count).map(|_| CachePadded::default()).collect();
        stripes[0].items.store(items, Ordering::Relaxed);
        StripedTable { table, stripes, moves: CachePadded::default() }
    }

    /// Bytes of memory the words and the stripes take.
    pub(super) fn memory_bytes(&self) -> usize {
        self.table.memory_bytes() + std::mem::size_of_val(&*self.stripes)
    }

    /// Items stored: exact when no write is in progress. While writers run, the stripes are read
    /// one after another, so an item inserted under one stripe and removed under another can be
    /// seen removed but not inserted: the sum is then clamped at zero rather than wrapping round.
    pub(crate) fn items(&self) -> usize {
        let sum = self
            .stripes
            .iter()
            .fold(0usize, |sum, stripe| sum.wrapping_add(stripe.items.load(Ordering::Relaxed)));
        (sum as isize).max(0) as usize
    }

    #[inline(always)]
    pub(super) fn stripe_of(&self, bucket: usize) -> usize {
        (bucket / BLOCK_BUCKETS) & (self.stripes.len() - 1)
    }

    /// [`stripe_of`](Self::stripe_of) as a [`StripeIndex`], which holds every stripe's number.
    #[inline(always)]
    fn stripe_index(&self, bucket: usize) -> StripeIndex {
        self.stripe_of(bucket) as StripeIndex
    }

    /// Whether no writer that could hide a fingerprint (a path of moves, or a removal of one of
    /// several copies) was at work when the move word read `seen`, nor started since. Called
    /// after a read of buckets; the fence orders that read before the second load of the word.
    #[inline(always)]
    pub(super) fn no_moves_since(&self, seen: u64) -> bool {
        fence(Ordering::Acquire);
        // One test for both conditions: a lookup then has one branch on the word, not two.
        (self.moves.load(Ordering::Relaxed) ^ seen) | (seen & MOVERS_MASK) == 0
    }

    #[inline(always)]
    pub(super) fn stripes_of(&self, b1: usize, b2: usize) -> (&Stripe, &Stripe) {
        (&self.stripes[self.stripe_of(b1)], &self.stripes[self.stripe_of(b2)])
    }

    /// Takes the stripe of one bucket if no writer holds it (`None` if one does, without
    /// waiting): what an insert into a free slot changes. The guard holds the stripe itself, not a
    /// set of indices: the common insert takes and releases its stripe without loops, without a
    /// check for a heap-allocated set and without indexing again. It never waits: a caller that
    /// must goes on under [`lock_two`](Self::lock_two), so that the common insert calls nothing
    /// and saves few registers.
    #[inline(always)]
    pub(crate) fn try_lock_one(&self, bucket: usize) -> Option<StripeGuard<'_>> {
        let stripe = &self.stripes[self.stripe_of(bucket)];
        // Only the low bit of the old version is tested (one `lock bts` on x86-64, where the whole
        // old value costs a compare-exchange loop). If it was set, the version is unchanged.
        if stripe.version.fetch_or(1, Ordering::Acquire) & 1 == 1 {
            return None;
        }
        // Orders the odd version before the data stores that follow (see the module docs).
        fence(Ordering::Release);
        Some(StripeGuard { table: &self.table, stripe })
    }

    /// Takes the stripes of an item's two buckets.
    #[inline]
    pub(crate) fn lock_two(&self, b1: usize, b2: usize) -> WriteGuard<'_> {
        let (s1, s2) = (self.stripe_index(b1), self.stripe_index(b2));
        let mut few = [0; FEW];
        (few[0], few[1]) = (s1.min(s2), s1.max(s2));
        self.take_sorted(StripeSet::Few(few, if s1 == s2 { 1 } else { 2 }))
    }

    /// Takes the stripes of `buckets` (in any order, repeats allowed): a path of moves. Up to
    /// [`FEW`] stripes, without allocating (a path's set on the heap took a third of the
    /// instructions of an insert that moved fingerprints, `docs/performance.md`).
    pub(crate) fn lock_many(&self, buckets: &[usize]) -> WriteGuard<'_> {
        let (mut few, mut count) = ([0; FEW], 0);
        for (k, &bucket) in buckets.iter().enumerate() {
            let stripe = self.stripe_index(bucket);
            // Kept sorted and distinct as it is built: a path's few stripes need no sort.
            if few[..count].contains(&stripe) {
                continue;
            }
            if count == FEW {
                // Too many for the array: everything on the heap.
                let rest = buckets[k..].iter().map(|&bucket| self.stripe_index(bucket));
                let mut stripes: Vec<StripeIndex> = few.into_iter().chain(rest).collect();
                stripes.sort_unstable();
                stripes.dedup();
                return self.take_sorted(StripeSet::Many(stripes));
            }
            // In at its place, past the larger ones, which move up one.
            let mut at = count;
            while at > 0 && few[at - 1] > stripe {
                few[at] = few[at - 1];
                at -= 1;
            }
            few[at] = stripe;
            count += 1;
        }
        self.take_sorted(StripeSet::Few(few, count))
    }

    /// Takes every stripe: no write runs until the guard is dropped (lookups still do).
    pub(crate) fn lock_all(&self) -> WriteGuard<'_> {
        let count = self.stripes.len() as StripeIndex;
        self.take_sorted(StripeSet::Many((0..count).collect()))
    }

    /// Takes a set of distinct stripes in ascending order (no two writers then wait for each
    /// other in a cycle).
    #[inline]
    pub(super) fn take_sorted(&self, stripes: StripeSet) -> WriteGuard<'_> {
        debug_assert!(stripes.as_ref().windows(2).all(|pair| pair[0] < pair[1]));
        for &stripe in stripes.as_ref() {
            take(&self.stripes[usize::from(stripe)].version);
        }
        // Orders the odd versions before the data stores that follow (see the module docs).
        fence(Ordering::Release);
        WriteGuard { shared: self, stripes, moving: false }
    }
}

/// Takes a stripe by its version: sets the low bit (even to odd), waiting while another writer
/// holds it.
#[inline]
fn take(version: &AtomicU64) {
    let mut waiting = Waiting::default();
    loop {
        if version.fetch_or(1, Ordering::Acquire) & 1 == 0 {
            return;
        }
        // Held: wait for an even version without writing, then try again. (Under loom, a
        // relaxed load may keep returning the old odd version; the next `fetch_or` reads the
        // latest.)
        waiting.wait();
        #[cfg(not(loom))]
        while version.load(Ordering::Relaxed) & 1 == 1 {
            waiting.wait();
        }
    }
}

/// The versions of two stripes, read before a read of their buckets.
#[inline(always)]
pub(super) fn versions(stripes: (&Stripe, &Stripe)) -> (u64, u64) {
    (stripes.0.version.load(Ordering::Acquire), stripes.1.version.load(Ordering::Acquire))
}

/// Whether two stripes were free when their `versions` were read before a read of their buckets
/// and are unchanged after it: then no write overlapped the read (see the module docs).
#[inline(always)]
pub(super) fn unchanged(stripes: (&Stripe, &Stripe), versions: (u64, u64)) -> bool {
    fence(Ordering::Acquire);
    (versions.0 | versions.1) & 1 == 0
        && stripes.0.version.load(Ordering::Relaxed) == versions.0
        && stripes.1.version.load(Ordering::Relaxed) == versions.1
}

/// Stripes a [`StripeSet`] holds without allocating: an item's two, or the buckets of most paths
/// of moves with the item's.
const FEW: usize = 8;

/// A stripe's number: 16 bits hold every one ([`MAX_STRIPES`]), so that a set of [`FEW`] is
/// copied in two words as a guard is built and moved.
pub(crate) type StripeIndex = u16;

const _: () = assert!(MAX_STRIPES <= 1 << StripeIndex::BITS);

/// The stripes a writer holds, sorted and distinct; [`FEW`] or fewer without allocating.
pub(crate) enum StripeSet {
    Few([StripeIndex; FEW], usize),
    Many(Vec<StripeIndex>),
}

impl AsRef<[StripeIndex]> for StripeSet {
    fn as_ref(&self) -> &[StripeIndex] {
        match self {
            StripeSet::Few(few, count) => &few[..*count],
            StripeSet::Many(many) => many,
        }
    }
}

/// The stripes a writer holds; dropping it releases them.
pub(crate) struct WriteGuard<'a> {
    shared: &'a StripedTable,
    pub(super) stripes: StripeSet,
    /// Whether this writer counts in the move word ([`begin_moves`](Self::begin_moves)).
    moving: bool,
}

impl WriteGuard<'_> {
    /// The table, to change buckets of the held stripes only.
    pub(crate) fn table(&self) -> Table<&AtomicBytes> {
        self.shared.table.by_ref()
    }

    /// Announces, before the first store, a write that may hide a stored fingerprint from a
    /// lookup of the move word: a path of moves, or the removal of one of several copies of a
    /// fingerprint from an item's buckets (see the module docs). Lookups that overlap it read
    /// again, under the stripes' versions, until the guard is dropped.
    pub(crate) fn begin_moves(&mut self) {
        if !self.moving {
            self.shared.moves.fetch_add(MOVE_STARTED, Ordering::Relaxed);
            // Orders the count before the data stores that follow (see the module docs).
            fence(Ordering::Release);
            self.moving = true;
        }
    }

    /// Records `delta` items added (negative: removed), in the count of the first held stripe,
    /// which no other thread writes meanwhile (under loom, a read-modify-write: see
    /// `table::atomic`'s `replace_bits`).
    pub(crate) fn count_items(&self, delta: isize) {
        add_items(&self.shared.stripes[usize::from(self.stripes.as_ref()[0])].items, delta);
    }
}

/// Adds `delta` to the item count of a stripe that the caller holds, which no other thread writes
/// meanwhile (under loom, a read-modify-write: see `table::atomic`'s `replace_bits`).
#[inline(always)]
fn add_items(items: &AtomicUsize, delta: isize) {
    #[cfg(not(loom))]
    items.store(items.load(Ordering::Relaxed).wrapping_add_signed(delta), Ordering::Relaxed);
    #[cfg(loom)]
    items.fetch_add(delta as usize, Ordering::Relaxed);
}

/// One stripe a writer holds ([`StripedTable::try_lock_one`]); dropping it releases the stripe.
pub(crate) struct StripeGuard<'a> {
    table: &'a Table<AtomicBytes>,
    stripe: &'a Stripe,
}

impl StripeGuard<'_> {
    /// The table, to change buckets of the held stripe only.
    pub(crate) fn table(&self) -> Table<&AtomicBytes> {
        self.table.by_ref()
    }

    /// Records `delta` items added (negative: removed), in the held stripe's count.
    #[inline(always)]
    pub(crate) fn count_items(&self, delta: isize) {
        add_items(&self.stripe.items, delta);
    }
}

impl Drop for StripeGuard<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        release(&self.stripe.version);
    }
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        if self.moving {
            // Release: a reader that sees the movers' count back down sees every store before it.
            self.shared.moves.fetch_sub(MOVER, Ordering::Release);
        }
        for &stripe in self.stripes.as_ref().iter().rev() {
            release(&self.shared.stripes[usize::from(stripe)].version);
        }
    }
}

/// Releases a stripe the caller holds: the next even version, with release ordering. The
/// version is odd and only the holder writes it, so it reads back as the holder left it (cached:
/// it was just written), and a store of the next one does; under loom, a read-modify-write with
/// the same effect, since loom lets a waiting writer's spinning reads keep returning the old value
/// of a plain store without bound (its models then never end).
#[inline(always)]
fn release(version: &AtomicU64) {
    #[cfg(not(loom))]
    version.store(version.load(Ordering::Relaxed) + 1, Ordering::Release);
    #[cfg(loom)]
    version.fetch_add(1, Ordering::Release);
}

/// Backing off while another thread holds what we wait for: spin briefly, then yield.
#[derive(Default)]
pub(super) struct Waiting {
    #[cfg(not(loom))]
    backoff: crossbeam_utils::Backoff,
}

impl Waiting {
    #[inline]
    pub(super) fn wait(&mut self) {
        #[cfg(not(loom))]
        self.backoff.snooze();
        #[cfg(loom)]
        loom::thread::yield_now();
    }
}
