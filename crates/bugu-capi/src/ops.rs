//! The operations every handle shares, over a hash computed by the handle's own filter (so its
//! seed and key encoding apply).

use bugu::{ConcurrentFilter, Filter, FilterMut, InsertError};

use crate::args;
use crate::status::Outcome;

/// Hashing and queries.
pub(crate) trait Target {
    fn hash_bytes(&self, bytes: &[u8]) -> u64;
    fn hash_u64(&self, key: u64) -> u64;
    fn hash_i64(&self, key: i64) -> u64;
    fn query_contains(&self, hash: u64) -> bool;
    fn query_count(&self, hash: u64) -> usize;
    /// The filter's batched (pipelined) lookup.
    fn query_contains_batch(&self, hashes: &[u64]) -> Vec<bool>;
}

/// Updates.
pub(crate) trait Update: Target {
    fn add(&mut self, hash: u64) -> Result<(), InsertError>;
    fn add_unique(&mut self, hash: u64) -> Result<bool, InsertError>;
    fn delete(&mut self, hash: u64) -> bool;
    /// The filter's batched insert: every hash tried, one result each.
    fn add_batch(&mut self, hashes: &[u64]) -> Vec<Result<(), InsertError>>;
}

/// Every filter answers queries through `Filter`, borrowed shared (`target!(&)`) or exclusively
/// (`target!(&mut)`, the borrow updates take).
macro_rules! target {
    ($($borrow:tt)+) => {
        impl<F: Filter> Target for $($borrow)+ F {
            fn hash_bytes(&self, bytes: &[u8]) -> u64 {
                self.hash_of_bytes(bytes)
            }
            fn hash_u64(&self, key: u64) -> u64 {
                self.hash_of(&key)
            }
            fn hash_i64(&self, key: i64) -> u64 {
                self.hash_of(&key)
            }
            fn query_contains(&self, hash: u64) -> bool {
                self.contains_hash(hash)
            }
            fn query_count(&self, hash: u64) -> usize {
                self.count_hash(hash)
            }
            fn query_contains_batch(&self, hashes: &[u64]) -> Vec<bool> {
                self.contains_hash_batch(hashes)
            }
        }
    };
}

target!(&);
target!(&mut);

impl Update for &ConcurrentFilter {
    fn add(&mut self, hash: u64) -> Result<(), InsertError> {
        self.insert_hash(hash)
    }
    fn add_unique(&mut self, hash: u64) -> Result<bool, InsertError> {
        self.insert_unique_hash(hash)
    }
    fn delete(&mut self, hash: u64) -> bool {
        self.remove_hash(hash)
    }
    fn add_batch(&mut self, hashes: &[u64]) -> Vec<Result<(), InsertError>> {
        self.insert_hash_batch(hashes)
    }
}

/// The filters changed through an exclusive borrow (every one but `ConcurrentFilter`).
impl<F: FilterMut> Update for &mut F {
    fn add(&mut self, hash: u64) -> Result<(), InsertError> {
        self.insert_hash(hash)
    }
    fn add_unique(&mut self, hash: u64) -> Result<bool, InsertError> {
        self.insert_unique_hash(hash)
    }
    fn delete(&mut self, hash: u64) -> bool {
        self.remove_hash(hash)
    }
    fn add_batch(&mut self, hashes: &[u64]) -> Vec<Result<(), InsertError>> {
        self.insert_hash_batch(hashes)
    }
}

pub(crate) fn insert(mut target: impl Update, hash: u64) -> Outcome {
    Ok(target.add(hash)?)
}

/// # Safety
/// `added` is NULL or writable.
pub(crate) unsafe fn insert_unique(mut target: impl Update, hash: u64, added: *mut bool) -> Outcome {
    let was_added = target.add_unique(hash)?;
    // SAFETY: the caller's promise.
    unsafe { args::write_optional(added, was_added) };
    Ok(())
}

/// # Safety
/// `found` is NULL (refused) or writable.
pub(crate) unsafe fn contains(target: impl Target, hash: u64, found: *mut bool) -> Outcome {
    // SAFETY: the caller's promise.
    unsafe { args::write(found, target.query_contains(hash), "the out-parameter `found`") }
}

/// # Safety
/// `count` is NULL (refused) or writable.
pub(crate) unsafe fn count(target: impl Target, hash: u64, count: *mut usize) -> Outcome {
    // SAFETY: the caller's promise.
    unsafe { args::write(count, target.query_count(hash), "the out-parameter `count`") }
}

/// # Safety
/// `removed` is NULL or writable.
pub(crate) unsafe fn remove(mut target: impl Update, hash: u64, removed: *mut bool) -> Outcome {
    let was_removed = target.delete(hash);
    // SAFETY: the caller's promise.
    unsafe { args::write_optional(removed, was_removed) };
    Ok(())
}
