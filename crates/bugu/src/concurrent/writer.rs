//! The concurrent filter's writes in the insert flow its cuckoo tables share
//! ([`Inserts`](crate::cuckoo::Inserts)): under the locks of the stripes they change.

use super::shared_table::SharedTable;
use super::stripes::WriteGuard;
use crate::batch::Located;
use crate::cuckoo::{InsertTarget, Path, PathSearch, Settled};
use crate::error::InsertError;
use crate::table::Table;
use crate::table::atomic::AtomicBytes;

/// The concurrent filter's inserts, as the insert flow writes them ([`InsertTarget`]), with
/// `kind` saying what kind of insert it is ([`InsertKind`]).
///
/// Most inserts never get here: they store into a free slot holding that bucket's stripe alone
/// ([`SharedTable::store_in_emptier`]). The first step here holds both of the item's buckets'
/// stripes: where both buckets were full, where another writer took the free slot meanwhile, and
/// for an exact `insert_unique`, which must hold both buckets while it checks for the item. A
/// path of moves is searched without locks, then applied under the locks of all its buckets (and
/// the item's) if it is still valid.
pub(super) struct Writer<'a> {
    pub(super) shared: &'a SharedTable,
    pub(super) kind: InsertKind,
    /// Where the buckets of a path to hold are listed (a buffer the thread keeps between
    /// inserts).
    pub(super) buckets: &'a mut Vec<usize>,
}

/// What an insert through a [`Writer`] is, and what it knows already.
#[derive(Clone, Copy)]
pub(super) struct InsertKind {
    /// An add-if-absent insert.
    unique: bool,
    /// The unlocked read just found both of the item's buckets full: the flow starts with the
    /// search, whose locks then take a slot freed meanwhile anyway.
    both_full: bool,
}

impl<'a> Writer<'a> {
    /// An insert whose first step holds both buckets.
    pub(super) const ANY: InsertKind = InsertKind { unique: false, both_full: false };
    /// An insert whose unlocked read found both buckets full.
    pub(super) const AFTER_BOTH_FULL: InsertKind = InsertKind { unique: false, both_full: true };
    /// An add-if-absent insert.
    pub(super) const UNIQUE: InsertKind = InsertKind { unique: true, both_full: false };

    /// Under locks that hold both of the item's buckets: `Some(false)` if `unique` and the item
    /// is present; `Some(true)` once the emptier bucket with room took the fingerprint; `None` if
    /// both are full.
    fn store_if_room(held: &mut Held<'a>, located @ (fingerprint, b1, b2): Located) -> Option<bool> {
        let mut table = held.guard.table();
        if held.unique && table.contains_located(|| located) {
            return Some(false);
        }
        let (bucket, slot) = table.free_slot_in_emptier(b1, b2)?;
        table.set(bucket, slot, fingerprint);
        held.guard.count_items(1);
        Some(true)
    }
}

/// A [`Writer`]'s hold on a path's buckets and the item's: their stripes' locks.
pub(super) struct Held<'a> {
    guard: WriteGuard<'a>,
    unique: bool,
}

impl<'a> InsertTarget for Writer<'a> {
    type Read = AtomicBytes;
    type Hold<'h>
        = Held<'a>
    where
        Self: 'h;
    const SHARED: bool = true;

    #[inline(always)]
    fn first_step(&mut self, located @ (_, b1, b2): Located) -> Result<bool, Located> {
        if self.kind.both_full {
            return Err(located);
        }
        let mut held = Held { guard: self.shared.lock_two(b1, b2), unique: self.kind.unique };
        Self::store_if_room(&mut held, located).ok_or(located)
    }

    #[inline(always)]
    fn table(&self) -> &Table<AtomicBytes> {
        self.shared.racy()
    }

