//! The concurrent filter's persistence: it has no kind of its own. It writes the bytes of the
//! equivalent cuckoo filter (kind 1), streamed from its shared table while writers wait (no copy
//! of the table, so writing cannot fail for memory), so that every reader takes them; it reads
//! any cuckoo filter file and copies its table into shared memory.

use std::io::{self, Read, Write};

use crate::concurrent::ConcurrentFilter;
use crate::filter::CuckooFilter;
use crate::membership::Filter;
use crate::table::AllocFailed;

use super::error::PersistError;
use super::format::{Flags, Section, cuckoo_file_len_for, tail_len};
use super::kind::FilterKind;
use super::persistable::Persist;
use super::writer::Encoder;

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
/// assert_eq!(filter.to_bytes(), filter.to_filter()?.to_bytes());
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl Persist for ConcurrentFilter {
    fn serialized_len(&self) -> usize {
        cuckoo_file_len_for(self.config())
    }

    /// Writes the table as it is at one moment: writers wait until it is written (lookups do
    /// not), so a slow `writer` holds them up; to release them sooner, write a copy taken with
    /// [`to_filter`](ConcurrentFilter::to_filter).
    fn write_to<W: Write>(&self, writer: W) -> io::Result<()> {
        let config = *self.config();
        let payload_len = config.geometry().payload_len().expect("a built filter's table has a length");
        let quiet = self.quiet();
        let skipped_inserts = quiet.has_skipped_inserts();
        let section = Section {
            config,
            len: quiet.len(),
            skipped_inserts,
            payload_len,
            tail_len: tail_len(payload_len),
        };
        let flags = Flags { key_encoding: self.key_encoding(), skipped_inserts };
        let mut encoder = Encoder::new(writer, FilterKind::Cuckoo, flags)?;
        encoder.section_with(&section, |encoder| quiet.stream_payload(|chunk| encoder.write_all(chunk)))?;
        encoder.finish().map(drop)
    }

    fn read_counted<R: Read>(reader: R, len: Option<u64>) -> Result<(Self, u64), PersistError> {
        let (filter, consumed) = CuckooFilter::read_counted(reader, len)?;
        let shared = ConcurrentFilter::copy_of(&filter)
            .map_err(|AllocFailed { bytes }| PersistError::OutOfMemory { bytes })?;
        Ok((shared, consumed))
    }
}
