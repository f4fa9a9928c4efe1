//! `expanding_ops`: the per-operation harness behind the ExpandingFilter's instruction counts and
//! resident-memory figures in docs/performance.md. It grows an `ExpandingFilter` from `--initial`
//! keys to `--keys`, then looks up absent and present keys one by one, each phase in its own
//! function that callgrind can count alone; it prints the times, and the resident memory the fill
//! added (Linux `VmRSS`) beside `memory_bytes`.
//!
//! ```text
//! cargo build --release -p bugu-bench --bin expanding_ops
//! ./target/release/expanding_ops --keys 1e7
//! valgrind --tool=callgrind --toggle-collect='expanding_ops::find_absent*' ./target/release/expanding_ops
//! ```
//! (divide callgrind's instruction total by 3 x keys: three passes; `find_present*` and `fill*`
//! likewise, `fill` by keys.)

use std::hint::black_box;

use bugu::{ExpandingFilter, Filter, FilterMut};
use bugu_bench::cli::parse_count;
use bugu_bench::timing::{ns_per_op, time};
use bugu_bench::workload::u64_keys;
use clap::Parser;

/// Grows an ExpandingFilter and times its lookups, one phase per function.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    /// Keys inserted.
    #[arg(long, default_value = "1e6", value_parser = parse_count)]
    keys: usize,
    /// Initial capacity.
    #[arg(long, default_value = "1000", value_parser = parse_count)]
    initial: usize,
    /// Declared maximum.
    #[arg(long, default_value = "1e8", value_parser = parse_count)]
    max_items: usize,
}

#[inline(never)]
fn fill(filter: &mut ExpandingFilter, keys: &[u64]) {
    for key in keys {
        filter.insert(key).expect("the declared maximum is above the keys");
    }
}

#[inline(never)]
fn find_absent(filter: &ExpandingFilter, keys: &[u64]) -> usize {
    keys.iter().filter(|key| filter.contains(*key)).count()
}

/// Walks the keys backwards, so that the compiler does not fold it into `find_absent`.
#[inline(never)]
fn find_present(filter: &ExpandingFilter, keys: &[u64]) -> usize {
    keys.iter().rev().filter(|key| filter.contains(*key)).count()
}

/// Looks up keys in batches of 256, as the `growth` harness's batched rows do.
#[inline(never)]
fn find_batched(filter: &ExpandingFilter, keys: &[u64]) -> usize {
    keys.chunks(256)
        .map(|batch| filter.contains_batch(batch).into_iter().filter(|&found| found).count())
        .sum()
}

/// Resident memory in KiB, where `/proc` tells it.
fn resident_kib() -> Option<u64> {
    proc_kib("/proc/self/status", "VmRSS:")
}

/// The KiB a `/proc` file gives on its line starting with `label`.
fn proc_kib(path: &str, label: &str) -> Option<u64> {
    let status = std::fs::read_to_string(path).ok()?;
    status.lines().find(|line| line.starts_with(label))?.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let cli = Cli::parse();
    let present = u64_keys(1, 0, cli.keys);
    let absent = u64_keys(2, 0, cli.keys);
    let before = resident_kib();
    let mut filter = ExpandingFilter::builder()
        .initial_capacity(cli.initial)
        .max_items(cli.max_items as u64)
        .build()
        .expect("a valid configuration");
    let (fill_time, ()) = time(|| fill(&mut filter, &present));
    let bits = |bytes: f64| bytes * 8.0 / cli.keys as f64;
    println!("{} keys grown from {}: insert {:.1} ns", cli.keys, cli.initial, ns_per_op(fill_time, cli.keys));
    println!("memory_bytes: {:.2} bits per item", bits(filter.memory_bytes() as f64));
    if let (Some(before), Some(after)) = (before, resident_kib()) {
        println!(
            "resident memory added by the fill: {:.2} bits per item",
            bits(after.saturating_sub(before) as f64 * 1024.0)
        );
    }
    if let Some(huge) = proc_kib("/proc/self/smaps_rollup", "AnonHugePages:") {
        println!("anonymous huge pages: {:.1} MiB", huge as f64 / 1024.0);
    }
    for pass in 1..=3 {
        let (absent_time, hits) = time(|| find_absent(&filter, &absent));
        let (present_time, found) = time(|| find_present(&filter, &present));
        assert_eq!(found, cli.keys, "a present key read absent");
        let (batched_absent, batched_hits) = time(|| find_batched(&filter, &absent));
        let (batched_present, batched_found) = time(|| find_batched(&filter, &present));
        assert_eq!((batched_hits, batched_found), (hits, found), "batches answer as one by one");
        println!(
            "pass {pass}: absent {:.1} ns ({hits} false positives), present {:.1} ns; batched absent {:.1} ns, present {:.1} ns",
            ns_per_op(absent_time, cli.keys),
            ns_per_op(present_time, cli.keys),
            ns_per_op(batched_absent, cli.keys),
            ns_per_op(batched_present, cli.keys)
        );
    }
    black_box(&filter);
}
