//! Zero-copy views: [`CuckooView`] answers queries straight from the bytes of a persisted filter
//! (typically a memory-mapped file), through the same lookup code as the owned filter.

use std::fmt;

use xxhash_rust::xxh3::xxh3_64;

use crate::config::Config;
use crate::filter::{CuckooFilter, Lookup};
use crate::membership::Filter;
use crate::sizing::false_positive_bound;
use crate::table::{AllocFailed, PADDING, Table, reserve_buffer};

use super::error::PersistError;
use super::format::{
    CHECKSUM_LEN, FilterKind, HEADER_LEN, SECTION_PARAMS_LEN, Section, check_content, check_stray_bits,
    check_zeros, expect_kind, parse_header,
};

/// One cuckoo filter section viewed in place: its configuration, item count and a lookup over
/// the borrowed table (payload plus padding).
#[derive(Clone)]
pub(crate) struct SectionView<'a> {
    pub(crate) config: Config,
    pub(crate) len: usize,
    pub(crate) lookup: Lookup<&'a [u8]>,
    /// The payload and its padding, as the table holds them.
    table_bytes: &'a [u8],
    /// Where the payload starts in the input.
    payload_offset: usize,
    /// Whether `len` was compared with the table's occupied slots (by
    /// [`ViewCursor::finish`]); trusted bytes are not counted at open.
    pub(crate) len_counted: bool,
}

impl SectionView<'_> {
    /// An owned filter with a copy of the table; [`AllocFailed`] if the copy cannot be allocated.
    ///
    /// The owned filter's item count is the table's occupied slots, which `remove` relies on: if
    /// the stored count was not checked (trusted bytes), the table is counted here, so a wrong
    /// count cannot make a later `remove` underflow.
    pub(crate) fn try_to_filter(&self) -> Result<CuckooFilter, AllocFailed> {
        let mut bytes = reserve_buffer(self.table_bytes.len())?;
        bytes.extend_from_slice(self.table_bytes);
        let table =
            Table::from_bytes(bytes, self.config.geometry()).expect("the view's table has this geometry");
        let len = if self.len_counted { self.len } else { table.occupied_slots() };
        Ok(CuckooFilter::from_parts(self.config, table, len))
    }
}

/// Reads one persisted filter in place: [`new`](Self::new) checks the header, the filter type
/// reads its own fields and [`section`](Self::section)s, then [`finish`](Self::finish) checks the
/// checksum, that nothing follows, and then each section's content. Nothing read may be used
/// unless `finish` (or [`finish_trusted`](Self::finish_trusted)) succeeds.
pub(crate) struct ViewCursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    sections: Vec<SectionView<'a>>,
}

impl<'a> ViewCursor<'a> {
    /// A cursor after the header of `bytes`, which must announce `kind`.
    pub(crate) fn new(bytes: &'a [u8], kind: FilterKind) -> Result<Self, PersistError> {
        expect_kind(parse_header(bytes)?, kind)?;
        Ok(ViewCursor { bytes, pos: HEADER_LEN, sections: Vec::new() })
    }

    /// The next `len` bytes, or `Truncated` inside `part`.
    fn take(&mut self, len: usize, part: &'static str) -> Result<&'a [u8], PersistError> {
        let rest = &self.bytes[self.pos..];
        if rest.len() < len {
            return Err(PersistError::Truncated { offset: self.bytes.len() as u64, part });
        }
        self.pos += len;
        Ok(&rest[..len])
    }

    /// Reads a little-endian `u64` (one of a filter type's own fields).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn read_u64(&mut self, part: &'static str) -> Result<u64, PersistError> {
        let raw = self.take(8, part)?;
        Ok(u64::from_le_bytes(raw.try_into().expect("8 bytes")))
    }

