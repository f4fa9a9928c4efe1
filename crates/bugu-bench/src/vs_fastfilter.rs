//! bugu side by side with the C++ reference (see [`fastfilter_cpp`]): the figures of each
//! alternated round, their medians over the rounds and the ratios between them (with a verdict
//! for each ratio a `--target` names), rendered as markdown.
//!
//! The run itself — which process goes when — is the `vs_fastfilter` binary's; this module holds
//! what it measured and how it is reported.

use std::fmt::Write as _;

use crate::contender::grouped;
use crate::fastfilter_cpp;
use crate::memory_floor::Floor;
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
    /// ns per independent random line read from a buffer the size of the bugu-12 table.
    pub floor_ns_per_line: f64,
}

impl Lineup {
    /// The filters with their row labels, in table order.
    pub fn rows(&self) -> [(&'static str, &Figures); 6] {
        [
            ("C++ Cuckoo12", &self.cuckoo12),
            ("C++ CuckooSemiSort13", &self.semi_sort13),
            ("bugu-12", &self.bugu12),
            ("bugu-12 batched", &self.bugu12_batched),
            ("bugu-13 semi-sorted", &self.bugu13_semi_sorted),
            ("bugu-12 concurrent, 1 thread", &self.bugu12_concurrent),
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
            floor_ns_per_line: median(&rounds.iter().map(|l| l.floor_ns_per_line).collect::<Vec<_>>()),
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
/// match, the batched lookups against the memory floor (two line reads per lookup), then the
/// concurrent filter from one thread against bugu-12 (the same table, without locks).
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
        ratio("concurrent-insert-12", "bugu-12 concurrent insert / bugu-12 insert", |l| {
            (l.bugu12_concurrent.insert_ns, l.bugu12.insert_ns)
        }),
        ratio("concurrent-find0-12", "bugu-12 concurrent find 0% / bugu-12 find 0%", |l| {
            (l.bugu12_concurrent.find0_ns, l.bugu12.find0_ns)
        }),
        ratio("concurrent-find100-12", "bugu-12 concurrent find 100% / bugu-12 find 100%", |l| {
            (l.bugu12_concurrent.find100_ns, l.bugu12.find100_ns)
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
        let _ = writeln!(
            out,
            "C++: fastfilter_cpp{commit} ({}), `benchmarks/{} <keys> {},{}`: {} and {}, insert = its `add` \
             column. bugu: the `compare` workload (64-bit keys, seed 42) with the rows bugu-12, bugu-12 \
             batched (256 keys per call), bugu-13 semi-sorted and bugu-12 concurrent (a `ConcurrentFilter` \
             from one thread, one key per call), 1 repeat per round, in this process. Both \
             look up min(keys, 10^7) keys per mix. Memory floor: ns per independent random 64-byte read from \
             a buffer the size of the bugu-12 table (huge pages advised, like the table); a lookup reads two \
             lines, so the floor per lookup is 2 x that.\n",
            self.checkout,
            fastfilter_cpp::EXE,
            fastfilter_cpp::CUCKOO12.0,
            fastfilter_cpp::SEMI_SORT13.0,
            fastfilter_cpp::CUCKOO12.1,
            fastfilter_cpp::SEMI_SORT13.1,
        );
        let _ = writeln!(
            out,
            "Each round runs, in order: the C++ benchmark (a separate process), bugu's rows, the memory floor. \
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
        let _ = writeln!(
            out,
            "{} lookups per mix. Memory floor: {} buffer, {} reads per timed loop, median of the loops.\n",
            grouped(self.lookups),
            crate::report::mib(floor.buffer_bytes),
            grouped(floor.reads)
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
            "\nMemory floor: {:.1} ns per line; 2 x {:.1} = {:.1} ns per lookup.\n",
            medians.floor_ns_per_line,
            medians.floor_ns_per_line,
            2.0 * medians.floor_ns_per_line
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
            "\n| round | load before | load after | floor ns per line | 2 x floor |\n|---:|---|---|---:|---:|\n",
        );
        for (i, round) in self.rounds.iter().enumerate() {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.1} | {:.1} |",
                i + 1,
                crate::machine::load_text(&round.load.0),
                crate::machine::load_text(&round.load.1),
                round.floor.ns_per_line,
                round.floor.ns_per_lookup()
            );
        }
        for warning in self.rounds.iter().flat_map(|r| &r.warnings) {
            let _ = writeln!(out, "\n{warning}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(insert_ns: f64, find_ns: f64) -> Figures {
        Figures { insert_ns, find0_ns: find_ns, find100_ns: find_ns, bits_per_item: 12.7, fp_percent: 0.18 }
    }

    /// bugu-12 batched finds at `batched_find` ns against C++ Cuckoo12 at 100 ns.
    fn round(batched_find: f64) -> Round {
        let lineup = Lineup {
            cuckoo12: figures(200.0, 100.0),
            semi_sort13: figures(300.0, 120.0),
            bugu12: figures(100.0, 80.0),
            bugu12_batched: figures(70.0, batched_find),
            bugu13_semi_sorted: figures(310.0, 110.0),
            bugu12_concurrent: figures(150.0, 88.0),
            floor_ns_per_line: 20.0,
        };
        let floor = Floor { buffer_bytes: 1 << 20, reads: 1000, ns_per_line: 20.0 };
        Round { lineup, floor, load: (Some("0.5 0.4 0.3".into()), None), warnings: vec![] }
    }

    /// Targets for every ratio, as a run would pass them on the command line.
    fn targets() -> Vec<Target> {
        [
            "find0-12<=0.85",
            "find100-12<=0.85",
            "find0-13<=1",
            "find100-13<=1",
            "insert-13<=1",
            "insert-12<=0.6",
            "batch-insert-12<=0.4",
            "batch-find0-12<=0.5:every-round",
            "batch-find100-12<=0.5:every-round",
            "batch-find0-floor<=1.2",
            "batch-find100-floor<=1.2",
            "concurrent-insert-12<=1.3",
            "concurrent-find0-12<=1.05",
            "concurrent-find100-12<=1.1",
        ]
        .iter()
        .map(|t| t.parse().expect("a valid target"))
        .collect()
    }

    fn verdicts(size: &SizeRun) -> Vec<bool> {
        let targets = targets();
        size.ratio_rows()
            .iter()
            .zip(&targets)
            .map(|(row, target)| {
                assert_eq!(row.name, target.name);
                target.met(row.value.unwrap(), &row.per_round)
            })
            .collect()
    }

    #[test]
    fn medians_ratios_and_verdicts() {
        // Batched finds 40, 45 and 60 ns: median 45, so 0.45 of the C++ finds and 1.125 x the
        // floor per lookup (40 ns) — but one round is above 0.5.
        let size = SizeRun { keys: 1000, lookups: 1000, rounds: vec![round(40.0), round(60.0), round(45.0)] };
        let medians = size.medians().unwrap();
        assert_eq!(medians.bugu12_batched.find0_ns, 45.0);
        let all = ratios();
        assert_eq!(all.len(), targets().len());
        assert_eq!(all[0].of(&medians), 0.8);
        assert_eq!(all[7].of(&medians), 0.45);
        assert_eq!(all[9].of(&medians), 1.125);
        // Met: bugu-12 finds 0.8; the semi-sorted finds (0.92); not its insert (1.03); bugu-12
        // insert 0.5; batched insert 0.35; batched finds only in the medians (so not met);
        // batched against the floor 1.125; the concurrent insert 1.5 (not met), its finds 1.1
        // (only the second met).
        let expected =
            [true, true, true, true, false, true, true, false, false, true, true, false, false, true];
        assert_eq!(verdicts(&size), expected);
        let size = SizeRun { rounds: vec![round(40.0), round(45.0), round(48.0)], ..size };
        assert!(verdicts(&size)[7] && verdicts(&size)[8]);
    }

    #[test]
    fn the_report_shows_every_target_and_round() {
        let size = SizeRun { keys: 1_000_000, lookups: 1_000_000, rounds: vec![round(40.0), round(60.0)] };
        let comparison = Comparison {
            machine: "test CPU, 2 logical CPUs".into(),
            load: (Some("0.1 0.2 0.3".into()), Some("1.0 0.5 0.4".into())),
            checkout: "../fastfilter_cpp".into(),
            commit: Some("abc1234".into()),
            rounds: 2,
            targets: targets(),
            sizes: vec![size],
        };
        let text = comparison.render();
        assert!(text.contains("Machine: test CPU, 2 logical CPUs. Load average"), "{text}");
        assert!(text.contains("fastfilter_cpp at commit abc1234"));
        assert!(text.contains("Fewer than 3 rounds"));
        assert!(text.contains("## 1,000,000 keys"));
        assert!(
            text.contains("| bugu-12 batched find 0% / C++ Cuckoo12 find 0% (`batch-find0-12`) | 0.50 | 0.40, 0.60 | <= 0.50 (and in every round) | FAIL |"),
            "{text}"
        );
        assert!(text.contains("of 14 targets met."));
        assert!(text.contains("| 1 | bugu-12 concurrent, 1 thread | 150.0 | 88.0 | 88.0 | 12.70 | 0.1800 |"));
        assert!(text.contains("| 2 | bugu-12 batched | 70.0 | 60.0 | 60.0 | 12.70 | 0.1800 |"));
        assert!(text.contains("| 1 | 0.5 0.4 0.3 | n/a | 20.0 | 40.0 |"));
        assert!(text.contains("Memory floor: 20.0 ns per line; 2 x 20.0 = 40.0 ns per lookup."));
        for ratio in ratios() {
            assert!(text.contains(ratio.label), "{} missing", ratio.label);
        }
        // Without targets: the same ratios, no verdicts.
        let text = Comparison { targets: vec![], ..comparison }.render();
        assert!(text.contains("(`batch-find0-12`) | 0.50 | 0.40, 0.60 |  |  |"), "{text}");
        assert!(!text.contains("targets met"));
    }
}
