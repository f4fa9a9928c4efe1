//! Bucket storage: `buckets x slots` fingerprints of `bits` bits, bit-packed little-endian in one
//! contiguous buffer — the only module that knows the memory layout.
//!
//! The table knows nothing of items or hashing: it stores fingerprints (non-zero `u32`s below
//! `2^bits`; 0 marks an empty slot) and answers per-bucket questions. Every probe of a bucket goes
//! through [`Table::probe`], which runs a [`BucketOp`] against the [`Matcher`] of the kernel chosen
//! once, when the table is built ([`Probe`]):
//! - the hot geometries (2, 4 or 8 slots of 8, 12 or 16 bits) with constant masks and offsets;
//! - any bucket that fits a `u64` window (e.g. 4 x 13 bits): one load, one shift, SWAR over the
//!   lanes with masks computed at run time (no shift when the bucket is whole bytes, e.g. 4 x 14);
//! - one that fits a `u128` window (e.g. 4 x 17, or 4 x 18 bits without the shift): the same on
//!   two words;
//! - semi-sorted buckets of 4 ([`semisort`]): of 13 bits, compared in their stored form
//!   ([`semisort::Sorted13`]); of other widths, decoded into lanes, then the same SWAR;
//! - otherwise (8 slots of more than 16 bits): slot by slot.
//!
//! Bucket `i` starts at bit `i * bucket_bits` (`slots * bits`, or `4 bits - 4` semi-sorted); in a
//! plain bucket slot `s` starts `s * bits` further. The buffer has [`PADDING`] bytes beyond the last
//! bucket, so a window load at any bucket stays in bounds.
//!
//! Four measured gains need `unsafe` (each block has a `SAFETY` comment):
//! - large buffers are advised to use transparent huge pages, so that lookups in tables far
//!   larger than the TLB's reach miss it less often (the `huge_pages` benchmark);
//! - lookups in batches prefetch buckets ahead of time;
//! - on x86-64 a lookup tests its two buckets at once in SSE2 registers ([`vector`]), which
//!   leaves the general-purpose registers, whose number bounds how many lookups are in flight,
//!   to the hashing and addressing, so more lookups are in flight at once;
//! - a lookup by hash ([`Table::contains_hash`]) loads its two windows without a bounds check
//!   each: the table locates the item with its own [`Addressing`], whose buckets are below the
//!   table's count, and checks its storage's length once per lookup ([`Region`]). Checks inside
//!   each geometry's code (even one per bucket) measured as slow as checked loads.

mod semisort;
pub(crate) mod shared;
mod storage;
mod swar;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod vector;

use crate::batch::{
    FAR_LOOKAHEAD, FAR_LOOKAHEAD_FROM_BYTES, LOOKAHEAD, Located, answer_in_blocks, block_locator,
};
use crate::hash::{Addressing, LocatedBlock};
use crate::key::BlockHasher;
use storage::Region;
pub(crate) use storage::{Storage, StorageMut};
use swar::{Lanes, Slotwise, Windowed, Word};
pub(crate) use swar::{MAX_LANES, Matcher};

// Every bucket size fits the array of a bucket's fingerprints (`Matcher::fingerprints`).
const _: () = {
    let mut i = 0;
    while i < crate::config::BUCKET_SIZES.len() {
        assert!(crate::config::BUCKET_SIZES[i] <= MAX_LANES);
        i += 1;
    }
};

/// Bytes after the packed buckets so that a 16-byte window load at the last bucket is in bounds.
pub(crate) const PADDING: usize = 16;

/// The shape of a table: how many buckets of how many slots of how many bits, and whether the
/// buckets are semi-sorted (then 4 slots, stored in `4 bits - 4` bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub(crate) buckets: usize,
    pub(crate) slots: usize,
    pub(crate) bits: u32,
    pub(crate) semi_sorted: bool,
}

impl Geometry {
    /// Bits one bucket takes.
    pub(crate) const fn bucket_bits(&self) -> usize {
        match self.semi_sorted {
            true => semisort::bucket_bits(self.bits),
            false => self.slots * self.bits as usize,
        }
    }

    /// Bytes of the packed buckets (without padding), or `None` if the table (with its padding)
    /// would not fit in memory sizes.
    pub(crate) fn payload_len(&self) -> Option<usize> {
        let total_bits = (self.buckets as u128) * (self.bucket_bits() as u128);
        let len = total_bits.div_ceil(8);
        (total_bits <= usize::MAX as u128 && len + PADDING as u128 <= isize::MAX as u128)
            .then_some(len as usize)
    }
}

/// How a bucket is probed; chosen from the geometry when the table is built.
///
/// The hot geometries (2, 4 or 8 slots of 8, 12 or 16 bits: every bucket starts on a byte) have
/// variants of their own, so that their probes compile with constant masks and offsets; any other
/// geometry uses masks computed at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probe {
    Slots2Bits8,
    Slots2Bits12,
    Slots2Bits16,
    Slots4Bits8,
    Slots4Bits12,
    Slots4Bits16,
    Slots8Bits8,
    Slots8Bits12,
    Slots8Bits16,
    Word64(Lanes<u64>),
    Word128(Lanes<u128>),
    /// A bucket of whole bytes (this many) that fits a `u64`: loaded without a bit shift.
    Bytes64(Lanes<u64>, usize),
    /// A bucket of whole bytes (this many) that fits a `u128`, e.g. 4 slots of 18 or 20 bits.
    Bytes128(Lanes<u128>, usize),
    Slotwise,
    /// Semi-sorted buckets of 4 x 13 bits (6 bytes: they start on a byte): the memory of plain
    /// 12-bit buckets at half their false-positive rate.
    SemiSorted13,
    /// Semi-sorted buckets of 4, decoded into lanes that fit a `u64` (widths up to 16 bits).
    SemiSorted64(Lanes<u64>),
    /// Semi-sorted buckets of 4 with wider fingerprints.
    SemiSorted128(Lanes<u128>),
}

/// The hot geometries, which code can be compiled for one at a time: a [`Kind`] `k >= 1` is the
/// `k`-th of them, and [`ANY_GEOMETRY`] (0) the table's own, whatever it is.
const FIXED_PROBES: [Probe; 10] = [
    Probe::Slots2Bits8,
    Probe::Slots2Bits12,
    Probe::Slots2Bits16,
    Probe::Slots4Bits8,
    Probe::Slots4Bits12,
    Probe::Slots4Bits16,
    Probe::Slots8Bits8,
    Probe::Slots8Bits12,
    Probe::Slots8Bits16,
    Probe::SemiSorted13,
];

/// Which geometry a piece of code is compiled for (see [`FIXED_PROBES`]).
pub(crate) type Kind = u8;

/// Code compiled for any geometry: it reads the table's [`Probe`] at run time.
pub(crate) const ANY_GEOMETRY: Kind = 0;

/// How many [`Kind`]s there are.
pub(crate) const KINDS: usize = FIXED_PROBES.len() + 1;

/// The [`Kind`] of the default geometry, 12-bit fingerprints in buckets of 4
/// ([`Probe::Slots4Bits12`]): the one whose lookup is inlined into its callers
/// ([`Table::contains_hash`]).
pub(crate) const DEFAULT_KIND: Kind = 5;

/// The [`Kind`] of semi-sorted buckets of 13-bit fingerprints ([`Probe::SemiSorted13`]), whose
/// insert's first step is also inlined into its callers
/// ([`store_in_emptier`](Table::store_in_emptier)).
const SEMI_SORTED_13_KIND: Kind = 10;

/// `[f::<0>, f::<1>, ...]`: a function compiled for each [`Kind`], indexed by it (the array's
/// type, `[_; KINDS]`, checks that every kind is there).
macro_rules! compiled_per_kind {
    ($owner:ty, $function:ident) => {
        [
            <$owner>::$function::<0>,
            <$owner>::$function::<1>,
            <$owner>::$function::<2>,
            <$owner>::$function::<3>,
            <$owner>::$function::<4>,
            <$owner>::$function::<5>,
            <$owner>::$function::<6>,
            <$owner>::$function::<7>,
            <$owner>::$function::<8>,
            <$owner>::$function::<9>,
            <$owner>::$function::<10>,
        ]
    };
}
pub(crate) use compiled_per_kind;

/// `$body` with `$kind` a constant: [`DEFAULT_KIND`] if the table's kind `$table_kind` is the
/// default geometry's, else [`ANY_GEOMETRY`]. Code that the default geometry runs most is
/// compiled for it alone (its offsets and masks constants) and for any geometry besides, and a
/// table takes the first where it can.
macro_rules! default_kind_or_any {
    ($table_kind:expr, $kind:ident => $body:expr) => {
        if $table_kind == $crate::table::DEFAULT_KIND {
            const $kind: $crate::table::Kind = $crate::table::DEFAULT_KIND;
            $body
        } else {
            const $kind: $crate::table::Kind = $crate::table::ANY_GEOMETRY;
            $body
        }
    };
}
pub(crate) use default_kind_or_any;