    #[inline(always)]
    fn hold(&mut self, search: &PathSearch, path: Path, roots: (usize, usize)) -> Held<'a> {
        search.path_buckets(path, roots, self.buckets);
        Held { guard: self.shared.lock_many(self.buckets), unique: self.kind.unique }
    }

    /// An add-if-absent insert looks for its item under the locks first, so that of several
    /// threads adding it at once one does. Otherwise the path is checked first: it is still valid
    /// unless another writer changed one of its buckets, so most inserts need nothing else. Only
    /// when it is not is a slot of the item's buckets freed meanwhile taken instead (applying a
    /// valid path when such a slot exists is correct too, only more writes).
    fn settle(held: &mut Held<'a>, search: &PathSearch, path: Path, located: Located) -> Settled {
        if held.unique
            && let Some(added) = Self::store_if_room(held, located)
        {
            return Settled::Done(added);
        }
        if search.is_valid(&held.guard.table(), path) {
            return Settled::Apply;
        }
        if !held.unique
            && let Some(added) = Self::store_if_room(held, located)
        {
            return Settled::Done(added);
        }
        Settled::SearchAgain
    }

    fn apply(held: &mut Held<'a>, search: &PathSearch, path: Path, fingerprint: u32) {
        held.guard.begin_moves();
        search.apply(&mut held.guard.table(), path, fingerprint);
        held.guard.count_items(1);
    }

    /// The copies of the fingerprint are counted in both buckets read at one moment.
    fn no_path(&self, located: Located) -> InsertError {
        InsertError::no_path(self.shared.count_located(located), self.shared.racy().slots())
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::table::Geometry;

    /// A shared table of 256 buckets whose item (located from a fixed hash) has both buckets
    /// full of other fingerprints, so that its insert must move one: the table, the item, and
    /// a path the search found.
    fn both_buckets_full() -> (SharedTable, Located, PathSearch, Path) {
        let geometry = Geometry { buckets: 256, slots: 4, bits: 12, semi_sorted: false };
        let shared = SharedTable::empty(geometry).unwrap();
        let located @ (fingerprint, b1, b2) = shared.racy().addressing().locate(0x1234_5678_9abc_def0);
        assert_ne!(b1, b2);
        let others = (1..).filter(|&other| other != fingerprint);
        let guard = shared.lock_two(b1, b2);
        for ((bucket, slot), other) in item_slots(b1, b2).zip(others) {
            guard.table().set(bucket, slot, other);
        }
        drop(guard);
        let mut search = PathSearch::default();
        let path = search.search(shared.racy(), (b1, b2), 100).expect("the rest of the table is empty");
        (shared, located, search, path)
    }

    /// Every slot of the item's two buckets, `(bucket, slot)`.
    fn item_slots(b1: usize, b2: usize) -> impl Iterator<Item = (usize, usize)> {
        [b1, b2].into_iter().flat_map(|bucket| (0..4).map(move |slot| (bucket, slot)))
    }

    fn writer_of<'a>(shared: &'a SharedTable, kind: InsertKind, buckets: &'a mut Vec<usize>) -> Writer<'a> {
        Writer { shared, kind, buckets }
    }

    #[test]
    fn a_path_still_valid_is_applied() {
        let (shared, located, search, path) = both_buckets_full();
        let mut buckets = Vec::new();
        let mut writer = writer_of(&shared, Writer::AFTER_BOTH_FULL, &mut buckets);
        let mut held = writer.hold(&search, path, (located.1, located.2));
        assert_eq!(Writer::settle(&mut held, &search, path, located), Settled::Apply);
        Writer::apply(&mut held, &search, path, located.0);
        drop(held);
        assert!(shared.contains_located(located));
        assert_eq!(shared.items(), 1);
    }

    #[test]
    fn a_stale_path_takes_a_slot_freed_meanwhile_or_searches_again() {
        let (shared, located @ (fingerprint, b1, b2), search, path) = both_buckets_full();
        // Another writer fills every other bucket: the path's free slot is taken.
        let guard = shared.lock_all();
        for bucket in (0..256).filter(|&bucket| bucket != b1 && bucket != b2) {
            for slot in 0..4 {
                guard.table().set(bucket, slot, 7);
            }
        }
        drop(guard);
        let mut buckets = Vec::new();
        let mut writer = writer_of(&shared, Writer::AFTER_BOTH_FULL, &mut buckets);
        let mut held = writer.hold(&search, path, (b1, b2));
        assert_eq!(Writer::settle(&mut held, &search, path, located), Settled::SearchAgain);
        drop(held);
        assert!(!shared.contains_located(located));
        // Another writer removes a fingerprint from the item's second bucket: the slot is taken.
        shared.lock_two(b1, b2).table().set(b2, 3, 0);
        let mut held = writer.hold(&search, path, (b1, b2));
        assert_eq!(Writer::settle(&mut held, &search, path, located), Settled::Done(true));
        drop(held);
        assert_eq!(shared.racy().get(b2, 3), fingerprint);
        assert_eq!(shared.items(), 1);
    }

    #[test]
    fn an_add_if_absent_insert_looks_for_its_item_first() {
        let (shared, located @ (fingerprint, b1, b2), search, path) = both_buckets_full();
        // Another writer stored the same fingerprint meanwhile, in a slot the path does not move.
        let guard = shared.lock_two(b1, b2);
        let unmoved = item_slots(b1, b2).find(|&(bucket, slot)| {
            let before = guard.table().get(bucket, slot);
            guard.table().set(bucket, slot, fingerprint);
            let valid = search.is_valid(shared.racy(), path);
            if !valid {
                guard.table().set(bucket, slot, before);
            }
            valid
        });
        assert!(unmoved.is_some(), "a path moves one fingerprint out of the item's buckets");
        drop(guard);
        let mut buckets = Vec::new();
        let mut writer = writer_of(&shared, Writer::UNIQUE, &mut buckets);
        let mut held = writer.hold(&search, path, (b1, b2));
        assert_eq!(Writer::settle(&mut held, &search, path, located), Settled::Done(false));
        drop(held);
        // A plain insert applies the same path instead.
        let mut writer = writer_of(&shared, Writer::AFTER_BOTH_FULL, &mut buckets);
        let mut held = writer.hold(&search, path, (b1, b2));
        assert_eq!(Writer::settle(&mut held, &search, path, located), Settled::Apply);
    }

    #[test]
    fn the_held_stripes_are_the_path_s_and_the_item_s() {
        let (shared, (_, b1, b2), search, path) = both_buckets_full();
        let mut listed = Vec::new();
        search.path_buckets(path, (b1, b2), &mut listed);
        assert_eq!(&listed[..2], [b1, b2]);
        assert!(listed.len() >= 4, "a target, at least one node, and the roots: {listed:?}");
        let mut buckets = Vec::new();
        let mut writer = writer_of(&shared, Writer::AFTER_BOTH_FULL, &mut buckets);
        let held = writer.hold(&search, path, (b1, b2));
        drop(held);
        assert_eq!(buckets, listed);
    }
}
