//! `xorf` 0.13 `BinaryFuse8`: a static filter built once from all the keys (construction is the
//! "insert" time), about 0.4% false positives by construction, no deletion. It takes `u64` keys;
//! string keys are hashed to `u64` first (see [`Key::to_u64`]), inside the timed loops.

use xorf::{BinaryFuse8, Filter};

use super::Contender;
use crate::workload::Key;

/// The filter, once built.
pub(super) struct Xorf {
    filter: Option<BinaryFuse8>,
}

impl Xorf {
    /// Nothing to allocate until the keys are known.
    pub(super) fn new() -> Self {
        Xorf { filter: None }
    }
}

impl<K: Key> Contender<K> for Xorf {
    fn config(&self) -> String {
        "8-bit fp, static (built from all keys)".to_string()
    }

    fn memory_source(&self) -> &'static str {
        "Filter::len() one-byte fingerprints"
    }

    fn memory_bytes(&self) -> usize {
        self.filter.as_ref().map_or(0, |filter| filter.len())
    }

    fn insert_all(&mut self, keys: &[K]) -> Vec<usize> {
        let hashed: Vec<u64> = keys.iter().map(Key::to_u64).collect();
        match BinaryFuse8::try_from(&hashed) {
            Ok(filter) => {
                self.filter = Some(filter);
                Vec::new()
            }
            // Construction is all or nothing: every key failed.
            Err(_) => (0..keys.len()).collect(),
        }
    }

    #[inline]
    fn contains(&self, key: &K) -> bool {
        self.filter.as_ref().is_some_and(|filter| filter.contains(&key.to_u64()))
    }
}