    /// Views the next cuckoo filter section in place.
    pub(crate) fn section(&mut self) -> Result<SectionView<'a>, PersistError> {
        let raw = self.take(SECTION_PARAMS_LEN, "section parameters")?;
        let section = Section::parse(raw.try_into().expect("parameter block"))?;
        let payload_offset = self.pos;
        // The table wraps the payload and the first PADDING bytes of the tail.
        let rest = self.bytes.len() - payload_offset;
        if rest < section.payload_len + section.tail_len {
            return Err(PersistError::Truncated { offset: self.bytes.len() as u64, part: "payload" });
        }
        let table_bytes = &self.bytes[payload_offset..payload_offset + section.payload_len + PADDING];
        self.pos += section.payload_len + section.tail_len;
        let table = section.table(table_bytes)?;
        let view = SectionView {
            config: section.config,
            len: section.len,
            lookup: Lookup::new(table),
            table_bytes,
            payload_offset,
            len_counted: false,
        };
        self.sections.push(view.clone());
        Ok(view)
    }

    /// Checks the checksum, that the input ends there, and each section's padding and content
    /// (item count against the table).
    pub(crate) fn finish(self) -> Result<(), PersistError> {
        let body = &self.bytes[..self.pos];
        let computed = xxh3_64(body);
        let pos = self.check_end()?;
        let stored = u64::from_le_bytes(self.bytes[pos..pos + CHECKSUM_LEN].try_into().expect("8 bytes"));
        if stored != computed {
            return Err(PersistError::ChecksumMismatch { stored, computed });
        }
        for section in &self.sections {
            let payload_len = section.lookup.table.payload().len();
            let tail_offset = section.payload_offset + payload_len;
            let tail_len = super::format::tail_len(payload_len);
            check_zeros(&self.bytes[tail_offset..tail_offset + tail_len], tail_offset as u64)?;
            check_content(&section.lookup.table, section.len, section.payload_offset as u64)?;
        }
        Ok(())
    }

    /// The checks that cost no pass over the data: the checksum is present, nothing follows it,
    /// the padding and the bits after the last bucket are zero. For trusted bytes (a file this program wrote): queries cannot fail
    /// or read out of bounds whatever the bytes, but corrupted bytes give wrong answers.
    pub(crate) fn finish_trusted(self) -> Result<(), PersistError> {
        self.check_end()?;
        for section in &self.sections {
            let payload_len = section.lookup.table.payload().len();
            let tail_offset = section.payload_offset + payload_len;
            let tail_len = super::format::tail_len(payload_len);
            check_zeros(&self.bytes[tail_offset..tail_offset + tail_len], tail_offset as u64)?;
            check_stray_bits(&section.lookup.table, section.payload_offset as u64)?;
        }
        Ok(())
    }

    /// Checks that exactly the checksum remains; returns its offset.
    fn check_end(&self) -> Result<usize, PersistError> {
        let rest = self.bytes.len() - self.pos;
        if rest < CHECKSUM_LEN {
            return Err(PersistError::Truncated { offset: self.bytes.len() as u64, part: "checksum" });
        }
        if rest > CHECKSUM_LEN {
            return Err(PersistError::TrailingBytes((rest - CHECKSUM_LEN) as u64));
        }
        Ok(self.pos)
    }
}

/// A read-only cuckoo filter over the bytes of [`CuckooFilter::to_bytes`] — typically a
/// memory-mapped file — that answers [`contains`](Filter::contains) and [`count`](Filter::count)
/// without copying or loading anything: opening it validates the bytes, and each query reads the
/// same two buckets the owned filter reads, through the same code.
///
/// ```
/// use bugu::{CuckooFilter, CuckooView, Filter, FilterMut};
///
/// let mut filter = CuckooFilter::new(1_000)?;
/// filter.insert("apple")?;
/// let bytes = filter.to_bytes(); // or a memory-mapped file
///
/// let view = CuckooView::from_bytes(&bytes)?;
/// assert!(view.contains("apple"));
/// assert_eq!(view.count("apple"), 1);
/// assert_eq!(view.len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Over a memory-mapped file (with the `memmap2` crate):
///
/// ```
/// use bugu::{CuckooFilter, CuckooView, Filter, FilterMut};
///
/// let dir = std::env::temp_dir().join(format!("bugu-view-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("filter.bugu");
/// let mut filter = CuckooFilter::new(1_000)?;
/// filter.insert("apple")?;
/// filter.save(&path)?;
///
/// let file = std::fs::File::open(&path)?;
/// // SAFETY: nothing modifies the file while it is mapped (`save` replaces files by renaming a
/// // new one over them, which leaves this mapping's pages intact).
/// let map = unsafe { memmap2::Mmap::map(&file)? };
/// let view = CuckooView::from_bytes(&map)?;
/// assert!(view.contains("apple"));
/// # drop(view); drop(map); std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct CuckooView<'a> {
    section: SectionView<'a>,
    bytes: &'a [u8],
}