impl Probe {
    /// Slots and bits of a plain geometry with a variant of its own: how a table's shape picks
    /// that variant, and how code compiled for it knows its constants.
    const fn fixed_shape(self) -> Option<(usize, u32)> {
        Some(match self {
            Probe::Slots2Bits8 => (2, 8),
            Probe::Slots2Bits12 => (2, 12),
            Probe::Slots2Bits16 => (2, 16),
            Probe::Slots4Bits8 => (4, 8),
            Probe::Slots4Bits12 => (4, 12),
            Probe::Slots4Bits16 => (4, 16),
            Probe::Slots8Bits8 => (8, 8),
            Probe::Slots8Bits12 => (8, 12),
            Probe::Slots8Bits16 => (8, 16),
            _ => return None,
        })
    }

    /// Bytes a bucket takes and bytes its probe loads, for a geometry code is compiled for (one of
    /// [`FIXED_PROBES`], whose buckets are all whole bytes): what a prefetch needs.
    const fn fixed_layout(self) -> Option<(usize, usize)> {
        let (slots, bits, semi_sorted) = match (self, self.fixed_shape()) {
            (Probe::SemiSorted13, _) => (semisort::SLOTS, 13, true),
            (_, Some((slots, bits))) => (slots, bits, false),
            (_, None) => return None,
        };
        let bucket_bits = Geometry { buckets: 0, slots, bits, semi_sorted }.bucket_bits();
        if bucket_bits.is_multiple_of(8) { Some((bucket_bits / 8, self.window_bytes())) } else { None }
    }

    /// Bytes a probe loads from the start of a bucket.
    const fn window_bytes(self) -> usize {
        match self {
            Probe::Slots8Bits12 | Probe::Slots8Bits16 | Probe::Word128(_) | Probe::Bytes128(..) => 16,
            Probe::SemiSorted128(_) => 16,
            _ => 8,
        }
    }

    /// The kind of code compiled for this geometry alone, or [`ANY_GEOMETRY`].
    fn kind(self) -> Kind {
        FIXED_PROBES.iter().position(|&fixed| fixed == self).map_or(ANY_GEOMETRY, |i| i as Kind + 1)
    }
}

/// The packed fingerprint table, over owned bytes (`Vec<u8>`, the default) or borrowed ones
/// (`&[u8]`, for zero-copy read-only views). `bytes` always holds the payload plus [`PADDING`].
#[derive(Clone)]
pub(crate) struct Table<S = Vec<u8>> {
    bytes: S,
    buckets: usize,
    slots: usize,
    bits: u32,
    /// Bits one bucket takes: `slots * bits`, or `4 bits - 4` when semi-sorted.
    bucket_bits: usize,
    probe: Probe,
    /// Bytes the buckets and their padding take: the least the storage holds.
    len: usize,
    /// Where an item's fingerprint and buckets are, for this table's bucket count: the buckets
    /// it gives are below `buckets`, which lets lookups load without per-load bounds checks.
    addressing: Addressing,
    /// [`contains_hash`](Self::contains_hash) compiled for this table's geometry alone (see
    /// `contains_as`), chosen from the table's [`kind`](Self::kind) when it is built.
    lookup: fn(&Table<S>, u64) -> bool,
    /// The kind of code compiled for this table's geometry alone (see [`Probe::kind`]).
    kind: Kind,
    /// Bytes a probe loads from the start of a bucket ([`Probe::window_bytes`]): what a prefetch
    /// covers. Kept here: matching on the probe at each prefetch would add a branchy match to
    /// every item of a batched insert.
    window_bytes: usize,
}

// By hand: the lookup function follows from the geometry (and a derived comparison of function
// pointers is unreliable).
impl<S: PartialEq> PartialEq for Table<S> {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes && self.geometry_fields() == other.geometry_fields()
    }
}
impl<S: Eq> Eq for Table<S> {}

/// A table's buffer of `bytes` bytes (payload and padding) could not be allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AllocFailed {
    pub(crate) bytes: usize,
}

impl Table {
    /// An empty table, or [`AllocFailed`] if its memory cannot be allocated (the process is never
    /// aborted). The caller has checked the geometry's `payload_len`.
    pub(crate) fn new(geometry: Geometry) -> Result<Self, AllocFailed> {
        Ok(Table::with_bytes(zeroed_buffer(Table::len_of(geometry))?, geometry))
    }

    /// Bytes of a table of this geometry: payload and padding. The caller has checked the
    /// geometry's `payload_len`.
    pub(crate) fn len_of(geometry: Geometry) -> usize {
        geometry.payload_len().expect("table size checked by the configuration") + PADDING
    }

    pub(crate) fn clear(&mut self) {
        self.bytes.fill(0);
    }

    fn choose_probe(Geometry { slots, bits, semi_sorted, .. }: Geometry) -> Probe {
        if semi_sorted {
            return match bits {
                13 => Probe::SemiSorted13,
                ..=16 => Probe::SemiSorted64(Lanes::new(semisort::SLOTS, bits)),
                _ => Probe::SemiSorted128(Lanes::new(semisort::SLOTS, bits)),
            };
        }
        let bucket_bits = slots as u32 * bits;
        // A bucket starts at a bit offset that is a multiple of gcd(bucket_bits, 8) within its
        // first byte, so the window must hold the bucket plus that worst-case shift.
        let worst_shift = 8 - gcd(bucket_bits, 8);
        let worst_shift = if worst_shift == 8 { 0 } else { worst_shift };
        // The hot geometries: the one whose shape this is (`fixed_shape` names each one's).
        if let Some(&fixed) = FIXED_PROBES.iter().find(|probe| probe.fixed_shape() == Some((slots, bits))) {
            return fixed;
        }
        // Buckets of whole bytes start on a byte: their windows need no shift.
        let bucket_bytes = bucket_bits.is_multiple_of(8).then_some(bucket_bits as usize / 8);
        if bucket_bits + worst_shift <= u64::BITS {
            let lanes = Lanes::new(slots, bits);
            bucket_bytes.map_or(Probe::Word64(lanes), |bytes| Probe::Bytes64(lanes, bytes))
        } else if bucket_bits + worst_shift <= u128::BITS {
            let lanes = Lanes::new(slots, bits);
            bucket_bytes.map_or(Probe::Word128(lanes), |bytes| Probe::Bytes128(lanes, bytes))
        } else {
            Probe::Slotwise
        }
    }
}

