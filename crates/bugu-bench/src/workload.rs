//! Workload generation: seeded keys, the three lookup mixes, and the half that gets deleted.
//!
//! Keys must be distinct (a duplicate would look like a false positive or be a second copy) and
//! there can be 10^8 of them, so they come from a bijection instead of a set: 64-bit keys are
//! `mix64(i + offset)` for distinct counters `i`, which cannot collide because `mix64` (the
//! SplitMix64 finaliser) is invertible. The present keys use counters `0..n`, the absent ones
//! `n..n + lookups`, so no absent key is ever present.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// A key type the harness can feed to every contender.
pub trait Key: Hash + Copy + bugu::Key {
    /// The key as a `u64`, for filters that only take integers (xorf). Integers are themselves;
    /// strings are hashed with the standard library's `DefaultHasher`, which is what xorf's own
    /// `HashProxy` would use (it cannot wrap `BinaryFuse8`, whose construction is fallible).
    fn to_u64(&self) -> u64;
}

impl Key for u64 {
    #[inline]
    fn to_u64(&self) -> u64 {
        *self
    }
}

impl Key for &str {
    #[inline]
    fn to_u64(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        self.hash(&mut hasher);
        hasher.finish()
    }
}

/// The SplitMix64 finaliser: a bijection on `u64` with good avalanche.
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A small seeded generator (SplitMix64): the one every binary and benchmark of this crate draws
/// its shuffles and random picks from, reproducible without a `rand` dependency.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator whose stream is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0)
    }

    /// A value in `0..bound` (Lemire's multiply-shift; the bias is below 2^-40 for our bounds).
    pub fn below(&mut self, bound: usize) -> usize {
        ((self.next_u64() as u128 * bound as u128) >> 64) as usize
    }

    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// `count` distinct pseudo-random 64-bit keys for counters `start..start + count`.
pub fn u64_keys(seed: u64, start: u64, count: usize) -> Vec<u64> {
    let offset = mix64(seed ^ 0x5eed_f00d_b0b0_cafe);
    (start..start + count as u64).map(|i| mix64(i.wrapping_add(offset))).collect()
}

/// String keys `user_<id>` stored back to back in one buffer: 10^8 separate `String`s would cost
/// 24 bytes of header plus an allocation each.
#[derive(Debug, Default)]
pub struct StringKeys {
    text: String,
    ends: Vec<usize>,
}

impl StringKeys {
    /// Keys `user_<start>` .. `user_<start + count - 1>`: sequential ids, like the user ids
    /// a database hands out; the seed only decides the order of lookups.
    pub fn new(start: u64, count: usize) -> Self {
        use std::fmt::Write;
        let mut text = String::with_capacity(count * 14);
        let mut ends = Vec::with_capacity(count);
        for id in start..start + count as u64 {
            write!(text, "user_{id}").expect("writing to a String cannot fail");
            ends.push(text.len());
        }
        StringKeys { text, ends }
    }

    /// A copy of `keys` laid out back to back in the given order. A lookup sequence gets its own
    /// buffer in lookup order: reading the keys' bytes then streams through memory, as it would
    /// for keys that just arrived in a request, instead of adding a cache miss per key that has
    /// nothing to do with the filter.
    pub fn from_keys(keys: &[&str]) -> Self {
        let mut text = String::with_capacity(keys.iter().map(|k| k.len()).sum());
        let mut ends = Vec::with_capacity(keys.len());
        for key in keys {
            text.push_str(key);
            ends.push(text.len());
        }
        StringKeys { text, ends }
    }

    /// All keys, as borrowed slices of the buffer.
    pub fn keys(&self) -> Vec<&str> {
        let mut begin = 0;
        self.ends
            .iter()
            .map(|&end| {
                let key = &self.text[begin..end];
                begin = end;
                key
            })
            .collect()
    }
}

/// Names of the three lookup mixes, in the order of [`Workload::lookups`].
pub const MIXES: [&str; 3] = ["0%", "50%", "100%"];

