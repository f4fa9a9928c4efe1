//! `threads`: `bugu::ConcurrentFilter` against `RwLock<CuckooFilter>`, `Mutex<CuckooFilter>`
//! and `atomic-cuckoo-filter`, with the single-threaded `CuckooFilter` as the reference, at 1 and
//! 2 threads: lookups, a 90/10 lookup/insert mix, and inserts to capacity.
//!
//! ```text
//! cargo run --release -p bugu-bench --bin threads -- --sizes 1e7,1e8 --rounds 3
//! cargo run --release -p bugu-bench --bin threads -- --sizes 1e6 --rounds 1 --skip atomic
//! cargo run --release -p bugu-bench --bin threads -- --sizes 1e7 --target lookup-scaling>=1.8
//! ```
//!
//! Prints markdown (medians, the ratios between them, false-negative checks; a verdict for each
//! `--target`) and writes it to `OUT_DIR/threads.md` (`target/bench-results/threads.md` by
//! default) after each size. The method is in [`bugu_bench::threads`].

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use bugu_bench::cli::parse_count;
use bugu_bench::machine;
use bugu_bench::report;
use bugu_bench::targets::{self, Target};
use bugu_bench::threads::{self, Options, Report, Skip};
use clap::Parser;

/// Measure `bugu::ConcurrentFilter` against `RwLock`/`Mutex<CuckooFilter>` and `atomic-cuckoo-filter`,
/// with 1 and 2 threads, and print the medians and their ratios. The report goes to stdout and to
/// OUT_DIR/threads.md.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    /// Numbers of keys, comma-separated: 1e7,1e8 or 10_000_000.
    #[arg(long, value_delimiter = ',', value_parser = parse_size, default_value = "1e7,1e8")]
    sizes: Vec<usize>,
    /// Rounds per size (figures are medians over them): one number for every size, or one per size
    /// (`3,1`).
    #[arg(long, value_delimiter = ',', default_value = "3", value_parser = clap::value_parser!(u32).range(1..))]
    rounds: Vec<u32>,
    /// Thread counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2", value_parser = clap::value_parser!(u32).range(1..=64))]
    threads: Vec<u32>,
    /// Keys looked up per lookup phase, at most (half present).
    #[arg(long, default_value = "1e7", value_parser = parse_count)]
    max_lookups: usize,
    /// Operations per mix phase, at most (default: inserts from 80% of the capacity to all of it).
    #[arg(long, value_parser = parse_count)]
    max_mix_ops: Option<usize>,
    /// Seconds after which a phase stops early, is reported as capped and is skipped in later rounds.
    #[arg(long, default_value_t = 60)]
    phase_limit: u64,
    /// Rows to leave out, comma-separated: NAME or NAME@KEYS, NAME one of concurrent, batch, cuckoo,
    /// rwlock, mutex, atomic (e.g. `atomic@1e8`).
    #[arg(long, value_delimiter = ',')]
    skip: Vec<Skip>,
    /// Time budget of the whole run, in minutes: a size's rounds after its first are started only
    /// if they would end within it (judged by the previous round); the report says which were not.
    #[arg(long)]
    budget_minutes: Option<f64>,
    /// What a ratio must be, comma-separated: NAME<=LIMIT or NAME>=LIMIT, `:every-round` appended
    /// if it must hold in each round too (e.g. `lookup-scaling>=1.8`). The report prints every
    /// ratio with its NAME, and a verdict for each one given here.
    #[arg(long, value_delimiter = ',')]
    target: Vec<Target>,
    /// Seed of the keys.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Where threads.md goes (created if missing).
    #[arg(long, default_value = "target/bench-results")]
    out_dir: PathBuf,
}

fn parse_size(text: &str) -> Result<usize, String> {
    bugu_bench::cli::parse_keys(text, 1000)
}

