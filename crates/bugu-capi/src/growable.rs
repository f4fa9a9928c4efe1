//! `bugu_growable`: a filter that adds capacity as items arrive, without the original keys.
//! The one place that names the Rust type it wraps ([`Inner`]). Not for concurrent use: calls on
//! one handle must not overlap (queries may overlap each other).

use std::ffi::c_void;

use bugu::{GrowableFilter, Tightening};

use crate::handle::{handle, publish, target};
use crate::stats::{bugu_bucket_callback, dump};
use crate::status::{bugu_status, guard, invalid};

/// The growable filter type behind the handle.
pub(crate) type Inner = GrowableFilter;

/// A growable cuckoo filter. Opaque.
#[allow(non_camel_case_types)]
pub struct bugu_growable {
    inner: Inner,
}

handle!(bugu_growable => Inner);

/// `bugu_growable_config.tightening`: each level takes a fixed share (`1 - tightening_ratio`) of
/// the false-positive budget left.
pub const BUGU_TIGHTENING_GEOMETRIC: u32 = 0;
/// `bugu_growable_config.tightening`: level `i` takes a share proportional to `1 / (i + 1)^2`.
pub const BUGU_TIGHTENING_PSERIES: u32 = 1;

/// A growable filter's configuration. Start from `bugu_growable_config_default()` and change what
/// you need.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct bugu_growable_config {
    /// The first level's capacity in items (at least 1).
    pub initial_capacity: usize,
    /// The false-positive rate the whole filter stays under at every size, in (0, 1).
    pub false_positive_rate: f64,
    /// How much larger each new level is than the newest one: 2 to 16.
    pub growth_factor: u32,
    /// How the rate is split between levels: `BUGU_TIGHTENING_GEOMETRIC` or `BUGU_TIGHTENING_PSERIES`.
    pub tightening: u32,
    /// The ratio of `BUGU_TIGHTENING_GEOMETRIC`, strictly between 0 and 1 (unused by P-series).
    pub tightening_ratio: f64,
    /// The most items the filter holds (inserts beyond fail with `BUGU_FULL`), or 0 for no limit.
    pub max_capacity: usize,
    /// The most levels, or 0 for no limit.
    pub max_levels: usize,
    /// Slots per bucket in every level: 2, 4 or 8.
    pub bucket_size: u32,
    /// How many buckets an insert may examine searching for room, in each level.
    pub eviction_limit: u32,
    /// The hash seed, shared by every level: filters answer alike only with the same seed.
    pub seed: u64,
}

/// The default configuration, starting at `initial_capacity` items.
#[unsafe(no_mangle)]
pub extern "C" fn bugu_growable_config_default(initial_capacity: usize) -> bugu_growable_config {
    let (tightening, tightening_ratio) = match bugu::DEFAULT_TIGHTENING {
        Tightening::PSeries => (BUGU_TIGHTENING_PSERIES, 0.0),
        Tightening::Geometric { ratio } => (BUGU_TIGHTENING_GEOMETRIC, ratio),
        _ => (BUGU_TIGHTENING_PSERIES, 0.0),
    };
    bugu_growable_config {
        initial_capacity,
        false_positive_rate: bugu::DEFAULT_TARGET_FALSE_POSITIVE_RATE,
        growth_factor: bugu::DEFAULT_GROWTH_FACTOR as u32,
        tightening,
        tightening_ratio,
        max_capacity: 0,
        max_levels: 0,
        bucket_size: bugu::DEFAULT_BUCKET_SIZE as u32,
        eviction_limit: bugu::DEFAULT_EVICTION_LIMIT as u32,
        seed: bugu::DEFAULT_SEED,
    }
}

/// A new growable filter starting at `initial_capacity` items, keeping its false-positive rate
/// under `fpr` at every size, in `*out`.
///
/// # Safety
/// `out` is NULL (refused) or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_new(
    initial_capacity: usize,
    fpr: f64,
    out: *mut *mut bugu_growable,
) -> bugu_status {
    let mut config = bugu_growable_config_default(initial_capacity);
    config.false_positive_rate = fpr;
    // SAFETY: a valid config on the stack; `out` as promised by the caller.
    unsafe { bugu_growable_new_with(&config, out) }
}

/// A new growable filter with this configuration, in `*out`. A bad setting answers
/// `BUGU_INVALID_ARGUMENT`, and `bugu_last_error_message` names it.
///
/// # Safety
/// `config` is NULL (refused) or readable; `out` is NULL (refused) or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_new_with(
    config: *const bugu_growable_config,
    out: *mut *mut bugu_growable,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises NULL or a readable config.
        let config = unsafe { config.as_ref() }.ok_or_else(|| invalid("the config is NULL"))?;
        let tightening = match config.tightening {
            BUGU_TIGHTENING_GEOMETRIC => Tightening::Geometric { ratio: config.tightening_ratio },
            BUGU_TIGHTENING_PSERIES => Tightening::PSeries,
            other => {
                return Err(invalid(format!(
                    "tightening must be BUGU_TIGHTENING_GEOMETRIC (0) or BUGU_TIGHTENING_PSERIES (1), got {other}"
                )));
            }
        };
        let mut builder = Inner::builder()
            .initial_capacity(config.initial_capacity)
            .false_positive_rate(config.false_positive_rate)
            .growth_factor(config.growth_factor as usize)
            .tightening(tightening)
            .bucket_size(config.bucket_size as usize)
            .eviction_limit(config.eviction_limit as usize)
            .seed(config.seed);
        if config.max_capacity != 0 {
            builder = builder.max_capacity(config.max_capacity);
        }
        if config.max_levels != 0 {
            builder = builder.max_levels(config.max_levels);
        }
        publish(builder.build()?, out)
    })
}

/// Calls `callback` for every bucket of every level; a non-zero return stops the walk.
///
/// # Safety
/// `filter` is NULL (refused) or live; `callback` is NULL (refused) or a valid function.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_growable_dump_buckets(
    filter: *const bugu_growable,
    callback: bugu_bucket_callback,
    context: *mut c_void,
) -> bugu_status {
    // SAFETY: the caller promises NULL or a live handle.
    guard(|| dump(unsafe { target(filter) }?.levels(), callback, context))
}
