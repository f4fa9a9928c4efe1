//! The growable filter's persistence: kind 2 of the format in `docs/format.md`. A file holds the
//! header, the growth settings (seven little-endian `u64` fields), one cuckoo filter section per
//! level, oldest first, and the checksum; it is written with the [`Encoder`] and read with the
//! [`Decoder`] the cuckoo filter uses, so every section is validated the same way, and the reader
//! then checks that the levels form one growable filter whose bound is below its target.
//!
//! ```text
//! body   = fields(56) section{level count}
//! fields = target:f64 growth_factor:u64 tightening:u64 ratio:f64
//!          max_capacity:u64 max_levels:u64 level_count:u64     (0 = no maximum)
//! ```

use std::io::{self, Read, Write};

use crate::config::check_false_positive_rate;
use crate::filter::CuckooFilter;
use crate::growable::{GrowableFilter, Growth, Tightening, check_growth_factor};
use crate::membership::Filter;

use super::error::{InvalidParameter, PersistError};
use super::format::{Flags, HEADER_LEN, expect_kind};
use super::kind::FilterKind;
use super::persistable::Persist;
use super::reader::Decoder;
use super::writer::Encoder;

/// Bytes of the growable filter's own fields, after the header.
const GROWABLE_FIELDS_LEN: usize = 56;
/// Levels a persisted growable filter may have: as many as growth ever adds.
const MAX_PERSISTED_LEVELS: u64 = crate::growable::MAX_LEVELS as u64;
/// Tightening codes in the persisted fields.
const TIGHTENING_GEOMETRIC: u64 = 1;
const TIGHTENING_P_SERIES: u64 = 2;

fn invalid(field: &'static str, value: u64) -> PersistError {
    InvalidParameter::Growable { field, value }.into()
}

/// Kind 2: the header, the growth settings, one cuckoo filter section per level, the checksum.
/// Each level's table is streamed as it is; reading validates every section as a cuckoo filter's,
/// then the growth settings and that the levels' bounds sum to less than the target.
///
/// ```
/// use bugu::{Filter, FilterMut, GrowableFilter, Persist};
///
/// let mut filter = GrowableFilter::new(100)?;
/// for i in 0..1_000u32 {
///     filter.insert(&i)?;
/// }
/// let bytes = filter.to_bytes();
/// assert_eq!(bytes.len(), filter.serialized_len());
/// let copy = GrowableFilter::from_bytes(&bytes)?;
/// assert_eq!((copy.len(), copy.level_count()), (1_000, filter.level_count()));
/// assert!((0..1_000u32).all(|i| copy.contains(&i)));
/// assert_eq!(copy.to_bytes(), bytes);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl Persist for GrowableFilter {
    /// The levels' tables and padding, 40 bytes of parameters per level (plus up to 7 of
    /// alignment), and 80 bytes of header, settings and checksum.
    fn serialized_len(&self) -> usize {
        let sections: usize =
            self.levels().iter().map(|level| 40 + level.memory_bytes().next_multiple_of(8)).sum();
        HEADER_LEN + GROWABLE_FIELDS_LEN + sections + 8
    }

    fn write_to<W: Write>(&self, writer: W) -> io::Result<()> {
        let growth = self.growth();
        let (code, ratio) = match growth.tightening {
            Tightening::Geometric { ratio } => (TIGHTENING_GEOMETRIC, ratio.to_bits()),
            Tightening::PSeries => (TIGHTENING_P_SERIES, 0),
        };
        let flags = Flags { key_encoding: self.key_encoding(), skipped_inserts: self.has_skipped_inserts() };
        let mut encoder = Encoder::new(writer, FilterKind::Growable, flags)?;
        for field in [
            growth.target.to_bits(),
            growth.growth_factor as u64,
            code,
            ratio,
            growth.max_capacity.map_or(0, |max| max as u64),
            growth.max_levels.map_or(0, |max| max as u64),
            self.levels().len() as u64,
        ] {
            encoder.write_u64(field)?;
        }
        for level in self.levels() {
            encoder.section(level)?;
        }
        encoder.finish().map(drop)
    }

    fn read_counted<R: Read>(reader: R, len: Option<u64>) -> Result<(Self, u64), PersistError> {
        Self::decode(reader, len)
    }
}

