//! Configuration: the builder users fill in, validated into the exact geometry of a table.
//!
//! The fingerprint width is the one set, or, from a false-positive rate, the smallest `f` whose
//! bound at full occupancy, `1 - (1 - 1/(2^f - 1))^(2b)`, meets the rate (widened further if the
//! capacity needs it). The bucket count comes from [`crate::sizing`]: exact for the capacity, even,
//! never a power of two. A configuration that cannot hold its capacity with a failure chance below
//! [`FIT_FAILURE_BOUND`](crate::FIT_FAILURE_BOUND) is refused, naming a width or bucket size that can.

use crate::error::ConfigError;
use crate::hash::HashFunction;
use crate::key::{Key, KeyEncoding};
use crate::sizing::{self, false_positive_bound};
use crate::table::Geometry;
pub use crate::table::{BUCKET_SIZES, FINGERPRINT_BITS};

/// The getters of a filter's parameters and load, written once for
/// [`CuckooFilterIn`](crate::CuckooFilterIn) and [`ConcurrentFilter`](crate::ConcurrentFilter):
/// each reads the `config` field, `len()` and `memory_bytes()`. `new` starts every doc example
/// (`<binding> filter = <type>::`, completed with `new(n)?`), after the `uses` line.
macro_rules! filter_parameters {
    (uses: $uses:literal, new: $new:literal) => {
        #[doc = "Whether nothing is stored."]
        #[doc = ""]
        #[doc = concat!("```\n", $uses, "\n", $new, "new(10)?;\nassert!(filter.is_empty());\n# Ok::<(), Box<dyn std::error::Error>>(())\n```")]
        pub fn is_empty(&self) -> bool {
            self.len() == 0
        }

        #[doc = "The number of items the filter was sized for (it may hold a few more)."]
        #[doc = ""]
        #[doc = concat!("```\n", $uses, "\n", $new, "new(12_345)?;\nassert_eq!(filter.capacity(), 12_345);\n# Ok::<(), Box<dyn std::error::Error>>(())\n```")]
        pub fn capacity(&self) -> usize {
            self.config.capacity
        }

        #[doc = "Number of buckets in the table."]
        #[doc = ""]
        #[doc = concat!("```\n", $uses, "\n", $new, "new(1_000)?;\n// Sized exactly: 1,000 items at 95% load in buckets of 4, plus slack, rounded up to even.\nassert_eq!(filter.bucket_count(), 296);\n# Ok::<(), Box<dyn std::error::Error>>(())\n```")]
        pub fn bucket_count(&self) -> usize {
            self.config.buckets
        }

        #[doc = "Slots per bucket."]
        #[doc = ""]
        #[doc = concat!("```\n", $uses, "\n", $new, "new(10)?;\nassert_eq!(filter.bucket_size(), 4);\n# Ok::<(), Box<dyn std::error::Error>>(())\n```")]
        pub fn bucket_size(&self) -> usize {
            self.config.bucket_size
        }

        #[doc = "Fingerprint width in bits."]
        #[doc = ""]
        #[doc = concat!("```\n", $uses, "\n", $new, "new(10)?;\nassert_eq!(filter.fingerprint_bits(), 12);\n# Ok::<(), Box<dyn std::error::Error>>(())\n```")]
        pub fn fingerprint_bits(&self) -> u32 {
            self.config.fingerprint_bits
        }

        #[doc = "How many buckets an insert's path search may examine (a view keeps it for its owned"]
        #[doc = "copies)."]
        #[doc = ""]
        #[doc = concat!("```\n", $uses, "\n", $new, "new(10)?;\nassert_eq!(filter.eviction_limit(), 500);\n# Ok::<(), Box<dyn std::error::Error>>(())\n```")]
        pub fn eviction_limit(&self) -> usize {
            self.config.eviction_limit
        }

        #[doc = "Share of slots in use, from 0 to 1."]
        #[doc = ""]
        #[doc = concat!("```\n", $uses, "\n", $new, "new(100)?;\nassert_eq!(filter.load_factor(), 0.0);\nfilter.insert(\"a\")?;\nassert!(filter.load_factor() > 0.0);\n# Ok::<(), Box<dyn std::error::Error>>(())\n```")]
        pub fn load_factor(&self) -> f64 {
            self.config.load_factor(self.len())
        }

        #[doc = "Bits of memory per stored item; infinite while the filter is empty."]
        #[doc = ""]
        #[doc = concat!("```\n", $uses, "\n", $new, "new(100_000)?;\nfor i in 0..100_000u32 {\n    filter.insert(&i)?;\n}\nassert!(filter.bits_per_item() < 13.5);\n# Ok::<(), Box<dyn std::error::Error>>(())\n```")]
        pub fn bits_per_item(&self) -> f64 {
            self.memory_bytes() as f64 * 8.0 / self.len() as f64
        }

        #[doc = "The false-positive rate the configuration guarantees: the bound at full occupancy. When"]
        #[doc = "the filter was built from a target rate, this is at most that target."]
        #[doc = ""]
        #[doc = concat!("```\n", $uses, "\n", $new, "new(10)?;\n// 12-bit fingerprints in buckets of 4: 8 / 2^12.\nassert!(filter.false_positive_rate() < 0.002);\n# Ok::<(), Box<dyn std::error::Error>>(())\n```")]
        pub fn false_positive_rate(&self) -> f64 {
            self.config.false_positive_rate()
        }

        #[doc = "The false-positive rate expected at the current load (0 when empty)."]
        #[doc = ""]
        #[doc = concat!("```\n", $uses, "\n", $new, "new(100)?;\nassert_eq!(filter.expected_false_positive_rate(), 0.0);\nfilter.insert(\"a\")?;\nassert!(filter.expected_false_positive_rate() < filter.false_positive_rate());\n# Ok::<(), Box<dyn std::error::Error>>(())\n```")]
        pub fn expected_false_positive_rate(&self) -> f64 {
            self.config.expected_false_positive_rate(self.len())
        }
    };
}
pub(crate) use filter_parameters;

