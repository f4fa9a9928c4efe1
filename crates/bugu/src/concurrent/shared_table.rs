//! The table shared between threads: its atomic words and their stripes ([`StripedTable`]), and the readers' side of
//! the protocol (see [`super::stripes`]): lookups that check the move word or the stripes' versions around
//! their reads, and read again when a write overlapped them.

use super::stripes::{StripedTable, Waiting, WriteGuard, unchanged, versions};
use crate::batch::Located;
use crate::table::atomic::AtomicBytes;
use crate::table::{
    AllocFailed, BucketOp, ContainsEither, Geometry, KINDS, Kind, Matcher, PADDING, Region, Storage, Table,
    compiled_per_kind,
};

#[cfg(loom)]
use loom::sync::atomic::Ordering;
#[cfg(not(loom))]
use std::sync::atomic::Ordering;

/// The table shared between threads, with its stripes and its move word.
pub(crate) struct SharedTable {
    /// The table's words, their stripes and the move word.
    striped: StripedTable,
    /// [`contains_hash`](Self::contains_hash) compiled for this table's geometry alone, chosen
    /// when the table is built. Called through this pointer, the lookup is a small function of
    /// its own, wherever its caller is (see `contains_as`).
    lookup: fn(&SharedTable, u64) -> bool,
    /// [`store_in_emptier`](Self::store_in_emptier) compiled for this table's geometry alone,
    /// chosen when the table is built, as `lookup` is.
    store: Store,
}

/// The lookup compiled for each [`Kind`] of geometry, indexed by it.
const LOOKUPS: [fn(&SharedTable, u64) -> bool; KINDS] = compiled_per_kind!(SharedTable, contains_as);

/// The insert's common step for one geometry: `(table, fingerprint, b1, b2)` to what
/// [`SharedTable::store_in_emptier`] answers.
type Store = fn(&SharedTable, u32, usize, usize) -> Option<bool>;

/// The insert's common step compiled for each [`Kind`] of geometry, indexed by it.
const STORES: [Store; KINDS] = compiled_per_kind!(SharedTable, store_in_emptier_as);

impl SharedTable {
    /// An empty shared table of this geometry; [`AllocFailed`] if its memory cannot be allocated.
    /// Its pages are only touched when written, as an owned table's are.
    pub(crate) fn empty(geometry: Geometry) -> Result<Self, AllocFailed> {
        let words = AtomicBytes::zeroed(Table::len_of(geometry))?;
        Ok(SharedTable::over(Table::with_bytes(words, geometry), 0))
    }

    /// A shared copy of `table` holding `items` fingerprints; [`AllocFailed`] if its memory
    /// cannot be allocated.
    pub(crate) fn copy_of<S: AsRef<[u8]>>(table: &Table<S>, items: usize) -> Result<Self, AllocFailed> {
        let words = AtomicBytes::copy_of(table.storage().as_ref())?;
        Ok(SharedTable::over(table.with_storage(words), items))
    }

    /// The shared table over `table`'s words, which hold `items` fingerprints, with its stripes.
    fn over(table: Table<AtomicBytes>, items: usize) -> Self {
        // Lookups rely on it without checking again (`AtomicBytes` keeps its length).
        assert!(
            table.storage().region().len() >= Table::len_of(table.geometry()),
            "the words hold the whole table"
        );
        let (lookup, store) = (LOOKUPS[table.kind() as usize], STORES[table.kind() as usize]);
        SharedTable { striped: StripedTable::over(table, items), lookup, store }
    }

    /// An owned copy of the table; [`AllocFailed`] if it cannot be allocated. The caller holds
    /// every stripe ([`lock_all`](Self::lock_all)) or the only reference.
    pub(crate) fn copy_out(&self) -> Result<Table, AllocFailed> {
        let len =
            self.striped.table.geometry().payload_len().expect("the geometry of an existing table") + PADDING;
        Ok(self.striped.table.with_storage(self.striped.table.storage().copy_out(len)?))
    }

    /// Gives the payload (the packed buckets, without padding) to `sink` in chunks, with no copy
    /// of the table. The caller holds every stripe ([`lock_all`](Self::lock_all)).
    pub(crate) fn stream_payload<E>(&self, sink: impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), E> {
        let len = self.striped.table.geometry().payload_len().expect("the geometry of an existing table");
        self.striped.table.storage().stream_out(len, sink)
    }

    /// The table, for reads that need no consistency (the path search, statistics): a bucket read
    /// while a writer changes it may be torn.
    pub(crate) fn racy(&self) -> &Table<AtomicBytes> {
        &self.striped.table
    }

