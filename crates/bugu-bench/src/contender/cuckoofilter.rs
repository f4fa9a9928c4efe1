//! `cuckoofilter` 0.5: 8-bit fingerprints in 4-slot buckets, the bucket count rounded up to a
//! power of two, std's `DefaultHasher` (SipHash-1-3). A failed insert keeps the new item but
//! drops the last evicted one (its documented behaviour), which our false-negative check sees.

use std::collections::hash_map::DefaultHasher;

use super::{Contender, Settings, grouped, insert_each, remove_each};
use crate::workload::Key;

/// Slots per bucket, fixed by the crate (its constant is private).
const BUCKET_SIZE: usize = 4;

/// The crate's filter with its default hasher.
pub(super) struct CuckooFilter {
    filter: cuckoofilter::CuckooFilter<DefaultHasher>,
    capacity: usize,
}

impl CuckooFilter {
    /// `with_capacity(n)`, as its documentation suggests.
    pub(super) fn new(settings: &Settings) -> Self {
        CuckooFilter {
            filter: cuckoofilter::CuckooFilter::with_capacity(settings.capacity),
            capacity: settings.capacity,
        }
    }
}

impl<K: Key> Contender<K> for CuckooFilter {
    fn config(&self) -> String {
        // The crate allocates next_power_of_two(capacity) slots in buckets of 4.
        let slots = self.capacity.next_power_of_two().max(BUCKET_SIZE);
        format!("8-bit fp, 4 slots, {} buckets (power of two)", grouped(slots / BUCKET_SIZE))
    }

    fn memory_source(&self) -> &'static str {
        "CuckooFilter::memory_usage()"
    }

    fn memory_bytes(&self) -> usize {
        self.filter.memory_usage()
    }

    fn insert_all(&mut self, keys: &[K]) -> Vec<usize> {
        insert_each(keys, |key| self.filter.add(key).is_ok())
    }

    #[inline]
    fn contains(&self, key: &K) -> bool {
        self.filter.contains(key)
    }

    fn remove_all(&mut self, keys: &[K]) -> Option<usize> {
        Some(remove_each(keys, |key| self.filter.delete(key)))
    }
}
