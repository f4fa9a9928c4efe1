//! An [`ExpandingFilter`] taken apart into what its persisted form holds, and put back together
//! with every invariant checked: the file format (`persist/expanding.rs`) reads and writes bytes,
//! this module says which parts make a valid filter.

use super::table::{MAX_FINGERPRINT_BITS, MAX_TAIL_BITS, Segments, Widths, tail_len};
use super::{Entry, ExpandingBuilder, ExpandingFilter, ExpandingFilterIn, low_bits, mask};

/// The fields of an expanding filter, without its buckets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ExpandingFields {
    pub(crate) rate: f64,
    pub(crate) max_items: u64,
    pub(crate) seed: u64,
    pub(crate) fingerprint_bits: u64,
    pub(crate) tail_bits: u64,
    pub(crate) base_buckets: u64,
    pub(crate) level: u64,
    pub(crate) split: u64,
    pub(crate) len: u64,
    pub(crate) rng: u64,
    /// Kept in the file's header flags, not among its fields.
    pub(crate) skipped_inserts: bool,
}

/// A stashed entry: base bucket, its further known address bits, how many, fingerprint.
pub(crate) type StashedEntry = (u64, u64, u32, u32);

/// The rule a part broke, and the offending value.
pub(crate) type Broken = (&'static str, u64);

/// The most stashed entries a valid filter holds: inserts split and drain the stash long before.
pub(crate) const MAX_STASH: u64 = 1 << 16;

impl ExpandingFields {
    /// Checks the fields alone; gives the bytes the buckets in use take.
    pub(crate) fn check(&self) -> Result<usize, Broken> {
        crate::config::check_false_positive_rate(self.rate)
            .map_err(|_| ("target rate, f64 bits", self.rate.to_bits()))?;
        if self.max_items == 0 {
            return Err(("declared maximum", 0));
        }
        if !(1..=u64::from(MAX_FINGERPRINT_BITS)).contains(&self.fingerprint_bits) {
            return Err(("fingerprint bits", self.fingerprint_bits));
        }
        if self.tail_bits > u64::from(MAX_TAIL_BITS) {
            return Err(("tail bits", self.tail_bits));
        }
        if self.base_buckets < 2 || !self.base_buckets.is_power_of_two() || self.base_buckets > 1 << 40 {
            return Err(("initial bucket count", self.base_buckets));
        }
        // The level a filter reaches leaves a key address bits for the level above and a tail.
        let key_depth = 64 - self.fingerprint_bits - u64::from(self.base_buckets.ilog2());
        if self.level.saturating_add(1 + self.tail_bits) > key_depth {
            return Err(("level", self.level));
        }
        let round = self.base_buckets << self.level;
        if self.split >= round {
            return Err(("split pointer", self.split));
        }
        let widths = self.widths();
        let buckets = round.checked_add(self.split).ok_or(("split pointer", self.split))?;
        buckets
            .checked_mul(widths.bucket_bytes() as u64)
            .and_then(|bytes| usize::try_from(bytes).ok())
            .ok_or(("bucket count", buckets))
    }

    /// `m`, for a count [`check`](Self::check) found a power of two.
    fn base_bits(&self) -> u32 {
        self.base_buckets.ilog2()
    }

    fn widths(&self) -> Widths {
        Widths { fingerprint: self.fingerprint_bits as u32, tail: self.tail_bits as u32 }
    }
}

impl<S: AsRef<[u8]>> ExpandingFilterIn<S> {
    /// The filter's fields.
    pub(crate) fn fields(&self) -> ExpandingFields {
        ExpandingFields {
            rate: self.rate,
            max_items: self.max_items,
            seed: self.seed,
            fingerprint_bits: u64::from(self.widths.fingerprint),
            tail_bits: u64::from(self.widths.tail),
            base_buckets: 1 << self.base_bits,
            level: u64::from(self.level),
            split: self.split as u64,
            len: self.len as u64,
            rng: self.rng,
            skipped_inserts: self.skipped_inserts,
        }
    }

    /// The stash's entries.
    pub(crate) fn stashed(&self) -> impl Iterator<Item = StashedEntry> + '_ {
        self.stash.iter().map(|entry| {
            let (base, stream) = (low_bits(entry.address, self.base_bits), entry.address >> self.base_bits);
            (base, stream, entry.depth, entry.fingerprint)
        })
    }

    /// The bytes of the buckets in use, in linear hashing's order.
    pub(crate) fn bucket_bytes(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.segments.used_bytes(self.buckets())
    }

    /// The filter the fields describe, over `segments`, before its content is checked.
    fn assemble(fields: &ExpandingFields, segments: Segments<S>) -> Self {
        let builder = ExpandingBuilder {
            initial_capacity: 1,
            rate: fields.rate,
            max_items: fields.max_items,
            seed: fields.seed,
        };
        let mut filter = Self::with_segments(&builder, fields.widths(), fields.base_bits(), 0, segments);
        filter.level = fields.level as u32;
        filter.split = fields.split as usize;
        filter.rng = fields.rng;
        filter.skipped_inserts = fields.skipped_inserts;
        filter
    }

    /// Checks the buckets and takes the stash and the item count, counting entries and weight.
    fn adopt(mut self, len: u64, stash: &[StashedEntry]) -> Result<Self, Broken> {
        let (mut entries, mut weight) = (0u64, 0u128);
        for (index, level) in self.buckets_in_use() {
            if self.segments.stray_bits(index) {
                return Err(("bucket with bits past its entries", index as u64));
            }
            for stored in self.segments.bucket(index) {
                let (fingerprint, field) = self.widths.unpack(stored);
                if field == 0 {
                    if fingerprint != 0 {
                        return Err(("empty slot with a fingerprint", index as u64));
                    }
                    continue;
                }
                // No entry knows more than the bits inserts give at the lower level: one that
                // did could not be written back at that level when moved to its other bucket.
                if level + tail_len(field) > self.level + self.widths.tail {
                    return Err(("entry knowing more bits than the level gives", index as u64));
                }
                entries += 1;
                weight += 1u128 << (64 - level - tail_len(field));
            }
        }
        for &(base, stream, depth, fingerprint) in stash {
            // A stashed entry may know fewer bits than the level (stashed during an earlier
            // round), never more than inserts give at the lower level.
            if base >> self.base_bits != 0
                || depth > self.level + self.widths.tail
                || stream & !mask(depth) != 0
                || u64::from(fingerprint) > mask(self.widths.fingerprint)
            {
                return Err(("stashed entry", base));
            }
            let entry = Entry { address: base | stream << self.base_bits, depth, fingerprint };
            entries += 1;
            weight += 1u128 << (64 - depth);
            self.stash.push(entry);
        }
        if len > entries {
            return Err(("item count above the entries", len));
        }
        if weight > self.weight_limit {
            return Err(("entries whose bound passes the target", entries));
        }
        self.len = len as usize;
        self.entries = entries as usize;
        self.weight = weight;
        Ok(self)
    }
}

