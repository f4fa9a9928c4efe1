//! Keys: one encoding of an item into bytes, the same in every front end.
//!
//! A key means the same thing in Rust, the `bugu` command, the Redis module and every other
//! binding, so that a filter built by one answers for the keys of another:
//!
//! | key | bytes hashed |
//! |---|---|
//! | text (`str`, `String`) | its UTF-8 bytes, nothing added |
//! | bytes (`[u8]`, `[u8; N]`, `Vec<u8>`) | the bytes themselves |
//! | an integer (`u8` ..= `u64`, `usize`, `i8` ..= `i64`, `isize`) | its value as a 64-bit two's-complement integer, 8 bytes little-endian |
//!
//! So `filter.contains("user_42")`, `filter.contains_bytes(b"user_42")`, the line `user_42` given
//! to `bugu check` and `CF.EXISTS key user_42` ask about one key. Integers of every width name the
//! same key for the same value (`42u8`, `42u32` and `42i64` are one key), which is what a C program
//! hashing `&value, sizeof(int64_t)` on a little-endian machine hashes; `-1i32` and `u64::MAX`
//! share their 8 bytes and are one key too.
//!
//! Any other `T: Hash` is a key once wrapped in [`Hashed`]: it is fed through the portable
//! hasher ([`PortableHasher`](crate::hash::PortableHasher)), which writes integers little-endian
//! and `usize` as 64 bits, so it hashes the same on every platform — but not the same as any
//! byte string, so only Rust programs that wrap the same type can ask about it.
//!
//! ```
//! use bugu::{CuckooFilter, Filter, FilterMut, Hashed};
//!
//! let mut filter = CuckooFilter::new(100)?;
//! filter.insert("user_42")?;
//! assert!(filter.contains_bytes(b"user_42"));
//! assert!(filter.contains(&String::from("user_42")));
//!
//! filter.insert(&7u32)?;
//! assert!(filter.contains(&7u64) && filter.contains_bytes(&7u64.to_le_bytes()));
//!
//! filter.insert(&Hashed(("tenant", 3u16)))?;
//! assert!(filter.contains(&Hashed(("tenant", 3u16))));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Filters written before this encoding existed hashed typed keys through `std::hash::Hash`
//! (which appends a `0xff` byte to a `str` and writes a `u32` as 4 bytes). Their files say so, and
//! such a filter keeps answering typed keys by that rule ([`KeyEncoding::StdHash`]); the byte and
//! hash entry points are the same under both.

use std::hash::{Hash, Hasher};

use crate::hash::HashFunction;

/// How a filter turns typed keys (the `insert`, `contains`, ... calls that take a [`Key`]) into
/// hashes. Bytes (`*_bytes`) and hashes (`*_hash`) are not affected.
///
/// ```
/// use bugu::{CuckooFilter, Filter, key::KeyEncoding};
/// assert_eq!(CuckooFilter::new(10)?.key_encoding(), KeyEncoding::Canonical);
/// # Ok::<(), bugu::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyEncoding {
    /// The project's key encoding (see [the module](self)): text as its UTF-8 bytes, integers as 8
    /// little-endian bytes. Every filter built by this version uses it.
    #[default]
    Canonical,
    /// Typed keys hashed through `std::hash::Hash` and the portable hasher, as by the versions
    /// that wrote files without the canonical-keys flag. Such filters are read with this rule, so
    /// that they keep answering for the typed keys they were given; nothing builds new ones.
    StdHash,
}

impl KeyEncoding {
    /// The hash of `key` under this encoding.
    #[inline(always)]
    pub(crate) fn hash<K: Key + ?Sized>(self, key: &K, function: HashFunction, seed: u64) -> u64 {
        // Known at compile time: for 64-bit integers the rule is not even looked at, so their
        // lookups cost what they did before filters had a rule.
        if K::SAME_UNDER_STD_HASH {
            return key.hash_key(function, seed);
        }
        match self {
            KeyEncoding::Canonical => key.hash_key(function, seed),
            KeyEncoding::StdHash => function.hash_item(key, seed),
        }
    }
}