impl<'a> CuckooView<'a> {
    /// A view over the bytes of one persisted [`CuckooFilter`], after validating all of them: the
    /// magic, version and kind, every parameter, the length, the checksum (one pass over the
    /// bytes, about as fast as reading them), the zero padding and the item count against the
    /// table (one pass over the buckets). Never panics, never allocates from a claimed length.
    ///
    /// ```
    /// use bugu::{CuckooFilter, CuckooView, PersistError};
    ///
    /// let bytes = CuckooFilter::new(100)?.to_bytes();
    /// assert!(CuckooView::from_bytes(&bytes).is_ok());
    /// assert!(matches!(CuckooView::from_bytes(&bytes[1..]), Err(PersistError::BadMagic)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, PersistError> {
        let mut cursor = ViewCursor::new(bytes, FilterKind::Cuckoo)?;
        let mut section = cursor.section()?;
        cursor.finish()?;
        // `finish` compared the stored count with the table: copies need not count again.
        section.len_counted = true;
        Ok(CuckooView { section, bytes })
    }

    /// A view over bytes you trust (a file your program wrote and nothing else changed), opened
    /// in constant time: it skips the checksum and the count of the table's items, the two checks
    /// that read every byte, so a large memory-mapped file is not paged in at open. Everything
    /// else is validated as by [`from_bytes`](Self::from_bytes) — the header, every parameter and
    /// the exact length — so no bytes can make a query panic or read out of bounds; corrupted
    /// bytes give wrong answers instead of an error. [`len`](Self::len) is the count the bytes
    /// store; [`to_filter`](Self::to_filter) counts the table it copies (one more pass over the
    /// buckets), so the owned filter's count always matches its table.
    ///
    /// ```
    /// use bugu::{CuckooFilter, CuckooView, Filter, FilterMut};
    ///
    /// let mut filter = CuckooFilter::new(100)?;
    /// filter.insert("a")?;
    /// let bytes = filter.to_bytes();
    /// assert!(CuckooView::from_trusted_bytes(&bytes)?.contains("a"));
    /// assert!(CuckooView::from_trusted_bytes(&bytes[..bytes.len() - 1]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_trusted_bytes(bytes: &'a [u8]) -> Result<Self, PersistError> {
        let mut cursor = ViewCursor::new(bytes, FilterKind::Cuckoo)?;
        let section = cursor.section()?;
        cursor.finish_trusted()?;
        Ok(CuckooView { section, bytes })
    }

    /// The bytes the view reads: the whole persisted filter.
    ///
    /// ```
    /// let bytes = bugu::CuckooFilter::new(10)?.to_bytes();
    /// let view = bugu::CuckooView::from_bytes(&bytes)?;
    /// assert_eq!(view.as_bytes(), &bytes[..]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// An owned, mutable [`CuckooFilter`] with a copy of the table.
    ///
    /// Like `Vec`'s `clone`, it aborts the process if the copy's memory cannot be allocated (see
    /// [`handle_alloc_error`](std::alloc::handle_alloc_error)); use
    /// [`try_to_filter`](Self::try_to_filter) for an error instead, e.g. for a memory-mapped file
    /// that may be larger than the memory available.
    ///
    /// ```
    /// use bugu::{CuckooView, Filter, FilterMut};
    ///
    /// let bytes = bugu::CuckooFilter::new(10)?.to_bytes();
    /// let mut filter = CuckooView::from_bytes(&bytes)?.to_filter();
    /// filter.insert("b")?;
    /// assert!(filter.contains("b"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_filter(&self) -> CuckooFilter {
        self.section.try_to_filter().unwrap_or_else(|failed| {
            let layout = std::alloc::Layout::array::<u8>(failed.bytes).expect("the size of bytes in memory");
            std::alloc::handle_alloc_error(layout)
        })
    }

    /// An owned, mutable [`CuckooFilter`] with a copy of the table, or
    /// [`PersistError::OutOfMemory`] (naming the size) if the copy cannot be allocated.
    ///
    /// ```
    /// use bugu::{CuckooView, Filter, FilterMut};
    ///
    /// let bytes = bugu::CuckooFilter::new(10)?.to_bytes();
    /// let mut filter = CuckooView::from_bytes(&bytes)?.try_to_filter()?;
    /// filter.insert("b")?;
    /// assert!(filter.contains("b"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_to_filter(&self) -> Result<CuckooFilter, PersistError> {
        self.section.try_to_filter().map_err(|failed| PersistError::OutOfMemory { bytes: failed.bytes })
    }

    /// Number of stored fingerprints, as the bytes record it (checked against the table by
    /// [`from_bytes`](Self::from_bytes), taken on trust by
    /// [`from_trusted_bytes`](Self::from_trusted_bytes)).
    ///
    /// ```
    /// use bugu::{CuckooFilter, FilterMut};
    /// let mut filter = CuckooFilter::new(10)?;
    /// filter.insert("a")?;
    /// let bytes = filter.to_bytes();
    /// assert_eq!(bugu::CuckooView::from_bytes(&bytes)?.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.section.len
    }

    /// Whether nothing is stored.
    ///
    /// ```
    /// let bytes = bugu::CuckooFilter::new(10)?.to_bytes();
    /// assert!(bugu::CuckooView::from_bytes(&bytes)?.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.section.len == 0
    }

    /// The number of items the filter was sized for.
    ///
    /// ```
    /// let bytes = bugu::CuckooFilter::new(123)?.to_bytes();
    /// assert_eq!(bugu::CuckooView::from_bytes(&bytes)?.capacity(), 123);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.section.config.capacity
    }

    /// Number of buckets in the table.
    ///
    /// ```
    /// let filter = bugu::CuckooFilter::new(1_000)?;
    /// let bytes = filter.to_bytes();
    /// assert_eq!(bugu::CuckooView::from_bytes(&bytes)?.bucket_count(), filter.bucket_count());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bucket_count(&self) -> usize {
        self.section.config.buckets
    }

    /// Slots per bucket.
    ///
    /// ```
    /// let bytes = bugu::CuckooFilter::builder().capacity(10).bucket_size(8).build()?.to_bytes();
    /// assert_eq!(bugu::CuckooView::from_bytes(&bytes)?.bucket_size(), 8);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bucket_size(&self) -> usize {
        self.section.config.bucket_size
    }

    /// Fingerprint width in bits.
    ///
    /// ```
    /// let bytes = bugu::CuckooFilter::builder().capacity(10).fingerprint_bits(17).build()?.to_bytes();
    /// assert_eq!(bugu::CuckooView::from_bytes(&bytes)?.fingerprint_bits(), 17);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fingerprint_bits(&self) -> u32 {
        self.section.config.fingerprint_bits
    }

    /// The eviction limit the filter was configured with (kept for [`to_filter`](Self::to_filter)).
    ///
    /// ```
    /// let bytes = bugu::CuckooFilter::builder().capacity(10).eviction_limit(77).build()?.to_bytes();
    /// assert_eq!(bugu::CuckooView::from_bytes(&bytes)?.eviction_limit(), 77);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn eviction_limit(&self) -> usize {
        self.section.config.eviction_limit
    }

    /// Share of slots in use, from 0 to 1.
    ///
    /// ```
    /// let bytes = bugu::CuckooFilter::new(10)?.to_bytes();
    /// assert_eq!(bugu::CuckooView::from_bytes(&bytes)?.load_factor(), 0.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load_factor(&self) -> f64 {
        let c = &self.section.config;
        self.section.len as f64 / (c.buckets * c.bucket_size) as f64
    }

    /// The false-positive rate the configuration guarantees (the bound at full occupancy), as
    /// [`CuckooFilter::false_positive_rate`].
    ///
    /// ```
    /// let filter = bugu::CuckooFilter::new(10)?;
    /// let bytes = filter.to_bytes();
    /// let view = bugu::CuckooView::from_bytes(&bytes)?;
    /// assert_eq!(view.false_positive_rate(), filter.false_positive_rate());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn false_positive_rate(&self) -> f64 {
        let c = &self.section.config;
        false_positive_bound(c.fingerprint_bits, c.bucket_size, 1.0)
    }
}

