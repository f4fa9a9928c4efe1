//! What only Redis knows of a key's filter, a bugu [`AnyFilter`] of either growing kind: a chain
//! of levels (the default) or one table that splits as it grows (`GROWTH ONETABLE`). A filter is
//! built from the module's [`Settings`], and gives back the settings it was built with when it is
//! restored. Everything else the commands ask of it (items by their bytes, sizes, the saved
//! bytes, the heap blocks) is bugu's, the same for both kinds.

use bugu::{AnyFilter, ExpandingFilter, GrowableConfigError, GrowableFilter};

use crate::settings::{DEFAULT_MAX_ITERATIONS, Growth, MAX_CAPACITY, Settings, SettingsError};

/// An empty filter with these settings.
pub(crate) fn build(settings: &Settings) -> Result<AnyFilter, SettingsError> {
    match settings.growth {
        Growth::Chain => chain(settings).map(AnyFilter::from),
        Growth::OneTable => one_table(settings).map(AnyFilter::from),
    }
}

/// The settings `filter` was built with, given the options only the module keeps
/// (`MAXITERATIONS`, `EXPANSION`); `None` if the filter cannot have come from them. A one-table
/// filter keeps no initial capacity: its settings carry the capacity it has now.
pub(crate) fn settings(filter: &AnyFilter, max_iterations: u64, expansion: u64) -> Option<Settings> {
    let options = Settings::default()
        .with_max_iterations(i64::try_from(max_iterations).ok()?)
        .ok()?
        .with_expansion(i64::try_from(expansion).ok()?)
        .ok()?;
    if options.expansion != expansion {
        return None;
    }
    match filter {
        AnyFilter::Chain(filter) => chain_settings(filter, options),
        AnyFilter::OneTable(filter) => one_table_settings(filter, options, max_iterations),
        // A key never holds a fixed filter: its bytes are refused where values are loaded.
        _ => None,
    }
}

fn one_table(settings: &Settings) -> Result<ExpandingFilter, SettingsError> {
    ExpandingFilter::builder()
        .initial_capacity(settings.capacity as usize)
        .false_positive_rate(settings.error_rate)
        .build()
        .map_err(|error| match error {
            // The capacity was checked: what remains is a rate too low for the widest entries.
            bugu::expanding::ExpandingConfigError::OutOfMemory { .. } => SettingsError::Capacity,
            _ => SettingsError::ErrorRate,
        })
}

fn chain(settings: &Settings) -> Result<GrowableFilter, SettingsError> {
    GrowableFilter::builder()
        .initial_capacity(settings.capacity as usize)
        .bucket_size(settings.bucket_size as usize)
        .eviction_limit(settings.eviction_limit())
        .growth_factor(settings.growth_factor())
        .max_levels(settings.max_levels())
        .false_positive_rate(settings.error_rate)
        .build()
        .map_err(|error| match error {
            // The capacity and bucket size were checked: what remains is a rate too low for
            // 32-bit fingerprints, or a table too large for this machine.
            GrowableConfigError::Level(bugu::ConfigError::OutOfMemory { .. })
            | GrowableConfigError::Level(bugu::ConfigError::CapacityTooLarge(_))
            | GrowableConfigError::Level(bugu::ConfigError::TableTooLarge { .. }) => SettingsError::Capacity,
            _ => SettingsError::ErrorRate,
        })
}

/// The settings a chain was built with, given the module's `options`; `None` if they disagree.
fn chain_settings(filter: &GrowableFilter, options: Settings) -> Option<Settings> {
    let first = filter.levels().first()?;
    let settings = options
        .with_capacity(i64::try_from(first.capacity()).ok()?)
        .ok()?
        .with_bucket_size(filter.bucket_size() as i64)
        .ok()?
        .with_error_rate(filter.target_false_positive_rate())
        .ok()?;
    let consistent = settings.eviction_limit() == filter.eviction_limit()
        && filter.max_levels() == Some(settings.max_levels())
        && (settings.expansion == 0 || filter.growth_factor() == settings.growth_factor())
        && filter.level_count() <= settings.max_levels();
    consistent.then_some(settings)
}

/// The settings a one-table filter stands for, given the module's `options`.
fn one_table_settings(filter: &ExpandingFilter, options: Settings, max_iterations: u64) -> Option<Settings> {
    let settings = Settings { growth: Growth::OneTable, ..options }
        .with_capacity(filter.capacity().min(MAX_CAPACITY as usize) as i64)
        .ok()?
        .with_error_rate(filter.target_false_positive_rate())
        .ok()?;
    // As the saved form records them: the default count of iterations, not asked for.
    (max_iterations == DEFAULT_MAX_ITERATIONS).then_some(settings.checked(|_| false).ok()?)
}