/// A value the filters take as a key: text, bytes, an integer, or anything wrapped in
/// [`Hashed`]. See [the module](self) for the encoding.
///
/// Implement it for a type of your own by hashing its canonical bytes:
///
/// ```
/// use bugu::{CuckooFilter, Filter, FilterMut, Key, hash::HashFunction};
///
/// /// An IPv4 address, keyed by its four bytes in network order.
/// #[derive(Hash)]
/// struct Ip([u8; 4]);
///
/// impl Key for Ip {
///     fn hash_key(&self, function: HashFunction, seed: u64) -> u64 {
///         function.hash_bytes(&self.0, seed)
///     }
/// }
///
/// let mut filter = CuckooFilter::new(100)?;
/// filter.insert(&Ip([10, 0, 0, 1]))?;
/// assert!(filter.contains_bytes(&[10, 0, 0, 1]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// `Hash` is a supertrait so that filters read from files of the older rule
/// ([`KeyEncoding::StdHash`]) can still hash the key as they did.
pub trait Key: Hash {
    /// Whether the canonical hash of every value of this type equals its hash through `Hash`
    /// and the portable hasher (true of 64-bit integers, written as 8 little-endian bytes both
    /// ways, and of [`Hashed`] values). Filters then skip choosing between the two rules. Leave it
    /// `false` unless that holds: a wrong `true` makes filters read from files of the older rule
    /// miss their keys.
    const SAME_UNDER_STD_HASH: bool = false;

    /// The key's hash under the canonical encoding, with `function` and `seed`.
    fn hash_key(&self, function: HashFunction, seed: u64) -> u64;
}

impl<K: Key + ?Sized> Key for &K {
    const SAME_UNDER_STD_HASH: bool = K::SAME_UNDER_STD_HASH;

    #[inline(always)]
    fn hash_key(&self, function: HashFunction, seed: u64) -> u64 {
        (**self).hash_key(function, seed)
    }
}

impl<K: Key + ?Sized> Key for Box<K> {
    const SAME_UNDER_STD_HASH: bool = K::SAME_UNDER_STD_HASH;

    #[inline(always)]
    fn hash_key(&self, function: HashFunction, seed: u64) -> u64 {
        (**self).hash_key(function, seed)
    }
}

impl Key for str {
    #[inline(always)]
    fn hash_key(&self, function: HashFunction, seed: u64) -> u64 {
        function.hash_bytes(self.as_bytes(), seed)
    }
}

impl Key for String {
    #[inline(always)]
    fn hash_key(&self, function: HashFunction, seed: u64) -> u64 {
        function.hash_bytes(self.as_bytes(), seed)
    }
}

impl Key for [u8] {
    #[inline(always)]
    fn hash_key(&self, function: HashFunction, seed: u64) -> u64 {
        function.hash_bytes(self, seed)
    }
}

impl<const N: usize> Key for [u8; N] {
    #[inline(always)]
    fn hash_key(&self, function: HashFunction, seed: u64) -> u64 {
        function.hash_bytes(self, seed)
    }
}

impl Key for Vec<u8> {
    #[inline(always)]
    fn hash_key(&self, function: HashFunction, seed: u64) -> u64 {
        function.hash_bytes(self, seed)
    }
}

/// Integers: the value widened to 64 bits (zero-extended if unsigned, sign-extended if signed),
/// 8 bytes little-endian.
macro_rules! integer_keys {
    ($wide:ty: $($int:ty),*) => {$(
        impl Key for $int {
            // `Hash` writes the 64-bit ones as the same 8 bytes (`usize`, `isize` widened).
            const SAME_UNDER_STD_HASH: bool = size_of::<$int>() == 8;

            #[inline(always)]
            fn hash_key(&self, function: HashFunction, seed: u64) -> u64 {
                function.hash_bytes(&(*self as $wide).to_le_bytes(), seed)
            }
        }
    )*};
}
integer_keys!(u64: u8, u16, u32, u64, usize);
integer_keys!(i64: i8, i16, i32, i64, isize);

