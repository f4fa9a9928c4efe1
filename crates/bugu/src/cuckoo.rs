//! Insertion into a cuckoo table: the item's first step, then, when both of its buckets are full,
//! a path of moves that frees a slot, found and then applied. Written once ([`Inserts`], over an
//! [`InsertTarget`]) for every filter over such a table: [`CuckooFilter`](crate::CuckooFilter)'s
//! one-by-one, batched and add-if-absent inserts (and so every level of a
//! [`GrowableFilter`](crate::GrowableFilter), each a `CuckooFilter`), and
//! [`ConcurrentFilter`](crate::ConcurrentFilter)'s past its first, single-stripe step. The
//! one-table [`ExpandingFilter`](crate::ExpandingFilter) places entries its own way
//! (`src/expanding/insert.rs`: random kicks, then a stash) and uses nothing here.
//!
//! When both candidate buckets of a new fingerprint are full, a breadth-first search (as in
//! libcuckoo) looks for the shortest chain `B0[s0] -> B1[s1] -> ... -> Bk` where each fingerprint
//! can move to its alternate bucket and `Bk` has a free slot. The search only reads the table;
//! only a path that was found is applied, from its free end backwards, so that every fingerprint
//! is always somewhere a lookup finds it. Hence (see `docs/design.md`):
//! - a failed insert changes nothing and loses nothing (the `cuckoofilter` crate and the seed
//!   articles drop the last evicted fingerprint instead);
//! - insertion needs no random numbers: it is a pure function of the table and the item, so
//!   replicas that apply the same commands hold the same bytes.
//!
//! A path never visits a bucket twice: moving a slot's content out twice would send the second
//! fingerprint to the first one's alternate bucket. The search queue is kept between inserts so
//! that no insert allocates once it has warmed up.

use crate::batch::Located;
use crate::error::InsertError;
use crate::table::{BucketOp, Kind, MAX_LANES, Matcher, Storage, StorageMut, Table, default_kind_or_any};

/// Marks a root node (a candidate bucket of the new fingerprint).
const ROOT: u32 = u32::MAX;

/// How many nodes of a level ahead of the one examined the search has started fetching the
/// alternate buckets of. Not the whole level: most searches end a few nodes into one, and
/// fetching every node's first worked out far more alternates than the search then examined.
const NODES_FETCHED_AHEAD: usize = 4;

#[derive(Clone, Copy, Debug)]
struct Node {
    bucket: usize,
    /// Index of the node whose bucket this one's incoming fingerprint came from.
    parent: u32,
    /// The slot in the parent's bucket whose fingerprint moves into this bucket.
    via_slot: u8,
}

/// A path of moves the search found: the fingerprint in slot `slot` of the bucket of node `end`
/// moves to slot `free` of its alternate bucket `target`, and each node's incoming fingerprint
/// (from its parent's bucket) into the hole this leaves, back to a root bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Path {
    end: usize,
    slot: usize,
    target: usize,
    free: usize,
}

/// Reusable state of the path search.
#[derive(Debug, Default)]
pub(crate) struct PathSearch {
    queue: Vec<Node>,
}

impl Clone for PathSearch {
    /// The queue is scratch space: a clone starts with its own, empty.
    fn clone(&self) -> Self {
        PathSearch::default()
    }
}

/// Where an insert writes: a table owned by one thread, or the concurrent filter's shared one.
/// The insert flow ([`Inserts`], [`PathSearch::insert_by_moves`]) is written once over it; what
/// differs is how a writer holds the buckets it changes, what it records, and how it explains a
/// failed insert.
pub(crate) trait InsertTarget {
    /// The storage the path search reads.
    type Read: Storage;
    /// A writer's hold on the buckets it changes: the table itself for one thread, the locks of
    /// their stripes for many.
    type Hold<'a>
    where
        Self: 'a;
    /// Whether other writers change the table while a path is searched: then the item's buckets
    /// are tried again, and the path checked, under the hold.
    const SHARED: bool;

