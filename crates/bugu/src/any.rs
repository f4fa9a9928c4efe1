//! [`AnyFilterIn`]: one type over every kind of filter a file can hold, so that a program that
//! opens whatever file it is given (the `bugu` command, the Redis module, the Python and C
//! bindings) names the kinds in one place, here.

use std::io::{self, Read, Write};

use crate::error::InsertError;
use crate::expanding::{ExpandingFilter, ExpandingFilterIn};
use crate::filter::{CuckooFilter, CuckooFilterIn};
use crate::growable::GrowableFilter;
use crate::hash::HashFunction;
use crate::key::{Key, KeyEncoding};
use crate::membership::{Filter, FilterMut};
use crate::persist::{CuckooView, ExpandingView, FilterKind, Persist, PersistError};
use crate::summary::Summary;

/// A filter of any kind, over storage `S`: what a program holds when it opens a file without
/// knowing which kind it holds. Read-only methods are written once for any storage, as for
/// [`CuckooFilterIn`]; two storages are named:
/// - [`AnyFilter`] (`Vec<u8>`): owned, changed through [`FilterMut`], saved through
///   [`Persist`] (which also opens bytes and files of any kind);
/// - [`AnyView`] (`&[u8]`): read-only, over the bytes of a file (a memory-mapped one, say):
///   fixed filters and filters in one table are read in place, a chain of tables is read
///   into memory (its levels are separate tables, with no view of their own).
///
/// ```
/// use bugu::{AnyFilter, AnyView, Filter, FilterMut, GrowableFilter, Persist};
/// use bugu::persist::FilterKind;
///
/// let mut grown = GrowableFilter::new(100)?;
/// grown.insert("apple")?;
/// let bytes = grown.to_bytes(); // or a file written by any front end
///
/// let mut filter = AnyFilter::from_bytes(&bytes)?;
/// assert_eq!(filter.kind(), FilterKind::Growable);
/// filter.insert("pear")?;
/// assert!(filter.contains("apple") && filter.contains("pear"));
/// assert_eq!(filter.summary().items, 2);
///
/// let view = AnyView::from_bytes(&bytes)?;
/// assert!(view.contains("apple") && !view.contains("pear"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum AnyFilterIn<S: AsRef<[u8]> = Vec<u8>> {
    /// A fixed-size filter (kind 1); boxed, so that the enum stays as small as a chain: a
    /// program that keeps many (a Redis key's value) pays for what it holds.
    Fixed(Box<CuckooFilterIn<S>>),
    /// A growable filter as a chain of tables (kind 2): always in memory.
    Chain(GrowableFilter),
    /// A growable filter in one table (kind 3); boxed, as its table's directory makes it far
    /// larger than a chain.
    OneTable(Box<ExpandingFilterIn<S>>),
}

/// A filter of any kind that owns its tables: see [`AnyFilterIn`].
pub type AnyFilter = AnyFilterIn<Vec<u8>>;

/// A read-only filter of any kind over borrowed bytes: see [`AnyFilterIn`].
pub type AnyView<'a> = AnyFilterIn<&'a [u8]>;

/// Copies for the two storages whose kinds copy (an owned copy of a table needs writable
/// buffers, which a storage in general cannot give).
macro_rules! clone_by_kind {
    ($($storage:ty),*) => {$(
        impl Clone for AnyFilterIn<$storage> {
            fn clone(&self) -> Self {
                match self {
                    Self::Fixed(filter) => Self::Fixed(filter.clone()),
                    Self::Chain(filter) => Self::Chain(filter.clone()),
                    Self::OneTable(filter) => Self::OneTable(filter.clone()),
                }
            }
        }
    )*};
}

clone_by_kind!(Vec<u8>, &[u8]);

/// Runs the same expression on whichever filter `$value` holds.
macro_rules! on_kind {
    ($value:expr, $filter:ident => $body:expr) => {
        match $value {
            AnyFilterIn::Fixed($filter) => $body,
            AnyFilterIn::Chain($filter) => $body,
            AnyFilterIn::OneTable($filter) => $body,
        }
    };
}

impl<S: AsRef<[u8]>> AnyFilterIn<S> {
    /// The kind of file this filter is saved as.
    pub fn kind(&self) -> FilterKind {
        match self {
            Self::Fixed(_) => FilterKind::Cuckoo,
            Self::Chain(_) => FilterKind::Growable,
            Self::OneTable(_) => FilterKind::Expanding,
        }
    }

    /// Items stored.
    pub fn len(&self) -> usize {
        on_kind!(self, filter => filter.len())
    }

