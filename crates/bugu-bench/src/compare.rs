//! A comparison run: which rows, which sizes, which keys — and the loop that measures each row
//! on the same workload.

use crate::contender::{Kind, PEERS, Settings};
use crate::report::Report;
use crate::run::{Measurement, measure_all};
use crate::timing::Clock;
use crate::workload::{Key, StringKeys, Workload, u64_keys};

/// The kind of keys a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyType {
    /// Seeded random 64-bit integers.
    U64,
    /// Strings `user_<id>`.
    String,
}

impl KeyType {
    /// The label used in reports and file names.
    pub fn label(&self) -> &'static str {
        match self {
            KeyType::U64 => "u64",
            KeyType::String => "string",
        }
    }
}

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Numbers of keys, one full comparison each.
    pub sizes: Vec<usize>,
    /// Key kind.
    pub key_type: KeyType,
    /// Timed repeats of each phase.
    pub repeats: usize,
    /// Target false-positive rate for the rate-configured filters.
    pub fpr: f64,
    /// Seed of keys and shuffles.
    pub seed: u64,
    /// Upper bound on the keys in each lookup mix (the mixes have min(keys, this) keys).
    pub max_lookups: usize,
    /// Keys per call of bugu's batch entry points.
    pub batch: usize,
    /// Rows, in table order.
    pub kinds: Vec<Kind>,
    /// The clock that times the loops.
    pub clock: Clock,
}

/// The default rows: bugu at each width in `bits`, bugu batched at each width in `batched`, bugu
/// semi-sorted at each width in `semi_sorted`, then every peer.
pub fn lineup(bits: &[u32], batched: &[u32], semi_sorted: &[u32]) -> Vec<Kind> {
    let mut kinds: Vec<Kind> = bits.iter().map(|&bits| Kind::Bugu { bits, batched: false }).collect();
    kinds.extend(batched.iter().map(|&bits| Kind::Bugu { bits, batched: true }));
    kinds.extend(semi_sorted.iter().map(|&bits| Kind::BuguSemiSorted { bits }));
    kinds.extend(PEERS);
    kinds
}

/// Keeps the rows whose name contains one of `names` (case-insensitive); all if `names` is empty.
pub fn select(kinds: Vec<Kind>, names: &[String]) -> Vec<Kind> {
    if names.is_empty() {
        return kinds;
    }
    kinds
        .into_iter()
        .filter(|kind| {
            let name = kind.name().to_lowercase();
            names.iter().any(|wanted| name.contains(&wanted.to_lowercase()))
        })
        .collect()
}

/// Measures every row at every size; progress goes to stderr.
pub fn run(options: &Options) -> Report {
    let load_at_start = crate::machine::load_average();
    let mut measurements = Vec::new();
    let mut sizes = options.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    for &keys in &sizes {
        let lookups = keys.min(options.max_lookups).max(1);
        eprintln!("== {keys} {} keys, {lookups} lookups per mix", options.key_type.label());
        match options.key_type {
            KeyType::U64 => {
                let present = u64_keys(options.seed, 0, keys);
                let absent = u64_keys(options.seed, keys as u64, lookups);
                let workload = Workload::new(present, &absent, lookups, options.seed);
                drop(absent);
                measure_size(options, keys, &workload, &mut measurements);
            }
            KeyType::String => {
                let present = StringKeys::new(0, keys);
                let absent = StringKeys::new(keys as u64, lookups);
                let plan = Workload::new(present.keys(), &absent.keys(), lookups, options.seed);
                // Each lookup sequence in its own buffer, in lookup order (see StringKeys::from_keys).
                let mixes = plan.lookups.each_ref().map(|mix| StringKeys::from_keys(mix));
                let workload =
                    Workload { present: plan.present, lookups: mixes.each_ref().map(StringKeys::keys) };
                measure_size(options, keys, &workload, &mut measurements);
            }
        }
    }
    Report {
        key_type: options.key_type.label().to_string(),
        repeats: options.repeats.max(1),
        fpr: options.fpr,
        machine: crate::machine::describe(),
        clock: options.clock,
        load: load_at_start.zip(crate::machine::load_average()),
        measurements,
    }
}

fn measure_size<K: Key>(options: &Options, keys: usize, workload: &Workload<K>, out: &mut Vec<Measurement>) {
    let settings = Settings { capacity: keys, fpr: options.fpr, batch: options.batch };
    for m in measure_all(&options.kinds, workload, &settings, options.repeats, options.clock) {
        eprintln!(
            "  {:<24} insert {:>7.1}  find {:>7.1} {:>7.1} {:>7.1}  delete {:>7}  fp {:.4}%  {:.2} bits/item  \
             failed {}  false neg. {}",
            m.name,
            m.insert_ns,
            m.lookup_ns[0],
            m.lookup_ns[1],
            m.lookup_ns[2],
            m.delete_ns.map_or_else(|| "n/a".to_string(), |ns| format!("{ns:.1}")),
            m.fp_rate() * 100.0,
            m.bits_per_item(),
            m.failed_inserts,
            m.total_false_negatives(),
        );
        out.push(m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lineup_and_selection() {
        let kinds = lineup(&[8, 12], &[12], &[13]);
        assert_eq!(kinds.len(), 4 + PEERS.len());
        let names: Vec<String> = select(kinds, &["bugu-12".to_string()]).iter().map(Kind::name).collect();
        assert_eq!(names, vec!["bugu-12", "bugu-12 batched"]);
        let names: Vec<String> =
            select(lineup(&[12], &[], &[13]), &["semi".to_string()]).iter().map(Kind::name).collect();
        assert_eq!(names, vec!["bugu-13 semi-sorted"]);
    }
}