/// The default fingerprint width: about 0.2% false positives at the default bucket size.
pub const DEFAULT_FINGERPRINT_BITS: u32 = 12;
/// The default number of slots per bucket.
pub const DEFAULT_BUCKET_SIZE: usize = 4;
/// The default eviction limit: buckets the insertion's path search may examine.
pub const DEFAULT_EVICTION_LIMIT: usize = 500;
/// The default hash seed. It is fixed so that runs, tests and replicas are reproducible.
pub const DEFAULT_SEED: u64 = 0;
/// The largest eviction limit accepted.
pub const MAX_EVICTION_LIMIT: usize = 65_535;

/// How the fingerprint width is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
enum FingerprintSpec {
    Bits(u32),
    Rate(f64),
}

/// Builds a [`CuckooFilter`](crate::CuckooFilter); every setting is validated by [`build`](Self::build).
///
/// ```
/// use bugu::CuckooFilter;
///
/// let filter = CuckooFilter::builder()
///     .capacity(1_000_000)
///     .false_positive_rate(0.001)
///     .bucket_size(4)
///     .build()?;
/// assert_eq!(filter.fingerprint_bits(), 13);
/// assert!(filter.false_positive_rate() <= 0.001);
/// # Ok::<(), bugu::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct Builder {
    capacity: usize,
    fingerprint: FingerprintSpec,
    bucket_size: usize,
    eviction_limit: usize,
    seed: u64,
    hash_function: HashFunction,
    key_encoding: KeyEncoding,
    semi_sorted: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            capacity: 0,
            fingerprint: FingerprintSpec::Bits(DEFAULT_FINGERPRINT_BITS),
            bucket_size: DEFAULT_BUCKET_SIZE,
            eviction_limit: DEFAULT_EVICTION_LIMIT,
            seed: DEFAULT_SEED,
            hash_function: HashFunction::default(),
            key_encoding: KeyEncoding::default(),
            semi_sorted: false,
        }
    }
}

impl Builder {
    /// A builder with the defaults: 12-bit fingerprints, 4 slots per bucket, eviction limit 500,
    /// seed 0, [`HashFunction::Xxh3Mix8`]. The capacity has no default.
    ///
    /// ```
    /// let filter = bugu::Builder::new().capacity(10).build()?;
    /// assert_eq!(filter.bucket_size(), 4);
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of distinct items the filter must hold; the table is sized exactly for it.
    ///
    /// ```
    /// let filter = bugu::CuckooFilter::builder().capacity(1000).build()?;
    /// assert_eq!(filter.capacity(), 1000);
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn capacity(mut self, items: usize) -> Self {
        self.capacity = items;
        self
    }

