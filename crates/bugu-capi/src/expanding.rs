//! `bugu_expanding`: a filter that grows in one table as items arrive (a lookup reads two
//! buckets at any size, and removal is exact). The one place that names the Rust type it
//! wraps ([`Inner`]). Not for concurrent use: calls on one handle must not overlap (queries may
//! overlap each other).

use bugu::ExpandingFilter;

use crate::handle::{handle, publish};
use crate::status::{bugu_status, guard, invalid};

/// The filter type behind the handle.
pub(crate) type Inner = ExpandingFilter;

/// A growable cuckoo filter in one table. Opaque.
#[allow(non_camel_case_types)]
pub struct bugu_expanding {
    inner: Inner,
}

handle!(bugu_expanding => Inner);

/// A one-table filter's configuration. Start from `bugu_expanding_config_default()` and change
/// what you need.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct bugu_expanding_config {
    /// Items the table is sized for at first (at least 1).
    pub initial_capacity: usize,
    /// The false-positive rate the filter stays under at every size, in (0, 1).
    pub false_positive_rate: f64,
    /// The most items the filter is declared to grow to: with the rate, it fixes the entries'
    /// widths; past it, inserts may fail with `BUGU_FULL` (the rate would pass its target).
    pub max_items: u64,
    /// The hash seed: filters answer alike only with the same seed.
    pub seed: u64,
}

/// The default configuration, starting at `initial_capacity` items.
#[unsafe(no_mangle)]
pub extern "C" fn bugu_expanding_config_default(initial_capacity: usize) -> bugu_expanding_config {
    bugu_expanding_config {
        initial_capacity,
        false_positive_rate: bugu::DEFAULT_TARGET_FALSE_POSITIVE_RATE,
        max_items: bugu::expanding::DEFAULT_MAX_ITEMS,
        seed: bugu::DEFAULT_SEED,
    }
}

/// A new one-table filter starting at `initial_capacity` items, keeping its false-positive rate
/// under `fpr` at every size up to the default maximum (2^32 items), in `*out`.
///
/// # Safety
/// `out` is NULL (refused) or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_expanding_new(
    initial_capacity: usize,
    fpr: f64,
    out: *mut *mut bugu_expanding,
) -> bugu_status {
    let mut config = bugu_expanding_config_default(initial_capacity);
    config.false_positive_rate = fpr;
    // SAFETY: a valid config on the stack; `out` as promised by the caller.
    unsafe { bugu_expanding_new_with(&config, out) }
}

/// A new one-table filter with this configuration, in `*out`. A bad setting answers
/// `BUGU_INVALID_ARGUMENT`, and `bugu_last_error_message` names it.
///
/// # Safety
/// `config` is NULL (refused) or readable; `out` is NULL (refused) or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bugu_expanding_new_with(
    config: *const bugu_expanding_config,
    out: *mut *mut bugu_expanding,
) -> bugu_status {
    guard(|| {
        // SAFETY: the caller promises NULL or a readable config.
        let config = unsafe { config.as_ref() }.ok_or_else(|| invalid("the config is NULL"))?;
        let filter = Inner::builder()
            .initial_capacity(config.initial_capacity)
            .false_positive_rate(config.false_positive_rate)
            .max_items(config.max_items)
            .seed(config.seed)
            .build()?;
        publish(filter, out)
    })
}
