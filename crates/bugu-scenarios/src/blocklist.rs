//! A blocklist at line rate: a few million IPv4 addresses, single ones and CIDR ranges expanded
//! to their addresses, in a cuckoo filter; a stream of ten million lookups through the batched
//! API and through a [`ConcurrentFilter`] shared by two threads.
//!
//! ```sh
//! cargo run --release -p bugu-scenarios --example blocklist
//! ```
//!
//! ## What it shows
//!
//! The blocklist is text, one entry a line, as such lists are published: 2,000,000 random
//! addresses (`203.0.113.7`) and CIDR ranges, 2,000 `/24`s and 100 `/20`s (`198.51.100.0/24`).
//! It is parsed with the standard library's `Ipv4Addr`, the ranges expanded to every address
//! they hold, and the distinct addresses (as `u32`) go into a `CuckooFilter` sized for exactly
//! that many, with a 0.1% false-positive rate, through `insert_batch`.
//!
//! The lookups are a stream of ten million addresses, 10% drawn from the blocklist and the rest
//! uniformly at random, checked three ways, each timed: one at a time (`contains`), in batches of
//! 4,096 (`contains_batch`, which prefetches the buckets of upcoming addresses while it checks the
//! current ones), and by two threads sharing one `ConcurrentFilter` (a copy of the same table,
//! every operation through `&self`, lookups without locks; the blocklist could be updated through
//! `insert`/`remove` while they run), each taking half of the stream in batches. The answers are
//! compared with an exact set (the sorted addresses, indexed by their top 16 bits): the report
//! gives the lookups per second of each way, the measured false-positive rate, and checks that no
//! blocked address was let through (no false negative) and that the three ways agree.
//!
//! A "maybe blocked" from the filter is where a real system would consult the exact list (on
//! disk, or a remote service), so the false-positive rate is the share of clean traffic that pays
//! for that second check.

use std::error::Error;
use std::fmt;
use std::net::Ipv4Addr;
use std::time::Duration;

use bugu::{ConcurrentFilter, CuckooFilter, Filter, FilterMut};

use crate::util::{Millis, PerSecond, SplitMix64, count, percent, ratio, timed};

/// The sizes of a run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Single random addresses in the blocklist.
    pub addresses: usize,
    /// `/24` ranges (256 addresses each).
    pub ranges_24: usize,
    /// `/20` ranges (4,096 addresses each).
    pub ranges_20: usize,
    /// Lookups in the stream.
    pub lookups: usize,
    /// Share of the lookups drawn from the blocklist (the rest are random addresses).
    pub blocked_share: f64,
    /// The filter's false-positive rate.
    pub false_positive_rate: f64,
    /// Lookups per `contains_batch` call.
    pub batch: usize,
    /// Threads sharing the concurrent filter.
    pub threads: usize,
    /// Seed of the blocklist and of the stream.
    pub seed: u64,
}

impl Default for Config {
    /// The full-size run: about 2.9 million blocked addresses, ten million lookups.
    fn default() -> Self {
        Config {
            addresses: 2_000_000,
            ranges_24: 2_000,
            ranges_20: 100,
            lookups: 10_000_000,
            blocked_share: 0.1,
            false_positive_rate: 0.001,
            batch: 4_096,
            threads: 2,
            seed: 0xb10c,
        }
    }
}

impl Config {
    /// A run of a fraction of a second, for tests.
    pub fn small() -> Self {
        Config { addresses: 20_000, ranges_24: 20, ranges_20: 2, lookups: 200_000, ..Config::default() }
    }
}