    /// Whether no item is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether an add-if-absent insert was ever skipped because the item's fingerprint was
    /// present, so that removals may cause false negatives (see
    /// [`CuckooFilterIn::has_skipped_inserts`]).
    pub fn has_skipped_inserts(&self) -> bool {
        on_kind!(self, filter => filter.has_skipped_inserts())
    }

    /// Sizes, occupancy and rates, with the same meaning for every kind.
    pub fn summary(&self) -> Summary {
        on_kind!(self, filter => filter.summary())
    }

    /// The sizes in bytes of the heap blocks the filter holds (tables, the lists beside them,
    /// its box, and the working space inserts keep between calls: [`scratch_blocks`]), as an
    /// allocator that accounts per block counts them: the figure for Redis's `MEMORY USAGE`. A
    /// view's borrowed bytes are not its own and are left out.
    ///
    /// [`scratch_blocks`]: Self::scratch_blocks
    pub fn heap_blocks(&self) -> Vec<usize> {
        let mut blocks = self.scratch_blocks();
        match self {
            Self::Fixed(filter) => {
                blocks.extend(owned_table(filter));
                blocks.push(std::mem::size_of_val(&**filter));
            }
            Self::Chain(filter) => {
                blocks.extend(filter.levels().iter().filter_map(owned_table));
                blocks.push(std::mem::size_of_val(filter.levels()));
            }
            Self::OneTable(filter) => {
                blocks.extend(filter.heap_blocks());
                blocks.push(std::mem::size_of_val(&**filter));
            }
        }
        blocks
    }

    /// The heap blocks of [`heap_blocks`](Self::heap_blocks) that are working space an insert's
    /// path search keeps for the next one (none until an insert first finds both of its buckets
    /// full; none in a filter in one table): what a copy of the filter, or one read from its
    /// bytes, does not have.
    pub fn scratch_blocks(&self) -> Vec<usize> {
        match self {
            Self::Fixed(filter) => scratch_of(filter).into_iter().collect(),
            Self::Chain(filter) => filter.levels().iter().filter_map(scratch_of).collect(),
            Self::OneTable(_) => Vec::new(),
        }
    }
}

/// A fixed table's path-search working space, once an insert has made it.
fn scratch_of<S: AsRef<[u8]>>(filter: &CuckooFilterIn<S>) -> Option<usize> {
    Some(filter.scratch_bytes()).filter(|&bytes| bytes > 0)
}

/// A fixed table's own block: none when a view borrows it.
fn owned_table<S: AsRef<[u8]>>(filter: &CuckooFilterIn<S>) -> Option<usize> {
    filter.persisted().is_none().then(|| filter.memory_bytes())
}

impl<'a> AnyView<'a> {
    /// A view of the filter of any kind in `bytes`, validated as its kind's reader validates it:
    /// a fixed filter or one table read in place, a chain of tables read into memory.
    ///
    /// ```
    /// use bugu::{AnyView, CuckooFilter, Filter, FilterMut, Persist, PersistError};
    ///
    /// let mut filter = CuckooFilter::new(100)?;
    /// filter.insert(&7u32)?;
    /// let bytes = filter.to_bytes();
    /// assert!(AnyView::from_bytes(&bytes)?.contains(&7u32));
    /// assert!(matches!(AnyView::from_bytes(b"junk"), Err(PersistError::BadMagic)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, PersistError> {
        Ok(match FilterKind::detect(bytes)? {
            FilterKind::Cuckoo => Self::Fixed(Box::new(CuckooView::from_bytes(bytes)?)),
            FilterKind::Growable => Self::Chain(GrowableFilter::from_bytes(bytes)?),
            FilterKind::Expanding => Self::OneTable(Box::new(ExpandingView::from_bytes(bytes)?)),
        })
    }

    /// An owned filter with a copy of the tables, to change.
    pub fn to_filter(&self) -> Result<AnyFilter, PersistError> {
        Ok(match self {
            Self::Fixed(view) => AnyFilter::Fixed(Box::new(view.try_to_filter()?)),
            Self::Chain(filter) => AnyFilter::Chain(filter.clone()),
            Self::OneTable(view) => AnyFilter::OneTable(Box::new(view.to_filter()?)),
        })
    }
}

impl AnyFilter {
    /// Removes every item; the tables keep their sizes (see each kind's `clear`).
    pub fn clear(&mut self) {
        on_kind!(self, filter => filter.clear())
    }
}

impl<S: AsRef<[u8]>> Filter for AnyFilterIn<S> {
    fn seed(&self) -> u64 {
        on_kind!(self, filter => filter.seed())
    }

    fn hash_function(&self) -> HashFunction {
        on_kind!(self, filter => filter.hash_function())
    }

