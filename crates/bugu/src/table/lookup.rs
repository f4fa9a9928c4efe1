//! The table's reads: a slot's fingerprint, the questions asked of a bucket, and lookups (by
//! hash, located, and in pipelined batches with their prefetches).

use super::Table;
use super::kernels::{self, Word};
use super::ops::{
    ContainsLocated, ContainsPipelined, Count, Find, FreeSlot, FreeSlotInEmptier, ListFingerprints,
};
use super::probe::{
    ANY_GEOMETRY, Checked, DEFAULT_KIND, FIXED_PROBES, KINDS, Kind, Loads, Probe, compiled_per_kind,
    default_kind_or_any,
};
use super::semisort;
use super::storage::Storage;
use crate::batch::{FAR_LOOKAHEAD, FAR_LOOKAHEAD_FROM_BYTES, LOOKAHEAD, Located, block_locator};
use crate::key::BlockHasher;

impl<S: Storage> Table<S> {
    /// A semi-sorted bucket's stored bits at the bottom of a word `W` (other bits above): `u64`
    /// holds a bucket of up to 16-bit fingerprints (60 bits) with its shift of 0 or 4 bits.
    #[inline(always)]
    pub(super) fn semi_sorted_bucket<W: Word>(&self, loads: impl Loads, bucket: usize, bits: u32) -> W {
        let bit = bucket * semisort::bucket_bits(bits);
        loads.load::<W>(bit / 8) >> (bit % 8) as u32
    }

    /// The four fingerprints of a semi-sorted bucket, in their sorted order.
    #[inline(always)]
    pub(super) fn decoded(&self, bucket: usize) -> [u32; semisort::SLOTS] {
        match self.probe {
            // Constant width: the decode folds into a few shifts.
            Probe::SemiSorted13 => self.semi_sorted_fingerprints::<u64>(bucket, 13),
            Probe::SemiSorted64(_) => self.semi_sorted_fingerprints::<u64>(bucket, self.bits),
            _ => self.semi_sorted_fingerprints::<u128>(bucket, self.bits),
        }
    }

    /// The four fingerprints of a semi-sorted bucket of `bits`-bit fingerprints, decoded in a word
    /// `W` that holds them (in their sorted order: slot `k` is the `k`-th).
    #[inline(always)]
    pub(super) fn semi_sorted_fingerprints<W: Word>(
        &self,
        bucket: usize,
        bits: u32,
    ) -> [u32; semisort::SLOTS] {
        semisort::fingerprints(self.semi_sorted_bucket::<W>(Checked(&self.bytes), bucket, bits), bits)
    }

    #[inline(always)]
    pub(super) fn slot_bit(&self, bucket: usize, slot: usize) -> usize {
        (bucket * self.slots + slot) * self.bits as usize
    }

    #[inline(always)]
    pub(super) fn slot_mask(&self) -> u64 {
        (1u64 << self.bits) - 1
    }

    /// The fingerprint in a slot (0 if empty). The default geometry's code is inline (its
    /// offsets and masks as constants): the path search's moves read and write slots one by one.
    #[inline]
    pub(crate) fn get(&self, bucket: usize, slot: usize) -> u32 {
        default_kind_or_any!(self.kind, KIND => self.get_as::<KIND>(bucket, slot))
    }

    /// [`get`](Self::get) compiled for the geometry of `KIND` (see [`probe_with`](Self::probe_with)).
    #[inline(always)]
    pub(super) fn get_as<const KIND: Kind>(&self, bucket: usize, slot: usize) -> u32 {
        let probe = self.probe_for::<KIND>();
        match probe {
            Probe::SemiSorted13 | Probe::SemiSorted64(_) | Probe::SemiSorted128(_) => {
                self.decoded(bucket)[slot]
            }
            _ => {
                let (bit, bits) = self.plain_slot_place(probe, bucket, slot);
                self.plain_slot_at(bit, bits)
            }
        }
    }

    /// The `bits`-bit fingerprint in the plain slot whose first bit is `bit`.
    #[inline(always)]
    pub(super) fn plain_slot_at(&self, bit: usize, bits: u32) -> u32 {
        let window = self.bytes.load::<u64>(bit / 8);
        ((window >> (bit % 8)) & ((1 << bits) - 1)) as u32
    }