impl GrowableFilter {
    /// Reads and validates one growable filter; also returns the bytes consumed.
    fn decode<R: Read>(reader: R, available: Option<u64>) -> Result<(Self, u64), PersistError> {
        let mut decoder = Decoder::new(reader, available);
        expect_kind(decoder.header()?, FilterKind::Growable)?;
        let mut fields = [0u64; GROWABLE_FIELDS_LEN / 8];
        for field in &mut fields {
            *field = decoder.read_u64("growable filter fields")?;
        }
        let [target_bits, growth_factor, code, ratio_bits, max_capacity, max_levels, count] = fields;
        // Every field is checked before anything is sized from it.
        // The settings' rules are the builder's; the errors name the field and its raw value.
        let target = f64::from_bits(target_bits);
        check_false_positive_rate(target).map_err(|_| invalid("target rate, f64 bits", target_bits))?;
        let growth_factor = usize::try_from(growth_factor)
            .ok()
            .filter(|&factor| check_growth_factor(factor).is_ok())
            .ok_or_else(|| invalid("growth factor", growth_factor))?;
        let tightening = match (code, ratio_bits) {
            (TIGHTENING_GEOMETRIC, _) => Tightening::Geometric { ratio: f64::from_bits(ratio_bits) },
            (TIGHTENING_P_SERIES, 0) => Tightening::PSeries,
            (TIGHTENING_P_SERIES, _) => return Err(invalid("tightening ratio, f64 bits", ratio_bits)),
            _ => return Err(invalid("tightening policy", code)),
        };
        tightening.validate().map_err(|_| invalid("tightening ratio, f64 bits", ratio_bits))?;
        if !(1..=MAX_PERSISTED_LEVELS).contains(&count) || (max_levels != 0 && count > max_levels) {
            return Err(invalid("level count", count));
        }
        let mut levels = Vec::with_capacity(count as usize);
        for _ in 0..count {
            levels.push(decoder.section()?);
        }
        decoder.finish()?;
        // The levels must form one growable filter: same hashing and buckets, and a bound below
        // the target (what every later insert relies on).
        let first = &levels[0];
        let (seed, bucket_size, eviction_limit) = (first.seed(), first.bucket_size(), first.eviction_limit());
        let hash_function = first.hash_function();
        for level in &levels[1..] {
            if level.seed() != seed {
                return Err(invalid("levels with different seeds", level.seed()));
            }
            if level.hash_function() != hash_function {
                return Err(invalid(
                    "levels with different hash functions",
                    u64::from(level.hash_function().id()),
                ));
            }
            if level.bucket_size() != bucket_size {
                return Err(invalid("levels with different bucket sizes", level.bucket_size() as u64));
            }
            if level.eviction_limit() != eviction_limit {
                return Err(invalid("levels with different eviction limits", level.eviction_limit() as u64));
            }
        }
        let bound: f64 = levels.iter().map(CuckooFilter::false_positive_rate).sum();
        if bound >= target {
            return Err(invalid("levels' bound not below the target, f64 bits", bound.to_bits()));
        }
        let capacity = levels.iter().fold(0u64, |sum, level| sum.saturating_add(level.capacity() as u64));
        if max_capacity != 0 && (capacity > max_capacity || usize::try_from(max_capacity).is_err()) {
            return Err(invalid("maximum capacity", max_capacity));
        }
        let growth = Growth {
            target,
            growth_factor,
            tightening,
            max_capacity: (max_capacity != 0).then_some(max_capacity as usize),
            max_levels: (max_levels != 0).then(|| usize::try_from(max_levels).unwrap_or(usize::MAX)),
            bucket_size,
            eviction_limit,
            seed,
            hash_function,
        };
        Ok((GrowableFilter::from_parts(levels, growth), decoder.offset()))
    }
}
