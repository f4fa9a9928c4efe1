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
use crate::timing::{Clock, median, ns_per_op};
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
    /// The halves to delete and to keep, when inserts failed; otherwise the keys split in place.
    own_split: Option<(Vec<K>, Vec<K>)>,
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

/// The stored keys split into the half to delete and the half to keep. Lanes without failed
/// inserts (the usual case) split the workload's keys in place, as [`split_for_delete`] would
/// with no failure: at 10^8 keys a copy would cost a gigabyte, a copy per filter gigabytes.
fn split<'a, K>(own: &'a Option<(Vec<K>, Vec<K>)>, keys: &'a [K]) -> (&'a [K], &'a [K]) {
    match own {
        Some((delete, keep)) => (delete, keep),
        None => keys.split_at(keys.len() / 2),
    }
}

/// Runs every kind through `workload`, each timed phase `repeats` times (at least once),
/// interleaved across the kinds; one measurement per kind, in order.
pub fn measure_all<'k, K: Key + 'k>(
    kinds: &[Kind],
    workload: &Workload<K>,
    settings: &Settings,
    repeats: usize,
    clock: Clock,
) -> Vec<Measurement> {
    measure_with(kinds, |kind, settings| kind.build::<K>(settings), workload, settings, repeats, clock)
}

/// [`measure_all`] with the filters made by `build` (tests substitute faulty filters).
pub fn measure_with<'k, K: Key + 'k>(
    kinds: &[Kind],
    build: impl Fn(Kind, &Settings) -> Box<dyn Contender<K> + 'k>,
    workload: &Workload<K>,
    settings: &Settings,
    repeats: usize,
    clock: Clock,
) -> Vec<Measurement> {
    let repeats = repeats.max(1);
    let keys = &workload.present;
    let mut lanes: Vec<Lane<'k, K>> = kinds
        .iter()
        .map(|&kind| Lane {
            kind,
            filter: None,
            failed: Vec::new(),
            own_split: None,
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
            let mut filter = build(lane.kind, settings);
            let (elapsed, failed) = clock.time(|| filter.insert_all(keys));
            lane.insert_times.push(elapsed);
            lane.filter = Some(filter);
            lane.failed = failed;
        }
    }

    // No false negatives: every key whose insert succeeded must be found. The stored keys are
    // split into the half that gets deleted and the half that must survive the deletes.
    let mut false_negatives = Vec::with_capacity(lanes.len());
    for lane in &mut lanes {
        if !lane.failed.is_empty() {
            lane.own_split = Some(split_for_delete(keys, &lane.failed));
        }
        let (delete, keep) = split(&lane.own_split, keys);
        let filter = lane.filter();
        false_negatives.push(filter.count_absent(delete) + filter.count_absent(keep));
        lane.memory_bytes = filter.memory_bytes();
    }

    for repeat in 0..repeats {
        eprintln!("  lookups, repeat {}/{repeats}", repeat + 1);
        for (mix, lookups) in workload.lookups.iter().enumerate() {
            for lane in &mut lanes {
                let (elapsed, hits) = clock.time(|| lane.filter().count_present(lookups));
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
            let (delete, _) = split(&lane.own_split, keys);
            let filter = lane.filter.as_mut().expect("built in the insert phase");
            let (elapsed, missing) = clock.time(|| filter.remove_all(delete));
            let Some(missing) = missing else { continue };
            lane.delete_times.push(elapsed);
            lane.failed_deletes = Some(missing);
            if repeat + 1 < repeats {
                filter.insert_all(delete);
            }
        }
    }

    lanes
        .into_iter()
        .zip(false_negatives)
        .map(|(lane, false_negatives)| {
            let (delete, keep) = split(&lane.own_split, keys);
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
                delete_ns: (!lane.delete_times.is_empty()).then(|| ns(&lane.delete_times, delete.len())),
                false_positives: lane.false_positives,
                memory_bytes: lane.memory_bytes,
                failed_inserts: lane.failed.len(),
                false_negatives,
                false_negatives_after_delete: lane.failed_deletes.map(|_| filter.count_absent(keep)),
                failed_deletes: lane.failed_deletes,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::contender::insert_each;
    use crate::workload::u64_keys;

    /// A set that refuses every 10th insert and silently drops the 5th key it accepted.
    struct Leaky {
        set: HashSet<u64>,
        inserts: usize,
    }

    impl Contender<u64> for Leaky {
        fn config(&self) -> String {
            "leaky".to_string()
        }
        fn memory_source(&self) -> &'static str {
            "test"
        }
        fn memory_bytes(&self) -> usize {
            self.set.len() * 8
        }
        fn insert_all(&mut self, keys: &[u64]) -> Vec<usize> {
            insert_each(keys, |&key| {
                self.inserts += 1;
                match self.inserts {
                    n if n % 10 == 0 => false,
                    5 => true,
                    _ => {
                        self.set.insert(key);
                        true
                    }
                }
            })
        }
        fn contains(&self, key: &u64) -> bool {
            self.set.contains(key)
        }
        fn remove_all(&mut self, keys: &[u64]) -> Option<usize> {
            Some(keys.iter().filter(|key| !self.set.remove(key)).count())
        }
    }

    #[test]
    fn the_split_in_place_is_the_split_without_failures() {
        for n in [0, 1, 7, 10] {
            let keys = u64_keys(2, 0, n);
            let (delete, keep) = split_for_delete(&keys, &[]);
            assert_eq!(split(&None, &keys), (&delete[..], &keep[..]), "{n} keys");
        }
    }

    #[test]
    fn failed_inserts_and_false_negatives_are_counted() {
        let present = u64_keys(1, 0, 1000);
        let absent = u64_keys(1, 1000, 1000);
        let workload = Workload::new(present, &absent, 1000, 1);
        let settings = Settings { capacity: 1000, fpr: 0.01, batch: 16 };
        let build = |_: Kind, _: &Settings| -> Box<dyn Contender<u64>> {
            Box::new(Leaky { set: HashSet::new(), inserts: 0 })
        };
        // One repeat: the deleted half is never re-inserted, so the counts are exact.
        let m = measure_with(&[Kind::Xorf], build, &workload, &settings, 1, Clock::Wall).remove(0);
        assert_eq!(m.failed_inserts, 100);
        assert_eq!(m.false_negatives, 1, "the dropped 5th key");
        assert_eq!(m.false_positives, 0);
        // 900 stored keys, 450 deleted; the dropped key is in the deleted half (it came early).
        assert_eq!(m.failed_deletes, Some(1));
        assert_eq!(m.false_negatives_after_delete, Some(0));
        assert_eq!(m.total_false_negatives(), 1);
        assert_eq!(m.memory_bytes, 899 * 8);
    }
}