    /// A target false-positive rate; the fingerprint width is derived from it (and the bucket
    /// size). Replaces an earlier [`fingerprint_bits`](Self::fingerprint_bits).
    ///
    /// ```
    /// let filter = bugu::CuckooFilter::builder().capacity(100).false_positive_rate(0.01).build()?;
    /// assert_eq!(filter.fingerprint_bits(), 10);
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn false_positive_rate(mut self, rate: f64) -> Self {
        self.fingerprint = FingerprintSpec::Rate(rate);
        self
    }

    /// The fingerprint width in bits, 4 to 32. Replaces an earlier
    /// [`false_positive_rate`](Self::false_positive_rate).
    ///
    /// ```
    /// let filter = bugu::CuckooFilter::builder().capacity(100).fingerprint_bits(16).build()?;
    /// assert_eq!(filter.fingerprint_bits(), 16);
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn fingerprint_bits(mut self, bits: u32) -> Self {
        self.fingerprint = FingerprintSpec::Bits(bits);
        self
    }

    /// Slots per bucket: 2, 4 (default) or 8. Larger buckets fill higher but cost a bit more per
    /// item for the same false-positive rate.
    ///
    /// ```
    /// let filter = bugu::CuckooFilter::builder().capacity(100).bucket_size(8).build()?;
    /// assert_eq!(filter.bucket_size(), 8);
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn bucket_size(mut self, slots: usize) -> Self {
        self.bucket_size = slots;
        self
    }

    /// How many buckets an insert may examine while searching for a path of moves that frees a
    /// slot (default 500). Higher limits fill a little fuller and make the last inserts slower.
    ///
    /// ```
    /// let filter = bugu::CuckooFilter::builder().capacity(100).eviction_limit(1000).build()?;
    /// assert_eq!(filter.eviction_limit(), 1000);
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn eviction_limit(mut self, limit: usize) -> Self {
        self.eviction_limit = limit;
        self
    }

    /// The hash seed (default 0). Filters only answer for items hashed with their own seed.
    ///
    /// ```
    /// use bugu::Filter;
    /// let filter = bugu::CuckooFilter::builder().capacity(100).seed(7).build()?;
    /// assert_eq!(filter.seed(), 7);
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The hash function (default [`HashFunction::Xxh3Mix8`]). Set [`HashFunction::Xxh3`] to
    /// answer for hashes computed for filters built before the default changed (by
    /// [`hash_item`](crate::hash::hash_item), say); a filter loaded from bytes keeps its own.
    ///
    /// ```
    /// use bugu::{Filter, hash::HashFunction};
    /// let filter = bugu::CuckooFilter::builder().capacity(100).hash_function(HashFunction::Xxh3).build()?;
    /// assert_eq!(filter.hash_function(), HashFunction::Xxh3);
    /// assert_eq!(filter.hash_of(&7u64), bugu::hash::hash_item(&7u64, 0));
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn hash_function(mut self, function: HashFunction) -> Self {
        self.hash_function = function;
        self
    }

    /// Semi-sorted buckets (Fan et al.): the fingerprints of a bucket are stored sorted, which
    /// saves one bit per slot at some cost in speed. Only for buckets of 4 slots.
    ///
    /// ```
    /// // 13-bit fingerprints in the space of 12: half the false positives of `fingerprint_bits(12)`.
    /// let plain = bugu::CuckooFilter::builder().capacity(10_000).fingerprint_bits(12).build()?;
    /// let sorted = bugu::CuckooFilter::builder().capacity(10_000).fingerprint_bits(13).semi_sorted(true).build()?;
    /// assert_eq!(sorted.memory_bytes(), plain.memory_bytes());
    /// assert!(sorted.false_positive_rate() < plain.false_positive_rate() / 1.9);
    ///
    /// let err = bugu::CuckooFilter::builder().capacity(10).bucket_size(8).semi_sorted(true).build();
    /// assert_eq!(err.unwrap_err(), bugu::ConfigError::SemiSortedBucketSize(8));
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn semi_sorted(mut self, semi_sorted: bool) -> Self {
        self.semi_sorted = semi_sorted;
        self
    }

