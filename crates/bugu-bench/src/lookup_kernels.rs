//! A one-by-one lookup taken apart at memory scale: bugu's `contains` against the C++ reference's
//! lookup kernel, transcribed into Rust and run in the same process on a table of the same size.
//!
//! Run against the C++ binary (`vs_fastfilter`), a ratio mixes two processes, two allocators and
//! minutes of other tenants' load between them. Here bugu's table and the reference's, of the
//! same size, are read in the same process, in rounds of a few hundred thousand lookups per
//! variant, alternated (each round starting with the next variant); the report gives each
//! variant's median time and the median of its per-round ratios to the reference kernel. The
//! variants:
//!
//! - `bugu contains(&key)`: the `compare` harness's one-by-one row: the key hashed through `Hash`
//!   with the default hash function (id 2: a 64-bit key goes through SplitMix64's mixer), then the
//!   lookup compiled for the table's geometry, which for the default geometry is inlined;
//! - `bugu contains(&key), hash id 1`: the same with a filter built with `HashFunction::Xxh3`
//!   (XXH3-64 for every key, the only function before id 2), to show what the hash costs;
//! - `bugu contains_hash(mix)`: the default filter's lookup given MurmurHash3's finaliser of the
//!   key (the reference's hash), to show what is left beside the hash;
//! - the reference kernel out of line: FastFilter's `CuckooFilterStable<uint64_t, 12>::Contain`
//!   ([`ReferenceFilter::contains`]), called through a function pointer, as the C++ benchmark's
//!   loop calls `Contain` (a call there too);
//! - the same kernel inlined into the loop: the least a two-bucket lookup of this layout costs
//!   when the caller's loop and the lookup are compiled together;
//! - the memory floor: two independent random line reads per lookup from a buffer of the size.
//!
//! Before each variant, a sweep over a buffer twice this machine's L3 (64 MiB) evicts the table
//! the variant before it read: without it, a variant that follows another on the same table finds
//! part of the table still in the cache and is timed faster than it would be on its own.
//!
//! The reference table holds random bytes: neither kernel branches on what it reads, so the
//! contents change no timing (bugu's own table is filled with the keys, as in the harness).

use std::hint::black_box;

use bugu::hash::HashFunction;
use bugu::{CuckooFilter, Filter, FilterMut};

use crate::machine::{Loads, context};
use crate::memory_floor::{self, Floor};
use crate::reference_cuckoo::{ReferenceFilter, murmur3_fmix64};
use crate::report::rounds::Rounds;
use crate::timing::{Clock, ns_per_op};
use crate::workload::u64_keys;

/// The reference kernel behind a function pointer: the call the C++ benchmark's loop makes.
#[inline(never)]
fn reference_out_of_line(kernel: &ReferenceFilter, key: u64) -> bool {
    kernel.contains(key)
}

/// What is timed, in the order each round runs them.
pub const VARIANTS: [&str; 5] = [
    "bugu contains(&key)",
    "bugu contains(&key), hash id 1",
    "bugu contains_hash(mix)",
    "reference kernel, out of line",
    "reference kernel, inlined",
];
/// The variant the others are divided by.
pub const BASELINE: usize = 3;

/// One size's measurements.
#[derive(Debug, Clone)]
pub struct KernelRun {
    pub keys: usize,
    /// Bytes of each bugu filter's table (both filters have the same).
    pub bugu_bytes: usize,
    pub reference_bytes: usize,
    /// ns per lookup of each variant in each round.
    pub rounds: Rounds,
    pub floor: Floor,
    /// Lookups each variant makes in each round.
    pub chunk: usize,
}

