//! Files: atomic saves (a temporary file in the same directory, written, flushed to disk, renamed
//! over the destination, then the directory flushed) and loads.
//!
//! A reader of the destination, or a process that crashes and restarts, sees either the old
//! complete file or the new complete file, never a mix: `rename` replaces the name atomically,
//! and the data is on disk before the name points to it. A crash can leave a temporary file
//! (`.NAME.PID.N.tmp`) behind, which is never mistaken for the filter.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::filter::{CuckooFilter, CuckooFilterIn};

use super::error::PersistError;
use super::reader::read_cuckoo;

/// Buffer size for file writes and reads.
const BUFFER: usize = 1 << 16;

/// Replaces `path` atomically with what `write` writes: a temporary file in the same directory
/// is written, synced, renamed over `path`, and the directory synced (on Unix). On error the
/// temporary file is removed and `path` is untouched.
pub(crate) fn save_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    let (temp_path, file) = create_temp(dir, name)?;
    let written = (|| {
        let mut writer = BufWriter::with_capacity(BUFFER, file);
        write(&mut writer)?;
        writer.flush()?;
        let file = writer.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&temp_path, path)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&temp_path);
        return Err(e);
    }
    sync_dir(dir)
}

/// Creates a new temporary file next to the destination.
fn create_temp(dir: &Path, name: &std::ffi::OsStr) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // Keep the name short enough for any file system (255 bytes), whatever the destination's.
    let stem: String = name.to_string_lossy().chars().take(100).collect();
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut temp_name = OsString::from(".");
        temp_name.push(format!("{stem}.{}.{n}.tmp", std::process::id()));
        let temp_path = dir.join(temp_name);
        match OpenOptions::new().write(true).create_new(true).open(&temp_path) {
            Ok(file) => return Ok((temp_path, file)),
            // Left by a crashed process that had our id: take the next number.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
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
    /// too (the new filter is in place, but the rename may not survive a power loss). The new
    /// file has default permissions. A [`CuckooView`](crate::CuckooView) saves the filter it
    /// reads (a copy of a memory-mapped file, say).
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
        let (filter, consumed) = read_cuckoo(reader, Some(len))?;
        if consumed < len {
            return Err(PersistError::TrailingBytes(len - consumed));
        }
        Ok(filter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FilterMut;

    fn scratch_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("bugu-file-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn save_replaces_and_leaves_no_temporary_file() {
        let dir = scratch_dir("replace");
        let path = dir.join("f.bugu");
        let mut filter = CuckooFilter::new(100).unwrap();
        filter.save(&path).unwrap();
        filter.insert("x").unwrap();
        filter.save(&path).unwrap();
        assert_eq!(fs::read(&path).unwrap(), filter.to_bytes());
        let names: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [OsString::from("f.bugu")]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_the_destination_and_no_temporary_file() {
        let dir = scratch_dir("fail");
        let path = dir.join("f.bugu");
        fs::write(&path, b"old").unwrap();
        let err = save_atomically(&path, |w| {
            w.write_all(b"partial")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_path_without_a_file_name_is_refused() {
        let filter = CuckooFilter::new(10).unwrap();
        assert_eq!(filter.save("/").unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert_eq!(filter.save("").unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn load_reports_missing_files_and_trailing_bytes() {
        let dir = scratch_dir("load");
        let path = dir.join("f.bugu");
        assert!(
            matches!(CuckooFilter::load(&path), Err(PersistError::Io(e)) if e.kind() == io::ErrorKind::NotFound)
        );
        let mut bytes = CuckooFilter::new(10).unwrap().to_bytes();
        bytes.push(0);
        fs::write(&path, &bytes).unwrap();
        assert!(matches!(CuckooFilter::load(&path), Err(PersistError::TrailingBytes(1))));
        // The file's length is known: a section that does not fit is refused before it is read.
        fs::write(&path, &bytes[..bytes.len() - 2]).unwrap();
        let short = bytes.len() as u64 - 2;
        assert!(
            matches!(CuckooFilter::load(&path), Err(PersistError::Truncated { offset, .. }) if offset == short)
        );
        fs::write(&path, &bytes[..100]).unwrap();
        assert!(matches!(
            CuckooFilter::load(&path),
            Err(PersistError::Truncated { part: "payload", offset: 100 })
        ));
        fs::remove_dir_all(&dir).unwrap();
    }
}
