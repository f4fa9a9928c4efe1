//! Comparison harness: bugu against the Rust filter crates a user would pick instead, on the
//! same seeded workload, in the same run.
//!
//! - [`workload`]: seeded distinct keys (64-bit or `user_<id>` strings) and the lookup mixes;
//! - [`contender`]: the [`Contender`](contender::Contender) trait and one implementation per crate;
//! - [`timing`] and [`run`]: timed phases, repeated, medians; correctness checks outside the
//!   timed loops;
//! - [`growth`]: the `growth` binary's rows, per-insert profile, ratio curve and its chart;
//! - [`compare`]: rows × sizes; [`seed_table`]: the Bloom-vs-cuckoo table;
//! - [`report`]: markdown, CSV and SVG charts;
//! - [`cli`]: argument parsing shared by the binaries; [`targets`]: the ratios the reports print,
//!   and the `--target`s they are judged against;
//! - [`fastfilter_cpp`], [`memory_floor`] and [`vs_fastfilter`]: the side-by-side run against the
//!   C++ reference benchmark, and the memory floor it is judged against;
//! - [`reference_cuckoo`]: the C++ reference's cuckoo filter transcribed into Rust, and
//!   [`lookup_kernels`] and [`insert_kernels`]: bugu's lookups and fills against it, in one
//!   process;
//! - [`threads`]: `bugu::ConcurrentFilter` against locked filters and `atomic-cuckoo-filter`, at
//!   1 and 2 threads.
//!
//! It is a measuring tool only: every figure it prints comes from the run that prints it.

pub mod cli;
pub mod compare;
pub mod contender;
pub mod fastfilter_cpp;
pub mod growth;
pub mod insert_kernels;
pub mod lookup_kernels;
pub mod machine;
pub mod memory_floor;
pub mod reference_cuckoo;
pub mod report;
pub mod run;
pub mod seed_table;
pub mod targets;
pub mod threads;
pub mod timing;
pub mod vs_fastfilter;
pub mod workload;
