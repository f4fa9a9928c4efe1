//! The expanding filter's file (kind 3): round trips at random points of growth, hostile bytes,
//! and a golden file that pins the format.

use bugu::hash::HashFunction;
use bugu::{ExpandingFilter, ExpandingView, Filter, FilterMut, Persist, PersistError};
use proptest::prelude::*;

fn grown(initial: usize, items: u64, seed: u64) -> ExpandingFilter {
    let mut filter = ExpandingFilter::builder().initial_capacity(initial).seed(seed).build().unwrap();
    for i in 0..items {
        filter.insert(&i).unwrap();
    }
    filter
}

/// Every answer the two filters give for `probes` keys is the same, and so are their bytes.
fn assert_same(filter: &ExpandingFilter, copy: &ExpandingFilter, probes: u64) {
    assert_eq!(copy.len(), filter.len());
    assert_eq!(copy.stats().tail_histogram, filter.stats().tail_histogram);
    assert_eq!(copy.stats().rate_bound, filter.stats().rate_bound);
    for key in 0..probes {
        assert_eq!(copy.contains(&key), filter.contains(&key), "key {key}");
        assert_eq!(copy.count(&key), filter.count(&key), "key {key}");
    }
    assert_eq!(copy.to_bytes(), filter.to_bytes());
}

/// A view answers every query as the filter whose bytes it reads.
fn assert_view_same(filter: &ExpandingFilter, view: &ExpandingView<'_>, probes: u64) {
    assert_eq!(view.len(), filter.len());
    assert_eq!(view.stats().tail_histogram, filter.stats().tail_histogram);
    assert_eq!(view.stats().rate_bound, filter.stats().rate_bound);
    let keys: Vec<u64> = (0..probes).collect();
    for key in &keys {
        assert_eq!(view.contains(key), filter.contains(key), "key {key}");
        assert_eq!(view.count(key), filter.count(key), "key {key}");
    }
    assert_eq!(view.contains_batch(&keys), filter.contains_batch(&keys));
    assert_eq!(view.to_filter().unwrap().to_bytes(), filter.to_bytes());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Saved at any point of growth (mid-round, with twins, after removals), the filter reads
    /// back with identical answers, by bytes and by stream, and goes on identically.
    #[test]
    fn reads_back_identically_at_any_point(items in 0u64..6_000, removed in 0u64..500, seed: u64) {
        let mut filter = grown(64, items, seed);
        for key in (0..items).step_by(7).take(removed as usize) {
            prop_assert!(filter.remove(&key));
        }
        let bytes = filter.to_bytes();
        prop_assert_eq!(bytes.len(), filter.serialized_len());
        let copy = ExpandingFilter::from_bytes(&bytes).unwrap();
        assert_same(&filter, &copy, items + 1_000);
        let mut streamed = ExpandingFilter::read_from(&bytes[..]).unwrap();
        assert_same(&filter, &streamed, 0);
        assert_view_same(&filter, &ExpandingView::from_bytes(&bytes).unwrap(), items + 1_000);
        // Both go on the same way: the random state is saved too.
        for key in items..items + 2_000 {
            filter.insert(&key).unwrap();
            streamed.insert(&key).unwrap();
        }
        prop_assert_eq!(streamed.to_bytes(), filter.to_bytes());
    }
}

