//! The concurrent filter's persistence: it has no kind of its own. It writes the bytes of the
//! equivalent cuckoo filter (kind 1), from a copy of its table taken at one moment, so that every
//! reader takes them; it reads any cuckoo filter file and copies its table into shared memory.

use std::io::{self, Read, Write};

use crate::concurrent::{ConcurrentFilter, out_of_memory};
use crate::filter::CuckooFilter;
use crate::table::AllocFailed;

use super::error::PersistError;
use super::format::cuckoo_file_len_for;
use super::persistable::Persist;

/// The bytes of a [`CuckooFilter`] with the same table: a file either type loads.
///
/// ```
/// use bugu::{ConcurrentFilter, CuckooFilter, Filter, Persist};
///
/// let path = std::env::temp_dir().join(format!("bugu-concurrent-doc-{}.bugu", std::process::id()));
/// let filter = ConcurrentFilter::new(1_000)?;
/// filter.insert("apple")?;
/// filter.save(&path)?;
/// assert!(ConcurrentFilter::load(&path)?.contains("apple"));
/// assert!(CuckooFilter::load(&path)?.contains("apple"));
/// assert_eq!(filter.serialized_len(), std::fs::metadata(&path)?.len() as usize);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl Persist for ConcurrentFilter {
    fn serialized_len(&self) -> usize {
        cuckoo_file_len_for(self.config())
    }

    /// Writes a copy of the table taken as [`to_filter`](ConcurrentFilter::to_filter) takes it
    /// (writers wait while it is copied); an [`io::ErrorKind::OutOfMemory`] error if the copy
    /// cannot be allocated.
    fn write_to<W: Write>(&self, writer: W) -> io::Result<()> {
        let snapshot = self
            .snapshot()
            .map_err(|failed| io::Error::new(io::ErrorKind::OutOfMemory, out_of_memory(failed)))?;
        snapshot.write_to(writer)
    }

    fn read_counted<R: Read>(reader: R, len: Option<u64>) -> Result<(Self, u64), PersistError> {
        let (filter, consumed) = CuckooFilter::read_counted(reader, len)?;
        let shared = ConcurrentFilter::copy_of(&filter)
            .map_err(|AllocFailed { bytes }| PersistError::OutOfMemory { bytes })?;
        Ok((shared, consumed))
    }
}
