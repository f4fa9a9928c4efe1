//! The expanding filter's persistence: kind 3 of the format in `docs/format.md`. A file holds the
//! header, eleven little-endian `u64` fields, the stash (three `u64` per entry), the bytes of the
//! buckets in use in linear hashing's order, zeros up to a multiple of 8 bytes, and the checksum.
//! The reader checks the checksum first, then every field and every bucket
//! ([`ExpandingFilter::from_parts`]), so hostile bytes give an error, never a panic or a filter
//! that could answer wrongly.
//!
//! ```text
//! body   = fields(88) stash(24 x stash length) buckets(B) zeros(round_up8(B) - B)
//! fields = target:f64 max_items seed fingerprint_bits tail_bits initial_buckets
//!          level split_pointer items rng stash_length
//! stash  = base known_bits depth<<32|fingerprint
//! ```

use std::io::{self, Read, Write};
use std::path::Path;

use crate::expanding::{ExpandingFields, ExpandingFilter, ExpandingFilterIn, MAX_STASH, StashedEntry};
use crate::key::KeyEncoding;

use super::error::{InvalidParameter, PersistError};
use super::file::{open, save_atomically};
use super::format::{CHECKSUM_LEN, Flags, HEADER_LEN, expect_kind};
use super::kind::FilterKind;
use super::reader::{Decoder, whole};
use super::writer::Encoder;

/// Bytes of the expanding filter's fields, after the header.
const FIELDS_LEN: usize = 88;
/// Bytes of one stashed entry.
const STASHED_LEN: usize = 24;

/// The fields in their order in the file, the stash length last.
fn to_words(fields: &ExpandingFields, stash_len: u64) -> [u64; FIELDS_LEN / 8] {
    let ExpandingFields {
        rate,
        max_items,
        seed,
        fingerprint_bits,
        tail_bits,
        base_buckets,
        level,
        split,
        len,
        rng,
        skipped_inserts: _,
    } = *fields;
    [
        rate.to_bits(),
        max_items,
        seed,
        fingerprint_bits,
        tail_bits,
        base_buckets,
        level,
        split,
        len,
        rng,
        stash_len,
    ]
}

/// The fields and the stash length from the words [`to_words`] writes, and the header's flag.
fn from_words(words: [u64; FIELDS_LEN / 8], skipped_inserts: bool) -> (ExpandingFields, u64) {
    let [rate, max_items, seed, fingerprint_bits, tail_bits, base_buckets, level, split, len, rng, stash_len] =
        words;
    let rate = f64::from_bits(rate);
    let fields = ExpandingFields {
        rate,
        max_items,
        seed,
        fingerprint_bits,
        tail_bits,
        base_buckets,
        level,
        split,
        len,
        rng,
        skipped_inserts,
    };
    (fields, stash_len)
}

pub(super) fn invalid((field, value): (&'static str, u64)) -> PersistError {
    InvalidParameter::Expanding { field, value }.into()
}

impl<S: AsRef<[u8]>> ExpandingFilterIn<S> {
    /// The filter in the persistent format (kind 3 of `docs/format.md`).
    ///
    /// ```
    /// use bugu::{ExpandingFilter, Filter, FilterMut};
    ///
    /// let mut filter = ExpandingFilter::new(100)?;
    /// for i in 0..1_000u32 {
    ///     filter.insert(&i)?;
    /// }
    /// let bytes = filter.to_bytes();
    /// let copy = ExpandingFilter::from_bytes(&bytes)?;
    /// assert_eq!(copy.stats().tail_histogram, filter.stats().tail_histogram);
    /// assert!((0..1_000u32).all(|i| copy.contains(&i)));
    /// assert_eq!(copy.to_bytes(), bytes);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let bytes = self
            .encode_file(Vec::with_capacity(self.serialized_len()))
            .expect("writing to a Vec cannot fail");
        debug_assert_eq!(bytes.len(), self.serialized_len());
        bytes
    }

    /// The length of [`to_bytes`](Self::to_bytes).
    ///
    /// ```
    /// let filter = bugu::ExpandingFilter::new(1_000)?;
    /// assert_eq!(filter.serialized_len(), filter.to_bytes().len());
    /// # Ok::<(), bugu::expanding::ExpandingConfigError>(())
    /// ```
    pub fn serialized_len(&self) -> usize {
        let buckets: usize = self.bucket_bytes().map(<[u8]>::len).sum();
        HEADER_LEN
            + FIELDS_LEN
            + STASHED_LEN * self.stashed().count()
            + buckets.next_multiple_of(8)
            + CHECKSUM_LEN
    }

    /// Writes [`to_bytes`](Self::to_bytes) to `writer`, streaming the buckets without a second
    /// copy. The writer is not flushed.
    pub fn write_to<W: Write>(&self, writer: W) -> io::Result<()> {
        self.encode_file(writer).map(drop)
    }

    fn encode_file<W: Write>(&self, writer: W) -> io::Result<W> {
        let flags =
            Flags { key_encoding: KeyEncoding::Canonical, skipped_inserts: self.has_skipped_inserts() };
        let mut encoder = Encoder::new(writer, FilterKind::Expanding, flags)?;
        for field in to_words(&self.fields(), self.stashed().count() as u64) {
            encoder.write_u64(field)?;
        }
        for (base, known, depth, fingerprint) in self.stashed() {
            for field in [base, known, u64::from(depth) << 32 | u64::from(fingerprint)] {
                encoder.write_u64(field)?;
            }
        }
        let mut written = 0;
        for bytes in self.bucket_bytes() {
            encoder.write_all(bytes)?;
            written += bytes.len();
        }
        encoder.write_all(&[0; 8][..written.next_multiple_of(8) - written])?;
        encoder.finish()
    }

    /// Saves the filter to `path` atomically (see [`CuckooFilter::save`](crate::CuckooFilter::save)).
    ///
    /// ```
    /// use bugu::{ExpandingFilter, Filter, FilterMut};
    ///
    /// let path = std::env::temp_dir().join(format!("bugu-expanding-doc-{}", std::process::id()));
    /// let mut filter = ExpandingFilter::new(10)?;
    /// for i in 0..100u32 {
    ///     filter.insert(&i)?;
    /// }
    /// filter.save(&path)?;
    /// let loaded = ExpandingFilter::load(&path)?;
    /// assert!((0..100u32).all(|i| loaded.contains(&i)));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn save(&self, path: impl AsRef<Path>) -> io::Result<()> {
        save_atomically(path.as_ref(), |writer| self.write_to(writer))
    }
}

