//! A table shared between threads: the same bytes as an owned table, kept in atomic words, with
//! a versioned lock per stripe of buckets and one word that counts the writes that move
//! fingerprints. Every atomic of the concurrent filter lives here.
//!
//! # Layout
//!
//! The packed bytes are held in `AtomicU64` words, byte `i` of the table being byte `i % 8`
//! (little-endian) of word `i / 8`: converting from and to an owned table is a copy, and a window
//! load reads the one or two (three for a 16-byte window) words it overlaps. Buckets are grouped in
//! blocks of [`BLOCK_BUCKETS`] (64) buckets; since 64 buckets of any width take a whole number of
//! 64-bit words, every word belongs to exactly one block. A block belongs to one stripe (`block mod
//! stripes`), so a word is only ever written by the holder of its stripe's lock, and a write can
//! replace a whole word (load, merge, store) without losing a neighbour's concurrent update.
//!
//! # Protocol
//!
//! **Writers** lock stripes. Each stripe has a version word, even when the stripe is free, odd
//! while a writer holds it (the version is the lock: a writer takes it by setting its low bit, and
//! releases it by adding one, which makes it even again). A writer takes the stripes of every
//! bucket it will change, in ascending order (no deadlock), changes the buckets, and releases them.
//!
//! **Readers** take no lock and write nothing shared. What a lookup checks depends on which writes
//! can hide a stored fingerprint from it.
//!
//! - *Plain layouts* (each slot its own bits). A write changes the bits of the slots it writes
//!   and no others: it replaces whole words, but with the other slots' bits as they were, since
//!   only the stripe's holder writes a word. A lookup reads each slot of its item's two buckets
//!   from some version of its word. So if one slot holds the item's fingerprint for the whole
//!   lookup, the lookup sees it. An item present for the whole lookup can only be missed if its
//!   fingerprint leaves a slot during the lookup while it stays in another one. That takes
//!   either a *move* (an insert's path of moves), or the removal of one copy of a fingerprint
//!   while another copy of it is in the item's buckets (the other copy perhaps stored in a bucket
//!   the lookup had already read). A slot that is filled or cleared without another copy left
//!   cannot hide an item that is present throughout.
//!
//!   Only these two kinds of writer announce themselves, in one **move word** shared by the whole
//!   table ([`WriteGuard::begin_moves`]). Before its first store, such a writer adds one to the
//!   word's count of writers at work and to its sequence; after its last store, it subtracts one
//!   from the count. A lookup reads the move word, both buckets, and the move word again. If no
//!   such writer was at work and the word is unchanged, none overlapped the read, and a miss is
//!   exact. Otherwise the lookup reads again as below, with the stripes' versions. The frequent
//!   writes (an insert into a free slot, the removal of a single copy) leave the word alone, so it
//!   stays in every core's cache: a lookup pays two loads of a cached line, and no stripe
//!   arithmetic.
//! - *Semi-sorted layout*. A write re-encodes its whole bucket, so any write can hide any
//!   fingerprint of the bucket. A lookup reads the versions of its item's two buckets' stripes,
//!   reads both buckets, then reads the versions again. If both were even and are unchanged, no
//!   write to either bucket overlapped the read. The buckets were then read as they were at one
//!   moment, and the answer is exact for that moment.
//!
//! A lookup whose first attempt overlapped a write reads again with the stripes' versions (which
//! every writer, moves included, holds for its whole write), backing off while one is held. On
//! these retries a *found* fingerprint is returned at once, since a filter's positive answer is
//! only "maybe" anyway. (The first attempt branches only on the versions or the move word: see
//! [`SharedTable::contains_hash`].) Copying a fingerprint before clearing its old slot is not enough
//! without these checks: a reader could read the destination before the copy and the source after
//! the clear.
//!
//! Memory ordering (the seqlock pattern), the same for a version and for the move word: the
//! writer's odd version (its addition to the move word) is followed by a release fence before its
//! data stores, and its even version (its subtraction) is written with release. The reader loads
//! the first value with acquire, the data relaxed, then issues an acquire fence before loading
//! the value again. If the reader saw any store of a write, the fences make it see that write's
//! odd version or addition (or a later value) on the second read.

use crossbeam_utils::CachePadded;

use super::storage::{Region, Storage, StorageMut};
use super::swar::{Matcher, Word};
use super::{
    AllocFailed, BucketOp, ContainsEither, Geometry, KINDS, Kind, PADDING, Table, compiled_per_kind,
    reserve_buffer,
};

#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};

/// Buckets per block: 64 buckets of `bits` bits take `bits` whole 64-bit words.
pub(crate) const BLOCK_BUCKETS: usize = 64;

/// At most this many stripes: their versions (128 bytes apart) then fit in a core's L2, so
/// a lookup's two version reads hit the cache, and 2 to 8 threads rarely meet on one stripe.
const MAX_STRIPES: usize = 4096;

/// One stripe per this many bytes of table, so that the stripes (128 bytes each) add under 2% to
/// the table's memory, about 0.2 bits per item.
const BYTES_PER_STRIPE: usize = 8192;