    /// The first step: stores the located fingerprint in the emptier of its two buckets if
    /// either has room (`Ok(added)`); `Err(located)` if both are full.
    fn first_step(&mut self, located: Located) -> Result<bool, Located>;
    /// The table the path search reads (for a shared table, without locks: a path may be stale).
    fn table(&self) -> &Table<Self::Read>;
    /// Holds the buckets of `path`, which `search` found, and the item's two, `roots`, for
    /// writing ([`PathSearch::path_buckets`] lists them).
    fn hold(&mut self, search: &PathSearch, path: Path, roots: (usize, usize)) -> Self::Hold<'_>;
    /// Under `hold`, what to do with `path`, found by a search that held nothing. Needed only
    /// where [`SHARED`](Self::SHARED): elsewhere nothing wrote to the table since the first step
    /// and the search, so the answer is always [`Settled::Apply`].
    fn settle(hold: &mut Self::Hold<'_>, search: &PathSearch, path: Path, located: Located) -> Settled;
    /// Under `hold`, applies `path`, which stores `fingerprint`.
    fn apply(hold: &mut Self::Hold<'_>, search: &PathSearch, path: Path, fingerprint: u32);
    /// The error of an insert of `located` that found no path of moves (see
    /// [`InsertError::no_path`]).
    fn no_path(&self, located: Located) -> InsertError;
}

/// What an insert that found a path without holding anything does once it holds the path's buckets
/// ([`InsertTarget::settle`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Settled {
    /// The insert is over, without the path: `true` if the fingerprint was stored (in a slot of
    /// the item's buckets freed meanwhile), `false` if an add-if-absent insert found its item.
    Done(bool),
    /// The path is still valid: apply it.
    Apply,
    /// Another writer changed the path, and the item's buckets are still full: search again.
    SearchAgain,
}

/// What an insert needs besides its target: what counts the items, the path search's scratch
/// space, and its limit. Every insert into a cuckoo table, one by one, batched or concurrent,
/// runs through [`finish`](Self::finish) once its first step is known, so that the flow is
/// written once: a fingerprint the first step stored is counted; where both buckets were full a
/// path of moves is searched and applied ([`PathSearch::insert_by_moves`]), and the fingerprint
/// counted, or the insert fails ([`InsertTarget::no_path`]) with the table unchanged.
pub(crate) struct Inserts<'a, C> {
    /// Counts the fingerprints stored ([`Count`]).
    pub(crate) count: C,
    pub(crate) search: &'a mut PathSearch,
    /// How many buckets the path search may queue (the filter's eviction limit).
    pub(crate) limit: usize,
}

/// What [`Inserts`] counts stored fingerprints in: the filter's count (`&mut usize`), a copy of
/// it that a batch keeps in a register and writes back when it ends (`usize`), or nothing (`()`)
/// where the target counts them itself, as the concurrent filter does under its locks.
pub(crate) trait Count {
    /// One more fingerprint stored.
    fn add(&mut self);
}

impl Count for usize {
    #[inline(always)]
    fn add(&mut self) {
        *self += 1;
    }
}

impl Count for &mut usize {
    #[inline(always)]
    fn add(&mut self) {
        **self += 1;
    }
}

impl Count for () {
    #[inline(always)]
    fn add(&mut self) {}
}

impl<C: Count> Inserts<'_, C> {
    /// An insert of a located fingerprint: the target's first step ([`InsertTarget::first_step`]),
    /// then [`finish`](Self::finish).
    #[inline(always)]
    pub(crate) fn insert<T: InsertTarget>(
        &mut self,
        target: &mut T,
        located: Located,
    ) -> Result<bool, InsertError> {
        let first_step = target.first_step(located);
        self.finish(target, first_step)
    }

    /// Finishes an insert from its first step's outcome: `Ok(added)` if the step is over (it
    /// stored the fingerprint, or for an add-if-absent insert found the item), the located
    /// fingerprint if both of its buckets are full. `Ok(added)`, or the error of an insert that
    /// found no path, with the table unchanged.
    ///
    /// The path search is out of line for a table owned by one thread, whose callers keep their
    /// registers for the first step, and inline in the concurrent insert, whose first step is out
    /// of line already. It is given the search and the limit, not `self`, so that no caller keeps
    /// these inserts in memory (the count with them) for the search's sake: the count of a batch
    /// stays in a register.
    #[inline(always)]
    pub(crate) fn finish<T: InsertTarget>(
        &mut self,
        target: &mut T,
        first_step: Result<bool, Located>,
    ) -> Result<bool, InsertError> {
        let added = match first_step {
            Ok(added) => added,
            Err(located) if T::SHARED => self.search.insert_by_moves_inline(target, located, self.limit)?,
            Err(located) => self.search.insert_by_moves(target, located, self.limit)?,
        };
        if added {
            self.count.add();
        }
        Ok(added)
    }
}

