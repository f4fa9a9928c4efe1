//! `insert_kernels`: bugu's fills to capacity (one by one and batched) against the C++
//! reference's insert transcribed into Rust, in one process, at the same table sizes (see
//! `bugu_bench::insert_kernels`).
//!
//! ```text
//! cargo run --release -p bugu-bench --bin insert_kernels -- --sizes 1e7,1e8 --rounds 5
//! ```

use std::process::ExitCode;

use bugu_bench::cli::SizesAndReport;
use bugu_bench::insert_kernels;
use clap::Parser;

/// Fill bugu's filters and the reference's in lockstep, round after round, and print the medians,
/// the per-round ratios and the fill's profile.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    #[command(flatten)]
    output: SizesAndReport,
    /// Rounds per size.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let rounds = cli.rounds as usize;
    bugu_bench::cli::exit_code(bugu_bench::cli::measure_and_report(
        &cli.output,
        "insert-kernels.md",
        |keys| {
            eprintln!("== {keys} keys: {} rounds of fills", cli.rounds);
            insert_kernels::measure(keys, rounds, 42)
        },
        |machine, loads, runs| insert_kernels::render(machine, loads, rounds, runs),
    ))
}