/// A table's bytes in atomic 64-bit words, plus one word of slack so that every window load
/// reads whole words.
pub(crate) struct AtomicBytes {
    words: Box<[AtomicU64]>,
}

impl AtomicBytes {
    /// Words holding a copy of `bytes`; [`AllocFailed`] if they cannot be allocated.
    fn copy_of(bytes: &[u8]) -> Result<Self, AllocFailed> {
        let count = bytes.len().div_ceil(8) + 1;
        let mut words: Vec<AtomicU64> = Vec::new();
        words.try_reserve_exact(count).map_err(|_| AllocFailed { bytes: count * 8 })?;
        super::advise_huge_pages(words.as_ptr().cast(), count * 8);
        words.extend(bytes.chunks(8).map(|chunk| {
            let mut raw = [0u8; 8];
            raw[..chunk.len()].copy_from_slice(chunk);
            AtomicU64::new(u64::from_le_bytes(raw))
        }));
        words.push(AtomicU64::new(0));
        Ok(AtomicBytes { words: words.into_boxed_slice() })
    }

    /// `len` zero bytes (and the slack word), allocated zeroed: each page is first written by
    /// the thread that first stores to it, as an owned table's is. (Under loom, copied in.)
    fn zeroed(len: usize) -> Result<Self, AllocFailed> {
        #[cfg(not(loom))]
        return Ok(AtomicBytes { words: super::zeroed_buffer(len.div_ceil(8) + 1)?.into_boxed_slice() });
        #[cfg(loom)]
        AtomicBytes::copy_of(&vec![0; len])
    }

    /// The first `len` bytes, copied out; [`AllocFailed`] if the copy cannot be allocated.
    fn copy_out(&self, len: usize) -> Result<Vec<u8>, AllocFailed> {
        let mut bytes = reserve_buffer(len)?;
        for word in &self.words[..len.div_ceil(8)] {
            bytes.extend_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
        }
        bytes.truncate(len);
        Ok(bytes)
    }

    /// The 8 bytes starting at byte `offset`, from the two words they overlap.
    #[inline(always)]
    fn load_u64(&self, offset: usize) -> u64 {
        // One bounds check for both words.
        assert!(offset / 8 + 1 < self.words.len(), "a load beyond the table's words");
        // SAFETY: both words exist (just checked).
        unsafe { read_u64(&self.words, offset) }
    }

    /// The `W::BITS / 8` bytes starting at byte `offset`, from the words they overlap, each 8
    /// bytes loaded by `load_u64`.
    #[inline(always)]
    fn load_with<W: Word>(offset: usize, load_u64: impl Fn(usize) -> u64) -> W {
        let low = load_u64(offset) as u128;
        match W::BITS {
            64 => W::from_u128(low),
            _ => W::from_u128(low | (load_u64(offset + 8) as u128) << 64),
        }
    }
}

/// The 8 bytes starting at byte `offset` of `words`, little-endian, by one unaligned load.
///
/// Against two atomic loads of the words and a double-width shift (the portable version below),
/// this saves instructions and a register per bucket, which concurrent lookups far from the
/// caches feel (`docs/concurrency.md`). Miri and loom cannot run inline assembly; they check the
/// portable version.
///
/// # Safety
///
/// Words `offset / 8` and `offset / 8 + 1` exist.
#[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
#[inline(always)]
unsafe fn read_u64(words: &[AtomicU64], offset: usize) -> u64 {
    debug_assert!(offset / 8 + 1 < words.len());
    let bytes = words.as_ptr().cast::<u8>().wrapping_add(offset);
    let value: u64;
    // SAFETY: the 8 bytes lie inside the two words, which the caller guarantees exist, so they
    // are readable. Writers store to these words concurrently (module docs): the load must have
    // the effect of atomic loads, and it has that of the portable version's two relaxed loads.
    // x86-64 reads a load's part within each cache line at once, so every byte comes back as some
    // store to its word (or the initial value) left it, and the two words' parts are read in some
    // order, which two relaxed loads of different words allow too. The block only reads memory
    // (`readonly`); without `pure` it has effects, so it is neither dropped nor moved across the
    // fences and move-word loads around it.
    unsafe {
        std::arch::asm!(
            "mov {value}, qword ptr [{bytes}]",
            bytes = in(reg) bytes,
            value = lateout(reg) value,
            options(nostack, preserves_flags, readonly),
        );
    }
    value
}

/// The 8 bytes starting at byte `offset` of `words`, from the two words they overlap: where
/// inline assembly does not run (Miri, loom, other targets).
///
/// # Safety
///
/// Words `offset / 8` and `offset / 8 + 1` exist.
#[cfg(not(all(target_arch = "x86_64", not(loom), not(miri))))]
#[inline(always)]
unsafe fn read_u64(words: &[AtomicU64], offset: usize) -> u64 {
    // SAFETY: the caller's guarantee, passed on.
    unsafe { read_u64_from_pair(words, offset) }
}

