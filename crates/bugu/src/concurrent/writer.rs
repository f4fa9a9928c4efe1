//! The concurrent filter's writes in the insert flow every filter shares
//! ([`cuckoo::insert`](crate::cuckoo::insert)): under the locks of the stripes they change.

use super::shared_table::SharedTable;
use super::stripes::WriteGuard;
use crate::batch::Located;
use crate::cuckoo::{InsertTarget, Path, PathSearch, Settled};
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
    fn first_step(&mut self, located @ (_, b1, b2): Located) -> Option<bool> {
        if self.kind.both_full {
            return None;
        }
        let mut held = Held { guard: self.shared.lock_two(b1, b2), unique: self.kind.unique };
        Self::store_if_room(&mut held, located)
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
}