/// Any `T: Hash` as a key, hashed through the portable hasher (see [the module](self)): for
/// tuples, structs and other types with no byte encoding of their own.
///
/// ```
/// use bugu::{CuckooFilter, Filter, FilterMut, Hashed};
///
/// #[derive(Hash)]
/// struct Visit { user: u64, day: u16 }
///
/// let mut filter = CuckooFilter::new(100)?;
/// filter.insert(&Hashed(Visit { user: 7, day: 300 }))?;
/// assert!(filter.contains(&Hashed(Visit { user: 7, day: 300 })));
/// assert!(!filter.contains(&Hashed(Visit { user: 7, day: 301 })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Hashed<T>(pub T);

/// Transparent: the wrapper adds nothing to what `T` writes, so a wrapped key hashes alike under
/// both [`KeyEncoding`]s.
impl<T: Hash> Hash for Hashed<T> {
    #[inline(always)]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl<T: Hash> Key for Hashed<T> {
    const SAME_UNDER_STD_HASH: bool = true;

    #[inline(always)]
    fn hash_key(&self, function: HashFunction, seed: u64) -> u64 {
        function.hash_item(&self.0, seed)
    }
}

/// How a batch's items become hashes, a block at a time (see [`crate::batch`]): keys by their
/// encoding, or hashes given as they are.
/// Implementations are inlined into the code that locates the block, so that they are compiled
/// with its target features.
pub(crate) trait BlockHasher<T> {
    /// The hashes of up to `N` items, in order; lanes past the items are 0.
    fn hash_block<const N: usize>(&self, items: &[T]) -> [u64; N];
}

/// Items that are hashes already.
pub(crate) struct Prehashed;

impl BlockHasher<u64> for Prehashed {
    #[inline(always)]
    fn hash_block<const N: usize>(&self, hashes: &[u64]) -> [u64; N] {
        let mut block = [0; N];
        for (lane, &hash) in block.iter_mut().zip(hashes) {
            *lane = hash;
        }
        block
    }
}

/// Keys hashed by a filter's function, seed and key encoding.
pub(crate) struct ItemHasher {
    pub(crate) function: HashFunction,
    pub(crate) seed: u64,
    pub(crate) encoding: KeyEncoding,
}