/// The 8 bytes starting at byte `offset` of `words`, by two relaxed loads of the words they
/// overlap and a shift.
///
/// # Safety
///
/// Words `offset / 8` and `offset / 8 + 1` exist.
#[cfg_attr(all(target_arch = "x86_64", not(loom), not(miri), not(test)), allow(dead_code))]
#[inline(always)]
unsafe fn read_u64_from_pair(words: &[AtomicU64], offset: usize) -> u64 {
    debug_assert!(offset / 8 + 1 < words.len());
    // SAFETY: the caller guarantees that both words exist.
    let (low, high) = unsafe { (words.get_unchecked(offset / 8), words.get_unchecked(offset / 8 + 1)) };
    let pair = (high.load(Ordering::Relaxed) as u128) << 64 | low.load(Ordering::Relaxed) as u128;
    // A double-width shift: one instruction on x86-64.
    (pair >> ((offset % 8) as u32 * 8)) as u64
}

/// The words as a region: a load of 8 bytes reads the word after them too, so the last word
/// (the slack word) is not counted in the length.
impl Region for &AtomicBytes {
    #[inline(always)]
    fn len(self) -> usize {
        (self.words.len() - 1) * 8
    }

    #[inline(always)]
    unsafe fn load_unchecked<W: Word>(self, offset: usize) -> W {
        debug_assert!(offset + W::BITS as usize / 8 <= self.len());
        AtomicBytes::load_with(offset, |offset| {
            // SAFETY: the caller guarantees `offset + 8 <= len()` for every 8 bytes loaded, so
            // `offset / 8 + 1 <= len() / 8 = words.len() - 1`: both words exist.
            unsafe { read_u64(&self.words, offset) }
        })
    }
}

impl Storage for AtomicBytes {
    // The words are a private boxed slice, allocated once for a table and never resized; the
    // shared table checks their length against its table's when it is built (`SharedTable::over`).
    const KEEPS_ITS_LENGTH: bool = true;

    type Region<'a> = &'a AtomicBytes;

    #[inline(always)]
    fn load<W: Word>(&self, offset: usize) -> W {
        AtomicBytes::load_with(offset, |offset| self.load_u64(offset))
    }

    #[inline(always)]
    fn region(&self) -> &AtomicBytes {
        self
    }

    #[inline(always)]
    fn address(&self, offset: usize) -> *const u8 {
        self.words.as_ptr().cast::<u8>().wrapping_add(offset)
    }

    fn memory_bytes(&self) -> usize {
        self.words.len() * 8
    }
}

impl Storage for &AtomicBytes {
    type Region<'a>
        = &'a AtomicBytes
    where
        Self: 'a;

    #[inline(always)]
    fn load<W: Word>(&self, offset: usize) -> W {
        (**self).load(offset)
    }

    #[inline(always)]
    fn region(&self) -> &AtomicBytes {
        self
    }

    #[inline(always)]
    fn address(&self, offset: usize) -> *const u8 {
        (**self).address(offset)
    }

    fn memory_bytes(&self) -> usize {
        (**self).memory_bytes()
    }
}

/// Writes through a shared reference: only by the holder of the lock of the stripe the written
/// bits belong to (see the module docs), which [`WriteGuard::table`] ensures.
impl StorageMut for &AtomicBytes {
    #[inline(always)]
    fn store_bits<W: Word>(&mut self, offset: usize, value: W, mask: W) {
        let (first, shift) = (offset / 8, (offset % 8) as u32 * 8);
        let (mask, value) = (mask.to_u128(), value.to_u128());
        // The window's bits as they fall on its first, second and third word.
        let on_word = |bits: u128| {
            let beyond = if shift == 0 { 0 } else { (bits >> (128 - shift)) as u64 };
            [(bits << shift) as u64, ((bits << shift) >> 64) as u64, beyond]
        };
        for (k, (mask, value)) in on_word(mask).into_iter().zip(on_word(value)).enumerate() {
            // Words without bits to change are not touched: they may belong to another block.
            if mask != 0 {
                replace_bits(&self.words[first + k], mask, value);
            }
        }
    }

    /// Checked (it is the safe [`store_bits`](StorageMut::store_bits)): the concurrent filter's
    /// writes take their locks first, and their bounds checks cost little beside.
    #[inline(always)]
    unsafe fn fill_zero_bits_unchecked<W: Word>(&mut self, offset: usize, value: W) {
        self.store_bits(offset, value, value);
    }
}

/// Replaces the bits of `word` set in `mask` by those of `value`. Only the holder of the word's
/// stripe writes it, so a load and a store do; under loom, two read-modify-writes with the same
/// effect (`old & (!mask | value) | value`), because loom's dependency tracking would otherwise
/// hide the race between a reader's load and this store behind the writer's own load.
#[inline(always)]
fn replace_bits(word: &AtomicU64, mask: u64, value: u64) {
    #[cfg(not(loom))]
    word.store((word.load(Ordering::Relaxed) & !mask) | value, Ordering::Relaxed);
    #[cfg(loom)]
    {
        word.fetch_and(!mask | value, Ordering::Relaxed);
        word.fetch_or(value, Ordering::Relaxed);
    }
}

