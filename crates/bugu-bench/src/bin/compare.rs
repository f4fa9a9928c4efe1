//! `compare`: runs the same workload on bugu and on the filter crates a user would pick instead;
//! prints markdown tables, writes CSV files and SVG charts.
//!
//! ```text
//! cargo run --release -p bugu-bench --bin compare -- --sizes 1e6,1e7
//! cargo run --release -p bugu-bench --bin compare -- --keys string --sizes 1e5
//! cargo run --release -p bugu-bench --bin compare -- --seed-table
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bugu_bench::cli::parse_count;
use bugu_bench::compare::{self, KeyType, Options};
use bugu_bench::report::{Report, charts, csv, markdown};
use bugu_bench::seed_table;
use bugu_bench::timing::Clock;
use clap::{Parser, ValueEnum};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Keys {
    /// Seeded random 64-bit integers.
    U64,
    /// Strings `user_<id>`.
    String,
}

/// Compare bugu with cuckoofilter, scalable_cuckoo_filter, atomic-cuckoo-filter, qfilter,
/// fastbloom, bloomfilter and xorf on one workload: insert all keys, look up 0%, 50% and 100%
/// present keys, delete half.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    /// Numbers of keys, comma-separated: 1e6,1e7 or 10000,100_000 [default: 1e6; with
    /// --seed-table: 1e4,1e5,1e6].
    #[arg(long, value_parser = parse_sizes)]
    sizes: Option<Sizes>,
    /// Key type.
    #[arg(long, value_enum, default_value = "u64")]
    keys: Keys,
    /// The clock timing the loops.
    #[arg(long, value_enum, default_value = "wall")]
    clock: Clock,
    /// Timed repeats of each phase; the median is reported.
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Target false-positive rate of qfilter, fastbloom, bloomfilter, scalable_cuckoo_filter (and
    /// of bugu in --seed-table).
    #[arg(long, default_value_t = 0.004, value_parser = parse_rate)]
    fpr: f64,
    /// Seed of the keys and of the lookup order.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// At most this many keys in each lookup mix.
    #[arg(long, default_value_t = 10_000_000)]
    max_lookups: usize,
    /// Keys per call of bugu's batched entry points.
    #[arg(long, default_value_t = 256)]
    batch: usize,
    /// bugu fingerprint widths, one row each (bucket size 4).
    #[arg(long, value_delimiter = ',', default_value = "8,12,16")]
    bugu_bits: Vec<u32>,
    /// bugu fingerprint widths with a batched row (insert_batch / contains_batch).
    #[arg(long, value_delimiter = ',', default_value = "12")]
    batched_bits: Vec<u32>,
    /// bugu fingerprint widths with a semi-sorted row (bucket size 4; empty for none).
    #[arg(long, value_delimiter = ',', default_value = "13")]
    semi_sorted_bits: Vec<u32>,
    /// Only the rows whose name contains one of these (comma-separated), e.g. bugu-12,fastbloom.
    #[arg(long, value_delimiter = ',')]
    filters: Vec<String>,
    /// Where the CSV, markdown and SVG files go.
    #[arg(long, default_value = "target/bench-results")]
    out_dir: PathBuf,
    /// Skip the SVG charts.
    #[arg(long)]
    no_charts: bool,
    /// Print the seed article's "Bloom vs cuckoo" table (bugu vs fastbloom at --fpr) instead.
    #[arg(long)]
    seed_table: bool,
}

#[derive(Debug, Clone)]
struct Sizes(Vec<usize>);

/// "1e6,1e7" or "10000,100_000".
fn parse_sizes(text: &str) -> Result<Sizes, String> {
    let mut sizes = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let keys = parse_count(part)?;
        if !(100..=1_000_000_000).contains(&keys) {
            return Err(format!("number of keys must be from 100 to 1e9: {part}"));
        }
        sizes.push(keys);
    }
    if sizes.is_empty() {
        return Err("no sizes given".to_string());
    }
    Ok(Sizes(sizes))
}

fn parse_rate(text: &str) -> Result<f64, String> {
    let rate: f64 = text.parse().map_err(|_| format!("not a rate: {text}"))?;
    if rate > 0.0 && rate < 0.5 { Ok(rate) } else { Err(format!("the rate must be in (0, 0.5): {text}")) }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let key_type = match cli.keys {
        Keys::U64 => KeyType::U64,
        Keys::String => KeyType::String,
    };
    let (kinds, default_sizes) = if cli.seed_table {
        (seed_table::KINDS.to_vec(), seed_table::SIZES.to_vec())
    } else {
        (
            compare::select(
                compare::lineup(&cli.bugu_bits, &cli.batched_bits, &cli.semi_sorted_bits),
                &cli.filters,
            ),
            vec![1_000_000],
        )
    };
    if kinds.is_empty() {
        eprintln!("no filter matches --filters {}", cli.filters.join(","));
        return ExitCode::FAILURE;
    }
    let options = Options {
        sizes: cli.sizes.map_or(default_sizes, |s| s.0),
        key_type,
        repeats: cli.repeats.max(1),
        fpr: cli.fpr,
        seed: cli.seed,
        max_lookups: cli.max_lookups.max(1),
        batch: cli.batch.max(1),
        kinds,
        clock: cli.clock,
    };
    let report = compare::run(&options);
    let result = if cli.seed_table {
        write_seed_table(&report, &cli.out_dir)
    } else {
        write_comparison(&report, &cli.out_dir, !cli.no_charts)
    };
    for warning in report.warnings() {
        eprintln!("{warning}");
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

fn write_comparison(report: &Report, dir: &Path, draw: bool) -> Result<(), Box<dyn std::error::Error>> {
    let text = markdown::render(report);
    println!("{text}");
    let key = &report.key_type;
    let mut written = vec![dir.join(format!("compare-{key}.md"))];
    csv::write(&written[0], &text)?;
    written.push(dir.join(format!("compare-{key}.csv")));
    csv::write(&written[1], &csv::measurements(report))?;
    written.push(dir.join(format!("ratios-{key}.csv")));
    csv::write(&written[2], &csv::ratios(report))?;
    if draw {
        written.extend(charts::draw_all(report, dir)?);
    }
    for path in written {
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

fn write_seed_table(report: &Report, dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let text = seed_table::render(report);
    println!("{text}");
    let key = &report.key_type;
    let md = dir.join(format!("seed-table-{key}.md"));
    let table = dir.join(format!("seed-table-{key}.csv"));
    csv::write(&md, &text)?;
    csv::write(&table, &csv::measurements(report))?;
    eprintln!("wrote {}\nwrote {}", md.display(), table.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_accept_scientific_and_grouped_forms() {
        assert_eq!(parse_sizes("1e6,1e7").unwrap().0, vec![1_000_000, 10_000_000]);
        assert_eq!(parse_sizes("10_000, 2.5e5").unwrap().0, vec![10_000, 250_000]);
        assert!(parse_sizes("1.5").is_err());
        assert!(parse_sizes("abc").is_err());
        assert!(parse_rate("0.004").is_ok());
        assert!(parse_rate("0").is_err());
    }
}
