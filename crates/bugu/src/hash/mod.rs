//! From an item to one stable 64-bit hash: the hash functions, and the portable hasher behind them.
//!
//! Filters are persisted, replicated and loaded on other machines years later, so the hash must be
//! the same on every platform and in every later version of this crate (`docs/design.md`). Each
//! filter records which [`HashFunction`] it hashes with; both are frozen:
//! - [`HashFunction::Xxh3`] (id 1): XXH3-64 with a seed, whose output is frozen since xxHash 0.8;
//!   every filter built before id 2 existed uses it;
//! - [`HashFunction::Xxh3Mix8`] (id 2, the default): the same, except that an input of exactly 8
//!   bytes (any 64-bit integer) goes through a 64-bit mixer instead, far cheaper than XXH3 for
//!   such keys (`docs/design.md`, "Hashing").
//!
//! Two ways from an item to bytes to a hash:
//! - bytes: [`HashFunction::hash_bytes`] hashes exactly the bytes given;
//! - any `T: Hash`: [`HashFunction::hash_item`] feeds the value through [`PortableHasher`], which
//!   writes integers little-endian and `usize`/`isize` as 64-bit, so integers, `bool`, `char`,
//!   strings, byte slices and tuples or derived `Hash` impls of those hash identically everywhere.
//!
//! The filters' typed methods do not take `T: Hash`: they take a [`Key`](crate::Key), whose
//! encoding ([`crate::key`]) is the same in every front end — text as its UTF-8 bytes, integers as
//! 8 little-endian bytes — and [`Hashed`](crate::Hashed) for the `T: Hash` way. A `&str` through
//! `T: Hash` is not its bytes: the standard library's `Hash for str` appends a `0xff` terminator.
//! Callers who hash themselves pass a `u64` to the filters' `*_hash` methods (the filters'
//! `hash_of` gives the hash they would compute).
//!
//! [`hash_bytes`] and [`hash_item`] are [`HashFunction::Xxh3`]'s.
//!
//! What a filter derives from a hash, its fingerprint and two buckets, is the filters' own business
//! (the private `addressing` module), and frozen as well: a saved table answers only if each hash
//! still places its item where it was stored.

use std::hash::{Hash, Hasher};

use xxhash_rust::xxh3::{Xxh3, xxh3_64_with_seed};

mod addressing;

pub(crate) use addressing::{Addressing, Located, LocatedBlock};

/// Identifies [`HashFunction::Xxh3`] in persisted headers.
pub const HASH_ID_XXH3_64: u8 = 1;
/// Identifies [`HashFunction::Xxh3Mix8`] in persisted headers.
pub const HASH_ID_XXH3_MIX8: u8 = 2;

/// The function a filter hashes its items with. A filter keeps the one it was built with for
/// life, through persistence and growth; only filters of the same function (and seed) answer for
/// the same hashes.
///
/// ```
/// use bugu::hash::HashFunction;
///
/// let seed = 7;
/// // Inputs of any length but 8 bytes hash alike under both.
/// assert_eq!(HashFunction::Xxh3.hash_bytes(b"user_1", seed), HashFunction::Xxh3Mix8.hash_bytes(b"user_1", seed));
/// // A 64-bit integer takes the mixer under the default.
/// assert_ne!(HashFunction::Xxh3.hash_item(&42u64, seed), HashFunction::default().hash_item(&42u64, seed));
/// assert_eq!(HashFunction::from_id(HashFunction::default().id()), Some(HashFunction::Xxh3Mix8));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HashFunction {
    /// Seeded XXH3-64 over every input (persisted id 1).
    Xxh3,
    /// Seeded XXH3-64, except for inputs of exactly 8 bytes: those are read as a little-endian
    /// `u64`, XORed with the seed and a constant, and finished by SplitMix64's mixer (Stafford's
    /// "Mix13": two multiplications, three shift-XORs; a bijection with full avalanche). Persisted
    /// id 2; the default for new filters.
    #[default]
    Xxh3Mix8,
}

/// Mixed into the seed of 8-byte inputs, so that seed 0 does not map key 0 to hash 0 (the
/// fractional bits of the square root of 2).
const MIX8_SEED_KEY: u64 = 0x6a09_e667_f3bc_c908;

