//! The filters under test: one [`Contender`] implementation per crate, each in its own module,
//! and [`Kind`], the list a run picks from.
//!
//! The timed loops live in the trait's provided methods. A provided method is compiled once per
//! implementing type, so inside it `self.contains` is a static, inlinable call: the harness pays
//! one dynamic call per *loop*, never one per key, and every filter is measured the same way.

use std::hint::black_box;

use crate::growth::profile::{TimedFill, bits_per_item, lower, nanos};
use crate::timing::Clock;
use crate::workload::Key;

mod atomic;
mod bloomfilter;
mod bugu;
mod cuckoofilter;
mod fastbloom;
mod qfilter;
mod scalable;
mod xorf;

/// Settings shared by every contender of one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Number of keys the filter is sized for (all of them get inserted).
    pub capacity: usize,
    /// Target false-positive rate for the filters configured by rate (Bloom filters, qfilter,
    /// scalable_cuckoo_filter, and bugu's rate-configured row).
    pub fpr: f64,
    /// Keys per call of bugu's batched entry points.
    pub batch: usize,
}

/// A filter under test, wrapped so that the harness drives every crate the same way.
pub trait Contender<K: Key> {
    /// How this instance is configured, in a few words (e.g. "12-bit fp, 4 slots, 263,160
    /// buckets").
    fn config(&self) -> String;

    /// Where [`memory_bytes`](Self::memory_bytes) comes from: the crate's own size report or our
    /// computation from its documented layout.
    fn memory_source(&self) -> &'static str;

    /// Bytes the filter's table occupies.
    fn memory_bytes(&self) -> usize;

    /// Inserts `keys` in order; returns the indices of the keys whose insert failed. Static
    /// filters build themselves here from all the keys.
    fn insert_all(&mut self, keys: &[K]) -> Vec<usize>;

    /// Whether `key` may be present.
    fn contains(&self, key: &K) -> bool;

    /// How many of `keys` are reported present: the timed lookup loop.
    fn count_present(&self, keys: &[K]) -> usize {
        let mut hits = 0;
        for key in keys {
            hits += black_box(self.contains(key)) as usize;
        }
        hits
    }

    /// How many of `keys` are reported absent: the (untimed) false-negative check.
    fn count_absent(&self, keys: &[K]) -> usize {
        keys.iter().filter(|key| !self.contains(key)).count()
    }

    /// Inserts `keys` one at a time, each insert timed on its own by `clock` and `least[i]`
    /// [`lower`]ed to the time of insert `i`, and after the `size`-th insert for each `size` in
    /// `sizes` (sorted, distinct) samples [`memory_bytes`](Self::memory_bytes) (outside the timed calls):
    /// one fill of the growth benchmark's per-insert figures ([`InsertProfile::from_fills`]).
    ///
    /// [`InsertProfile::from_fills`]: crate::growth::profile::InsertProfile::from_fills
    fn insert_timed(&mut self, keys: &[K], clock: Clock, sizes: &[usize], least: &mut [u32]) -> TimedFill {
        assert_eq!(least.len(), keys.len(), "one least time per key");
        let mut bits_at = Vec::with_capacity(sizes.len());
        let mut next = sizes.iter().copied().peekable();
        let (mut max_ns, mut failed) = (0, 0);
        for ((i, key), least) in keys.iter().enumerate().zip(least) {
            let (elapsed, refused) = clock.time(|| self.insert_all(std::slice::from_ref(key)));
            lower(least, elapsed);
            max_ns = max_ns.max(nanos(elapsed));
            failed += refused.len();
            if next.next_if_eq(&(i + 1)).is_some() {
                bits_at.push((i + 1, bits_per_item(self.memory_bytes(), i + 1)));
            }
        }
        TimedFill { max_ns, bits_at, failed }
    }

    /// Removes one copy of each key; returns how many were not found, or `None` if the filter
    /// cannot delete.
    fn remove_all(&mut self, _keys: &[K]) -> Option<usize> {
        None
    }
}

/// Inserts each key with `insert` (`false` = failed); the indices of the failures.
#[inline]
pub(crate) fn insert_each<K>(keys: &[K], mut insert: impl FnMut(&K) -> bool) -> Vec<usize> {
    let mut failed = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        if !black_box(insert(key)) {
            failed.push(i);
        }
    }
    failed
}

/// Removes each key with `remove` (`false` = not found); how many were not found.
#[inline]
pub(crate) fn remove_each<K>(keys: &[K], mut remove: impl FnMut(&K) -> bool) -> usize {
    let mut missing = 0;
    for key in keys {
        missing += !black_box(remove(key)) as usize;
    }
    missing
}