/// Builds bugu's filters (default hash, hash id 1) with `keys` keys and the reference table for as
/// many, then times every variant on `chunk` absent keys per round, `rounds` rounds, alternated.
///
/// # Panics
/// If `keys` or `rounds` is 0, or bugu refuses a key below its capacity (a bug).
pub fn measure(keys: usize, rounds: usize, chunk: usize, seed: u64) -> KernelRun {
    assert!(keys > 0 && rounds > 0 && chunk > 0, "something to measure");
    let present = u64_keys(seed, 0, keys);
    let filled = |function: HashFunction| {
        let mut filter = CuckooFilter::builder()
            .capacity(keys)
            .hash_function(function)
            .build()
            .expect("a filter for the keys");
        for key in &present {
            filter.insert(key).expect("a key below the capacity");
        }
        filter
    };
    let (filter, filter_xxh3) = (filled(HashFunction::default()), filled(HashFunction::Xxh3));
    let reference = ReferenceFilter::random(keys, seed);
    // Keys from another range of the same generator: absent, as in a `find 0%` mix.
    let key_sets = rounds.min(16);
    let absent = u64_keys(seed, keys as u64, chunk * key_sets);
    let out_of_line: fn(&ReferenceFilter, u64) -> bool = black_box(reference_out_of_line);

    let sweep = memory_floor::advised_bytes(EVICTION_BYTES, |i| i as u8);
    let mut times = Rounds::new(&VARIANTS, BASELINE);
    for round in 0..rounds {
        let lookups = &absent[(round % key_sets) * chunk..][..chunk];
        for variant in times.order(round) {
            let ns = match variant {
                0 => time_lookups(&sweep, lookups, |key| filter.contains(&key)),
                1 => time_lookups(&sweep, lookups, |key| filter_xxh3.contains(&key)),
                2 => time_lookups(&sweep, lookups, |key| filter.contains_hash(murmur3_fmix64(key))),
                3 => time_lookups(&sweep, lookups, |key| out_of_line(&reference, key)),
                _ => time_lookups(&sweep, lookups, |key| reference.contains(key)),
            };
            times.record(variant, ns);
        }
    }
    let floor = memory_floor::measure(filter.memory_bytes(), chunk.max(1_000_000), 5, 0, Clock::Wall);
    KernelRun {
        keys,
        bugu_bytes: filter.memory_bytes(),
        reference_bytes: reference.memory_bytes(),
        rounds: times,
        floor,
        chunk,
    }
}

/// The report of a run over several sizes: header, then per size the medians, the ratios with
/// their quartiles, and the memory floor.
pub fn render(machine: &str, load: Loads, rounds: usize, runs: &[KernelRun]) -> String {
    use crate::report::mib;
    use std::fmt::Write as _;
    let mut out = String::from(
        "# One-by-one lookups taken apart: bugu against the reference kernel, in one process\n\n",
    );
    let _ = writeln!(out, "{}.\n", context(machine, &load));
    let _ = writeln!(
        out,
        "{rounds} rounds per size; each round times every variant on the same absent keys, starting \
         with the next variant each round, after a sweep of {} that evicts the last table read. Times are ns per lookup by wall clock: the median over the rounds. \
         Ratios are to the reference kernel called out of line, taken in each round: their median \
         and quartiles. The variants are described in `crates/bugu-bench/src/lookup_kernels.rs`.\n",
        mib(EVICTION_BYTES)
    );
    for run in runs {
        let _ = writeln!(
            out,
            "## {} keys\n\n{} lookups per variant per round. Tables: bugu {}, reference {}.\n",
            run.keys,
            run.chunk,
            mib(run.bugu_bytes),
            mib(run.reference_bytes)
        );
        out += &run.rounds.table("lookup");
        let _ = writeln!(
            out,
            "| memory floor (2 random line reads) | {:.1} | {:.3} | |\n",
            run.floor.ns_per_lookup(),
            run.floor.ns_per_lookup() / run.rounds.baseline_ns()
        );
    }
    out
}

/// Bytes swept before each timed loop: twice the 32 MiB L3 of the machines this runs on.
const EVICTION_BYTES: usize = 64 << 20;

/// ns per lookup of a loop that counts the keys `contains` answers yes for, as the C++
/// benchmark's loop does (`found_count += Contain(v)`), timed after a read of one byte per line
/// of `sweep` has pushed the tables out of the caches.
#[inline(always)]
fn time_lookups(sweep: &[u8], keys: &[u64], contains: impl Fn(u64) -> bool) -> f64 {
    black_box(sweep.iter().step_by(memory_floor::LINE_BYTES).fold(0u64, |sum, &byte| sum + u64::from(byte)));
    let (elapsed, found) = Clock::Wall.time(|| keys.iter().map(|&key| contains(key) as usize).sum::<usize>());
    black_box(found);
    ns_per_op(elapsed, keys.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_run_measures_every_variant_in_every_round() {
        let run = measure(20_000, 3, 5_000, 7);
        assert!((0..VARIANTS.len()).all(|v| {
            let times = run.rounds.times(v);
            times.len() == 3 && times.iter().all(|ns| ns.is_finite() && *ns > 0.0)
        }));
        assert!(run.rounds.ratios(BASELINE).iter().all(|&r| r == 1.0));
        assert!(run.reference_bytes >= 20_000 * 12 / 8);
        let report = render("a machine", (Some("0.1 0.2 0.3".into()), None), 3, &[run]);
        for name in VARIANTS {
            assert!(report.contains(&format!("| {name} | ")), "{report}");
        }
        assert!(report.contains("## 20000 keys") && report.contains("memory floor"), "{report}");
    }
}