    /// Validates the settings into a [`Config`]: each setting by the rule below that owns it, then
    /// the sizing (the builder's own rule: the table must hold its capacity reliably), then the
    /// table's size.
    pub(crate) fn config(&self) -> Result<Config, ConfigError> {
        if self.capacity == 0 {
            return Err(ConfigError::ZeroCapacity);
        }
        check_bucket_size(self.bucket_size)?;
        if self.semi_sorted {
            check_semi_sorted_bucket_size(self.bucket_size)?;
        }
        check_eviction_limit(self.eviction_limit)?;
        let fingerprint_bits = match self.fingerprint {
            FingerprintSpec::Bits(bits) => check_fingerprint_bits(bits).map(|()| bits)?,
            FingerprintSpec::Rate(rate) => {
                // A rate only asks for at least this width: widen it if the capacity needs more.
                let bits = bits_for_rate(rate, self.bucket_size)?;
                sizing::narrowest_fitting_bits(self.capacity, self.bucket_size, bits).unwrap_or(bits)
            }
        };
        let Some(buckets) = sizing::buckets_that_fit(self.capacity, self.bucket_size, fingerprint_bits)
            .map_err(|()| ConfigError::CapacityTooLarge(self.capacity))?
        else {
            return Err(ConfigError::TooNarrow {
                capacity: self.capacity,
                fingerprint_bits,
                bucket_size: self.bucket_size,
                limit: sizing::capacity_limit(self.bucket_size, fingerprint_bits),
                wider_bits: sizing::narrowest_fitting_bits(self.capacity, self.bucket_size, fingerprint_bits),
                larger_bucket_size: sizing::smallest_fitting_bucket_size(
                    self.capacity,
                    self.bucket_size,
                    fingerprint_bits,
                ),
            });
        };
        debug_assert!(is_valid_bucket_count(buckets as u64), "sizing returns an even count of at least 2");
        let config = Config {
            capacity: self.capacity,
            buckets,
            bucket_size: self.bucket_size,
            fingerprint_bits,
            eviction_limit: self.eviction_limit,
            seed: self.seed,
            hash_function: self.hash_function,
            key_encoding: self.key_encoding,
            semi_sorted: self.semi_sorted,
        };
        table_len(buckets as u64, self.bucket_size, fingerprint_bits, self.semi_sorted)?;
        Ok(config)
    }

    /// [`config`](Self::config), with an unset capacity (0) taken as `items`: the configuration of
    /// a filter sized for exactly the items it is built from.
    pub(crate) fn config_for_items(&self, items: usize) -> Result<Config, ConfigError> {
        match self.capacity {
            0 => Builder { capacity: items, ..self.clone() }.config(),
            _ => self.config(),
        }
    }

    /// The hash of `key` under the hash function, seed and key encoding set (items are hashed
    /// before the filter they go into is built).
    pub(crate) fn hash_key<K: Key + ?Sized>(&self, key: &K) -> u64 {
        self.key_encoding.hash(key, self.hash_function, self.seed)
    }

    /// The key encoding: [`KeyEncoding::Canonical`] unless a filter of the older rule is being
    /// extended (a growable filter read from such a file adds levels of its rule).
    pub(crate) fn key_encoding(mut self, encoding: KeyEncoding) -> Self {
        self.key_encoding = encoding;
        self
    }
}

// The rules of a valid geometry, each stated once. The builder applies them to its settings, the
// format's reader to the parameters it reads (see `persist::format::Section::parse`), so that a
// rule and its error message cannot drift apart. The builder's sizing rule (`sizing`, which picks
// the bucket count for a capacity) is deliberately not among them: it is how a builder chooses a
// geometry, not what makes one usable, and files written under earlier sizing must keep loading.

/// A fingerprint width must be in [`FINGERPRINT_BITS`].
pub(crate) fn check_fingerprint_bits(bits: u32) -> Result<(), ConfigError> {
    match FINGERPRINT_BITS.contains(&bits) {
        true => Ok(()),
        false => Err(ConfigError::InvalidFingerprintBits(bits)),
    }
}

