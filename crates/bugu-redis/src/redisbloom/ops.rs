//! Lookups, counts, inserts and deletes, each taking the same steps as RedisBloom's: which
//! sub-filter and which slot an insert fills, which fingerprint a kick moves, which copy a delete
//! clears and when a delete compacts the chain. Answers depend only on which fingerprints sit in
//! which buckets, but later inserts (and so when the filter grows or reports itself full) depend
//! on where each one sits: only the same steps leave the same bytes.

use std::ops::Range;

use super::hash::{Lookup, alternate};
use super::{MAX_FILTERS_FOR_INSERT, RedisBloomFilter};
use crate::error::CfError;

/// The slots of the bucket that a bucket hash (or a bucket number of a sub-filter as large or
/// larger) names in a sub-filter of `len` slots.
fn bucket_range(len: usize, bucket_size: usize, hash: u64) -> Range<usize> {
    let start = (hash % (len / bucket_size) as u64) as usize * bucket_size;
    start..start + bucket_size
}

/// The index in a sub-filter's slots of the first slot holding `value` in the bucket `first`
/// names, else in the bucket `second` names (0 finds an empty slot).
fn find_in(slots: &[u8], bucket_size: usize, [first, second]: [u64; 2], value: u8) -> Option<usize> {
    [first, second].into_iter().find_map(|hash| {
        let bucket = bucket_range(slots.len(), bucket_size, hash);
        let start = bucket.start;
        slots[bucket].iter().position(|&slot| slot == value).map(|at| start + at)
    })
}

impl RedisBloomFilter {
    fn bucket_size(&self) -> usize {
        self.bucket_size as usize
    }

    fn holds(&self, lookup: &Lookup) -> bool {
        let bucket_size = self.bucket_size();
        self.filters
            .iter()
            .any(|slots| find_in(slots, bucket_size, lookup.buckets(), lookup.fingerprint).is_some())
    }

    /// Whether the item may be present: its fingerprint in either of its buckets of any
    /// sub-filter.
    pub(crate) fn contains(&self, item: &[u8]) -> bool {
        self.holds(&Lookup::of_item(item))
    }

    /// Copies of the item's fingerprint in its buckets of every sub-filter (a bucket counted
    /// twice when both hashes name it, as RedisBloom counts).
    pub(crate) fn count(&self, item: &[u8]) -> u64 {
        let lookup = Lookup::of_item(item);
        let bucket_size = self.bucket_size();
        let copies = |slots: &Vec<u8>, hash| {
            slots[bucket_range(slots.len(), bucket_size, hash)]
                .iter()
                .filter(|&&slot| slot == lookup.fingerprint)
                .count()
        };
        self.filters.iter().flat_map(|slots| lookup.buckets().map(|hash| copies(slots, hash) as u64)).sum()
    }

    /// RedisBloom's check before any insert of a command: a filter that already has its most
    /// sub-filters takes no more items.
    pub(crate) fn check_writable(&self) -> Result<(), CfError> {
        if self.filters.len() >= MAX_FILTERS_FOR_INSERT {
            return Err(CfError::MaxExpansions);
        }
        Ok(())
    }

    /// Adds one copy of the item.
    pub(crate) fn add(&mut self, item: &[u8]) -> Result<(), CfError> {
        self.insert(&Lookup::of_item(item))
    }

    /// Adds the item unless it may be present; `true` if it was added.
    pub(crate) fn add_unique(&mut self, item: &[u8]) -> Result<bool, CfError> {
        let lookup = Lookup::of_item(item);
        if self.holds(&lookup) {
            return Ok(false);
        }
        self.insert(&lookup).map(|()| true)
    }

    /// An empty slot of either bucket in any sub-filter, newest first; else kicks in the newest;
    /// else a new sub-filter (unless `EXPANSION` is 0), where the first try always succeeds.
    fn insert(&mut self, lookup: &Lookup) -> Result<(), CfError> {
        let bucket_size = self.bucket_size();
        loop {
            for slots in self.filters.iter_mut().rev() {
                if let Some(at) = find_in(slots, bucket_size, lookup.buckets(), 0) {
                    slots[at] = lookup.fingerprint;
                    self.items += 1;
                    return Ok(());
                }
            }
            if self.kick_in(lookup) {
                self.items += 1;
                return Ok(());
            }
            if self.expansion == 0 {
                return Err(CfError::Full);
            }
            self.grow()?;
        }
    }

