//! The RDB encoding of RedisBloom's type `MBbloomCF` (RDB files, `DUMP` payloads).
//!
//! Encoding version 4 (RedisBloom 2.2 to 8.x), a sequence of RDB fields:
//!
//! | field | kind |
//! |---|---|
//! | sub-filters, buckets of the first, items, deletes, bucket size, max iterations, expansion | 7 unsigned |
//! | per sub-filter: its bucket count | unsigned |
//! | per sub-filter: its slots (`buckets × bucket size` bytes) | string |
//!
//! Versions 0 to 3 (RedisBloom before 2.2) hold only the sub-filters, buckets and items, then
//! each sub-filter's slots; every sub-filter has the first one's bucket count, and the rest take
//! RedisBloom's defaults: bucket size 2, 20 iterations, expansion 1, no deletes.

use super::{ENCODING_VERSION, RedisBloomFilter, Shape};

/// Where the fields of a saved value come from: RDB loading in the server, a list in tests.
/// `None` is a field that is missing or of another kind.
pub(crate) trait FieldSource {
    fn unsigned(&mut self) -> Option<u64>;
    fn bytes(&mut self) -> Option<Vec<u8>>;
}

/// Where the fields of a value being saved go.
pub(crate) trait FieldSink {
    fn unsigned(&mut self, value: u64);
    fn bytes(&mut self, bytes: &[u8]);
}

/// Bucket size, iterations and expansion of values saved before encoding version 4.
const OLD_DEFAULTS: (u64, u64, u64) = (2, 20, 1);

impl RedisBloomFilter {
    /// A filter from its saved fields in encoding `version`; `None` for an unknown version, a
    /// missing field or a value RedisBloom cannot have written (see [`RedisBloomFilter::new`]).
    /// Every size is checked before anything of that size is kept.
    pub(crate) fn load(source: &mut impl FieldSource, version: i32) -> Option<Self> {
        if !(0..=ENCODING_VERSION).contains(&version) {
            return None;
        }
        let current = version == ENCODING_VERSION;
        let filters = source.unsigned()?;
        let buckets = source.unsigned()?;
        let items = source.unsigned()?;
        let (deletes, bucket_size, max_iterations, expansion) = if current {
            (source.unsigned()?, source.unsigned()?, source.unsigned()?, source.unsigned()?)
        } else {
            let (bucket_size, max_iterations, expansion) = OLD_DEFAULTS;
            (0, bucket_size, max_iterations, expansion)
        };
        let shape = Shape { buckets, items, deletes, filters, bucket_size, max_iterations, expansion };
        let sizes = shape.sizes()?;
        let mut slots = Vec::new();
        slots.try_reserve_exact(sizes.len()).ok()?;
        for &size in &sizes {
            if current && source.unsigned()?.checked_mul(bucket_size) != Some(size) {
                return None;
            }
            let bytes = source.bytes()?;
            if bytes.len() as u64 != size {
                return None;
            }
            slots.push(bytes);
        }
        Self::new(shape, slots)
    }

    /// Writes the filter's fields in encoding version 4, which RedisBloom reads.
    pub(crate) fn save(&self, sink: &mut impl FieldSink) {
        let shape = self.shape();
        for field in [
            shape.filters,
            shape.buckets,
            shape.items,
            shape.deletes,
            shape.bucket_size,
            shape.max_iterations,
            shape.expansion,
        ] {
            sink.unsigned(field);
        }
        for slots in &self.filters {
            sink.unsigned(slots.len() as u64 / shape.bucket_size);
            sink.bytes(slots);
        }
    }
}