    /// Bytes of memory the words and the stripes take.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.striped.memory_bytes()
    }

    /// The number of stripes.
    #[cfg(test)]
    pub(crate) fn striped_len(&self) -> usize {
        self.striped.stripes.len()
    }

    /// Items stored (see [`StripedTable::items`]).
    pub(crate) fn items(&self) -> usize {
        self.striped.items()
    }

    /// Runs `read` on the table as it is at one moment between writes to buckets `b1` and `b2`:
    /// again and again until no write to their stripes overlapped it. On a retry, a result for
    /// which `settled` holds is returned at once, without that check (a found fingerprint).
    #[inline(always)]
    pub(crate) fn read<R>(
        &self,
        (b1, b2): (usize, usize),
        read: impl Fn(&Table<AtomicBytes>) -> R,
        settled: impl Fn(&R) -> bool,
    ) -> R {
        let stripes = self.striped.stripes_of(b1, b2);
        let versions = versions(stripes);
        let result = read(&self.striped.table);
        if unchanged(stripes, versions) {
            return result;
        }
        self.read_again(stripes, read, settled)
    }

    /// Whether an item with this hash may be in the table: the lookup of the concurrent filter,
    /// at the item's place by the table's own addressing. Its first attempt reads the two buckets
    /// between two reads of the move word (of the stripes' versions, for semi-sorted buckets); if
    /// a write that could hide the fingerprint overlapped it, the buckets are read again as
    /// [`read`](Self::read) does. As in [`Table::contains_located`], the geometry is dispatched
    /// before anything else, so that the first attempt compiles into each geometry's code with its
    /// constants; it is straight-line code (a loop or a jump there kept lookups far from the
    /// caches from overlapping). Its loads are checked once per lookup, as
    /// [`Table::contains_hash`]'s are.
    #[inline(always)]
    pub(crate) fn contains_hash(&self, hash: u64) -> bool {
        (self.lookup)(self, hash)
    }

    /// [`contains_hash`](Self::contains_hash) compiled for one kind of geometry, the table's.
    /// Out of line: a lookup inlined into a large caller (the `threads` harness's worker) was
    /// much slower than in a plain loop, as the caller's registers crowd it; and compiled for one
    /// geometry, the function saves fewer registers than one holding every geometry's code.
    #[inline(never)]
    fn contains_as<const KIND: Kind>(&self, hash: u64) -> bool {
        let locate = || self.striped.table.addressing().locate(hash);
        // SAFETY: the op visits the two buckets `locate` gives, and `Addressing::locate` gives
        // buckets below the count it was built with, this table's `buckets`. `KIND` is the
        // table's: `over`, the only constructor, took this function from `LOOKUPS` at the
        // table's kind, and the table is never replaced. Its words keep their length, which
        // `over` checked.
        let attempt = unsafe {
            self.striped.table.probe_in_range::<KIND, _>(VersionedContains { shared: self, locate })
        };
        // A retry locates the item again from its hash: keeping its buckets for it would hold
        // three more registers through the first attempt (which then saved and restored three).
        attempt.unwrap_or_else(|| self.contains_hash_again(hash))
    }

    /// [`contains_hash`](Self::contains_hash) for an item already located (each load checked).
    #[inline(always)]
    pub(crate) fn contains_located(&self, located: Located) -> bool {
        let attempt = self.striped.table.probe(VersionedContains { shared: self, locate: || located });
        attempt.unwrap_or_else(|| self.contains_again(located))
    }

    /// How many copies of a located fingerprint its two buckets hold, read at one moment.
    pub(crate) fn count_located(&self, located @ (_, b1, b2): Located) -> usize {
        self.read((b1, b2), |table| table.count_located(located), |_| false)
    }

    /// A lookup by hash whose first attempt overlapped a write (see
    /// [`contains_again`](Self::contains_again)). Out of line: one call in every geometry's code.
    #[cold]
    #[inline(never)]
    fn contains_hash_again(&self, hash: u64) -> bool {
        self.contains_again(self.striped.table.addressing().locate(hash))
    }

    /// A lookup whose first attempt overlapped a write: the buckets read
    /// between two reads of their stripes' versions, until no write to them overlaps.
    #[cold]
    #[inline(never)]
    fn contains_again(&self, (fingerprint, b1, b2): Located) -> bool {
        let again = |table: &Table<AtomicBytes>| table.contains_located(|| (fingerprint, b1, b2));
        self.read((b1, b2), again, |&found| found)
    }

    /// [`read`](Self::read) after its first attempt overlapped a write: until one does not.
    /// Never inlined: in each geometry's lookup code it would bring a copy of every geometry's.
    #[cold]
    #[inline(never)]
    fn read_again<R>(
        &self,
        stripes: (&super::stripes::Stripe, &super::stripes::Stripe),
        read: impl Fn(&Table<AtomicBytes>) -> R,
        settled: impl Fn(&R) -> bool,
    ) -> R {
        let mut waiting = Waiting::default();
        loop {
            waiting.wait();
            let versions =
                (stripes.0.version.load(Ordering::Acquire), stripes.1.version.load(Ordering::Acquire));
            let result = read(&self.striped.table);
            if settled(&result) || unchanged(stripes, versions) {
                return result;
            }
        }
    }

    /// The common insert: stores a located fingerprint in a free slot of the emptier of its two
    /// buckets, as [`Table::store_in_emptier`] does, holding only that bucket's stripe. The
    /// buckets are read without a lock; under the lock, the slot found free is checked again
    /// and filled: `Some(true)`. With the table unchanged, `None` if both buckets were full,
    /// `Some(false)` if another writer took the slot meanwhile or holds its stripe.
    #[inline(always)]
    pub(crate) fn store_in_emptier(&self, (fingerprint, b1, b2): Located) -> Option<bool> {
        // The three values as arguments of their own, passed in registers (a tuple goes through
        // memory).
        (self.store)(self, fingerprint, b1, b2)
    }

    /// [`store_in_emptier`](Self::store_in_emptier) compiled for one kind of geometry, the
    /// table's: the free slot is found and set with its geometry's constants, as an owned
    /// table's first step is (`Table::store_in_emptier_as`); out of line, as the lookup is.
    #[inline(never)]
    fn store_in_emptier_as<const KIND: Kind>(&self, fingerprint: u32, b1: usize, b2: usize) -> Option<bool> {
        let table = &self.striped.table;
        // Both buckets full: `None`.
        // SAFETY: `KIND` is the table's: `over`, the only constructor, took this function from
        // `STORES` at the table's kind, and the table is never replaced.
        let free = unsafe { table.free_slot_in_emptier_as::<KIND>(b1, b2) }?;
        // A held stripe counts as a slot taken: the caller waits under both buckets' locks.
        let Some(guard) = self.striped.try_lock_one(free.bucket()) else {
            return Some(false);
        };
        let stored = match table.free_slot_bits_as::<KIND>(&free) {
            // Only this writer writes the slot's words now: it holds their stripe.
            Some((bit, width)) => table.storage().set_bits_if_zero(bit, width, u64::from(fingerprint)),
            None => guard.table().set_if_empty(free.bucket(), free.slot(), fingerprint),
        };
        if stored {
            guard.count_items(1);
        }
        Some(stored)
    }

    /// Takes the stripes of an item's two buckets.
    #[inline]
    pub(crate) fn lock_two(&self, b1: usize, b2: usize) -> WriteGuard<'_> {
        self.striped.lock_two(b1, b2)
    }

    /// Takes the stripes of `buckets` (in any order, repeats allowed): a path of moves.
    pub(crate) fn lock_many(&self, buckets: &[usize]) -> WriteGuard<'_> {
        self.striped.lock_many(buckets)
    }

    /// Takes every stripe: no write runs until the guard is dropped (lookups still do).
    pub(crate) fn lock_all(&self) -> WriteGuard<'_> {
        self.striped.lock_all()
    }
}

