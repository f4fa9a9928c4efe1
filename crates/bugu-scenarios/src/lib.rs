//! The cuckoo filter end to end with real components: three scenarios, each a runnable example
//! that prints what it measured.
//!
//! | Scenario | Run it | What it shows |
//! |---|---|---|
//! | [`database`] | `cargo run --release -p bugu-scenarios --example database` | A filter of a SQLite table's ids in front of point lookups, kept in step with inserts and deletes, rebuilt when another program writes rows behind its back, saved beside the database and rebuilt when the saved copy is missing, corrupt or stale |
//! | [`cache`] | `cargo run --release -p bugu-scenarios --example cache` | Two LRU URL caches whose filters track their contents through evictions, exchanging the filters' bytes as cache digests read in place, with the answers a digest makes stale counted |
//! | [`blocklist`] | `cargo run --release -p bugu-scenarios --example blocklist` | A few million IPv4 addresses and CIDR ranges, ten million lookups one at a time, batched, and from two threads sharing a concurrent filter |
//!
//! Nothing is mocked: the database is SQLite (bundled through `rusqlite`) on disk in a temporary
//! directory, the caches are `lru::LruCache`s whose digests cross a TCP connection, the blocklist
//! is parsed from text. Every answer of a filter is checked against the exact data it stands
//! for, so each report states its false negatives (always 0) and its measured false-positive
//! rate next to the filter's bound. (The bound is the expected rate of a full filter; a measured
//! rate is a sample of it, and on a small run can land a little above it.)
//!
//! Each scenario is a module with the same shape: a `Config` (its [`Default`] is the full-size
//! run of the example, `Config::small()` the size the tests run), a `run(&Config)` that builds
//! everything, runs the workload and returns a `Report` of the measured numbers, and the report's
//! [`Display`](std::fmt::Display), one line per number with its unit. The workloads are drawn from
//! a seeded generator, so two runs do the same work; only the times differ.
//!
//! ```
//! let report = bugu_scenarios::blocklist::run(&bugu_scenarios::blocklist::Config::small())?;
//! assert_eq!(report.passes.iter().map(|pass| pass.false_negatives).sum::<usize>(), 0);
//! println!("{report}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod blocklist;
pub mod cache;
pub mod database;
mod util;
