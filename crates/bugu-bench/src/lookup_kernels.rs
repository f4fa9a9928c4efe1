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
//!   (MurmurHash3's finaliser of key + seed; bucket `reduce(low 32 bits, n)`; tag the high bits'
//!   low 12, 0 read as 1; alternate `n - i - r`, `r` odd from the tag; one unaligned 8-byte load
//!   per bucket and the `haszero12` test), called through a function pointer, as the C++
//!   benchmark's loop calls `Contain` (a call there too);
//! - the same kernel inlined into the loop: the least a two-bucket lookup of this layout costs
//!   when the caller's loop and the lookup are compiled together;
//! - the memory floor: two independent random line reads per lookup from a buffer of the size.
//!
//! Before each variant, a sweep over a buffer twice this machine's L3 (64 MiB) evicts the table
//! the variant before it read: without it, a variant that follows another on the same table found
//! a fifth of a 150 MiB table's lines still in the 32 MiB L3, and took 10-15% less time for it.
//!
//! The reference table holds random bytes: neither kernel branches on what it reads, so the
//! contents change no timing (bugu's own table is filled with the keys, as in the harness).

use std::hint::black_box;

use bugu::hash::HashFunction;
use bugu::{CuckooFilter, Filter, FilterMut};

use crate::memory_floor::{self, Floor};
use crate::timing::{Clock, median, ns_per_op};
use crate::workload::{SplitMix64, u64_keys};

/// Bytes per bucket of the reference: four 12-bit tags.
const BUCKET_BYTES: usize = 6;

/// FastFilter's `CuckooFilterStable<uint64_t, 12, SingleTable, SimpleMixSplit>` lookup.
pub struct ReferenceKernel {
    /// The packed buckets and 8 bytes more, so that the last bucket's 8-byte load stays inside.
    bytes: Vec<u8>,
    buckets: u32,
    seed: u64,
}

impl ReferenceKernel {
    /// A table sized as the reference sizes one for `keys` keys (`(10 + keys / 0.94 / 4) / 2 * 2`
    /// buckets), of random bytes.
    ///
    /// # Panics
    /// If that is more buckets than the reference's `i32` bucket arithmetic addresses.
    pub fn new(keys: usize, seed: u64) -> Self {
        let buckets = ((10.0 + keys as f64 / 0.94 / 4.0) as u64 / 2 * 2).max(2);
        // The alternate is computed in `i32`, as the reference computes it.
        let buckets = i32::try_from(buckets).expect("the reference indexes buckets with an i32") as u32;
        let mut random = SplitMix64::new(seed);
        let bytes =
            memory_floor::advised_vec(buckets as usize * BUCKET_BYTES + 8, |_| random.next_u64() as u8);
        ReferenceKernel { bytes, buckets, seed: random.next_u64() }
    }

    /// Bytes the table takes.
    pub fn memory_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the key's tag is in either of its buckets.
    #[inline(always)]
    pub fn contains(&self, key: u64) -> bool {
        let hash = murmur3_fmix64(key.wrapping_add(self.seed));
        let (tag, b1, b2) = self.locate(hash);
        let pattern = 0x0010_0100_1001u64 * u64::from(tag);
        // SAFETY: `locate` gives buckets below `buckets`: `reduce(_, n) < n`, and the alternate
        // is `n - b1 - r` with `r` odd in `1..n`, plus `n` when negative, so in `0..n` (the test
        // below checks both).
        let (w1, w2) = unsafe { (self.window(b1), self.window(b2)) };
        has_zero_12(w1 ^ pattern) | has_zero_12(w2 ^ pattern)
    }

    #[inline(always)]
    fn locate(&self, hash: u64) -> (u32, u32, u32) {
        let b1 = reduce(hash, self.buckets);
        let mut tag = (hash >> 32) as u32 & 0xfff;
        tag += u32::from(tag == 0);
        let b2 = self.buckets as i32 - b1 as i32 - self.offset(tag) as i32;
        (tag, b1, if b2 < 0 { b2 + self.buckets as i32 } else { b2 } as u32)
    }

    /// The odd offset, in `1..buckets`, from which a tag's alternate bucket is found.
    #[inline(always)]
    fn offset(&self, tag: u32) -> u32 {
        (reduce(u64::from(tag).wrapping_mul(0xc4ce_b9fe_1a85_ec53), self.buckets >> 1) << 1) + 1
    }