/// A table owned by one thread: nothing to hold but the table, and nothing changes it between
/// the search and the moves.
impl InsertTarget for Table {
    type Read = Vec<u8>;
    type Hold<'a> = &'a mut Table;
    const SHARED: bool = false;

    #[inline]
    fn first_step(&mut self, located @ (fingerprint, b1, b2): Located) -> Result<bool, Located> {
        if self.store_in_emptier(fingerprint, b1, b2) { Ok(true) } else { Err(located) }
    }

    #[inline(always)]
    fn table(&self) -> &Table {
        self
    }

    #[inline(always)]
    fn hold(&mut self, _: &PathSearch, _: Path, _: (usize, usize)) -> &mut Table {
        self
    }

    #[inline(always)]
    fn settle(_: &mut &mut Table, _: &PathSearch, _: Path, _: Located) -> Settled {
        Settled::Apply
    }

    #[inline(always)]
    fn apply(table: &mut &mut Table, search: &PathSearch, path: Path, fingerprint: u32) {
        search.apply(table, path, fingerprint);
    }

    /// Out of line: inlined, its probe (for any geometry) made every insert save and restore six
    /// registers.
    #[cold]
    #[inline(never)]
    fn no_path(&self, located: Located) -> InsertError {
        InsertError::no_path(self.count_located(located), self.slots())
    }
}

