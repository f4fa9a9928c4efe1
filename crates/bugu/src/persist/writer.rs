//! Writing: [`Encoder`] streams a file (header, fields, sections) through any [`Write`], hashing
//! every byte on the way, and appends the checksum. Nothing is buffered beyond a section's
//! 40-byte parameter block: the payload goes from the table to the writer as it is.

use std::io::{self, Read, Write};

use xxhash_rust::xxh3::Xxh3;

use crate::filter::{CuckooFilter, CuckooFilterIn};

use super::error::PersistError;
use super::format::expect_kind;
use super::format::{Flags, Section, cuckoo_file_len_for, encode_header};
use super::kind::FilterKind;
use super::persistable::Persist;
use super::reader::Decoder;

/// Writes one persisted filter: [`new`](Self::new) writes the header, the filter type writes its
/// own fields and [`section`](Self::section)s, [`finish`](Self::finish) appends the checksum.
///
/// This is the API other filter types (the growable filter's chain of levels) persist through:
///
/// ```text
/// let mut encoder = Encoder::new(writer, FilterKind::Growable, flags)?;
/// encoder.write_u64(levels.len() as u64)?;      // the type's own fields (multiples of 8 bytes
/// for level in &levels {                        // keep the next payloads 8-byte aligned)
///     encoder.section(level)?;
/// }
/// encoder.finish()?;
/// ```
pub(crate) struct Encoder<W: Write> {
    inner: W,
    hasher: Xxh3,
}

impl<W: Write> Encoder<W> {
    /// Starts a file of `kind` whose sections share `flags`: writes its header.
    pub(crate) fn new(inner: W, kind: FilterKind, flags: Flags) -> io::Result<Self> {
        let mut encoder = Encoder { inner, hasher: Xxh3::new() };
        encoder.write_all(&encode_header(kind, flags))?;
        Ok(encoder)
    }

    /// Writes bytes that the checksum covers.
    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.hasher.update(bytes);
        self.inner.write_all(bytes)
    }

    /// Writes a little-endian `u64`.
    pub(crate) fn write_u64(&mut self, value: u64) -> io::Result<()> {
        self.write_all(&value.to_le_bytes())
    }

    /// Writes one cuckoo filter section: parameters, payload, zero tail.
    pub(crate) fn section<S: AsRef<[u8]>>(&mut self, filter: &CuckooFilterIn<S>) -> io::Result<()> {
        self.section_with(&Section::of(filter), |encoder| encoder.write_all(filter.table().payload()))
    }

    /// Writes the section `section` describes, its payload written by `payload` (in as many
    /// pieces as it likes): parameters, payload, zero tail.
    pub(crate) fn section_with(
        &mut self,
        section: &Section,
        payload: impl FnOnce(&mut Self) -> io::Result<()>,
    ) -> io::Result<()> {
        self.write_all(&section.encode())?;
        payload(self)?;
        self.write_all(&[0; 24][..section.tail_len])
    }

    /// Appends the checksum and returns the writer (not flushed).
    pub(crate) fn finish(mut self) -> io::Result<W> {
        let checksum = self.hasher.digest();
        self.inner.write_all(&checksum.to_le_bytes())?;
        Ok(self.inner)
    }
}

/// Bytes of a whole file holding one section of `filter`.
pub(crate) fn cuckoo_file_len<S: AsRef<[u8]>>(filter: &CuckooFilterIn<S>) -> usize {
    cuckoo_file_len_for(filter.config())
}

impl<S: AsRef<[u8]>> CuckooFilterIn<S> {
    /// Bytes of the persistent form (see [`Persist::serialized_len`]), for any storage.
    pub(crate) fn file_len(&self) -> usize {
        cuckoo_file_len(self)
    }

    /// Streams the persistent form of the filter, owned or viewed, into `writer`.
    pub(crate) fn encode<W: Write>(&self, writer: W) -> io::Result<W> {
        let mut encoder = Encoder::new(writer, FilterKind::Cuckoo, Flags::of(self))?;
        encoder.section(self)?;
        encoder.finish()
    }
}

/// One section: the filter's table, its padding and 64 bytes of header, parameters and checksum
/// (plus up to 7 bytes of alignment).
///
/// ```
/// use bugu::{CuckooFilter, Filter, FilterMut, Persist};
///
/// let mut filter = CuckooFilter::new(1_000)?;
/// filter.insert(&42u64)?;
/// let mut out = Vec::new();
/// filter.write_to(&mut out)?;
/// assert_eq!(out, filter.to_bytes());
/// assert!(filter.serialized_len() - filter.memory_bytes() <= 64 + 7);
/// assert!(CuckooFilter::read_from(&out[..])?.contains(&42u64));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl Persist for CuckooFilter {
    fn serialized_len(&self) -> usize {
        self.file_len()
    }

    fn write_to<W: Write>(&self, writer: W) -> io::Result<()> {
        self.encode(writer).map(drop)
    }

    fn read_counted<R: Read>(reader: R, len: Option<u64>) -> Result<(Self, u64), PersistError> {
        let mut decoder = Decoder::new(reader, len);
        expect_kind(decoder.header()?, FilterKind::Cuckoo)?;
        let filter = decoder.section()?;
        decoder.finish()?;
        Ok((filter, decoder.offset()))
    }

    /// Validates the bytes in place (as a [`CuckooView`](crate::CuckooView) opens them), then
    /// copies the table once.
    fn from_bytes(bytes: &[u8]) -> Result<Self, PersistError> {
        super::view::CuckooView::from_bytes(bytes)?.try_to_filter()
    }
}
