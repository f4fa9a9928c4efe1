//! The rows of the `growth` benchmark: bugu's filters (pre-sized, the chain, the expanding
//! filter; one by one and batched) and the crates that grow, `qfilter` resizeable and
//! `scalable_cuckoo_filter`, each behind the harness's [`Contender`].

use std::hint::black_box;

use bugu::{CuckooFilter, ExpandingFilter, Filter, FilterMut, GrowableFilter};

use crate::contender::{Contender, Kind, Settings, qfilter_resizeable};
use crate::workload::Key;

/// What the rows are built from (the command line).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowSettings {
    /// Keys inserted: the pre-sized filter's capacity.
    pub keys: usize,
    /// Initial capacity of the growing filters.
    pub initial: usize,
    /// Target false-positive rate of every filter.
    pub fpr: f64,
    /// Declared maximum of the expanding filter and of qfilter.
    pub max_items: usize,
    /// Keys per call of the batched rows.
    pub batch: usize,
}

/// The rows, each tagged by a `Kind` the harness carries through (it only uses the tag to call
/// `build` and to label the row, which [`Row::label`] replaces). Each has a short, stable name
/// on the command line (`--skip chain,scalable`): [`Row::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Row {
    /// `CuckooFilter` sized for all the keys.
    #[value(name = "pre-sized")]
    PreSized,
    /// The same, through the batch entry points.
    #[value(name = "pre-sized-batched")]
    PreSizedBatched,
    /// `GrowableFilter`, the chain.
    #[value(name = "chain")]
    Growable,
    /// The chain, batched.
    #[value(name = "chain-batched")]
    GrowableBatched,
    /// `ExpandingFilter`, the one-table filter.
    #[value(name = "expanding")]
    Expanding,
    /// `ExpandingFilter`, batched.
    #[value(name = "expanding-batched")]
    ExpandingBatched,
    /// `qfilter` resizeable, with the expanding filter's declared maximum.
    #[value(name = "qfilter")]
    QFilter,
    /// `scalable_cuckoo_filter`.
    #[value(name = "scalable")]
    Scalable,
}

/// Every row, in table order.
pub const ROWS: [Row; 8] = [
    Row::PreSized,
    Row::PreSizedBatched,
    Row::Growable,
    Row::GrowableBatched,
    Row::Expanding,
    Row::ExpandingBatched,
    Row::QFilter,
    Row::Scalable,
];

impl Row {
    /// The harness's tag for the row.
    pub fn kind(self) -> Kind {
        match self {
            Row::PreSized => Kind::Bugu { bits: 0, batched: false },
            Row::PreSizedBatched => Kind::Bugu { bits: 0, batched: true },
            Row::Growable => Kind::Bugu { bits: 1, batched: false },
            Row::GrowableBatched => Kind::Bugu { bits: 1, batched: true },
            Row::Expanding => Kind::Bugu { bits: 2, batched: false },
            Row::ExpandingBatched => Kind::Bugu { bits: 2, batched: true },
            Row::QFilter => Kind::QFilter,
            Row::Scalable => Kind::Scalable,
        }
    }

    /// The row a tag stands for.
    pub fn of(kind: Kind) -> Row {
        ROWS.into_iter().find(|row| row.kind() == kind).expect("only the rows' kinds are measured")
    }

    /// Whether the row goes through the batch entry points.
    pub fn batched(self) -> bool {
        matches!(self, Row::PreSizedBatched | Row::GrowableBatched | Row::ExpandingBatched)
    }

