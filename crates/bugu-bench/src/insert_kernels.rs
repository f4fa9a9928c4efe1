//! Fills to capacity taken apart: bugu's inserts against the C++ reference's insert, transcribed
//! into Rust ([`ReferenceFilter::add`]), filling tables of the same size in the same process.
//!
//! `vs_fastfilter` pairs two processes that run minutes apart, and on a shared host either side
//! moves by more than the margins judged. Here each round fills a fresh table of every variant,
//! in lockstep: the keys are cut into 100 chunks, and each chunk goes into every variant in turn
//! (starting with the next variant each chunk), so that the three fills share the host's noise
//! as it comes. The report gives each variant's median ns per insert, the median of its
//! per-round ratios to the reference, and the fill's profile: ns per insert by twentieth of the
//! keys. The variants, all over the same keys:
//!
//! - `bugu insert(&key)`: the `compare` harness's one-by-one row;
//! - `bugu insert_batch`: its batched row (256 keys per call);
//! - `reference add`: FastFilter's `CuckooFilterStable<uint64_t, 12>::Add`, one by one.
//!
//! As in the C++ benchmark, building a filter is not timed. bugu's table comes zeroed from the
//! allocator and its pages are faulted in by the inserts, inside the timed fill; the reference's
//! zeros are written when it is built (the C++ constructor's `memset`), outside it.

use std::hint::black_box;

use bugu::{CuckooFilter, FilterMut};

use crate::machine::{Loads, context};
use crate::reference_cuckoo::ReferenceFilter;
use crate::report::rounds::Rounds;
use crate::timing::{Clock, median};
use crate::workload::u64_keys;

/// What is timed.
pub const VARIANTS: [&str; 3] = ["bugu insert(&key)", "bugu insert_batch", "reference add"];
/// The variant the others are divided by.
pub const BASELINE: usize = 2;
/// Keys per `insert_batch` call, as in the `compare` harness.
pub const BATCH: usize = 256;

/// Chunks each fill is cut into.
const CHUNKS: usize = 100;
/// Parts of the fill the profile reports: twentieths of the keys.
pub const SEGMENTS: usize = 20;

/// One size's fills.
#[derive(Debug, Clone)]
pub struct FillRun {
    pub keys: usize,
    pub bugu_bytes: usize,
    pub reference_bytes: usize,
    /// ns per insert of each variant in each round, over the whole fill.
    pub rounds: Rounds,
    /// `profile[v][s]`: variant `v`'s ns per insert in segment `s` of the fill, one per round.
    pub profile: Vec<Vec<Vec<f64>>>,
}

/// The three filters of a round, filled in lockstep.
struct Fills {
    one_by_one: CuckooFilter,
    batched: CuckooFilter,
    reference: ReferenceFilter,
}

impl Fills {
    fn new(keys: usize, seed: u64) -> Self {
        let bugu = || CuckooFilter::new(keys).expect("a filter for the keys");
        Fills { one_by_one: bugu(), batched: bugu(), reference: ReferenceFilter::empty(keys, seed) }
    }

    /// Inserts `chunk` into variant `v`'s filter; ns taken.
    ///
    /// # Panics
    /// If a filter refuses a key of the capacity it was sized for (bugu never may; the
    /// reference's walk could, which would make its time meaningless).
    fn insert(&mut self, v: usize, chunk: &[u64]) -> f64 {
        let (elapsed, refused) = Clock::Wall.time(|| match v {
            0 => chunk.iter().filter(|key| self.one_by_one.insert(*key).is_err()).count(),
            1 => chunk
                .chunks(BATCH)
                .map(|batch| self.batched.insert_batch(batch).iter().filter(|r| r.is_err()).count())
                .sum(),
            _ => chunk.iter().filter(|&&key| !self.reference.add(key)).count(),
        });
        assert_eq!(refused, 0, "{} refused a key below its capacity", VARIANTS[v]);
        elapsed.as_nanos() as f64
    }
}

