//! What a Java filter object points to: one of the core's filters behind a handle, and the few
//! operations the binding makes on it, each written once for both kinds.

use std::sync::{Mutex, MutexGuard, PoisonError};

use bugu::{AnyFilter, AnyView, ConcurrentFilter, Filter, FilterMut, InsertError, Persist};
use memmap2::Mmap;

use crate::throw::Thrown;

/// A key as Java gives it: a `String`'s UTF-8 bytes or a `byte[]`, or an `int`/`long` widened to
/// a 64-bit integer (hashed as its 8 bytes little-endian, as everywhere in bugu).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Key<'a> {
    Bytes(&'a [u8]),
    Long(i64),
}

/// The filter behind a Java object.
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "a handle is boxed once, behind its Java object's address: a second box would cost every call a pointer chase"
)]
pub(crate) enum Handle {
    /// `CuckooFilter`: a fixed-size filter that any number of threads use at once.
    Shared(ConcurrentFilter),
    /// `GrowableFilter`: a filter that grows, one call at a time.
    Locked(Mutex<AnyFilter>),
    /// `FilterView`: a filter file mapped read-only, queried in place.
    View(MappedFilter),
}

self_cell::self_cell!(
    /// A file's map and the view that borrows it, in one value (the map must outlive the view).
    pub(crate) struct MappedFilter {
        owner: Mmap,
        #[not_covariant]
        dependent: AnyView,
    }
);

impl std::fmt::Debug for MappedFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.with_dependent(|_, view| f.debug_tuple("MappedFilter").field(&view.kind()).finish())
    }
}

/// The queries the binding makes, by hash, written once for every filter a handle holds.
pub(crate) trait ReadOps {
    fn hash(&self, key: Key<'_>) -> u64;
    fn contains(&self, hash: u64) -> bool;
    /// Lookups of many integer keys through the library's batch kernel, which fetches each
    /// key's buckets ahead of comparing them: one by one from Java, every call's way in and out
    /// of native code orders memory and so no two lookups' reads overlap.
    fn contains_longs(&self, keys: &[i64]) -> Vec<bool>;
    /// The same for keys given as bytes.
    fn contains_byte_keys(&self, keys: &[&[u8]]) -> Vec<bool>;
    fn count(&self, hash: u64) -> usize;
    fn len(&self) -> usize;
}

/// The updates, written once for a shared filter (`&self` updates) and a locked one (`&mut self`).
pub(crate) trait HashOps: ReadOps {
    /// Stores the item; with `unique`, only if it is not already present. Whether it was stored.
    fn insert(&mut self, hash: u64, unique: bool) -> Result<bool, InsertError>;
    fn remove(&mut self, hash: u64) -> bool;
}

/// [`ReadOps`] of any filter of the core, by its [`Filter`] methods.
macro_rules! read_ops {
    ($type:ty, $filter:ident => $inner:expr) => {
        impl ReadOps for $type {
            fn hash(&self, key: Key<'_>) -> u64 {
                let $filter = self;
                hash_key($inner, key)
            }
            fn contains(&self, hash: u64) -> bool {
                let $filter = self;
                $inner.contains_hash(hash)
            }
            fn count(&self, hash: u64) -> usize {
                let $filter = self;
                $inner.count_hash(hash)
            }
            fn contains_longs(&self, keys: &[i64]) -> Vec<bool> {
                let $filter = self;
                $inner.contains_batch(keys)
            }
            fn contains_byte_keys(&self, keys: &[&[u8]]) -> Vec<bool> {
                let $filter = self;
                $inner.contains_batch(keys)
            }
            fn len(&self) -> usize {
                let $filter = self;
                $inner.len()
            }
        }
    };
}

fn hash_key<F: Filter>(filter: &F, key: Key<'_>) -> u64 {
    match key {
        Key::Bytes(bytes) => filter.hash_of_bytes(bytes),
        Key::Long(value) => filter.hash_of(&value),
    }
}

/// A shared filter seen through [`HashOps`].
struct SharedOps<'a>(&'a ConcurrentFilter);

read_ops!(SharedOps<'_>, shared => shared.0);
read_ops!(AnyFilter, filter => filter);
read_ops!(AnyView<'_>, view => view);

impl HashOps for SharedOps<'_> {
    fn insert(&mut self, hash: u64, unique: bool) -> Result<bool, InsertError> {
        if unique { self.0.insert_unique_hash(hash) } else { self.0.insert_hash(hash).map(|()| true) }
    }
    fn remove(&mut self, hash: u64) -> bool {
        self.0.remove_hash(hash)
    }
}

impl HashOps for AnyFilter {
    fn insert(&mut self, hash: u64, unique: bool) -> Result<bool, InsertError> {
        if unique { self.insert_unique_hash(hash) } else { self.insert_hash(hash).map(|()| true) }
    }
    fn remove(&mut self, hash: u64) -> bool {
        self.remove_hash(hash)
    }
}

impl Handle {
    /// Runs a query on the filter: a shared one as it is, a locked one under its lock (a call
    /// that panicked while holding it left the filter as consistent as any failed call does), a
    /// mapped file in place.
    pub(crate) fn read<R>(&self, op: impl FnOnce(&dyn ReadOps) -> R) -> R {
        match self {
            Handle::Shared(filter) => op(&SharedOps(filter)),
            Handle::Locked(filter) => op(&*lock(filter)),
            Handle::View(file) => file.with_dependent(|_, view| op(view)),
        }
    }

    /// Runs an update on the filter; a mapped file refuses it.
    pub(crate) fn update<R>(&self, op: impl FnOnce(&mut dyn HashOps) -> R) -> Result<R, Thrown> {
        match self {
            Handle::Shared(filter) => Ok(op(&mut SharedOps(filter))),
            Handle::Locked(filter) => Ok(op(&mut *lock(filter))),
            Handle::View(_) => Err(Thrown::read_only()),
        }
    }

    /// The filter's bytes in the persistent format.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        match self {
            Handle::Shared(filter) => filter.to_bytes(),
            Handle::Locked(filter) => lock(filter).to_bytes(),
            Handle::View(file) => file.borrow_owner().to_vec(),
        }
    }

    /// Writes the filter to `path` atomically (a temporary file renamed over it).
    pub(crate) fn save(&self, path: &std::path::Path) -> Result<(), Thrown> {
        let saved = match self {
            Handle::Shared(filter) => filter.save(path),
            Handle::Locked(filter) => lock(filter).save(path),
            Handle::View(file) => {
                AnyFilter::from_bytes(file.borrow_owner()).map_err(crate::throw::bugu_exception)?.save(path)
            }
        };
        saved.map_err(|error| crate::throw::file_failure(path, error))
    }
}

fn lock(filter: &Mutex<AnyFilter>) -> MutexGuard<'_, AnyFilter> {
    filter.lock().unwrap_or_else(PoisonError::into_inner)
}
