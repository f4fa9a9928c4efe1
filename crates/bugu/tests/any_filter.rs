//! `AnyFilter` and `AnyView`: a filter of whichever kind a file holds answers, changes, reports
//! and writes exactly as the filter of that kind does.

use bugu::persist::FilterKind;
use bugu::{
    AnyFilter, AnyView, CuckooFilter, ExpandingFilter, Filter, FilterMut, GrowableFilter, Persist,
    PersistError,
};
use proptest::prelude::*;

/// One filter of each kind, holding `items` keys `0..items` (the fixed one sized for them).
fn one_of_each(items: u64) -> Vec<AnyFilter> {
    let mut fixed = CuckooFilter::builder().capacity(items as usize + 10).seed(3).build().unwrap();
    let mut chain = GrowableFilter::builder().initial_capacity(50).seed(3).build().unwrap();
    let mut one_table = ExpandingFilter::builder().initial_capacity(50).seed(3).build().unwrap();
    for key in 0..items {
        fixed.insert(&key).unwrap();
        chain.insert(&key).unwrap();
        one_table.insert(&key).unwrap();
    }
    vec![fixed.into(), chain.into(), one_table.into()]
}

#[test]
fn every_kind_reads_back_by_its_header_and_writes_the_same_bytes() {
    for filter in one_of_each(2_000) {
        let bytes = filter.to_bytes();
        assert_eq!(bytes.len(), filter.serialized_len());
        let read = AnyFilter::from_bytes(&bytes).unwrap();
        let streamed = AnyFilter::read_from(&bytes[..]).unwrap();
        let view = AnyView::from_bytes(&bytes).unwrap();
        for other in [&read, &streamed] {
            assert_eq!(other.kind(), filter.kind());
            assert_eq!(other.to_bytes(), bytes);
        }
        assert_eq!(view.kind(), filter.kind());
        assert_eq!(view.to_filter().unwrap().to_bytes(), bytes);
        for key in 0..4_000u64 {
            let expected = filter.contains(&key);
            assert_eq!(expected, key < 2_000 || read.contains(&key));
            assert_eq!(read.contains(&key), expected);
            assert_eq!(view.contains(&key), expected);
            assert_eq!(view.count(&key), filter.count(&key));
        }
        let keys: Vec<u64> = (0..4_000).collect();
        assert_eq!(view.contains_batch(&keys), filter.contains_batch(&keys));
    }
}

#[test]
fn a_stream_of_filters_of_different_kinds_reads_one_at_a_time() {
    let filters = one_of_each(300);
    let mut stream = Vec::new();
    for filter in &filters {
        filter.write_to(&mut stream).unwrap();
    }
    let mut reader = &stream[..];
    for filter in &filters {
        assert_eq!(AnyFilter::read_from(&mut reader).unwrap().to_bytes(), filter.to_bytes());
    }
    assert!(matches!(AnyFilter::read_from(&mut reader), Err(PersistError::Truncated { .. })));
    // A header cut short, and bytes that are not a filter.
    assert!(matches!(AnyFilter::read_from(&stream[..5]), Err(PersistError::Truncated { .. })));
    assert!(matches!(AnyFilter::from_bytes(b"not a filter at all"), Err(PersistError::BadMagic)));
    assert!(matches!(AnyView::from_bytes(&stream[..7]), Err(PersistError::Truncated { .. })));
}

#[test]
fn every_truncation_and_single_byte_change_is_an_error_or_the_same_answers() {
    for filter in one_of_each(200) {
        let bytes = filter.to_bytes();
        for len in 0..bytes.len() {
            assert!(AnyFilter::from_bytes(&bytes[..len]).is_err(), "{} cut at {len}", filter.kind());
            assert!(AnyView::from_bytes(&bytes[..len]).is_err());
            assert!(AnyFilter::read_from(&bytes[..len]).is_err());
        }
        for at in (0..bytes.len()).step_by(7) {
            let mut changed = bytes.clone();
            changed[at] ^= 0x10;
            // The checksum catches every change; nothing panics.
            assert!(AnyFilter::from_bytes(&changed).is_err(), "{} byte {at}", filter.kind());
            assert!(AnyView::from_bytes(&changed).is_err());
        }
    }
}