/// One stripe: its version (the lock) and the change it made to the item count.
#[derive(Default)]
struct Stripe {
    version: AtomicU64,
    /// Items added minus items removed under this stripe's lock (wrapping; only the sum over all
    /// stripes means anything).
    items: AtomicUsize,
}

/// The move word: writers that may hide a stored fingerprint from a reader of its buckets (see
/// the module docs) add [`MOVE_STARTED`] before their first store and subtract [`MOVER`] after
/// their last. Its low bits count the writers at work (at most one per stripe, so far fewer than
/// 2^16); the rest is a sequence that changes with every such writer (wrapping round after 2^48).
const MOVER: u64 = 1;
const MOVERS_MASK: u64 = (1 << 16) - 1;
const MOVE_STARTED: u64 = (1 << 16) + MOVER;

/// The table shared between threads, with its stripes and its move word.
pub(crate) struct SharedTable {
    table: Table<AtomicBytes>,
    stripes: Box<[CachePadded<Stripe>]>,
    moves: CachePadded<AtomicU64>,
    /// [`contains_hash`](Self::contains_hash) compiled for this table's geometry alone, chosen
    /// when the table is built. Called through this pointer, the lookup is a small function of
    /// its own, wherever its caller is (see `contains_as`).
    lookup: fn(&SharedTable, u64) -> bool,
}

/// The lookup compiled for each [`Kind`] of geometry, indexed by it.
const LOOKUPS: [fn(&SharedTable, u64) -> bool; KINDS] = compiled_per_kind!(SharedTable, contains_as);

impl SharedTable {
    /// An empty shared table of this geometry; [`AllocFailed`] if its memory cannot be allocated.
    /// Its pages are only touched when written, as an owned table's are.
    pub(crate) fn empty(geometry: Geometry) -> Result<Self, AllocFailed> {
        let words = AtomicBytes::zeroed(Table::len_of(geometry))?;
        Ok(SharedTable::over(Table::with_bytes(words, geometry), 0))
    }

    /// A shared copy of `table` holding `items` fingerprints; [`AllocFailed`] if its memory
    /// cannot be allocated.
    pub(crate) fn copy_of<S: AsRef<[u8]>>(table: &Table<S>, items: usize) -> Result<Self, AllocFailed> {
        let words = AtomicBytes::copy_of(table.storage().as_ref())?;
        Ok(SharedTable::over(table.with_storage(words), items))
    }

    /// The shared table over `table`'s words, which hold `items` fingerprints, with its stripes.
    fn over(table: Table<AtomicBytes>, items: usize) -> Self {
        // Lookups rely on it without checking again (`AtomicBytes` keeps its length).
        assert!(table.storage().region().len() >= table.len, "the words hold the whole table");
        let blocks = table.buckets().div_ceil(BLOCK_BUCKETS);
        let count = (Table::len_of(table.geometry()) / BYTES_PER_STRIPE)
            .next_power_of_two()
            .min(MAX_STRIPES)
            .min(blocks.next_power_of_two());
        let stripes: Box<[CachePadded<Stripe>]> = (0..count).map(|_| CachePadded::default()).collect();
        stripes[0].items.store(items, Ordering::Relaxed);
        let lookup = LOOKUPS[table.kind() as usize];
        SharedTable { table, stripes, moves: CachePadded::default(), lookup }
    }

    /// An owned copy of the table; [`AllocFailed`] if it cannot be allocated. The caller holds
    /// every stripe ([`lock_all`](Self::lock_all)) or the only reference.
    pub(crate) fn copy_out(&self) -> Result<Table, AllocFailed> {
        let len = self.table.geometry().payload_len().expect("the geometry of an existing table") + PADDING;
        Ok(self.table.with_storage(self.table.storage().copy_out(len)?))
    }

    /// The table, for reads that need no consistency (the path search, statistics): a bucket read
    /// while a writer changes it may be torn.
    pub(crate) fn racy(&self) -> &Table<AtomicBytes> {
        &self.table
    }

