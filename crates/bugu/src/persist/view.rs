//! Zero-copy views: [`CuckooView`] answers queries straight from the bytes of a persisted filter
//! (typically a memory-mapped file): it is the filter over borrowed storage, so its queries run
//! the owned filter's code.

use xxhash_rust::xxh3::xxh3_64;

use crate::filter::{CuckooFilter, CuckooFilterIn};
use crate::table::PADDING;

use super::error::PersistError;
use super::format::{
    CHECKSUM_LEN, Flags, HEADER_LEN, SECTION_PARAMS_LEN, Section, check_content, check_stray_bits,
    check_zeros, expect_kind, parse_header,
};
use super::kind::FilterKind;

/// Reads one persisted filter in place: [`new`](Self::new) checks the header, the filter type
/// reads its own fields and [`section`](Self::section)s, then [`finish`](Self::finish) checks the
/// checksum, that nothing follows, and then each section's content. Nothing read may be used
/// unless `finish` (or [`finish_trusted`](Self::finish_trusted)) succeeds.
pub(crate) struct ViewCursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Each section read so far, with the offset of its payload in the input, for the checks of
    /// `finish`.
    sections: Vec<(usize, CuckooView<'a>)>,
    /// The header's flags, which every section takes.
    flags: Flags,
}

impl<'a> ViewCursor<'a> {
    /// A cursor after the header of `bytes`, which must announce `kind`.
    pub(crate) fn new(bytes: &'a [u8], kind: FilterKind) -> Result<Self, PersistError> {
        let header = parse_header(bytes)?;
        expect_kind(header.kind, kind)?;
        Ok(ViewCursor { bytes, pos: HEADER_LEN, sections: Vec::new(), flags: header.flags })
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

    /// Reads a little-endian `u64` (one of a filter type's own fields). Only the tests read a
    /// growable filter in place today; a growable view will.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn read_u64(&mut self, part: &'static str) -> Result<u64, PersistError> {
        let raw = self.take(8, part)?;
        Ok(u64::from_le_bytes(raw.try_into().expect("8 bytes")))
    }