    /// A bucket's fingerprints in slot order (0 for an empty slot), as its geometry's matcher
    /// lists them ([`Matcher::fingerprints`](super::Matcher::fingerprints), what the path search reads): for inspection.
    pub(crate) fn fingerprints(&self, bucket: usize) -> impl Iterator<Item = u32> {
        let (slots, fingerprints) = self.probe(ListFingerprints(bucket));
        fingerprints.into_iter().take(slots)
    }
    /// Asks the CPU to start loading a bucket's cache line, so that a later probe finds it in cache.
    /// Lookups in batches issue these for upcoming items while probing the current one.
    ///
    /// The hint is T1, "into the L2": with T0, "into the L1", batched lookups and inserts into
    /// tables larger than the caches were much slower (`scripts/ab-fills`). Each T0 prefetch
    /// seems to hold one of the L1's few miss buffers until its line arrives, which caps the
    /// lines in flight; the L2's queue is deeper. Where the tables fit in the caches, T1 costs a
    /// little, which the large tables repay many times over.
    ///
    /// Compiled for the geometry of `KIND` (which must be the table's, or [`ANY_GEOMETRY`]): a
    /// known geometry's offsets take an `lea` or a shift instead of a multiplication by a width
    /// read from the table. (A wrong `KIND` would only fetch the wrong line.)
    #[inline(always)]
    pub(crate) fn prefetch_as<const KIND: Kind>(&self, bucket: usize) {
        debug_assert!(KIND == ANY_GEOMETRY || KIND == self.kind());
        let fixed = if KIND == ANY_GEOMETRY { None } else { FIXED_PROBES[KIND as usize - 1].fixed_layout() };
        let (offset, window_bytes) = match fixed {
            Some((bucket_bytes, window_bytes)) => (bucket * bucket_bytes, window_bytes),
            None => (bucket * self.bucket_bits / 8, self.window_bytes),
        };
        let first = self.bytes.address(offset);
        // The probe's window load reads 8 bytes from there (16 for wide buckets); about one
        // window in ten ends in the next cache line, which the load then needs too.
        let last = first.wrapping_add(window_bytes - 1);
        for address in [first, last] {
            kernels::prefetch_t1(address);
        }
    }

    /// Whether either of the two buckets that `locate` computes (from values the caller holds)
    /// holds its fingerprint: the lookup of every filter. Both buckets are loaded
    /// unconditionally, so their cache misses overlap. The geometry is dispatched *before*
    /// locating: the jump then does not wait for the hash, and nothing computed before it has to
    /// survive it in memory.
    #[inline(always)]
    pub(crate) fn contains_located(&self, locate: impl Fn() -> Located) -> bool {
        self.probe(ContainsLocated { locate })
    }

    /// Whether an item with this hash may be in the table: [`contains_located`](Self::contains_located)
    /// at the item's place by the table's own [`addressing`](Self::addressing), with the loads
    /// checked once per lookup rather than at every load, which one-by-one lookups feel, in a
    /// function compiled for the table's geometry alone (`contains_as`): the code of every
    /// geometry inlined together is markedly longer, in a loop and out of line alike
    /// (measured: `docs/performance.md`).
    ///
    /// For the default geometry the lookup is inlined instead, behind one predictable branch: no
    /// call, return or argument moves, which brought `contains_hash` clearly closer to the C++
    /// reference kernel on large tables (`lookup_kernels`, `docs/performance.md`); the other
    /// geometries keep the call below.
    #[inline(always)]
    pub(crate) fn contains_hash(&self, hash: u64) -> bool {
        if self.kind == DEFAULT_KIND {
            // SAFETY: as in `contains_as`; the table's kind is `DEFAULT_KIND`.
            unsafe { self.contains_in::<DEFAULT_KIND>(hash) }
        } else {
            (self.lookup)(self, hash)
        }
    }

    /// The lookup compiled for each [`Kind`] of geometry, indexed by it.
    pub(super) const LOOKUPS: [fn(&Table<S>, u64) -> bool; KINDS] = compiled_per_kind!(Self, contains_as);

    /// [`contains_hash`](Self::contains_hash) compiled for one kind of geometry, the table's.
    /// Out of line and called through the table's pointer to it, so that every caller runs the
    /// same small function: the lookup of every geometry, inlined into a large caller or called
    /// out of line, saved six registers and dispatched, which slowed lookups from threads
    /// markedly (the `threads` harness). Only the default geometry's is also inlined, alone.
    #[inline(never)]
    pub(super) fn contains_as<const KIND: Kind>(&self, hash: u64) -> bool {
        // SAFETY: `KIND` is the table's: its constructors took this function from `LOOKUPS` at
        // the table's kind.
        unsafe { self.contains_in::<KIND>(hash) }
    }