impl ExpandingFilter {
    /// Reads one expanding filter written by [`write_to`](Self::write_to) from a stream,
    /// validating everything. Reading stops after the checksum.
    pub fn read_from<R: Read>(reader: R) -> Result<Self, PersistError> {
        Self::decode_file(reader, None).map(|(filter, _)| filter)
    }

    /// Reads an expanding filter from exactly the bytes of [`to_bytes`](Self::to_bytes).
    ///
    /// ```
    /// use bugu::{ExpandingFilter, PersistError};
    ///
    /// let bytes = bugu::CuckooFilter::new(10)?.to_bytes();
    /// assert!(matches!(ExpandingFilter::from_bytes(&bytes), Err(PersistError::WrongKind { .. })));
    /// let mut bytes = ExpandingFilter::new(10)?.to_bytes();
    /// bytes.push(0);
    /// assert!(matches!(ExpandingFilter::from_bytes(&bytes), Err(PersistError::TrailingBytes(1))));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, PersistError> {
        whole(Self::decode_file, bytes, bytes.len() as u64)
    }

    /// Loads a filter saved by [`save`](Self::save), validating it as
    /// [`from_bytes`](Self::from_bytes) does; the file's length bounds what is allocated.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, PersistError> {
        let (reader, len) = open(path.as_ref())?;
        whole(Self::decode_file, reader, len)
    }

    /// Reads and validates one expanding filter; also returns the bytes consumed.
    fn decode_file<R: Read>(reader: R, available: Option<u64>) -> Result<(Self, u64), PersistError> {
        let mut decoder = Decoder::new(reader, available);
        let (fields, stash, bucket_bytes) = decode_fields_and_stash(&mut decoder)?;
        let padded = decoder.read_bytes(padded(bucket_bytes)?, "buckets")?;
        let (buckets, zeros) = padded.split_at(bucket_bytes);
        decoder.finish()?;
        check_padding(zeros)?;
        let filter = ExpandingFilter::from_parts(&fields, &stash, buckets)
            .map_err(|failed| PersistError::OutOfMemory { bytes: failed.bytes })?
            .map_err(invalid)?;
        Ok((filter, decoder.offset()))
    }
}

/// Reads the header, the fields and the stash, checking every field before anything is sized
/// from it; gives them with the byte length of the buckets that follow.
pub(super) fn decode_fields_and_stash<R: Read>(
    decoder: &mut Decoder<R>,
) -> Result<(ExpandingFields, Vec<StashedEntry>, usize), PersistError> {
    expect_kind(decoder.header()?, FilterKind::Expanding)?;
    let flags = decoder.flags().expect("the header was read");
    // Expanding filters were only ever written with the canonical key encoding.
    if flags.key_encoding != KeyEncoding::Canonical {
        return Err(invalid(("header flags without canonical keys", 0)));
    }
    let mut raw = [0u64; FIELDS_LEN / 8];
    for field in &mut raw {
        *field = decoder.read_u64("expanding filter fields")?;
    }
    let (fields, stash_len) = from_words(raw, flags.skipped_inserts);
    let bucket_bytes = fields.check().map_err(invalid)?;
    if stash_len > MAX_STASH {
        return Err(invalid(("stash length", stash_len)));
    }
    let mut stash: Vec<StashedEntry> = Vec::with_capacity(stash_len as usize);
    for _ in 0..stash_len {
        let base = decoder.read_u64("stash")?;
        let known = decoder.read_u64("stash")?;
        let packed = decoder.read_u64("stash")?;
        stash.push((base, known, (packed >> 32) as u32, packed as u32));
    }
    Ok((fields, stash, bucket_bytes))
}

/// The buckets' length with the zeros that pad it to a multiple of 8 bytes.
pub(super) fn padded(bucket_bytes: usize) -> Result<usize, PersistError> {
    bucket_bytes.checked_next_multiple_of(8).ok_or_else(|| invalid(("bucket bytes", u64::MAX)))
}

/// Refuses padding after the buckets that is not all zeros.
pub(super) fn check_padding(zeros: &[u8]) -> Result<(), PersistError> {
    if zeros.iter().any(|&byte| byte != 0) {
        let value = zeros.iter().fold(0, |value, &byte| value << 8 | u64::from(byte));
        return Err(invalid(("padding after the buckets", value)));
    }
    Ok(())
}