#[test]
fn a_file_saved_and_loaded_answers_as_the_filter_did() {
    let filter = grown(100, 20_000, 7);
    let path = std::env::temp_dir().join(format!("bugu-expanding-{}", std::process::id()));
    filter.save(&path).unwrap();
    let loaded = ExpandingFilter::load(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_same(&filter, &loaded, 30_000);
}

#[test]
fn a_memory_mapped_file_is_queried_in_place() {
    let mut filter = grown(100, 30_000, 9);
    for key in (0..30_000u64).step_by(3) {
        assert!(filter.remove(&key));
    }
    let path = std::env::temp_dir().join(format!("bugu-expanding-view-{}", std::process::id()));
    filter.save(&path).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    // SAFETY: the file is this test's own, and nothing writes to it while it is mapped.
    let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
    let view = ExpandingView::from_bytes(&map).unwrap();
    assert_eq!(view.stats().memory_bytes, 0, "the view owns no table");
    assert_view_same(&filter, &view, 40_000);
    drop(view);
    drop(map);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_view_of_the_narrowest_entries_reads_them_in_place() {
    // A loose target and a small maximum: entries under 8 bits, 2-byte buckets, so the last
    // bucket's 8-byte read takes the padding and the checksum after it.
    let mut filter = ExpandingFilter::builder().false_positive_rate(0.9).max_items(1_000).build().unwrap();
    for key in 0..500u64 {
        filter.insert(&key).unwrap();
    }
    let stats = filter.stats();
    assert!(stats.fingerprint_bits + stats.tail_bits < 8, "{stats:?}");
    let bytes = filter.to_bytes();
    let view = ExpandingView::from_bytes(&bytes).unwrap();
    let loaded = ExpandingFilter::from_bytes(&bytes).unwrap();
    for key in 0..2_000u64 {
        assert_eq!(view.contains(&key), loaded.contains(&key), "key {key}");
        assert_eq!(view.contains(&key), filter.contains(&key), "key {key}");
    }
}

#[test]
fn every_truncation_is_refused() {
    let bytes = grown(16, 300, 1).to_bytes();
    for len in 0..bytes.len() {
        let err = ExpandingFilter::from_bytes(&bytes[..len]).unwrap_err();
        assert!(matches!(err, PersistError::Truncated { .. } | PersistError::BadMagic), "{len} bytes: {err}");
        assert!(ExpandingFilter::read_from(&bytes[..len]).is_err());
        assert!(ExpandingView::from_bytes(&bytes[..len]).is_err());
    }
}

/// Re-seals `bytes` (the checksum recomputed), so a change reaches the field and content checks.
fn sealed(mut bytes: Vec<u8>) -> Vec<u8> {
    let body = bytes.len() - 8;
    let checksum = xxhash_rust::xxh3::xxh3_64(&bytes[..body]);
    bytes[body..].copy_from_slice(&checksum.to_le_bytes());
    bytes
}

#[test]
fn every_changed_byte_is_refused_or_read_as_a_valid_filter() {
    let filter = grown(16, 400, 3);
    let bytes = filter.to_bytes();
    for at in 0..bytes.len() - 8 {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut changed = bytes.clone();
            changed[at] ^= flip;
            // Unsealed: the checksum catches it.
            assert!(ExpandingFilter::from_bytes(&changed).is_err(), "byte {at}");
            assert!(ExpandingView::from_bytes(&changed).is_err(), "byte {at}");
            // Sealed: refused, or a filter that holds what its bytes say and works; a view
            // refuses the same bytes or answers as the filter does.
            let changed = sealed(changed);
            let view = ExpandingView::from_bytes(&changed);
            assert_eq!(view.is_ok(), ExpandingFilter::from_bytes(&changed).is_ok(), "byte {at}");
            if let Ok(mut copy) = ExpandingFilter::from_bytes(&changed) {
                let view = view.unwrap();
                assert!((0..200u64).all(|key| view.contains(&key) == copy.contains(&key)));
                assert_eq!(
                    copy.stats().tail_histogram.iter().sum::<usize>() + copy.stats().stash,
                    copy.stats().entries
                );
                for key in 0..200u64 {
                    let _ = copy.contains(&key);
                    if copy.insert(&(key + 1_000_000)).is_ok() {
                        assert!(copy.contains(&(key + 1_000_000)));
                    }
                }
            }
        }
    }
}

#[test]
fn hostile_fields_are_refused_before_anything_is_allocated() {
    let bytes = grown(16, 100, 5).to_bytes();
    let field = |index: usize, value: u64| {
        let mut changed = bytes.clone();
        changed[16 + 8 * index..24 + 8 * index].copy_from_slice(&value.to_le_bytes());
        ExpandingFilter::from_bytes(&sealed(changed)).unwrap_err()
    };
    for (index, value) in [
        (0, 2f64.to_bits()), // rate
        (1, 0),              // declared maximum
        (3, 0),              // fingerprint bits
        (3, 17),
        (4, 14), // tail bits
        (5, 3),  // odd initial bucket count
        (5, 1 << 50),
        (6, 60),        // level
        (6, u64::MAX),  // found by the fuzzer: level plus tail bits overflowed
        (7, u64::MAX),  // split pointer
        (8, u64::MAX),  // items
        (10, u64::MAX), // stash length
    ] {
        let err = field(index, value);
        assert!(
            matches!(err, PersistError::InvalidParameter(_) | PersistError::Truncated { .. }),
            "field {index} = {value}: {err}"
        );
    }
}

#[test]
fn content_that_breaks_a_rule_is_refused() {
    use bugu::persist::InvalidParameter;
    // The default widths for 0.001 up to 2^32 items: 10-bit fingerprints, 8-bit tails, so
    // 10-byte buckets whose last 4 bits are unused. An empty filter: every bucket is zero.
    let bytes = ExpandingFilter::new(10).unwrap().to_bytes();
    let first_bucket = 16 + 88;
    let refused = |at: usize, value: u8| {
        let mut changed = bytes.clone();
        changed[at] = value;
        match ExpandingFilter::from_bytes(&sealed(changed)) {
            Err(PersistError::InvalidParameter(InvalidParameter::Expanding { field, .. })) => field,
            other => panic!("byte {at} = {value}: {other:?}"),
        }
    };
    assert_eq!(refused(first_bucket, 1), "empty slot with a fingerprint");
    assert_eq!(refused(first_bucket + 9, 0x80), "bucket with bits past its entries");
    assert_eq!(refused(80, 1), "item count above the entries");
    // A tail field (marker only) makes the slot an entry: then the same file is valid.
    let mut entry = bytes.clone();
    entry[first_bucket + 5] = 1; // bit 40: the first tail field's lowest bit
    entry[80] = 1;
    let filter = ExpandingFilter::from_bytes(&sealed(entry)).unwrap();
    assert_eq!((filter.len(), filter.stats().entries), (1, 1));
}

/// A skipped add-if-absent insert is kept in the header's flags (bit 1), through a file and a view;
/// a file without the canonical-keys flag (bit 0) is refused, as no expanding filter was written so.
#[test]
fn a_skipped_insert_is_remembered_and_the_key_encoding_checked() {
    let mut filter = grown(100, 500, 5);
    assert!(!filter.has_skipped_inserts());
    assert_eq!(filter.to_bytes()[12], 1);
    assert_eq!(filter.insert_unique(&7u64), Ok(false));
    assert!(filter.has_skipped_inserts());
    let bytes = filter.to_bytes();
    assert_eq!(bytes[12], 3);
    assert!(ExpandingFilter::from_bytes(&bytes).unwrap().has_skipped_inserts());
    assert!(ExpandingView::from_bytes(&bytes).unwrap().has_skipped_inserts());
    assert!(!ExpandingView::from_bytes(&grown(100, 500, 5).to_bytes()).unwrap().has_skipped_inserts());
    let mut old_keys = bytes;
    old_keys[12] &= !1;
    let old_keys = sealed(old_keys);
    assert!(matches!(ExpandingFilter::from_bytes(&old_keys), Err(PersistError::InvalidParameter(_))));
    assert!(matches!(ExpandingView::from_bytes(&old_keys), Err(PersistError::InvalidParameter(_))));
}

#[test]
fn other_kinds_are_refused() {
    let cuckoo = bugu::CuckooFilter::new(10).unwrap().to_bytes();
    assert!(matches!(ExpandingFilter::from_bytes(&cuckoo), Err(PersistError::WrongKind { .. })));
    let expanding = ExpandingFilter::new(10).unwrap().to_bytes();
    assert!(matches!(bugu::CuckooFilter::from_bytes(&expanding), Err(PersistError::WrongKind { .. })));
    assert_eq!(bugu::persist::FilterKind::detect(&expanding).unwrap(), bugu::persist::FilterKind::Expanding);
}

/// Written by the first version of kind 3 (`BUGU_BLESS=1` writes it when missing): read back,
/// answering as the same filter built now, and written back byte for byte.
#[test]
fn the_golden_file_reads_back_and_rewrites_identically() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/expanding_default.bugu");
    let build = || {
        let mut filter =
            ExpandingFilter::builder().initial_capacity(50).max_items(1 << 20).seed(11).build().unwrap();
        for i in 0..2_000u64 {
            filter.insert(&format!("item_{i}")).unwrap();
        }
        for i in (0..2_000u64).step_by(5) {
            assert!(filter.remove(&format!("item_{i}")));
        }
        filter
    };
    if std::env::var_os("BUGU_BLESS").is_some() && !path.exists() {
        build().save(&path).unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();
    // Decoded by hand from docs/format.md: header, kind 3, the fields.
    assert_eq!(&bytes[..8], b"\x89BUGU\r\n\x1a");
    assert_eq!(u16::from_le_bytes([bytes[10], bytes[11]]), 3);
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    assert_eq!(f64::from_bits(u64_at(16)), 0.001);
    assert_eq!(u64_at(24), 1 << 20);
    assert_eq!(u64_at(32), 11);
    assert_eq!(u64_at(80), 1_600);
    let filter = ExpandingFilter::from_bytes(&bytes).unwrap();
    assert_eq!(filter.to_bytes(), bytes);
    // Where entries are placed (the load held, the order of moves) may change from version to
    // version; the file's meaning may not: the same items, the same count, and every one found
    // in both the file and a filter built today.
    let today = build();
    assert_eq!(filter.len(), today.len());
    for i in 0..2_000u64 {
        let key = format!("item_{i}");
        if i % 5 != 0 {
            assert!(filter.contains(&key), "{key}");
            assert!(today.contains(&key), "{key}");
        }
    }
    // Both go on: the file's filter still inserts, grows and removes.
    let mut grown = filter.clone();
    for i in 2_000..4_000u64 {
        grown.insert(&format!("item_{i}")).unwrap();
    }
    for i in (0..4_000u64).filter(|i| i % 5 != 0 || *i >= 2_000) {
        assert!(grown.remove(&format!("item_{i}")), "item_{i}");
    }
    assert!(grown.is_empty());
}

/// `expanding_load90.bugu` was written by an earlier build, which held the table at 90% of its
/// slots (20,000 items `item_0`.. grown from 100, seed 12, declared maximum 2^20): read by a
/// build that holds less, it comes down to that load a few splits per insert, not in one pause.
#[test]
fn a_file_written_at_a_higher_load_comes_down_a_few_splits_per_insert() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/expanding_load90.bugu");
    let mut filter = ExpandingFilter::from_bytes(&std::fs::read(&path).unwrap()).unwrap();
    assert!(filter.load_factor() > 0.85, "written at 90%: {}", filter.load_factor());
    let mut inserted = 0u64;
    while filter.load_factor() > 0.8 {
        let buckets = filter.bucket_count();
        filter.insert(&format!("more_{inserted}")).unwrap();
        inserted += 1;
        assert!(filter.bucket_count() - buckets <= 4, "one insert split {}", filter.bucket_count() - buckets);
        assert!(inserted < 1_000, "still at {} after {inserted} inserts", filter.load_factor());
    }
    for i in 0..20_000u64 {
        assert!(filter.contains(&format!("item_{i}")), "item_{i}");
    }
    for i in 0..inserted {
        assert!(filter.contains(&format!("more_{i}")), "more_{i}");
    }
}

/// Kind 3 stores no hash id, so its files mean what they meant when written only because the
/// expanding filter's hash function is pinned (id 2), not taken from the default: this fails if
/// the filter ever follows another function.
#[test]
fn expanding_files_hash_with_the_pinned_function() {
    assert_eq!(ExpandingFilter::new(10).unwrap().hash_function(), HashFunction::Xxh3Mix8);
    assert_eq!(HashFunction::Xxh3Mix8.id(), 2);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/expanding_default.bugu");
    let bytes = std::fs::read(path).unwrap();
    let view = ExpandingView::from_bytes(&bytes).unwrap();
    assert_eq!(view.hash_function(), HashFunction::Xxh3Mix8);
    // Hashed here with the pinned function named outright: every item the file keeps answers.
    for i in (0..2_000u64).filter(|i| i % 5 != 0) {
        let key = format!("item_{i}");
        assert!(view.contains_hash(HashFunction::Xxh3Mix8.hash_bytes(key.as_bytes(), 11)), "{key}");
    }
}