    fn key_encoding(&self) -> KeyEncoding {
        on_kind!(self, filter => filter.key_encoding())
    }

    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        on_kind!(self, filter => filter.contains_hash(hash))
    }

    fn count_hash(&self, hash: u64) -> usize {
        on_kind!(self, filter => filter.count_hash(hash))
    }

    fn contains_hash_batch(&self, hashes: &[u64]) -> Vec<bool> {
        on_kind!(self, filter => filter.contains_hash_batch(hashes))
    }

    fn contains_batch<K: Key>(&self, items: &[K]) -> Vec<bool> {
        on_kind!(self, filter => filter.contains_batch(items))
    }
}

impl FilterMut for AnyFilter {
    #[inline]
    fn insert_hash(&mut self, hash: u64) -> Result<(), InsertError> {
        on_kind!(self, filter => filter.insert_hash(hash))
    }

    fn remove_hash(&mut self, hash: u64) -> bool {
        on_kind!(self, filter => filter.remove_hash(hash))
    }

    fn insert_unique_hash(&mut self, hash: u64) -> Result<bool, InsertError> {
        on_kind!(self, filter => filter.insert_unique_hash(hash))
    }

    fn insert_hash_batch(&mut self, hashes: &[u64]) -> Vec<Result<(), InsertError>> {
        on_kind!(self, filter => filter.insert_hash_batch(hashes))
    }

    fn insert_batch<K: Key>(&mut self, items: &[K]) -> Vec<Result<(), InsertError>> {
        on_kind!(self, filter => filter.insert_batch(items))
    }
}

/// The file of whichever kind the filter is; reading takes any kind, by the header.
///
/// ```
/// use bugu::{AnyFilter, ExpandingFilter, Filter, FilterMut, Persist};
///
/// let mut one_table = ExpandingFilter::new(100)?;
/// one_table.insert("a")?;
/// let bytes = one_table.to_bytes();
/// let any = AnyFilter::read_from(&bytes[..])?;
/// assert!(matches!(any, AnyFilter::OneTable(_)) && any.contains("a"));
/// assert_eq!(any.to_bytes(), bytes);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl Persist for AnyFilter {
    fn serialized_len(&self) -> usize {
        on_kind!(self, filter => filter.serialized_len())
    }

    fn write_to<W: Write>(&self, writer: W) -> io::Result<()> {
        on_kind!(self, filter => filter.write_to(writer))
    }

    fn read_counted<R: Read>(mut reader: R, len: Option<u64>) -> Result<(Self, u64), PersistError> {
        // The header names the kind: read it, then hand it back to the kind's reader in front of
        // the rest of the stream.
        let mut header = Vec::with_capacity(crate::persist::HEADER_LEN);
        reader.by_ref().take(crate::persist::HEADER_LEN as u64).read_to_end(&mut header)?;
        let kind = FilterKind::detect(&header)?;
        let stream = header.as_slice().chain(reader);
        Ok(match kind {
            FilterKind::Cuckoo => {
                let (filter, read) = CuckooFilter::read_counted(stream, len)?;
                (Self::Fixed(Box::new(filter)), read)
            }
            FilterKind::Growable => {
                let (filter, read) = GrowableFilter::read_counted(stream, len)?;
                (Self::Chain(filter), read)
            }
            FilterKind::Expanding => {
                let (filter, read) = ExpandingFilter::read_counted(stream, len)?;
                (Self::OneTable(Box::new(filter)), read)
            }
        })
    }

    /// Validates fixed filters in place before copying them, as [`CuckooFilter::from_bytes`]
    /// does.
    fn from_bytes(bytes: &[u8]) -> Result<Self, PersistError> {
        Ok(match FilterKind::detect(bytes)? {
            FilterKind::Cuckoo => Self::Fixed(Box::new(CuckooFilter::from_bytes(bytes)?)),
            FilterKind::Growable => Self::Chain(GrowableFilter::from_bytes(bytes)?),
            FilterKind::Expanding => Self::OneTable(Box::new(ExpandingFilter::from_bytes(bytes)?)),
        })
    }
}

impl From<CuckooFilter> for AnyFilter {
    fn from(filter: CuckooFilter) -> Self {
        Self::Fixed(Box::new(filter))
    }
}

impl From<GrowableFilter> for AnyFilter {
    fn from(filter: GrowableFilter) -> Self {
        Self::Chain(filter)
    }
}

impl From<ExpandingFilter> for AnyFilter {
    fn from(filter: ExpandingFilter) -> Self {
        Self::OneTable(Box::new(filter))
    }
}