    /// The row's short name on the command line (`pre-sized`, `chain`, `expanding-batched`, ...).
    /// The same names `--skip` parses (a test holds them together).
    pub fn name(self) -> &'static str {
        match self {
            Row::PreSized => "pre-sized",
            Row::PreSizedBatched => "pre-sized-batched",
            Row::Growable => "chain",
            Row::GrowableBatched => "chain-batched",
            Row::Expanding => "expanding",
            Row::ExpandingBatched => "expanding-batched",
            Row::QFilter => "qfilter",
            Row::Scalable => "scalable",
        }
    }

    /// The row label.
    pub fn label(self) -> &'static str {
        match self {
            Row::PreSized => "bugu CuckooFilter, sized for all keys",
            Row::PreSizedBatched => "bugu CuckooFilter, sized for all keys, batched",
            Row::Growable => "bugu GrowableFilter, grown",
            Row::GrowableBatched => "bugu GrowableFilter, grown, batched",
            Row::Expanding => "bugu ExpandingFilter, grown",
            Row::ExpandingBatched => "bugu ExpandingFilter, grown, batched",
            Row::QFilter => "qfilter 0.3 resizeable, grown",
            Row::Scalable => "scalable_cuckoo_filter 0.5, grown",
        }
    }

    /// A fresh, empty filter for the row.
    pub fn build<'k>(self, rows: &RowSettings) -> Box<dyn Contender<u64> + 'k> {
        let batch = self.batched().then_some(rows.batch);
        match self {
            Row::PreSized | Row::PreSizedBatched => Box::new(Bugu {
                filter: pre_sized(rows.keys, rows.fpr),
                batch,
                describe: |f: &CuckooFilter| {
                    format!("{}-bit fp, 4 slots, {} buckets", f.fingerprint_bits(), f.bucket_count())
                },
                memory: CuckooFilter::memory_bytes,
            }),
            Row::Growable | Row::GrowableBatched => Box::new(Bugu {
                filter: GrowableFilter::builder()
                    .initial_capacity(rows.initial)
                    .false_positive_rate(rows.fpr)
                    .build()
                    .expect("the rate is validated by the command line"),
                batch,
                describe: |f: &GrowableFilter| {
                    let widths: Vec<String> =
                        f.levels().iter().map(|level| level.fingerprint_bits().to_string()).collect();
                    format!("{} levels, fp bits {}", f.level_count(), widths.join("/"))
                },
                memory: GrowableFilter::memory_bytes,
            }),
            Row::Expanding | Row::ExpandingBatched => Box::new(Bugu {
                filter: expanding(rows.initial, rows.fpr, rows.max_items),
                batch,
                describe: |f: &ExpandingFilter| {
                    let stats = f.stats();
                    format!(
                        "{}-bit fp, {}-bit tails, level {}, {} twins, stash {}",
                        stats.fingerprint_bits, stats.tail_bits, stats.level, stats.twins, stats.stash
                    )
                },
                memory: ExpandingFilter::memory_bytes,
            }),
            Row::QFilter => qfilter_resizeable(rows.initial, rows.max_items, rows.fpr),
            // The harness's own scalable_cuckoo_filter contender, with the initial capacity as
            // its capacity hint.
            Row::Scalable => {
                Kind::Scalable.build(&Settings { capacity: rows.initial, fpr: rows.fpr, batch: rows.batch })
            }
        }
    }
}

/// A `CuckooFilter` pre-sized for `keys` at `fpr`.
pub fn pre_sized(keys: usize, fpr: f64) -> CuckooFilter {
    CuckooFilter::builder()
        .capacity(keys)
        .false_positive_rate(fpr)
        .build()
        .expect("the rate is validated by the command line")
}

/// An `ExpandingFilter` starting at `initial` items, declared maximum `max_items`.
pub fn expanding(initial: usize, fpr: f64, max_items: usize) -> ExpandingFilter {
    ExpandingFilter::builder()
        .initial_capacity(initial)
        .false_positive_rate(fpr)
        .max_items(max_items as u64)
        .build()
        .expect("the rate and maximum are validated by the command line")
}

/// A bugu filter (pre-sized or growable) driven one key at a time or in batches.
struct Bugu<F> {
    filter: F,
    batch: Option<usize>,
    describe: fn(&F) -> String,
    memory: fn(&F) -> usize,
}

impl<F: Filter + FilterMut, K: Key> Contender<K> for Bugu<F> {
    fn config(&self) -> String {
        let mut text = (self.describe)(&self.filter);
        if let Some(batch) = self.batch {
            text.push_str(&format!("; contains_batch / insert_batch, {batch} keys per call"));
        }
        text
    }

    fn memory_source(&self) -> &'static str {
        "memory_bytes()"
    }

    fn memory_bytes(&self) -> usize {
        (self.memory)(&self.filter)
    }

    fn insert_all(&mut self, keys: &[K]) -> Vec<usize> {
        let mut failed = Vec::new();
        match self.batch {
            None => {
                for (i, key) in keys.iter().enumerate() {
                    if self.filter.insert(key).is_err() {
                        failed.push(i);
                    }
                }
            }
            Some(batch) => {
                for (c, chunk) in keys.chunks(batch).enumerate() {
                    for (i, result) in self.filter.insert_batch(chunk).iter().enumerate() {
                        if result.is_err() {
                            failed.push(c * batch + i);
                        }
                    }
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
        match self.batch {
            None => keys.iter().map(|key| black_box(self.filter.contains(key)) as usize).sum(),
            Some(batch) => keys
                .chunks(batch)
                .map(|chunk| black_box(self.filter.contains_batch(chunk)).iter().filter(|&&hit| hit).count())
                .sum(),
        }
    }

    fn remove_all(&mut self, keys: &[K]) -> Option<usize> {
        Some(keys.iter().filter(|key| !self.filter.remove(*key)).count())
    }
}

#[cfg(test)]
mod tests {
    use clap::ValueEnum;

    use super::*;

    #[test]
    fn every_row_is_parsed_from_its_name() {
        for row in ROWS {
            assert_eq!(Row::from_str(row.name(), false), Ok(row), "{row:?}");
            assert_eq!(Row::of(row.kind()), row);
        }
        assert_eq!(Row::value_variants(), ROWS, "ROWS lists every row, in table order");
        assert_eq!(Row::from_str("chain", false), Ok(Row::Growable));
        assert!(Row::from_str("growable", false).is_err());
    }
}
