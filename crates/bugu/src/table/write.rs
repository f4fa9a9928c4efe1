//! The table's writes: a slot set, an insert's first step (a free slot in the emptier of two
//! buckets, in code compiled for the table's geometry) and a removal.

use super::Table;
use super::kernels::Word;
use super::ops::{FindEither, FreeSlot, FreeSlotInEmptier};
use super::probe::{
    ANY_GEOMETRY, Checked, DEFAULT_KIND, FIXED_PROBES, KINDS, Kind, Probe, SEMI_SORTED_13_KIND,
    compiled_per_kind, default_kind_or_any,
};
use super::semisort;
use super::storage::StorageMut;
use crate::batch::{LOOKAHEAD, Located, block_locator, in_blocks};
use crate::key::BlockHasher;

/// A write to one of an item's two buckets (an insert's first step, a removal), compiled for one
/// kind of geometry: `(table, fingerprint, b1, b2) -> whether it wrote`.
pub(super) type BucketWrite<S> = fn(&mut Table<S>, u32, usize, usize) -> bool;

impl<S: StorageMut> Table<S> {
    /// Stores a fingerprint (or 0 to empty the slot). In a semi-sorted bucket the slots are
    /// re-sorted afterwards: slot numbers of that bucket read before are stale. The default
    /// geometry's code is inline, as with [`get`](Self::get).
    #[inline]
    pub(crate) fn set(&mut self, bucket: usize, slot: usize, fingerprint: u32) {
        default_kind_or_any!(self.kind, KIND => self.set_as::<KIND>(bucket, slot, fingerprint));
    }

    /// Stores `fingerprint` in a slot if the slot is empty; `false`, with the table unchanged, if
    /// it holds a fingerprint. A plain slot's bits are located once for the check and the store:
    /// the concurrent insert's step under its stripe's lock, where `get` and then `set` would
    /// locate the slot twice.
    #[inline]
    pub(crate) fn set_if_empty(&mut self, bucket: usize, slot: usize, fingerprint: u32) -> bool {
        if self.is_semi_sorted() {
            let empty = self.get(bucket, slot) == 0;
            if empty {
                self.set(bucket, slot, fingerprint);
            }
            return empty;
        }
        let bit = self.slot_bit(bucket, slot);
        let empty = self.plain_slot_at(bit, self.bits) == 0;
        if empty {
            self.write_bits(bit, self.bits, fingerprint as u64);
        }
        empty
    }

    /// [`set`](Self::set) compiled for the geometry of `KIND` (see [`probe_with`](Self::probe_with)).
    #[inline(always)]
    pub(super) fn set_as<const KIND: Kind>(&mut self, bucket: usize, slot: usize, fingerprint: u32) {
        debug_assert!((fingerprint as u64) <= self.slot_mask());
        let probe = self.probe_for::<KIND>();
        match probe {
            // Constant width: the decode, the sort and the encode fold into straight-line code.
            Probe::SemiSorted13 => self.set_semi_sorted::<u64>(bucket, slot, fingerprint, 13),
            Probe::SemiSorted64(_) => self.set_semi_sorted::<u64>(bucket, slot, fingerprint, self.bits),
            Probe::SemiSorted128(_) => self.set_semi_sorted::<u128>(bucket, slot, fingerprint, self.bits),
            _ => {
                let (bit, bits) = self.plain_slot_place(probe, bucket, slot);
                self.write_bits(bit, bits, fingerprint as u64);
            }
        }
    }

    /// Every insert's first step: stores `fingerprint` in a free slot of the emptier of buckets
    /// `b1` and `b2` (`b1` on a tie); `false`, with the table unchanged, if both are full. Runs
    /// code compiled for the table's geometry, as lookups do: the generic probe and `set`, each
    /// dispatching on the geometry, made up much of a fast insert's work.
    ///
    /// For the default geometry the step is inlined into the caller instead, as lookups are
    /// ([`contains_hash`](Self::contains_hash)): no call, return or argument moves, which showed
    /// in fills of large tables against the C++ reference's insert (`docs/performance.md`).
    #[inline(always)]
    pub(crate) fn store_in_emptier(&mut self, fingerprint: u32, b1: usize, b2: usize) -> bool {
        // One check of both buckets instead of one per load, which the step's loads would repeat.
        assert!(b1.max(b2) < self.buckets, "a bucket outside the table");
        // SAFETY: both buckets were just checked.
        unsafe { self.store_in_emptier_unchecked(fingerprint, b1, b2) }
    }

