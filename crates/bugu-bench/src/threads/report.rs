//! The markdown report of a threads run: how it is measured, then per size the filters, the
//! rounds, a table per workload and the ratios.

use std::fmt::Write as _;

use super::{BATCH, CLOCK_EVERY, LOOKUPS_PER_INSERT, Options, Row, SizeRun, Workload, ratios};
use crate::contender::grouped;
use crate::targets::{self, RatioRow, Target};

/// A whole run, as far as it got.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// CPU model and count.
    pub machine: String,
    /// Load averages at the start and the end of the run.
    pub load: (Option<String>, Option<String>),
    /// The command line, for the reader to repeat it.
    pub command: String,
    /// The options of the run.
    pub options: Options,
    /// The sizes measured so far.
    pub sizes: Vec<SizeRun>,
    /// Seconds the run took so far.
    pub seconds: f64,
}

impl Report {
    /// The markdown report.
    pub fn render(&self) -> String {
        let mut out =
            String::from("# Threads: bugu::ConcurrentFilter against locks and atomic-cuckoo-filter\n\n");
        let _ = writeln!(
            out,
            "{} (a 1-minute load near or above the CPU count means other processes competed for the \
             CPUs). Run time: {:.1} min.\n",
            crate::machine::context(&self.machine, &self.load),
            self.seconds / 60.0
        );
        let _ =
            writeln!(out, "Command: `cargo run --release -p bugu-bench --bin threads -- {}`\n", self.command);
        let limit = self.options.phase_limit.as_secs();
        let _ = write!(
            out,
            "How it is measured:\n\n\
             - **Keys**: `n` distinct seeded random 64-bit keys (`workload::u64_keys`, seed {seed}). **Every \
             contender hashes the key inside the timed loop**: the bugu rows call `contains(&key)` / \
             `insert(&key)` (= `hash_of(&key)` then `contains_hash` / `insert_hash`); the batched row hashes \
             {batch} keys with `hash_of` into a buffer, then calls `contains_hash_batch` on it; \
             `atomic-cuckoo-filter` takes no pre-computed hashes, so its own `contains` / `insert` hash with \
             std's `DefaultHasher`.\n\
             - **Timing**: one thread per share of the work, started together behind a `Barrier` \
             (`std::thread::scope`); wall time = first thread's start to last thread's end. *ns/op (wall)* = \
             wall time / operations of all threads; *Mops/s* = operations of all threads / wall time; \
             *ns/op per thread* = each thread's own time / its own operations, averaged over the threads; *CPU* = \
             the threads' CPU time / (wall time x threads), below ~95% when they were descheduled (the machine \
             is shared). Medians over the rounds; per round the contenders run in turn (the order rotated by \
             one each round), each with all its phases back to back; *x 1 thread* = throughput over the same \
             row's 1-thread throughput.\n\
             - **Lookups**: min(`n`, {max_lookups}) keys, half present (evenly spread over the first 80% of \
             the inserted keys), half never inserted, shuffled; each thread a disjoint contiguous slice. The \
             filter is the one the row's first insert phase (below) filled to capacity.\n\
             - **90/10 mix**: the filter starts at 80% of its capacity (bugu rows: one `CuckooFilter` filled \
             once per size, untimed, and copied with `clone` / `ConcurrentFilter::from_filter`; \
             atomic-cuckoo-filter: its own filter filled once, copied through `to_bytes` / `from_bytes`). \
             Each thread repeats: {lookups_per_insert} lookups (cycling over its slice of the lookup keys), \
             then 1 insert of a new key (its slice of the keys after the first 80%).\n\
             - **Inserts**: all `n` keys into an empty filter, each thread a disjoint contiguous slice.\n\
             - **False negatives**: after every phase, untimed, the present lookup keys (and after a mix, the \
             keys it inserted) are looked up again through the same path (batched for the batched row); one \
             reported absent is a false negative. After an insert phase this is a sample (the present lookup \
             keys), not all `n` keys. Keys whose insert was refused are not checked; after a phase capped by \
             the phase limit, only keys the threads got to are (after a capped insert phase: the first ones \
             each thread inserted).\n\
             - **Filters**: bugu's rows all use bugu's default configuration for capacity `n`; \
             atomic-cuckoo-filter is `with_capacity(n)`, as in the `compare` harness. One filter is measured at \
             a time (the two 80% starting filters of the mix are kept for the whole size).\n\
             - **Phase limit**: {limit} s; a phase still running then stops (the clock is read every {clock} \
             operations per thread), is marked *capped* and is skipped in the later rounds of its size.\n",
            seed = self.options.seed,
            batch = BATCH,
            max_lookups = grouped(self.options.max_lookups),
            lookups_per_insert = LOOKUPS_PER_INSERT,
            clock = grouped(CLOCK_EVERY),
        );
        if self.sizes.iter().any(|size| size.rounds.len() < 3) {
            out.push_str(
                "\n**Fewer than 3 rounds at some size: its figures are less robust against the noise.**\n",
            );
        }
        for size in &self.sizes {
            size.render(&mut out, &self.options.threads, &self.options.targets);
        }
        out
    }
}