    /// Bytes of memory the words and the stripes take.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.table.memory_bytes() + std::mem::size_of_val(&*self.stripes)
    }

    /// Items stored: exact when no write is in progress. While writers run, the stripes are read
    /// one after another, so an item inserted under one stripe and removed under another can be
    /// seen removed but not inserted: the sum is then clamped at zero rather than wrapping round.
    pub(crate) fn items(&self) -> usize {
        let sum = self
            .stripes
            .iter()
            .fold(0usize, |sum, stripe| sum.wrapping_add(stripe.items.load(Ordering::Relaxed)));
        (sum as isize).max(0) as usize
    }

    #[inline(always)]
    fn stripe_of(&self, bucket: usize) -> usize {
        (bucket / BLOCK_BUCKETS) & (self.stripes.len() - 1)
    }

    /// Runs `read` on the table as it is at one moment between writes to buckets `b1` and `b2`:
    /// again and again until no write to their stripes overlapped it. On a retry, a result for
    /// which `settled` holds is returned at once, without that check (a found fingerprint).
    #[inline(always)]
    pub(crate) fn read<R>(
        &self,
        (b1, b2): (usize, usize),
        read: impl Fn(&Table<AtomicBytes>) -> R,
        settled: impl Fn(&R) -> bool,
    ) -> R {
        let stripes = self.stripes_of(b1, b2);
        let versions = versions(stripes);
        let result = read(&self.table);
        if unchanged(stripes, versions) {
            return result;
        }
        self.read_again(stripes, read, settled)
    }

    /// Whether an item with this hash may be in the table: the lookup of the concurrent filter,
    /// at the item's place by the table's own addressing. Its first attempt reads the two buckets
    /// between two reads of the move word (of the stripes' versions, for semi-sorted buckets); if
    /// a write that could hide the fingerprint overlapped it, the buckets are read again as
    /// [`read`](Self::read) does. As in [`Table::contains_located`], the geometry is dispatched
    /// before anything else, so that the first attempt compiles into each geometry's code with its
    /// constants; it is straight-line code (a loop or a jump there kept lookups from overlapping:
    /// 3 to 6 times a plain lookup's time at 10^7 keys). Its loads are checked once per lookup, as
    /// [`Table::contains_hash`]'s are.
    #[inline(always)]
    pub(crate) fn contains_hash(&self, hash: u64) -> bool {
        (self.lookup)(self, hash)
    }

    /// [`contains_hash`](Self::contains_hash) compiled for one kind of geometry, the table's.
    /// Out of line: a lookup inlined into a large caller (the `threads` harness's worker) was
    /// much slower than in a plain loop, as the caller's registers crowd it; and compiled for one
    /// geometry, the function saves fewer registers than one holding every geometry's code.
    #[inline(never)]
    fn contains_as<const KIND: Kind>(&self, hash: u64) -> bool {
        let locate = || self.table.addressing().locate(hash);
        // SAFETY: the op visits the two buckets `locate` gives, and `Addressing::locate` gives
        // buckets below the count it was built with, this table's `buckets`. `KIND` is the
        // table's: `over`, the only constructor, took this function from `LOOKUPS` at the
        // table's kind, and the table is never replaced. Its words keep their length, which
        // `over` checked.
        let attempt =
            unsafe { self.table.probe_in_range::<KIND, _>(VersionedContains { shared: self, locate }) };
        // A retry locates the item again from its hash: keeping its buckets for it would hold
        // three more registers through the first attempt (which then saved and restored three).
        attempt.unwrap_or_else(|| self.contains_hash_again(hash))
    }

    /// [`contains_hash`](Self::contains_hash) for an item already located (each load checked).
    #[inline(always)]
    pub(crate) fn contains_located(&self, located: (u32, usize, usize)) -> bool {
        let attempt = self.table.probe(VersionedContains { shared: self, locate: || located });
        attempt.unwrap_or_else(|| self.contains_again(located))
    }

    /// A lookup by hash whose first attempt overlapped a write (see
    /// [`contains_again`](Self::contains_again)). Out of line: one call in every geometry's code.
    #[cold]
    #[inline(never)]
    fn contains_hash_again(&self, hash: u64) -> bool {
        self.contains_again(self.table.addressing().locate(hash))
    }

    /// A lookup whose first attempt overlapped a write: the buckets read
    /// between two reads of their stripes' versions, until no write to them overlaps.
    #[cold]
    #[inline(never)]
    fn contains_again(&self, (fingerprint, b1, b2): (u32, usize, usize)) -> bool {
        let again = |table: &Table<AtomicBytes>| table.contains_located(|| (fingerprint, b1, b2));
        self.read((b1, b2), again, |&found| found)
    }

    /// Whether no writer that could hide a fingerprint (a path of moves, or a removal of one of
    /// several copies) was at work when the move word read `seen`, nor started since. Called
    /// after a read of buckets; the fence orders that read before the second load of the word.
    #[inline(always)]
    fn no_moves_since(&self, seen: u64) -> bool {
        fence(Ordering::Acquire);
        // One test for both conditions: a lookup then has one branch on the word, not two.
        (self.moves.load(Ordering::Relaxed) ^ seen) | (seen & MOVERS_MASK) == 0
    }

    #[inline(always)]
    fn stripes_of(&self, b1: usize, b2: usize) -> (&Stripe, &Stripe) {
        (&self.stripes[self.stripe_of(b1)], &self.stripes[self.stripe_of(b2)])
    }

    /// [`read`](Self::read) after its first attempt overlapped a write: until one does not.
    /// Never inlined: in each geometry's lookup code it would bring a copy of every geometry's.
    #[cold]
    #[inline(never)]
    fn read_again<R>(
        &self,
        stripes: (&Stripe, &Stripe),
        read: impl Fn(&Table<AtomicBytes>) -> R,
        settled: impl Fn(&R) -> bool,
    ) -> R {
        let mut waiting = Waiting::default();
        loop {
            waiting.wait();
            let versions =
                (stripes.0.version.load(Ordering::Acquire), stripes.1.version.load(Ordering::Acquire));
            let result = read(&self.table);
            if settled(&result) || unchanged(stripes, versions) {
                return result;
            }
        }
    }

    /// Takes the stripe of one bucket: what an insert into a free slot changes.
    #[inline]
    pub(crate) fn lock_one(&self, bucket: usize) -> WriteGuard<'_, [(usize, u64); 1]> {
        // A one-element array, not a `StripeSet`: the common insert takes and releases its stripe
        // without loops or a check for a heap-allocated set.
        self.take_sorted([(self.stripe_of(bucket), 0)])
    }

    /// Takes the stripes of an item's two buckets.
    #[inline]
    pub(crate) fn lock_two(&self, b1: usize, b2: usize) -> WriteGuard<'_> {
        let (s1, s2) = (self.stripe_of(b1), self.stripe_of(b2));
        let stripes = match s1 == s2 {
            true => StripeSet::Few([(s1, 0), (0, 0)], 1),
            false => StripeSet::Few([(s1.min(s2), 0), (s1.max(s2), 0)], 2),
        };
        self.take_sorted(stripes)
    }

    /// Takes the stripes of `buckets` (in any order, repeats allowed): a path of moves.
    pub(crate) fn lock_many(&self, buckets: impl IntoIterator<Item = usize>) -> WriteGuard<'_> {
        let mut stripes: Vec<(usize, u64)> =
            buckets.into_iter().map(|bucket| (self.stripe_of(bucket), 0)).collect();
        stripes.sort_unstable();
        stripes.dedup();
        self.take_sorted(StripeSet::Many(stripes))
    }

    /// Takes every stripe: no write runs until the guard is dropped (lookups still do).
    pub(crate) fn lock_all(&self) -> WriteGuard<'_> {
        self.take_sorted(StripeSet::Many((0..self.stripes.len()).map(|stripe| (stripe, 0)).collect()))
    }

    /// Takes a set of distinct stripes in ascending order (no two writers then wait for each
    /// other in a cycle), noting the odd version each now has.
    #[inline]
    fn take_sorted<S: HeldStripes>(&self, mut stripes: S) -> WriteGuard<'_, S> {
        debug_assert!(stripes.as_ref().windows(2).all(|pair| pair[0].0 < pair[1].0));
        for (stripe, version) in stripes.as_mut() {
            *version = self.take(*stripe);
        }
        // Orders the odd versions before the data stores that follow (see the module docs).
        fence(Ordering::Release);
        WriteGuard { shared: self, stripes, moving: false }
    }

    /// Takes a stripe: sets the low bit of its version (even to odd), waiting while another
    /// writer holds it. Returns the odd version.
    #[inline]
    fn take(&self, stripe: usize) -> u64 {
        let version = &self.stripes[stripe].version;
        let mut waiting = Waiting::default();
        loop {
            let previous = version.fetch_or(1, Ordering::Acquire);
            if previous & 1 == 0 {
                return previous | 1;
            }
            // Held: wait for an even version without writing, then try again. (Under loom, a
            // relaxed load may keep returning the old odd version; the next `fetch_or` reads the
            // latest.)
            waiting.wait();
            #[cfg(not(loom))]
            while version.load(Ordering::Relaxed) & 1 == 1 {
                waiting.wait();
            }
        }
    }
}