/// Fills a fresh table of each variant with `keys` keys, in lockstep, `rounds` times.
///
/// # Panics
/// If `keys` or `rounds` is 0, or a filter refuses a key below its capacity: bugu never may,
/// and the reference's walk could, which would make its time meaningless.
pub fn measure(keys: usize, rounds: usize, seed: u64) -> FillRun {
    assert!(keys > 0 && rounds > 0, "something to measure");
    let items = u64_keys(seed, 0, keys);
    let chunk = keys.div_ceil(CHUNKS);
    let mut times = Rounds::new(&VARIANTS, BASELINE);
    let mut profile = vec![vec![Vec::new(); SEGMENTS]; VARIANTS.len()];
    let (mut bugu_bytes, mut reference_bytes) = (0, 0);
    for round in 0..rounds {
        let mut fills = Fills::new(keys, seed);
        let mut segment_ns = [[0.0; SEGMENTS]; VARIANTS.len()];
        let mut segment_keys = [0usize; SEGMENTS];
        for (c, part) in items.chunks(chunk).enumerate() {
            let segment = c * chunk * SEGMENTS / keys;
            segment_keys[segment] += part.len();
            for v in times.order(round + c) {
                segment_ns[v][segment] += fills.insert(v, part);
            }
        }
        for (v, ns) in segment_ns.iter().enumerate() {
            times.record(v, ns.iter().sum::<f64>() / keys as f64);
            for (s, &inserted) in segment_keys.iter().enumerate().filter(|&(_, &inserted)| inserted > 0) {
                profile[v][s].push(ns[s] / inserted as f64);
            }
        }
        bugu_bytes = black_box(&fills.one_by_one).memory_bytes();
        reference_bytes = black_box(&fills.reference).memory_bytes();
    }
    FillRun { keys, bugu_bytes, reference_bytes, rounds: times, profile }
}

/// The report of a run over several sizes: header, then per size the medians, the ratios and their
/// quartiles.
pub fn render(machine: &str, load: Loads, rounds: usize, runs: &[FillRun]) -> String {
    use crate::report::mib;
    use std::fmt::Write as _;
    let mut out =
        String::from("# Fills to capacity: bugu against the reference's insert, in one process\n\n");
    let _ = writeln!(out, "{}.\n", context(machine, &load));
    let _ = writeln!(
        out,
        "{rounds} rounds per size; each round fills a fresh table of every variant with the same \
         keys, in lockstep: {CHUNKS} chunks of keys, each inserted into every variant in turn. \
         Times are ns per insert by wall clock, building the filter untimed: the median over the \
         rounds. Ratios are to the reference's insert, taken in each round: their median and \
         quartiles. The variants are described in `crates/bugu-bench/src/insert_kernels.rs`.\n"
    );
    for run in runs {
        let _ = writeln!(
            out,
            "## {} keys\n\nTables: bugu {}, reference {}.\n",
            run.keys,
            mib(run.bugu_bytes),
            mib(run.reference_bytes)
        );
        out += &run.rounds.table("insert");
        out += "\nThe fill by twentieths of the keys, ns per insert (medians over the rounds):\n\n";
        out += "| keys inserted |";
        for name in VARIANTS {
            let _ = write!(out, " {name} |");
        }
        out += "\n|---|";
        out += &"---:|".repeat(VARIANTS.len());
        out.push('\n');
        for s in 0..SEGMENTS {
            let _ = write!(out, "| {}-{}% |", s * 100 / SEGMENTS, (s + 1) * 100 / SEGMENTS);
            for v in 0..VARIANTS.len() {
                match run.profile[v][s].is_empty() {
                    true => out += " |",
                    false => {
                        let _ = write!(out, " {:.0} |", median(&run.profile[v][s]));
                    }
                }
            }
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_run_fills_every_variant_in_every_round() {
        let run = measure(20_000, 3, 7);
        assert!((0..VARIANTS.len()).all(|v| {
            let times = run.rounds.times(v);
            times.len() == 3 && times.iter().all(|ns| ns.is_finite() && *ns > 0.0)
        }));
        assert!(run.rounds.ratios(BASELINE).iter().all(|&r| r == 1.0));
        assert!(run.bugu_bytes >= 20_000 * 12 / 8 && run.reference_bytes >= 20_000 * 12 / 8);
        // Every twentieth of every fill, in every round.
        assert!(run.profile.iter().all(|segments| segments.iter().all(|times| times.len() == 3)));
        let report = render("a machine", (Some("0.1 0.2 0.3".into()), None), 3, &[run]);
        for name in VARIANTS {
            assert!(report.contains(&format!("| {name} | ")), "{report}");
        }
        assert!(report.contains("## 20000 keys") && report.contains("/ reference add"), "{report}");
        assert!(report.contains("| 95-100% |") && !report.contains("| |"), "{report}");
    }
}
