use proptest::prelude::*;

use super::*;
use crate::settings::{Growth, SettingsError};
use crate::value::dump::DumpStep;
use crate::value::saved::Encoding;

// The chunked dump and restore, and the saved form, each in its own file.
mod dumps;
mod one_table;
mod saved_form;

fn reserved(settings: Settings) -> CfValue {
    CfValue::reserve(settings).expect("valid settings")
}

fn ready(value: &mut CfValue) -> &mut Ready {
    value.ready_mut().expect("ready")
}

/// A filter holding `items` distinct items.
fn filled(settings: Settings, items: u32) -> CfValue {
    let mut value = reserved(settings);
    for i in 0..items {
        ready(&mut value).add(&i.to_le_bytes()).expect("room");
    }
    value
}

/// Every `CF.SCANDUMP` step of a value, as `(iterator, data)` pairs.
fn scandump(value: &CfValue) -> Vec<(i64, Vec<u8>)> {
    let ready = value.ready().expect("ready");
    let (mut iterator, mut chunks) = (0, Vec::new());
    while let DumpStep::Chunk { next, data } = ready.dump_step(iterator).expect("valid iterator") {
        chunks.push((next, data));
        iterator = next;
    }
    chunks
}

/// Loads chunks into a key, as `CF.LOADCHUNK` would.
fn load(key: &mut Option<CfValue>, iterator: i64, data: &[u8]) -> Result<(), CfError> {
    if let Some(new) = CfValue::load_chunk(key.as_mut(), iterator, data)? {
        *key = Some(new);
    }
    Ok(())
}

#[test]
fn commands_on_a_filter() {
    check_commands(Settings::default(), 2);
}

/// Every command's effect on a new filter of these settings, whose buckets hold `bucket_size`.
fn check_commands(settings: Settings, bucket_size: u64) {
    let mut value = reserved(settings);
    let filter = ready(&mut value);
    filter.add(b"a").unwrap();
    filter.add(b"a").unwrap();
    assert_eq!(filter.add_unique(b"a"), Ok(false));
    assert_eq!(filter.add_unique(b"b"), Ok(true));
    assert!(filter.contains(b"a") && filter.contains(b"b") && !filter.contains(b"c"));
    assert_eq!((filter.count(b"a"), filter.count(b"c")), (2, 0));
    assert!(filter.delete(b"a"));
    assert!(!filter.delete(b"c"));
    let info = filter.info();
    assert_eq!(
        (info.inserted, info.deleted, info.filters, info.bucket_size, info.expansion, info.max_iterations),
        (2, 1, 1, bucket_size, 1, 20)
    );
    assert!(info.size > 0 && info.buckets * info.bucket_size >= 1024);
}

#[test]
fn one_item_many_times_ends_in_an_error_without_growing() {
    let mut value = reserved(Settings::default());
    let filter = ready(&mut value);
    for _ in 0..4 {
        filter.add(b"same").unwrap();
    }
    // The first refusal searched for a path of moves, and keeps that search's scratch space.
    assert_eq!(filter.add(b"same"), Err(CfError::TooManyCopies));
    let before = value.memory_usage();
    let filter = ready(&mut value);
    for _ in 0..1000 {
        assert_eq!(filter.add(b"same"), Err(CfError::TooManyCopies));
    }
    assert_eq!((filter.info().filters, value.memory_usage()), (1, before));
}

#[test]
fn a_fixed_filter_fills_up_and_a_growing_one_grows() {
    let fixed = Settings::default().with_capacity(100).unwrap().with_expansion(0).unwrap();
    let mut value = reserved(fixed);
    let filter = ready(&mut value);
    let added: Vec<u32> = (0..10_000u32).take_while(|i| filter.add(&i.to_le_bytes()).is_ok()).collect();
    assert!(added.len() >= 100 && added.len() < 10_000);
    assert_eq!(filter.add(b"one more"), Err(CfError::Full));
    assert!(added.iter().all(|i| filter.contains(&i.to_le_bytes())));
    assert_eq!(filter.info().filters, 1);

    let growing = filled(Settings::default().with_capacity(100).unwrap(), 10_000);
    let info = growing.ready().unwrap().info();
    assert!(info.filters > 1 && info.inserted == 10_000);
    assert!((0..10_000u32).all(|i| growing.ready().unwrap().contains(&i.to_le_bytes())));
}

