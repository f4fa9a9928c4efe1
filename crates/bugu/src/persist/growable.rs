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
use std::path::Path;

use crate::config::check_false_positive_rate;
use crate::filter::CuckooFilter;
use crate::growable::{GrowableFilter, Growth, Tightening, check_growth_factor};
use crate::membership::Filter;

use super::error::{InvalidParameter, PersistError};
use super::file::{open, save_atomically};
use super::format::{Flags, HEADER_LEN, expect_kind};
use super::kind::FilterKind;
use super::reader::{Decoder, whole};
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

impl GrowableFilter {
    /// The filter in the persistent format (kind 2 of `docs/format.md`): header, the growth
    /// settings, one cuckoo filter section per level, checksum.
    ///
    /// ```
    /// use bugu::{Filter, FilterMut, GrowableFilter};
    ///
    /// let mut filter = GrowableFilter::new(100)?;
    /// for i in 0..1_000u32 {
    ///     filter.insert(&i)?;
    /// }
    /// let bytes = filter.to_bytes();
    /// let copy = GrowableFilter::from_bytes(&bytes)?;
    /// assert_eq!((copy.len(), copy.level_count()), (1_000, filter.level_count()));
    /// assert!((0..1_000u32).all(|i| copy.contains(&i)));
    /// assert_eq!(copy.to_bytes(), bytes);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let bytes =
            self.encode(Vec::with_capacity(self.serialized_len())).expect("writing to a Vec cannot fail");
        debug_assert_eq!(bytes.len(), self.serialized_len());
        bytes
    }

    /// The length of [`to_bytes`](Self::to_bytes): the levels' tables and padding, 40 bytes of
    /// parameters per level (plus up to 7 of alignment), and 80 bytes of header, settings and
    /// checksum.
    ///
    /// ```
    /// let filter = bugu::GrowableFilter::new(1_000)?;
    /// assert_eq!(filter.serialized_len(), filter.to_bytes().len());
    /// # Ok::<(), bugu::GrowableConfigError>(())
    /// ```
    pub fn serialized_len(&self) -> usize {
        let sections: usize =
            self.levels().iter().map(|level| 40 + level.memory_bytes().next_multiple_of(8)).sum();
        HEADER_LEN + GROWABLE_FIELDS_LEN + sections + 8
    }

    /// Writes [`to_bytes`](Self::to_bytes) to `writer`, streaming each level's table without a
    /// second copy. The writer is not flushed.
    ///
    /// ```
    /// use bugu::{Filter, FilterMut, GrowableFilter};
    ///
    /// let mut filter = GrowableFilter::new(10)?;
    /// filter.insert("kept")?;
    /// let mut buffer = Vec::new();
    /// filter.write_to(&mut buffer)?;
    /// assert!(GrowableFilter::read_from(&buffer[..])?.contains("kept"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_to<W: Write>(&self, writer: W) -> io::Result<()> {
        self.encode(writer).map(drop)
    }

    fn encode<W: Write>(&self, writer: W) -> io::Result<W> {
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
        encoder.finish()
    }

    /// Reads one growable filter written by [`write_to`](Self::write_to) from a stream,
    /// validating everything (as [`CuckooFilter::read_from`] does, plus the growth settings and
    /// that the levels' bounds sum to less than the target). Reading stops after the checksum.
    ///
    /// ```
    /// use bugu::{GrowableFilter, PersistError};
    ///
    /// let bytes = bugu::CuckooFilter::new(10)?.to_bytes();
    /// let err = GrowableFilter::read_from(&bytes[..]).unwrap_err();
    /// assert!(matches!(err, PersistError::WrongKind { .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_from<R: Read>(reader: R) -> Result<Self, PersistError> {
        Self::decode(reader, None).map(|(filter, _)| filter)
    }

    /// Reads a growable filter from exactly the bytes of [`to_bytes`](Self::to_bytes).
    ///
    /// ```
    /// use bugu::{GrowableFilter, PersistError};
    ///
    /// let mut bytes = GrowableFilter::new(10)?.to_bytes();
    /// bytes.push(0);
    /// assert!(matches!(GrowableFilter::from_bytes(&bytes), Err(PersistError::TrailingBytes(1))));
    /// assert!(matches!(GrowableFilter::from_bytes(b"junk"), Err(PersistError::BadMagic)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, PersistError> {
        whole(Self::decode, bytes, bytes.len() as u64)
    }

    /// Saves the filter to `path` atomically (see [`CuckooFilter::save`]).
    ///
    /// ```
    /// use bugu::{Filter, FilterMut, GrowableFilter};
    ///
    /// let path = std::env::temp_dir().join(format!("bugu-growable-doc-{}", std::process::id()));
    /// let mut filter = GrowableFilter::new(10)?;
    /// for i in 0..100u32 {
    ///     filter.insert(&i)?;
    /// }
    /// filter.save(&path)?;
    /// let loaded = GrowableFilter::load(&path)?;
    /// assert!((0..100u32).all(|i| loaded.contains(&i)));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn save(&self, path: impl AsRef<Path>) -> io::Result<()> {
        save_atomically(path.as_ref(), |writer| self.write_to(writer))
    }

    /// Loads a filter saved by [`save`](Self::save), validating it as
    /// [`from_bytes`](Self::from_bytes) does; the file's length bounds what is allocated.
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("bugu-growable-load-doc-{}", std::process::id()));
    /// bugu::CuckooFilter::new(10)?.save(&path)?;
    /// assert!(bugu::GrowableFilter::load(&path).is_err()); // a cuckoo filter, not a growable one
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<Self, PersistError> {
        let (reader, len) = open(path.as_ref())?;
        whole(Self::decode, reader, len)
    }

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
