//! The filter under a key: a chain of levels (bugu's [`GrowableFilter`], the default) or one
//! table that splits as it grows (bugu's [`ExpandingFilter`], `GROWTH ONETABLE`), with what the
//! commands ask of either. Both hash an item's bytes the same way, so an item means the same in
//! both. A filter is built from the module's [`Settings`], which describe it, and gives back the
//! settings it was built with when it is restored.

use std::io::{self, Write};

use bugu::persist::{FilterKind, PersistError};
use bugu::{ExpandingFilter, Filter, FilterMut, GrowableConfigError, GrowableFilter, InsertError, Persist};

use crate::alloc::block_size;
use crate::settings::{DEFAULT_MAX_ITERATIONS, Growth, MAX_CAPACITY, Settings, SettingsError};

/// A key's filter.
#[derive(Debug, Clone)]
pub(crate) enum KeyFilter {
    Chain(GrowableFilter),
    OneTable(Box<ExpandingFilter>),
}

/// Runs `$body` with `$filter` bound to whichever filter `$value` holds.
macro_rules! either {
    ($value:expr, $filter:ident => $body:expr) => {
        match $value {
            KeyFilter::Chain($filter) => $body,
            KeyFilter::OneTable($filter) => $body,
        }
    };
}

impl KeyFilter {
    /// An empty filter with these settings.
    pub(crate) fn new(settings: &Settings) -> Result<Self, SettingsError> {
        match settings.growth {
            Growth::Chain => chain(settings).map(Self::Chain),
            Growth::OneTable => one_table(settings).map(|filter| Self::OneTable(Box::new(filter))),
        }
    }

    /// The settings this filter was built with, given the options only the module keeps
    /// (`MAXITERATIONS`, `EXPANSION`); `None` if the filter cannot have come from them. A
    /// one-table filter keeps no initial capacity: its settings carry the capacity it has now.
    pub(crate) fn settings(&self, max_iterations: u64, expansion: u64) -> Option<Settings> {
        let options = Settings::default()
            .with_max_iterations(i64::try_from(max_iterations).ok()?)
            .ok()?
            .with_expansion(i64::try_from(expansion).ok()?)
            .ok()?;
        if options.expansion != expansion {
            return None;
        }
        match self {
            Self::Chain(filter) => chain_settings(filter, options),
            Self::OneTable(filter) => {
                let settings = Settings { growth: Growth::OneTable, ..options }
                    .with_capacity(filter.capacity().min(MAX_CAPACITY as usize) as i64)
                    .ok()?
                    .with_error_rate(filter.target_false_positive_rate())
                    .ok()?;
                // As the saved form records them: the default count of iterations, not asked for.
                (max_iterations == DEFAULT_MAX_ITERATIONS).then_some(settings.checked(|_| false).ok()?)
            }
        }
    }

    /// A filter from bugu's bytes of either kind.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Result<Self, PersistError> {
        match FilterKind::detect(bytes)? {
            FilterKind::Growable => GrowableFilter::from_bytes(bytes).map(Self::Chain),
            FilterKind::Expanding => {
                ExpandingFilter::from_bytes(bytes).map(|filter| Self::OneTable(Box::new(filter)))
            }
            found => Err(PersistError::WrongKind { expected: FilterKind::Growable, found }),
        }
    }

    pub(crate) fn add(&mut self, item: &[u8]) -> Result<(), InsertError> {
        either!(self, filter => filter.insert_hash(filter.hash_of_bytes(item)))
    }

    pub(crate) fn add_unique(&mut self, item: &[u8]) -> Result<bool, InsertError> {
        either!(self, filter => filter.insert_unique_hash(filter.hash_of_bytes(item)))
    }

    pub(crate) fn contains(&self, item: &[u8]) -> bool {
        either!(self, filter => filter.contains_bytes(item))
    }

    pub(crate) fn count(&self, item: &[u8]) -> usize {
        either!(self, filter => filter.count_bytes(item))
    }

    pub(crate) fn remove(&mut self, item: &[u8]) -> bool {
        either!(self, filter => filter.remove_hash(filter.hash_of_bytes(item)))
    }

    pub(crate) fn len(&self) -> usize {
        either!(self, filter => filter.len())
    }

    /// Length of the filter's bytes in bugu's format.
    pub(crate) fn serialized_len(&self) -> usize {
        either!(self, filter => filter.serialized_len())
    }

    /// Writes the filter's bytes in bugu's format.
    pub(crate) fn write_to<W: Write>(&self, writer: W) -> io::Result<()> {
        either!(self, filter => filter.write_to(writer))
    }

    /// Buckets, over all levels of a chain.
    pub(crate) fn buckets(&self) -> usize {
        match self {
            Self::Chain(filter) => filter.levels().iter().map(|level| level.bucket_count()).sum(),
            Self::OneTable(filter) => filter.bucket_count(),
        }
    }

    /// Sub-filters: a chain's levels, or the one table.
    pub(crate) fn filters(&self) -> usize {
        match self {
            Self::Chain(filter) => filter.level_count(),
            Self::OneTable(_) => 1,
        }
    }

    /// Bytes the filter's heap blocks take, as the allocator counts them: a chain's tables and
    /// its list of levels, or the one table's segments, lists and its box. Working buffers are
    /// left out ([`scratch_bytes`](Self::scratch_bytes)).
    pub(crate) fn allocated_bytes(&self) -> usize {
        match self {
            Self::Chain(filter) => {
                let levels = filter.levels();
                let tables: usize = levels.iter().map(|level| block_size(level.memory_bytes())).sum();
                tables + block_size(std::mem::size_of_val(levels))
            }
            Self::OneTable(filter) => {
                let blocks: usize = filter.heap_blocks().map(block_size).sum();
                blocks + block_size(std::mem::size_of::<ExpandingFilter>())
            }
        }
    }

    /// Bytes of the working buffers an insert keeps between calls: each level's search space in
    /// a chain; the one table keeps none.
    pub(crate) fn scratch_bytes(&self) -> usize {
        match self {
            Self::Chain(filter) => {
                filter.levels().iter().map(|level| block_size(level.scratch_bytes())).sum()
            }
            Self::OneTable(_) => 0,
        }
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