/// A write to one of an item's two buckets (an insert's first step, a removal), compiled for one
/// kind of geometry: `(table, fingerprint, b1, b2) -> whether it wrote`.
type BucketWrite<S> = fn(&mut Table<S>, u32, usize, usize) -> bool;

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
    fn set_as<const KIND: Kind>(&mut self, bucket: usize, slot: usize, fingerprint: u32) {
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
    /// in fills of large tables against the C++ reference's insert (`docs/bench/README.md`).
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
    pub(crate) fn store_hash_in_emptier(&mut self, hash: u64) -> Result<(), (u32, usize, usize)> {
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
    pub(crate) unsafe fn store_located_in_emptier<const KIND: Kind>(
        &mut self,
        located @ (fingerprint, b1, b2): (u32, usize, usize),
    ) -> Result<(), (u32, usize, usize)> {
        let stored = if KIND == ANY_GEOMETRY {
            // SAFETY: the caller's guarantee.
            unsafe { self.store_in_emptier_unchecked(fingerprint, b1, b2) }
        } else {
            // SAFETY: the caller's guarantees.
            unsafe { self.store_free_unchecked::<KIND>([b1, b2], fingerprint) }
        };
        if stored { Ok(()) } else { Err(located) }
    }

    /// The step every entry point shares: the code of the default geometry and of semi-sorted
    /// 13-bit buckets inline, the others' through [`STORES`](Self::STORES) (which check the
    /// buckets once more, off the inlined paths).
    ///
    /// Semi-sorted 13-bit inserts are inlined too: called through `STORES`, their one-by-one
    /// fills were clearly slower (`scripts/ab-fills`, `docs/bench/README.md`).
    ///
    /// # Safety
    /// `b1` and `b2` are below [`buckets`](Self::buckets).
    #[inline(always)]
    unsafe fn store_in_emptier_unchecked(&mut self, fingerprint: u32, b1: usize, b2: usize) -> bool {
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

    const STORES: [BucketWrite<S>; KINDS] = compiled_per_kind!(Self, store_in_emptier_as);

    /// [`store_in_emptier`](Self::store_in_emptier) compiled for one kind of geometry, the table's.
    #[inline(never)]
    fn store_in_emptier_as<const KIND: Kind>(&mut self, fingerprint: u32, b1: usize, b2: usize) -> bool {
        // One check of both buckets instead of one per load.
        assert!(b1.max(b2) < self.buckets, "a bucket outside the table");
        // SAFETY: both buckets were just checked; `KIND` is the table's (`STORES` is indexed by
        // the table's kind).
        unsafe { self.store_free_unchecked::<KIND>([b1, b2], fingerprint) }
    }

    /// Stores `fingerprint` in a free slot of the emptier of `buckets`, if either has one: an
    /// insert's first step, compiled for `KIND`. The slot is free, so in a plain geometry that
    /// code is compiled for, its bits are set in the window the probe loaded, from the same
    /// offset, without a mask and without a second bounds check: less than half the
    /// instructions of a masked store in the default geometry.
    ///
    /// # Safety
    /// Both buckets are below [`buckets`](Self::buckets), and `KIND` is [`ANY_GEOMETRY`] or the
    /// table's [`kind`](Self::kind).
    #[inline(always)]
    unsafe fn store_free_unchecked<const KIND: Kind>(
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

    const REMOVES: [BucketWrite<S>; KINDS] = compiled_per_kind!(Self, remove_from_either_as);

    /// [`remove_from_either`](Self::remove_from_either) compiled for one kind of geometry.
    #[inline(never)]
    fn remove_from_either_as<const KIND: Kind>(&mut self, fingerprint: u32, b1: usize, b2: usize) -> bool {
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
    fn set_semi_sorted<W: Word>(&mut self, bucket: usize, slot: usize, fingerprint: u32, bits: u32) {
        let stored = self.semi_sorted_bucket::<W>(Checked(&self.bytes), bucket, bits);
        let updated = semisort::with_slot_set(stored, bits, slot, fingerprint);
        let bucket_bits = semisort::bucket_bits(bits);
        self.write_bits(bucket * bucket_bits, bucket_bits as u32, updated);
    }

    /// Overwrites the `width` bits starting at bit `bit` with `value` (which has no bits above
    /// `width`), through a window `W` that holds them with their shift within the first byte.
    #[inline(always)]
    fn write_bits<W: Word>(&mut self, bit: usize, width: u32, value: W) {
        let (offset, shift) = (bit / 8, (bit % 8) as u32);
        let mask = W::from_u128((1u128 << width) - 1) << shift;
        self.bytes.store_bits(offset, value << shift, mask);
    }
}

impl<S> Table<S> {
    /// The storage.
    pub(crate) fn storage(&self) -> &S {
        &self.bytes
    }

    /// Where items are in this table: their fingerprints and two buckets.
    pub(crate) fn addressing(&self) -> &Addressing {
        &self.addressing
    }

    /// The fields a table's geometry sets (everything but the bytes).
    fn geometry_fields(&self) -> (usize, usize, u32, usize, Probe, usize, Addressing) {
        (self.buckets, self.slots, self.bits, self.bucket_bits, self.probe, self.len, self.addressing)
    }

    /// The same geometry over other storage holding the same bytes.
    pub(crate) fn with_storage<T: Storage>(&self, bytes: T) -> Table<T> {
        let (buckets, slots, bits, bucket_bits, probe) =
            (self.buckets, self.slots, self.bits, self.bucket_bits, self.probe);
        let (len, addressing, kind) = (self.len, self.addressing, self.kind);
        let lookup = Table::<T>::LOOKUPS[kind as usize];
        let window_bytes = self.window_bytes;
        Table { bytes, buckets, slots, bits, bucket_bits, probe, len, addressing, lookup, kind, window_bytes }
    }

    /// The same table over a reference to its storage (for writes through a shared reference).
    pub(crate) fn by_ref<'a>(&'a self) -> Table<&'a S>
    where
        &'a S: Storage,
    {
        self.with_storage(&self.bytes)
    }
}

impl<S: Storage> Table<S> {
    pub(crate) fn with_bytes(bytes: S, geometry: Geometry) -> Self {
        let Geometry { buckets, slots, bits, .. } = geometry;
        let (bucket_bits, probe) = (geometry.bucket_bits(), Table::<Vec<u8>>::choose_probe(geometry));
        let (len, addressing) = (Table::len_of(geometry), Addressing::new(buckets, bits));
        let kind = probe.kind();
        let (lookup, window_bytes) = (Self::LOOKUPS[kind as usize], probe.window_bytes());
        Table { bytes, buckets, slots, bits, bucket_bits, probe, len, addressing, lookup, kind, window_bytes }
    }
}

impl<S: AsRef<[u8]>> Table<S> {
    /// A table over existing bytes (payload plus [`PADDING`]); `None` if the length does not match
    /// the geometry.
    pub(crate) fn from_bytes(bytes: S, geometry: Geometry) -> Option<Self> {
        let expected = geometry.payload_len()? + PADDING;
        (bytes.as_ref().len() == expected).then(|| Table::with_bytes(bytes, geometry))
    }

    /// An owned copy of the table (a view's bytes copied into a filter that can change them), or
    /// [`AllocFailed`] if its memory cannot be allocated.
    pub(crate) fn try_to_owned(&self) -> Result<Table, AllocFailed> {
        let mut bytes = reserve_buffer(self.bytes.as_ref().len())?;
        bytes.extend_from_slice(self.bytes.as_ref());
        Ok(self.with_storage(bytes))
    }

    /// The packed buckets, without padding: the table's persistent content.
    pub(crate) fn payload(&self) -> &[u8] {
        let bytes = self.bytes.as_ref();
        &bytes[..bytes.len() - PADDING]
    }
}

impl<S: Storage> Table<S> {
    /// The whole buffer, padding included (what the table costs in memory).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.bytes.memory_bytes()
    }

    /// The table's shape.
    pub(crate) fn geometry(&self) -> Geometry {
        let (buckets, slots, bits) = (self.buckets, self.slots, self.bits);
        Geometry { buckets, slots, bits, semi_sorted: self.is_semi_sorted() }
    }

    /// Bits of the payload the buckets use; the rest of its last byte must be zero.
    pub(crate) fn used_bits(&self) -> usize {
        self.buckets * self.bucket_bits
    }

    /// The first bucket whose bytes are not a valid encoding (only semi-sorted buckets have
    /// invalid encodings: a code for the sorted nibbles beyond the 3876 that exist). Lookups treat
    /// such a bucket's low nibbles as zero, harmlessly; readers of untrusted bytes reject it.
    pub(crate) fn first_invalid_bucket(&self) -> Option<usize> {
        if !self.is_semi_sorted() {
            return None;
        }
        (0..self.buckets).find(|&bucket| {
            let bit = bucket * self.bucket_bits;
            !semisort::is_valid(self.bytes.load::<u128>(bit / 8) >> (bit % 8) as u32)
        })
    }

    fn is_semi_sorted(&self) -> bool {
        matches!(self.probe, Probe::SemiSorted13 | Probe::SemiSorted64(_) | Probe::SemiSorted128(_))
    }

    /// A semi-sorted bucket's stored bits at the bottom of a word `W` (other bits above): `u64`
    /// holds a bucket of up to 16-bit fingerprints (60 bits) with its shift of 0 or 4 bits.
    #[inline(always)]
    fn semi_sorted_bucket<W: Word>(&self, loads: impl Loads, bucket: usize, bits: u32) -> W {
        let bit = bucket * semisort::bucket_bits(bits);
        loads.load::<W>(bit / 8) >> (bit % 8) as u32
    }

    /// The four fingerprints of a semi-sorted bucket, in their sorted order.
    #[inline(always)]
    fn decoded(&self, bucket: usize) -> [u32; semisort::SLOTS] {
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
    fn semi_sorted_fingerprints<W: Word>(&self, bucket: usize, bits: u32) -> [u32; semisort::SLOTS] {
        semisort::fingerprints(self.semi_sorted_bucket::<W>(Checked(&self.bytes), bucket, bits), bits)
    }

    pub(crate) fn buckets(&self) -> usize {
        self.buckets
    }

    pub(crate) fn slots(&self) -> usize {
        self.slots
    }

    pub(crate) fn bits(&self) -> u32 {
        self.bits
    }

    #[inline(always)]
    fn slot_bit(&self, bucket: usize, slot: usize) -> usize {
        (bucket * self.slots + slot) * self.bits as usize
    }

    #[inline(always)]
    fn slot_mask(&self) -> u64 {
        (1u64 << self.bits) - 1
    }

    /// The probe of the geometry `KIND` names (a constant the code folds), or the table's own for
    /// [`ANY_GEOMETRY`]. `KIND` must be one of the two.
    #[inline(always)]
    fn probe_for<const KIND: Kind>(&self) -> Probe {
        debug_assert!(KIND == ANY_GEOMETRY || KIND == self.kind());
        if KIND == ANY_GEOMETRY { self.probe } else { FIXED_PROBES[KIND as usize - 1] }
    }

    /// The first bit and the width of a plain slot under `probe`: the probe's constant shape if
    /// it has one, else the table's.
    #[inline(always)]
    fn plain_slot_place(&self, probe: Probe, bucket: usize, slot: usize) -> (usize, u32) {
        let (slots, bits) = probe.fixed_shape().unwrap_or((self.slots, self.bits));
        ((bucket * slots + slot) * bits as usize, bits)
    }

    /// The fingerprint in a slot (0 if empty). The default geometry's code is inline (its
    /// offsets and masks as constants): the path search's moves read and write slots one by one.
    #[inline]
    pub(crate) fn get(&self, bucket: usize, slot: usize) -> u32 {
        default_kind_or_any!(self.kind, KIND => self.get_as::<KIND>(bucket, slot))
    }

    /// [`get`](Self::get) compiled for the geometry of `KIND` (see [`probe_with`](Self::probe_with)).
    #[inline(always)]
    fn get_as<const KIND: Kind>(&self, bucket: usize, slot: usize) -> u32 {
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
    fn plain_slot_at(&self, bit: usize, bits: u32) -> u32 {
        let window = self.bytes.load::<u64>(bit / 8);
        ((window >> (bit % 8)) & ((1 << bits) - 1)) as u32
    }

    /// A bucket's fingerprints in slot order (0 for an empty slot), as its geometry's matcher
    /// lists them ([`Matcher::fingerprints`], what the path search reads): for inspection.
    pub(crate) fn fingerprints(&self, bucket: usize) -> impl Iterator<Item = u32> {
        let (slots, fingerprints) = self.probe(ListFingerprints(bucket));
        fingerprints.into_iter().take(slots)
    }

    /// The bucket's lanes, shifted down so that lane 0 starts at bit 0 (bits above are garbage).
    #[inline(always)]
    fn window<W: Word>(&self, loads: impl Loads, bucket: usize) -> W {
        let bit = self.slot_bit(bucket, 0);
        loads.load::<W>(bit / 8) >> (bit % 8) as u32
    }

    /// The window of a bucket that starts on a byte, for a geometry known at compile time.
    #[inline(always)]
    fn byte_window<W: Word>(&self, loads: impl Loads, bucket: usize, bucket_bytes: usize) -> W {
        loads.load::<W>(bucket * bucket_bytes)
    }

    /// Runs a bucket operation with the word type, lane masks and window loader of this table's
    /// geometry; every load is bounds-checked.
    #[inline(always)]
    pub(crate) fn probe<Op: BucketOp>(&self, op: Op) -> Op::Output {
        self.probe_as::<ANY_GEOMETRY, Op>(op)
    }

    /// [`probe`](Self::probe) compiled for the geometry of `KIND`, which must be [`ANY_GEOMETRY`]
    /// or the table's [`kind`](Self::kind) (another geometry's code would read other offsets,
    /// bounds-checked). For an operation that calls other code compiled for `KIND`, such as
    /// [`prefetch_as`](Self::prefetch_as).
    #[inline(always)]
    pub(crate) fn probe_as<const KIND: Kind, Op: BucketOp>(&self, op: Op) -> Op::Output {
        self.probe_with::<KIND, Op>(op, Checked(&self.bytes))
    }

    /// [`probe`](Self::probe) for an operation that only visits buckets of this table, with its
    /// loads checked once, here, instead of one by one: a lookup of the two buckets that
    /// [`addressing`](Self::addressing) gives an item. The check is made before the geometry's
    /// dispatch, where it costs least (checked in the geometry's code, the lookup was as slow as
    /// with every load checked). `KIND` is the geometry this code is compiled for (see
    /// [`probe_with`](Self::probe_with)).
    ///
    /// # Safety
    /// Every bucket `op` visits is below [`buckets`](Self::buckets), and `KIND` is
    /// [`ANY_GEOMETRY`] or the table's [`kind`](Self::kind) (another geometry's code would
    /// compute other offsets).
    #[inline(always)]
    unsafe fn probe_in_range<const KIND: Kind, Op: BucketOp>(&self, op: Op) -> Op::Output {
        let region = self.bytes.region();
        // Every storage a table is built over holds `len` bytes (`from_bytes`, `new`); checked
        // again because the region is taken anew: a storage's `AsRef` could change its answer.
        // Storage that keeps its length skips the check, which every concurrent lookup would pay.
        if S::KEEPS_ITS_LENGTH {
            debug_assert!(region.len() >= self.len);
        } else {
            assert!(region.len() >= self.len, "a table's storage shrank");
        }
        self.probe_with::<KIND, Op>(op, InRange(region))
    }

    /// The kind of code compiled for this table's geometry alone, or [`ANY_GEOMETRY`].
    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }

    /// Runs a bucket operation with the word type, lane masks and window loader of this table's
    /// geometry, its windows loaded by `loads`. This is the one place that knows how each
    /// geometry is probed. Compiled for [`ANY_GEOMETRY`], it dispatches on the table's geometry;
    /// compiled for one `KIND` (which must be the table's), only that geometry's arm remains.
    #[inline(always)]
    fn probe_with<const KIND: Kind, Op: BucketOp>(&self, op: Op, loads: impl Loads) -> Op::Output {
        let probe = self.probe_for::<KIND>();
        // Constant arguments: the masks and offsets fold into the code of each arm.
        match &probe {
            Probe::Slots2Bits8 => {
                op.on_words(&Windowed::new(Lanes::new(2, 8), |b| self.byte_window::<u64>(loads, b, 2)))
            }
            Probe::Slots2Bits12 => {
                op.on_words(&Windowed::new(Lanes::new(2, 12), |b| self.byte_window::<u64>(loads, b, 3)))
            }
            Probe::Slots2Bits16 => {
                op.on_words(&Windowed::new(Lanes::new(2, 16), |b| self.byte_window::<u64>(loads, b, 4)))
            }
            Probe::Slots4Bits8 => {
                op.on_words(&Windowed::new(Lanes::new(4, 8), |b| self.byte_window::<u64>(loads, b, 4)))
            }
            Probe::Slots4Bits12 => {
                op.on_words(&Windowed::new(Lanes::new(4, 12), |b| self.byte_window::<u64>(loads, b, 6)))
            }
            Probe::Slots4Bits16 => {
                op.on_words(&Windowed::new(Lanes::new(4, 16), |b| self.byte_window::<u64>(loads, b, 8)))
            }
            Probe::Slots8Bits8 => {
                op.on_words(&Windowed::new(Lanes::new(8, 8), |b| self.byte_window::<u64>(loads, b, 8)))
            }
            Probe::Slots8Bits12 => {
                op.on_words(&Windowed::new(Lanes::new(8, 12), |b| self.byte_window::<u128>(loads, b, 12)))
            }
            Probe::Slots8Bits16 => {
                op.on_words(&Windowed::new(Lanes::new(8, 16), |b| self.byte_window::<u128>(loads, b, 16)))
            }
            Probe::SemiSorted13 => {
                op.on_sorted_words(&semisort::Sorted13::new(|b| self.byte_window::<u64>(loads, b, 6)))
            }
            Probe::SemiSorted64(lanes) => op.on_sorted_words(&Windowed::new(*lanes, |b| {
                semisort::decode_lanes(self.semi_sorted_bucket::<u64>(loads, b, self.bits), self.bits)
            })),
            Probe::SemiSorted128(lanes) => op.on_sorted_words(&Windowed::new(*lanes, |b| {
                semisort::decode_lanes(self.semi_sorted_bucket::<u128>(loads, b, self.bits), self.bits)
            })),
            Probe::Word64(lanes) => op.on_words(&Windowed::new(*lanes, |b| self.window::<u64>(loads, b))),
            Probe::Word128(lanes) => op.on_words(&Windowed::new(*lanes, |b| self.window::<u128>(loads, b))),
            Probe::Bytes64(lanes, bytes) => {
                op.on_words(&Windowed::new(*lanes, |b| self.byte_window::<u64>(loads, b, *bytes)))
            }
            Probe::Bytes128(lanes, bytes) => {
                op.on_words(&Windowed::new(*lanes, |b| self.byte_window::<u128>(loads, b, *bytes)))
            }
            Probe::Slotwise => op.on_slots(self.slots, |b, slot| self.get(b, slot)),
        }
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
            // SAFETY: SSE is part of the x86_64 baseline, and a prefetch is only a hint: it never
            // faults and never reads into the program, whatever the address.
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T1 }>(address.cast())
            };
            #[cfg(any(not(target_arch = "x86_64"), miri))]
            let _ = address;
        }
    }

    /// Whether either of the two buckets that `locate` computes (from values the caller holds)
    /// holds its fingerprint: the lookup of every filter. Both buckets are loaded
    /// unconditionally, so their cache misses overlap. The geometry is dispatched *before*
    /// locating: the jump then does not wait for the hash, and nothing computed before it has to
    /// survive it in memory.
    #[inline(always)]
    pub(crate) fn contains_located(&self, locate: impl Fn() -> (u32, usize, usize)) -> bool {
        self.probe(ContainsLocated { locate })
    }

    /// Whether an item with this hash may be in the table: [`contains_located`](Self::contains_located)
    /// at the item's place by the table's own [`addressing`](Self::addressing), with the loads
    /// checked once per lookup rather than at every load, which one-by-one lookups feel, in a
    /// function compiled for the table's geometry alone (`contains_as`): the code of every
    /// geometry inlined together is markedly longer, in a loop and out of line alike
    /// (`docs/bench/lookup-loads.md`).
    ///
    /// For the default geometry the lookup is inlined instead, behind one predictable branch: no
    /// call, return or argument moves, which brought `contains_hash` clearly closer to the C++
    /// reference kernel on large tables (`lookup_kernels`, `docs/bench/README.md`); the other
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
    const LOOKUPS: [fn(&Table<S>, u64) -> bool; KINDS] = compiled_per_kind!(Self, contains_as);

    /// [`contains_hash`](Self::contains_hash) compiled for one kind of geometry, the table's.
    /// Out of line and called through the table's pointer to it, so that every caller runs the
    /// same small function: the lookup of every geometry, inlined into a large caller or called
    /// out of line, saved six registers and dispatched, which slowed lookups from threads
    /// markedly (the `threads` harness). Only the default geometry's is also inlined, alone.
    #[inline(never)]
    fn contains_as<const KIND: Kind>(&self, hash: u64) -> bool {
        // SAFETY: `KIND` is the table's: its constructors took this function from `LOOKUPS` at
        // the table's kind.
        unsafe { self.contains_in::<KIND>(hash) }
    }

    /// The body of [`contains_as`](Self::contains_as), inlined where it is used.
    ///
    /// # Safety
    /// `KIND` is [`ANY_GEOMETRY`] or the table's [`kind`](Self::kind).
    #[inline(always)]
    unsafe fn contains_in<const KIND: Kind>(&self, hash: u64) -> bool {
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
    /// ([`in_blocks`]): the items are hashed and located a block at a time
    /// ([`block_locator`](crate::batch::block_locator)) and their buckets prefetched a block before
    /// they are probed: [`LOOKAHEAD`] items, or [`FAR_LOOKAHEAD`] in a large table
    /// ([`looks_far_ahead`](Self::looks_far_ahead)). The geometry is dispatched once for the whole
    /// run, so the loop's body is the bare kernel, and loads are checked once for the whole run,
    /// as [`contains_hash`](Self::contains_hash)'s are once per lookup. The default geometry's
    /// run is compiled for it alone, as its lookup is: its prefetches then compute a bucket's
    /// address with an `lea` instead of a multiplication by the width the table holds, a
    /// saving on every item of the run (`compare`'s batched row; `docs/bench/README.md`).
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
    unsafe fn contains_pipelined_as<const KIND: Kind, const N: usize, T>(
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

    /// How many slots hold `fingerprint` (pass 0 to count empty slots).
    #[inline]
    pub(crate) fn count(&self, bucket: usize, fingerprint: u32) -> usize {
        self.probe(Count { bucket, fingerprint })
    }

    /// The copies of a located fingerprint in its two buckets (never the same bucket: see
    /// `Addressing::alternate`).
    #[inline]
    pub(crate) fn count_located(&self, (fingerprint, b1, b2): (u32, usize, usize)) -> usize {
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

/// How a probe loads its windows: [`Checked`] each load, or [`InRange`] of a region checked once.
trait Loads: Copy {
    fn load<W: Word>(self, offset: usize) -> W;
}

/// Loads checked one by one, from any storage, for any bucket.
struct Checked<'a, S>(&'a S);

// By hand: derived, these would ask `S: Copy` of the storage behind the reference.
impl<S> Clone for Checked<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S> Copy for Checked<'_, S> {}

impl<S: Storage> Loads for Checked<'_, S> {
    #[inline(always)]
    fn load<W: Word>(self, offset: usize) -> W {
        self.0.load(offset)
    }
}

/// Loads without a check, from a region at least as long as the table. Only
/// [`Table::probe_in_range`] makes one, for an operation that visits buckets of the table only:
/// every window of such a bucket, padding included, lies in the table's length.
#[derive(Clone, Copy)]
struct InRange<R>(R);

impl<R: Region> Loads for InRange<R> {
    #[inline(always)]
    fn load<W: Word>(self, offset: usize) -> W {
        // SAFETY: `probe_in_range` made this from a region of at least the table's length and
        // runs an op that visits buckets below the table's count only. A window of such a bucket
        // starts before the end of the buckets' bytes and reads at most 16 bytes, which the
        // padding (`PADDING`) holds.
        unsafe { self.0.load_unchecked(offset) }
    }
}

/// An operation on buckets, written once for every geometry: [`Table::probe`] supplies the
/// table's [`Matcher`] (or slot access when a bucket fits no word), and the operation's code is
/// compiled for each geometry's matcher.
pub(crate) trait BucketOp {
    type Output;
    fn on_words<M: Matcher>(self, matcher: &M) -> Self::Output;
    /// As [`on_words`](Self::on_words), for semi-sorted buckets: a write to one of them re-encodes
    /// the whole bucket, which only a reader between threads needs to know.
    #[inline(always)]
    fn on_sorted_words<M: Matcher>(self, matcher: &M) -> Self::Output
    where
        Self: Sized,
    {
        self.on_words(matcher)
    }
    /// As [`on_words`](Self::on_words), for buckets that fit no word, read slot by slot with
    /// `get(bucket, slot)`: by default through a matcher that does just that.
    #[inline(always)]
    fn on_slots(self, slots: usize, get: impl Fn(usize, usize) -> u32) -> Self::Output
    where
        Self: Sized,
    {
        self.on_words(&Slotwise::new(slots, get))
    }
}

/// A bucket's fingerprints as its geometry's matcher lists them: the slot count, and the
/// fingerprints (0 past the last slot).
struct ListFingerprints(usize);

impl BucketOp for ListFingerprints {
    type Output = (usize, [u32; MAX_LANES]);
    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) -> Self::Output {
        (matcher.slots(), matcher.fingerprints(self.0))
    }
}

struct Find {
    bucket: usize,
    fingerprint: u32,
}

impl BucketOp for Find {
    type Output = Option<usize>;
    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) -> Option<usize> {
        matcher.slot(matcher.matches(self.bucket, self.fingerprint))
    }
}

