//! How a bucket is probed: the [`Probe`] a table's geometry chooses, the [`Kind`]s of code
//! compiled for one geometry each, and the dispatch that runs a [`BucketOp`] against the
//! geometry's [`Matcher`], its windows loaded checked or in a range checked once ([`Loads`]).

use super::kernels::{Lanes, Matcher, Slotwise, Windowed, Word};
use super::semisort;
use super::storage::{Region, Storage};
use super::{Geometry, Table};

/// How a bucket is probed; chosen from the geometry when the table is built.
///
/// The hot geometries (2, 4 or 8 slots of 8, 12 or 16 bits: every bucket starts on a byte) have
/// variants of their own, so that their probes compile with constant masks and offsets; any other
/// geometry uses masks computed at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Probe {
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
pub(super) const FIXED_PROBES: [Probe; 10] = [
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
pub(super) const SEMI_SORTED_13_KIND: Kind = 10;

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
    pub(super) const fn fixed_shape(self) -> Option<(usize, u32)> {
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
    pub(super) const fn fixed_layout(self) -> Option<(usize, usize)> {
        let (slots, bits, semi_sorted) = match (self, self.fixed_shape()) {
            (Probe::SemiSorted13, _) => (semisort::SLOTS, 13, true),
            (_, Some((slots, bits))) => (slots, bits, false),
            (_, None) => return None,
        };
        let bucket_bits = Geometry { buckets: 0, slots, bits, semi_sorted }.bucket_bits();
        if bucket_bits.is_multiple_of(8) { Some((bucket_bits / 8, self.window_bytes())) } else { None }
    }

    /// Bytes a probe loads from the start of a bucket.
    pub(super) const fn window_bytes(self) -> usize {
        match self {
            Probe::Slots8Bits12 | Probe::Slots8Bits16 | Probe::Word128(_) | Probe::Bytes128(..) => 16,
            Probe::SemiSorted128(_) => 16,
            _ => 8,
        }
    }

    /// The kind of code compiled for this geometry alone, or [`ANY_GEOMETRY`].
    pub(super) fn kind(self) -> Kind {
        FIXED_PROBES.iter().position(|&fixed| fixed == self).map_or(ANY_GEOMETRY, |i| i as Kind + 1)
    }
}

impl Table {
    pub(super) fn choose_probe(Geometry { slots, bits, semi_sorted, .. }: Geometry) -> Probe {
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

impl<S: Storage> Table<S> {
    /// The probe of the geometry `KIND` names (a constant the code folds), or the table's own for
    /// [`ANY_GEOMETRY`]. `KIND` must be one of the two.
    #[inline(always)]
    pub(super) fn probe_for<const KIND: Kind>(&self) -> Probe {
        debug_assert!(KIND == ANY_GEOMETRY || KIND == self.kind());
        if KIND == ANY_GEOMETRY { self.probe } else { FIXED_PROBES[KIND as usize - 1] }
    }

    /// The first bit and the width of a plain slot under `probe`: the probe's constant shape if
    /// it has one, else the table's.
    #[inline(always)]
    pub(super) fn plain_slot_place(&self, probe: Probe, bucket: usize, slot: usize) -> (usize, u32) {
        let (slots, bits) = probe.fixed_shape().unwrap_or((self.slots, self.bits));
        ((bucket * slots + slot) * bits as usize, bits)
    }

    /// The bucket's lanes, shifted down so that lane 0 starts at bit 0 (bits above are garbage).
    #[inline(always)]
    pub(super) fn window<W: Word>(&self, loads: impl Loads, bucket: usize) -> W {
        let bit = self.slot_bit(bucket, 0);
        loads.load::<W>(bit / 8) >> (bit % 8) as u32
    }

    /// The window of a bucket that starts on a byte, for a geometry known at compile time.
    #[inline(always)]
    pub(super) fn byte_window<W: Word>(&self, loads: impl Loads, bucket: usize, bucket_bytes: usize) -> W {
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
    pub(crate) unsafe fn probe_in_range<const KIND: Kind, Op: BucketOp>(&self, op: Op) -> Op::Output {
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

    /// Runs a bucket operation with the word type, lane masks and window loader of this table's
    /// geometry, its windows loaded by `loads`. This is the one place that knows how each
    /// geometry is probed. Compiled for [`ANY_GEOMETRY`], it dispatches on the table's geometry;
    /// compiled for one `KIND` (which must be the table's), only that geometry's arm remains.
    #[inline(always)]
    pub(super) fn probe_with<const KIND: Kind, Op: BucketOp>(&self, op: Op, loads: impl Loads) -> Op::Output {
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
}

/// How a probe loads its windows: [`Checked`] each load, or [`InRange`] of a region checked once.
pub(super) trait Loads: Copy {
    fn load<W: Word>(self, offset: usize) -> W;
}

/// Loads checked one by one, from any storage, for any bucket.
pub(super) struct Checked<'a, S>(pub(super) &'a S);

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
pub(super) struct InRange<R>(pub(super) R);

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

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}
