//! Models of the concurrent filter's protocol, explored by `loom` over every interleaving of its
//! atomic operations (up to a preemption bound). Built only with `--cfg loom`, which swaps the
//! table's atomics for loom's; the command is in docs/testing.md ("The concurrent filter: soak
//! and loom"):
//!
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p bugu --test loom --release`
#![cfg(loom)]

use std::sync::Arc;

use bugu::{CuckooFilter, Filter, FilterMut};

/// A tiny table: 16 buckets of 2 slots of 8 bits (one stripe, four words and padding).
fn tiny() -> bugu::Builder {
    CuckooFilter::builder().capacity(6).bucket_size(2).fingerprint_bits(8).eviction_limit(8).seed(7)
}

/// Where `key`'s fingerprint sits in `filter`: the first slot that removing it empties.
fn position(filter: &CuckooFilter, key: u32) -> (usize, usize) {
    let mut without = filter.clone();
    assert!(without.remove(&key));
    let (before, after) = (filter.buckets(..), without.buckets(..));
    before
        .zip(after)
        .find_map(|(b, a)| (0..b.slots.len()).find(|&s| b.slots[s] != a.slots[s]).map(|s| (b.index, s)))
        .unwrap()
}

/// The keys whose inserts fill the tiny table, the first key whose insert moves stored
/// fingerprints, and the stored keys it moves, found with a plain filter.
fn keys_until_a_move() -> (Vec<u32>, u32, Vec<u32>) {
    let mut plain = tiny().build().unwrap();
    let mut stored = Vec::new();
    for key in 0u32.. {
        let before = plain.clone();
        if plain.insert(&key).is_err() {
            continue;
        }
        let moved: Vec<u32> =
            stored.iter().copied().filter(|&k| position(&before, k).0 != position(&plain, k).0).collect();
        if !moved.is_empty() {
            println!("{} keys stored, then key {key} moves {moved:?}", stored.len());
            return (stored, key, moved);
        }
        stored.push(key);
    }
    unreachable!()
}

/// A lookup that runs while an insert moves fingerprints between buckets finds the moved items.
#[test]
fn a_move_never_hides_an_item_from_a_lookup() {
    let (stored, mover, moved) = keys_until_a_move();
    loom::model(move || {
        let filter = Arc::new(tiny().build_concurrent().unwrap());
        for key in &stored {
            filter.insert(key).unwrap();
        }
        let writer = {
            let filter = Arc::clone(&filter);
            loom::thread::spawn(move || filter.insert(&mover).unwrap())
        };
        for key in &moved {
            assert!(filter.contains(key), "false negative for {key} during a move");
        }
        writer.join().unwrap();
        assert!(filter.contains(&mover));
    });
}

/// Two writers on the same stripe: both inserts succeed and are found, the count is exact, and a
/// removal racing with a lookup of another item does not hide it.
#[test]
fn writers_exclude_each_other() {
    loom::model(|| {
        let filter = Arc::new(tiny().build_concurrent().unwrap());
        filter.insert(&100u32).unwrap();
        let handles: Vec<_> = [1u32, 2]
            .into_iter()
            .map(|key| {
                let filter = Arc::clone(&filter);
                loom::thread::spawn(move || {
                    filter.insert(&key).unwrap();
                    assert!(filter.remove(&key));
                })
            })
            .collect();
        assert!(filter.contains(&100u32));
        for handle in handles {
            handle.join().unwrap();
        }
        assert_eq!(filter.len(), 1);
        assert!(filter.contains(&100u32));
    });
}

/// A second copy of a stored item is added and one copy removed while the item is looked up: the
/// copy that stays is found throughout (a removal that leaves another copy counts in the move
/// word, since the copy removed may be the one the lookup would have seen).
#[test]
fn removing_one_of_two_copies_never_hides_the_other() {
    loom::model(|| {
        let filter = Arc::new(tiny().build_concurrent().unwrap());
        filter.insert(&5u32).unwrap();
        let writer = {
            let filter = Arc::clone(&filter);
            loom::thread::spawn(move || {
                filter.insert(&5u32).unwrap();
                assert!(filter.remove(&5u32));
            })
        };
        assert!(filter.contains(&5u32), "false negative while a copy was added and one removed");
        writer.join().unwrap();
        assert_eq!(filter.count(&5u32), 1);
    });
}
