//! `bugu bench`: the "Bloom vs cuckoo" table measured on this machine — memory, insert time,
//! query time and false-positive rate of bugu and of a Bloom filter (fastbloom) configured for
//! the same target rate.
//!
//! The measuring is `bugu-bench`'s harness, compiled in only with the `bench` feature: it brings
//! the chart library and the rival filter crates, most of what installing the command would
//! otherwise compile. Without the feature the command says how to get it.

#[cfg(feature = "bench")]
mod harness;

use std::path::Path;

use crate::error::{Failure, Status};
use crate::report::Output;

/// How to get a `bugu` with the table, for a build without it.
#[cfg(not(feature = "bench"))]
const NOT_BUILT: &str = "bench is not part of this build of bugu, to keep its install small; \
    install it with `cargo install --path crates/bugu-cli --features bench`, \
    or run `cargo run --release -p bugu-bench --bin compare -- --seed-table`";

pub(crate) fn bench(
    sizes: Option<Vec<usize>>,
    fpr: f64,
    repeats: usize,
    plot: Option<&Path>,
    output: Output,
) -> Result<Status, Failure> {
    if !(fpr > 0.0 && fpr < 0.5) {
        return Err(Failure::message(format!("--fpr must be between 0 and 0.5, got {fpr}")));
    }
    #[cfg(feature = "bench")]
    return harness::measure(sizes, fpr, repeats, plot, output);
    #[cfg(not(feature = "bench"))]
    {
        // The flags are still parsed and checked, so a script's mistake shows the same either way.
        let _ = (sizes, repeats, plot, output);
        Err(Failure::message(NOT_BUILT))
    }
}