impl SizeRun {
    fn render(&self, out: &mut String, threads: &[usize], targets: &[Target]) {
        let _ = writeln!(out, "\n## {} keys\n", grouped(self.keys));
        let _ = writeln!(out, "Filters:\n");
        for (row, config) in &self.configs {
            let _ = writeln!(out, "- {}: {config}", row.label());
        }
        let _ = writeln!(
            out,
            "\n{} of {} round(s) asked for (load average before / after):\n",
            self.rounds.len(),
            self.rounds_asked
        );
        for (i, round) in self.rounds.iter().enumerate() {
            let order: Vec<&str> = round.order.iter().map(|r| r.name()).collect();
            let _ = writeln!(
                out,
                "- round {}: {} / {}; order {}",
                i + 1,
                crate::machine::load_text(&round.load.0),
                crate::machine::load_text(&round.load.1),
                order.join(", ")
            );
        }
        for note in &self.notes {
            let _ = writeln!(out, "\n**Note:** {note}");
        }

        let end_load = (self.mix.prefill + self.mix.inserts) as f64 / self.keys as f64 * 100.0;
        for workload in Workload::ALL {
            let heading = match workload {
                Workload::Lookups => format!("Lookups, half present ({} per phase)", grouped(self.lookups)),
                Workload::Mix => format!(
                    "90% lookups / 10% inserts ({} ops per phase, {} of them inserts: 80% -> {end_load:.0}% of capacity)",
                    grouped(self.mix.ops()),
                    grouped(self.mix.inserts)
                ),
                Workload::Inserts => {
                    format!("Inserts from empty to capacity ({} per phase)", grouped(self.keys))
                }
            };
            let _ = writeln!(out, "\n### {heading}\n");
            out.push_str(
                "| contender | threads | Mops/s | ns/op (wall) | ns/op per thread | CPU | x 1 thread | failed inserts | \
                 false neg. / checked | ns/op (wall) per round |\n\
                 |---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
            );
            for row in Row::ALL.into_iter().filter(|row| row.runs(workload)) {
                let one = self.medians(workload, row, 1);
                for t in row.threads(threads) {
                    let Some(m) = self.medians(workload, row, t) else { continue };
                    let scaling = one.as_ref().map_or_else(
                        || "n/a".to_string(),
                        |one| format!("{:.2}x", m.ops_per_sec() / one.ops_per_sec()),
                    );
                    let rounds: Vec<String> = m.per_round.iter().map(|ns| format!("{ns:.1}")).collect();
                    let _ = writeln!(
                        out,
                        "| {}{} | {t} | {:.2} | {:.1} | {:.1} | {:.0}% | {scaling} | {} | {} / {} | {} |",
                        row.label(),
                        if m.capped { " (capped)" } else { "" },
                        m.ops_per_sec() / 1e6,
                        m.ns_per_op,
                        m.per_thread_ns,
                        m.cpu_share * 100.0,
                        if workload == Workload::Lookups { "-".to_string() } else { m.failed.to_string() },
                        m.missing,
                        grouped(m.checked as usize),
                        rounds.join(", ")
                    );
                }
            }
        }

        let _ = writeln!(out, "\n### Ratios and targets\n");
        let ratios = ratios();
        let rows: Vec<RatioRow<'_>> = ratios
            .iter()
            .map(|ratio| RatioRow {
                name: ratio.name,
                label: ratio.label,
                value: self.ratio(ratio),
                per_round: self.ratio_per_round(ratio),
                unmeasured: None,
            })
            .collect();
        out.push_str(&targets::table(&rows, targets).0);
        let (missing, checked) = self.false_negatives();
        let _ = writeln!(
            out,
            "| false negatives, every phase of every row and round | {missing} of {} checked | | 0 | {} |",
            grouped(checked as usize),
            if missing == 0 { "pass" } else { "FAIL" }
        );
    }
}