    /// The body of [`contains_as`](Self::contains_as), inlined where it is used.
    ///
    /// # Safety
    /// `KIND` is [`ANY_GEOMETRY`] or the table's [`kind`](Self::kind).
    #[inline(always)]
    pub(super) unsafe fn contains_in<const KIND: Kind>(&self, hash: u64) -> bool {
        let locate = || self.addressing.locate(hash);
        // SAFETY: the op visits the two buckets `locate` gives, and `Addressing::locate` gives
        // buckets below the count it was built with, this table's `buckets`; the caller
        // guarantees `KIND`.
        unsafe { self.probe_in_range::<KIND, _>(ContainsLocated { locate }) }
    }

    /// Locates a hash by the table's addressing and starts fetching both of its buckets.
    #[inline(always)]
    pub(crate) fn locate_and_prefetch(&self, hash: u64) -> Located {
        let located = self.addressing.locate(hash);
        self.prefetch_located(located);
        located
    }

    /// Prefetches both buckets of a located item.
    #[inline(always)]
    pub(crate) fn prefetch_located(&self, located: Located) {
        self.prefetch_located_as::<ANY_GEOMETRY>(located);
    }

    /// [`prefetch_located`](Self::prefetch_located) compiled for the geometry of `KIND` (see
    /// [`prefetch_as`](Self::prefetch_as)).
    #[inline(always)]
    pub(crate) fn prefetch_located_as<const KIND: Kind>(&self, (_, b1, b2): Located) {
        self.prefetch_as::<KIND>(b1);
        self.prefetch_as::<KIND>(b2);
    }

    /// [`contains_hash`](Self::contains_hash) for each item's hash, in order, pipelined
    /// ([`in_blocks`](crate::batch::in_blocks)): the items are hashed and located a block at a time
    /// ([`block_locator`]) and their buckets prefetched a block before
    /// they are probed: [`LOOKAHEAD`] items, or [`FAR_LOOKAHEAD`] in a large table
    /// ([`looks_far_ahead`](Self::looks_far_ahead)). The geometry is dispatched once for the whole
    /// run, so the loop's body is the bare kernel, and loads are checked once for the whole run,
    /// as [`contains_hash`](Self::contains_hash)'s are once per lookup. The default geometry's
    /// run is compiled for it alone, as its lookup is: its prefetches then compute a bucket's
    /// address with an `lea` instead of a multiplication by the width the table holds, a
    /// saving on every item of the run (`compare`'s batched row; `docs/performance.md`).
    pub(crate) fn contains_pipelined<T>(&self, items: &[T], hasher: impl BlockHasher<T>) -> Vec<bool> {
        match (self.kind == DEFAULT_KIND, self.looks_far_ahead()) {
            // SAFETY: the table's kind is `DEFAULT_KIND`.
            (true, false) => unsafe {
                self.contains_pipelined_as::<DEFAULT_KIND, LOOKAHEAD, T>(items, hasher)
            },
            // SAFETY: as above.
            (true, true) => unsafe {
                self.contains_pipelined_as::<DEFAULT_KIND, FAR_LOOKAHEAD, T>(items, hasher)
            },
            // SAFETY: code for `ANY_GEOMETRY` serves every table.
            (false, false) => unsafe {
                self.contains_pipelined_as::<ANY_GEOMETRY, LOOKAHEAD, T>(items, hasher)
            },
            // SAFETY: as above.
            (false, true) => unsafe {
                self.contains_pipelined_as::<ANY_GEOMETRY, FAR_LOOKAHEAD, T>(items, hasher)
            },
        }
    }

    /// Whether batched lookups look [`FAR_LOOKAHEAD`] items ahead instead of [`LOOKAHEAD`]: in
    /// tables of [`FAR_LOOKAHEAD_FROM_BYTES`] or more, which the caches hold less of.
    pub(crate) fn looks_far_ahead(&self) -> bool {
        self.len >= FAR_LOOKAHEAD_FROM_BYTES
    }

    /// [`contains_pipelined`](Self::contains_pipelined) compiled for the geometry of `KIND`.
    ///
    /// # Safety
    /// `KIND` is [`ANY_GEOMETRY`] or the table's [`kind`](Self::kind).
    #[inline(always)]
    pub(super) unsafe fn contains_pipelined_as<const KIND: Kind, const N: usize, T>(
        &self,
        items: &[T],
        hasher: impl BlockHasher<T>,
    ) -> Vec<bool> {
        let mut found = vec![false; items.len()];
        let locate = block_locator(self.addressing, hasher);
        let prefetch = |located| self.prefetch_located_as::<KIND>(located);
        // SAFETY: the op visits the buckets `block_locator` gives: `Addressing::locate`'s (or
        // `locate_block_narrow`'s, the same) for this table, which are below its `buckets` for any
        // count; the caller guarantees `KIND`.
        unsafe {
            self.probe_in_range::<KIND, _>(ContainsPipelined::<T, _, _, N> {
                items,
                locate,
                prefetch,
                found: &mut found,
            })
        };
        found
    }