    /// The 8 bytes from the start of a bucket, as the reference loads them: unchecked, as the
    /// reference's load is (a check per load does not compile away, and made the kernel bugu is
    /// judged against six instructions longer).
    ///
    /// # Safety
    /// `bucket < self.buckets`.
    #[inline(always)]
    unsafe fn window(&self, bucket: u32) -> u64 {
        debug_assert!(bucket < self.buckets, "a bucket of the table");
        let offset = bucket as usize * BUCKET_BYTES;
        // SAFETY: the table holds `buckets * 6 + 8` bytes and the caller guarantees `bucket <
        // buckets`, so the 8 bytes from `offset` are inside it; any bytes are a valid `u64`,
        // read without alignment.
        u64::from_le(unsafe { self.bytes.as_ptr().add(offset).cast::<u64>().read_unaligned() })
    }
}

/// Lemire's reduction of the low 32 bits onto `0..n`, as the reference computes it.
#[inline(always)]
fn reduce(hash: u64, n: u32) -> u32 {
    (((hash & 0xffff_ffff) * u64::from(n)) >> 32) as u32
}

/// MurmurHash3's 64-bit finaliser, the reference's `murmur64`.
#[inline(always)]
fn murmur3_fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The reference's `haszero12` over four 12-bit lanes: the borrow test.
#[inline(always)]
fn has_zero_12(x: u64) -> bool {
    x.wrapping_sub(0x0010_0100_1001) & !x & 0x8008_0080_0800 != 0
}

/// The reference kernel behind a function pointer: the call the C++ benchmark's loop makes.
#[inline(never)]
fn reference_out_of_line(kernel: &ReferenceKernel, key: u64) -> bool {
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
    /// ns per lookup: `per_round[v][r]` for variant `v` in round `r`.
    pub per_round: Vec<Vec<f64>>,
    pub floor: Floor,
    /// Lookups each variant makes in each round.
    pub chunk: usize,
}

impl KernelRun {
    /// The median ns per lookup of variant `v`.
    pub fn median_ns(&self, v: usize) -> f64 {
        median(&self.per_round[v])
    }

    /// The per-round ratios of variant `v` to the baseline, sorted.
    pub fn ratios(&self, v: usize) -> Vec<f64> {
        let mut ratios: Vec<f64> =
            self.per_round[v].iter().zip(&self.per_round[BASELINE]).map(|(a, b)| a / b).collect();
        ratios.sort_by(f64::total_cmp);
        ratios
    }
}

/// Builds bugu's filters (default hash, hash id 1) with `keys` keys and the reference table for as
/// many, then times every variant on `chunk` absent keys per round, `rounds` rounds, alternated.
///
/// # Panics
/// If `keys` or `rounds` is 0, or bugu refuses a key below its capacity (a bug).
pub fn measure(keys: usize, rounds: usize, chunk: usize, seed: u64) -> KernelRun {
    assert!(keys > 0 && rounds > 0 && chunk > 0, "something to measure");
    let filled = |function: HashFunction| {
        let mut filter = CuckooFilter::builder()
            .capacity(keys)
            .hash_function(function)
            .build()
            .expect("a filter for the keys");
        for key in u64_keys(seed, 0, keys) {
            filter.insert(&key).expect("a key below the capacity");
        }
        filter
    };
    let (filter, filter_xxh3) = (filled(HashFunction::default()), filled(HashFunction::Xxh3));
    let reference = ReferenceKernel::new(keys, seed);
    // Keys from another range of the same generator: absent, as in a `find 0%` mix.
    let key_sets = rounds.min(16);
    let absent = u64_keys(seed, keys as u64, chunk * key_sets);
    let out_of_line: fn(&ReferenceKernel, u64) -> bool = black_box(reference_out_of_line);

    let sweep = memory_floor::advised_vec(EVICTION_BYTES / 8, |i| i as u64);
    let mut per_round = vec![Vec::with_capacity(rounds); VARIANTS.len()];
    for round in 0..rounds {
        let lookups = &absent[(round % key_sets) * chunk..][..chunk];
        // Each round starts with the next variant: none always runs first, or after the same one.
        for variant in (0..VARIANTS.len()).map(|k| (round + k) % VARIANTS.len()) {
            let ns = match variant {
                0 => time_lookups(&sweep, lookups, |key| filter.contains(&key)),
                1 => time_lookups(&sweep, lookups, |key| filter_xxh3.contains(&key)),
                2 => time_lookups(&sweep, lookups, |key| filter.contains_hash(murmur3_fmix64(key))),
                3 => time_lookups(&sweep, lookups, |key| out_of_line(&reference, key)),
                _ => time_lookups(&sweep, lookups, |key| reference.contains(key)),
            };
            per_round[variant].push(ns);
        }
    }
    let floor = memory_floor::measure(filter.memory_bytes(), chunk.max(1_000_000), 5, Clock::Wall);
    KernelRun {
        keys,
        bugu_bytes: filter.memory_bytes(),
        reference_bytes: reference.memory_bytes(),
        per_round,
        floor,
        chunk,
    }
}