impl PathSearch {
    /// Bytes of the queue's buffer, kept between searches.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.queue.capacity() * std::mem::size_of::<Node>()
    }

    /// The insert's second part, once its first step found both of the item's buckets full:
    /// searches a path of moves from them to a free slot, holds the path's buckets and the
    /// item's, and applies the path, which stores the fingerprint. Where other writers change the
    /// table meanwhile ([`InsertTarget::SHARED`]), the target settles the path under its hold
    /// ([`InsertTarget::settle`]): applied if still valid, else replaced by a slot freed
    /// meanwhile or searched again. `Ok(added)`, or the target's error
    /// ([`InsertTarget::no_path`]), with the table unchanged, when no path exists among the
    /// first `limit` buckets searched. Out of line: inlined, the search made every insert save
    /// and restore six registers.
    #[inline(never)]
    pub(crate) fn insert_by_moves<T: InsertTarget>(
        &mut self,
        target: &mut T,
        located: Located,
        limit: usize,
    ) -> Result<bool, InsertError> {
        self.insert_by_moves_inline(target, located, limit)
    }

    /// [`insert_by_moves`](Self::insert_by_moves) inlined into its caller: the concurrent
    /// filter's insert, whose first step is out of line already.
    #[inline(always)]
    pub(crate) fn insert_by_moves_inline<T: InsertTarget>(
        &mut self,
        target: &mut T,
        located @ (fingerprint, b1, b2): Located,
        limit: usize,
    ) -> Result<bool, InsertError> {
        loop {
            let Some(path) = self.search(target.table(), (b1, b2), limit) else {
                return Err(target.no_path(located));
            };
            let mut hold = target.hold(self, path, (b1, b2));
            if T::SHARED {
                match T::settle(&mut hold, self, path, located) {
                    Settled::Done(added) => return Ok(added),
                    Settled::Apply => {}
                    Settled::SearchAgain => continue,
                }
            }
            T::apply(&mut hold, self, path, fingerprint);
            return Ok(true);
        }
    }

    /// Starts fetching what an upcoming insert into `b1`, `b2` will read: if both buckets (already
    /// fetched, so this is cheap) are full, the alternate buckets of their fingerprints, which the
    /// search examines first. Batched inserts call it a few items ahead, with `KIND` the kind of
    /// code their loop is compiled for (the table's, or
    /// [`ANY_GEOMETRY`](crate::table::ANY_GEOMETRY)). Out of line: it holds every geometry's
    /// code, and inlined it made the batched insert loop pay for its look-ahead on every item,
    /// even where the load is too low to run it.
    #[inline(never)]
    pub(crate) fn prefetch_for_insert<const KIND: Kind, S: Storage>(
        table: &Table<S>,
        (b1, b2): (usize, usize),
    ) {
        table.probe_as::<KIND, _>(PrefetchForInsert::<S, KIND> { table, buckets: [b1, b2] });
    }

    /// Breadth-first search from both (full) candidate buckets for a [`Path`] to a free slot. It
    /// only reads the table. The search is compiled for each geometry (the table dispatches on
    /// its geometry once per search): a bucket's fingerprints come from one load of the bucket,
    /// and a free slot is looked for with the geometry's masks as constants. The default
    /// geometry's search is compiled for it alone, so that its prefetches too take the bucket's
    /// address from an `lea` rather than a multiplication by the table's width.
    pub(crate) fn search<S: Storage>(
        &mut self,
        table: &Table<S>,
        roots: (usize, usize),
        limit: usize,
    ) -> Option<Path> {
        default_kind_or_any!(table.kind(), KIND => {
            table.probe_as::<KIND, _>(Search::<S, KIND> { search: self, table, roots, limit })
        })
    }

    /// [`search`](Self::search) with the buckets read through `buckets`, the table's matcher.
    #[inline(always)]
    fn search_with<const KIND: Kind, S: Storage, M: Matcher>(
        &mut self,
        table: &Table<S>,
        buckets: &M,
        roots @ (b1, b2): (usize, usize),
        limit: usize,
    ) -> Option<Path> {
        self.queue.clear();
        for bucket in [b1, b2] {
            self.queue.push(Node { bucket, parent: ROOT, via_slot: 0 });
        }
        // The first level, where most searches end.
        let targets = first_level::<KIND, _, _>(table, buckets, roots);
        for (root, root_targets) in targets.iter().enumerate() {
            for (slot, &target) in root_targets[..buckets.slots()].iter().enumerate() {
                // A root's own bucket: a path never visits a bucket twice; the other root's:
                // the search examines it at depth 0 already.
                if target == b1 || target == b2 {
                    continue;
                }
                if let Some(free) = buckets.free_slot(target) {
                    return Some(Path { end: root, slot, target, free });
                }
            }
        }
        // Queued only now, in the order the level was examined in: most searches never need them.
        for (root, root_targets) in targets.iter().enumerate() {
            for (slot, &target) in root_targets[..buckets.slots()].iter().enumerate() {
                if target != b1 && target != b2 && self.queue.len() < limit {
                    self.queue.push(Node { bucket: target, parent: root as u32, via_slot: slot as u8 });
                }
            }
        }
        self.search_deeper::<KIND, _, _>(table, buckets, roots, limit)
    }

    /// The rest of the breadth-first search once the roots' level found no free slot: the nodes
    /// queued from index 2 on, one level at a time.
    #[inline(always)]
    fn search_deeper<const KIND: Kind, S: Storage, M: Matcher>(
        &mut self,
        table: &Table<S>,
        buckets: &M,
        (b1, b2): (usize, usize),
        limit: usize,
    ) -> Option<Path> {
        let mut head = 2;
        // The alternates of the nodes fetched ahead, node `k`'s at `k % NODES_FETCHED_AHEAD`:
        // worked out once for the fetch and the examination.
        let mut ahead = [[0; MAX_LANES]; NODES_FETCHED_AHEAD];
        while head < self.queue.len() {
            // One level of the tree at a time, fetching the buckets the level's fingerprints could
            // move to a few nodes ahead of the one examined, so that their cache misses overlap.
            let level_end = self.queue.len();
            let mut fetched = head;
            while head < level_end {
                while fetched < level_end.min(head + NODES_FETCHED_AHEAD) {
                    ahead[fetched % NODES_FETCHED_AHEAD] =
                        fetch_alternates::<KIND, _, _>(table, buckets, self.queue[fetched].bucket);
                    fetched += 1;
                }
                let targets = ahead[head % NODES_FETCHED_AHEAD];
                for (slot, &target) in targets[..buckets.slots()].iter().enumerate() {
                    if target == b1 || target == b2 || self.on_path(head, target) {
                        continue;
                    }
                    if let Some(free) = buckets.free_slot(target) {
                        return Some(Path { end: head, slot, target, free });
                    }
                    if self.queue.len() < limit {
                        self.queue.push(Node { bucket: target, parent: head as u32, via_slot: slot as u8 });
                    }
                }
                head += 1;
            }
        }
        None
    }

    /// Whether `bucket` is on the path from a root to node `index`, the root left out: the
    /// search compares every bucket with both roots anyway.
    fn on_path(&self, mut index: usize, bucket: usize) -> bool {
        loop {
            let node = self.queue[index];
            if node.parent == ROOT {
                return false;
            }
            if node.bucket == bucket {
                return true;
            }
            index = node.parent as usize;
        }
    }

    /// The buckets a path reads and writes, its target then each node's back to a root, and the
    /// item's two `roots`, into `buckets` (emptied first): what a writer holds to apply it. A
    /// buffer the caller keeps between inserts: an iterator over the path, which the stripes'
    /// lock then consumed, cost more than the locks it took.
    pub(crate) fn path_buckets(&self, path: Path, (b1, b2): (usize, usize), buckets: &mut Vec<usize>) {
        buckets.clear();
        buckets.extend([b1, b2, path.target]);
        let mut node = self.queue[path.end];
        loop {
            buckets.push(node.bucket);
            if node.parent == ROOT {
                return;
            }
            node = self.queue[node.parent as usize];
        }
    }

    /// Whether the path can still be applied: every fingerprint on it still moves to the next
    /// bucket of the path, and the target slot is still free. Always true right after the search;
    /// a concurrent filter checks it again once it holds the locks of the path's buckets, since
    /// other writers may have changed the table in between.
    pub(crate) fn is_valid<S: Storage>(&self, table: &Table<S>, path: Path) -> bool {
        let moves_to = |bucket, slot, destination| {
            let fingerprint = table.get(bucket, slot);
            fingerprint != 0 && table.addressing().alternate(bucket, fingerprint) == destination
        };
        let mut node = self.queue[path.end];
        if table.get(path.target, path.free) != 0 || !moves_to(node.bucket, path.slot, path.target) {
            return false;
        }
        while node.parent != ROOT {
            let parent = self.queue[node.parent as usize];
            if !moves_to(parent.bucket, node.via_slot as usize, node.bucket) {
                return false;
            }
            node = parent;
        }
        true
    }

    /// Moves fingerprints along a valid path, starting at its free end, then stores the new one
    /// in the root bucket's freed slot.
    pub(crate) fn apply<S: StorageMut>(
        &self,
        table: &mut Table<S>,
        Path { end, slot, target, free }: Path,
        fingerprint: u32,
    ) {
        let mut node = self.queue[end];
        let moved = table.get(node.bucket, slot);
        debug_assert_eq!(table.addressing().alternate(node.bucket, moved), target);
        table.set(target, free, moved);
        let mut hole = slot;
        while node.parent != ROOT {
            let parent = self.queue[node.parent as usize];
            let moved = table.get(parent.bucket, node.via_slot as usize);
            debug_assert_eq!(table.addressing().alternate(parent.bucket, moved), node.bucket);
            table.set(node.bucket, hole, moved);
            hole = node.via_slot as usize;
            node = parent;
        }
        table.set(node.bucket, hole, fingerprint);
    }
}

