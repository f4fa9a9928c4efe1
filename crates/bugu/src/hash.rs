//! From an item to one stable 64-bit hash, and from that hash to a fingerprint and two buckets.
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
//! The filters' typed methods do not take `T: Hash`: they take a [`Key`], whose
//! encoding ([`crate::key`]) is the same in every front end — text as its UTF-8 bytes, integers as
//! 8 little-endian bytes — and [`Hashed`](crate::Hashed) for the `T: Hash` way. A `&str` through
//! `T: Hash` is not its bytes: the standard library's `Hash for str` appends a `0xff` terminator.
//! Callers who hash themselves pass a `u64` to the filters' `*_hash` methods (the filters'
//! `hash_of` gives the hash they would compute).
//!
//! [`hash_bytes`] and [`hash_item`] are [`HashFunction::Xxh3`]'s.

use std::hash::{Hash, Hasher};

use xxhash_rust::xxh3::{Xxh3, xxh3_64_with_seed};

use crate::key::{Key, KeyEncoding};

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
fn mix13(mut x: u64) -> u64 {
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
    /// for a key's `Hash` impl to be inlined wherever it is called: inlined, this path made
    /// `<u64 as Hash>::hash` too large to inline into batched inserts, whose hashing then cost
    /// several times its inlined work.
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
    // constant and XXH3's length dispatch folds away. Left to the compiler, `finish` stayed an
    // out-of-line call in generic callers, which made one-by-one lookups in the comparison
    // harness markedly slower.
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

/// Derives fingerprints and bucket indices from a 64-bit hash for a table of `buckets` buckets.
///
/// - primary bucket: Lemire's multiply-shift reduction of the whole hash (any bucket count, no
///   division);
/// - fingerprint: the low 32 bits reduced the same way onto `1..=2^f - 1`, uniform and never 0
///   (0 marks an empty slot);
/// - alternate bucket: FastFilter's involution for any *even* bucket count `n`: an odd offset `r`
///   derived from the fingerprint, `alt(i) = (n - i - r) mod n`. Applying it twice returns `i`,
///   and since `2i + r` is odd it never equals `i`.
///
/// Memory safety relies on one property: for any bucket count `n >= 1`, [`locate`](Self::locate)
/// gives buckets below `n` (the primary is `floor(h * n / 2^64)`; the offset is at most
/// `max(1, n - 1)`, so `i + r` lies in `1..=2n - 2` or is 1, and both arms of `alternate` land in
/// `0..n`). Lookups load a table's buckets without bounds checks on it (`table/`); the proptest
/// below checks it for even and odd counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Addressing {
    buckets: u64,
    half: u64,
    fingerprint_range: u64,
}

/// Spreads fingerprints before they choose an alternate bucket (Knuth's multiplicative constant).
const FINGERPRINT_MIX: u64 = 0x9E37_79B9_7F4A_7C15;

impl Addressing {
    /// `buckets` must be at least 1, and even for the alternate to be an involution (the
    /// configuration guarantees both; tests of the bare table also use odd counts).
    pub(crate) fn new(buckets: usize, fingerprint_bits: u32) -> Self {
        assert!(buckets >= 1, "a table has at least one bucket");
        debug_assert!((1..=32).contains(&fingerprint_bits));
        Addressing {
            buckets: buckets as u64,
            half: buckets as u64 / 2,
            fingerprint_range: (1u64 << fingerprint_bits) - 1,
        }
    }

    #[inline]
    pub(crate) fn fingerprint(&self, hash: u64) -> u32 {
        (((hash & 0xFFFF_FFFF) * self.fingerprint_range) >> 32) as u32 + 1
    }

    #[inline]
    pub(crate) fn alternate(&self, bucket: usize, fingerprint: u32) -> usize {
        self.alternate_by(bucket, fingerprint, mul_high)
    }

    /// [`alternate`](Self::alternate), the high half of its product taken by `mul_high`.
    #[inline(always)]
    fn alternate_by(&self, bucket: usize, fingerprint: u32, mul_high: impl Fn(u64, u64) -> u64) -> usize {
        let mixed = (fingerprint as u64).wrapping_mul(FINGERPRINT_MIX);
        let offset = 2 * mul_high(mixed, self.half) + 1;
        // (n - bucket - offset) mod n, with bucket + offset in 1..2n - 1.
        let sum = bucket as u64 + offset;
        (if sum <= self.buckets { self.buckets - sum } else { 2 * self.buckets - sum }) as usize
    }

    /// The fingerprint and both candidate buckets of a hash.
    #[inline]
    pub(crate) fn locate(&self, hash: u64) -> (u32, usize, usize) {
        self.locate_by(hash, mul_high)
    }

    /// [`locate`](Self::locate), the high halves of its products taken by `mul_high`.
    #[inline(always)]
    fn locate_by(&self, hash: u64, mul_high: impl Fn(u64, u64) -> u64) -> (u32, usize, usize) {
        let fingerprint = self.fingerprint(hash);
        let primary = mul_high(hash, self.buckets) as usize;
        (fingerprint, primary, self.alternate_by(primary, fingerprint, mul_high))
    }