impl HashFunction {
    /// Every function, in id order.
    ///
    /// ```
    /// use bugu::hash::HashFunction;
    /// assert!(HashFunction::ALL.contains(&HashFunction::default()));
    /// ```
    pub const ALL: [HashFunction; 2] = [HashFunction::Xxh3, HashFunction::Xxh3Mix8];

    /// The id that names this function in persisted headers.
    pub const fn id(self) -> u8 {
        match self {
            HashFunction::Xxh3 => HASH_ID_XXH3_64,
            HashFunction::Xxh3Mix8 => HASH_ID_XXH3_MIX8,
        }
    }

    /// The function a persisted id names, if any.
    pub const fn from_id(id: u8) -> Option<Self> {
        // A loop over `ALL`, not an iterator, so that it stays a `const fn`.
        let mut i = 0;
        while i < Self::ALL.len() {
            if Self::ALL[i].id() == id {
                return Some(Self::ALL[i]);
            }
            i += 1;
        }
        None
    }

    /// A short name for reports: what `bugu info` shows and `bugu create --hash` takes.
    pub const fn name(self) -> &'static str {
        match self {
            HashFunction::Xxh3 => "xxh3",
            HashFunction::Xxh3Mix8 => "xxh3-mix8",
        }
    }

    /// Hashes raw bytes with this function and `seed`.
    ///
    /// ```
    /// use bugu::hash::HashFunction;
    /// let h = HashFunction::default().hash_bytes(b"item_0", 0);
    /// assert_eq!(h, HashFunction::default().hash_bytes(b"item_0", 0));
    /// assert_ne!(h, HashFunction::default().hash_bytes(b"item_0", 1));
    /// ```
    #[inline(always)]
    pub fn hash_bytes(self, bytes: &[u8], seed: u64) -> u64 {
        match (self, <&[u8; 8]>::try_from(bytes)) {
            (HashFunction::Xxh3Mix8, Ok(word)) => mix13(u64::from_le_bytes(*word) ^ seed ^ MIX8_SEED_KEY),
            _ => xxh3_64_with_seed(bytes, seed),
        }
    }

    /// Hashes any `T: Hash` through [`PortableHasher`] with this function and `seed`.
    ///
    /// ```
    /// use bugu::hash::HashFunction;
    /// // Integers hash by value and width, not by platform.
    /// let f = HashFunction::default();
    /// assert_eq!(f.hash_item(&42u64, 7), f.hash_item(&42usize, 7));
    /// assert_ne!(f.hash_item(&42u64, 7), f.hash_item(&42u32, 7));
    /// ```
    #[inline]
    pub fn hash_item<T: Hash + ?Sized>(self, item: &T, seed: u64) -> u64 {
        let mut hasher = PortableHasher::with_function(self, seed);
        item.hash(&mut hasher);
        hasher.finish()
    }
}