/// One way of running the lookups, timed.
#[derive(Debug, Clone)]
pub struct Pass {
    /// How the lookups were made.
    pub name: &'static str,
    /// Through which API.
    pub api: String,
    /// Wall-clock time of the whole stream.
    pub took: Duration,
    /// Addresses reported as maybe blocked.
    pub positives: usize,
    /// Blocked addresses reported as not blocked (must be 0).
    pub false_negatives: usize,
    /// Lookups whose answer differs from the one-at-a-time pass (must be 0).
    pub differs_from_first: usize,
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// Lines of the blocklist text.
    pub lines: usize,
    /// Its size in bytes.
    pub text_bytes: usize,
    /// Single addresses and ranges in it.
    pub singles: usize,
    /// `/24` ranges.
    pub ranges_24: usize,
    /// `/20` ranges.
    pub ranges_20: usize,
    /// Distinct addresses after expanding the ranges.
    pub blocked: usize,
    /// Time to parse and expand the text.
    pub parse_took: Duration,
    /// Time to insert the addresses into the filter.
    pub build_took: Duration,
    /// The filter's memory.
    pub filter_bytes: usize,
    /// Its fingerprint width.
    pub fingerprint_bits: u32,
    /// Its false-positive bound (at full load).
    pub filter_bound: f64,
    /// Lookups in the stream.
    pub lookups: usize,
    /// Lookups of blocked addresses (per the exact set).
    pub blocked_lookups: usize,
    /// Threads of the concurrent pass.
    pub threads: usize,
    /// Lookups per `contains_batch` call.
    pub batch: usize,
    /// One at a time, batched, concurrent.
    pub passes: Vec<Pass>,
}

impl Report {
    /// The measured false-positive rate: positives among lookups of addresses not blocked.
    pub fn false_positive_rate(&self) -> f64 {
        let first = self.passes.first().map_or(0, |pass| pass.positives);
        let false_positives = first.saturating_sub(self.blocked_lookups);
        ratio(false_positives as u64, (self.lookups - self.blocked_lookups) as u64)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "blocklist:              {} lines ({} bytes): {} addresses, {} /24 and {} /20 ranges",
            count(self.lines),
            count(self.text_bytes),
            count(self.singles),
            count(self.ranges_24),
            count(self.ranges_20)
        )?;
        writeln!(
            f,
            "blocked addresses:      {} distinct after expanding the ranges (parsed in {})",
            count(self.blocked),
            Millis(self.parse_took)
        )?;
        writeln!(
            f,
            "filter:                 {}-bit fingerprints, {} bytes ({:.1} bits per address, 32 in a sorted list), built in {}",
            self.fingerprint_bits,
            count(self.filter_bytes),
            self.filter_bytes as f64 * 8.0 / self.blocked.max(1) as f64,
            Millis(self.build_took)
        )?;
        writeln!(
            f,
            "lookups:                {} ({} of blocked addresses)",
            count(self.lookups),
            count(self.blocked_lookups)
        )?;
        for pass in &self.passes {
            writeln!(
                f,
                "{:<24}{} ({}; {})",
                format!("{}:", pass.name),
                PerSecond { operations: self.lookups as u64, took: pass.took },
                Millis(pass.took),
                pass.api
            )?;
        }
        let first = self.passes.first().map_or(0, |pass| pass.positives);
        writeln!(
            f,
            "false-positive rate:    {:.4}% ({} of {} clean addresses; the filter's bound: {:.4}%)",
            self.false_positive_rate() * 100.0,
            count(first.saturating_sub(self.blocked_lookups)),
            count(self.lookups - self.blocked_lookups),
            self.filter_bound * 100.0
        )?;
        let false_negatives: usize = self.passes.iter().map(|pass| pass.false_negatives).sum();
        let differ: usize = self.passes.iter().map(|pass| pass.differs_from_first).sum();
        writeln!(
            f,
            "false negatives:        {} in every pass; answers differing between passes: {}",
            count(false_negatives),
            count(differ)
        )?;
        writeln!(
            f,
            "maybe blocked:          {} of lookups go on to the exact check",
            percent(first as u64, self.lookups as u64, 2)
        )?;
        Ok(())
    }
}

