//! `huge_pages`: does bugu's `MADV_HUGEPAGE` advice make lookups faster on this machine?
//!
//! ```text
//! sudo cargo run --release -p bugu-bench --bin huge_pages                # 10M keys, 12-bit
//! sudo cargo run --release -p bugu-bench --bin huge_pages -- --keys 1e8
//! ```
//!
//! Builds the same filter twice in one process: once with transparent huge pages in `madvise`
//! mode (so bugu's advice takes effect), once with them switched to `never` (every page 4 KiB),
//! timing each fill (`insert_batch`, page faults included), in a few pairs of alternating order.
//! Then it times one-by-one and batched lookups of absent keys on the last pair, in paired rounds
//! that alternate which filter goes first, and prints the median (and quartiles) of the per-pair
//! time ratios: pairing cancels most of the drift of a shared machine, which moves absolute times
//! between processes by more than the difference looked for. Switching the mode needs root (it writes
//! `/sys/kernel/mm/transparent_hugepage/enabled`); the mode found at the start is restored.

use std::hint::black_box;
use std::process::ExitCode;

use bugu::{CuckooFilter, Filter, FilterMut};
use bugu_bench::cli::parse_count;
use bugu_bench::timing::{ns_per_op, time};
use bugu_bench::workload::u64_keys;
use clap::Parser;

const THP_MODE: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// Paired A/B of lookups in a table on huge pages against the same table on 4 KiB pages.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    /// Keys inserted (1e7 or 10_000_000).
    #[arg(long, default_value = "1e7", value_parser = parse_count)]
    keys: usize,
    /// Absent keys looked up in each timed loop.
    #[arg(long, default_value = "2e6", value_parser = parse_count)]
    lookups: usize,
    /// Paired rounds of lookups.
    #[arg(long, default_value_t = 30)]
    rounds: usize,
    /// Paired fills (each builds both filters; the last pair serves the lookups).
    #[arg(long, default_value_t = 3)]
    build_pairs: usize,
    /// Fingerprint bits (bucket size 4).
    #[arg(long, default_value_t = 12)]
    bits: u32,
    /// Keys per `contains_batch` call.
    #[arg(long, default_value_t = 256)]
    batch: usize,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let original = match std::fs::read_to_string(THP_MODE) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("cannot read {THP_MODE}: {error} (transparent huge pages are Linux-only)");
            return ExitCode::FAILURE;
        }
    };
    // The active mode is the bracketed one: "always [madvise] never".
    let active = original.split_whitespace().find(|w| w.starts_with('[')).map(|w| w.trim_matches(['[', ']']));
    let result = run(&cli);
    if let Some(mode) = active
        && let Err(error) = std::fs::write(THP_MODE, mode)
    {
        eprintln!("could not restore transparent huge pages to `{mode}`: {error}");
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> Result<(), String> {
    let set_mode = |mode: &str| {
        std::fs::write(THP_MODE, mode)
            .map_err(|error| format!("cannot set {THP_MODE} to `{mode}` ({error}): run as root"))
    };
    let keys = u64_keys(1, 0, cli.keys);
    let absent = u64_keys(1, cli.keys as u64, cli.lookups);

    // Builds alternate too, each pair in swapped order; the last pair is kept for the lookups.
    let mut insert_ratios = Vec::new();
    let mut kept = None;
    for pair in 0..cli.build_pairs.max(1) {
        let build_in = |mode| set_mode(mode).and_then(|()| build(cli, &keys));
        let ((huge, insert_huge), (small, insert_small)) = if pair % 2 == 0 {
            let huge = build_in("madvise")?;
            (huge, build_in("never")?)
        } else {
            let small = build_in("never")?;
            (build_in("madvise")?, small)
        };
        insert_ratios.push(insert_huge / insert_small);
        kept = Some((huge, small));
    }
    let (huge, small) = kept.expect("at least one pair is built");
    println!(
        "{} keys, {}-bit fingerprints, {:.1} MiB per table; huge pages in use: {} KiB",
        cli.keys,
        cli.bits,
        huge.memory_bytes() as f64 / (1 << 20) as f64,
        anon_huge_kib().map_or("unknown".to_string(), |kib| kib.to_string())
    );
    println!("time on huge pages / time on 4 KiB pages:");
    println!("  insert_batch, {} paired fills: {}", insert_ratios.len(), quartiles(&mut insert_ratios));

    let one_by_one = |filter: &CuckooFilter| {
        let (elapsed, hits) = time(|| absent.iter().filter(|key| black_box(filter.contains(*key))).count());
        black_box(hits);
        ns_per_op(elapsed, absent.len())
    };
    let batched = |filter: &CuckooFilter| {
        let (elapsed, ()) = time(|| {
            for chunk in absent.chunks(cli.batch.max(1)) {
                black_box(filter.contains_batch(chunk));
            }
        });
        ns_per_op(elapsed, absent.len())
    };
    let (mut one_ratios, mut batch_ratios) = (Vec::new(), Vec::new());
    for round in 0..cli.rounds {
        // Alternate the order, so that neither table always runs second (warmer, or later in a
        // burst of load from another process).
        let (first, second) = if round % 2 == 0 { (&huge, &small) } else { (&small, &huge) };
        let times = [first, second].map(|filter| (one_by_one(filter), batched(filter)));
        let [(huge_one, huge_batch), (small_one, small_batch)] =
            if round % 2 == 0 { times } else { [times[1], times[0]] };
        one_ratios.push(huge_one / small_one);
        batch_ratios.push(huge_batch / small_batch);
    }
    let rounds = format!("{} paired rounds of {} absent keys", cli.rounds, cli.lookups);
    println!("  lookups one by one, {rounds}: {}", quartiles(&mut one_ratios));
    println!("  lookups batched, {rounds}: {}", quartiles(&mut batch_ratios));
    Ok(())
}

/// A filter holding `keys`, and the ns per key its batched fill took.
fn build(cli: &Cli, keys: &[u64]) -> Result<(CuckooFilter, f64), String> {
    let mut filter = CuckooFilter::builder()
        .capacity(keys.len())
        .fingerprint_bits(cli.bits)
        .build()
        .map_err(|error| error.to_string())?;
    let (elapsed, results) = time(|| filter.insert_batch(keys));
    let failed = results.iter().filter(|result| result.is_err()).count();
    if failed > 0 {
        return Err(format!("{failed} inserts failed"));
    }
    Ok((filter, ns_per_op(elapsed, keys.len())))
}

/// Anonymous memory of this process on transparent huge pages.
fn anon_huge_kib() -> Option<u64> {
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").ok()?;
    let line = rollup.lines().find(|line| line.starts_with("AnonHugePages:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// "median m (quartiles q1-q3)" of `ratios`.
fn quartiles(ratios: &mut [f64]) -> String {
    if ratios.is_empty() {
        return "no rounds".to_string();
    }
    ratios.sort_by(f64::total_cmp);
    let at = |q: usize| ratios[(ratios.len() - 1) * q / 4];
    format!("median {:.3} (quartiles {:.3}-{:.3})", at(2), at(1), at(3))
}

#[cfg(test)]
mod tests {
    use super::quartiles;

    #[test]
    fn quartiles_of_ratios() {
        assert_eq!(quartiles(&mut []), "no rounds");
        assert_eq!(quartiles(&mut [1.0]), "median 1.000 (quartiles 1.000-1.000)");
        let mut ratios = [0.9, 1.1, 0.8, 1.0, 0.95];
        assert_eq!(quartiles(&mut ratios), "median 0.950 (quartiles 0.900-1.000)");
    }
}
