//! bugu side by side with the C++ reference (see [`fastfilter_cpp`]): the figures of each
//! alternated round, their medians over the rounds and the ratios between them (with a verdict
//! for each ratio a `--target` names), rendered as markdown.
//!
//! Two of the C++ rows are context: VQF and the blocked Bloom filter are not what bugu is
//! compared with by default, but their figures come from the same run and bugu-12's ratios to
//! them are printed under names a `--target` can use.
//!
//! The run itself — which process goes when — is the `vs_fastfilter` binary's; this module holds
//! what it measured and how it is reported.

use std::fmt::Write as _;

use crate::contender::grouped;
use crate::fastfilter_cpp;
use crate::memory_floor::{self, Floor};
use crate::run::Measurement;
use crate::targets::{self, RatioRow, Target};
use crate::timing::median;

/// The figures compared for one filter in one round; times are ns per key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    /// ns per insert.
    pub insert_ns: f64,
    /// ns per lookup, none of the keys present.
    pub find0_ns: f64,
    /// ns per lookup, all of the keys present.
    pub find100_ns: f64,
    /// Bits of memory per key.
    pub bits_per_item: f64,
    /// Measured false-positive rate, percent.
    pub fp_percent: f64,
}

impl Figures {
    /// From a row of the C++ benchmark (insert = its `add` column).
    pub fn from_cpp(row: &fastfilter_cpp::Row) -> Self {
        Figures {
            insert_ns: row.add_ns,
            find0_ns: row.find_ns[0],
            find100_ns: row.find_ns[4],
            bits_per_item: row.bits_per_item,
            fp_percent: row.fp_percent,
        }
    }

    /// From one of bugu's measurements.
    pub fn from_bugu(m: &Measurement) -> Self {
        Figures {
            insert_ns: m.insert_ns,
            find0_ns: m.lookup_ns[0],
            find100_ns: m.lookup_ns[2],
            bits_per_item: m.bits_per_item(),
            fp_percent: m.fp_rate() * 100.0,
        }
    }

    fn median(all: &[Figures]) -> Figures {
        let of = |field: fn(&Figures) -> f64| median(&all.iter().map(field).collect::<Vec<_>>());
        Figures {
            insert_ns: of(|f| f.insert_ns),
            find0_ns: of(|f| f.find0_ns),
            find100_ns: of(|f| f.find100_ns),
            bits_per_item: of(|f| f.bits_per_item),
            fp_percent: of(|f| f.fp_percent),
        }
    }
}

/// Every filter of one round (or the medians over the rounds), and the memory floor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lineup {
    /// C++ `Cuckoo12`.
    pub cuckoo12: Figures,
    /// C++ `CuckooSemiSort13`.
    pub semi_sort13: Figures,
    /// bugu, 12-bit fingerprints, one key per call.
    pub bugu12: Figures,
    /// bugu, 12-bit fingerprints, `insert_batch` / `contains_batch`.
    pub bugu12_batched: Figures,
    /// bugu, 13-bit fingerprints in semi-sorted buckets.
    pub bugu13_semi_sorted: Figures,
    /// bugu's `ConcurrentFilter`, 12-bit fingerprints, from one thread, one key per call.
    pub bugu12_concurrent: Figures,
    /// C++ `VQF` (context).
    pub vqf: Figures,
    /// C++ `BlockedBloom` (context).
    pub blocked_bloom: Figures,
    /// ns per independent random line read from a buffer the size of the bugu-12 table.
    pub floor_ns_per_line: f64,
    /// ns per random line read from the same buffer, the line a window ahead prefetched.
    pub prefetched_floor_ns_per_line: f64,
}