impl<T: Key> BlockHasher<T> for ItemHasher {
    /// The function and encoding are matched once for the block, so that each arm is a plain
    /// loop (for 64-bit integers under [`HashFunction::Xxh3Mix8`], one that vector units run).
    #[inline(always)]
    fn hash_block<const N: usize>(&self, items: &[T]) -> [u64; N] {
        #[inline(always)]
        fn with<T: Key, const N: usize>(
            function: HashFunction,
            encoding: KeyEncoding,
            items: &[T],
            seed: u64,
        ) -> [u64; N] {
            let fill = |hashes: &mut [u64; N], items: &[T]| {
                for (hash, item) in hashes.iter_mut().zip(items) {
                    *hash = encoding.hash(item, function, seed);
                }
            };
            let mut hashes = [0; N];
            match <&[T; N]>::try_from(items) {
                // A whole block gets a copy of the loop of its own, of a constant count, which
                // the compiler vectorizes.
                Ok(whole) => fill(&mut hashes, whole),
                Err(_) => fill(&mut hashes, items),
            }
            hashes
        }
        use HashFunction::{Xxh3 as Plain, Xxh3Mix8 as Mix8};
        use KeyEncoding::{Canonical, StdHash};
        match (self.function, self.encoding) {
            (Plain, Canonical) => with(Plain, Canonical, items, self.seed),
            (Mix8, Canonical) => with(Mix8, Canonical, items, self.seed),
            (Plain, StdHash) => with(Plain, StdHash, items, self.seed),
            (Mix8, StdHash) => with(Mix8, StdHash, items, self.seed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn canonical<K: Key + ?Sized>(key: &K) -> u64 {
        KeyEncoding::Canonical.hash(key, HashFunction::default(), 9)
    }

    fn bytes(bytes: &[u8]) -> u64 {
        HashFunction::default().hash_bytes(bytes, 9)
    }

    #[test]
    fn text_is_its_utf8_bytes_in_every_form() {
        let text = "user_42 ✓";
        let expected = bytes(text.as_bytes());
        assert_eq!(canonical(text), expected);
        assert_eq!(canonical(&text), expected);
        assert_eq!(canonical(&String::from(text)), expected);
        assert_eq!(canonical(&Box::<str>::from(text)), expected);
        assert_eq!(canonical(text.as_bytes()), expected);
        assert_eq!(canonical(&text.as_bytes().to_vec()), expected);
        // Under the old rule a `str` carries std's terminator byte: another key.
        assert_ne!(KeyEncoding::StdHash.hash(text, HashFunction::default(), 9), expected);
    }

    #[test]
    fn integers_of_every_width_are_their_64_bit_little_endian_bytes() {
        let expected = bytes(&42u64.to_le_bytes());
        for hash in [
            canonical(&42u8),
            canonical(&42u16),
            canonical(&42u32),
            canonical(&42usize),
            canonical(&42i8),
            canonical(&42i16),
            canonical(&42i32),
            canonical(&42i64),
            canonical(&42isize),
            canonical(&[42, 0, 0, 0, 0, 0, 0, 0]),
        ] {
            assert_eq!(hash, expected);
        }
        assert_eq!(canonical(&-1i32), bytes(&u64::MAX.to_le_bytes()));
        assert_eq!(canonical(&-2i8), bytes(&(-2i64).to_le_bytes()));
        // The old rule wrote a u32 as 4 bytes.
        assert_ne!(KeyEncoding::StdHash.hash(&42u32, HashFunction::default(), 9), expected);
        assert_eq!(KeyEncoding::StdHash.hash(&42u64, HashFunction::default(), 9), expected);
    }

    #[test]
    fn hashed_is_the_portable_hasher_under_both_encodings() {
        let key = Hashed(("a", 1u32));
        let expected = HashFunction::default().hash_item(&("a", 1u32), 9);
        assert_eq!(canonical(&key), expected);
        assert_eq!(KeyEncoding::StdHash.hash(&key, HashFunction::default(), 9), expected);
    }

    /// The claim that lets filters skip the rule must hold: both rules agree on these types.
    fn assert_same_under_both<K: Key>(key: K) {
        let function = HashFunction::default();
        let rules = |key: &K| (key.hash_key(function, 3), function.hash_item(key, 3));
        let (canonical, std_hash) = rules(&key);
        assert_eq!(canonical == std_hash, K::SAME_UNDER_STD_HASH, "{}", std::any::type_name::<K>());
    }

    #[test]
    fn same_under_std_hash_is_claimed_exactly_where_both_rules_agree() {
        assert_same_under_both(u64::MAX - 5);
        assert_same_under_both(-5i64);
        assert_same_under_both(7usize);
        assert_same_under_both(-7isize);
        assert_same_under_both::<&u64>(&7);
        assert_same_under_both(Box::new(7u64));
        assert_same_under_both(Hashed("a"));
        assert_same_under_both(7u32);
        assert_same_under_both(7i8);
        assert_same_under_both(String::from("a"));
        assert_same_under_both(vec![1u8, 2]);
        assert_same_under_both([1u8; 8]);
    }

    proptest! {
        #[test]
        fn any_text_or_integer_matches_its_documented_bytes(text in ".*", value in any::<i64>(), seed in any::<u64>()) {
            for function in HashFunction::ALL {
                prop_assert_eq!(text.hash_key(function, seed), function.hash_bytes(text.as_bytes(), seed));
                prop_assert_eq!(value.hash_key(function, seed), function.hash_bytes(&value.to_le_bytes(), seed));
                prop_assert_eq!((value as u32).hash_key(function, seed), function.hash_bytes(&u64::from(value as u32).to_le_bytes(), seed));
            }
        }
    }
}