/// Generates the blocklist text: single addresses, then ranges, one a line.
fn blocklist_text(config: &Config, rng: &mut SplitMix64) -> String {
    let mut text = String::with_capacity((config.addresses + config.ranges_24 + config.ranges_20) * 16);
    for _ in 0..config.addresses {
        text.push_str(&Ipv4Addr::from(rng.next_u32()).to_string());
        text.push('\n');
    }
    for (ranges, prefix) in [(config.ranges_24, 24u32), (config.ranges_20, 20)] {
        for _ in 0..ranges {
            let network = rng.next_u32() & (u32::MAX << (32 - prefix));
            text.push_str(&format!("{}/{prefix}\n", Ipv4Addr::from(network)));
        }
    }
    text
}

/// The widest range accepted: a `/16` (65,536 addresses).
const WIDEST_PREFIX: u32 = 16;

/// Parses a blocklist (addresses and CIDR ranges, one a line; blank lines and `#` comments
/// skipped) into its addresses, ranges expanded.
fn parse_blocklist(text: &str) -> Result<Vec<u32>, Box<dyn Error>> {
    let mut addresses = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |why: &str| format!("blocklist line {}: {why}: {line:?}", number + 1);
        let (address, prefix) = match line.split_once('/') {
            Some((address, prefix)) => {
                (address, prefix.parse::<u32>().map_err(|_| bad("bad prefix length"))?)
            }
            None => (line, 32),
        };
        if !(WIDEST_PREFIX..=32).contains(&prefix) {
            return Err(bad("prefix length must be between 16 and 32").into());
        }
        let network = u32::from(address.parse::<Ipv4Addr>().map_err(|_| bad("bad IPv4 address"))?);
        let size = 1u32 << (32 - prefix);
        let first = network & !(size - 1);
        addresses.extend((0..size).map(|offset| first + offset));
    }
    Ok(addresses)
}

/// The exact blocklist, to check the filter's answers: sorted addresses, indexed by their top 16
/// bits so that a lookup searches one small slice.
struct ExactSet {
    starts: Vec<usize>,
    addresses: Vec<u32>,
}

impl ExactSet {
    fn new(mut addresses: Vec<u32>) -> Self {
        addresses.sort_unstable();
        addresses.dedup();
        let starts = (0..=1u32 << 16).map(|top| addresses.partition_point(|&a| (a >> 16) < top)).collect();
        ExactSet { starts, addresses }
    }

    fn contains(&self, address: u32) -> bool {
        let top = (address >> 16) as usize;
        self.addresses[self.starts[top]..self.starts[top + 1]].binary_search(&address).is_ok()
    }
}