    /// [`store_in_emptier`](Self::store_in_emptier) at the place the table's own addressing
    /// gives a hash: the first step of a one-by-one insert, or the located fingerprint and
    /// buckets, for the path search, if both buckets are full. The buckets come from the
    /// table's addressing, so they are not checked again, and the caller keeps nothing for the
    /// search in memory, which kept large fills measurably quicker against the C++ reference's
    /// insert (the `insert_kernels` benchmark).
    #[inline(always)]
    pub(crate) fn store_hash_in_emptier(&mut self, hash: u64) -> Result<(), Located> {
        let located = self.addressing.locate(hash);
        // SAFETY: located by the table's own addressing; code for any geometry.
        unsafe { self.store_located_in_emptier::<ANY_GEOMETRY>(located) }
    }

    /// [`store_hash_in_emptier`](Self::store_hash_in_emptier) for an item already located:
    /// batched inserts locate theirs a block ahead, and going through the checked step would
    /// check again what the addressing guarantees. Compiled for `KIND`: a loop compiled for the
    /// table's geometry calls that geometry's step without looking at the table's kind.
    ///
    /// # Safety
    /// `located` comes from this table's [`addressing`](Self::addressing), which gives buckets
    /// below the count it was built with, this table's `buckets`; `KIND` is [`ANY_GEOMETRY`] or
    /// the table's [`kind`](Self::kind).
    #[inline(always)]
    pub(super) unsafe fn store_located_in_emptier<const KIND: Kind>(
        &mut self,
        located @ (fingerprint, b1, b2): Located,
    ) -> Result<(), Located> {
        let stored = if KIND == ANY_GEOMETRY {
            // SAFETY: the caller's guarantee.
            unsafe { self.store_in_emptier_unchecked(fingerprint, b1, b2) }
        } else {
            // SAFETY: the caller's guarantees.
            unsafe { self.store_free_unchecked::<KIND>([b1, b2], fingerprint) }
        };
        if stored { Ok(()) } else { Err(located) }
    }

    /// Inserts' first steps for `items`, pipelined ([`in_blocks`]): each item located a block
    /// ahead by the table's own addressing ([`block_locator`]), its buckets prefetched, and its
    /// fingerprint stored in the emptier of its buckets by code compiled for `KIND`, without a
    /// bounds check (the addressing gives buckets below the table's count). `state` decides
    /// what else each item does ([`PipelinedInserts`]).
    ///
    /// # Panics
    /// If `KIND` is neither [`ANY_GEOMETRY`] nor the table's [`kind`](Self::kind) (checked once
    /// for the whole batch), or if `outputs` is shorter than `items`.
    #[inline(always)]
    pub(crate) fn store_pipelined<const KIND: Kind, T, P: PipelinedInserts<S>>(
        &mut self,
        state: &mut P,
        items: &[T],
        hasher: impl BlockHasher<T>,
        outputs: &mut [P::Output],
    ) {
        assert!(KIND == ANY_GEOMETRY || KIND == self.kind, "code compiled for another geometry");
        let locate = block_locator::<_, LOOKAHEAD>(self.addressing, hasher);
        let mut both = Pipelined { table: self, state };
        in_blocks(
            &mut both,
            items,
            outputs,
            |_, items, block| locate(items, block),
            |both, located| both.table.prefetch_located_as::<KIND>(located),
            |both, located| both.state.ahead::<KIND>(both.table, located),
            |both, located| {
                // SAFETY: located by the table's own addressing (`locate`), whose buckets are
                // below its count; `KIND` is the table's or `ANY_GEOMETRY` (checked above).
                let first_step = unsafe { both.table.store_located_in_emptier::<KIND>(located) };
                both.state.finish(both.table, first_step)
            },
        );
    }

