//! Insertion: find a path of moves that frees a slot, then apply it — shared by every filter type.
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

use crate::hash::Addressing;
use crate::table::Table;

/// Marks a root node (a candidate bucket of the new fingerprint).
const ROOT: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Node {
    bucket: usize,
    /// Index of the node whose bucket this one's incoming fingerprint came from.
    parent: u32,
    /// The slot in the parent's bucket whose fingerprint moves into this bucket.
    via_slot: u8,
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

impl PathSearch {
    /// Stores `fingerprint` in one of its candidate buckets `b1`, `b2` (`b2` the alternate of
    /// `b1`), moving other fingerprints if both are full. Returns `false`, with the table
    /// unchanged, when no path exists among the first `limit` buckets searched.
    pub(crate) fn insert(
        &mut self,
        table: &mut Table,
        addressing: &Addressing,
        fingerprint: u32,
        (b1, b2): (usize, usize),
        limit: usize,
    ) -> bool {
        // The emptier bucket takes it (ties: the primary): balanced buckets stay below full
        // longer, so fewer inserts near capacity need the path search.
        if let Some((bucket, slot)) = table.free_slot_in_emptier(b1, b2) {
            table.set(bucket, slot, fingerprint);
            return true;
        }
        match self.search(table, addressing, (b1, b2), limit) {
            Some((end, slot, free)) => {
                self.apply(table, addressing, end, slot, free, fingerprint);
                true
            }
            None => false,
        }
    }

    /// Starts fetching what an upcoming insert into `b1`, `b2` will read: if both buckets (already
    /// fetched, so this is cheap) are full, the alternate buckets of their fingerprints, which the
    /// search examines first. Batched inserts call it a few items ahead.
    #[inline]
    pub(crate) fn prefetch_for_insert(table: &Table, addressing: &Addressing, (b1, b2): (usize, usize)) {
        if table.find(b1, 0).is_none() && table.find(b2, 0).is_none() {
            prefetch_alternates(table, addressing, b1);
            prefetch_alternates(table, addressing, b2);
        }
    }

    /// Breadth-first search from both (full) candidate buckets. Returns the node whose slot's
    /// fingerprint can move to a free slot of its alternate bucket: `(node, slot, free slot)`.
    fn search(
        &mut self,
        table: &Table,
        addressing: &Addressing,
        (b1, b2): (usize, usize),
        limit: usize,
    ) -> Option<(usize, usize, usize)> {
        self.queue.clear();
        for bucket in [b1, b2] {
            self.queue.push(Node { bucket, parent: ROOT, via_slot: 0 });
        }
        let mut head = 0;
        while head < self.queue.len() {
            // One level of the tree at a time: first start fetching every bucket the level's
            // fingerprints could move to, so that their cache misses overlap, then examine them.
            let level_end = self.queue.len();
            for node in &self.queue[head..level_end] {
                prefetch_alternates(table, addressing, node.bucket);
            }
            while head < level_end {
                let node = self.queue[head];
                for slot in 0..table.slots() {
                    let target = addressing.alternate(node.bucket, table.get(node.bucket, slot));
                    if target == b1 || target == b2 || self.on_path(head, target) {
                        continue;
                    }
                    if let Some(free) = table.find(target, 0) {
                        return Some((head, slot, free));
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

    /// Whether `bucket` is already on the path from a root to node `index`.
    fn on_path(&self, mut index: usize, bucket: usize) -> bool {
        loop {
            let node = self.queue[index];
            if node.bucket == bucket {
                return true;
            }
            if node.parent == ROOT {
                return false;
            }
            index = node.parent as usize;
        }
    }

    /// Moves fingerprints along the found path, starting at its free end, then stores the new one.
    fn apply(
        &self,
        table: &mut Table,
        addressing: &Addressing,
        end: usize,
        slot: usize,
        free: usize,
        fingerprint: u32,
    ) {
        let mut node = self.queue[end];
        let moved = table.get(node.bucket, slot);
        table.set(addressing.alternate(node.bucket, moved), free, moved);
        let mut hole = slot;
        while node.parent != ROOT {
            let parent = self.queue[node.parent as usize];
            let moved = table.get(parent.bucket, node.via_slot as usize);
            debug_assert_eq!(addressing.alternate(parent.bucket, moved), node.bucket);
            table.set(node.bucket, hole, moved);
            hole = node.via_slot as usize;
            node = parent;
        }
        table.set(node.bucket, hole, fingerprint);
    }
}

/// Starts fetching the alternate bucket of every fingerprint in `bucket`: where the path search
/// looks after `bucket`.
#[inline]
fn prefetch_alternates(table: &Table, addressing: &Addressing, bucket: usize) {
    for slot in 0..table.slots() {
        table.prefetch(addressing.alternate(bucket, table.get(bucket, slot)));
    }
}
