//! Fills to capacity taken apart: bugu's inserts against the C++ reference's insert, transcribed
//! into Rust ([`ReferenceFilter::add`]), filling tables of the same size in the same process.
//!
//! `vs_fastfilter` pairs two processes that run minutes apart, and on a shared host either side
//! moves by more than the margins judged. Here each round fills a fresh table with every variant,
//! one after the other, starting with the next variant each round; the report gives each
//! variant's median ns per insert and the median of its per-round ratios to the reference. The
//! variants, all over the same keys:
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

use crate::cli::Loads;
use crate::reference_cuckoo::ReferenceFilter;
use crate::report::rounds::Rounds;
use crate::timing::{Clock, ns_per_op};
use crate::workload::u64_keys;

/// What is timed.
pub const VARIANTS: [&str; 3] = ["bugu insert(&key)", "bugu insert_batch", "reference add"];
/// The variant the others are divided by.
pub const BASELINE: usize = 2;
/// Keys per `insert_batch` call, as in the `compare` harness.
pub const BATCH: usize = 256;

/// One size's fills.
#[derive(Debug, Clone)]
pub struct FillRun {
    pub keys: usize,
    pub bugu_bytes: usize,
    pub reference_bytes: usize,
    /// ns per insert of each variant in each round.
    pub rounds: Rounds,
}

/// Fills a fresh table of each variant with `keys` keys, `rounds` times, alternated.
///
/// # Panics
/// If `keys` or `rounds` is 0, or a filter refuses a key of the capacity it was sized for (bugu
/// never may; the reference's walk could, which would make its time meaningless).
pub fn measure(keys: usize, rounds: usize, seed: u64) -> FillRun {
    assert!(keys > 0 && rounds > 0, "something to measure");
    let items = u64_keys(seed, 0, keys);
    let mut times = Rounds::new(&VARIANTS, BASELINE);
    let (mut bugu_bytes, mut reference_bytes) = (0, 0);
    for round in 0..rounds {
        for variant in times.order(round) {
            let ns = match variant {
                0 | 1 => {
                    let mut filter = CuckooFilter::new(keys).expect("a filter for the keys");
                    let (elapsed, refused) = Clock::Wall.time(|| match variant {
                        0 => items.iter().filter(|key| filter.insert(*key).is_err()).count(),
                        _ => items
                            .chunks(BATCH)
                            .map(|chunk| filter.insert_batch(chunk).iter().filter(|r| r.is_err()).count())
                            .sum(),
                    });
                    assert_eq!(refused, 0, "bugu refused a key below its capacity");
                    bugu_bytes = black_box(&filter).memory_bytes();
                    ns_per_op(elapsed, keys)
                }
                _ => {
                    let mut filter = ReferenceFilter::empty(keys, seed);
                    let (elapsed, added) =
                        Clock::Wall.time(|| items.iter().filter(|&&key| filter.add(key)).count());
                    assert_eq!(added, keys, "the reference refused a key below its capacity");
                    reference_bytes = black_box(&filter).memory_bytes();
                    ns_per_op(elapsed, keys)
                }
            };
            times.record(variant, ns);
        }
    }
    FillRun { keys, bugu_bytes, reference_bytes, rounds: times }
}

/// The report of a run over several sizes: header, then per size the medians, the ratios and their
/// quartiles.
pub fn render(machine: &str, load: Loads, rounds: usize, runs: &[FillRun]) -> String {
    use crate::machine::load_text;
    use crate::report::mib;
    use std::fmt::Write as _;
    let mut out = String::from("# Fills to capacity: bugu against the reference's insert, in one process\n\n");
    let _ = writeln!(
        out,
        "Machine: {machine}. Load average (1, 5, 15 min) at the start: {}; at the end: {}.\n",
        load_text(&load.0),
        load_text(&load.1)
    );
    let _ = writeln!(
        out,
        "{rounds} rounds per size; each round fills a fresh table of every variant with the same \
         keys, starting with the next variant each round. Times are ns per insert by wall clock, \
         building the filter untimed: the median over the rounds. Ratios are to the reference's \
         insert, taken in each round: their median and quartiles. The variants are described in \
         `crates/bugu-bench/src/insert_kernels.rs`.\n"
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
        let report = render("a machine", (Some("0.1 0.2 0.3".into()), None), 3, &[run]);
        for name in VARIANTS {
            assert!(report.contains(&format!("| {name} | ")), "{report}");
        }
        assert!(report.contains("## 20000 keys") && report.contains("/ reference add"), "{report}");
    }
}
