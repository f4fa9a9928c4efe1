//! `vs_fastfilter`: bugu side by side with the C++ reference benchmark, FastFilter's
//! fastfilter_cpp (`benchmarks/bulk-insert-and-query.exe`), at the same key counts.
//!
//! ```text
//! git clone https://github.com/FastFilter/fastfilter_cpp ../fastfilter_cpp
//! cargo run --release -p bugu-bench --bin vs_fastfilter -- --fastfilter ../fastfilter_cpp --sizes 1e6,1e7,1e8
//! ```
//!
//! Builds the C++ benchmark if the checkout has not (`make bulk-insert-and-query.exe
//! UNAME_P=x86_64` in its `benchmarks/`). Then, per size and round, in this order: the C++
//! benchmark with Cuckoo12 and CuckooSemiSort13, and VQF and BlockedBloom as context (both need
//! an AVX2 build); bugu-12, bugu-12 batched, bugu-13 semi-sorted and bugu-12 concurrent (a
//! `ConcurrentFilter` from one thread) through the `compare` harness in this process; the memory
//! floors, plain and prefetched, from one buffer the size of the bugu-12 table. Prints markdown
//! (medians, the ratios between them with a verdict for each `--target`, every round's figures
//! and load) and writes it to `OUT_DIR/vs-fastfilter.md` (`target/bench-results/vs-fastfilter.md`
//! by default) after each size.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bugu_bench::compare::{self, KeyType, Options};
use bugu_bench::contender::Kind;
use bugu_bench::fastfilter_cpp::{self, ALGORITHMS, BLOCKED_BLOOM, CUCKOO12, SEMI_SORT13, VQF};
use bugu_bench::machine;
use bugu_bench::memory_floor;
use bugu_bench::report;
use bugu_bench::targets::{self, Target};
use bugu_bench::timing::Clock;
use bugu_bench::vs_fastfilter::{self, Comparison, Figures, Lineup, Round, SizeRun};
use clap::Parser;

/// Lookups per mix: the C++ benchmark looks up min(keys, 10^7) keys per mix, and so does bugu.
const MAX_LOOKUPS: usize = 10_000_000;
/// Keys per call of bugu's batch entry points (the `compare` default).
const BATCH: usize = 256;
/// Seed of bugu's keys (the `compare` default).
const SEED: u64 = 42;
/// Random line reads per timed loop of the memory floor, and the loops (the median is kept).
const FLOOR_READS: usize = 10_000_000;
const FLOOR_REPEATS: usize = 5;

/// Run fastfilter_cpp's bulk-insert-and-query benchmark (Cuckoo12, CuckooSemiSort13; VQF and
/// BlockedBloom as context) and bugu's matching rows alternately at the same key counts; print
/// the medians, the ratios between them and the memory floors (plain and prefetched). The report
/// goes to stdout and to OUT_DIR/vs-fastfilter.md.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    /// The fastfilter_cpp checkout (`git clone https://github.com/FastFilter/fastfilter_cpp`).
    #[arg(long, env = "FASTFILTER_CPP", value_name = "DIR")]
    fastfilter: PathBuf,
    /// Numbers of keys, comma-separated: 1e6,1e7,1e8 or 10_000_000.
    #[arg(long, value_delimiter = ',', value_parser = bugu_bench::cli::parse_table_keys, default_value = "1e6,1e7,1e8")]
    sizes: Vec<usize>,
    /// Alternated rounds per size (C++, bugu, floor); the report shows medians over them. Nine by
    /// default: at 10^7 keys the tables sit in an L3 cache shared with other tenants, so the ratio
    /// of two processes run a minute apart swings widely from round to round, and a median of a few
    /// rounds still moves from run to run.
    #[arg(long, default_value_t = 9, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// What a ratio must be, comma-separated: NAME<=LIMIT or NAME>=LIMIT, `:every-round` appended
    /// if it must hold in each round too (e.g. `find0-12<=0.85`). The report prints every ratio
    /// with its NAME, and a verdict for each one given here.
    #[arg(long, value_delimiter = ',')]
    target: Vec<Target>,
    /// The prefetched memory floor's window: each random line read is preceded by a prefetch of
    /// the line this many reads ahead. 64 by default: of 16, 24, 32, 48, 64 and 128, the lowest
    /// floor on the machine the harness was written on, at table sizes of 16 and 160 MiB.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=4096))]
    floor_window: u32,
    /// Where vs-fastfilter.md goes (created if missing).
    #[arg(long, default_value = "target/bench-results")]
    out_dir: PathBuf,
}

