//! Bucket storage: `buckets x slots` fingerprints of `bits` bits, bit-packed little-endian in one
//! contiguous buffer — the only module that knows the memory layout.
//!
//! The table knows nothing of items: it stores fingerprints (non-zero `u32`s below `2^bits`; 0
//! marks an empty slot) and answers per-bucket questions. It does hold the [`Addressing`] that
//! turns a 64-bit hash into a fingerprint and two buckets, so that its by-hash entry points
//! ([`Table::contains_hash`], the first step of an insert) are compiled per geometry with the
//! addressing inlined; how an item becomes that hash stays in `key.rs` and `hash/`. Every probe of a bucket goes
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
//! Four gains need `unsafe` (each block has a `SAFETY` comment):
//! - large buffers are advised to use transparent huge pages, so that lookups in tables far
//!   larger than the TLB's reach miss it less often ([`alloc`]);
//! - lookups in batches prefetch buckets ahead of time ([`lookup`]);
//! - on x86-64 a lookup tests its two buckets at once in SSE2 registers ([`kernels`]), which
//!   leaves the general-purpose registers, whose number bounds how many lookups are in flight,
//!   to the hashing and addressing, so more lookups are in flight at once;
//! - a lookup by hash ([`Table::contains_hash`]) loads its two windows without a bounds check
//!   each: the table locates the item with its own [`Addressing`], whose buckets are below the
//!   table's count, and checks its storage's length once per lookup ([`Region`]). Checks inside
//!   each geometry's code (even one per bucket) were as slow as checked loads.
//!
//! The module's parts, each importing only those listed before it (and the [`Table`] type):
//! - [`kernels`]: the word types, lane masks and matchers, and the one choice of the
//!   architecture's code;
//! - [`semisort`]: the encoding of semi-sorted buckets and their matcher;
//! - [`geometry`]: a table's shape and the layout constants;
//! - [`storage`]: where a table's bytes live, and [`alloc`]: zeroed and huge-page buffers;
//! - [`atomic`]: a table's bytes in atomic words, for threads;
//! - [`probe`]: how each geometry is probed, the kinds of code compiled per geometry, and the
//!   dispatch of a [`BucketOp`]; [`ops`]: the operations;
//! - [`write`](mod@write) and [`lookup`]: the table's writes and reads.

pub(crate) mod alloc;
pub(crate) mod atomic;
mod geometry;
mod kernels;
mod lookup;
mod ops;
mod probe;
mod semisort;
mod storage;
mod write;

use crate::hash::Addressing;
pub(crate) use alloc::{AllocFailed, reserve_buffer, zeroed_buffer};
pub use geometry::{BUCKET_SIZES, FINGERPRINT_BITS};
pub(crate) use geometry::{Geometry, PADDING};
pub(crate) use kernels::{MAX_LANES, Matcher, prefetch_t1};
pub(crate) use ops::ContainsEither;
use probe::Probe;
pub(crate) use probe::{
    ANY_GEOMETRY, BucketOp, DEFAULT_KIND, KINDS, Kind, compiled_per_kind, default_kind_or_any,
};
pub(crate) use storage::{Region, Storage, StorageMut};
pub(crate) use write::PipelinedInserts;

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

    pub(super) fn is_semi_sorted(&self) -> bool {
        matches!(self.probe, Probe::SemiSorted13 | Probe::SemiSorted64(_) | Probe::SemiSorted128(_))
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

    /// The kind of code compiled for this table's geometry alone, or [`ANY_GEOMETRY`].
    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }
}

#[cfg(test)]
mod tests;
