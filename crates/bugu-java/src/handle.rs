//! What a Java filter object points to: one of the core's filters behind a handle, and the few
//! operations the binding makes on it, each written once for both kinds.

use std::sync::{Mutex, MutexGuard, PoisonError};

use bugu::{AnyFilter, ConcurrentFilter, Filter, FilterMut, InsertError, Persist};

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
}

/// The operations on a filter the binding needs, by hash, so that each is written once for a
/// shared filter (`&self` updates) and a locked one (`&mut self` updates).
pub(crate) trait HashOps {
    fn hash(&self, key: Key<'_>) -> u64;
    /// Stores the item; with `unique`, only if it is not already present. Whether it was stored.
    fn insert(&mut self, hash: u64, unique: bool) -> Result<bool, InsertError>;
    fn contains(&self, hash: u64) -> bool;
    fn remove(&mut self, hash: u64) -> bool;
    fn count(&self, hash: u64) -> usize;
    fn len(&self) -> usize;
}

fn hash_key<F: Filter>(filter: &F, key: Key<'_>) -> u64 {
    match key {
        Key::Bytes(bytes) => filter.hash_of_bytes(bytes),
        Key::Long(value) => filter.hash_of(&value),
    }
}

/// A shared filter seen through [`HashOps`].
struct SharedOps<'a>(&'a ConcurrentFilter);

impl HashOps for SharedOps<'_> {
    fn hash(&self, key: Key<'_>) -> u64 {
        hash_key(self.0, key)
    }
    fn insert(&mut self, hash: u64, unique: bool) -> Result<bool, InsertError> {
        if unique { self.0.insert_unique_hash(hash) } else { self.0.insert_hash(hash).map(|()| true) }
    }
    fn contains(&self, hash: u64) -> bool {
        self.0.contains_hash(hash)
    }
    fn remove(&mut self, hash: u64) -> bool {
        self.0.remove_hash(hash)
    }
    fn count(&self, hash: u64) -> usize {
        self.0.count_hash(hash)
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

impl HashOps for AnyFilter {
    fn hash(&self, key: Key<'_>) -> u64 {
        hash_key(self, key)
    }
    fn insert(&mut self, hash: u64, unique: bool) -> Result<bool, InsertError> {
        if unique { self.insert_unique_hash(hash) } else { self.insert_hash(hash).map(|()| true) }
    }
    fn contains(&self, hash: u64) -> bool {
        self.contains_hash(hash)
    }
    fn remove(&mut self, hash: u64) -> bool {
        self.remove_hash(hash)
    }
    fn count(&self, hash: u64) -> usize {
        self.count_hash(hash)
    }
    fn len(&self) -> usize {
        AnyFilter::len(self)
    }
}

impl Handle {
    /// Runs `op` on the filter: a shared one as it is, a locked one under its lock (a call that
    /// panicked while holding it left the filter as consistent as any failed call does).
    pub(crate) fn with<R>(&self, op: impl FnOnce(&mut dyn HashOps) -> R) -> R {
        match self {
            Handle::Shared(filter) => op(&mut SharedOps(filter)),
            Handle::Locked(filter) => op(&mut *lock(filter)),
        }
    }

    /// The filter's bytes in the persistent format.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        match self {
            Handle::Shared(filter) => filter.to_bytes(),
            Handle::Locked(filter) => lock(filter).to_bytes(),
        }
    }

    /// Writes the filter to `path` atomically (a temporary file renamed over it).
    pub(crate) fn save(&self, path: &std::path::Path) -> std::io::Result<()> {
        match self {
            Handle::Shared(filter) => filter.save(path),
            Handle::Locked(filter) => lock(filter).save(path),
        }
    }
}

fn lock(filter: &Mutex<AnyFilter>) -> MutexGuard<'_, AnyFilter> {
    filter.lock().unwrap_or_else(PoisonError::into_inner)
}
