//! Repeated items in a list, found exactly by their full 64-bit hash, at little more than the
//! cost of one filter lookup per item.
//!
//! Two items are the same key to the filter exactly when their hashes are equal (it keeps nothing
//! else of them), so the hash tells a repeat from a different item without error. A fingerprint
//! lookup alone would not do: a different item whose fingerprint is already there (a look-alike)
//! would be taken for a repeat and skipped, and read absent once the look-alike is removed.
//!
//! Keeping every hash in a hash set works but costs a cache miss per item and about 16 bytes per
//! item. Instead, the filter's own lookup sorts the items first: an item it answers "absent" for
//! cannot be a repeat of an earlier item (which would be in it, with the same fingerprint in the
//! same buckets), short of one earlier in the same block, not yet inserted (a small per-block
//! set catches those). Such items are inserted at once, and their hashes appended to a list (8
//! bytes each, written in order). The few it answers "present" for, repeats and look-alikes
//! alike, are held back, each distinct hash once; at the end, those whose hash is in the list
//! are repeats, and the others are inserted. An item held back is never a repeat of a later
//! item inserted at once: the later one has the same fingerprint in the same buckets, which the
//! filter already held, so it is held back too.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use bugu::{AnyFilter, Filter};

use crate::input::Item;

/// A set of hashes that are already uniform: hashed by passing them through.
type HashSet64 = HashSet<u64, BuildHasherDefault<Passthrough>>;

/// The items of one pass that are not repeats, to insert.
pub(crate) struct Fresh<'a> {
    pub(crate) hashes: Vec<u64>,
    pub(crate) items: Vec<&'a [u8]>,
}

/// What the search for repeats has seen so far.
pub(crate) struct Repeats {
    /// The hashes of the items passed on for insertion at once, in order.
    passed: Vec<u64>,
    /// The items held back: the filter answered "present" when they came. Each hash once, with
    /// the item's text (for the messages about it).
    held: Vec<(u64, Vec<u8>)>,
    held_hashes: HashSet64,
    /// The hashes passed on from the current block.
    block: HashSet64,
    /// Repeats found.
    pub(crate) found: u64,
}

impl Repeats {
    /// A search over about `items` items.
    pub(crate) fn new(items: usize) -> Self {
        Self {
            passed: Vec::with_capacity(items),
            held: Vec::new(),
            held_hashes: HashSet64::default(),
            block: HashSet64::default(),
            found: 0,
        }
    }

    /// The items of `block` (with their `hashes`) to insert now: those the filter answers absent
    /// for, less repeats within the block. The others are held back or counted as repeats.
    pub(crate) fn sift<'a>(&mut self, filter: &AnyFilter, hashes: &[u64], block: &[Item<'a>]) -> Fresh<'a> {
        let present = filter.contains_hash_batch(hashes);
        let mut fresh =
            Fresh { hashes: Vec::with_capacity(block.len()), items: Vec::with_capacity(block.len()) };
        self.block.clear();
        for ((&hash, &(raw, _)), present) in hashes.iter().zip(block).zip(present) {
            if present {
                if self.held_hashes.insert(hash) {
                    self.held.push((hash, raw.to_vec()));
                } else {
                    self.found += 1;
                }
            } else if self.block.insert(hash) {
                fresh.hashes.push(hash);
                fresh.items.push(raw);
            } else {
                self.found += 1;
            }
        }
        self.passed.extend_from_slice(&fresh.hashes);
        fresh
    }

    /// At the end: the held-back items that are not repeats of an item passed on, to insert
    /// (their hashes, and their text); the others are counted as repeats.
    pub(crate) fn finish(&mut self) -> (Vec<u64>, Vec<Vec<u8>>) {
        let held = std::mem::take(&mut self.held);
        let passed: HashSet64 =
            self.passed.iter().copied().filter(|hash| self.held_hashes.contains(hash)).collect();
        let (mut hashes, mut items) = (Vec::new(), Vec::new());
        for (hash, item) in held {
            if passed.contains(&hash) {
                self.found += 1;
            } else {
                hashes.push(hash);
                items.push(item);
            }
        }
        (hashes, items)
    }
}

/// The keys are already uniform 64-bit hashes: a hasher that passes them through costs nothing.
#[derive(Default)]
struct Passthrough(u64);

impl Hasher for Passthrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used; any other input is folded in, to stay a correct hasher.
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}
