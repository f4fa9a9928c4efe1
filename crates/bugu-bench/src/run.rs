//! One measurement: a contender through the whole workload — insert all, look up each mix,
//! delete half — with every timed phase repeated and the median kept, and the correctness
//! checks (false negatives after inserting and after deleting) run outside the timed loops.

use crate::contender::{Kind, Settings};
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

/// Runs `kind` through `workload`, timing each phase `repeats` times (at least once).
pub fn measure<K: Key>(
    kind: Kind,
    workload: &Workload<K>,
    settings: &Settings,
    repeats: usize,
) -> Measurement {
    let repeats = repeats.max(1);
    let keys = &workload.present;

    // Insert: a fresh filter per repeat; the last one is kept for the other phases.
    let mut insert_times = Vec::with_capacity(repeats);
    let mut built = None;
    for _ in 0..repeats {
        drop(built.take()); // free the previous filter before allocating the next
        let mut filter = kind.build::<K>(settings);
        let (elapsed, failed) = time(|| filter.insert_all(keys));
        insert_times.push(elapsed);
        built = Some((filter, failed));
    }
    let (mut filter, failed) = built.expect("at least one repeat");
    let memory_bytes = filter.memory_bytes();

    // No false negatives: every key whose insert succeeded must be found.
    let (delete, keep) = split_for_delete(keys, &failed);
    let false_negatives = filter.count_absent(&delete) + filter.count_absent(&keep);

    let mut lookup_ns = [0.0; 3];
    let mut false_positives = 0;
    for (mix, (lookups, ns)) in workload.lookups.iter().zip(&mut lookup_ns).enumerate() {
        let mut times = Vec::with_capacity(repeats);
        let mut hits = 0;
        for _ in 0..repeats {
            let (elapsed, found) = time(|| filter.count_present(lookups));
            times.push(elapsed);
            hits = found;
        }
        *ns = ns_per_op(median(&times), lookups.len());
        if mix == 0 {
            false_positives = hits;
        }
    }

    // Delete half; between repeats the deleted half is inserted again (untimed) so that each
    // repeat deletes from the same full filter.
    let mut delete_times = Vec::with_capacity(repeats);
    let mut failed_deletes = None;
    for repeat in 0..repeats {
        let (elapsed, missing) = time(|| filter.remove_all(&delete));
        let Some(missing) = missing else { break };
        delete_times.push(elapsed);
        failed_deletes = Some(missing);
        if repeat + 1 < repeats {
            filter.insert_all(&delete);
        }
    }
    let delete_ns = (!delete_times.is_empty()).then(|| ns_per_op(median(&delete_times), delete.len()));
    let false_negatives_after_delete = failed_deletes.map(|_| filter.count_absent(&keep));

    Measurement {
        kind,
        name: kind.name(),
        config: filter.config(),
        memory_source: filter.memory_source(),
        keys: keys.len(),
        lookups: workload.lookup_count(),
        insert_ns: ns_per_op(median(&insert_times), keys.len()),
        lookup_ns,
        delete_ns,
        false_positives,
        memory_bytes,
        failed_inserts: failed.len(),
        false_negatives,
        false_negatives_after_delete,
        failed_deletes,
    }
}
