//! `concurrent_ops`: the per-operation harness behind `ConcurrentFilter`'s instruction counts in
//! docs/performance.md. From one thread, it fills a `CuckooFilter` and a `ConcurrentFilter` of the
//! same configuration with the same keys (half the capacity, then the rest), checks that their
//! bytes are the same, and looks up absent and present keys in both; each phase is a function of
//! its own that callgrind can count alone. It prints the times of each phase.
//!
//! ```text
//! cargo build --release -p bugu-bench --bin concurrent_ops
//! ./target/release/concurrent_ops --keys 1e6
//! valgrind --tool=callgrind --toggle-collect='concurrent_ops::fill_half_concurrent*' ./target/release/concurrent_ops
//! ```
//! (divide callgrind's instruction total by the phase's operations: `fill_half_*` inserts half
//! the keys, `fill_rest_*` the other half, `find_absent_*` and `find_present_*` look up all keys.)

use std::time::Duration;

use bugu::{ConcurrentFilter, CuckooFilter, Filter, FilterMut};
use bugu_bench::cli::parse_count;
use bugu_bench::timing::{ns_per_op, time};
use bugu_bench::workload::u64_keys;
use clap::Parser;

/// Fills a CuckooFilter and a ConcurrentFilter from one thread and times their phases.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    /// Keys inserted: the filters' capacity.
    #[arg(long, default_value = "1e6", value_parser = parse_count)]
    keys: usize,
}

#[inline(never)]
fn fill_half_cuckoo(filter: &mut CuckooFilter, keys: &[u64]) -> usize {
    keys.iter().filter(|key| filter.insert(*key).is_err()).count()
}

/// Walks the keys backwards, so that the compiler does not fold it into `fill_half_cuckoo`.
#[inline(never)]
fn fill_rest_cuckoo(filter: &mut CuckooFilter, keys: &[u64]) -> usize {
    keys.iter().rev().filter(|key| filter.insert(*key).is_err()).count()
}

#[inline(never)]
fn fill_half_concurrent(filter: &ConcurrentFilter, keys: &[u64]) -> usize {
    keys.iter().filter(|key| filter.insert(*key).is_err()).count()
}

#[inline(never)]
fn fill_rest_concurrent(filter: &ConcurrentFilter, keys: &[u64]) -> usize {
    keys.iter().rev().filter(|key| filter.insert(*key).is_err()).count()
}

#[inline(never)]
fn find_absent_cuckoo(filter: &CuckooFilter, keys: &[u64]) -> usize {
    keys.iter().filter(|key| filter.contains(*key)).count()
}

#[inline(never)]
fn find_absent_concurrent(filter: &ConcurrentFilter, keys: &[u64]) -> usize {
    keys.iter().filter(|key| filter.contains(*key)).count()
}

/// Walks the keys backwards, so that the compiler does not fold it into `find_absent_cuckoo`.
#[inline(never)]
fn find_present_cuckoo(filter: &CuckooFilter, keys: &[u64]) -> usize {
    keys.iter().rev().filter(|key| filter.contains(*key)).count()
}

#[inline(never)]
fn find_present_concurrent(filter: &ConcurrentFilter, keys: &[u64]) -> usize {
    keys.iter().rev().filter(|key| filter.contains(*key)).count()
}

fn main() {
    let cli = Cli::parse();
    let keys = u64_keys(42, 0, cli.keys);
    let absent = u64_keys(42, cli.keys as u64, cli.keys);
    let (half, rest) = keys.split_at(cli.keys / 2);
    let mut cuckoo = CuckooFilter::new(cli.keys).expect("a capacity the machine can hold");
    let concurrent = ConcurrentFilter::new(cli.keys).expect("a capacity the machine can hold");

    let line = |phase: &str, ops: usize, cuckoo: Duration, concurrent: Duration, extra: String| {
        println!(
            "{phase:<14} {:>9.1} ns {:>9.1} ns {:>6.2}x  ({ops} ops{extra})",
            ns_per_op(cuckoo, ops),
            ns_per_op(concurrent, ops),
            concurrent.as_secs_f64() / cuckoo.as_secs_f64()
        );
    };
    println!("{:<14} {:>12} {:>12}  concurrent/cuckoo", "phase", "cuckoo", "concurrent");
    let (cuckoo_time, refused) = time(|| fill_half_cuckoo(&mut cuckoo, half));
    let (concurrent_time, refused_concurrent) = time(|| fill_half_concurrent(&concurrent, half));
    line("fill 0-50%", half.len(), cuckoo_time, concurrent_time, note(refused, refused_concurrent));
    let (cuckoo_time, refused_rest) = time(|| fill_rest_cuckoo(&mut cuckoo, rest));
    let (concurrent_time, refused_concurrent) = time(|| fill_rest_concurrent(&concurrent, rest));
    line("fill 50-100%", rest.len(), cuckoo_time, concurrent_time, note(refused_rest, refused_concurrent));
    let shared = concurrent.to_filter().expect("room for a copy");
    assert_eq!(shared.to_bytes(), cuckoo.to_bytes(), "the same bytes after the same inserts");

    let (cuckoo_time, found) = time(|| find_absent_cuckoo(&cuckoo, &absent));
    let (concurrent_time, found_concurrent) = time(|| find_absent_concurrent(&concurrent, &absent));
    assert_eq!(found, found_concurrent, "the same false positives");
    line("find absent", absent.len(), cuckoo_time, concurrent_time, format!(", {found} false positives"));
    let (cuckoo_time, found) = time(|| find_present_cuckoo(&cuckoo, &keys));
    let (concurrent_time, found_concurrent) = time(|| find_present_concurrent(&concurrent, &keys));
    assert_eq!(found, found_concurrent, "the same answers");
    // A refused key may still be found (another key's fingerprint), so only a fill that refused
    // none is checked for false negatives.
    if refused + refused_rest == 0 {
        assert_eq!(found, keys.len(), "no false negative");
    }
    line("find present", keys.len(), cuckoo_time, concurrent_time, String::new());
}

/// The refused inserts, if any, as a note for a line.
fn note(cuckoo: usize, concurrent: usize) -> String {
    assert_eq!(cuckoo, concurrent, "the same inserts refused");
    if cuckoo == 0 { String::new() } else { format!(", {cuckoo} refused") }
}