impl Cli {
    /// Rounds at each size, in the order of the sizes.
    fn rounds_per_size(&self) -> Result<Vec<usize>, String> {
        match self.rounds.len() {
            1 => Ok(vec![self.rounds[0] as usize; self.sizes.len()]),
            n if n == self.sizes.len() => Ok(self.rounds.iter().map(|&r| r as usize).collect()),
            n => Err(format!(
                "--rounds has {n} values for {} sizes: give one, or one per size",
                self.sizes.len()
            )),
        }
    }

    fn options(&self) -> Options {
        Options {
            threads: self.threads.iter().map(|&t| t as usize).collect(),
            max_lookups: self.max_lookups,
            max_mix_ops: self.max_mix_ops,
            phase_limit: Duration::from_secs(self.phase_limit),
            skip: self.skip.clone(),
            targets: self.target.clone(),
            seed: self.seed,
        }
    }
}

fn main() -> ExitCode {
    bugu_bench::cli::exit_code(run(&Cli::parse()))
}

fn run(cli: &Cli) -> Result<(), String> {
    let rounds = cli.rounds_per_size()?;
    targets::check_names(&cli.target, &threads::ratio_names())?;
    let started = Instant::now();
    let mut report = Report {
        machine: machine::describe(),
        load: (machine::load_average(), None),
        command: std::env::args().skip(1).collect::<Vec<_>>().join(" "),
        options: cli.options(),
        sizes: Vec::new(),
        seconds: 0.0,
    };
    let path = cli.out_dir.join("threads.md");
    for (&keys, &rounds) in cli.sizes.iter().zip(&rounds) {
        let finish_by = cli.budget_minutes.map(|minutes| started + Duration::from_secs_f64(minutes * 60.0));
        let size = threads::measure_size(keys, rounds, &report.options, finish_by);
        report.sizes.push(size);
        report.load.1 = machine::load_average();
        report.seconds = started.elapsed().as_secs_f64();
        // Rewritten after each size, so that a long run keeps what it measured.
        report::save(&path, &report.render())?;
    }
    println!("{}", report.render());
    eprintln!("wrote {} ({:.1} min)", path.display(), report.seconds / 60.0);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked() {
        let cli = Cli::try_parse_from(["x"]).unwrap();
        assert_eq!(
            (cli.sizes.clone(), cli.rounds_per_size().unwrap()),
            (vec![10_000_000, 100_000_000], vec![3, 3])
        );
        assert_eq!(cli.options().threads, vec![1, 2]);
        let cli =
            Cli::try_parse_from(["x", "--sizes", "1e6,1e7", "--rounds", "3,1", "--skip", "atomic@1e7,mutex"]);
        let cli = cli.unwrap();
        assert_eq!(cli.rounds_per_size().unwrap(), vec![3, 1]);
        assert_eq!(cli.skip.len(), 2);
        assert_eq!(Cli::try_parse_from(["x", "--budget-minutes", "25"]).unwrap().budget_minutes, Some(25.0));
        let cli = Cli::try_parse_from(["x", "--sizes", "1e6", "--rounds", "3,1"]).unwrap();
        assert!(cli.rounds_per_size().is_err());
        assert!(Cli::try_parse_from(["x", "--rounds", "0"]).is_err());
        assert!(Cli::try_parse_from(["x", "--threads", "0"]).is_err());
        assert!(Cli::try_parse_from(["x", "--sizes", "10"]).is_err());
        assert!(Cli::try_parse_from(["x", "--skip", "bloom"]).is_err());
        let cli = Cli::try_parse_from(["x", "--target", "lookup-scaling>=1.8,mix-scaling>=1.5:every-round"]);
        assert_eq!(cli.unwrap().options().targets.len(), 2);
        assert!(Cli::try_parse_from(["x", "--target", "lookup-scaling"]).is_err());
        let cli = Cli::try_parse_from(["x", "--sizes", "1e3", "--target", "speed>=2"]).unwrap();
        assert!(run(&cli).unwrap_err().starts_with("no ratio named speed"));
    }
}