impl Lineup {
    /// The filters with their row labels, in table order.
    pub fn rows(&self) -> [(&'static str, &Figures); 8] {
        [
            ("C++ Cuckoo12", &self.cuckoo12),
            ("C++ CuckooSemiSort13", &self.semi_sort13),
            ("bugu-12", &self.bugu12),
            ("bugu-12 batched", &self.bugu12_batched),
            ("bugu-13 semi-sorted", &self.bugu13_semi_sorted),
            ("bugu-12 concurrent, 1 thread", &self.bugu12_concurrent),
            ("C++ VQF (context)", &self.vqf),
            ("C++ BlockedBloom (context)", &self.blocked_bloom),
        ]
    }

    /// The field-wise medians over `rounds` (not empty).
    fn median(rounds: &[Lineup]) -> Lineup {
        let of = |pick: fn(&Lineup) -> Figures| Figures::median(&rounds.iter().map(pick).collect::<Vec<_>>());
        Lineup {
            cuckoo12: of(|l| l.cuckoo12),
            semi_sort13: of(|l| l.semi_sort13),
            bugu12: of(|l| l.bugu12),
            bugu12_batched: of(|l| l.bugu12_batched),
            bugu13_semi_sorted: of(|l| l.bugu13_semi_sorted),
            bugu12_concurrent: of(|l| l.bugu12_concurrent),
            vqf: of(|l| l.vqf),
            blocked_bloom: of(|l| l.blocked_bloom),
            floor_ns_per_line: median(&rounds.iter().map(|l| l.floor_ns_per_line).collect::<Vec<_>>()),
            prefetched_floor_ns_per_line: median(
                &rounds.iter().map(|l| l.prefetched_floor_ns_per_line).collect::<Vec<_>>(),
            ),
        }
    }
}

/// One alternated round: the C++ benchmark, then bugu, then the memory floor.
#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    /// What each filter measured, and the floor.
    pub lineup: Lineup,
    /// The memory floor's measurement in full.
    pub floor: Floor,
    /// Load averages (1, 5, 15 min) before the C++ benchmark started and after the floor.
    pub load: (Option<String>, Option<String>),
    /// The harness's warnings about bugu's rows (false negatives, failed inserts).
    pub warnings: Vec<String>,
}

/// Every round at one number of keys.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeRun {
    /// Keys inserted.
    pub keys: usize,
    /// Keys in each lookup mix, on both sides.
    pub lookups: usize,
    /// The rounds, in the order they ran.
    pub rounds: Vec<Round>,
}

/// A whole run, as far as it got.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// CPU model and count.
    pub machine: String,
    /// Load averages at the start and at the end of the run.
    pub load: (Option<String>, Option<String>),
    /// The checkout of fastfilter_cpp, as given.
    pub checkout: String,
    /// Its commit, if git could tell.
    pub commit: Option<String>,
    /// Rounds asked for per size.
    pub rounds: usize,
    /// What named ratios must be; the report shows their verdicts.
    pub targets: Vec<Target>,
    /// The sizes measured so far, in order.
    pub sizes: Vec<SizeRun>,
}

/// A ratio of two figures of a lineup, under the short name a `--target` refers to.
#[derive(Debug, Clone, Copy)]
pub struct Ratio {
    /// The short name.
    pub name: &'static str,
    /// What is divided by what, in words.
    pub label: &'static str,
    /// Numerator and denominator from a lineup.
    pub parts: fn(&Lineup) -> (f64, f64),
}

impl Ratio {
    /// The ratio in one lineup.
    pub fn of(&self, lineup: &Lineup) -> f64 {
        let (numerator, denominator) = (self.parts)(lineup);
        numerator / denominator
    }
}

