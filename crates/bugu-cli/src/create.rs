//! `bugu create`: an empty filter file; and the filter options `create` and `build` share.

use std::path::Path;

use bugu::hash::HashFunction;
use bugu::{AnyFilter, CuckooFilter, ExpandingFilter, GrowableFilter};
use clap::Args;

use crate::error::{Failure, Status};
use crate::files;

/// How a new filter is configured.
#[derive(Debug, Clone, Args)]
pub(crate) struct FilterOptions {
    /// Target false-positive rate, e.g. 0.001 [default: 0.001 unless --bits is given].
    #[arg(short = 'p', long, conflicts_with = "bits")]
    pub(crate) fpr: Option<f64>,
    /// Fingerprint width in bits (4 to 32), instead of --fpr.
    #[arg(short = 'f', long)]
    pub(crate) bits: Option<u32>,
    /// Slots per bucket: 2, 4 or 8.
    #[arg(short = 'b', long, default_value_t = 4)]
    pub(crate) bucket_size: usize,
    /// A filter that grows as items arrive, keeping its false-positive rate under --fpr.
    #[arg(short = 'g', long)]
    pub(crate) growable: bool,
    /// With --growable: refuse items beyond this many (with --one-table: the size the filter is
    /// declared for, which fixes its entries' widths; default 2^32).
    #[arg(long, requires = "growable")]
    pub(crate) max_capacity: Option<usize>,
    /// With --growable: grow in one table (lookups take the same time at any size, fewer bits
    /// per item, slower inserts) instead of a chain of tables, one more per growth.
    #[arg(long, requires = "growable")]
    pub(crate) one_table: bool,
    /// Hash seed (filters only answer for items hashed with their own seed).
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Hash function: xxh3-mix8 (XXH3-64, 8-byte items through a cheaper mixer) or xxh3 (XXH3-64
    /// for every item, as filters made before xxh3-mix8 existed).
    #[arg(long = "hash", value_parser = parse_hash_function, default_value = "xxh3-mix8")]
    pub(crate) hash: HashFunction,
    /// Replace the file if it exists.
    #[arg(long)]
    pub(crate) force: bool,
}

/// A hash function by the name `bugu info` shows ([`HashFunction::name`]).
fn parse_hash_function(name: &str) -> Result<HashFunction, String> {
    HashFunction::ALL.into_iter().find(|function| function.name() == name).ok_or_else(|| {
        let names: Vec<&str> = HashFunction::ALL.iter().map(|function| function.name()).collect();
        format!("expected one of: {}", names.join(", "))
    })
}

/// The default target rate.
const DEFAULT_FPR: f64 = 0.001;

impl FilterOptions {
    /// An empty filter for `capacity` items (the first level's capacity if growable).
    pub(crate) fn build(&self, capacity: usize) -> Result<AnyFilter, Failure> {
        if self.one_table {
            return self.build_one_table(capacity);
        }
        if self.growable {
            if self.bits.is_some() {
                return Err(Failure::message(
                    "--bits does not apply to --growable (its levels' widths follow --fpr)",
                ));
            }
            let mut builder = GrowableFilter::builder()
                .initial_capacity(capacity)
                .false_positive_rate(self.fpr.unwrap_or(DEFAULT_FPR))
                .bucket_size(self.bucket_size)
                .seed(self.seed)
                .hash_function(self.hash);
            if let Some(max) = self.max_capacity {
                builder = builder.max_capacity(max);
            }
            builder.build().map(AnyFilter::from).map_err(|error| Failure::message(error.to_string()))
        } else {
            let builder = CuckooFilter::builder()
                .capacity(capacity)
                .bucket_size(self.bucket_size)
                .seed(self.seed)
                .hash_function(self.hash);
            let builder = match self.bits {
                Some(bits) => builder.fingerprint_bits(bits),
                None => builder.false_positive_rate(self.fpr.unwrap_or(DEFAULT_FPR)),
            };
            builder.build().map(AnyFilter::from).map_err(|error| Failure::message(error.to_string()))
        }
    }

    /// An empty growable filter in one table for `capacity` items at first.
    fn build_one_table(&self, capacity: usize) -> Result<AnyFilter, Failure> {
        // Its buckets, fingerprint widths and hash are fixed by design: refuse settings it would ignore.
        if self.bits.is_some() {
            return Err(Failure::message("--bits does not apply to --one-table (its widths follow --fpr)"));
        }
        let slots = ExpandingFilter::BUCKET_SIZE;
        if self.bucket_size != slots {
            return Err(Failure::message(format!(
                "--one-table filters have buckets of {slots} slots (--bucket-size {slots})"
            )));
        }
        if self.hash != HashFunction::default() {
            return Err(Failure::message(format!(
                "--one-table filters hash with {} (--hash {})",
                HashFunction::default().name(),
                HashFunction::default().name()
            )));
        }
        let mut builder = ExpandingFilter::builder()
            .initial_capacity(capacity)
            .false_positive_rate(self.fpr.unwrap_or(DEFAULT_FPR))
            .seed(self.seed);
        if let Some(max) = self.max_capacity {
            builder = builder.max_items(max as u64);
        }
        builder.build().map(AnyFilter::from).map_err(|error| Failure::message(error.to_string()))
    }

    /// Refuses to replace an existing file without `--force`.
    pub(crate) fn check_target(&self, path: &Path) -> Result<(), Failure> {
        if !self.force && path.exists() {
            return Err(Failure::message("already exists (use --force to replace it)").in_file(path));
        }
        Ok(())
    }
}

/// Creates an empty filter file.
pub(crate) fn create(path: &Path, capacity: usize, options: &FilterOptions) -> Result<Status, Failure> {
    options.check_target(path)?;
    files::save(&options.build(capacity)?, path)?;
    Ok(Status::All)
}
