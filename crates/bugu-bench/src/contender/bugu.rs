//! bugu itself: one-by-one and batched rows, by fingerprint width or by target rate, and the
//! concurrent filter driven from one thread.

use std::hint::black_box;

use bugu::{ConcurrentFilter, CuckooFilter, Filter, FilterMut};

use super::{Contender, Settings, grouped, insert_each, remove_each};
use crate::workload::Key;

/// A bugu filter with 4-slot buckets.
pub(super) struct Bugu {
    filter: CuckooFilter,
    batched: bool,
    batch: usize,
}

impl Bugu {
    /// `bits`-bit fingerprints; `batched` routes inserts and lookups through the batch API.
    pub(super) fn with_bits(settings: &Settings, bits: u32, batched: bool) -> Self {
        let filter = CuckooFilter::builder()
            .capacity(settings.capacity)
            .fingerprint_bits(bits)
            .bucket_size(4)
            .build()
            .expect("bugu accepts widths 4..=32 and any positive capacity");
        Bugu { filter, batched, batch: settings.batch.max(1) }
    }

    /// `bits`-bit fingerprints in semi-sorted buckets of 4, one by one.
    pub(super) fn semi_sorted(settings: &Settings, bits: u32) -> Self {
        let filter = CuckooFilter::builder()
            .capacity(settings.capacity)
            .fingerprint_bits(bits)
            .bucket_size(4)
            .semi_sorted(true)
            .build()
            .expect("semi-sorted buckets accept widths 4..=32 and any positive capacity");
        Bugu { filter, batched: false, batch: settings.batch.max(1) }
    }

    /// Fingerprint width chosen by bugu for the run's target rate.
    pub(super) fn with_rate(settings: &Settings) -> Self {
        let filter = CuckooFilter::builder()
            .capacity(settings.capacity)
            .false_positive_rate(settings.fpr)
            .bucket_size(4)
            .build()
            .expect("the target rate is validated by the command line");
        Bugu { filter, batched: false, batch: settings.batch.max(1) }
    }
}

impl<K: Key> Contender<K> for Bugu {
    fn config(&self) -> String {
        let mut text = format!(
            "{}-bit fp, 4 slots, {} buckets",
            self.filter.fingerprint_bits(),
            grouped(self.filter.bucket_count())
        );
        if self.batched {
            text.push_str(&format!("; insert_batch / contains_batch, {} keys per call", self.batch));
        }
        text
    }

    fn memory_source(&self) -> &'static str {
        "CuckooFilter::memory_bytes()"
    }

    fn memory_bytes(&self) -> usize {
        self.filter.memory_bytes()
    }

    fn insert_all(&mut self, keys: &[K]) -> Vec<usize> {
        if !self.batched {
            return insert_each(keys, |key| self.filter.insert(key).is_ok());
        }
        let mut failed = Vec::new();
        for (c, chunk) in keys.chunks(self.batch).enumerate() {
            for (i, result) in self.filter.insert_batch(chunk).iter().enumerate() {
                if result.is_err() {
                    failed.push(c * self.batch + i);
                }
            }
        }
        failed
    }

    #[inline]
    fn contains(&self, key: &K) -> bool {
        self.filter.contains(key)
    }

    fn count_present(&self, keys: &[K]) -> usize {
        if !self.batched {
            let mut hits = 0;
            for key in keys {
                hits += black_box(self.filter.contains(key)) as usize;
            }
            return hits;
        }
        let mut hits = 0;
        for chunk in keys.chunks(self.batch) {
            let answers = black_box(self.filter.contains_batch(chunk));
            hits += answers.iter().filter(|&&present| present).count();
        }
        hits
    }

    fn remove_all(&mut self, keys: &[K]) -> Option<usize> {
        Some(remove_each(keys, |key| self.filter.remove(key)))
    }
}

/// bugu's `ConcurrentFilter` with 4-slot buckets, used from the one thread of the harness, one key
/// per call: what its locks and atomic words cost against [`Bugu`].
pub(super) struct BuguConcurrent {
    filter: ConcurrentFilter,
}

impl BuguConcurrent {
    /// `bits`-bit fingerprints.
    pub(super) fn with_bits(settings: &Settings, bits: u32) -> Self {
        let filter = CuckooFilter::builder()
            .capacity(settings.capacity)
            .fingerprint_bits(bits)
            .bucket_size(4)
            .build_concurrent()
            .expect("bugu accepts widths 4..=32 and any positive capacity");
        BuguConcurrent { filter }
    }
}

impl<K: Key> Contender<K> for BuguConcurrent {
    fn config(&self) -> String {
        format!(
            "{}-bit fp, 4 slots, {} buckets; ConcurrentFilter from one thread",
            self.filter.fingerprint_bits(),
            grouped(self.filter.bucket_count())
        )
    }

    fn memory_source(&self) -> &'static str {
        "ConcurrentFilter::memory_bytes() (table and stripes)"
    }

    fn memory_bytes(&self) -> usize {
        self.filter.memory_bytes()
    }

    fn insert_all(&mut self, keys: &[K]) -> Vec<usize> {
        insert_each(keys, |key| self.filter.insert(key).is_ok())
    }

    #[inline]
    fn contains(&self, key: &K) -> bool {
        self.filter.contains(key)
    }

    fn count_present(&self, keys: &[K]) -> usize {
        let mut hits = 0;
        for key in keys {
            hits += black_box(self.filter.contains(key)) as usize;
        }
        hits
    }

    fn remove_all(&mut self, keys: &[K]) -> Option<usize> {
        Some(remove_each(keys, |key| self.filter.remove(key)))
    }
}