fn main() -> ExitCode {
    bugu_bench::cli::exit_code(run(&Cli::parse()))
}

fn run(cli: &Cli) -> Result<(), String> {
    targets::check_names(&cli.target, &vs_fastfilter::ratio_names())?;
    let checkout = std::fs::canonicalize(&cli.fastfilter)
        .map_err(|error| format!("fastfilter_cpp checkout {}: {error}", cli.fastfilter.display()))?;
    let exe = fastfilter_cpp::ensure_built(&checkout)?;
    let mut comparison = Comparison {
        machine: machine::describe(),
        load: (machine::load_average(), None),
        checkout: cli.fastfilter.display().to_string(),
        commit: fastfilter_cpp::commit(&checkout),
        rounds: cli.rounds as usize,
        targets: cli.target.clone(),
        sizes: Vec::new(),
    };
    let path = cli.out_dir.join("vs-fastfilter.md");
    for &keys in &cli.sizes {
        let measured = measure_size(&exe, keys, cli.rounds as usize, cli.floor_window as usize);
        comparison.load.1 = machine::load_average();
        let failure = match measured {
            Ok(size) => {
                comparison.sizes.push(size);
                None
            }
            Err(error) => Some(error),
        };
        // Rewritten after each size, so a long run that fails later keeps what it measured.
        if !comparison.sizes.is_empty() {
            report::save(&path, &comparison.render())?;
        }
        if let Some(error) = failure {
            if !comparison.sizes.is_empty() {
                println!("{}", comparison.render());
                eprintln!("wrote {} (the sizes measured before the error)", path.display());
            }
            return Err(error);
        }
    }
    println!("{}", comparison.render());
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// Every round at `keys` keys: the C++ benchmark, bugu's rows, the memory floors (the prefetched
/// one with `window`).
fn measure_size(exe: &Path, keys: usize, rounds: usize, window: usize) -> Result<SizeRun, String> {
    let options = Options {
        sizes: vec![keys],
        key_type: KeyType::U64,
        repeats: 1,
        fpr: 0.004, // used by rate-configured rows only; none runs here
        seed: SEED,
        max_lookups: MAX_LOOKUPS,
        batch: BATCH,
        // bugu-12, bugu-12 batched, bugu-13 semi-sorted (the default lineup without the peers),
        // and the concurrent filter from one thread.
        kinds: compare::lineup(&[12], &[12], &[13])
            .into_iter()
            .filter(Kind::is_bugu)
            .chain([Kind::BuguConcurrent { bits: 12 }])
            .collect(),
        clock: Clock::Wall,
    };
    let mut size = SizeRun { keys, lookups: keys.min(MAX_LOOKUPS), rounds: Vec::new() };
    for round in 1..=rounds {
        let load_before = machine::load_average();
        eprintln!("== {keys} keys, round {round}/{rounds}: fastfilter_cpp (a few minutes at 10^8 keys)");
        let rows = fastfilter_cpp::run(exe, keys, &ALGORITHMS.map(|(id, _)| id))?;
        let cpp = |(_, name): (u32, &str)| fastfilter_cpp::find(&rows, name).map(Figures::from_cpp);
        let (cuckoo12, semi_sort13) = (cpp(CUCKOO12)?, cpp(SEMI_SORT13)?);
        let (vqf, blocked_bloom) = (cpp(VQF)?, cpp(BLOCKED_BLOOM)?);

        eprintln!("== {keys} keys, round {round}/{rounds}: bugu");
        let report = compare::run(&options);
        let row = |kind: Kind| {
            report
                .measurements
                .iter()
                .find(|m| m.kind == kind)
                .ok_or_else(|| format!("the harness measured no {} row", kind.name()))
        };
        let bugu12 = row(Kind::Bugu { bits: 12, batched: false })?;
        let table_bytes = bugu12.memory_bytes;
        let bugu12 = Figures::from_bugu(bugu12);
        let bugu12_batched = Figures::from_bugu(row(Kind::Bugu { bits: 12, batched: true })?);
        let bugu13_semi_sorted = Figures::from_bugu(row(Kind::BuguSemiSorted { bits: 13 })?);
        let bugu12_concurrent = Figures::from_bugu(row(Kind::BuguConcurrent { bits: 12 })?);
        let warnings = report.warnings();
        for warning in &warnings {
            eprintln!("{warning}");
        }
        drop(report); // free the keys before the floor's buffer is allocated

        eprintln!(
            "== {keys} keys, round {round}/{rounds}: memory floors ({table_bytes} bytes, the bugu-12 table)"
        );
        let floor = memory_floor::measure(table_bytes, FLOOR_READS, FLOOR_REPEATS, window, Clock::Wall);
        let prefetched = floor.prefetched_ns_per_line.ok_or("the prefetched floor was not measured")?;
        eprintln!(
            "  {:.1} ns per line, {:.1} per lookup; prefetched (window {window}) {prefetched:.1} ns per line",
            floor.ns_per_line,
            floor.ns_per_lookup()
        );
        let lineup = Lineup {
            cuckoo12,
            semi_sort13,
            bugu12,
            bugu12_batched,
            bugu13_semi_sorted,
            bugu12_concurrent,
            vqf,
            blocked_bloom,
            floor_ns_per_line: floor.ns_per_line,
            prefetched_floor_ns_per_line: prefetched,
        };
        size.rounds.push(Round { lineup, floor, load: (load_before, machine::load_average()), warnings });
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_rounds_are_checked() {
        let cli =
            Cli::try_parse_from(["x", "--fastfilter", "d", "--sizes", "1e6, 2_000_000", "--rounds", "2"]);
        let cli = cli.unwrap();
        assert_eq!((cli.sizes, cli.rounds), (vec![1_000_000, 2_000_000], 2));
        assert!(Cli::try_parse_from(["x", "--fastfilter", "d", "--sizes", "10"]).is_err());
        assert!(Cli::try_parse_from(["x", "--fastfilter", "d", "--rounds", "0"]).is_err());
        let cli = Cli::try_parse_from(["x", "--fastfilter", "d", "--target", "find0-12<=0.85,x<=1"]).unwrap();
        assert_eq!(cli.target.len(), 2);
        assert!(run(&cli).unwrap_err().starts_with("no ratio named x"));
        let defaults = Cli::try_parse_from(["x", "--fastfilter", "d"]).unwrap();
        assert_eq!(defaults.sizes, vec![1_000_000, 10_000_000, 100_000_000]);
        assert_eq!(defaults.floor_window, 64);
        let cli = Cli::try_parse_from(["x", "--fastfilter", "d", "--sizes", "1e6,1e7,1e8"]).unwrap();
        assert_eq!(cli.sizes, vec![1_000_000, 10_000_000, 100_000_000]);
        assert!(Cli::try_parse_from(["x", "--fastfilter", "d", "--floor-window", "0"]).is_err());
        let cli = Cli::try_parse_from(["x", "--fastfilter", "d", "--floor-window", "16"]).unwrap();
        assert_eq!(cli.floor_window, 16);
        // Targets on the context rows and the prefetched floor are accepted names.
        let cli = Cli::try_parse_from([
            "x",
            "--fastfilter",
            "/nonexistent/fastfilter_cpp",
            "--target",
            "insert-12-vs-vqf<=1,batch-find0-prefetched-floor<=1.15,batch-find100-prefetched-floor<=1.15",
        ])
        .unwrap();
        assert!(run(&cli).unwrap_err().starts_with("fastfilter_cpp checkout"), "names checked first");
    }
}
