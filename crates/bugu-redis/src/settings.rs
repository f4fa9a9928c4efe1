//! What a `CF.RESERVE` asks for, and the bugu settings it stands for. The settings only describe
//! a filter: the value module builds one from them (`key_filter::build`), so that this module needs
//! nothing of the filters themselves.
//!
//! RedisBloom's options keep their names, ranges and defaults; their values map onto bugu's
//! settings as follows (the reasons are in `docs/redis.md`):
//!
//! - `BUCKETSIZE` 1..=255 → slots per bucket: 1–2 → 2, 3–4 → 4, 5–255 → 8 (bugu's sizes);
//! - `MAXITERATIONS` 1..=65535 → an insert's search for a path of moves may examine
//!   [`BUCKETS_PER_ITERATION`] times as many buckets (bugu searches breadth-first; a random walk
//!   of `n` kicks examines `n` buckets along a single path);
//! - `EXPANSION` 0..=32768, rounded up to a power of two → 0: one level, never grows; otherwise
//!   each new level is `EXPANSION` times larger, clamped to bugu's growth factors 2..=16;
//! - `ERRORRATE` (bugu's own option) → the false-positive bound the filter keeps at every size;
//! - `GROWTH` (bugu's own option) `CHAIN` (the default) or `ONETABLE` → a chain of levels, or one
//!   table that splits as it grows. One table has four slots per bucket, doubles, and has no
//!   `MAXITERATIONS`: it takes `BUCKETSIZE` 3–4, `EXPANSION` 1–2 and refuses the rest.

use bugu::ExpandingFilter;

/// Capacity of a filter that `CF.ADD` or `CF.INSERT` creates.
pub(crate) const DEFAULT_CAPACITY: u64 = 1024;
/// The largest `capacity` accepted: 2^30 items.
pub(crate) const MAX_CAPACITY: u64 = 1 << 30;
/// RedisBloom's default `BUCKETSIZE`.
pub(crate) const DEFAULT_BUCKET_SIZE: u64 = 2;
/// RedisBloom's default `MAXITERATIONS`.
pub(crate) const DEFAULT_MAX_ITERATIONS: u64 = 20;
/// RedisBloom's default `EXPANSION`.
pub(crate) const DEFAULT_EXPANSION: u64 = 1;
/// The false-positive bound kept at every size when `ERRORRATE` is not given. At the reserved
/// capacity a filter is well under it (about 0.08% with the defaults).
pub(crate) const DEFAULT_ERROR_RATE: f64 = 0.01;
/// The most levels (sub-filters) a filter may have, as in RedisBloom.
pub(crate) const MAX_FILTERS: usize = 32;
/// Buckets an insert may examine per `MAXITERATIONS` (the default 20 gives bugu's default 500).
pub(crate) const BUCKETS_PER_ITERATION: u64 = 25;

/// The validated settings of a filter, as `CF.INFO` reports them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Settings {
    pub(crate) capacity: u64,
    /// Slots per bucket actually used (2, 4 or 8).
    pub(crate) bucket_size: u64,
    pub(crate) max_iterations: u64,
    /// Rounded up to a power of two; 0 = never expand.
    pub(crate) expansion: u64,
    pub(crate) error_rate: f64,
    pub(crate) growth: Growth,
}

/// How a key's filter grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Growth {
    /// New levels, each larger than the last: inserts cost what a fixed filter's do, lookups
    /// and removals probe every level.
    #[default]
    Chain,
    /// One table that splits a few buckets per insert: lookups probe two buckets at any size,
    /// removals are always exact, inserts cost more.
    OneTable,
}

/// A setting out of its range; the message is the reply's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SettingsError {
    Capacity,
    BucketSize,
    MaxIterations,
    Expansion,
    ErrorRate,
    Growth,
    NotForOneTable,
}

impl SettingsError {
    pub(crate) fn message(self) -> &'static str {
        match self {
            Self::Capacity => "Bad capacity",
            Self::BucketSize => "Bad bucket size",
            Self::MaxIterations => "Bad max iterations",
            Self::Expansion => "Bad expansion",
            Self::ErrorRate => "Bad error rate",
            Self::Growth => "Bad growth (CHAIN or ONETABLE)",
            Self::NotForOneTable => {
                "ERR GROWTH ONETABLE takes BUCKETSIZE 3-4, EXPANSION 1-2 and no MAXITERATIONS"
            }
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            capacity: DEFAULT_CAPACITY,
            bucket_size: DEFAULT_BUCKET_SIZE,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            expansion: DEFAULT_EXPANSION,
            error_rate: DEFAULT_ERROR_RATE,
            growth: Growth::Chain,
        }
    }
}

impl Settings {
    /// Checks a requested capacity.
    pub(crate) fn with_capacity(self, capacity: i64) -> Result<Self, SettingsError> {
        match u64::try_from(capacity) {
            Ok(capacity @ 1..=MAX_CAPACITY) => Ok(Self { capacity, ..self }),
            _ => Err(SettingsError::Capacity),
        }
    }

    /// Checks a requested `BUCKETSIZE` and maps it to bugu's bucket sizes.
    pub(crate) fn with_bucket_size(self, requested: i64) -> Result<Self, SettingsError> {
        let bucket_size = match requested {
            1..=2 => 2,
            3..=4 => 4,
            5..=255 => 8,
            _ => return Err(SettingsError::BucketSize),
        };
        Ok(Self { bucket_size, ..self })
    }