/// A bucket size must be one of [`BUCKET_SIZES`].
pub(crate) fn check_bucket_size(slots: usize) -> Result<(), ConfigError> {
    match BUCKET_SIZES.contains(&slots) {
        true => Ok(()),
        false => Err(ConfigError::InvalidBucketSize(slots)),
    }
}

/// Semi-sorted buckets have 4 slots (the encoding sorts the low nibbles of four fingerprints).
pub(crate) fn check_semi_sorted_bucket_size(slots: usize) -> Result<(), ConfigError> {
    match slots {
        4 => Ok(()),
        _ => Err(ConfigError::SemiSortedBucketSize(slots)),
    }
}

/// An eviction limit must be between 1 and [`MAX_EVICTION_LIMIT`].
pub(crate) fn check_eviction_limit(limit: usize) -> Result<(), ConfigError> {
    match (1..=MAX_EVICTION_LIMIT).contains(&limit) {
        true => Ok(()),
        false => Err(ConfigError::InvalidEvictionLimit(limit)),
    }
}

/// A false-positive rate must be strictly between 0 and 1 (a target of a cuckoo filter's width,
/// or of a growable filter's total).
pub(crate) fn check_false_positive_rate(rate: f64) -> Result<(), ConfigError> {
    match rate > 0.0 && rate < 1.0 {
        true => Ok(()),
        false => Err(ConfigError::InvalidFalsePositiveRate(rate)),
    }
}

/// A bucket count must be even and at least 2: the alternate bucket of every bucket is another
/// bucket of the same table. The builder's sizing only returns such counts; a reader checks it.
pub(crate) fn is_valid_bucket_count(buckets: u64) -> bool {
    buckets >= 2 && buckets.is_multiple_of(2)
}

/// What a table costs: the bucket count as a `usize` and the bytes of the packed buckets
/// ([`Geometry::payload_len`]); or [`ConfigError::TableTooLarge`] if the table, with its padding,
/// would not fit in an allocation (at most `isize::MAX` bytes). The count is a `u64` because a
/// reader takes it from bytes: on a 32-bit target it may not even be a `usize`.
pub(crate) fn table_len(
    buckets: u64,
    bucket_size: usize,
    fingerprint_bits: u32,
    semi_sorted: bool,
) -> Result<(usize, usize), ConfigError> {
    let (slots, bits) = (bucket_size, fingerprint_bits);
    usize::try_from(buckets)
        .ok()
        .and_then(|buckets| Some((buckets, Geometry { buckets, slots, bits, semi_sorted }.payload_len()?)))
        .ok_or_else(|| table_too_large(buckets, bucket_size, fingerprint_bits))
}

/// The error of a table of `buckets` buckets of `bucket_size` x `fingerprint_bits` bits that does
/// not fit in memory.
pub(crate) fn table_too_large(buckets: u64, bucket_size: usize, fingerprint_bits: u32) -> ConfigError {
    ConfigError::TableTooLarge { buckets, bucket_size, fingerprint_bits }
}

/// The smallest width whose bound at full occupancy meets `rate`.
fn bits_for_rate(rate: f64, bucket_size: usize) -> Result<u32, ConfigError> {
    check_false_positive_rate(rate)?;
    FINGERPRINT_BITS
        .clone()
        .find(|&bits| false_positive_bound(bits, bucket_size, 1.0) <= rate)
        .ok_or(ConfigError::FalsePositiveRateTooSmall { rate, bucket_size })
}

/// A validated configuration: the exact geometry of a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Config {
    pub(crate) capacity: usize,
    pub(crate) buckets: usize,
    pub(crate) bucket_size: usize,
    pub(crate) fingerprint_bits: u32,
    pub(crate) eviction_limit: usize,
    pub(crate) seed: u64,
    pub(crate) hash_function: HashFunction,
    /// How typed keys become bytes (recorded in a file's header flags, not in its sections).
    pub(crate) key_encoding: KeyEncoding,
    /// Buckets stored semi-sorted (bucket size 4 only).
    pub(crate) semi_sorted: bool,
}

impl Config {
    /// Share of the slots `items` fingerprints take.
    pub(crate) fn load_factor(&self, items: usize) -> f64 {
        items as f64 / (self.buckets * self.bucket_size) as f64
    }

    /// The false-positive bound of a full table (see [`false_positive_bound`]).
    pub(crate) fn false_positive_rate(&self) -> f64 {
        false_positive_bound(self.fingerprint_bits, self.bucket_size, 1.0)
    }