    /// RedisBloom's eviction in the newest sub-filter: from the item's first bucket, swap the
    /// fingerprint in hand with the slot at a victim index that advances by one each step, and go
    /// to the evicted fingerprint's other bucket, until a bucket has an empty slot or
    /// `MAXITERATIONS` steps are done. On failure the same steps are walked back, so the
    /// sub-filter is left as it was.
    fn kick_in(&mut self, lookup: &Lookup) -> bool {
        let bucket_size = self.bucket_size();
        let steps = self.max_iterations;
        let Some(slots) = self.filters.last_mut() else {
            return false;
        };
        let buckets = (slots.len() / bucket_size) as u64;
        let mut fingerprint = lookup.fingerprint;
        let mut victim = 0;
        let mut bucket = lookup.first % buckets;
        for _ in 0..steps {
            std::mem::swap(&mut slots[bucket as usize * bucket_size + victim], &mut fingerprint);
            bucket = alternate(fingerprint, bucket) % buckets;
            let range = bucket_range(slots.len(), bucket_size, bucket);
            if let Some(empty) = slots[range].iter_mut().find(|slot| **slot == 0) {
                *empty = fingerprint;
                return true;
            }
            victim = (victim + 1) % bucket_size;
        }
        for _ in 0..steps {
            victim = (victim + bucket_size - 1) % bucket_size;
            bucket = alternate(fingerprint, bucket) % buckets;
            std::mem::swap(&mut slots[bucket as usize * bucket_size + victim], &mut fingerprint);
        }
        false
    }

    /// A new, empty sub-filter `expansion` times larger than the newest; refused, as RedisBloom
    /// refuses it, once there are 65,535 (its count is 16 bits wide) or the slots would pass
    /// 4 GiB in all.
    fn grow(&mut self) -> Result<(), CfError> {
        if self.filters.len() >= usize::from(u16::MAX) {
            return Err(CfError::OutOfMemory);
        }
        let size = self
            .shape()
            .filter_bytes(self.filters.len() as u64)
            .filter(|&size| size <= super::MAX_BYTES - self.slot_bytes())
            .ok_or(CfError::OutOfMemory)?;
        self.filters.try_reserve(1).map_err(|_| CfError::OutOfMemory)?;
        self.filters.push(vec![0; size as usize]);
        Ok(())
    }

    fn slot_bytes(&self) -> u64 {
        self.filters.iter().map(|slots| slots.len() as u64).sum()
    }

    /// Removes one copy of the item: from the newest sub-filter that holds one, its first bucket
    /// before its second. When deletes since the last compaction pass a tenth of the items, the
    /// chain is compacted. `false` if no copy was found.
    pub(crate) fn delete(&mut self, item: &[u8]) -> bool {
        let lookup = Lookup::of_item(item);
        let bucket_size = self.bucket_size();
        for slots in self.filters.iter_mut().rev() {
            if let Some(at) = find_in(slots, bucket_size, lookup.buckets(), lookup.fingerprint) {
                slots[at] = 0;
                // RedisBloom's counts wrap rather than fail (a false positive deleted from a
                // filter whose count was already 0).
                self.items = self.items.wrapping_sub(1);
                self.deletes = self.deletes.wrapping_add(1);
                if self.filters.len() > 1 && self.deletes as f64 > self.items as f64 * 0.10 {
                    self.compact();
                }
                return true;
            }
        }
        false
    }

    /// Moves fingerprints from the newest sub-filters into older ones with room, newest first,
    /// freeing a newest sub-filter that empties; stops at the first sub-filter that cannot be
    /// emptied. Resets the count of deletes.
    fn compact(&mut self) {
        for index in (1..self.filters.len()).rev() {
            if !self.empty_into_older(index) {
                break;
            }
            if index == self.filters.len() - 1 {
                self.filters.pop();
            }
        }
        self.deletes = 0;
    }

    /// Moves each fingerprint of sub-filter `index` (bucket by bucket, slot by slot) to an empty
    /// slot of its buckets in the oldest sub-filter that has one; `true` if all moved.
    fn empty_into_older(&mut self, index: usize) -> bool {
        let bucket_size = self.bucket_size();
        let (older, rest) = self.filters.split_at_mut(index);
        let slots = &mut rest[0];
        let mut all_moved = true;
        for (at, slot) in slots.iter_mut().enumerate() {
            let fingerprint = *slot;
            if fingerprint == 0 {
                continue;
            }
            let bucket = (at / bucket_size) as u64;
            let other = alternate(fingerprint, bucket);
            let home = older.iter_mut().find_map(|older| {
                find_in(older, bucket_size, [bucket, other], 0).map(|empty| (older, empty))
            });
            match home {
                Some((older, empty)) => {
                    older[empty] = fingerprint;
                    *slot = 0;
                }
                None => all_moved = false,
            }
        }
        all_moved
    }
}