impl Filter for CuckooView<'_> {
    #[inline]
    fn seed(&self) -> u64 {
        self.section.config.seed
    }

    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        self.section.lookup.contains_hash(hash)
    }

    #[inline]
    fn count_hash(&self, hash: u64) -> usize {
        self.section.lookup.count_hash(hash)
    }

    /// Pipelined as in the owned filter: the buckets of upcoming hashes are prefetched.
    fn contains_hash_batch(&self, hashes: &[u64]) -> Vec<bool> {
        self.section.lookup.contains_pipelined(hashes.iter().copied())
    }

    /// Pipelined as in the owned filter: the buckets of upcoming items are prefetched.
    fn contains_batch<T: std::hash::Hash>(&self, items: &[T]) -> Vec<bool> {
        self.section.lookup.contains_pipelined(items.iter().map(|item| self.hash_of(item)))
    }
}

impl fmt::Debug for CuckooView<'_> {
    /// A summary: never the table.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.section.config;
        f.debug_struct("CuckooView")
            .field("len", &self.section.len)
            .field("capacity", &c.capacity)
            .field("buckets", &c.buckets)
            .field("bucket_size", &c.bucket_size)
            .field("fingerprint_bits", &c.fingerprint_bits)
            .field("bytes", &self.bytes.len())
            .finish_non_exhaustive()
    }
}
