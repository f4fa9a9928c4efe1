//! Files: atomic saves (a temporary file in the same directory, written, flushed to disk, renamed
//! over the destination, then the directory flushed) and loads.
//!
//! A reader of the destination, or a process that crashes and restarts, sees either the old
//! complete file or the new complete file, never a mix: `rename` replaces the name atomically,
//! and the data is on disk before the name points to it. A crash can leave a temporary file
//! (`.NAME.bugu-tmp-PID-N`) behind, which is never mistaken for the filter and which the next
//! save of the same file removes. What a save keeps of the old file (its links, permissions and
//! owner) and what it refuses to replace is in `file/target.rs`.

mod target;

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::Path;

use crate::filter::{CuckooFilter, CuckooFilterIn};

use super::error::PersistError;
use super::reader::{read_cuckoo, whole};
use target::Destination;

/// Buffer size for file writes and reads.
const BUFFER: usize = 1 << 16;

/// Replaces the file `path` names (through any symbolic links) atomically with what `write`
/// writes: a temporary file in the same directory is written, given the old file's permissions
/// and owner, synced, renamed over it, and the directory synced (on Unix). Temporary files that
/// killed saves of the same file left behind are removed first. On error the temporary file is
/// removed and the destination is untouched; a directory, a special file or a read-only file is
/// refused before anything is written.
pub(crate) fn save_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<&mut File>) -> io::Result<()>,
) -> io::Result<()> {
    let destination = Destination::of(path)?;
    destination.remove_stale_temps();
    let mut temp = destination.create_temp()?;
    {
        let mut writer = BufWriter::with_capacity(BUFFER, &mut temp.file);
        write(&mut writer)?;
        writer.flush()?;
    }
    destination.carry_over(&temp.file)?;
    temp.file.sync_all()?;
    temp.persist(&destination.path)?;
    sync_dir(&destination.dir)
}

/// Makes the rename durable: on Unix a directory's entries are flushed with it.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

/// Opens a file for reading; returns it buffered, with its length.
pub(crate) fn open(path: &Path) -> io::Result<(BufReader<File>, u64)> {
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    Ok((BufReader::with_capacity(BUFFER, file), len))
}

impl<S: AsRef<[u8]>> CuckooFilterIn<S> {
    /// Saves the filter to `path` atomically: it writes a temporary file in the same directory,
    /// flushes it to disk, renames it over `path` and flushes the directory. Whatever happens —
    /// a crash, a full disk, a concurrent reader — `path` holds either its old content or the
    /// whole new filter, never part of it. An error before the rename leaves `path` untouched
    /// and removes the temporary file; an error flushing the directory after it is reported
    /// too (the new filter is in place, but the rename may not survive a power loss). A
    /// [`CuckooView`](crate::CuckooView) saves the filter it reads (a copy of a memory-mapped
    /// file, say).
    ///
    /// The save respects the file it replaces: a symbolic link is followed and its target
    /// replaced (the link stays a link); the new file gets the old one's permissions, and its
    /// owner and group where the process may set them (a new file gets the default
    /// permissions). It refuses, with the destination untouched, a directory
    /// ([`io::ErrorKind::IsADirectory`]), a special file ([`io::ErrorKind::InvalidInput`]) and a
    /// read-only file ([`io::ErrorKind::PermissionDenied`]; a rename would replace it otherwise).
    /// The temporary file is named `.NAME.bugu-tmp-PID-N` after the destination; one that a
    /// killed save left behind is removed by the next save of the same file. Saves of one file
    /// from several processes at once are each atomic, but the last rename wins: callers that
    /// read, change and save a file take a lock of their own around the whole (the `bugu`
    /// command does).
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut};
    ///
    /// let dir = std::env::temp_dir().join(format!("bugu-save-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let path = dir.join("seen.bugu");
    ///
    /// let mut filter = CuckooFilter::new(1_000)?;
    /// filter.insert("apple")?;
    /// filter.save(&path)?;
    /// assert!(CuckooFilter::load(&path)?.contains("apple"));
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn save(&self, path: impl AsRef<Path>) -> io::Result<()> {
        save_atomically(path.as_ref(), |writer| self.write_to(writer))
    }
}

impl CuckooFilter {
    /// Loads a filter saved by [`save`](CuckooFilterIn::save) (or any file holding exactly the
    /// bytes of [`to_bytes`](CuckooFilterIn::to_bytes)), validating every byte as [`from_bytes`](Self::from_bytes)
    /// does, in one pass and without a second copy: the file's length bounds what is allocated.
    /// To query a large file without loading it, memory-map it and use a
    /// [`CuckooView`](crate::CuckooView).
    ///
    /// ```
    /// use bugu::{CuckooFilter, PersistError};
    ///
    /// let path = std::env::temp_dir().join(format!("bugu-load-doc-{}", std::process::id()));
    /// std::fs::write(&path, b"hello")?;
    /// assert!(matches!(CuckooFilter::load(&path), Err(PersistError::BadMagic)));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<Self, PersistError> {
        let (reader, len) = open(path.as_ref())?;
        whole(read_cuckoo, reader, len)
    }
}

#[cfg(all(test, unix))]
mod tests;