/// Share of present keys in each mix, in the order of [`MIXES`].
pub const PRESENT_SHARES: [f64; 3] = [0.0, 0.5, 1.0];

/// Everything one run feeds to a contender.
#[derive(Debug)]
pub struct Workload<K> {
    /// Keys to insert, in insertion order.
    pub present: Vec<K>,
    /// Lookup sequences with 0%, 50% and 100% present keys, each shuffled.
    pub lookups: [Vec<K>; 3],
}

impl<K: Key> Workload<K> {
    /// Builds the lookup mixes from `present` (all inserted) and `absent` (never inserted, at
    /// least `lookups` of them). Each mix has `lookups` keys.
    pub fn new(present: Vec<K>, absent: &[K], lookups: usize, seed: u64) -> Self {
        assert!(absent.len() >= lookups, "need {lookups} absent keys, got {}", absent.len());
        let lookups = lookups.min(present.len());
        let mut rng = SplitMix64::new(seed ^ 0x1007_c0b5);
        // A shuffled sample of the present keys: a permutation of their indices, cut short.
        let mut order: Vec<usize> = (0..present.len()).collect();
        rng.shuffle(&mut order);
        let hits: Vec<K> = order[..lookups].iter().map(|&i| present[i]).collect();
        drop(order);

        let none = absent[..lookups].to_vec();
        let half = lookups / 2;
        let mut mixed: Vec<K> = hits[..half].iter().chain(&absent[..lookups - half]).copied().collect();
        rng.shuffle(&mut mixed);
        Workload { present, lookups: [none, mixed, hits] }
    }

    /// How many keys each lookup mix has.
    pub fn lookup_count(&self) -> usize {
        self.lookups[0].len()
    }
}

/// Splits the successfully inserted keys into the half to delete and the half to keep, in
/// insertion order; keys whose insert failed are in neither (deleting a key that is not stored
/// may remove another key's fingerprint, which would then be a false negative of ours).
pub fn split_for_delete<K: Copy>(present: &[K], failed: &[usize]) -> (Vec<K>, Vec<K>) {
    let mut failed = failed.iter().copied().peekable();
    let mut stored = Vec::with_capacity(present.len());
    for (i, &key) in present.iter().enumerate() {
        if failed.peek() == Some(&i) {
            failed.next();
        } else {
            stored.push(key);
        }
    }
    let keep = stored.split_off(stored.len() / 2);
    (stored, keep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_distinct_and_seeded() {
        let mut a = u64_keys(1, 0, 10_000);
        a.extend(u64_keys(1, 10_000, 10_000));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 20_000);
        assert_eq!(a[..10], u64_keys(1, 0, 10)[..]);
        assert_ne!(a[..10], u64_keys(2, 0, 10)[..]);
    }

    #[test]
    fn string_keys_look_like_user_ids() {
        let keys = StringKeys::new(7, 3);
        assert_eq!(keys.keys(), vec!["user_7", "user_8", "user_9"]);
        let copy = StringKeys::from_keys(&["user_9", "user_7"]);
        assert_eq!(copy.keys(), vec!["user_9", "user_7"]);
    }

    #[test]
    fn mixes_have_the_stated_share_of_present_keys() {
        let present = u64_keys(3, 0, 1000);
        let absent = u64_keys(3, 1000, 1000);
        let set: std::collections::HashSet<u64> = present.iter().copied().collect();
        let workload = Workload::new(present, &absent, 1000, 3);
        for (mix, share) in workload.lookups.iter().zip(PRESENT_SHARES) {
            assert_eq!(mix.len(), 1000);
            let hits = mix.iter().filter(|k| set.contains(k)).count();
            assert_eq!(hits, (1000.0 * share) as usize);
        }
    }

    #[test]
    fn delete_split_skips_failed_inserts() {
        let (delete, keep) = split_for_delete(&[10, 11, 12, 13, 14], &[1]);
        assert_eq!(delete, vec![10, 12]);
        assert_eq!(keep, vec![13, 14]);
    }
}