/// The ratios the report prints, in report order: bugu's rows against the C++ filters they
/// match, the batched lookups against the memory floors (two line reads per lookup: the plain
/// loop's, then the prefetched loop's), the concurrent filter from one thread against bugu-12
/// (the same table, without locks), then bugu-12 one key per call against the context rows.
pub fn ratios() -> Vec<Ratio> {
    let ratio = |name, label, parts| Ratio { name, label, parts };
    vec![
        ratio("find0-12", "bugu-12 find 0% / C++ Cuckoo12 find 0%", |l| {
            (l.bugu12.find0_ns, l.cuckoo12.find0_ns)
        }),
        ratio("find100-12", "bugu-12 find 100% / C++ Cuckoo12 find 100%", |l| {
            (l.bugu12.find100_ns, l.cuckoo12.find100_ns)
        }),
        ratio("find0-13", "bugu-13 semi-sorted find 0% / C++ CuckooSemiSort13 find 0%", |l| {
            (l.bugu13_semi_sorted.find0_ns, l.semi_sort13.find0_ns)
        }),
        ratio("find100-13", "bugu-13 semi-sorted find 100% / C++ CuckooSemiSort13 find 100%", |l| {
            (l.bugu13_semi_sorted.find100_ns, l.semi_sort13.find100_ns)
        }),
        ratio("insert-13", "bugu-13 semi-sorted insert / C++ CuckooSemiSort13 insert", |l| {
            (l.bugu13_semi_sorted.insert_ns, l.semi_sort13.insert_ns)
        }),
        ratio("insert-12", "bugu-12 insert / C++ Cuckoo12 insert", |l| {
            (l.bugu12.insert_ns, l.cuckoo12.insert_ns)
        }),
        ratio("batch-insert-12", "bugu-12 batched insert / C++ Cuckoo12 insert", |l| {
            (l.bugu12_batched.insert_ns, l.cuckoo12.insert_ns)
        }),
        ratio("batch-find0-12", "bugu-12 batched find 0% / C++ Cuckoo12 find 0%", |l| {
            (l.bugu12_batched.find0_ns, l.cuckoo12.find0_ns)
        }),
        ratio("batch-find100-12", "bugu-12 batched find 100% / C++ Cuckoo12 find 100%", |l| {
            (l.bugu12_batched.find100_ns, l.cuckoo12.find100_ns)
        }),
        ratio("batch-find0-floor", "bugu-12 batched find 0% / (2 x memory floor per line)", |l| {
            (l.bugu12_batched.find0_ns, 2.0 * l.floor_ns_per_line)
        }),
        ratio("batch-find100-floor", "bugu-12 batched find 100% / (2 x memory floor per line)", |l| {
            (l.bugu12_batched.find100_ns, 2.0 * l.floor_ns_per_line)
        }),
        ratio(
            "batch-find0-prefetched-floor",
            "bugu-12 batched find 0% / (2 x prefetched memory floor per line)",
            |l| (l.bugu12_batched.find0_ns, 2.0 * l.prefetched_floor_ns_per_line),
        ),
        ratio(
            "batch-find100-prefetched-floor",
            "bugu-12 batched find 100% / (2 x prefetched memory floor per line)",
            |l| (l.bugu12_batched.find100_ns, 2.0 * l.prefetched_floor_ns_per_line),
        ),
        ratio("concurrent-insert-12", "bugu-12 concurrent insert / bugu-12 insert", |l| {
            (l.bugu12_concurrent.insert_ns, l.bugu12.insert_ns)
        }),
        ratio("concurrent-find0-12", "bugu-12 concurrent find 0% / bugu-12 find 0%", |l| {
            (l.bugu12_concurrent.find0_ns, l.bugu12.find0_ns)
        }),
        ratio("concurrent-find100-12", "bugu-12 concurrent find 100% / bugu-12 find 100%", |l| {
            (l.bugu12_concurrent.find100_ns, l.bugu12.find100_ns)
        }),
        ratio("insert-12-vs-vqf", "bugu-12 insert / C++ VQF insert", |l| {
            (l.bugu12.insert_ns, l.vqf.insert_ns)
        }),
        ratio("find0-12-vs-vqf", "bugu-12 find 0% / C++ VQF find 0%", |l| {
            (l.bugu12.find0_ns, l.vqf.find0_ns)
        }),
        ratio("find100-12-vs-vqf", "bugu-12 find 100% / C++ VQF find 100%", |l| {
            (l.bugu12.find100_ns, l.vqf.find100_ns)
        }),
        ratio("insert-12-vs-blocked-bloom", "bugu-12 insert / C++ BlockedBloom insert", |l| {
            (l.bugu12.insert_ns, l.blocked_bloom.insert_ns)
        }),
        ratio("find0-12-vs-blocked-bloom", "bugu-12 find 0% / C++ BlockedBloom find 0%", |l| {
            (l.bugu12.find0_ns, l.blocked_bloom.find0_ns)
        }),
        ratio("find100-12-vs-blocked-bloom", "bugu-12 find 100% / C++ BlockedBloom find 100%", |l| {
            (l.bugu12.find100_ns, l.blocked_bloom.find100_ns)
        }),
    ]
}

