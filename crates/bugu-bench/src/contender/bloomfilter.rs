//! `bloomfilter` 3: a classic Bloom filter sized for `n` items at the target rate, with its
//! default (randomly seeded SipHash-1-3) hashers. No deletion.

use bloomfilter::Bloom;

use super::{Contender, Settings, percent};
use crate::workload::Key;

/// The crate's filter with its default hashers.
pub(super) struct BloomFilter<K: Key> {
    filter: Bloom<K>,
    fpr: f64,
}

impl<K: Key> BloomFilter<K> {
    /// `Bloom::new_for_fp_rate(n, p)`.
    pub(super) fn new(settings: &Settings) -> Self {
        let filter = Bloom::new_for_fp_rate(settings.capacity, settings.fpr)
            .expect("the system random source is available");
        BloomFilter { filter, fpr: settings.fpr }
    }
}

impl<K: Key> Contender<K> for BloomFilter<K> {
    fn config(&self) -> String {
        format!("p = {}, {} hashes", percent(self.fpr), self.filter.number_of_hash_functions())
    }

    fn memory_source(&self) -> &'static str {
        "Bloom::len() bits / 8"
    }

    fn memory_bytes(&self) -> usize {
        (self.filter.len() / 8) as usize
    }

    fn insert_all(&mut self, keys: &[K]) -> Vec<usize> {
        for key in keys {
            self.filter.set(key);
        }
        Vec::new()
    }

    #[inline]
    fn contains(&self, key: &K) -> bool {
        self.filter.check(key)
    }
}
