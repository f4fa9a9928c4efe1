//! `lookup_kernels`: bugu's one-by-one lookup against the C++ reference's lookup kernel
//! transcribed into Rust, in one process, at the same table sizes (see
//! `bugu_bench::lookup_kernels`).
//!
//! ```text
//! cargo run --release -p bugu-bench --bin lookup_kernels -- --sizes 1e7,1e8 --rounds 101
//! ```

use std::process::ExitCode;

use bugu_bench::cli::SizesAndReport;
use bugu_bench::lookup_kernels;
use clap::Parser;

/// Time bugu's one-by-one lookup and the reference kernel, alternated in short rounds, and print
/// the medians and the per-round ratios.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    #[command(flatten)]
    output: SizesAndReport,
    /// Rounds per size.
    #[arg(long, default_value_t = 101, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// Lookups per variant per round.
    #[arg(long, default_value_t = 500_000, value_parser = clap::value_parser!(u32).range(1..))]
    chunk: u32,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let rounds = cli.rounds as usize;
    bugu_bench::cli::exit_code(bugu_bench::cli::measure_and_report(
        &cli.output,
        "lookup-kernels.md",
        |keys| {
            eprintln!("== {keys} keys: filling bugu's filters, then {} rounds", cli.rounds);
            lookup_kernels::measure(keys, rounds, cli.chunk as usize, 42)
        },
        |machine, loads, runs| lookup_kernels::render(machine, loads, rounds, runs),
    ))
}