/// [`PathSearch::search`] as an operation on the table's buckets, compiled for `KIND`.
struct Search<'a, S, const KIND: Kind> {
    search: &'a mut PathSearch,
    table: &'a Table<S>,
    roots: (usize, usize),
    limit: usize,
}

impl<S: Storage, const KIND: Kind> BucketOp for Search<'_, S, KIND> {
    type Output = Option<Path>;
    #[inline(always)]
    fn on_words<M: Matcher>(self, buckets: &M) -> Option<Path> {
        self.search.search_with::<KIND, _, _>(self.table, buckets, self.roots, self.limit)
    }
}

/// [`PathSearch::prefetch_for_insert`] as an operation on the table's buckets, compiled for `KIND`.
struct PrefetchForInsert<'a, S, const KIND: Kind> {
    table: &'a Table<S>,
    buckets: [usize; 2],
}

impl<S: Storage, const KIND: Kind> BucketOp for PrefetchForInsert<'_, S, KIND> {
    type Output = ();
    #[inline(always)]
    fn on_words<M: Matcher>(self, buckets: &M) {
        let [b1, b2] = self.buckets;
        let is_full = |bucket| buckets.free_slot(bucket).is_none();
        if is_full(b1) && is_full(b2) {
            fetch_alternates::<KIND, _, _>(self.table, buckets, b1);
            fetch_alternates::<KIND, _, _>(self.table, buckets, b2);
        }
    }
}