    /// Checks a requested `MAXITERATIONS`.
    pub(crate) fn with_max_iterations(self, requested: i64) -> Result<Self, SettingsError> {
        match u64::try_from(requested) {
            Ok(max_iterations @ 1..=65_535) => Ok(Self { max_iterations, ..self }),
            _ => Err(SettingsError::MaxIterations),
        }
    }

    /// Checks a requested `EXPANSION` and rounds it up to a power of two.
    pub(crate) fn with_expansion(self, requested: i64) -> Result<Self, SettingsError> {
        match u64::try_from(requested) {
            Ok(0) => Ok(Self { expansion: 0, ..self }),
            Ok(expansion @ 1..=32_768) => Ok(Self { expansion: expansion.next_power_of_two(), ..self }),
            _ => Err(SettingsError::Expansion),
        }
    }

    /// Checks a requested `ERRORRATE` (whether bugu can reach it is checked when building).
    pub(crate) fn with_error_rate(self, requested: f64) -> Result<Self, SettingsError> {
        if requested > 0.0 && requested < 1.0 {
            Ok(Self { error_rate: requested, ..self })
        } else {
            Err(SettingsError::ErrorRate)
        }
    }

    /// Checks a requested `GROWTH`.
    pub(crate) fn with_growth(self, requested: &[u8]) -> Result<Self, SettingsError> {
        let growth = match requested.to_ascii_uppercase().as_slice() {
            b"CHAIN" => Growth::Chain,
            b"ONETABLE" => Growth::OneTable,
            _ => return Err(SettingsError::Growth),
        };
        Ok(Self { growth, ..self })
    }

    /// Settings whose options were all parsed, `given` telling which were named: a one-table
    /// filter takes four slots per bucket (its only size) and refuses options that do not
    /// apply to it rather than ignoring them.
    pub(crate) fn checked(self, given: impl Fn(&[u8]) -> bool) -> Result<Self, SettingsError> {
        if self.growth == Growth::Chain {
            return Ok(self);
        }
        let bucket_size = ExpandingFilter::BUCKET_SIZE as u64;
        let applies = (!given(b"BUCKETSIZE") || self.bucket_size == bucket_size)
            && !given(b"MAXITERATIONS")
            && (1..=2).contains(&self.expansion);
        if applies { Ok(Self { bucket_size, ..self }) } else { Err(SettingsError::NotForOneTable) }
    }

    /// The growth factor of the levels after the first (meaningless when `expansion` is 0).
    pub(crate) fn growth_factor(&self) -> usize {
        self.expansion.clamp(2, 16) as usize
    }

    /// The eviction limit of every level.
    pub(crate) fn eviction_limit(&self) -> usize {
        (self.max_iterations * BUCKETS_PER_ITERATION).min(bugu::MAX_EVICTION_LIMIT as u64) as usize
    }

    /// The most levels the filter may have.
    pub(crate) fn max_levels(&self) -> usize {
        if self.expansion == 0 { 1 } else { MAX_FILTERS }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_mappings() {
        let base = Settings::default();
        for bad in [0, -1, (MAX_CAPACITY + 1) as i64, i64::MIN] {
            assert_eq!(base.with_capacity(bad), Err(SettingsError::Capacity));
        }
        assert_eq!(base.with_capacity(1).unwrap().capacity, 1);
        let sizes: Vec<u64> =
            [1, 2, 3, 4, 5, 8, 255].iter().map(|&b| base.with_bucket_size(b).unwrap().bucket_size).collect();
        assert_eq!(sizes, [2, 2, 4, 4, 8, 8, 8]);
        for bad in [0, 256, -2] {
            assert_eq!(base.with_bucket_size(bad), Err(SettingsError::BucketSize));
        }
        for bad in [0, 65_536] {
            assert_eq!(base.with_max_iterations(bad), Err(SettingsError::MaxIterations));
        }
        let expansions: Vec<u64> =
            [0, 1, 3, 4, 5, 32_768].iter().map(|&e| base.with_expansion(e).unwrap().expansion).collect();
        assert_eq!(expansions, [0, 1, 4, 4, 8, 32_768]);
        for bad in [-1, 32_769] {
            assert_eq!(base.with_expansion(bad), Err(SettingsError::Expansion));
        }
        for bad in [0.0, 1.0, -0.5, f64::NAN] {
            assert_eq!(base.with_error_rate(bad), Err(SettingsError::ErrorRate));
        }
    }

    #[test]
    fn bugu_settings_follow_the_options() {
        let settings = Settings::default().with_expansion(1).unwrap();
        assert_eq!(
            (settings.growth_factor(), settings.eviction_limit(), settings.max_levels()),
            (2, 500, 32)
        );
        let fixed = settings.with_expansion(0).unwrap().with_max_iterations(65_535).unwrap();
        assert_eq!((fixed.eviction_limit(), fixed.max_levels()), (bugu::MAX_EVICTION_LIMIT, 1));
        assert_eq!(settings.with_expansion(1024).unwrap().growth_factor(), 16);
    }
}
