//! `scalable_cuckoo_filter` 0.5: a chain of cuckoo filters that grows when full, configured with
//! the initial capacity and the target rate, with its default SipHash-1-3 hasher. Inserts never
//! fail (the filter grows instead).

use super::{Contender, Settings, percent, remove_each};
use crate::workload::Key;

/// The crate's filter with its default hasher and random number generator.
pub(super) struct Scalable<K: Key> {
    filter: scalable_cuckoo_filter::ScalableCuckooFilter<K>,
    fpr: f64,
}

impl<K: Key> Scalable<K> {
    /// `ScalableCuckooFilter::new(n, p)`.
    pub(super) fn new(settings: &Settings) -> Self {
        Scalable {
            filter: scalable_cuckoo_filter::ScalableCuckooFilter::new(settings.capacity, settings.fpr),
            fpr: settings.fpr,
        }
    }
}

impl<K: Key> Contender<K> for Scalable<K> {
    fn config(&self) -> String {
        format!(
            "p = {}, initial capacity n, {} slots per bucket",
            percent(self.fpr),
            self.filter.entries_per_bucket()
        )
    }

    fn memory_source(&self) -> &'static str {
        "ScalableCuckooFilter::bits() / 8"
    }

    fn memory_bytes(&self) -> usize {
        (self.filter.bits() / 8) as usize
    }

    fn insert_all(&mut self, keys: &[K]) -> Vec<usize> {
        for key in keys {
            self.filter.insert(key);
        }
        Vec::new()
    }

    #[inline]
    fn contains(&self, key: &K) -> bool {
        self.filter.contains(key)
    }

    fn remove_all(&mut self, keys: &[K]) -> Option<usize> {
        Some(remove_each(keys, |key| self.filter.remove(key)))
    }
}