/// The report of a run over several sizes: header, then per size the medians, the ratios with
/// their quartiles, and the memory floor.
pub fn render(
    machine: &str,
    load: (Option<String>, Option<String>),
    rounds: usize,
    runs: &[KernelRun],
) -> String {
    use crate::machine::load_text;
    use crate::report::mib;
    use std::fmt::Write as _;
    let mut out = String::from(
        "# One-by-one lookups taken apart: bugu against the reference kernel, in one process\n\n",
    );
    let _ = writeln!(
        out,
        "Machine: {machine}. Load average (1, 5, 15 min) at the start: {}; at the end: {}.\n",
        load_text(&load.0),
        load_text(&load.1)
    );
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
        out.push_str(
            "| variant | ns per lookup | / reference out of line | quartiles |\n|---|---:|---:|---|\n",
        );
        for (v, name) in VARIANTS.iter().enumerate() {
            let ratios = run.ratios(v);
            let quartile = |q: usize| ratios[(ratios.len() - 1) * q / 4];
            let _ = writeln!(
                out,
                "| {name} | {:.1} | {:.3} | {:.3} - {:.3} |",
                run.median_ns(v),
                median(&ratios),
                quartile(1),
                quartile(3)
            );
        }
        let _ = writeln!(
            out,
            "| memory floor (2 random line reads) | {:.1} | {:.3} | |\n",
            run.floor.ns_per_lookup(),
            run.floor.ns_per_lookup() / run.median_ns(BASELINE)
        );
    }
    out
}

/// Bytes swept before each timed loop: twice the 32 MiB L3 of the machines this runs on.
const EVICTION_BYTES: usize = 64 << 20;

/// ns per lookup of a loop that counts the keys `contains` answers yes for, as the C++
/// benchmark's loop does (`found_count += Contain(v)`), timed after a read of one word per line
/// of `sweep` has pushed the tables out of the caches.
#[inline(always)]
fn time_lookups(sweep: &[u64], keys: &[u64], contains: impl Fn(u64) -> bool) -> f64 {
    black_box(sweep.iter().step_by(8).fold(0u64, |sum, &word| sum.wrapping_add(word)));
    let (elapsed, found) = Clock::Wall.time(|| keys.iter().map(|&key| contains(key) as usize).sum::<usize>());
    black_box(found);
    ns_per_op(elapsed, keys.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_locates_within_the_table_and_its_alternate_is_an_involution() {
        let kernel = ReferenceKernel::new(10_000, 1);
        let mut random = SplitMix64::new(2);
        for _ in 0..100_000 {
            let hash = random.next_u64();
            let (tag, b1, b2) = kernel.locate(hash);
            assert!((1..4096).contains(&tag) && b1 < kernel.buckets && b2 < kernel.buckets);
            assert_ne!(b1, b2);
            // The alternate of the alternate is the first bucket: `b2 = n - b1 - r (mod n)`.
            let r = kernel.offset(tag);
            let back = (2 * kernel.buckets as i64 - b2 as i64 - r as i64) % kernel.buckets as i64;
            assert_eq!(back as u32, b1);
        }
    }

    #[test]
    fn has_zero_12_answers_whether_any_of_four_lanes_is_zero() {
        let mut random = SplitMix64::new(3);
        for _ in 0..100_000 {
            let lanes: [u64; 4] = std::array::from_fn(|_| random.next_u64() % 3);
            let garbage = random.next_u64() << 48;
            let word = lanes.iter().enumerate().fold(garbage, |w, (i, &lane)| w | lane << (12 * i));
            assert_eq!(has_zero_12(word), lanes.contains(&0), "{lanes:?}");
        }
    }

    #[test]
    fn a_small_run_measures_every_variant_in_every_round() {
        let run = measure(20_000, 3, 5_000, 7);
        assert_eq!(run.per_round.len(), VARIANTS.len());
        assert!(
            run.per_round
                .iter()
                .all(|times| times.len() == 3 && times.iter().all(|ns| ns.is_finite() && *ns > 0.0))
        );
        assert!(run.ratios(BASELINE).iter().all(|&r| r == 1.0));
        assert!(run.reference_bytes >= 20_000 * 12 / 8);
        let report = render("a machine", (Some("0.1 0.2 0.3".into()), None), 3, &[run]);
        for name in VARIANTS {
            assert!(report.contains(&format!("| {name} | ")), "{report}");
        }
        assert!(report.contains("## 20000 keys") && report.contains("memory floor"), "{report}");
    }
}