/// The first slot holding `fingerprint` in bucket `b1`, or else in `b2`, as `(bucket, slot)`.
struct FindEither {
    buckets: [usize; 2],
    fingerprint: u32,
}

impl BucketOp for FindEither {
    type Output = Option<(usize, usize)>;
    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) -> Option<(usize, usize)> {
        let [b1, b2] = self.buckets;
        let (found1, found2) = (matcher.matches(b1, self.fingerprint), matcher.matches(b2, self.fingerprint));
        // Which bucket holds the copy is a coin flip.
        let (bucket, flags) = pick::<M>(found1 == M::Word::ZERO, (b1, found1), (b2, found2));
        matcher.slot(flags).map(|slot| (bucket, slot))
    }
}

struct Count {
    bucket: usize,
    fingerprint: u32,
}

impl BucketOp for Count {
    type Output = usize;
    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) -> usize {
        matcher.count(matcher.matches(self.bucket, self.fingerprint)) as usize
    }
}

struct FreeSlotInEmptier {
    buckets: [usize; 2],
}

/// Where [`FreeSlotInEmptier`] found a free slot.
struct FreeSlot {
    bucket: usize,
    slot: usize,
    /// The bit of the flag that names `slot` in the matcher's flags: in a plain bucket, whose
    /// flags are lanes' top bits, where the slot's lane ends (an insert writes from there without
    /// dividing by the lane width, which a division would add to every insert).
    flag_bit: u32,
}