impl ExpandingFilter {
    /// A filter from its parts, if they make a valid one: fields in range ([`ExpandingFields::check`]),
    /// stashed entries that belong to it, buckets whose entries are well-formed and whose unused
    /// bits are zero, at most as many items as entries, and a bound within the target.
    pub(crate) fn from_parts(
        fields: &ExpandingFields,
        stash: &[StashedEntry],
        buckets: &[u8],
    ) -> Result<Result<Self, Broken>, crate::table::alloc::AllocFailed> {
        let bytes = match fields.check() {
            Ok(bytes) => bytes,
            Err(broken) => return Ok(Err(broken)),
        };
        if buckets.len() != bytes {
            return Ok(Err(("bucket bytes", buckets.len() as u64)));
        }
        let segments = Segments::from_used_bytes(fields.widths(), fields.base_bits(), buckets)?;
        Ok(Self::assemble(fields, segments).adopt(fields.len, stash))
    }
}

impl<'a> ExpandingFilterIn<&'a [u8]> {
    /// A filter that reads its buckets in place from `persisted`, the bytes of a whole persisted
    /// filter whose buckets (in linear hashing's order) start at byte `buckets_at`, checked as
    /// [`from_parts`](ExpandingFilter::from_parts) checks, and borrowing them for as long as it
    /// lives.
    pub(crate) fn from_borrowed_parts(
        fields: &ExpandingFields,
        stash: &[StashedEntry],
        persisted: &'a [u8],
        buckets_at: usize,
    ) -> Result<Self, Broken> {
        let bucket_bytes = fields.check()?;
        let buckets = bucket_bytes / fields.widths().bucket_bytes();
        let bytes = persisted.get(buckets_at..).unwrap_or_default();
        let segments = Segments::borrowed(fields.widths(), fields.base_bits(), bytes, buckets)
            .ok_or(("bytes after the buckets, too few to read them in place", bytes.len() as u64))?;
        let filter = Self::assemble(fields, segments).adopt(fields.len, stash)?;
        Ok(ExpandingFilterIn { persisted: Some(persisted), ..filter })
    }

    /// The whole persisted filter the buckets are read from (always there: the one constructor,
    /// [`from_borrowed_parts`](Self::from_borrowed_parts), sets it).
    pub(crate) fn persisted(&self) -> &'a [u8] {
        self.persisted.expect("a borrowed filter is read in place from a persisted one")
    }
}