    /// Views the next cuckoo filter section in place. Its item count is not yet checked against
    /// the table: [`finish`](Self::finish) does that.
    pub(crate) fn section(&mut self) -> Result<CuckooView<'a>, PersistError> {
        let raw = self.take(SECTION_PARAMS_LEN, "section parameters")?;
        let section = Section::parse(raw.try_into().expect("parameter block"), self.flags)?;
        let payload_offset = self.pos;
        // The table wraps the payload and the first PADDING bytes of the tail.
        let rest = self.bytes.len() - payload_offset;
        if rest < section.payload_len + section.tail_len {
            return Err(PersistError::Truncated { offset: self.bytes.len() as u64, part: "payload" });
        }
        let table_bytes = &self.bytes[payload_offset..payload_offset + section.payload_len + PADDING];
        self.pos += section.payload_len + section.tail_len;
        let table = section.table(table_bytes)?;
        let view = section.filter(table, false);
        self.sections.push((payload_offset, view.clone()));
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
        for (payload_offset, section) in &self.sections {
            self.check_tail(*payload_offset, section)?;
            check_content(section.table(), section.len(), *payload_offset as u64)?;
        }
        Ok(())
    }

    /// The checks that cost no pass over the data: the checksum is present, nothing follows it,
    /// the padding and the bits after the last bucket are zero. For trusted bytes (a file this program wrote): queries cannot fail
    /// or read out of bounds whatever the bytes, but corrupted bytes give wrong answers.
    pub(crate) fn finish_trusted(self) -> Result<(), PersistError> {
        self.check_end()?;
        for (payload_offset, section) in &self.sections {
            self.check_tail(*payload_offset, section)?;
            check_stray_bits(section.table(), *payload_offset as u64)?;
        }
        Ok(())
    }

    /// Checks that the zeros after a section's payload (padding and alignment) are zeros.
    fn check_tail(&self, payload_offset: usize, section: &CuckooView<'a>) -> Result<(), PersistError> {
        let payload_len = section.table().payload().len();
        let tail_offset = payload_offset + payload_len;
        let tail_len = super::format::tail_len(payload_len);
        check_zeros(&self.bytes[tail_offset..tail_offset + tail_len], tail_offset as u64)
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

/// A read-only cuckoo filter over the bytes of [`CuckooFilter`]'s [`to_bytes`](crate::Persist::to_bytes) — typically a
/// memory-mapped file — that answers [`contains`](crate::Filter::contains) and
/// [`count`](crate::Filter::count) without copying or loading anything: opening it validates the
/// bytes, and each query reads the same two buckets the owned filter reads. It is the filter over
/// borrowed storage, [`CuckooFilterIn`]`<&[u8]>`, so every read-only method of [`CuckooFilter`]
/// (getters, [`Filter`](crate::Filter), [`stats`](CuckooFilterIn::stats),
/// [`summary`](CuckooFilterIn::summary), ...) is the same code here; to insert or remove, copy
/// it with [`to_filter`](Self::to_filter).
///
/// ```
/// use bugu::{CuckooFilter, CuckooView, Filter, FilterMut, Persist};
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
/// use bugu::{CuckooFilter, CuckooView, Filter, FilterMut, Persist};
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
pub type CuckooView<'a> = CuckooFilterIn<&'a [u8]>;

impl<'a> CuckooFilterIn<&'a [u8]> {
    /// A view over the bytes of one persisted [`CuckooFilter`], after validating all of them: the
    /// magic, version and kind, every parameter, the length, the checksum (one pass over the
    /// bytes, about as fast as reading them), the zero padding and the item count against the
    /// table (one pass over the buckets). Never panics, never allocates from a claimed length.
    ///
    /// ```
    /// use bugu::{CuckooFilter, CuckooView, Persist, PersistError};
    ///
    /// let bytes = CuckooFilter::new(100)?.to_bytes();
    /// assert!(CuckooView::from_bytes(&bytes).is_ok());
    /// assert!(matches!(CuckooView::from_bytes(&bytes[1..]), Err(PersistError::BadMagic)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, PersistError> {
        let mut cursor = ViewCursor::new(bytes, FilterKind::Cuckoo)?;
        let section = cursor.section()?;
        cursor.finish()?;
        // `finish` compared the stored count with the table: copies need not count again.
        Ok(section.read_in_place(bytes, true))
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
    /// use bugu::{CuckooFilter, CuckooView, Filter, FilterMut, Persist};
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
        Ok(section.read_in_place(bytes, false))
    }

    /// The bytes the view reads: the whole persisted filter.
    ///
    /// ```
    /// # use bugu::Persist;
    /// let bytes = bugu::CuckooFilter::new(10)?.to_bytes();
    /// let view = bugu::CuckooView::from_bytes(&bytes)?;
    /// assert_eq!(view.as_bytes(), &bytes[..]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn as_bytes(&self) -> &'a [u8] {
        // Sections of a file holding several filters are views without bytes of their own, but
        // they never leave the crate: every view a user holds was opened on a whole filter.
        self.persisted().copied().expect("a view is opened on a whole persisted filter")
    }

    /// An owned, mutable [`CuckooFilter`] with a copy of the table.
    ///
    /// Like `Vec`'s `clone`, it aborts the process if the copy's memory cannot be allocated (see
    /// [`handle_alloc_error`](std::alloc::handle_alloc_error)); use
    /// [`try_to_filter`](Self::try_to_filter) for an error instead, e.g. for a memory-mapped file
    /// that may be larger than the memory available.
    ///
    /// ```
    /// use bugu::{CuckooView, Filter, FilterMut, Persist};
    ///
    /// let bytes = bugu::CuckooFilter::new(10)?.to_bytes();
    /// let mut filter = CuckooView::from_bytes(&bytes)?.to_filter();
    /// filter.insert("b")?;
    /// assert!(filter.contains("b"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_filter(&self) -> CuckooFilter {
        self.try_to_owned().unwrap_or_else(|failed| {
            let layout = std::alloc::Layout::array::<u8>(failed.bytes).expect("the size of bytes in memory");
            std::alloc::handle_alloc_error(layout)
        })
    }

    /// An owned, mutable [`CuckooFilter`] with a copy of the table, or
    /// [`PersistError::OutOfMemory`] (naming the size) if the copy cannot be allocated.
    ///
    /// ```
    /// use bugu::{CuckooView, Filter, FilterMut, Persist};
    ///
    /// let bytes = bugu::CuckooFilter::new(10)?.to_bytes();
    /// let mut filter = CuckooView::from_bytes(&bytes)?.try_to_filter()?;
    /// filter.insert("b")?;
    /// assert!(filter.contains("b"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_to_filter(&self) -> Result<CuckooFilter, PersistError> {
        self.try_to_owned().map_err(|failed| PersistError::OutOfMemory { bytes: failed.bytes })
    }
}