/// [`SharedTable::contains_hash`], run by [`Table::probe`] with the geometry's matcher.
struct VersionedContains<'a, L> {
    shared: &'a SharedTable,
    locate: L,
}

impl<L: Fn() -> Located> VersionedContains<'_, L> {
    /// One attempt in a plain layout: locate, read the move word, probe with `probe`, read the
    /// word again. The answer, or `None` if a write that could hide the item overlapped.
    #[inline(always)]
    fn attempt(self, probe: impl FnOnce(ContainsEither) -> bool) -> Option<bool> {
        let (fingerprint, b1, b2) = (self.locate)();
        let moves = self.shared.striped.moves.load(Ordering::Acquire);
        let found = probe(ContainsEither { buckets: [b1, b2], fingerprint });
        // Only the move word decides: a branch on `found` (even as `found | unchanged`, which the
        // compiler splits into two branches) is mispredicted for half the keys of a mixed
        // workload, and each miss discards the lookups the CPU had started after this one, so
        // lookups far from the caches would lose their overlap. A found fingerprint is still
        // returned at once on a retry.
        self.shared.striped.no_moves_since(moves).then_some(found)
    }

    /// One attempt with semi-sorted buckets, where any write to a bucket re-encodes it: as
    /// [`attempt`](Self::attempt), with the versions of the two buckets' stripes.
    #[inline(always)]
    fn attempt_sorted(self, matcher: &impl Matcher) -> Option<bool> {
        let (fingerprint, b1, b2) = (self.locate)();
        let stripes = self.shared.striped.stripes_of(b1, b2);
        let versions = versions(stripes);
        let found = ContainsEither { buckets: [b1, b2], fingerprint }.on_words(matcher);
        unchanged(stripes, versions).then_some(found)
    }
}

