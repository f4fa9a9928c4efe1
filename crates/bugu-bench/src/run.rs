//! Measuring: every contender through the whole workload — insert all, look up each mix, delete
//! half — with each timed phase repeated and the median kept, and the correctness checks (false
//! negatives after inserting and after deleting) run outside the timed loops.
//!
//! Repeats are interleaved: repeat 1 of a phase runs on every filter, then repeat 2 on every
//! filter, and so on. On a shared machine a burst of load from another process then hits one
//! sample of each filter instead of all samples of one, so the medians — and bugu's ratios
//! against the peers — are measured under the same conditions.

use std::time::Duration;

use crate::contender::{Contender, Kind, Settings};
use crate::timing::{median, ns_per_op, time};
use crate::workload::{Key, Workload, split_for_delete};

/// What one contender measured at one size.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// Which filter.
    pub kind: Kind,
    /// Row label ([`Kind::name`]).
    pub name: String,
    /// The instance's configuration, in a few words.
    pub config: String,
    /// Where the memory figure comes from.
    pub memory_source: &'static str,
    /// Keys inserted.
    pub keys: usize,
    /// Keys in each lookup mix.
    pub lookups: usize,
    /// Median ns per insert (for static filters: construction time per key).
    pub insert_ns: f64,
    /// Median ns per lookup for the 0%, 50% and 100% present mixes.
    pub lookup_ns: [f64; 3],
    /// Median ns per delete; `None` if the filter cannot delete.
    pub delete_ns: Option<f64>,
    /// Positive answers on the 0%-present mix.
    pub false_positives: usize,
    /// Bytes of the filter after all inserts.
    pub memory_bytes: usize,
    /// Inserts that reported failure.
    pub failed_inserts: usize,
    /// Stored keys reported absent after all inserts.
    pub false_negatives: usize,
    /// Kept keys reported absent after deleting the other half; `None` without deletion.
    pub false_negatives_after_delete: Option<usize>,
    /// Deletes of stored keys that found nothing; `None` without deletion.
    pub failed_deletes: Option<usize>,
}

impl Measurement {
    /// Measured false-positive rate: positives on the 0%-present mix over its length.
    pub fn fp_rate(&self) -> f64 {
        self.false_positives as f64 / self.lookups.max(1) as f64
    }

    /// Bits of memory per inserted key.
    pub fn bits_per_item(&self) -> f64 {
        self.memory_bytes as f64 * 8.0 / self.keys.max(1) as f64
    }

    /// All false negatives: after inserting plus after deleting. Must be 0.
    pub fn total_false_negatives(&self) -> usize {
        self.false_negatives + self.false_negatives_after_delete.unwrap_or(0)
    }
}

/// One contender's state while the phases run.
struct Lane<'k, K> {
    kind: Kind,
    filter: Option<Box<dyn Contender<K> + 'k>>,
    failed: Vec<usize>,
    delete: Vec<K>,
    keep: Vec<K>,
    insert_times: Vec<Duration>,
    lookup_times: [Vec<Duration>; 3],
    delete_times: Vec<Duration>,
    false_positives: usize,
    memory_bytes: usize,
    failed_deletes: Option<usize>,
}

impl<K> Lane<'_, K> {
    fn filter(&self) -> &(dyn Contender<K> + '_) {
        self.filter.as_deref().expect("built in the insert phase")
    }
}

/// Runs every kind through `workload`, each timed phase `repeats` times (at least once),
/// interleaved across the kinds; one measurement per kind, in order.
pub fn measure_all<'k, K: Key + 'k>(
    kinds: &[Kind],
    workload: &Workload<K>,
    settings: &Settings,
    repeats: usize,
) -> Vec<Measurement> {
    let repeats = repeats.max(1);
    let keys = &workload.present;
    let mut lanes: Vec<Lane<'k, K>> = kinds
        .iter()
        .map(|&kind| Lane {
            kind,
            filter: None,
            failed: Vec::new(),
            delete: Vec::new(),
            keep: Vec::new(),
            insert_times: Vec::with_capacity(repeats),
            lookup_times: Default::default(),
            delete_times: Vec::with_capacity(repeats),
            false_positives: 0,
            memory_bytes: 0,
            failed_deletes: None,
        })
        .collect();

    // Insert: a fresh filter per repeat; the last one is kept for the other phases.
    for repeat in 0..repeats {
        eprintln!("  insert, repeat {}/{repeats}", repeat + 1);
        for lane in &mut lanes {
            drop(lane.filter.take()); // free the previous filter before allocating the next
            let mut filter = lane.kind.build::<K>(settings);
            let (elapsed, failed) = time(|| filter.insert_all(keys));
            lane.insert_times.push(elapsed);
            lane.filter = Some(filter);
            lane.failed = failed;
        }
    }

    // No false negatives: every key whose insert succeeded must be found. The stored keys are
    // split into the half that gets deleted and the half that must survive the deletes.
    let mut false_negatives = Vec::with_capacity(lanes.len());
    for lane in &mut lanes {
        (lane.delete, lane.keep) = split_for_delete(keys, &lane.failed);
        let filter = lane.filter();
        false_negatives.push(filter.count_absent(&lane.delete) + filter.count_absent(&lane.keep));
        lane.memory_bytes = filter.memory_bytes();
    }

    for repeat in 0..repeats {
        eprintln!("  lookups, repeat {}/{repeats}", repeat + 1);
        for (mix, lookups) in workload.lookups.iter().enumerate() {
            for lane in &mut lanes {
                let (elapsed, hits) = time(|| lane.filter().count_present(lookups));
                lane.lookup_times[mix].push(elapsed);
                if mix == 0 {
                    lane.false_positives = hits;
                }
            }
        }
    }

    // Delete half; between repeats the deleted half is inserted again (untimed) so that each
    // repeat deletes from the same full filter.
    for repeat in 0..repeats {
        eprintln!("  delete, repeat {}/{repeats}", repeat + 1);
        for lane in &mut lanes {
            let filter = lane.filter.as_mut().expect("built in the insert phase");
            let (elapsed, missing) = time(|| filter.remove_all(&lane.delete));
            let Some(missing) = missing else { continue };
            lane.delete_times.push(elapsed);
            lane.failed_deletes = Some(missing);
            if repeat + 1 < repeats {
                filter.insert_all(&lane.delete);
            }
        }
    }

    lanes
        .into_iter()
        .zip(false_negatives)
        .map(|(lane, false_negatives)| {
            let filter = lane.filter();
            let ns = |times: &[Duration], ops: usize| ns_per_op(median(times), ops);
            Measurement {
                kind: lane.kind,
                name: lane.kind.name(),
                config: filter.config(),
                memory_source: filter.memory_source(),
                keys: keys.len(),
                lookups: workload.lookup_count(),
                insert_ns: ns(&lane.insert_times, keys.len()),
                lookup_ns: [0, 1, 2].map(|mix| ns(&lane.lookup_times[mix], workload.lookups[mix].len())),
                delete_ns: (!lane.delete_times.is_empty()).then(|| ns(&lane.delete_times, lane.delete.len())),
                false_positives: lane.false_positives,
                memory_bytes: lane.memory_bytes,
                failed_inserts: lane.failed.len(),
                false_negatives,
                false_negatives_after_delete: lane.failed_deletes.map(|_| filter.count_absent(&lane.keep)),
                failed_deletes: lane.failed_deletes,
            }
        })
        .collect()
}