/// `second` if `pick_second`, else `first`: a bucket and its flags, picked on a coin flip (which
/// of two buckets is emptier, or holds a copy). By conditional moves
/// (`std::hint::select_unpredictable`: a plain branch-free expression was turned back into a
/// branch where the step was inlined), unless the matcher's work after the pick is long enough
/// that speculating past a branch pays (`Matcher::CHOOSES_BY_BRANCH`).
#[inline(always)]
fn pick<M: Matcher>(
    pick_second: bool,
    first: (usize, M::Word),
    second: (usize, M::Word),
) -> (usize, M::Word) {
    if M::CHOOSES_BY_BRANCH {
        if pick_second { second } else { first }
    } else {
        (
            std::hint::select_unpredictable(pick_second, second.0, first.0),
            std::hint::select_unpredictable(pick_second, second.1, first.1),
        )
    }
}

impl BucketOp for FreeSlotInEmptier {
    type Output = Option<FreeSlot>;
    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) -> Option<FreeSlot> {
        let [b1, b2] = self.buckets;
        let (free1, free2) = matcher.free_in_both(b1, b2);
        let (bucket, flags) = pick::<M>(matcher.more_free(free2, free1), (b1, free1), (b2, free2));
        matcher.slot(flags).map(|slot| FreeSlot { bucket, slot, flag_bit: flags.trailing_zeros() })
    }
}