impl<L: Fn() -> Located> BucketOp for VersionedContains<'_, L> {
    type Output = Option<bool>;

    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) -> Self::Output {
        self.attempt(|op| op.on_words(matcher))
    }

    #[inline(always)]
    fn on_sorted_words<M: Matcher>(self, matcher: &M) -> Self::Output {
        self.attempt_sorted(matcher)
    }

    #[inline(always)]
    fn on_slots(self, slots: usize, get: impl Fn(usize, usize) -> u32) -> Self::Output {
        self.attempt(|op| op.on_slots(slots, get))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Writes through the shared table's guard leave, after each write, the bytes an owned
        /// table has after the same writes, in every geometry (windows of 8 and 16 bytes,
        /// semi-sorted buckets): no bit outside the written slot changes.
        #[test]
        fn shared_writes_match_owned_writes(
            slots in prop::sample::select(vec![2usize, 4, 8]),
            bits in 4u32..=32,
            semi_sorted in any::<bool>(),
            buckets in 1usize..200,
            writes in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<u32>()), 0..60),
        ) {
            let semi_sorted = semi_sorted && slots == 4;
            let geometry = Geometry { buckets, slots, bits, semi_sorted };
            let mut owned = Table::new(geometry).unwrap();
            let shared = SharedTable::copy_of(&owned, 0).unwrap();
            let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
            for (bucket, slot, value) in writes {
                let (bucket, slot, value) = (bucket % buckets, slot % slots, value & mask);
                owned.set(bucket, slot, value);
                let guard = shared.striped.try_lock_one(bucket).expect("no other writer");
                guard.table().set(bucket, slot, value);
                drop(guard);
                prop_assert_eq!(shared.racy().get(bucket, slot), owned.get(bucket, slot));
                prop_assert_eq!(shared.racy().find(bucket, value), owned.find(bucket, value));
                let copied = shared.copy_out().unwrap();
                prop_assert_eq!(copied.storage(), owned.storage());
            }
            // Versions are even again, one step per write.
            prop_assert!(shared.striped.stripes.iter().all(|stripe| stripe.version.load(Ordering::Relaxed) % 2 == 0));
        }
    }

    #[test]
    fn reads_see_a_settled_result_or_wait_for_it() {
        let geometry = Geometry { buckets: 4096, slots: 4, bits: 12, semi_sorted: false };
        let shared = SharedTable::copy_of(&Table::new(geometry).unwrap(), 0).unwrap();
        // Buckets 0 and 64 are in different blocks, hence different stripes.
        assert_ne!(shared.striped.stripe_of(0), shared.striped.stripe_of(64));
        {
            let guard = shared.lock_many(&[64, 0, 64]);
            let held = guard.stripes.as_ref().to_vec();
            assert_eq!(held, [0, 1]);
            guard.table().set(64, 2, 0xabc);
            guard.count_items(1);
        }
        let found = shared.read((0, 64), |table| table.find(64, 0xabc), |_| false);
        assert_eq!(found, Some(2));
        assert_eq!(shared.items(), 1);
        // A removal counted before its insert is seen (another stripe) reads as zero, not 2^64 - 1.
        shared.striped.try_lock_one(0).unwrap().count_items(-2);
        assert_eq!(shared.items(), 0);
        shared.striped.try_lock_one(64).unwrap().count_items(1);
        assert_eq!(shared.items(), 0);
        shared.striped.try_lock_one(64).unwrap().count_items(1);
        assert_eq!(shared.items(), 1);
        let all = shared.lock_all();
        assert_eq!(all.stripes.as_ref().len(), shared.striped.stripes.len());
        drop(all);
        assert!(shared.memory_bytes() > shared.racy().memory_bytes());
    }
}
