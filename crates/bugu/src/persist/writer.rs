//! Writing: [`Encoder`] streams a file (header, fields, sections) through any [`Write`], hashing
//! every byte on the way, and appends the checksum. Nothing is buffered beyond a section's
//! 40-byte parameter block: the payload goes from the table to the writer as it is.

use std::io::{self, Write};

use xxhash_rust::xxh3::Xxh3;

use crate::filter::CuckooFilterIn;

use super::format::{CHECKSUM_LEN, Flags, HEADER_LEN, Section, encode_header};
use super::kind::FilterKind;

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
        let section = Section::of(filter);
        self.write_all(&section.encode())?;
        self.write_all(filter.table().payload())?;
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
    HEADER_LEN + Section::of(filter).section_len() + CHECKSUM_LEN
}

impl<S: AsRef<[u8]>> CuckooFilterIn<S> {
    /// The filter in the persistent format (see `docs/format.md`): a self-describing, checksummed,
    /// little-endian byte string that [`CuckooFilter::from_bytes`](crate::CuckooFilter::from_bytes),
    /// [`read_from`](crate::CuckooFilter::read_from), [`load`](crate::CuckooFilter::load) and [`CuckooView`](crate::CuckooView) read back on any platform.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut};
    ///
    /// let mut filter = CuckooFilter::new(1_000)?;
    /// filter.insert("apple")?;
    /// let bytes = filter.to_bytes();
    /// assert_eq!(bytes.len(), filter.serialized_len());
    ///
    /// let copy = CuckooFilter::from_bytes(&bytes)?;
    /// assert!(copy.contains("apple"));
    /// assert_eq!(copy.to_bytes(), bytes);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let bytes = Vec::with_capacity(self.serialized_len());
        let bytes = self.encode(bytes).expect("writing to a Vec cannot fail");
        debug_assert_eq!(bytes.len(), self.serialized_len());
        bytes
    }

    /// The length of [`to_bytes`](Self::to_bytes): the table, its padding and 64 bytes of header,
    /// parameters and checksum (plus up to 7 bytes of alignment).
    ///
    /// ```
    /// let filter = bugu::CuckooFilter::new(1_000)?;
    /// assert_eq!(filter.serialized_len(), filter.to_bytes().len());
    /// assert!(filter.serialized_len() - filter.memory_bytes() <= 64 + 7);
    /// # Ok::<(), bugu::ConfigError>(())
    /// ```
    pub fn serialized_len(&self) -> usize {
        cuckoo_file_len(self)
    }

    /// Streams [`to_bytes`](Self::to_bytes) into `writer` without building it in memory: the
    /// table goes to the writer as it is, the checksum is computed on the way. Wrap unbuffered
    /// writers (files, sockets) in a [`BufWriter`](std::io::BufWriter); the writer is not
    /// flushed.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut};
    ///
    /// let mut filter = CuckooFilter::new(1_000)?;
    /// filter.insert(&42u64)?;
    /// let mut out = Vec::new();
    /// filter.write_to(&mut out)?;
    /// assert_eq!(out, filter.to_bytes());
    ///
    /// let copy = CuckooFilter::read_from(&out[..])?;
    /// assert!(copy.contains(&42u64));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_to<W: Write>(&self, writer: W) -> io::Result<()> {
        self.encode(writer).map(drop)
    }

    fn encode<W: Write>(&self, writer: W) -> io::Result<W> {
        let mut encoder = Encoder::new(writer, FilterKind::Cuckoo, Flags::of(self))?;
        encoder.section(self)?;
        encoder.finish()
    }
}
