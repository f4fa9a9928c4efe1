//! `fastbloom` 0.17: a blocked Bloom filter sized for `n` items at the target rate, with its
//! default (randomly seeded) hasher. No deletion.

use super::{Contender, Settings, percent};
use crate::workload::Key;

/// The crate's filter with its default hasher.
pub(super) struct FastBloom {
    filter: fastbloom::BloomFilter,
    fpr: f64,
}

impl FastBloom {
    /// `BloomFilter::with_false_pos(p).expected_items(n)`.
    pub(super) fn new(settings: &Settings) -> Self {
        FastBloom {
            filter: fastbloom::BloomFilter::with_false_pos(settings.fpr).expected_items(settings.capacity),
            fpr: settings.fpr,
        }
    }
}

impl<K: Key> Contender<K> for FastBloom {
    fn config(&self) -> String {
        format!("p = {}, {} hashes", percent(self.fpr), self.filter.num_hashes())
    }

    fn memory_source(&self) -> &'static str {
        "BloomFilter::num_bits() / 8"
    }

    fn memory_bytes(&self) -> usize {
        self.filter.num_bits() / 8
    }

    fn insert_all(&mut self, keys: &[K]) -> Vec<usize> {
        for key in keys {
            std::hint::black_box(self.filter.insert(key));
        }
        Vec::new()
    }

    #[inline]
    fn contains(&self, key: &K) -> bool {
        self.filter.contains(key)
    }
}