    /// The first slot holding `fingerprint` (pass 0 to find an empty slot).
    #[inline]
    pub(crate) fn find(&self, bucket: usize, fingerprint: u32) -> Option<usize> {
        self.probe(Find { bucket, fingerprint })
    }

    /// A free slot in the emptier of two buckets (`b1` on a tie), as `(bucket, slot)`, or `None`
    /// if both are full: where an insert puts its fingerprint. Both buckets are loaded at once
    /// and the choice is made without a branch (it is a coin flip no predictor can learn).
    #[inline]
    pub(crate) fn free_slot_in_emptier(&self, b1: usize, b2: usize) -> Option<(usize, usize)> {
        self.probe(FreeSlotInEmptier { buckets: [b1, b2] }).map(|free| (free.bucket, free.slot))
    }

    /// [`free_slot_in_emptier`](Self::free_slot_in_emptier) compiled for the geometry of `KIND`,
    /// with the buckets checked once: the concurrent insert's unlocked read, which
    /// [`set_if_empty_as`](Self::set_if_empty_as) completes under the slot's lock.
    ///
    /// # Safety
    /// `KIND` is [`ANY_GEOMETRY`] or the table's [`kind`](Self::kind) (another geometry's code
    /// would compute other offsets).
    #[inline(always)]
    pub(crate) unsafe fn free_slot_in_emptier_as<const KIND: Kind>(
        &self,
        b1: usize,
        b2: usize,
    ) -> Option<FreeSlot> {
        // One check of both buckets instead of one per load.
        assert!(b1.max(b2) < self.buckets, "a bucket outside the table");
        // SAFETY: the op visits `b1` and `b2` only, both below `buckets` (just checked); `KIND`
        // is the caller's guarantee.
        unsafe { self.probe_in_range::<KIND, _>(FreeSlotInEmptier { buckets: [b1, b2] }) }
    }

    /// The first bit and the width of a slot that [`free_slot_in_emptier_as`](Self::free_slot_in_emptier_as)
    /// found, in code compiled for the same `KIND`: in a plain geometry with constants, from the
    /// slot's flag (its lane's top bit), with no multiplication by the slot's number. `None` in a
    /// semi-sorted bucket, whose slots have no bits of their own.
    #[inline(always)]
    pub(crate) fn free_slot_bits_as<const KIND: Kind>(&self, free: &FreeSlot) -> Option<(usize, u32)> {
        let probe = self.probe_for::<KIND>();
        if KIND != ANY_GEOMETRY
            && let (Some((_, bits)), Some((bucket_bytes, _))) = (probe.fixed_shape(), probe.fixed_layout())
        {
            debug_assert_eq!(
                free.flag_bit + 1 - bits,
                free.slot as u32 * bits,
                "the flag is the lane's top bit"
            );
            return Some((free.bucket * bucket_bytes * 8 + (free.flag_bit + 1 - bits) as usize, bits));
        }
        match probe {
            Probe::SemiSorted13 | Probe::SemiSorted64(_) | Probe::SemiSorted128(_) => None,
            _ => Some((self.slot_bit(free.bucket, free.slot), self.bits)),
        }
    }

    /// How many slots hold `fingerprint` (pass 0 to count empty slots).
    #[inline]
    pub(crate) fn count(&self, bucket: usize, fingerprint: u32) -> usize {
        self.probe(Count { bucket, fingerprint })
    }

    /// The copies of a located fingerprint in its two buckets (never the same bucket: see
    /// `Addressing::alternate`).
    #[inline]
    pub(crate) fn count_located(&self, (fingerprint, b1, b2): Located) -> usize {
        self.count(b1, fingerprint) + self.count(b2, fingerprint)
    }

    /// The number of occupied slots in a bucket.
    #[inline]
    pub(crate) fn occupied(&self, bucket: usize) -> usize {
        self.slots - self.count(bucket, 0)
    }

    /// The number of occupied slots in the table (a pass over every bucket).
    pub(crate) fn occupied_slots(&self) -> usize {
        (0..self.buckets).map(|bucket| self.occupied(bucket)).sum()
    }
}
