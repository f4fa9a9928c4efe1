//! Reports of a comparison run: the markdown tables printed on stdout, CSV files and SVG charts.

use crate::contender::percent;
use crate::run::Measurement;
use crate::timing::Clock;

/// A size in MiB with one decimal, for report headers.
pub fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

/// Writes a rendered report to `path` (creating its folder), with the path in the error.
pub fn save(path: &std::path::Path, text: &str) -> Result<(), String> {
    csv::write(path, text).map_err(|error| format!("cannot write {}: {error}", path.display()))
}

pub mod charts;
pub mod csv;
pub mod markdown;
pub mod rounds;

/// A finished comparison run: the measurements at every size plus what the reader needs to know
/// to interpret them.
#[derive(Debug, Clone)]
pub struct Report {
    /// "u64" or "string".
    pub key_type: String,
    /// Timed repeats per phase (figures are medians).
    pub repeats: usize,
    /// Target rate of the rate-configured filters.
    pub fpr: f64,
    /// CPU model and count.
    pub machine: String,
    /// The clock that timed the loops.
    pub clock: Clock,
    /// Load averages at the start and the end of the run, when the system reports them.
    pub load: Option<(String, String)>,
    /// Every measurement, grouped by size in ascending order, rows in table order.
    pub measurements: Vec<Measurement>,
}

impl Report {
    /// The sizes measured, ascending.
    pub fn sizes(&self) -> Vec<usize> {
        let mut sizes: Vec<usize> = self.measurements.iter().map(|m| m.keys).collect();
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }

    /// The measurements at one size, in table order.
    pub fn at(&self, keys: usize) -> impl Iterator<Item = &Measurement> {
        self.measurements.iter().filter(move |m| m.keys == keys)
    }

    /// A line for every measurement with false negatives, failed inserts of a filter that must
    /// accept its capacity, or deletes of stored keys that found nothing.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        for m in &self.measurements {
            let fn_total = m.total_false_negatives();
            if fn_total > 0 {
                warnings.push(format!(
                    "WARNING: {} at {} keys has {} FALSE NEGATIVES ({} after inserting, {} after deleting \
                     half): stored keys reported absent",
                    m.name,
                    m.keys,
                    fn_total,
                    m.false_negatives,
                    m.false_negatives_after_delete.unwrap_or(0)
                ));
            }
            if m.failed_inserts > 0 {
                warnings.push(format!(
                    "warning: {} at {} keys: {} of {} inserts failed in a filter sized for {} keys",
                    m.name, m.keys, m.failed_inserts, m.keys, m.keys
                ));
            }
            if let Some(failed) = m.failed_deletes.filter(|&failed| failed > 0) {
                warnings.push(format!(
                    "warning: {} at {} keys: {failed} deletes of stored keys found nothing",
                    m.name, m.keys
                ));
            }
        }
        warnings
    }

    /// What the figures mean, for the top of every output.
    pub fn preamble(&self) -> Vec<String> {
        let lookups: Vec<String> = self
            .sizes()
            .iter()
            .filter_map(|&keys| self.at(keys).next().map(|m| format!("{} at {} keys", m.lookups, keys)))
            .collect();
        let load = self.load.as_ref().map_or_else(String::new, |(start, end)| {
            format!(" Load average (1, 5, 15 min) at the start: {start}; at the end: {end}.")
        });
        vec![
            format!("Machine: {}.{load} Keys: {}.", self.machine, self.key_type),
            format!(
                "Times are ns per operation by {}, the median of {} timed repeat(s) of each whole phase \
                 (interleaved across the filters); lookups per mix: {}.",
                self.clock.describe(),
                self.repeats,
                lookups.join(", ")
            ),
            format!(
                "qfilter, fastbloom, bloomfilter and scalable_cuckoo_filter are configured for a target \
                 false-positive rate of {}; the others have fixed widths (see configurations).",
                percent(self.fpr)
            ),
            "FP rate: measured on the 0%-present lookups. bits/item: the filter's memory x 8 / keys inserted. \
             false neg.: stored keys reported absent after inserting all and after deleting half (must be 0)."
                .to_string(),
        ]
    }
}
