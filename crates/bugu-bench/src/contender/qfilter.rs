//! `qfilter` 0.3: a rank-select quotient filter for `n` items at the target rate, with its default
//! (stable foldhash) hasher. Inserts use `insert_duplicated`, the multiset insert: the plain
//! `insert` skips keys that already look present, and deleting the key that made another one look
//! present would then turn that one into a false negative (`docs/design.md`, multiset semantics)
//! — the workload deletes.

use super::{Contender, Settings, grouped, insert_each, percent, remove_each};
use crate::workload::Key;

/// The crate's filter with its default hasher.
pub(super) struct QFilter {
    filter: qfilter::Filter,
    fpr: f64,
}

impl QFilter {
    /// `Filter::new(n, p)`.
    pub(super) fn new(settings: &Settings) -> Self {
        let filter = qfilter::Filter::new(settings.capacity as u64, settings.fpr)
            .expect("qfilter supports the capacities and rates the command line accepts");
        QFilter { filter, fpr: settings.fpr }
    }

    /// `Filter::new_resizeable(initial, max, p)`: grows by doubling when full, up to `max`.
    pub(super) fn resizeable(initial: usize, max: usize, fpr: f64) -> Self {
        let filter = qfilter::Filter::new_resizeable(initial as u64, max.max(initial) as u64, fpr)
            .expect("qfilter supports the capacities and rates the command line accepts");
        QFilter { filter, fpr }
    }
}

impl<K: Key> Contender<K> for QFilter {
    fn config(&self) -> String {
        format!(
            "p = {}, {} hash bits per item (quotient + remainder), capacity {}",
            percent(self.fpr),
            self.filter.fingerprint_size(),
            grouped(self.filter.capacity() as usize)
        )
    }

    fn memory_source(&self) -> &'static str {
        "Filter::memory_usage()"
    }

    fn memory_bytes(&self) -> usize {
        self.filter.memory_usage()
    }

    fn insert_all(&mut self, keys: &[K]) -> Vec<usize> {
        insert_each(keys, |key| self.filter.insert_duplicated(key).is_ok())
    }

    #[inline]
    fn contains(&self, key: &K) -> bool {
        self.filter.contains(key)
    }

    fn remove_all(&mut self, keys: &[K]) -> Option<usize> {
        Some(remove_each(keys, |key| self.filter.remove(key)))
    }
}