    /// The false-positive bound with `items` fingerprints stored.
    pub(crate) fn expected_false_positive_rate(&self, items: usize) -> f64 {
        false_positive_bound(self.fingerprint_bits, self.bucket_size, self.load_factor(items))
    }

    /// The shape of the table this configuration describes.
    pub(crate) fn geometry(&self) -> Geometry {
        let (buckets, slots, bits) = (self.buckets, self.bucket_size, self.fingerprint_bits);
        Geometry { buckets, slots, bits, semi_sorted: self.semi_sorted }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(builder: Builder) -> ConfigError {
        builder.config().unwrap_err()
    }

    #[test]
    fn bad_settings_are_typed_errors_with_messages() {
        let ok = Builder::new().capacity(100);
        assert_eq!(err(Builder::new()), ConfigError::ZeroCapacity);
        assert_eq!(err(ok.clone().capacity(0)), ConfigError::ZeroCapacity);
        for rate in [0.0, -0.1, 1.0, 1.5, f64::NAN, f64::INFINITY] {
            let e = err(ok.clone().false_positive_rate(rate));
            assert!(matches!(e, ConfigError::InvalidFalsePositiveRate(_)), "{rate}: {e}");
            assert!(e.to_string().contains("strictly between 0 and 1"));
        }
        assert!(matches!(
            err(ok.clone().false_positive_rate(1e-12)),
            ConfigError::FalsePositiveRateTooSmall { bucket_size: 4, .. }
        ));
        for bits in [0, 3, 33, 64] {
            assert_eq!(err(ok.clone().fingerprint_bits(bits)), ConfigError::InvalidFingerprintBits(bits));
        }
        for size in [0, 1, 3, 5, 16] {
            let e = err(ok.clone().bucket_size(size));
            assert_eq!(e, ConfigError::InvalidBucketSize(size));
            assert_eq!(e.to_string(), format!("bucket size must be 2, 4 or 8 slots, got {size}"));
        }
        for limit in [0, MAX_EVICTION_LIMIT + 1] {
            let e = err(ok.clone().eviction_limit(limit));
            assert_eq!(e, ConfigError::InvalidEvictionLimit(limit));
            // The message states the bound in words of its own (the errors sit below the
            // configuration), so this pins the two together.
            assert_eq!(
                e.to_string(),
                format!("eviction limit must be between 1 and {MAX_EVICTION_LIMIT}, got {limit}")
            );
        }
        assert_eq!(err(ok.clone().capacity(usize::MAX)), ConfigError::CapacityTooLarge(usize::MAX));
        assert!(matches!(
            err(ok.clone().capacity(usize::MAX / 4).fingerprint_bits(32)),
            ConfigError::TableTooLarge { bucket_size: 4, fingerprint_bits: 32, .. }
        ));
    }

    #[test]
    fn width_follows_the_rate() {
        let bits = |rate, b| {
            Builder::new()
                .capacity(1)
                .bucket_size(b)
                .false_positive_rate(rate)
                .config()
                .unwrap()
                .fingerprint_bits
        };
        assert_eq!(bits(0.03, 4), 9); // 8/511 = 1.57%, while 8 bits give 3.1%
        assert_eq!(bits(0.001, 4), 13);
        assert_eq!(bits(0.5, 2), 4);
        for b in BUCKET_SIZES {
            for rate in [0.2, 0.01, 0.001, 1e-5, 1e-8] {
                let f = bits(rate, b);
                assert!(false_positive_bound(f, b, 1.0) <= rate);
                assert!(f == 4 || false_positive_bound(f - 1, b, 1.0) > rate);
            }
        }
    }

    #[test]
    fn sizing_is_exact_not_power_of_two() {
        let config = Builder::new().capacity(10_000_000).config().unwrap();
        assert_eq!(config.buckets, 2_634_824);
        let tiny = Builder::new().capacity(1).config().unwrap();
        assert_eq!(tiny.buckets, 2);
        for capacity in 1..2000 {
            let c = Builder::new().capacity(capacity).config().unwrap();
            assert_eq!(c.buckets % 2, 0);
            assert!(c.buckets as f64 * 4.0 * 0.95 >= capacity as f64);
        }
    }
}