/// SplitMix64's finaliser (Stafford's Mix13).
#[inline(always)]
pub(crate) fn mix13(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Hashes raw bytes with seeded XXH3-64 ([`HashFunction::Xxh3`]).
///
/// ```
/// let h = bugu::hash::hash_bytes(b"item_0", 0);
/// assert_eq!(h, bugu::hash::hash_bytes(b"item_0", 0));
/// assert_ne!(h, bugu::hash::hash_bytes(b"item_0", 1));
/// ```
#[inline]
pub fn hash_bytes(bytes: &[u8], seed: u64) -> u64 {
    HashFunction::Xxh3.hash_bytes(bytes, seed)
}

/// Hashes any `T: Hash` through [`PortableHasher`] with [`HashFunction::Xxh3`].
///
/// ```
/// use bugu::hash::hash_item;
/// // Integers hash by value and width, not by platform.
/// assert_eq!(hash_item(&42u64, 7), hash_item(&42u64, 7));
/// assert_ne!(hash_item(&42u64, 7), hash_item(&42u32, 7));
/// ```
#[inline]
pub fn hash_item<T: Hash + ?Sized>(item: &T, seed: u64) -> u64 {
    HashFunction::Xxh3.hash_item(item, seed)
}

/// Keys up to this many bytes (after `Hash` has written them) are hashed in one shot from a stack
/// buffer; longer ones switch to the streaming state. Both give the same digest.
const INLINE_BYTES: usize = 64;

/// A [`Hasher`] with platform-independent output: a [`HashFunction`] over a normalised byte
/// stream.
///
/// Integers are written little-endian, `usize`/`isize` widened to 64 bits. Short inputs are buffered
/// on the stack and hashed in one call, so hashing a `u64` or a short string does not set up a
/// streaming state.
///
/// ```
/// use std::hash::{Hash, Hasher};
/// use bugu::hash::PortableHasher;
///
/// let mut hasher = PortableHasher::new(0);
/// "user_123".hash(&mut hasher);
/// let h = hasher.finish();
/// assert_eq!(h, bugu::hash::hash_item("user_123", 0));
/// ```
#[derive(Clone)]
pub struct PortableHasher {
    function: HashFunction,
    seed: u64,
    buffer: [u8; INLINE_BYTES],
    buffered: usize,
    streaming: Option<Box<Xxh3>>,
}

impl PortableHasher {
    /// A hasher for [`HashFunction::Xxh3`] with the given seed.
    ///
    /// ```
    /// let hasher = bugu::hash::PortableHasher::new(42);
    /// # let _ = hasher;
    /// ```
    pub fn new(seed: u64) -> Self {
        Self::with_function(HashFunction::Xxh3, seed)
    }

    /// A hasher for `function` with the given seed.
    ///
    /// ```
    /// use std::hash::{Hash, Hasher};
    /// use bugu::hash::{HashFunction, PortableHasher};
    ///
    /// let mut hasher = PortableHasher::with_function(HashFunction::Xxh3Mix8, 0);
    /// 42u64.hash(&mut hasher);
    /// assert_eq!(hasher.finish(), HashFunction::Xxh3Mix8.hash_item(&42u64, 0));
    /// ```
    pub fn with_function(function: HashFunction, seed: u64) -> Self {
        PortableHasher { function, seed, buffer: [0; INLINE_BYTES], buffered: 0, streaming: None }
    }

    /// [`write`](Hasher::write) past [`INLINE_BYTES`]: long keys are rare on the hot path, and
    /// only they pay for the streaming state. Out of line, so that `write` stays small enough
    /// for a key's `Hash` impl to be inlined wherever it is called: inlined, this path makes
    /// `<u64 as Hash>::hash` too large to inline into batched inserts, which then pay a call per
    /// key instead of a few arithmetic instructions.
    #[cold]
    #[inline(never)]
    fn write_streaming(&mut self, bytes: &[u8]) {
        let state = self.streaming.get_or_insert_with(|| {
            let mut state = Box::new(Xxh3::with_seed(self.seed));
            state.update(&self.buffer[..self.buffered]);
            state
        });
        state.update(bytes);
    }
}

impl std::fmt::Debug for PortableHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PortableHasher")
            .field("function", &self.function)
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}

impl Hasher for PortableHasher {
    // `write` and `finish` are forced inline: for a fixed-size key the buffer length is then a
    // constant and XXH3's length dispatch folds away. Left to the compiler, `finish` stays an
    // out-of-line call in generic callers, and one-by-one lookups pay that call for every key.
    #[inline(always)]
    fn write(&mut self, bytes: &[u8]) {
        if self.streaming.is_none() && self.buffered + bytes.len() <= INLINE_BYTES {
            self.buffer[self.buffered..self.buffered + bytes.len()].copy_from_slice(bytes);
            self.buffered += bytes.len();
        } else {
            self.write_streaming(bytes);
        }
    }