/// The alternate bucket of every fingerprint in `bucket` (read through `buckets`, the table's
/// matcher; 0 past the last slot), each fetched by code compiled for `KIND`: where the path
/// search looks after `bucket`.
#[inline(always)]
fn fetch_alternates<const KIND: Kind, S: Storage, M: Matcher>(
    table: &Table<S>,
    buckets: &M,
    bucket: usize,
) -> [usize; MAX_LANES] {
    let mut targets = [0; MAX_LANES];
    let fingerprints = buckets.fingerprints(bucket);
    for (target, &fingerprint) in targets.iter_mut().zip(&fingerprints[..buckets.slots()]) {
        *target = table.addressing().alternate(bucket, fingerprint);
        table.prefetch_as::<KIND>(*target);
    }
    targets
}

/// Where the fingerprints of both roots could move (`[root][slot]`), each worked out once and
/// fetched before the first is examined, so that their cache misses overlap.
#[inline(always)]
fn first_level<const KIND: Kind, S: Storage, M: Matcher>(
    table: &Table<S>,
    buckets: &M,
    (b1, b2): (usize, usize),
) -> [[usize; MAX_LANES]; 2] {
    [fetch_alternates::<KIND, _, _>(table, buckets, b1), fetch_alternates::<KIND, _, _>(table, buckets, b2)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Geometry;
    use proptest::prelude::*;

    /// The breadth-first search as the module docs state it, with none of the search's shortcuts
    /// (the roots' level in an array, the alternates kept for the fetch and the examination):
    /// one queue, slots read one by one, a free slot found by the table's generic `find`.
    fn reference_search(table: &Table, (b1, b2): (usize, usize), limit: usize) -> Option<Path> {
        let mut queue = vec![
            Node { bucket: b1, parent: ROOT, via_slot: 0 },
            Node { bucket: b2, parent: ROOT, via_slot: 0 },
        ];
        let on_path = |queue: &[Node], mut index: usize, bucket: usize| loop {
            if queue[index].bucket == bucket {
                return true;
            }
            match queue[index].parent {
                ROOT => return false,
                parent => index = parent as usize,
            }
        };
        let mut head = 0;
        while head < queue.len() {
            let bucket = queue[head].bucket;
            for slot in 0..table.slots() {
                let target = table.addressing().alternate(bucket, table.get(bucket, slot));
                if target == b1 || target == b2 || on_path(&queue, head, target) {
                    continue;
                }
                if let Some(free) = table.find(target, 0) {
                    return Some(Path { end: head, slot, target, free });
                }
                if queue.len() < limit {
                    queue.push(Node { bucket: target, parent: head as u32, via_slot: slot as u8 });
                }
            }
            head += 1;
        }
        None
    }

    proptest! {
        // Over fills of small tables past their capacity, every insert whose buckets are both
        // full finds the path the reference finds (or none when it finds none), and once applied
        // every fingerprint stays where a lookup finds it.
        #[test]
        fn the_search_finds_the_path_the_plain_breadth_first_search_finds(
            (slots, semi_sorted) in prop::sample::select(vec![(2usize, false), (4, false), (8, false), (4, true)]),
            bits in prop::sample::select(vec![5u32, 8, 12, 13, 16, 20]),
            half in 1usize..24,
            limit in prop::sample::select(vec![2usize, 3, 9, 40, 500]),
            items in proptest::collection::vec((any::<usize>(), any::<u32>()), 1..400),
        ) {
            let buckets = 2 * half;
            let mut table = Table::new(Geometry { buckets, slots, bits, semi_sorted }).unwrap();
            let mut search = PathSearch::default();
            let mut stored = Vec::new();
            for (bucket, raw) in items {
                let fingerprint = raw % ((1u32 << bits) - 1) + 1;
                let b1 = bucket % buckets;
                let b2 = table.addressing().alternate(b1, fingerprint);
                if !table.store_in_emptier(fingerprint, b1, b2) {
                    let path = search.search(&table, (b1, b2), limit);
                    prop_assert_eq!(path, reference_search(&table, (b1, b2), limit));
                    let Some(path) = path else { continue };
                    prop_assert!(search.is_valid(&table, path));
                    search.apply(&mut table, path, fingerprint);
                }
                stored.push((fingerprint, b1, b2));
                for &(fingerprint, b1, b2) in &stored {
                    prop_assert!(table.find(b1, fingerprint).is_some() || table.find(b2, fingerprint).is_some());
                }
            }
        }
    }
}