/// Which filter, and for bugu which configuration. Each builds a fresh, empty [`Contender`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// bugu with `bits`-bit fingerprints, 4-slot buckets; `batched` uses the batch entry points.
    Bugu {
        /// Fingerprint width.
        bits: u32,
        /// Whether inserts and lookups go through `insert_batch` / `contains_batch`.
        batched: bool,
    },
    /// bugu with `bits`-bit fingerprints in semi-sorted 4-slot buckets (one bit less per item).
    BuguSemiSorted {
        /// Fingerprint width.
        bits: u32,
    },
    /// bugu configured from the run's target false-positive rate (the seed table's cuckoo row).
    BuguRate,
    /// bugu's `ConcurrentFilter` with `bits`-bit fingerprints, 4-slot buckets, from one thread.
    BuguConcurrent {
        /// Fingerprint width.
        bits: u32,
    },
    /// `cuckoofilter` 0.5: 8-bit fingerprints, 4 slots, power-of-two buckets, SipHash.
    CuckooFilter,
    /// `scalable_cuckoo_filter` 0.5 at the target rate.
    Scalable,
    /// `atomic-cuckoo-filter` 0.3 with its defaults (16-bit fingerprints, 4 slots).
    Atomic,
    /// `qfilter` 0.3 (rank-select quotient filter) at the target rate.
    QFilter,
    /// `fastbloom` 0.17 at the target rate.
    FastBloom,
    /// `bloomfilter` 3 at the target rate.
    BloomFilter,
    /// `xorf` 0.13 `BinaryFuse8`: static, built from all keys, no deletion.
    Xorf,
}

/// The peers every comparison includes, in table order.
pub const PEERS: [Kind; 7] = [
    Kind::CuckooFilter,
    Kind::Scalable,
    Kind::Atomic,
    Kind::QFilter,
    Kind::FastBloom,
    Kind::BloomFilter,
    Kind::Xorf,
];

impl Kind {
    /// The row label.
    pub fn name(&self) -> String {
        match self {
            Kind::Bugu { bits, batched: false } => format!("bugu-{bits}"),
            Kind::Bugu { bits, batched: true } => format!("bugu-{bits} batched"),
            Kind::BuguSemiSorted { bits } => format!("bugu-{bits} semi-sorted"),
            Kind::BuguRate => "bugu".to_string(),
            Kind::BuguConcurrent { bits } => format!("bugu-{bits} concurrent"),
            Kind::CuckooFilter => "cuckoofilter".to_string(),
            Kind::Scalable => "scalable_cuckoo_filter".to_string(),
            Kind::Atomic => "atomic-cuckoo-filter".to_string(),
            Kind::QFilter => "qfilter".to_string(),
            Kind::FastBloom => "fastbloom".to_string(),
            Kind::BloomFilter => "bloomfilter".to_string(),
            Kind::Xorf => "xorf BinaryFuse8".to_string(),
        }
    }

    /// Whether this row is bugu (ratios are printed for bugu rows against the others).
    pub fn is_bugu(&self) -> bool {
        matches!(
            self,
            Kind::Bugu { .. } | Kind::BuguSemiSorted { .. } | Kind::BuguRate | Kind::BuguConcurrent { .. }
        )
    }

    /// Whether this row is another view of a filter already in the table (same memory and
    /// false-positive rate), so the space/accuracy chart skips it.
    pub fn is_variant(&self) -> bool {
        matches!(self, Kind::Bugu { batched: true, .. })
    }

    /// A fresh, empty filter of this kind for `settings`.
    pub fn build<'k, K: Key + 'k>(&self, settings: &Settings) -> Box<dyn Contender<K> + 'k> {
        match *self {
            Kind::Bugu { bits, batched } => Box::new(bugu::Bugu::with_bits(settings, bits, batched)),
            Kind::BuguSemiSorted { bits } => Box::new(bugu::Bugu::semi_sorted(settings, bits)),
            Kind::BuguRate => Box::new(bugu::Bugu::with_rate(settings)),
            Kind::BuguConcurrent { bits } => Box::new(bugu::BuguConcurrent::with_bits(settings, bits)),
            Kind::CuckooFilter => Box::new(cuckoofilter::CuckooFilter::new(settings)),
            Kind::Scalable => Box::new(scalable::Scalable::new(settings)),
            Kind::Atomic => Box::new(atomic::Atomic::new(settings)),
            Kind::QFilter => Box::new(qfilter::QFilter::new(settings)),
            Kind::FastBloom => Box::new(fastbloom::FastBloom::new(settings)),
            Kind::BloomFilter => Box::new(bloomfilter::BloomFilter::new(settings)),
            Kind::Xorf => Box::new(xorf::Xorf::new()),
        }
    }
}

/// `qfilter`'s resizeable filter, grown from `initial` items up to a declared `max` at `fpr` (the
/// growth benchmark's row; the comparison tables use the fixed-size [`Kind::QFilter`]).
pub fn qfilter_resizeable<'k, K: Key + 'k>(
    initial: usize,
    max: usize,
    fpr: f64,
) -> Box<dyn Contender<K> + 'k> {
    Box::new(qfilter::QFilter::resizeable(initial, max, fpr))
}

/// Percentage with enough digits for small rates ("0.4%", "0.05%").
pub(crate) fn percent(rate: f64) -> String {
    let p = rate * 100.0;
    let text = format!("{p:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}%")
}

/// Thousands separators, for bucket and slot counts in configuration notes.
pub(crate) fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting_helpers() {
        assert_eq!(percent(0.004), "0.4%");
        assert_eq!(percent(0.0005), "0.05%");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(grouped(999), "999");
    }
}
