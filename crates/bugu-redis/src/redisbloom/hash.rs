//! RedisBloom's hashing of an item: Austin Appleby's MurmurHash64A (public domain) of the item's
//! bytes with seed 0, and the fingerprint and the two bucket hashes derived from it.

/// MurmurHash64A's multiplier; its low 32 bits are also the alternate-bucket multiplier.
const M: u64 = 0xc6a4a7935bd1e995;
const R: u32 = 47;
/// What a fingerprint is multiplied by to move between an item's two buckets.
const ALT_MULTIPLIER: u64 = 0x5bd1e995;

/// MurmurHash64A of `bytes`, reading 8-byte words little-endian as RedisBloom does on x86-64
/// and ARM64 (the only platforms it builds for).
pub(crate) fn murmur64a(bytes: &[u8], seed: u64) -> u64 {
    let mut h = seed ^ (bytes.len() as u64).wrapping_mul(M);
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let mut k = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        for (index, &byte) in tail.iter().enumerate() {
            h ^= u64::from(byte) << (8 * index);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The other bucket hash of a fingerprint found at `index` (either bucket's hash, or a bucket's
/// number): the same operation leads from each of an item's buckets to the other when the number
/// of buckets is a power of two.
pub(crate) fn alternate(fingerprint: u8, index: u64) -> u64 {
    index ^ u64::from(fingerprint).wrapping_mul(ALT_MULTIPLIER)
}

/// An item as RedisBloom looks it up: a fingerprint of 1..=255 (0 marks an empty slot) and the
/// hashes of its two buckets, each taken modulo a sub-filter's bucket count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lookup {
    pub(crate) fingerprint: u8,
    pub(crate) first: u64,
    pub(crate) second: u64,
}

impl Lookup {
    pub(crate) fn of_item(item: &[u8]) -> Self {
        Self::of_hash(murmur64a(item, 0))
    }

    /// The two bucket hashes, first then second.
    pub(crate) fn buckets(&self) -> [u64; 2] {
        [self.first, self.second]
    }

    pub(crate) fn of_hash(hash: u64) -> Self {
        let fingerprint = (hash % 255 + 1) as u8;
        Self { fingerprint, first: hash, second: alternate(fingerprint, hash) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur64a_matches_the_reference_for_every_tail_length() {
        // Computed by Appleby's reference MurmurHash64A in C, seed 0.
        let expected: [(&[u8], u64); 4] = [
            (b"", 0),
            (b"a", 0x071717d2d36b6b11),
            (b"hello", 0x1e68d17c457bf117),
            (b"hello, world!", 0xd18abe154a2a9637),
        ];
        for (bytes, hash) in expected {
            assert_eq!(murmur64a(bytes, 0), hash, "{:?}", String::from_utf8_lossy(bytes));
        }
    }

    #[test]
    fn the_alternate_of_the_alternate_is_the_bucket_for_powers_of_two() {
        for hash in [0u64, 1, 0xdead_beef, u64::MAX, 0x1234_5678_9abc_def0] {
            let lookup = Lookup::of_hash(hash);
            assert!((1..=255).contains(&lookup.fingerprint));
            for buckets in [1u64, 2, 1024, 1 << 40] {
                let second = lookup.second % buckets;
                assert_eq!(alternate(lookup.fingerprint, second) % buckets, lookup.first % buckets);
            }
        }
    }
}