    /// The step every entry point shares: the code of the default geometry and of semi-sorted
    /// 13-bit buckets inline, the others' through [`STORES`](Self::STORES) (which check the
    /// buckets once more, off the inlined paths).
    ///
    /// Semi-sorted 13-bit inserts are inlined too: called through `STORES`, their one-by-one
    /// fills were clearly slower (`scripts/ab-fills`, `docs/performance.md`).
    ///
    /// # Safety
    /// `b1` and `b2` are below [`buckets`](Self::buckets).
    #[inline(always)]
    pub(super) unsafe fn store_in_emptier_unchecked(
        &mut self,
        fingerprint: u32,
        b1: usize,
        b2: usize,
    ) -> bool {
        if self.kind == DEFAULT_KIND {
            // SAFETY: both buckets are in the table (the caller's guarantee); the table's kind is
            // `DEFAULT_KIND`.
            unsafe { self.store_free_unchecked::<DEFAULT_KIND>([b1, b2], fingerprint) }
        } else if self.kind == SEMI_SORTED_13_KIND {
            // SAFETY: as above, and the table's kind is `SEMI_SORTED_13_KIND`.
            unsafe { self.store_free_unchecked::<SEMI_SORTED_13_KIND>([b1, b2], fingerprint) }
        } else {
            Self::STORES[self.kind as usize](self, fingerprint, b1, b2)
        }
    }

    pub(super) const STORES: [BucketWrite<S>; KINDS] = compiled_per_kind!(Self, store_in_emptier_as);

    /// [`store_in_emptier`](Self::store_in_emptier) compiled for one kind of geometry, the table's.
    #[inline(never)]
    pub(super) fn store_in_emptier_as<const KIND: Kind>(
        &mut self,
        fingerprint: u32,
        b1: usize,
        b2: usize,
    ) -> bool {
        // One check of both buckets instead of one per load.
        assert!(b1.max(b2) < self.buckets, "a bucket outside the table");
        // SAFETY: both buckets were just checked; `KIND` is the table's (`STORES` is indexed by
        // the table's kind).
        unsafe { self.store_free_unchecked::<KIND>([b1, b2], fingerprint) }
    }

    /// Stores `fingerprint` in a free slot of the emptier of `buckets`, if either has one: an
    /// insert's first step, compiled for `KIND`. The slot is free, so in a plain geometry that
    /// code is compiled for, its bits are set in the window the probe loaded, from the same
    /// offset, without a mask and without a second bounds check: far less work than a masked
    /// store.
    ///
    /// # Safety
    /// Both buckets are below [`buckets`](Self::buckets), and `KIND` is [`ANY_GEOMETRY`] or the
    /// table's [`kind`](Self::kind).
    #[inline(always)]
    pub(super) unsafe fn store_free_unchecked<const KIND: Kind>(
        &mut self,
        buckets: [usize; 2],
        fingerprint: u32,
    ) -> bool {
        // SAFETY: the op visits `buckets` only; the rest is the caller's guarantee.
        let found = unsafe { self.probe_in_range::<KIND, _>(FreeSlotInEmptier { buckets }) };
        let Some(FreeSlot { bucket, slot, flag_bit }) = found else { return false };
        let fixed = if KIND == ANY_GEOMETRY { None } else { Some(FIXED_PROBES[KIND as usize - 1]) };
        match fixed.and_then(|probe| Some((probe.fixed_shape()?, probe.fixed_layout()?))) {
            Some(((_, bits), (bucket_bytes, window_bytes))) => {
                // The flag is the free lane's top bit (the plain geometries' matcher flags
                // lanes so), so the lane starts `bits - 1` below it: no division by `bits`.
                let (offset, shift) = (bucket * bucket_bytes, flag_bit + 1 - bits);
                debug_assert_eq!(shift, slot as u32 * bits, "the flag is the lane's top bit");
                // SAFETY: `probe_in_range` loaded this window, `window_bytes` from `offset`: it
                // checked that the storage's region holds the table's length, which holds the
                // window of every bucket (padding included), and `bucket` is one of `buckets`.
                // The region cannot have shrunk since: the table is borrowed mutably.
                unsafe {
                    if window_bytes == 8 {
                        self.bytes.fill_zero_bits_unchecked(offset, u64::from(fingerprint) << shift);
                    } else {
                        self.bytes.fill_zero_bits_unchecked(offset, u128::from(fingerprint) << shift);
                    }
                }
            }
            None => self.set_as::<KIND>(bucket, slot, fingerprint),
        }
        true
    }