/// The short names of [`ratios`], for checking the `--target`s.
pub fn ratio_names() -> Vec<&'static str> {
    ratios().iter().map(|ratio| ratio.name).collect()
}

impl SizeRun {
    /// The medians over the rounds (`None` before the first round).
    pub fn medians(&self) -> Option<Lineup> {
        let lineups: Vec<Lineup> = self.rounds.iter().map(|r| r.lineup).collect();
        (!lineups.is_empty()).then(|| Lineup::median(&lineups))
    }

    /// Every ratio: of the medians, and in each round.
    pub fn ratio_rows(&self) -> Vec<RatioRow<'static>> {
        let medians = self.medians();
        ratios()
            .into_iter()
            .map(|ratio| RatioRow {
                name: ratio.name,
                label: ratio.label,
                value: medians.as_ref().map(|m| ratio.of(m)),
                per_round: self.rounds.iter().map(|r| ratio.of(&r.lineup)).collect(),
                unmeasured: None,
            })
            .collect()
    }
}

fn figures_row(out: &mut String, first: &str, label: &str, f: &Figures) {
    let _ = writeln!(
        out,
        "| {first}{label} | {:.1} | {:.1} | {:.1} | {:.2} | {:.4} |",
        f.insert_ns, f.find0_ns, f.find100_ns, f.bits_per_item, f.fp_percent
    );
}

const FIGURES_HEADER: &str = "| insert | find 0% | find 100% | bits/item | FP % |\n";
const FIGURES_RULE: &str = "|---:|---:|---:|---:|---:|\n";

impl Comparison {
    /// The whole report: the machine line, what was run, then each size measured so far.
    pub fn render(&self) -> String {
        let mut out = String::from("# bugu against the C++ reference (fastfilter_cpp)\n\n");
        let _ = writeln!(
            out,
            "{} (a 1-minute load near or above the CPU count means other processes competed).\n",
            crate::machine::context(&self.machine, &self.load)
        );
        let commit = self.commit.as_deref().map_or_else(String::new, |c| format!(" at commit {c}"));
        let ids: Vec<String> = fastfilter_cpp::ALGORITHMS.iter().map(|(id, _)| id.to_string()).collect();
        let _ = writeln!(
            out,
            "C++: fastfilter_cpp{commit} ({}), `benchmarks/{} <keys> {}`: {} and {}, and as context {} and {} \
             (their ratios are judged only if a `--target` names them); insert = its `add` column (for {} \
             the benchmark's batched add, which inserts the keys one by one in a loop). bugu: the \
             `compare` workload (64-bit keys, seed 42) with the rows bugu-12, bugu-12 batched (256 keys \
             per call), bugu-13 semi-sorted and bugu-12 concurrent (a `ConcurrentFilter` from one thread, \
             one key per call), 1 repeat per round, in this process. Both look up min(keys, 10^7) keys per \
             mix. Memory floors: ns per random 64-byte read from a buffer the size of the bugu-12 table \
             (huge pages advised, like the table), by a loop of independent reads (plain) and by the same \
             loop prefetching the line a window of reads ahead (prefetched); a lookup reads two lines, so \
             a floor per lookup is 2 x that.\n",
            self.checkout,
            fastfilter_cpp::EXE,
            ids.join(","),
            fastfilter_cpp::CUCKOO12.1,
            fastfilter_cpp::SEMI_SORT13.1,
            fastfilter_cpp::VQF.1,
            fastfilter_cpp::BLOCKED_BLOOM.1,
            fastfilter_cpp::VQF.1,
        );
        let _ = writeln!(
            out,
            "Each round runs, in order: the C++ benchmark (a separate process), bugu's rows, the memory floors. \
             Times are ns per key by wall clock; medians are over {} round(s), ratios are ratios of the medians.",
            self.rounds
        );
        if self.rounds < 3 {
            out.push_str("\n**Fewer than 3 rounds: the medians are less robust against the noise.**\n");
        }
        for size in &self.sizes {
            size.render(&mut out, &self.targets);
        }
        out
    }
}

