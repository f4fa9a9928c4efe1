//! Keys made with `GROWTH ONETABLE`: the commands, removals, the saved form and dumps.

use super::*;

fn one_table() -> Settings {
    Settings::default().with_growth(b"onetable").unwrap().checked(|_| false).unwrap()
}

#[test]
fn commands_on_a_one_table_filter() {
    check_commands(one_table(), 4);
}

/// Grown from the default capacity to 10^5 items, a one-table key removes every item, in any
/// order, each removal answered 1: none is left as a false positive, as the chain leaves some.
#[test]
fn grown_from_the_default_every_delete_is_taken() {
    let items = 100_000u32;
    let mut value = filled(one_table(), items);
    let filter = ready(&mut value);
    assert_eq!(filter.info().filters, 1);
    // Every other item first, then the rest: each live item still answers present meanwhile.
    for i in (0..items).step_by(2) {
        assert!(filter.delete(&i.to_le_bytes()), "item {i} not removed");
    }
    assert!((1..items).step_by(2).all(|i| filter.contains(&i.to_le_bytes())));
    for i in (1..items).step_by(2) {
        assert!(filter.delete(&i.to_le_bytes()), "item {i} not removed");
    }
    let info = filter.info();
    assert_eq!((info.inserted, info.deleted), (0, u64::from(items)));
}

/// The same items in a chain grown the same way: some deletes are refused (the reason for the
/// one-table option), so the comparison above means something.
#[test]
fn a_grown_chain_refuses_some_deletes() {
    let items = 100_000u32;
    let mut value = filled(Settings::default(), items);
    let filter = ready(&mut value);
    let refused = (0..items).filter(|i| !filter.delete(&i.to_le_bytes())).count();
    assert!(refused > 0, "no delete refused in a chain of {} levels", filter.info().filters);
}

#[test]
fn the_saved_form_and_dumps_keep_a_one_table_filter() {
    let mut value = filled(one_table().with_capacity(50).unwrap(), 5_000);
    ready(&mut value).delete(&3u32.to_le_bytes());
    let saved = value.to_saved();
    let back = CfValue::from_saved(&saved, Encoding::Checked).expect("valid");
    assert_eq!(back.to_saved(), saved);
    assert_eq!(back.ready().unwrap().info(), value.ready().unwrap().info());
    assert_eq!(back.ready().unwrap().settings.growth, Growth::OneTable);
    let mut key = None;
    for (iterator, data) in scandump(&value) {
        load(&mut key, iterator, &data).unwrap();
    }
    let restored = key.unwrap();
    assert_eq!(restored.to_saved(), saved);
    let restored = restored.ready().unwrap();
    for i in 0..6_000u32 {
        let item = i.to_le_bytes();
        assert_eq!(restored.contains(&item), value.ready().unwrap().contains(&item));
    }
    assert!((0..5_000u32).filter(|&i| i != 3).all(|i| restored.contains(&i.to_le_bytes())));
}

/// A one-table filter in a saved form whose options it cannot have come from is refused.
#[test]
fn a_one_table_filter_with_foreign_options_is_refused() {
    let value = filled(one_table(), 100);
    let saved = value.to_saved();
    for (offset, bytes) in [(10, 0u16.to_le_bytes().to_vec()), (12, 7u32.to_le_bytes().to_vec())] {
        let mut content = saved[..saved.len() - 16].to_vec();
        content[offset..offset + bytes.len()].copy_from_slice(&bytes);
        assert!(CfValue::from_saved(&content, Encoding::Legacy).is_none(), "offset {offset}");
    }
    assert!(CfValue::from_saved(&saved[..saved.len() - 16], Encoding::Legacy).is_some());
}

/// Past what its widths were chosen for, an insert is refused as the chain's last level is.
#[test]
fn insert_errors_of_a_one_table_filter() {
    let value = reserved(one_table());
    let filter = value.ready().unwrap();
    assert_eq!(filter.insert_error(InsertError::RateBound), CfError::MaxExpansions);
    assert_eq!(filter.insert_error(InsertError::CopyLimit { copies: 8 }), CfError::TooManyCopies);
}

/// `MEMORY USAGE` of a key grown from the default capacity to 10^5 items against one reserved
/// for them: the ratio the server test checks, here without a server's allocator.
#[test]
fn memory_grown_against_reserved() {
    let items = 100_000u32;
    let grown = filled(one_table(), items);
    let reserved_chain = filled(Settings::default().with_capacity(i64::from(items)).unwrap(), items);
    let chain = filled(Settings::default(), items);
    let (grown, reserved_chain, chain) =
        (grown.memory_usage() as f64, reserved_chain.memory_usage() as f64, chain.memory_usage() as f64);
    assert!(grown < chain, "one table {grown} bytes, grown chain {chain}");
    assert!(grown <= 2.0 * reserved_chain, "one table {grown} bytes, reserved {reserved_chain}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// A mutated dump of a one-table filter either restores a filter that answers, or is refused.
    #[test]
    fn mutated_one_table_dumps_never_panic(flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..), 1..4)) {
        let value = filled(one_table().with_capacity(20).unwrap(), 300);
        let mut chunks = scandump(&value);
        for (at, mask) in flips {
            let data = &mut chunks[1].1;
            let index = at.index(data.len());
            data[index] ^= mask;
        }
        let mut key = None;
        if chunks.iter().try_for_each(|(iterator, data)| load(&mut key, *iterator, data)).is_ok()
            && let Ok(filter) = key.as_ref().unwrap().ready()
        {
            let _ = (filter.contains(b"x"), filter.count(b"x"), filter.info());
        }
    }
}