struct ContainsEither {
    buckets: [usize; 2],
    fingerprint: u32,
}

impl BucketOp for ContainsEither {
    type Output = bool;
    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) -> bool {
        let [b1, b2] = self.buckets;
        matcher.either_matches(b1, b2, self.fingerprint)
    }
    // Inlined down to scalars, so that lookups of the other geometries do not first store this
    // op for the slot-by-slot arm.
    #[inline(always)]
    fn on_slots(self, slots: usize, get: impl Fn(usize, usize) -> u32) -> bool {
        self.buckets.iter().any(|&bucket| (0..slots).any(|slot| get(bucket, slot) == self.fingerprint))
    }
}

struct ContainsLocated<L> {
    locate: L,
}

impl<L: Fn() -> (u32, usize, usize)> BucketOp for ContainsLocated<L> {
    type Output = bool;
    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) -> bool {
        let (fingerprint, b1, b2) = (self.locate)();
        ContainsEither { buckets: [b1, b2], fingerprint }.on_words(matcher)
    }
    #[inline(always)]
    fn on_slots(self, slots: usize, get: impl Fn(usize, usize) -> u32) -> bool {
        let (fingerprint, b1, b2) = (self.locate)();
        ContainsEither { buckets: [b1, b2], fingerprint }.on_slots(slots, get)
    }
}

/// [`Table::contains_pipelined`]'s operation: `found[i]` for `items[i]`, located a block at a
/// time by `locate`, prefetched by `prefetch`.
struct ContainsPipelined<'a, T, L, P, const N: usize> {
    items: &'a [T],
    locate: L,
    prefetch: P,
    found: &'a mut [bool],
}

impl<T, L, P, const N: usize> BucketOp for ContainsPipelined<'_, T, L, P, N>
where
    L: Fn(&[T], &mut LocatedBlock<N>),
    P: Fn(Located),
{
    type Output = ();
    #[inline(always)]
    fn on_words<M: Matcher>(self, matcher: &M) {
        let ContainsPipelined { items, locate, prefetch, found } = self;
        answer_in_blocks(items, found, locate, prefetch, |(fingerprint, b1, b2)| {
            ContainsEither { buckets: [b1, b2], fingerprint }.on_words(matcher)
        });
    }
    fn on_slots(self, slots: usize, get: impl Fn(usize, usize) -> u32) {
        let mut block = LocatedBlock::default();
        for (answers, items) in self.found.chunks_mut(N).zip(self.items.chunks(N)) {
            (self.locate)(items, &mut block);
            for (i, answer) in answers.iter_mut().enumerate() {
                let (fingerprint, b1, b2) = block.get(i);
                *answer = ContainsEither { buckets: [b1, b2], fingerprint }.on_slots(slots, &get);
            }
        }
    }
}

/// Tables at least this large ask the kernel for transparent huge pages.
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;
const HUGE_PAGE: usize = 2 << 20;

/// Element types whose all-zero bytes are a valid value, for [`zeroed_buffer`].
///
/// # Safety
///
/// An implementor must be valid (and mean "zero") when all its bytes are zero.
pub(crate) unsafe trait ZeroIsValid {}

// SAFETY: every bit pattern is a `u8`.
unsafe impl ZeroIsValid for u8 {}

// SAFETY: `AtomicU64` has the size, alignment and bit validity of `u64` (its documentation
// guarantees the in-memory representation), so zero bytes are the atomic holding 0. (Loom's
// atomics are not plain words: the shared table copies zeros in under loom instead.)
#[cfg(not(loom))]
unsafe impl ZeroIsValid for std::sync::atomic::AtomicU64 {}

/// A zero-filled buffer of `len` elements, or [`AllocFailed`] if the allocator refuses it; large
/// ones are advised to use huge pages (fewer TLB misses on the random accesses every lookup makes).
///
/// The memory comes zeroed from the allocator (`calloc`: fresh pages from the kernel are not
/// written), so the pages are faulted in on first use, after the advice, as huge pages where the
/// kernel allows, and by the thread that first writes them. `vec![0; len]` would do the same but
/// abort the process on failure, and `try_reserve` then `resize` would write every page up front.
pub(crate) fn zeroed_buffer<T: ZeroIsValid>(len: usize) -> Result<Vec<T>, AllocFailed> {
    let failed = AllocFailed { bytes: len.saturating_mul(std::mem::size_of::<T>()) };
    let layout = std::alloc::Layout::array::<T>(len).map_err(|_| failed)?;
    if layout.size() == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the layout's size is not zero (checked above).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(failed);
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout of `[T; len]`, the
    // layout a `Vec<T>` of capacity `len` deallocates with; its `len` elements are initialised
    // (all-zero bytes, a valid `T` by `ZeroIsValid`); the Vec takes sole ownership of the
    // allocation.
    let buffer = unsafe { Vec::from_raw_parts(ptr.cast::<T>(), len, len) };
    advise_huge_pages(buffer.as_ptr().cast(), layout.size());
    Ok(buffer)
}

/// An empty buffer with room for a table of `len` bytes (payload and padding), advised like
/// [`zeroed_buffer`]'s before anything is written to it: for readers that fill a table from a
/// file, and for copies of a table. [`AllocFailed`] if the allocator refuses it.
pub(crate) fn reserve_buffer(len: usize) -> Result<Vec<u8>, AllocFailed> {
    let mut buffer = Vec::new();
    buffer.try_reserve_exact(len).map_err(|_| AllocFailed { bytes: len })?;
    advise_huge_pages(buffer.as_ptr(), buffer.capacity());
    Ok(buffer)
}