impl SizeRun {
    fn render(&self, out: &mut String, targets: &[Target]) {
        let Some(medians) = self.medians() else { return };
        let rounds = self.rounds.len();
        let floor = &self.rounds[0].floor;
        let _ = writeln!(out, "\n## {} keys\n", grouped(self.keys));
        let prefetch = if memory_floor::PREFETCHES {
            "`prefetcht0`"
        } else {
            "no prefetch on this architecture, so both floors time the same loop"
        };
        let _ = writeln!(
            out,
            "{} lookups per mix. Memory floors: {} buffer, {} reads per timed loop, prefetch window {} reads \
             ({prefetch}), median of the loops.\n",
            grouped(self.lookups),
            crate::report::mib(floor.buffer_bytes),
            grouped(floor.reads),
            floor.window
        );

        let _ = writeln!(out, "Medians of {rounds} round(s), ns per key:\n");
        out.push_str("| filter ");
        out.push_str(FIGURES_HEADER);
        out.push_str("|---");
        out.push_str(FIGURES_RULE);
        for (label, figures) in medians.rows() {
            figures_row(out, "", label, figures);
        }
        let _ = writeln!(
            out,
            "\nMemory floor: {:.1} ns per line; 2 x {:.1} = {:.1} ns per lookup.",
            medians.floor_ns_per_line,
            medians.floor_ns_per_line,
            2.0 * medians.floor_ns_per_line
        );
        let _ = writeln!(
            out,
            "Prefetched memory floor: {:.1} ns per line; 2 x {:.1} = {:.1} ns per lookup.\n",
            medians.prefetched_floor_ns_per_line,
            medians.prefetched_floor_ns_per_line,
            2.0 * medians.prefetched_floor_ns_per_line
        );

        out.push_str("Ratios (of the medians, and in each round):\n\n");
        let (table, met) = targets::table(&self.ratio_rows(), targets);
        out.push_str(&table);
        if !targets.is_empty() {
            let _ = writeln!(out, "\n{met} of {} targets met.", targets.len());
        }
        out.push('\n');

        out.push_str("Per round, ns per key:\n\n| round | filter ");
        out.push_str(FIGURES_HEADER);
        out.push_str("|---:|---");
        out.push_str(FIGURES_RULE);
        for (i, round) in self.rounds.iter().enumerate() {
            for (label, figures) in round.lineup.rows() {
                figures_row(out, &format!("{} | ", i + 1), label, figures);
            }
        }
        out.push_str(
            "\n| round | load before | load after | floor ns per line | 2 x floor | prefetched floor ns per line \
             | 2 x prefetched |\n|---:|---|---|---:|---:|---:|---:|\n",
        );
        for (i, round) in self.rounds.iter().enumerate() {
            let prefetched = round.lineup.prefetched_floor_ns_per_line;
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.1} | {:.1} | {prefetched:.1} | {:.1} |",
                i + 1,
                crate::machine::load_text(&round.load.0),
                crate::machine::load_text(&round.load.1),
                round.floor.ns_per_line,
                round.floor.ns_per_lookup(),
                2.0 * prefetched
            );
        }
        for warning in self.rounds.iter().flat_map(|r| &r.warnings) {
            let _ = writeln!(out, "\n{warning}");
        }
    }
}

#[cfg(test)]
mod tests;