/// The versions of two stripes, read before a read of their buckets.
#[inline(always)]
fn versions(stripes: (&Stripe, &Stripe)) -> (u64, u64) {
    (stripes.0.version.load(Ordering::Acquire), stripes.1.version.load(Ordering::Acquire))
}

/// [`SharedTable::contains_hash`], run by [`Table::probe`] with the geometry's matcher.
struct VersionedContains<'a, L> {
    shared: &'a SharedTable,
    locate: L,
}

impl<L: Fn() -> (u32, usize, usize)> VersionedContains<'_, L> {
    /// One attempt in a plain layout: locate, read the move word, probe with `probe`, read the
    /// word again. The answer, or `None` if a write that could hide the item overlapped.
    #[inline(always)]
    fn attempt(self, probe: impl FnOnce(ContainsEither) -> bool) -> Option<bool> {
        let (fingerprint, b1, b2) = (self.locate)();
        let moves = self.shared.moves.load(Ordering::Acquire);
        let found = probe(ContainsEither { buckets: [b1, b2], fingerprint });
        // Only the move word decides: a branch on `found` (even as `found | unchanged`, which the
        // compiler splits into two branches) is mispredicted for half the keys of a mixed
        // workload, and each miss discards the lookups the CPU had started after this one, so
        // lookups far from the caches would lose their overlap. A found fingerprint is still
        // returned at once on a retry.
        self.shared.no_moves_since(moves).then_some(found)
    }

    /// One attempt with semi-sorted buckets, where any write to a bucket re-encodes it: as
    /// [`attempt`](Self::attempt), with the versions of the two buckets' stripes.
    #[inline(always)]
    fn attempt_sorted(self, matcher: &impl Matcher) -> Option<bool> {
        let (fingerprint, b1, b2) = (self.locate)();
        let stripes = self.shared.stripes_of(b1, b2);
        let versions = versions(stripes);
        let found = ContainsEither { buckets: [b1, b2], fingerprint }.on_words(matcher);
        unchanged(stripes, versions).then_some(found)
    }
}