#[cfg(test)]
mod tests {
    //! The getters a view shares with the owned filter, over persisted bytes (moved from the
    //! examples of the view's own getters, which the shared code replaced).

    use crate::{CuckooFilter, CuckooView, FilterMut, Persist};

    #[test]
    fn a_view_reads_the_parameters_and_count_its_bytes_store() {
        let mut filter = CuckooFilter::new(10).unwrap();
        let bytes = filter.to_bytes();
        let view = CuckooView::from_bytes(&bytes).unwrap();
        assert!(view.is_empty());
        assert_eq!(view.load_factor(), 0.0);
        assert_eq!(view.false_positive_rate(), filter.false_positive_rate());
        filter.insert("a").unwrap();
        let bytes = filter.to_bytes();
        assert_eq!(CuckooView::from_bytes(&bytes).unwrap().len(), 1);
        // A view's bytes are the ones it reads; its owned copy writes them again.
        assert_eq!(CuckooView::from_bytes(&bytes).unwrap().as_bytes(), &bytes[..]);
        assert_eq!(CuckooView::from_trusted_bytes(&bytes).unwrap().to_filter().to_bytes(), bytes);

        let bytes = CuckooFilter::new(123).unwrap().to_bytes();
        assert_eq!(CuckooView::from_bytes(&bytes).unwrap().capacity(), 123);
        let filter = CuckooFilter::new(1_000).unwrap();
        let bytes = filter.to_bytes();
        assert_eq!(CuckooView::from_bytes(&bytes).unwrap().bucket_count(), filter.bucket_count());

        let built = |builder: crate::Builder| builder.capacity(10).build().unwrap().to_bytes();
        let bytes = built(CuckooFilter::builder().bucket_size(8));
        assert_eq!(CuckooView::from_bytes(&bytes).unwrap().bucket_size(), 8);
        let bytes = built(CuckooFilter::builder().fingerprint_bits(17));
        assert_eq!(CuckooView::from_bytes(&bytes).unwrap().fingerprint_bits(), 17);
        let bytes = built(CuckooFilter::builder().eviction_limit(77));
        assert_eq!(CuckooView::from_bytes(&bytes).unwrap().eviction_limit(), 77);
    }

    #[test]
    fn a_view_debugs_as_a_summary_naming_itself() {
        let bytes = CuckooFilter::new(1_000).unwrap().to_bytes();
        let debug = format!("{:?}", CuckooView::from_bytes(&bytes).unwrap());
        assert!(debug.starts_with("CuckooView { len: 0, capacity: 1000"), "{debug}");
        assert!(debug.contains(&format!("bytes: {}", bytes.len())), "{debug}");
        assert!(debug.len() < 300);
    }

    #[test]
    fn an_owned_copy_of_a_trusted_view_counts_its_table() {
        let mut filter = CuckooFilter::new(100).unwrap();
        filter.insert("a").unwrap();
        let mut bytes = filter.to_bytes();
        // The stored item count (last field of the parameter block), claimed too high.
        bytes[crate::persist::format::HEADER_LEN + 32] = 5;
        let view = CuckooView::from_trusted_bytes(&bytes).unwrap();
        assert_eq!(view.len(), 5);
        let mut copy = view.to_filter();
        assert_eq!(copy.len(), 1);
        assert!(copy.remove("a"));
        assert!(copy.is_empty());
    }
}
