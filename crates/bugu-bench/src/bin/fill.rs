//! `fill`: does a filter built for `n` items accept `n` distinct items, for every fingerprint width
//! and bucket size, and how far past `n` does it go before the first refused insert?
//!
//! ```text
//! cargo run --release -p bugu-bench --bin fill -- --keys 1e6 --seeds 3
//! cargo run --release -p bugu-bench --bin fill -- --keys 1e7 --seeds 3 --bits 4-12
//! cargo run --release -p bugu-bench --bin fill -- --keys 1e8 --seeds 2 --bits 12 --bucket-sizes 4
//! cargo run --release -p bugu-bench --bin fill -- --limits --bits 4-16
//! ```
//!
//! For each configuration it prints one markdown row: whether the builder accepts `--keys` items
//! (a refused configuration shows the width it suggests, and that width is filled instead), the
//! load the table is sized for, how many of the seeds' fills refused an item before `--keys`, and
//! the lowest and median load at which the first insert was refused when the fill goes on past
//! the capacity with distinct keys. The keys are `seed * 2^40 + i`, hashed by the filter.

use std::process::ExitCode;

use bugu::sizing::capacity_limit;
use bugu::{ConfigError, CuckooFilter, FilterMut};
use bugu_bench::cli::parse_count;
use clap::Parser;

/// Fills filters built for `--keys` items with distinct keys.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    /// Items each filter is built for (1e6 or 1_000_000).
    #[arg(long, default_value = "1e6", value_parser = parse_count)]
    keys: usize,
    /// Seeds per configuration (filter seed and key range both vary).
    #[arg(long, default_value_t = 3)]
    seeds: u64,
    /// Fingerprint widths, as `A-B` or a single width.
    #[arg(long, default_value = "4-32", value_parser = parse_range)]
    bits: (u32, u32),
    /// Bucket sizes, comma-separated.
    #[arg(long, default_value = "2,4,8", value_delimiter = ',')]
    bucket_sizes: Vec<usize>,
    /// Stop each fill at the capacity instead of going on to the first refusal.
    #[arg(long)]
    capacity_only: bool,
    /// Print the largest capacity each width and bucket size accepts, and fill nothing.
    #[arg(long)]
    limits: bool,
}

/// The capacity limits as a markdown table: a row per width, a column per bucket size.
fn print_limits(cli: &Cli) {
    let header: Vec<String> = cli.bucket_sizes.iter().map(|b| format!("b = {b}")).collect();
    println!("| f | {} |", header.join(" | "));
    println!("|---|{}", "---:|".repeat(header.len()));
    for bits in cli.bits.0..=cli.bits.1 {
        let limits: Vec<String> = cli
            .bucket_sizes
            .iter()
            .map(|&b| match capacity_limit(b, bits) {
                limit if limit >= usize::MAX / 8 => "any".to_string(),
                limit => limit.to_string(),
            })
            .collect();
        println!("| {bits} | {} |", limits.join(" | "));
    }
}

fn parse_range(text: &str) -> Result<(u32, u32), String> {
    let parse = |part: &str| part.trim().parse::<u32>().map_err(|error| format!("`{part}`: {error}"));
    match text.split_once('-') {
        Some((low, high)) => Ok((parse(low)?, parse(high)?)),
        None => parse(text).map(|bits| (bits, bits)),
    }
}

/// One seed's fill: whether `keys` items went in, and the load at the first refusal.
struct Fill {
    reached_capacity: bool,
    load_at_first_refusal: Option<f64>,
}

fn fill(filter: &mut CuckooFilter, keys: usize, seed: u64, capacity_only: bool) -> Fill {
    let base = seed << 40;
    let mut inserted = 0u64;
    let stop = if capacity_only { keys as u64 } else { u64::MAX };
    while inserted < stop {
        if filter.insert(&(base + inserted)).is_err() {
            return Fill {
                reached_capacity: inserted as usize >= keys,
                load_at_first_refusal: Some(filter.load_factor()),
            };
        }
        inserted += 1;
    }
    Fill { reached_capacity: true, load_at_first_refusal: None }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.limits {
        print_limits(&cli);
        return ExitCode::SUCCESS;
    }
    println!("{} items per filter, {} seeds each", cli.keys, cli.seeds);
    println!();
    println!(
        "| b | f | accepted | filled with f | sized load | bits/item | fills short of n | first refusal: min load | median load |"
    );
    println!("|---|---|---|---|---:|---:|---:|---:|---:|");
    let mut short = 0;
    for &bucket_size in &cli.bucket_sizes {
        for bits in cli.bits.0..=cli.bits.1 {
            let builder = CuckooFilter::builder().capacity(cli.keys).bucket_size(bucket_size);
            let (accepted, used_bits) = match builder.clone().fingerprint_bits(bits).build() {
                Ok(_) => ("yes".to_string(), bits),
                Err(ConfigError::TooNarrow { wider_bits: Some(wider), limit, .. }) => {
                    (format!("no (limit {limit})"), wider)
                }
                Err(error) => {
                    println!("| {bucket_size} | {bits} | no: {error} | | | | | | |");
                    continue;
                }
            };
            let mut loads = Vec::new();
            let mut fills_short = 0;
            let mut sized = (0.0, 0.0);
            for seed in 0..cli.seeds {
                let Ok(mut filter) = builder.clone().fingerprint_bits(used_bits).seed(seed).build() else {
                    eprintln!("b={bucket_size} f={used_bits}: the suggested width was refused");
                    return ExitCode::FAILURE;
                };
                let buckets = filter.bucket_count() as f64;
                sized =
                    (cli.keys as f64 / (buckets * bucket_size as f64), filter.memory_bytes() as f64 * 8.0);
                let result = fill(&mut filter, cli.keys, seed, cli.capacity_only);
                if !result.reached_capacity {
                    fills_short += 1;
                }
                loads.extend(result.load_at_first_refusal);
            }
            short += fills_short;
            loads.sort_by(f64::total_cmp);
            let (min, median) = match loads.as_slice() {
                [] => ("-".to_string(), "-".to_string()),
                sorted => (format!("{:.4}", sorted[0]), format!("{:.4}", sorted[sorted.len() / 2])),
            };
            println!(
                "| {bucket_size} | {bits} | {accepted} | {used_bits} | {:.4} | {:.2} | {fills_short} of {} | {min} | {median} |",
                sized.0,
                sized.1 / cli.keys as f64,
                cli.seeds
            );
        }
    }
    println!();
    println!("fills that refused an item before the capacity: {short}");
    if short == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