    /// Empties a slot holding `fingerprint` in bucket `b1`, or else in `b2`; `false`, with the
    /// table unchanged, if neither holds it: a removal, in code compiled for the table's
    /// geometry as [`store_in_emptier`](Self::store_in_emptier) is.
    #[inline]
    pub(crate) fn remove_from_either(&mut self, fingerprint: u32, b1: usize, b2: usize) -> bool {
        Self::REMOVES[self.kind as usize](self, fingerprint, b1, b2)
    }

    pub(super) const REMOVES: [BucketWrite<S>; KINDS] = compiled_per_kind!(Self, remove_from_either_as);

    /// [`remove_from_either`](Self::remove_from_either) compiled for one kind of geometry.
    #[inline(never)]
    pub(super) fn remove_from_either_as<const KIND: Kind>(
        &mut self,
        fingerprint: u32,
        b1: usize,
        b2: usize,
    ) -> bool {
        // One check of both buckets instead of one per load.
        assert!(b1.max(b2) < self.buckets, "a bucket outside the table");
        // SAFETY: the op visits `b1` and `b2` only, both below `buckets` (just checked); `KIND`
        // is the table's (`REMOVES` is indexed by the table's kind).
        let found = unsafe { self.probe_in_range::<KIND, _>(FindEither { buckets: [b1, b2], fingerprint }) };
        found.map(|(bucket, slot)| self.set_as::<KIND>(bucket, slot, 0)).is_some()
    }

    /// [`set`](Self::set) in a semi-sorted bucket of `bits`-bit fingerprints, decoded and encoded
    /// in a word `W` that holds it.
    #[inline(always)]
    pub(super) fn set_semi_sorted<W: Word>(
        &mut self,
        bucket: usize,
        slot: usize,
        fingerprint: u32,
        bits: u32,
    ) {
        let stored = self.semi_sorted_bucket::<W>(Checked(&self.bytes), bucket, bits);
        let updated = semisort::with_slot_set(stored, bits, slot, fingerprint);
        let bucket_bits = semisort::bucket_bits(bits);
        self.write_bits(bucket * bucket_bits, bucket_bits as u32, updated);
    }

    /// Overwrites the `width` bits starting at bit `bit` with `value` (which has no bits above
    /// `width`), through a window `W` that holds them with their shift within the first byte.
    #[inline(always)]
    pub(super) fn write_bits<W: Word>(&mut self, bit: usize, width: u32, value: W) {
        let (offset, shift) = (bit / 8, (bit % 8) as u32);
        let mask = W::from_u128((1u128 << width) - 1) << shift;
        self.bytes.store_bits(offset, value << shift, mask);
    }
}

/// What a pipelined insert ([`Table::store_pipelined`]) does besides each item's first step.
pub(crate) trait PipelinedInserts<S> {
    /// Each item's result.
    type Output;
    /// The look-ahead of `in_blocks` for an item half a block ahead, with code compiled for
    /// `KIND` (the table's, or [`ANY_GEOMETRY`]).
    fn ahead<const KIND: Kind>(&self, table: &Table<S>, located: Located);
    /// An item's result from its first step's (the located place if both buckets were full).
    fn finish(&mut self, table: &mut Table<S>, first_step: Result<(), Located>) -> Self::Output;
}

/// The table and the state of a pipelined insert, as one state for `in_blocks`.
struct Pipelined<'a, S, P> {
    table: &'a mut Table<S>,
    state: &'a mut P,
}
