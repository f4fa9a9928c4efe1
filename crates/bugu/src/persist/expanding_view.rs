//! [`ExpandingView`]: an [`ExpandingFilter`] file queried in place, its buckets read from the
//! bytes (a memory-mapped file, a buffer) with no copy.

use crate::expanding::{ExpandingFilter, ExpandingFilterIn};

use super::error::PersistError;
use super::expanding::{check_padding, decode_fields_and_stash, invalid, padded};
use super::persistable::Persist;
use super::reader::Decoder;

/// The bytes of a persisted [`ExpandingFilter`] (kind 3 of `docs/format.md`), queried in place:
/// the buckets are read from the bytes, never copied, so opening a memory-mapped file costs one
/// pass over it (the checksum and the content checks) and no table's worth of memory.
///
/// It is the filter over borrowed storage, [`ExpandingFilterIn`]`<&[u8]>`, so every read-only
/// method of [`ExpandingFilter`] (getters, [`Filter`](crate::Filter),
/// [`stats`](ExpandingFilterIn::stats), [`to_bytes`](ExpandingFilterIn::to_bytes), ...) is the
/// same code here, and it answers exactly as the filter that wrote the bytes; to change it, take
/// an owned copy with [`to_filter`](Self::to_filter).
///
/// ```
/// use bugu::{ExpandingFilter, ExpandingView, Filter, FilterMut, Persist};
///
/// let mut filter = ExpandingFilter::new(100)?;
/// for id in 0..5_000u64 {
///     filter.insert(&id)?;
/// }
/// let bytes = filter.to_bytes(); // or a memory-mapped file `save` wrote
/// let view = ExpandingView::from_bytes(&bytes)?;
/// assert!((0..5_000u64).all(|id| view.contains(&id)));
/// assert_eq!(view.len(), 5_000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// The bytes are borrowed for as long as the view, or any copy of it, lives: neither can outlive
/// them.
///
/// ```compile_fail,E0597
/// use bugu::{ExpandingFilter, ExpandingView, Persist};
///
/// let copy = {
///     let bytes = ExpandingFilter::new(100).unwrap().to_bytes();
///     let view = ExpandingView::from_bytes(&bytes).unwrap();
///     view.clone()
/// }; // `bytes` is dropped here, while `copy` still reads them
/// assert!(copy.is_empty());
/// ```
///
/// A view is never written: inserting and removing ([`FilterMut`](crate::FilterMut)) exist only
/// for the owned filter.
///
/// ```compile_fail,E0599
/// use bugu::{ExpandingFilter, ExpandingView, FilterMut, Persist};
///
/// let bytes = ExpandingFilter::new(100).unwrap().to_bytes();
/// let mut view = ExpandingView::from_bytes(&bytes).unwrap();
/// view.insert("a").unwrap();
/// ```
pub type ExpandingView<'a> = ExpandingFilterIn<&'a [u8]>;

impl<'a> ExpandingFilterIn<&'a [u8]> {
    /// A view over exactly the bytes of one persisted [`ExpandingFilter`], after every check
    /// [`ExpandingFilter::from_bytes`] makes (header, fields, checksum, padding, content).
    /// Entries of any width are read in place: a bucket narrower than 8 bytes is read 8 bytes
    /// at a time, past its end into the padding and checksum that follow the buckets.
    ///
    /// ```
    /// use bugu::{ExpandingFilter, ExpandingView, Persist, PersistError};
    ///
    /// let bytes = ExpandingFilter::new(10)?.to_bytes();
    /// assert!(ExpandingView::from_bytes(&bytes).is_ok());
    /// assert!(matches!(ExpandingView::from_bytes(&bytes[..bytes.len() - 1]), Err(PersistError::Truncated { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, PersistError> {
        let mut decoder = Decoder::new(bytes, Some(bytes.len() as u64));
        let (fields, stash, bucket_bytes) = decode_fields_and_stash(&mut decoder)?;
        let start = decoder.offset() as usize;
        let padded_len = padded(bucket_bytes)?;
        decoder.skip_bytes(padded_len, "buckets")?;
        decoder.finish()?;
        if (decoder.offset() as usize) < bytes.len() {
            return Err(PersistError::TrailingBytes((bytes.len() - decoder.offset() as usize) as u64));
        }
        check_padding(&bytes[start + bucket_bytes..start + padded_len])?;
        ExpandingFilterIn::from_borrowed_parts(&fields, &stash, bytes, start).map_err(invalid)
    }

    /// The bytes the view reads: the whole persisted filter.
    ///
    /// ```
    /// use bugu::Persist;
    /// let bytes = bugu::ExpandingFilter::new(10)?.to_bytes();
    /// let view = bugu::ExpandingView::from_bytes(&bytes)?;
    /// assert_eq!(view.as_bytes(), &bytes[..]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn as_bytes(&self) -> &'a [u8] {
        self.persisted()
    }

    /// An owned filter with a copy of the table, to change.
    pub fn to_filter(&self) -> Result<ExpandingFilter, PersistError> {
        ExpandingFilter::from_bytes(self.as_bytes())
    }
}
