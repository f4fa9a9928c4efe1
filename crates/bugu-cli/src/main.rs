//! `bugu`: build, query, inspect and compare cuckoo filters from a terminal and from scripts.
//!
//! A thin shell over the library. Items are lines (raw bytes; `--hex` for binary keys) from the
//! arguments, `--input FILE` or standard input. Exit status, as `grep`'s ([`EXIT_STATUS`]). A
//! command that changes a file holds its lock from the read to the save, and saves it atomically;
//! an error saves nothing.

mod bench;
mod build;
mod check;
mod create;
mod error;
mod files;
mod info;
mod input;
mod progress;
mod repeats;
mod report;
mod update;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::create::FilterOptions;
use crate::error::{Failure, Status};
use crate::input::Source;
use crate::report::Output;
use crate::update::ItemOptions;

/// The exit codes, as `grep`'s, shown by `--help`.
const EXIT_STATUS: &str = "\
Exit status (as grep's):
  0  success: every item may be present (check), was removed (remove), was added (add, build)
  1  check: some item is absent; remove: some item was not found; add, build: some item was
     already stored as often as one item can be and was not added (it reads present)
  2  an error, reported in one line on standard error; a command that changes a file then
     leaves it as it was (remove refuses so a filter that skipped --unique inserts, unless
     --allow-false-negatives)";

#[derive(Debug, Parser)]
#[command(
    name = "bugu",
    version,
    about = "Cuckoo filters from the command line: build, query, inspect, compare.",
    after_help = EXIT_STATUS
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Where items come from, and how they are written.
#[derive(Debug, Args)]
struct Items {
    /// Items; if none, one per line from --input or standard input.
    items: Vec<OsString>,
    /// Read items from this file, one per line (`-` for standard input).
    #[arg(short, long)]
    input: Option<PathBuf>,
    /// Items are hex-encoded bytes.
    #[arg(long)]
    hex: bool,
}