    /// Whether the table has fewer than `2^32` buckets, so that
    /// [`locate_block_narrow`](Self::locate_block_narrow) places hashes as
    /// [`locate`](Self::locate) does.
    #[inline]
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) fn is_narrow(&self) -> bool {
        self.buckets <= u32::MAX as u64
    }

    /// [`locate`](Self::locate) for each hash of a block, lane `i` for hash `i`.
    #[inline(always)]
    pub(crate) fn locate_block<const N: usize>(&self, hashes: &[u64; N], block: &mut LocatedBlock<N>) {
        self.locate_block_by(hashes, block, mul_high);
    }

    /// [`locate_block`](Self::locate_block) as a loop over lanes of 64-bit arithmetic that
    /// vector units run: the high halves of the products come from 32-bit products
    /// ([`mul_high_narrow`]), which gives `locate`'s places for a [narrow](Self::is_narrow)
    /// table. For any other table the buckets are still below the count (as the module docs
    /// argue for `locate`: the narrow products are never larger), only not where `locate` puts
    /// them.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) fn locate_block_narrow<const N: usize>(&self, hashes: &[u64; N], block: &mut LocatedBlock<N>) {
        self.locate_block_by(hashes, block, mul_high_narrow);
    }

    #[inline(always)]
    fn locate_block_by<const N: usize>(
        &self,
        hashes: &[u64; N],
        block: &mut LocatedBlock<N>,
        mul_high: impl Fn(u64, u64) -> u64 + Copy,
    ) {
        for (i, &hash) in hashes.iter().enumerate() {
            (block.fingerprints[i], block.primaries[i], block.alternates[i]) = self.locate_by(hash, mul_high);
        }
    }
}

/// The high 64 bits of `a * b`.
#[inline(always)]
fn mul_high(a: u64, b: u64) -> u64 {
    ((a as u128 * b as u128) >> 64) as u64
}

/// The high 64 bits of `a * b` for `b < 2^32`, from two 32 x 32-bit products (what vector units
/// multiply): `a * b = (a_hi * b) 2^32 + a_lo * b`, and the sum below cannot overflow. For a
/// larger `b` it gives the product with `b mod 2^32`, which is no larger than the full one.
#[inline(always)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn mul_high_narrow(a: u64, b: u64) -> u64 {
    // Masked (a no-op below 2^32) so that the compiler knows it may use 32-bit products.
    let b = b & 0xFFFF_FFFF;
    let low = (a & 0xFFFF_FFFF) * b;
    let high = (a >> 32) * b;
    (high + (low >> 32)) >> 32
}

/// How a batch's items become hashes, a block at a time (see [`crate::batch`]).
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

/// Where a block of hashes goes: lane `i` holds the fingerprint and both buckets of hash `i`,
/// as [`Addressing::locate`] gives them.
#[derive(Clone, Copy)]
pub(crate) struct LocatedBlock<const N: usize> {
    pub(crate) fingerprints: [u32; N],
    pub(crate) primaries: [usize; N],
    pub(crate) alternates: [usize; N],
}

impl<const N: usize> Default for LocatedBlock<N> {
    fn default() -> Self {
        LocatedBlock { fingerprints: [0; N], primaries: [0; N], alternates: [0; N] }
    }
}

impl<const N: usize> LocatedBlock<N> {
    /// Lane `i`, as [`Addressing::locate`] gives it.
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> (u32, usize, usize) {
        (self.fingerprints[i], self.primaries[i], self.alternates[i])
    }

    /// Lane `i`, or `None` past the block.
    #[inline(always)]
    pub(crate) fn try_get(&self, i: usize) -> Option<(u32, usize, usize)> {
        (i < N).then(|| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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

    proptest! {
        #[test]
        fn located_buckets_are_below_the_count(buckets in 1usize..1_000_000, bits in 1u32..=32, hash in any::<u64>()) {
            // What lookups' unchecked loads rely on: for any count, odd ones included.
            let (_, i1, i2) = Addressing::new(buckets, bits).locate(hash);
            prop_assert!(i1 < buckets && i2 < buckets);
        }

        #[test]
        fn alternate_is_an_involution_without_fixed_points(
            half in 1usize..1_000_000, bits in 1u32..=32, hash in any::<u64>()
        ) {
            let addressing = Addressing::new(half * 2, bits);
            let (fp, i1, i2) = addressing.locate(hash);
            prop_assert!(fp >= 1 && (fp as u64) < (1u64 << bits));
            prop_assert!(i1 < half * 2 && i2 < half * 2);
            prop_assert_ne!(i1, i2);
            prop_assert_eq!(addressing.alternate(i2, fp), i1);
        }
    }

    #[test]
    fn located_buckets_stay_below_the_count_at_the_extremes() {
        // Tables are at most `isize::MAX` bytes, so counts stay far below 2^63.
        for buckets in
            [1, 2, 3, 4, 5, u32::MAX as usize, 1 << 32, (1 << 32) + 2, (1 << 40) + 1, usize::MAX >> 6]
        {
            for bits in [1, 12, 32] {
                let hashes = [0, 1, 0xFFFF_FFFF, 1 << 32, 1 << 63, u64::MAX];
                let addressing = Addressing::new(buckets, bits);
                for hash in hashes {
                    let (_, i1, i2) = addressing.locate(hash);
                    assert!(i1 < buckets && i2 < buckets, "{buckets} buckets, hash {hash:#x}");
                }
                // The narrow block form too, even for counts of 2^32 or more, where it misplaces.
                let mut block = LocatedBlock::default();
                addressing.locate_block_narrow(&hashes, &mut block);
                for i in 0..hashes.len() {
                    let (_, i1, i2) = block.get(i);
                    assert!(i1 < buckets && i2 < buckets, "{buckets} buckets, block lane {i}");
                }
            }
        }
    }

    #[test]
    fn fingerprints_cover_the_whole_range() {
        let addressing = Addressing::new(2, 4);
        let mut seen = [false; 16];
        for i in 0..10_000u64 {
            seen[addressing.fingerprint(hash_item(&i, 0)) as usize] = true;
        }
        assert!(!seen[0]);
        assert!(seen[1..].iter().all(|&s| s));
    }
}
