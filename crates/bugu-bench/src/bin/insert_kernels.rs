//! `insert_kernels`: bugu's fills to capacity (one by one and batched) against the C++
//! reference's insert transcribed into Rust, in one process, at the same table sizes (see
//! `bugu_bench::insert_kernels`).
//!
//! ```text
//! cargo run --release -p bugu-bench --bin insert_kernels -- --sizes 1e7,1e8 --rounds 5
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use bugu_bench::insert_kernels;
use clap::Parser;

/// Fill bugu's filter and the reference's, alternated in rounds, and print the medians and the
/// per-round ratios.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    /// Numbers of keys, comma-separated: 1e7,1e8 or 10_000_000.
    #[arg(long, value_delimiter = ',', value_parser = bugu_bench::cli::parse_table_keys, default_value = "1e7,1e8")]
    sizes: Vec<usize>,
    /// Rounds per size.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// Where insert-kernels.md goes.
    #[arg(long, default_value = "target/bench-results")]
    out_dir: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let rounds = cli.rounds as usize;
    bugu_bench::cli::exit_code(bugu_bench::cli::measure_and_report(
        &cli.sizes,
        &cli.out_dir.join("insert-kernels.md"),
        |keys| {
            eprintln!("== {keys} keys: {} rounds of fills", cli.rounds);
            insert_kernels::measure(keys, rounds, 42)
        },
        |machine, loads, runs| insert_kernels::render(machine, loads, rounds, runs),
    ))
}
