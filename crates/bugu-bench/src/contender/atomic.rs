//! `atomic-cuckoo-filter` 0.3 with its defaults: 16-bit fingerprints, 4 slots, a power-of-two
//! bucket count, std's `DefaultHasher`. It has no size report, so memory is computed from its
//! layout: `capacity()` slots of 16 bits packed into a `Vec<AtomicUsize>`.

use atomic_cuckoo_filter::CuckooFilter;

use super::{Contender, Settings, grouped, insert_each, remove_each};
use crate::workload::Key;

/// Fingerprint width of the crate's default configuration.
const FINGERPRINT_BITS: usize = 16;
/// Slots per bucket of the crate's default configuration.
const BUCKET_SIZE: usize = 4;

/// The crate's filter, `with_capacity(n)`.
pub(super) struct Atomic {
    filter: CuckooFilter,
}

impl Atomic {
    /// `CuckooFilter::with_capacity(n)`: every other setting at its default.
    pub(super) fn new(settings: &Settings) -> Self {
        Atomic { filter: CuckooFilter::with_capacity(settings.capacity) }
    }
}

impl<K: Key> Contender<K> for Atomic {
    fn config(&self) -> String {
        format!(
            "{FINGERPRINT_BITS}-bit fp (default), {BUCKET_SIZE} slots, {} buckets (power of two)",
            grouped(self.filter.capacity() / BUCKET_SIZE)
        )
    }

    fn memory_source(&self) -> &'static str {
        "computed: capacity() slots x 16 bits, in 64-bit atomic words"
    }

    fn memory_bytes(&self) -> usize {
        let word_bits = usize::BITS as usize;
        (self.filter.capacity() * FINGERPRINT_BITS).div_ceil(word_bits) * (word_bits / 8)
    }

    fn insert_all(&mut self, keys: &[K]) -> Vec<usize> {
        insert_each(keys, |key| self.filter.insert(key).is_ok())
    }

    #[inline]
    fn contains(&self, key: &K) -> bool {
        self.filter.contains(key)
    }

    fn remove_all(&mut self, keys: &[K]) -> Option<usize> {
        Some(remove_each(keys, |key| self.filter.remove(key)))
    }
}