#[test]
fn files_of_every_kind_load_and_save_through_one_type() {
    let dir = std::env::temp_dir().join(format!("bugu-any-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (at, filter) in one_of_each(500).into_iter().enumerate() {
        let path = dir.join(format!("{at}.bugu"));
        filter.save(&path).unwrap();
        let mut loaded = AnyFilter::load(&path).unwrap();
        assert_eq!(loaded.to_bytes(), filter.to_bytes());
        loaded.insert("added").unwrap();
        loaded.save(&path).unwrap();
        assert!(AnyFilter::load(&path).unwrap().contains("added"));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_summary_means_the_same_for_every_kind() {
    let filters = one_of_each(1_000);
    for filter in &filters {
        let summary = filter.summary();
        assert_eq!((summary.kind, summary.items), (filter.kind(), 1_000));
        assert!(summary.capacity > 0 && summary.buckets > 0 && summary.memory_bytes > 0, "{summary:?}");
        assert!(summary.load_factor > 0.0 && summary.load_factor <= 1.0);
        assert!(summary.expected_false_positive_rate <= summary.false_positive_rate_bound);
        match summary.target_false_positive_rate {
            None => assert_eq!(filter.kind(), FilterKind::Cuckoo),
            Some(target) => assert!(summary.false_positive_rate_bound < target),
        }
        let bits = summary.memory_bytes as f64 * 8.0 / 1_000.0;
        assert!((summary.bits_per_item - bits).abs() / bits < 0.2, "{summary:?}");
        // A view of the bytes reports the same, its table read in place.
        let bytes = filter.to_bytes();
        let viewed = AnyView::from_bytes(&bytes).unwrap().summary();
        assert_eq!(
            (viewed.items, viewed.buckets, viewed.levels),
            (summary.items, summary.buckets, summary.levels)
        );
        assert_eq!(viewed.false_positive_rate_bound, summary.false_positive_rate_bound);
        // Blocks as allocated: at least the tables in use.
        assert!(filter.heap_blocks().iter().sum::<usize>() >= summary.memory_bytes);
    }
    assert_eq!(filters[0].summary().target_false_positive_rate, None);
}

/// An update through `AnyFilter`.
#[derive(Debug, Clone)]
enum Op {
    Insert(u16),
    InsertUnique(u16),
    Remove(u16),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..400u16).prop_map(Op::Insert),
        (0..400u16).prop_map(Op::InsertUnique),
        (0..400u16).prop_map(Op::Remove),
    ]
}

proptest! {
    #[test]
    fn updates_through_any_filter_are_the_kinds_own(ops in proptest::collection::vec(op(), 1..300)) {
        let mut fixed = CuckooFilter::builder().capacity(200).seed(9).build().unwrap();
        let mut chain = GrowableFilter::builder().initial_capacity(20).seed(9).build().unwrap();
        let mut one_table = ExpandingFilter::builder().initial_capacity(20).seed(9).build().unwrap();
        let mut any: Vec<AnyFilter> = vec![fixed.clone().into(), chain.clone().into(), one_table.clone().into()];
        for op in ops {
            match op {
                Op::Insert(key) => {
                    prop_assert_eq!(any[0].insert(&key), fixed.insert(&key));
                    prop_assert_eq!(any[1].insert(&key), chain.insert(&key));
                    prop_assert_eq!(any[2].insert(&key), one_table.insert(&key));
                }
                Op::InsertUnique(key) => {
                    prop_assert_eq!(any[0].insert_unique(&key), fixed.insert_unique(&key));
                    prop_assert_eq!(any[1].insert_unique(&key), chain.insert_unique(&key));
                    prop_assert_eq!(any[2].insert_unique(&key), one_table.insert_unique(&key));
                }
                Op::Remove(key) => {
                    prop_assert_eq!(any[0].remove(&key), fixed.remove(&key));
                    prop_assert_eq!(any[1].remove(&key), chain.remove(&key));
                    prop_assert_eq!(any[2].remove(&key), one_table.remove(&key));
                }
            }
        }
        prop_assert_eq!(any[0].to_bytes(), fixed.to_bytes());
        prop_assert_eq!(any[1].to_bytes(), chain.to_bytes());
        prop_assert_eq!(any[2].to_bytes(), one_table.to_bytes());
        prop_assert_eq!(any[2].has_skipped_inserts(), one_table.has_skipped_inserts());
        for filter in &mut any {
            filter.clear();
            prop_assert!(filter.is_empty());
        }
    }
}

/// A program that keeps many filters (a Redis key's value each) pays for what each holds: the
/// kinds larger than a chain are boxed, so the enum is a chain's size (its tag fits in a niche or
/// one more word).
#[test]
fn any_filter_is_the_size_of_a_chain() {
    let (any, chain) = (std::mem::size_of::<AnyFilter>(), std::mem::size_of::<GrowableFilter>());
    assert!(any <= chain + 8, "AnyFilter {any} bytes, GrowableFilter {chain}");
    assert!(std::mem::size_of::<AnyView<'_>>() <= chain + 8);
}

/// Bits per item has one meaning for every kind, empty filters included (counted per one item,
/// so a report never shows an infinity).
#[test]
fn an_empty_filter_of_every_kind_counts_its_bits_per_one_item() {
    for filter in one_of_each(0) {
        let summary = filter.summary();
        assert_eq!(summary.items, 0);
        assert_eq!(summary.bits_per_item, summary.memory_bytes as f64 * 8.0, "{summary:?}");
    }
}
