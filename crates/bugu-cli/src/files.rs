//! Filter files: any file the library writes (a fixed-size filter, a growable one as a chain of
//! tables or in one table), opened whole for changes and saved atomically, or memory-mapped for
//! queries (a fixed-size filter and one grown in one table are then read in place through their
//! zero-copy views).
//!
//! A change is a read, a change in memory and a save, so two commands changing one file at once
//! would each save their own change and lose the other's. Commands that change a file hold an
//! advisory lock on it for the whole time ([`load_locked`]). The lock is on the filter
//! file itself rather than on a separate `FILE.lock`: a lock file would be left behind in the
//! user's directory, need write permission there, and two paths to one file through a symbolic
//! link would name two different lock files. The catch is that a save renames a new file over
//! the name, so a command that waited for the lock may hold it on a file that is no longer the
//! filter: after locking, it checks that the name still leads to the file it locked, and
//! otherwise locks the new one. Queries need no lock: a save replaces the file whole.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use bugu::{AnyFilter, AnyView, Persist, PersistError};
use memmap2::Mmap;

use crate::error::Failure;

/// The advisory lock of a filter file being changed, released when dropped.
pub(crate) struct Lock {
    /// The locked file: closing it releases the lock.
    file: File,
}

impl Lock {
    /// Waits for the lock on the file `path` names, saying so on standard error if it has to
    /// wait (and `announce`), and returns it with the file open (at its start) for reading.
    fn take(path: &Path, announce: bool) -> Result<Self, Failure> {
        let mut said_waiting = false;
        loop {
            let file = open_file(path)?;
            match fs4::FileExt::try_lock(&file) {
                Ok(()) => {}
                Err(fs4::TryLockError::WouldBlock) => {
                    if announce && !said_waiting {
                        eprintln!("bugu: waiting for lock on {}", path.display());
                        said_waiting = true;
                    }
                    fs4::FileExt::lock(&file).map_err(|error| lock_failure(path, &error))?;
                }
                Err(fs4::TryLockError::Error(error)) => return Err(lock_failure(path, &error)),
            }
            if still_named(path, &file)? {
                return Ok(Self { file });
            }
            // The name now leads to a newer file, saved while we waited: lock that one.
        }
    }
}

fn lock_failure(path: &Path, error: &std::io::Error) -> Failure {
    Failure::message(format!("cannot lock the file: {error}")).in_file(path)
}

/// Whether `path` still names the file `file` is open on.
fn still_named(path: &Path, file: &File) -> Result<bool, Failure> {
    use std::os::unix::fs::MetadataExt;
    let open = file.metadata().map_err(|error| Failure::io(path, &error))?;
    match std::fs::metadata(path) {
        Ok(named) => Ok((named.dev(), named.ino()) == (open.dev(), open.ino())),
        // Removed while we waited: open (and fail on) the name again.
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(Failure::io(path, &error)),
    }
}

/// Opens a filter file for reading; a directory is refused by name (mapping one fails with a
/// puzzling "No such device").
fn open_file(path: &Path) -> Result<File, Failure> {
    let file = File::open(path).map_err(|error| Failure::io(path, &error))?;
    let meta = file.metadata().map_err(|error| Failure::io(path, &error))?;
    if meta.is_dir() {
        return Err(Failure::io(path, &std::io::Error::from(std::io::ErrorKind::IsADirectory)));
    }
    Ok(file)
}

/// Reads and checks a filter file.
pub(crate) fn load(path: &Path) -> Result<AnyFilter, Failure> {
    read(path, open_file(path)?)
}

/// Takes the file's lock (waiting for it, and saying so if `announce`), then reads and checks
/// the filter: the caller changes it and saves it while holding the lock.
pub(crate) fn load_locked(path: &Path, announce: bool) -> Result<(AnyFilter, Lock), Failure> {
    let lock = Lock::take(path, announce)?;
    let filter = read(path, &lock.file)?;
    Ok((filter, lock))
}

/// Reads and checks the filter in an open file.
fn read(path: &Path, mut file: impl Read) -> Result<AnyFilter, Failure> {
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(|error| Failure::io(path, &error))?;
    AnyFilter::from_bytes(&bytes).map_err(|error| persist_failure(path, bytes.len(), &error))
}

/// Saves atomically: the file is replaced whole or not at all.
pub(crate) fn save(filter: &AnyFilter, path: &Path) -> Result<(), Failure> {
    filter.save(path).map_err(|error| Failure::io(path, &error))
}

/// A filter file mapped for queries.
pub(crate) struct Mapped {
    map: Mmap,
}

impl Mapped {
    pub(crate) fn open(path: &Path) -> Result<Self, Failure> {
        let file = open_file(path)?;
        let len = file.metadata().map_err(|error| Failure::io(path, &error))?.len();
        if len == 0 {
            return Err(Failure::message("empty file, not a bugu filter").in_file(path));
        }
        // SAFETY: the map is read only; the file may be replaced by a save (which renames a new
        // file over it, leaving this mapping on the old one) but is never written in place by
        // bugu. Another program truncating it while mapped is outside what bugu can guard.
        let map = unsafe { Mmap::map(&file) }.map_err(|error| Failure::io(path, &error))?;
        Ok(Self { map })
    }

    /// The filter, checked (the file is `path`, for errors): a fixed filter or one table read
    /// in place, a chain of tables read into memory.
    pub(crate) fn view(&self, path: &Path) -> Result<AnyView<'_>, Failure> {
        AnyView::from_bytes(&self.map).map_err(|error| persist_failure(path, self.map.len(), &error))
    }
}

/// A reader's error, in words for a person.
fn persist_failure(path: &Path, len: usize, error: &PersistError) -> Failure {
    let what = match error {
        PersistError::BadMagic => "not a bugu filter file".to_string(),
        PersistError::Truncated { .. } => format!("truncated or corrupt bugu filter ({len} bytes): {error}"),
        _ => format!("corrupt bugu filter: {error}"),
    };
    Failure::message(what).in_file(path)
}