#[test]
fn insert_errors_name_the_cause() {
    let growing = reserved(Settings::default());
    let fixed = reserved(Settings::default().with_expansion(0).unwrap());
    let (growing, fixed) = (growing.ready().unwrap(), fixed.ready().unwrap());
    assert_eq!(growing.insert_error(InsertError::Full), CfError::MaxExpansions);
    assert_eq!(fixed.insert_error(InsertError::Full), CfError::Full);
    assert_eq!(growing.insert_error(InsertError::CopyLimit { copies: 4 }), CfError::TooManyCopies);
    assert_eq!(fixed.insert_error(InsertError::OutOfMemory { bytes: 1 }), CfError::OutOfMemory);
}

#[test]
fn a_built_filter_gives_its_settings_back() {
    for settings in [
        Settings::default(),
        Settings::default().with_expansion(0).unwrap().with_bucket_size(8).unwrap(),
        Settings::default()
            .with_expansion(8)
            .unwrap()
            .with_max_iterations(3)
            .unwrap()
            .with_error_rate(0.0001)
            .unwrap(),
    ] {
        let filter = key_filter::build(&settings).unwrap();
        let recovered = |max_iterations| key_filter::settings(&filter, max_iterations, settings.expansion);
        assert_eq!(recovered(settings.max_iterations), Some(settings));
        // Options that did not build this filter are refused.
        assert_eq!(recovered(settings.max_iterations + 1), None);
    }
}

#[test]
fn unreachable_rates_are_refused() {
    let settings = Settings::default().with_error_rate(1e-15).unwrap();
    assert_eq!(key_filter::build(&settings).unwrap_err(), SettingsError::ErrorRate);
}

#[test]
fn settings_errors_reach_the_reply() {
    assert_eq!(CfError::from(SettingsError::Capacity).message(), "Bad capacity");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Random bytes never make a saved value, a header or a chunk panic.
    #[test]
    fn random_bytes_are_refused_or_read(bytes in proptest::collection::vec(any::<u8>(), 0..200), iterator in any::<i64>()) {
        let _ = CfValue::from_saved(&bytes, Encoding::Legacy);
        let _ = CfValue::from_saved(&bytes, Encoding::Checked);
        let mut key = None;
        let _ = load(&mut key, 1, &bytes);
        let _ = load(&mut key, iterator, &bytes);
    }

    /// A mutated dump either restores a filter that answers, or is refused.
    #[test]
    fn mutated_dumps_never_panic(flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..), 1..4), chunk in 0usize..2) {
        let value = filled(Settings::default(), 200);
        let mut chunks = scandump(&value);
        for (at, mask) in flips {
            let data = &mut chunks[chunk].1;
            let index = at.index(data.len());
            data[index] ^= mask;
        }
        let mut key = None;
        let loaded = chunks.iter().try_for_each(|(iterator, data)| load(&mut key, *iterator, data));
        if loaded.is_ok() {
            let filter = key.as_ref().unwrap().ready();
            if let Ok(filter) = filter {
                let _ = filter.contains(b"x");
                let _ = filter.info();
            }
        }
    }
}

/// The defaults against RedisBloom's, at 10^6 items reserved and added: no more memory than its
/// 16.8 bits per item, at most a tenth of its 1.55% false-positive rate (both measured there).
#[test]
fn the_defaults_beat_redisbloom_at_a_million() {
    let items = 1_000_000u32;
    let value = filled(Settings::default().with_capacity(i64::from(items)).unwrap(), items);
    let filter = value.ready().unwrap();
    let bits_per_item = value.memory_usage() as f64 * 8.0 / f64::from(items);
    let absent = 1_000_000u32;
    let false_positives =
        (0..absent).filter(|i| filter.contains(&(u64::from(*i) + (1 << 40)).to_le_bytes())).count();
    let rate = false_positives as f64 / f64::from(absent);
    assert!(bits_per_item <= 16.8, "{bits_per_item:.2} bits per item");
    assert!(rate <= 0.00155, "false-positive rate {rate}");
    assert_eq!(filter.info().filters, 1);
}