impl<L: Fn() -> (u32, usize, usize)> BucketOp for VersionedContains<'_, L> {
    type Output = Option<bool>;

    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) -> Self::Output {
        self.attempt(|op| op.on_words(matcher))
    }

    #[inline(always)]
    fn on_sorted_words<M: Matcher>(self, matcher: &M) -> Self::Output {
        self.attempt_sorted(matcher)
    }

    #[inline(always)]
    fn on_slots(self, slots: usize, get: impl Fn(usize, usize) -> u32) -> Self::Output {
        self.attempt(|op| op.on_slots(slots, get))
    }
}

/// Whether two stripes were free when their `versions` were read before a read of their buckets
/// and are unchanged after it: then no write overlapped the read (see the module docs).
#[inline(always)]
fn unchanged(stripes: (&Stripe, &Stripe), versions: (u64, u64)) -> bool {
    fence(Ordering::Acquire);
    (versions.0 | versions.1) & 1 == 0
        && stripes.0.version.load(Ordering::Relaxed) == versions.0
        && stripes.1.version.load(Ordering::Relaxed) == versions.1
}

/// The stripes a writer holds, sorted and distinct, with the odd version each has while held; two
/// or fewer without allocating.
pub(crate) enum StripeSet {
    Few([(usize, u64); 2], usize),
    Many(Vec<(usize, u64)>),
}

impl Default for StripeSet {
    fn default() -> Self {
        StripeSet::Few([(0, 0); 2], 0)
    }
}

impl AsRef<[(usize, u64)]> for StripeSet {
    fn as_ref(&self) -> &[(usize, u64)] {
        match self {
            StripeSet::Few(few, count) => &few[..*count],
            StripeSet::Many(many) => many,
        }
    }
}

impl AsMut<[(usize, u64)]> for StripeSet {
    fn as_mut(&mut self) -> &mut [(usize, u64)] {
        match self {
            StripeSet::Few(few, count) => &mut few[..*count],
            StripeSet::Many(many) => many,
        }
    }
}

/// How a guard holds its stripes, each with the odd version it set: a [`StripeSet`], or one
/// stripe in an array.
pub(crate) trait HeldStripes: AsRef<[(usize, u64)]> + AsMut<[(usize, u64)]> {}

impl<S: AsRef<[(usize, u64)]> + AsMut<[(usize, u64)]>> HeldStripes for S {}

/// The stripes a writer holds; dropping it releases them.
pub(crate) struct WriteGuard<'a, S: HeldStripes = StripeSet> {
    shared: &'a SharedTable,
    stripes: S,
    /// Whether this writer counts in the move word ([`begin_moves`](Self::begin_moves)).
    moving: bool,
}

impl<S: HeldStripes> WriteGuard<'_, S> {
    /// The table, to change buckets of the held stripes only.
    pub(crate) fn table(&self) -> Table<&AtomicBytes> {
        self.shared.table.by_ref()
    }

    /// Announces, before the first store, a write that may hide a stored fingerprint from a
    /// lookup of the move word: a path of moves, or the removal of one of several copies of a
    /// fingerprint from an item's buckets (see the module docs). Lookups that overlap it read
    /// again, under the stripes' versions, until the guard is dropped.
    pub(crate) fn begin_moves(&mut self) {
        if !self.moving {
            self.shared.moves.fetch_add(MOVE_STARTED, Ordering::Relaxed);
            // Orders the count before the data stores that follow (see the module docs).
            fence(Ordering::Release);
            self.moving = true;
        }
    }

    /// Records `delta` items added (negative: removed), in the count of the first held stripe,
    /// which no other thread writes meanwhile (under loom, a read-modify-write: see
    /// [`replace_bits`]).
    pub(crate) fn count_items(&self, delta: isize) {
        let items = &self.shared.stripes[self.stripes.as_ref()[0].0].items;
        #[cfg(not(loom))]
        items.store(items.load(Ordering::Relaxed).wrapping_add_signed(delta), Ordering::Relaxed);
        #[cfg(loom)]
        items.fetch_add(delta as usize, Ordering::Relaxed);
    }
}

impl<S: HeldStripes> Drop for WriteGuard<'_, S> {
    fn drop(&mut self) {
        if self.moving {
            // Release: a reader that sees the movers' count back down sees every store before it.
            self.shared.moves.fetch_sub(MOVER, Ordering::Release);
        }
        for &(stripe, odd) in self.stripes.as_ref().iter().rev() {
            release(&self.shared.stripes[stripe].version, odd);
        }
    }
}

/// Releases a stripe whose version the caller set to `odd`: the next even version, with release
/// ordering. Only the holder writes a held version, so a store does; under loom, a read-modify-write
/// with the same effect, since loom lets a waiting writer's spinning reads keep returning the old
/// value of a plain store without bound (its models then never end).
#[inline(always)]
fn release(version: &AtomicU64, odd: u64) {
    #[cfg(not(loom))]
    version.store(odd + 1, Ordering::Release);
    #[cfg(loom)]
    {
        let _ = odd;
        version.fetch_add(1, Ordering::Release);
    }
}