    #[inline(always)]
    fn finish(&self) -> u64 {
        match &self.streaming {
            Some(state) => state.digest(),
            // Streaming only starts past `INLINE_BYTES`, so an 8-byte input always ends here.
            None => self.function.hash_bytes(&self.buffer[..self.buffered], self.seed),
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.write(&[i]);
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.write(&i.to_le_bytes());
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write(&i.to_le_bytes());
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.write(&i.to_le_bytes());
    }
    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.write(&i.to_le_bytes());
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write(&(i as u64).to_le_bytes());
    }
    #[inline]
    fn write_i8(&mut self, i: i8) {
        self.write_u8(i as u8);
    }
    #[inline]
    fn write_i16(&mut self, i: i16) {
        self.write_u16(i as u16);
    }
    #[inline]
    fn write_i32(&mut self, i: i32) {
        self.write_u32(i as u32);
    }
    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_i128(&mut self, i: i128) {
        self.write_u128(i as u128);
    }
    #[inline]
    fn write_isize(&mut self, i: isize) {
        self.write_u64(i as i64 as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // These values pin the hash forever: persisted filters depend on them. Never change them.
    // They were cross-checked with the reference implementation (python-xxhash's xxh3_64 over
    // the same bytes: integers little-endian, `str` followed by its 0xff terminator).
    #[test]
    fn byte_hashes_are_frozen() {
        assert_eq!(hash_bytes(b"", 0), 0x2d06_8005_38d3_94c2);
        assert_eq!(hash_bytes(b"item_0", 0), 0x385c_762d_7455_374c);
        assert_eq!(hash_bytes(b"user_123", 42), 0xf820_2fdf_dd6f_2b1e);
    }

    #[test]
    fn item_hashes_are_frozen() {
        assert_eq!(hash_item(&42u64, 0), 0xd5a6_f8c8_38df_27c8);
        assert_eq!(hash_item(&42usize, 0), hash_item(&42u64, 0));
        assert_eq!(hash_item(&-1i32, 0), 0xcd6b_1c92_0d3f_662c);
        assert_eq!(hash_item("user_123", 0), 0xb031_bd19_2b60_8af7);
        assert_eq!(hash_item(&String::from("user_123"), 0), hash_item("user_123", 0));
        assert_eq!(hash_item(&(1u8, "a"), 9), 0xe89b_0b49_6a29_f7d4);
    }

    // Id 2 pinned the same way; the 8-byte values were cross-checked with a Python transcription
    // of the mixer (`mix13(le_u64(bytes) ^ seed ^ 0x6a09e667f3bcc908)`).
    #[test]
    fn mix8_hashes_are_frozen() {
        let mix8 = HashFunction::Xxh3Mix8;
        assert_eq!(mix8.hash_item(&42u64, 0), 0x1889_195a_26e2_f9d5);
        assert_eq!(mix8.hash_item(&42usize, 0), mix8.hash_item(&42u64, 0));
        assert_eq!(mix8.hash_bytes(&42u64.to_le_bytes(), 0), mix8.hash_item(&42u64, 0));
        assert_eq!(mix8.hash_item(&-1i64, 9), 0xef42_717b_624f_c4ad);
        assert_eq!(mix8.hash_bytes(b"user_123", 42), 0x0492_ffb1_1cc8_63ad);
        // Every other length is XXH3's.
        for bytes in [&b""[..], b"item_0", b"1234567", b"123456789"] {
            assert_eq!(mix8.hash_bytes(bytes, 5), hash_bytes(bytes, 5));
        }
        assert_eq!(mix8.hash_item("user_123", 0), hash_item("user_123", 0));
        assert_eq!(mix8.hash_item(&-1i32, 0), hash_item(&-1i32, 0));
        assert_eq!(mix8.hash_item(&(1u8, "a"), 9), hash_item(&(1u8, "a"), 9));
    }

    #[test]
    fn ids_name_each_function_once() {
        for function in HashFunction::ALL {
            assert_eq!(HashFunction::from_id(function.id()), Some(function));
        }
        assert_eq!(HashFunction::from_id(0), None);
        assert_eq!(HashFunction::from_id(3), None);
        assert_eq!(HashFunction::default(), HashFunction::Xxh3Mix8);
    }

    #[test]
    fn long_keys_stream_to_the_same_digest() {
        let long: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
        let mut hasher = PortableHasher::new(3);
        for chunk in long.chunks(37) {
            hasher.write(chunk);
        }
        assert_eq!(hasher.finish(), hash_bytes(&long, 3));
        let mut hasher = PortableHasher::with_function(HashFunction::Xxh3Mix8, 3);
        for chunk in long.chunks(37) {
            hasher.write(chunk);
        }
        assert_eq!(hasher.finish(), HashFunction::Xxh3Mix8.hash_bytes(&long, 3));
    }
}