/// Advises huge pages for the whole 2 MiB pages inside the `len` bytes of an allocation starting
/// at `start`, if they are at least [`HUGE_PAGE_THRESHOLD`] bytes.
#[cfg(all(target_os = "linux", not(miri)))]
fn advise_huge_pages(start: *const u8, len: usize) {
    if len < HUGE_PAGE_THRESHOLD {
        return;
    }
    let aligned = (start as usize).next_multiple_of(HUGE_PAGE);
    let end = (start as usize + len) / HUGE_PAGE * HUGE_PAGE;
    if end > aligned {
        // SAFETY: [aligned, end) lies inside the allocation of `len` bytes at `start`; MADV_HUGEPAGE
        // only changes how the kernel backs those pages, never their contents or validity. Failure
        // is harmless.
        unsafe {
            libc::madvise(aligned as *mut libc::c_void, end - aligned, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(any(not(target_os = "linux"), miri))]
fn advise_huge_pages(_start: *const u8, _len: usize) {}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // `contains_hash` loads without per-load checks; it must answer as the checked lookup
        // does, in every geometry (each probe arm), semi-sorted or not, at every bucket count.
        #[test]
        fn lookups_checked_once_answer_as_checked_ones(
            (slots, semi_sorted) in prop::sample::select(vec![(2usize, false), (4, false), (8, false), (4, true)]),
            bits in 4u32..=32,
            buckets in 1usize..40,
            writes in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<u32>()), 0..100),
            hashes in proptest::collection::vec(any::<u64>(), 1..50),
        ) {
            let mut table = Table::new(Geometry { buckets, slots, bits, semi_sorted }).unwrap();
            let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
            for (b, s, v) in writes {
                table.set(b % buckets, s % slots, v & mask);
            }
            for hash in hashes {
                let located = table.addressing().locate(hash);
                prop_assert_eq!(table.contains_hash(hash), table.contains_located(|| located));
                // Stored where a lookup looks, it is found.
                let (fingerprint, b1, _) = located;
                table.set(b1, 0, fingerprint);
                prop_assert!(table.contains_hash(hash));
            }
        }
    }

    /// [`ListFingerprints`] (`Matcher::fingerprints`, what the path search reads), checked to
    /// list `slots` slots in `get`'s order with zeros after them.
    fn listed_as_get(table: &Table, bucket: usize) -> bool {
        let (slots, listed) = table.probe(ListFingerprints(bucket));
        let expected: Vec<u32> =
            (0..MAX_LANES).map(|slot| if slot < slots { table.get(bucket, slot) } else { 0 }).collect();
        slots == table.slots() && listed[..] == expected[..]
    }

    /// The layouts that writes compiled per geometry run on (plain buckets of 2, 4 or 8 slots,
    /// semi-sorted ones), at widths whose slots fall on and across byte and word boundaries, in
    /// small tables.
    fn small_geometries() -> impl Strategy<Value = Geometry> {
        (
            prop::sample::select(vec![(2usize, false), (4, false), (8, false), (4, true)]),
            prop::sample::select(vec![4u32, 8, 12, 13, 16, 20, 32]),
            1usize..20,
        )
            .prop_map(|((slots, semi_sorted), bits, buckets)| Geometry {
                buckets,
                slots,
                bits,
                semi_sorted,
            })
    }

    /// Triples of raw numbers (a bucket, a slot or a second bucket, a fingerprint) that a test
    /// reduces into its geometry.
    fn triples(count: std::ops::Range<usize>) -> impl Strategy<Value = Vec<(usize, usize, u32)>> {
        proptest::collection::vec((any::<usize>(), any::<usize>(), any::<u32>()), count)
    }

    /// `raw` as a fingerprint of `geometry`: its low bits, never 0.
    fn fingerprint_of(geometry: Geometry, raw: u32) -> u32 {
        (raw & (u32::MAX >> (32 - geometry.bits))).max(1)
    }

    proptest! {
        // `store_in_emptier` runs each geometry's own code; it must store exactly where the
        // generic probe and `set` would, and leave a table with both buckets full unchanged.
        #[test]
        fn the_insert_first_step_stores_where_the_generic_probe_and_set_would(
            geometry in small_geometries(),
            items in triples(1..120),
        ) {
            let (mut fast, mut generic) = (Table::new(geometry).unwrap(), Table::new(geometry).unwrap());
            let buckets = geometry.buckets;
            for (b1, b2, fingerprint) in items {
                let (b1, b2, fingerprint) = (b1 % buckets, b2 % buckets, fingerprint_of(geometry, fingerprint));
                let free = generic.free_slot_in_emptier(b1, b2);
                if let Some((bucket, slot)) = free {
                    generic.set(bucket, slot, fingerprint);
                }
                prop_assert_eq!(fast.store_in_emptier(fingerprint, b1, b2), free.is_some());
                prop_assert!(fast == generic, "{:?} after storing {} in {}/{}", geometry, fingerprint, b1, b2);
            }
        }

        // `store_hash_in_emptier` locates by the table's addressing and, for the default geometry,
        // stores without checking the buckets again: it must store exactly where the checked
        // first step would at the located place, and give that place back when both are full.
        #[test]
        fn an_insert_by_hash_stores_where_the_checked_first_step_would(
            geometry in small_geometries(),
            hashes in proptest::collection::vec(any::<u64>(), 1..120),
        ) {
            let default = Geometry { slots: 4, bits: 12, semi_sorted: false, ..geometry };
            for geometry in [geometry, default] {
                let (mut fast, mut checked) = (Table::new(geometry).unwrap(), Table::new(geometry).unwrap());
                for &hash in &hashes {
                    let located @ (fingerprint, b1, b2) = checked.addressing().locate(hash);
                    let stored = checked.store_in_emptier(fingerprint, b1, b2);
                    prop_assert_eq!(fast.store_hash_in_emptier(hash), if stored { Ok(()) } else { Err(located) });
                    prop_assert!(fast == checked, "{:?} after storing hash {:#x}", geometry, hash);
                }
            }
        }

        // `set_if_empty` stores exactly when `get` finds the slot empty, as `set` would.
        #[test]
        fn a_store_into_an_empty_slot_is_get_then_set(
            geometry in small_geometries(),
            writes in triples(1..120),
        ) {
            let (mut fast, mut generic) = (Table::new(geometry).unwrap(), Table::new(geometry).unwrap());
            for (bucket, slot, fingerprint) in writes {
                let (bucket, slot) = (bucket % geometry.buckets, slot % geometry.slots);
                let fingerprint = fingerprint_of(geometry, fingerprint);
                let empty = generic.get(bucket, slot) == 0;
                if empty {
                    generic.set(bucket, slot, fingerprint);
                }
                prop_assert_eq!(fast.set_if_empty(bucket, slot, fingerprint), empty);
                prop_assert!(fast == generic, "{:?} after storing {} in {}/{}", geometry, fingerprint, bucket, slot);
            }
        }

        // `remove_from_either` likewise: it empties the slot `find` gives in `b1`, else in `b2`.
        #[test]
        fn a_removal_empties_the_slot_the_generic_find_gives(
            geometry in small_geometries(),
            writes in triples(0..120),
            removals in triples(1..60),
        ) {
            let (buckets, slots) = (geometry.buckets, geometry.slots);
            let mut generic = Table::new(geometry).unwrap();
            // Small fingerprints, so that removals often find one.
            for (b, s, v) in writes {
                generic.set(b % buckets, s % slots, v % 8);
            }
            let mut fast = generic.clone();
            for (b1, b2, fingerprint) in removals {
                let (b1, b2, fingerprint) = (b1 % buckets, b2 % buckets, fingerprint % 8 + 1);
                let found = [b1, b2].into_iter().find_map(|b| generic.find(b, fingerprint).map(|s| (b, s)));
                if let Some((bucket, slot)) = found {
                    generic.set(bucket, slot, 0);
                }
                prop_assert_eq!(fast.remove_from_either(fingerprint, b1, b2), found.is_some());
                prop_assert!(fast == generic, "{:?} after removing {} from {}/{}", geometry, fingerprint, b1, b2);
            }
        }
    }

    #[test]
    #[should_panic(expected = "a bucket outside the table")]
    fn the_insert_first_step_refuses_a_bucket_outside_the_table() {
        let mut table = Table::new(Geometry { buckets: 4, slots: 4, bits: 12, semi_sorted: false }).unwrap();
        table.store_in_emptier(1, 0, 4);
    }

    #[test]
    fn each_hot_geometry_has_a_kind_of_its_own_and_the_others_share_one() {
        for (i, probe) in FIXED_PROBES.iter().enumerate() {
            assert_eq!(probe.kind(), i as Kind + 1);
        }
        for slots in [2, 4, 8] {
            for bits in 4..=32 {
                for semi_sorted in [false, slots == 4] {
                    let kind =
                        Table::<Vec<u8>>::choose_probe(Geometry { buckets: 2, slots, bits, semi_sorted })
                            .kind();
                    let hot = if semi_sorted { bits == 13 } else { matches!(bits, 8 | 12 | 16) };
                    assert_eq!(kind != ANY_GEOMETRY, hot, "{slots} x {bits} bits, semi-sorted {semi_sorted}");
                }
            }
        }
    }

    #[test]
    fn each_hot_geometry_prefetches_at_the_places_its_table_gives() {
        for slots in [2, 4, 8] {
            for bits in [8, 12, 13, 16] {
                for semi_sorted in [false, slots == 4 && bits == 13] {
                    let geometry = Geometry { buckets: 6, slots, bits, semi_sorted };
                    let table = Table::new(geometry).unwrap();
                    let Some(layout) = table.probe.fixed_layout() else { continue };
                    assert_eq!(layout, (table.bucket_bits / 8, table.window_bytes), "{geometry:?}");
                }
            }
        }
        assert!(FIXED_PROBES.iter().all(|probe| probe.fixed_layout().is_some()));
    }

    /// Storage whose `AsRef` answers with fewer bytes after its first call.
    struct Shrinking {
        bytes: Vec<u8>,
        calls: std::cell::Cell<usize>,
    }

    impl AsRef<[u8]> for Shrinking {
        fn as_ref(&self) -> &[u8] {
            self.calls.set(self.calls.get() + 1);
            if self.calls.get() == 1 { &self.bytes } else { &self.bytes[..1] }
        }
    }

    #[test]
    #[should_panic(expected = "a table's storage shrank")]
    fn a_storage_that_shrinks_stops_a_lookup_before_it_reads() {
        let geometry = Geometry { buckets: 1000, slots: 4, bits: 12, semi_sorted: false };
        let bytes = vec![0; Table::len_of(geometry)];
        let table = Table::from_bytes(Shrinking { bytes, calls: 0.into() }, geometry).unwrap();
        table.contains_hash(u64::MAX);
    }

    proptest! {
        #[test]
        fn every_geometry_behaves_like_an_array(
            slots in prop::sample::select(vec![2usize, 4, 8]),
            bits in 4u32..=32,
            buckets in 1usize..20,
            writes in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<u32>()), 0..200),
        ) {
            let mut table = Table::new(Geometry { buckets, slots, bits, semi_sorted: false }).unwrap();
            let mut model = vec![vec![0u32; slots]; buckets];
            let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
            for (b, s, v) in writes {
                let (b, s) = (b % buckets, s % slots);
                // Small values make repeats and empties common.
                let v = if v % 3 == 0 { v % 5 } else { v & mask };
                table.set(b, s, v);
                model[b][s] = v;
                for (bucket, expected) in model.iter().enumerate() {
                    for (slot, &fp) in expected.iter().enumerate() {
                        prop_assert_eq!(table.get(bucket, slot), fp);
                    }
                    prop_assert!(listed_as_get(&table, bucket));
                    let other = (bucket + 1) % buckets;
                    // The emptier by the free slots' flags compared as numbers (a later slot
                    // weighs more): the emptier by count while each bucket's free slots are
                    // its last ones, as they stay until something empties an earlier slot.
                    let flags = |b: usize| -> u32 {
                        model[b].iter().enumerate().filter(|&(_, &x)| x == 0).map(|(s, _)| 1 << s).sum()
                    };
                    let emptier = if flags(other) > flags(bucket) { other } else { bucket };
                    let free = |b: usize| model[b].iter().filter(|&&x| x == 0).count();
                    let free_slots_last = |b: usize| model[b].iter().skip_while(|&&x| x != 0).all(|&x| x == 0);
                    if free_slots_last(bucket) && free_slots_last(other) {
                        prop_assert_eq!(emptier, if free(other) > free(bucket) { other } else { bucket });
                    }
                    let slot = model[emptier].iter().position(|&x| x == 0);
                    prop_assert_eq!(table.free_slot_in_emptier(bucket, other), slot.map(|s| (emptier, s)));
                    for probe in [0, 1, 2, 3, 4, v] {
                        prop_assert_eq!(table.find(bucket, probe), expected.iter().position(|&x| x == probe));
                        prop_assert_eq!(table.count(bucket, probe), expected.iter().filter(|&&x| x == probe).count());
                    }
                }
            }
            prop_assert_eq!(table.payload().len(), (buckets * slots * bits as usize).div_ceil(8));
        }
    }

    proptest! {
        #[test]
        fn semi_sorted_buckets_behave_like_multisets(
            bits in 4u32..=32,
            buckets in 1usize..12,
            writes in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<u32>()), 0..200),
        ) {
            let mut table = Table::new(Geometry { buckets, slots: 4, bits, semi_sorted: true }).unwrap();
            let mut model = vec![[0u32; 4]; buckets];
            let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
            for (b, s, v) in writes {
                let (b, s) = (b % buckets, s % 4);
                let v = if v % 3 == 0 { v % 5 } else { v & mask };
                // Slot numbers are positions in the current (sorted) order: replace what is there.
                let replaced = table.get(b, s);
                let position = model[b].iter().position(|&x| x == replaced).unwrap();
                model[b][position] = v;
                table.set(b, s, v);
                for (bucket, expected) in model.iter().enumerate() {
                    let mut stored: Vec<u32> = (0..4).map(|slot| table.get(bucket, slot)).collect();
                    let mut wanted = expected.to_vec();
                    stored.sort_unstable();
                    wanted.sort_unstable();
                    prop_assert_eq!(&stored, &wanted);
                    prop_assert!(listed_as_get(&table, bucket));
                    let other = (bucket + 1) % buckets;
                    let free = |b: usize| model[b].iter().filter(|&&x| x == 0).count();
                    let emptier = if free(other) > free(bucket) { other } else { bucket };
                    match table.free_slot_in_emptier(bucket, other) {
                        Some((b, slot)) => prop_assert!(b == emptier && table.get(b, slot) == 0),
                        None => prop_assert_eq!(free(emptier), 0),
                    }
                    for probe in [0, 1, 2, 3, 4, v] {
                        let count = expected.iter().filter(|&&x| x == probe).count();
                        prop_assert_eq!(table.count(bucket, probe), count);
                        let found = table.find(bucket, probe);
                        prop_assert_eq!(found.is_some(), count > 0);
                        if let Some(slot) = found {
                            prop_assert_eq!(table.get(bucket, slot), probe);
                        }
                    }
                }
            }
            prop_assert_eq!(table.payload().len(), (buckets * (4 * bits as usize - 4)).div_ceil(8));
        }
    }

    #[test]
    fn a_borrowed_table_reads_like_the_owned_one() {
        let geometry = Geometry { buckets: 10, slots: 4, bits: 12, semi_sorted: false };
        let mut owned = Table::new(geometry).unwrap();
        owned.set(3, 1, 0xabc);
        let bytes = owned.bytes.clone();
        let view = Table::from_bytes(&bytes[..], geometry).unwrap();
        assert_eq!(view.get(3, 1), 0xabc);
        assert_eq!(view.find(3, 0xabc), Some(1));
        assert!(Table::from_bytes(&bytes[1..], geometry).is_none());
        let huge = Geometry { buckets: usize::MAX, slots: 8, bits: 32, semi_sorted: false };
        assert!(Table::from_bytes(&bytes[..], huge).is_none());
        assert!(huge.payload_len().is_none());
    }

    #[test]
    fn buffers_are_zeroed_and_exact() {
        // Below and above the huge-page threshold (the second is advised before it is read; Miri,
        // which compiles the advice out, would take minutes to read 4 MiB byte by byte).
        let large = if cfg!(miri) { 4096 } else { HUGE_PAGE_THRESHOLD + 12_345 };
        for len in [1, PADDING, 1000, large] {
            let buffer = zeroed_buffer::<u8>(len).unwrap();
            assert_eq!((buffer.len(), buffer.capacity()), (len, len));
            assert!(buffer.iter().all(|&b| b == 0));
            let reserved = reserve_buffer(len).unwrap();
            assert_eq!((reserved.len(), reserved.capacity()), (0, len));
            // Words too (the shared table's), aligned for them.
            let words = zeroed_buffer::<std::sync::atomic::AtomicU64>(len).unwrap();
            assert_eq!((words.len(), words.as_ptr() as usize % 8), (len, 0));
            assert!(words.iter().all(|word| word.load(std::sync::atomic::Ordering::Relaxed) == 0));
        }
        assert!(zeroed_buffer::<u8>(0).unwrap().is_empty());
        assert!(zeroed_buffer::<std::sync::atomic::AtomicU64>(usize::MAX / 4).is_err());
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    #[cfg_attr(miri, ignore = "miri reports an allocation this large as resource exhaustion")]
    fn a_table_larger_than_any_address_space_is_an_error_not_an_abort() {
        // 2^58 buckets of 4 x 8 bits: 2^60 bytes, a valid geometry, but no machine maps more than
        // 2^57 bytes for a process, whatever its overcommit policy: the allocator must refuse.
        let geometry = Geometry { buckets: 1 << 58, slots: 4, bits: 8, semi_sorted: false };
        let bytes = (1 << 60) + PADDING;
        assert_eq!(geometry.payload_len(), Some(1 << 60));
        assert_eq!(Table::new(geometry).err(), Some(AllocFailed { bytes }));
        assert_eq!(reserve_buffer(bytes).err(), Some(AllocFailed { bytes }));
        // A table is still built after a refusal.
        assert!(Table::new(Geometry { buckets: 2, slots: 4, bits: 8, semi_sorted: false }).is_ok());
    }

    fn probe_of(slots: usize, bits: u32) -> Probe {
        Table::new(Geometry { buckets: 2, slots, bits, semi_sorted: false }).unwrap().probe
    }

    #[test]
    fn the_default_kind_is_the_default_geometry() {
        assert_eq!(FIXED_PROBES[DEFAULT_KIND as usize - 1], Probe::Slots4Bits12);
        assert_eq!(FIXED_PROBES[SEMI_SORTED_13_KIND as usize - 1], Probe::SemiSorted13);
        let default = crate::config::Builder::new().capacity(100).config().unwrap();
        let table = Table::new(Geometry {
            buckets: default.buckets,
            slots: default.bucket_size,
            bits: default.fingerprint_bits,
            semi_sorted: default.semi_sorted,
        })
        .unwrap();
        assert_eq!(table.kind(), DEFAULT_KIND);
    }

    #[test]
    fn probes_are_chosen_by_bucket_width() {
        assert_eq!(probe_of(4, 12), Probe::Slots4Bits12);
        assert_eq!(probe_of(8, 16), Probe::Slots8Bits16);
        assert!(matches!(probe_of(4, 13), Probe::Word64(_)));
        assert!(matches!(probe_of(4, 15), Probe::Word64(_)));
        assert!(matches!(probe_of(4, 14), Probe::Bytes64(_, 7)));
        assert!(matches!(probe_of(2, 32), Probe::Bytes64(_, 8)));
        assert!(matches!(probe_of(2, 31), Probe::Word128(_)));
        assert!(matches!(probe_of(8, 15), Probe::Bytes128(_, 15)));
        assert!(matches!(probe_of(4, 17), Probe::Word128(_)));
        assert!(matches!(probe_of(4, 18), Probe::Bytes128(_, 9)));
        assert!(matches!(probe_of(4, 32), Probe::Bytes128(_, 16)));
        assert!(matches!(probe_of(8, 17), Probe::Slotwise));
    }
}