impl Items {
    fn source(self) -> Result<Source, Failure> {
        Source::new(self.items, self.input)
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create an empty filter file.
    Create {
        file: PathBuf,
        /// Items the filter must hold (the first level's, with --growable).
        #[arg(short = 'n', long, value_parser = parse_count)]
        capacity: usize,
        #[command(flatten)]
        filter: FilterOptions,
    },
    /// Add items (a copy each time; --unique to add only absent items).
    Add {
        file: PathBuf,
        #[command(flatten)]
        items: Items,
        /// Add an item only if it is not already (probably) present. A look-alike may be taken
        /// for it; the filter then records the skip, and `remove` refuses it (see remove --help).
        #[arg(short, long)]
        unique: bool,
        #[command(flatten)]
        output: Output,
    },
    /// Remove one copy of each item (only remove items you added).
    ///
    /// A filter that took `--unique` inserts may have skipped an item because another item with
    /// the same fingerprint was there; removing that other item makes the skipped one read
    /// absent, a false negative. `remove` refuses such a filter unless --allow-false-negatives.
    Remove {
        file: PathBuf,
        #[command(flatten)]
        items: Items,
        /// Remove from a filter that skipped --unique inserts, accepting that items it skipped
        /// may then read absent (false negatives).
        #[arg(long)]
        allow_false_negatives: bool,
        #[command(flatten)]
        output: Output,
    },
    /// Print the items that may be in the filter (exit 1 if some is absent).
    Check {
        file: PathBuf,
        #[command(flatten)]
        items: Items,
        /// Print the absent items instead.
        #[arg(short, long)]
        absent: bool,
        /// Print only how many items would be printed.
        #[arg(short, long)]
        count: bool,
        #[command(flatten)]
        output: Output,
    },
    /// Build a filter file from a list, one item per line, sized from its line count; a repeated
    /// line is stored once.
    Build {
        file: PathBuf,
        /// The list (`-` or none: standard input, which needs --capacity).
        #[arg(short, long)]
        input: Option<PathBuf>,
        /// Items the filter must hold [default: the number of lines].
        #[arg(short = 'n', long, value_parser = parse_count)]
        capacity: Option<usize>,
        #[command(flatten)]
        filter: FilterOptions,
        /// Items are hex-encoded bytes.
        #[arg(long)]
        hex: bool,
        /// Add an item only if it is not already (probably) present. A look-alike may be taken
        /// for it; the filter then records the skip, and `remove` refuses it (see remove --help).
        #[arg(short, long)]
        unique: bool,
        #[command(flatten)]
        output: Output,
    },
    /// Print a filter's parameters and statistics.
    Info {
        file: PathBuf,
        #[command(flatten)]
        output: Output,
    },
    /// Print the contents of a range of buckets.
    Dump {
        file: PathBuf,
        /// Buckets A..B (B excluded) or A..=B.
        #[arg(long, value_parser = info::parse_range)]
        buckets: std::ops::Range<usize>,
        /// The level of a growable filter.
        #[arg(long, default_value_t = 0)]
        level: usize,
        #[command(flatten)]
        output: Output,
    },
    /// Measure bugu against a Bloom filter on this machine: memory, insert, query, false positives.
    Bench {
        /// Numbers of keys, comma-separated [default: 1e4,1e5,1e6].
        #[arg(long, value_delimiter = ',', value_parser = parse_count)]
        sizes: Option<Vec<usize>>,
        /// Target false-positive rate of both filters.
        #[arg(long, default_value_t = 0.004)]
        fpr: f64,
        /// Timed repeats of each phase (medians are reported).
        #[arg(long, default_value_t = 3)]
        repeats: usize,
        /// Also draw the lookup times as an SVG chart.
        #[arg(long)]
        plot: Option<PathBuf>,
        #[command(flatten)]
        output: Output,
    },
}

/// "1000000", "1_000_000" or "1e6": a positive whole number below 10^12.
fn parse_count(text: &str) -> Result<usize, String> {
    let cleaned = text.trim().replace('_', "");
    let value: f64 = cleaned.parse().map_err(|_| format!("not a number: {text}"))?;
    if !(value >= 1.0 && value.fract() == 0.0 && value < 1e12) {
        return Err(format!("expected a positive whole number below 1e12, got {text}"));
    }
    Ok(value as usize)
}

fn run(command: Command) -> Result<Status, Failure> {
    match command {
        Command::Create { file, capacity, filter } => create::create(&file, capacity, &filter),
        Command::Add { file, items, unique, output } => {
            let hex = items.hex;
            update::add(&file, &items.source()?, ItemOptions { unique, hex, output })
        }
        Command::Remove { file, items, allow_false_negatives, output } => {
            let hex = items.hex;
            update::remove(&file, &items.source()?, hex, allow_false_negatives, output)
        }
        Command::Check { file, items, absent, count, output } => {
            let hex = items.hex;
            check::check(&file, &items.source()?, check::Show { absent, count }, hex, output)
        }
        Command::Build { file, input, capacity, filter, hex, unique, output } => {
            build::build(&file, input, capacity, &filter, ItemOptions { unique, hex, output })
        }
        Command::Info { file, output } => info::info(&file, output),
        Command::Dump { file, buckets, level, output } => info::dump(&file, buckets, level, output),
        Command::Bench { sizes, fpr, repeats, plot, output } => {
            bench::bench(sizes, fpr, repeats, plot.as_deref(), output)
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // --help and --version print as usual.
        Err(error) if !error.use_stderr() => error.exit(),
        // Bad flags: one line, exit 2 (clap's own message is several).
        Err(error) => return error::exit_code(Err(Failure::message(usage_line(&error)))),
    };
    error::exit_code(run(cli.command))
}

/// clap's message on one line: its first paragraph without the `error: ` prefix, and the usage.
fn usage_line(error: &clap::Error) -> String {
    let text = error.render().to_string();
    let message: Vec<&str> = text.lines().take_while(|line| !line.trim().is_empty()).map(str::trim).collect();
    let message = message.join(" ");
    let message = message.strip_prefix("error: ").unwrap_or(&message);
    match text.lines().find_map(|line| line.strip_prefix("Usage: ")) {
        Some(usage) => format!("{message} (usage: {usage})"),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_count;

    #[test]
    fn counts_are_written_plainly_grouped_or_in_exponent_form() {
        assert_eq!(parse_count("10000000"), Ok(10_000_000));
        assert_eq!(parse_count("10_000_000"), Ok(10_000_000));
        assert_eq!(parse_count(" 1e7 "), Ok(10_000_000));
        for bad in ["0", "2.5", "-3", "1e12", "many"] {
            assert!(parse_count(bad).is_err(), "{bad}");
        }
    }
}