/// Compares a pass's answers with the truth and with the first pass.
fn pass(
    (name, api): (&'static str, String),
    took: Duration,
    answers: &[bool],
    truth: &[bool],
    first: Option<&[bool]>,
) -> Pass {
    Pass {
        name,
        api,
        took,
        positives: answers.iter().filter(|&&maybe| maybe).count(),
        false_negatives: answers.iter().zip(truth).filter(|&(&maybe, &blocked)| blocked && !maybe).count(),
        differs_from_first: first
            .map_or(0, |first| answers.iter().zip(first).filter(|(a, b)| a != b).count()),
    }
}

/// Runs the scenario (see the module docs).
pub fn run(config: &Config) -> Result<Report, Box<dyn Error>> {
    if config.batch == 0 || config.threads == 0 {
        return Err("the batch size and the number of threads must be positive".into());
    }
    let mut rng = SplitMix64::new(config.seed);
    let text = blocklist_text(config, &mut rng);
    let (parsed, parse_took) = timed(|| parse_blocklist(&text));
    let exact = ExactSet::new(parsed?);
    if exact.addresses.is_empty() {
        return Err("the blocklist is empty".into());
    }

    let mut filter = CuckooFilter::builder()
        .capacity(exact.addresses.len())
        .false_positive_rate(config.false_positive_rate)
        .build()?;
    let (inserted, build_took) = timed(|| filter.insert_batch(&exact.addresses));
    if let Some(error) = inserted.into_iter().find_map(Result::err) {
        return Err(error.into());
    }

    let stream: Vec<u32> = (0..config.lookups)
        .map(|_| {
            if rng.unit() < config.blocked_share {
                exact.addresses[rng.index(exact.addresses.len())]
            } else {
                rng.next_u32()
            }
        })
        .collect();
    let truth: Vec<bool> = stream.iter().map(|&address| exact.contains(address)).collect();

    // One at a time.
    let (single, took) =
        timed(|| stream.iter().map(|address| filter.contains(address)).collect::<Vec<bool>>());
    let mut passes = vec![pass(("one at a time", "contains".to_owned()), took, &single, &truth, None)];

    // Batched.
    let (batched, took) = timed(|| {
        let mut answers = Vec::with_capacity(stream.len());
        for chunk in stream.chunks(config.batch) {
            answers.extend(filter.contains_batch(chunk));
        }
        answers
    });
    let name = ("batched", format!("contains_batch, {} per call", count(config.batch)));
    passes.push(pass(name, took, &batched, &truth, Some(&single)));

    // Concurrent: one shared filter, each thread a contiguous share of the stream.
    let shared = ConcurrentFilter::from_filter(&filter)?;
    let mut concurrent = vec![false; stream.len()];
    let share = stream.len().div_ceil(config.threads).max(1);
    let ((), took) = timed(|| {
        std::thread::scope(|scope| {
            for (lookups, answers) in stream.chunks(share).zip(concurrent.chunks_mut(share)) {
                let shared = &shared;
                scope.spawn(move || {
                    for (chunk, out) in lookups.chunks(config.batch).zip(answers.chunks_mut(config.batch)) {
                        out.copy_from_slice(&shared.contains_batch(chunk));
                    }
                });
            }
        });
    });
    let name = ("concurrent", format!("ConcurrentFilter, {} threads, contains_batch", config.threads));
    passes.push(pass(name, took, &concurrent, &truth, Some(&single)));

    Ok(Report {
        lines: text.lines().count(),
        text_bytes: text.len(),
        singles: config.addresses,
        ranges_24: config.ranges_24,
        ranges_20: config.ranges_20,
        blocked: exact.addresses.len(),
        parse_took,
        build_took,
        filter_bytes: filter.memory_bytes(),
        fingerprint_bits: filter.fingerprint_bits(),
        filter_bound: filter.false_positive_rate(),
        lookups: stream.len(),
        blocked_lookups: truth.iter().filter(|&&blocked| blocked).count(),
        threads: config.threads,
        batch: config.batch,
        passes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_expand_to_their_addresses() -> Result<(), Box<dyn Error>> {
        let addresses = parse_blocklist("10.0.0.1\n# a comment\n\n192.168.1.77/30\n")?;
        let expected: Vec<u32> = ["10.0.0.1", "192.168.1.76", "192.168.1.77", "192.168.1.78", "192.168.1.79"]
            .iter()
            .map(|a| a.parse::<Ipv4Addr>().map(u32::from))
            .collect::<Result<_, _>>()?;
        assert_eq!(addresses, expected);
        assert!(parse_blocklist("10.0.0.0/8").is_err());
        assert!(parse_blocklist("10.0.0.300").is_err());
        Ok(())
    }

    #[test]
    fn the_exact_set_finds_what_it_holds() {
        let set = ExactSet::new(vec![5, 70_000, 5, u32::MAX, 0]);
        assert_eq!(set.addresses, vec![0, 5, 70_000, u32::MAX]);
        assert!([0, 5, 70_000, u32::MAX].iter().all(|&a| set.contains(a)));
        assert!(![1, 65_536, u32::MAX - 1].iter().any(|&a| set.contains(a)));
    }
}