/// Backing off while another thread holds what we wait for: spin briefly, then yield.
#[derive(Default)]
struct Waiting {
    #[cfg(not(loom))]
    backoff: crossbeam_utils::Backoff,
}

impl Waiting {
    #[inline]
    fn wait(&mut self) {
        #[cfg(not(loom))]
        self.backoff.snooze();
        #[cfg(loom)]
        loom::thread::yield_now();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A window read (by one unaligned load on x86-64) gives the little-endian bytes at its
        /// offset, as two relaxed loads of the words it overlaps do.
        #[test]
        fn a_window_read_gives_the_bytes_at_its_offset(
            values in prop::collection::vec(any::<u64>(), 2..12),
            offset in 0usize..80,
        ) {
            let words: Vec<AtomicU64> = values.iter().map(|&value| AtomicU64::new(value)).collect();
            let offset = offset % (8 * (words.len() - 1));
            let bytes: Vec<u8> = values.iter().flat_map(|value| value.to_le_bytes()).collect();
            let expected = u64::from_le_bytes(bytes[offset..offset + 8].try_into().unwrap());
            // SAFETY: `offset / 8 + 1 < words.len()` (offset is below 8 * (len - 1)).
            let (read, from_pair) = unsafe { (read_u64(&words, offset), read_u64_from_pair(&words, offset)) };
            prop_assert_eq!(read, expected);
            prop_assert_eq!(from_pair, expected);
        }

        /// Writes through the shared table's guard leave, after each write, the bytes an owned
        /// table has after the same writes, in every geometry (windows of 8 and 16 bytes,
        /// semi-sorted buckets): no bit outside the written slot changes.
        #[test]
        fn shared_writes_match_owned_writes(
            slots in prop::sample::select(vec![2usize, 4, 8]),
            bits in 4u32..=32,
            semi_sorted in any::<bool>(),
            buckets in 1usize..200,
            writes in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<u32>()), 0..60),
        ) {
            let semi_sorted = semi_sorted && slots == 4;
            let geometry = Geometry { buckets, slots, bits, semi_sorted };
            let mut owned = Table::new(geometry).unwrap();
            let shared = SharedTable::copy_of(&owned, 0).unwrap();
            let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
            for (bucket, slot, value) in writes {
                let (bucket, slot, value) = (bucket % buckets, slot % slots, value & mask);
                owned.set(bucket, slot, value);
                let guard = shared.lock_one(bucket);
                guard.table().set(bucket, slot, value);
                drop(guard);
                prop_assert_eq!(shared.racy().get(bucket, slot), owned.get(bucket, slot));
                prop_assert_eq!(shared.racy().find(bucket, value), owned.find(bucket, value));
                let copied = shared.copy_out().unwrap();
                prop_assert_eq!(copied.storage(), owned.storage());
            }
            // Versions are even again, one step per write.
            prop_assert!(shared.stripes.iter().all(|stripe| stripe.version.load(Ordering::Relaxed) % 2 == 0));
        }
    }

    #[test]
    fn reads_see_a_settled_result_or_wait_for_it() {
        let geometry = Geometry { buckets: 4096, slots: 4, bits: 12, semi_sorted: false };
        let shared = SharedTable::copy_of(&Table::new(geometry).unwrap(), 0).unwrap();
        // Buckets 0 and 64 are in different blocks, hence different stripes.
        assert_ne!(shared.stripe_of(0), shared.stripe_of(64));
        {
            let guard = shared.lock_many([64, 0, 64]);
            let held: Vec<usize> = guard.stripes.as_ref().iter().map(|&(stripe, _)| stripe).collect();
            assert_eq!(held, [0, 1]);
            guard.table().set(64, 2, 0xabc);
            guard.count_items(1);
        }
        let found = shared.read((0, 64), |table| table.find(64, 0xabc), |_| false);
        assert_eq!(found, Some(2));
        assert_eq!(shared.items(), 1);
        // A removal counted before its insert is seen (another stripe) reads as zero, not 2^64 - 1.
        shared.lock_one(0).count_items(-2);
        assert_eq!(shared.items(), 0);
        shared.lock_one(64).count_items(1);
        assert_eq!(shared.items(), 0);
        shared.lock_one(64).count_items(1);
        assert_eq!(shared.items(), 1);
        let all = shared.lock_all();
        assert_eq!(all.stripes.as_ref().len(), shared.stripes.len());
        drop(all);
        assert!(shared.memory_bytes() > shared.racy().memory_bytes());
    }

    #[test]
    fn window_loads_read_the_bytes_in_order() {
        let bytes: Vec<u8> = (0u8..40).collect();
        let words = AtomicBytes::copy_of(&bytes).unwrap();
        for offset in 0..=24 {
            assert_eq!(words.load::<u64>(offset), u64::load(&bytes, offset));
            assert_eq!(words.load::<u128>(offset), u128::load(&bytes, offset));
        }
        assert_eq!(words.copy_out(40).unwrap(), bytes);
    }
}
