//! The same work as `bench/capi_bench.c` through the Rust API (a `ConcurrentFilter`, as the C
//! API's `bugu_filter` uses): the difference is what the C boundary costs.
//! Usage: `cargo run --release -p bugu-capi --example rust_bench -- N` (or `scripts/bench-capi`).

use std::time::Instant;

use bugu::{ConcurrentFilter, CuckooFilter, Filter};

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn fresh(n: usize) -> ConcurrentFilter {
    CuckooFilter::builder().capacity(n).fingerprint_bits(12).build_concurrent().expect("filter")
}

fn per_key(start: Instant, n: usize) -> f64 {
    start.elapsed().as_nanos() as f64 / n as f64
}

fn median(mut runs: Vec<f64>) -> f64 {
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

fn main() {
    let n: usize = std::env::args().nth(1).map_or(1_000_000, |arg| arg.parse().expect("N"));
    let mut state = 42;
    let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut state)).collect();
    let absent: Vec<u64> = (0..n).map(|_| splitmix(&mut state)).collect();
    let mut one: [Vec<f64>; 3] = Default::default();
    let mut batched: [Vec<f64>; 3] = Default::default();
    let mut hits = 0;
    for _ in 0..3 {
        let f = fresh(n);
        let t = Instant::now();
        keys.iter().for_each(|key| f.insert(key).expect("insert"));
        one[0].push(per_key(t, n));
        let t = Instant::now();
        hits += keys.iter().filter(|key| f.contains(*key)).count();
        one[1].push(per_key(t, n));
        let t = Instant::now();
        hits += absent.iter().filter(|key| f.contains(*key)).count();
        one[2].push(per_key(t, n));

        let f = fresh(n);
        let t = Instant::now();
        assert!(f.insert_batch(&keys).iter().all(Result::is_ok));
        batched[0].push(per_key(t, n));
        let t = Instant::now();
        hits += f.contains_batch(&keys).iter().filter(|&&hit| hit).count();
        batched[1].push(per_key(t, n));
        let t = Instant::now();
        hits += f.contains_batch(&absent).iter().filter(|&&hit| hit).count();
        batched[2].push(per_key(t, n));
    }
    for (name, runs) in [("bugu Rust API, 1-by-1", one), ("bugu Rust API, batched", batched)] {
        let [insert, present, missing] = runs.map(median);
        println!(
            "{name:<24} n={n:<9} insert {insert:6.1}  contains(present) {present:6.1}  contains(absent) {missing:6.1} ns/key"
        );
    }
    eprintln!("(hits: {hits})");
}
