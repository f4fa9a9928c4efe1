//! The record of skipped add-if-absent inserts: set exactly when `insert_unique` stores nothing,
//! kept through every way a filter is copied or saved, and cleared with the filter. Tools that
//! remove items rely on it to warn before a removal can cause false negatives.

use bugu::{ConcurrentFilter, CuckooFilter, CuckooView, Filter, FilterMut, GrowableFilter, Persist};

/// Distinct keys, added if absent, into a filter of 4-bit fingerprints: some share a fingerprint
/// and buckets with a key added before them, and `insert_unique` skips them. The keys stored and
/// the keys skipped.
fn look_alike_fill(filter: &mut impl FilterMut) -> (Vec<u64>, Vec<u64>) {
    let (mut stored, mut skipped) = (Vec::new(), Vec::new());
    for key in 0..100u64 {
        match filter.insert_unique(&key) {
            Ok(true) => stored.push(key),
            Ok(false) => skipped.push(key),
            Err(_) => {}
        }
    }
    (stored, skipped)
}

fn narrow(bucket_size: usize) -> CuckooFilter {
    let capacity = 200.min(bugu::sizing::capacity_limit(bucket_size, 4));
    CuckooFilter::builder().capacity(capacity).fingerprint_bits(4).bucket_size(bucket_size).build().unwrap()
}

#[test]
fn the_record_is_set_only_by_a_skip() {
    let mut filter = CuckooFilter::builder().capacity(100).fingerprint_bits(16).build().unwrap();
    for key in 0..50u64 {
        assert_eq!(filter.insert_unique(&key), Ok(true));
        filter.insert(&(key + 1_000)).unwrap();
        filter.remove(&(key + 1_000));
    }
    assert!(!filter.has_skipped_inserts());
    assert!(!CuckooFilter::from_bytes(&filter.to_bytes()).unwrap().has_skipped_inserts());
    assert_eq!(filter.insert_unique(&7u64), Ok(false));
    assert!(filter.has_skipped_inserts());
}

#[test]
fn a_skipped_look_alike_is_why_the_record_exists() {
    let mut filter = narrow(2);
    let (stored, skipped) = look_alike_fill(&mut filter);
    assert!(!skipped.is_empty(), "4-bit fingerprints give look-alikes");
    assert!(filter.has_skipped_inserts());
    // Removing every key that was stored leaves the skipped ones absent: false negatives, the
    // outcome the record warns of.
    for key in &stored {
        assert!(filter.remove(key));
    }
    assert!(skipped.iter().all(|key| !filter.contains(key)));
}

#[test]
fn the_record_survives_every_copy_and_save_and_clear_resets_it() {
    let mut filter = narrow(4);
    look_alike_fill(&mut filter);
    assert!(filter.has_skipped_inserts());

    let bytes = filter.to_bytes();
    assert_eq!(bytes[12], 0b11, "flags: canonical keys, skipped inserts");
    assert!(CuckooFilter::from_bytes(&bytes).unwrap().has_skipped_inserts());
    assert!(CuckooFilter::read_from(&bytes[..]).unwrap().has_skipped_inserts());
    let view = CuckooView::from_bytes(&bytes).unwrap();
    assert!(view.has_skipped_inserts() && view.to_filter().has_skipped_inserts());
    let path = std::env::temp_dir().join(format!("bugu-skipped-inserts-{}.bugu", std::process::id()));
    filter.save(&path).unwrap();
    assert!(CuckooFilter::load(&path).unwrap().has_skipped_inserts());
    let shared = ConcurrentFilter::from_filter(&filter).unwrap();
    assert!(shared.has_skipped_inserts() && shared.to_filter().unwrap().has_skipped_inserts());
    shared.save(&path).unwrap();
    assert!(ConcurrentFilter::load(&path).unwrap().has_skipped_inserts());
    std::fs::remove_file(&path).unwrap();

    filter.clear();
    assert!(!filter.has_skipped_inserts());
    assert_eq!(filter.to_bytes()[12], 0b01);
}

#[test]
fn the_concurrent_filter_records_a_skip_from_any_thread() {
    let filter = ConcurrentFilter::builder().capacity(1_000).build_concurrent().unwrap();
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                for key in 0..100u64 {
                    filter.insert_unique(&key).unwrap();
                }
            });
        }
    });
    // Each key was offered twice: one of the offers was skipped.
    assert!(filter.has_skipped_inserts());
    assert_eq!(filter.len(), 100);
}

#[test]
fn the_growable_filter_records_skips_in_any_level_and_keeps_them() {
    let mut filter =
        GrowableFilter::builder().initial_capacity(20).false_positive_rate(0.01).build().unwrap();
    for key in 0..200u64 {
        assert_eq!(filter.insert_unique(&key), Ok(true));
    }
    assert!(filter.level_count() > 1 && !filter.has_skipped_inserts());
    assert_eq!(filter.insert_unique(&3u64), Ok(false));
    assert!(filter.has_skipped_inserts());
    let copy = GrowableFilter::from_bytes(&filter.to_bytes()).unwrap();
    assert!(copy.has_skipped_inserts());
    assert!(copy.levels().iter().all(CuckooFilter::has_skipped_inserts));
    filter.clear();
    assert!(!filter.has_skipped_inserts());
}
