//! Variants timed side by side in alternated rounds, in one process, and judged by their per-round
//! ratios to one of them (`lookup_kernels`, `insert_kernels`): the bookkeeping and the table.

use std::fmt::Write as _;

use crate::timing::median;

/// ns per operation of each variant in each round, and which variant the others are divided by.
#[derive(Debug, Clone)]
pub struct Rounds {
    names: &'static [&'static str],
    baseline: usize,
    /// `per_round[v][r]`: variant `v` in round `r`.
    per_round: Vec<Vec<f64>>,
}

impl Rounds {
    /// No rounds yet, for the variants `names`, ratios taken to `names[baseline]`.
    ///
    /// # Panics
    /// If `baseline` names no variant.
    pub fn new(names: &'static [&'static str], baseline: usize) -> Self {
        assert!(baseline < names.len(), "the baseline is one of the variants");
        Rounds { names, baseline, per_round: vec![Vec::new(); names.len()] }
    }

    /// The order in which round `round` runs the variants: each round starts with the next one, so
    /// that none always runs first, or after the same one.
    pub fn order(&self, round: usize) -> impl Iterator<Item = usize> + use<> {
        rotation(round, self.names.len())
    }

    /// Records variant `v`'s time in the current round.
    pub fn record(&mut self, v: usize, ns: f64) {
        self.per_round[v].push(ns);
    }

    /// The times of variant `v`, one per round, in round order.
    pub fn times(&self, v: usize) -> &[f64] {
        &self.per_round[v]
    }

    /// The median ns per operation of variant `v`.
    pub fn median_ns(&self, v: usize) -> f64 {
        median(&self.per_round[v])
    }

    /// The median time of the baseline.
    pub fn baseline_ns(&self) -> f64 {
        self.median_ns(self.baseline)
    }

    /// The per-round ratios of variant `v` to the baseline, sorted.
    pub fn ratios(&self, v: usize) -> Vec<f64> {
        let mut ratios: Vec<f64> =
            self.per_round[v].iter().zip(&self.per_round[self.baseline]).map(|(a, b)| a / b).collect();
        ratios.sort_by(f64::total_cmp);
        ratios
    }

    /// A markdown table: each variant's median ns per `operation`, the median of its per-round
    /// ratios to the baseline, and their quartiles. Rows can follow (same four columns).
    pub fn table(&self, operation: &str) -> String {
        let mut out = format!(
            "| variant | ns per {operation} | / {} | quartiles |\n|---|---:|---:|---|\n",
            self.names[self.baseline]
        );
        for (v, name) in self.names.iter().enumerate() {
            let ratios = self.ratios(v);
            let quartile = |q: usize| ratios[(ratios.len() - 1) * q / 4];
            let _ = writeln!(
                out,
                "| {name} | {:.1} | {:.3} | {:.3} - {:.3} |",
                self.median_ns(v),
                median(&ratios),
                quartile(1),
                quartile(3)
            );
        }
        out
    }
}

/// The indices `0..count` in the order round `round` runs them: each round starts one further on,
/// so that no contender always runs first, or after the same one, and a burst of load from
/// another process does not always hit the same one.
pub fn rotation(round: usize, count: usize) -> impl Iterator<Item = usize> {
    (0..count).map(move |k| (round + k) % count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_taken_round_by_round_and_the_order_rotates() {
        let mut rounds = Rounds::new(&["a", "b"], 1);
        assert_eq!(rounds.order(0).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(rounds.order(1).collect::<Vec<_>>(), [1, 0]);
        for (a, b) in [(10.0, 20.0), (30.0, 30.0), (8.0, 2.0)] {
            rounds.record(0, a);
            rounds.record(1, b);
        }
        assert_eq!(rounds.ratios(0), [0.5, 1.0, 4.0]);
        assert_eq!(rounds.ratios(1), [1.0, 1.0, 1.0]);
        assert_eq!((rounds.median_ns(0), rounds.baseline_ns()), (10.0, 20.0));
        let table = rounds.table("insert");
        assert!(table.starts_with("| variant | ns per insert | / b | quartiles |"), "{table}");
        assert!(table.contains("| a | 10.0 | 1.000 | 0.500 - 1.000 |"), "{table}");
    }
}
