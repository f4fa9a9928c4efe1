//! Filter files: any file the library writes (a fixed-size filter, a growable one as a chain of
//! tables or in one table), opened whole for changes and saved atomically, or memory-mapped for
//! queries (a fixed-size filter and one grown in one table are then read in place through their
//! zero-copy views).
//!
//! A change is a read, a change in memory and a save, so two commands changing one file at once
//! would each save their own change and lose the other's. Commands that change a file hold an
//! advisory lock on it for the whole time ([`Owned::load_locked`]). The lock is on the filter
//! file itself rather than on a separate `FILE.lock`: a lock file would be left behind in the
//! user's directory, need write permission there, and two paths to one file through a symbolic
//! link would name two different lock files. The catch is that a save renames a new file over
//! the name, so a command that waited for the lock may hold it on a file that is no longer the
//! filter: after locking, it checks that the name still leads to the file it locked, and
//! otherwise locks the new one. Queries need no lock: a save replaces the file whole.

use bugu::Persist;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use bugu::persist::FilterKind;
use bugu::{
    CuckooFilter, CuckooView, ExpandingFilter, ExpandingView, Filter, FilterMut, GrowableFilter, InsertError,
    PersistError,
};
use memmap2::Mmap;

use crate::error::Failure;

/// A filter held in memory, to change and save.
pub(crate) enum Owned {
    Fixed(CuckooFilter),
    /// A chain of tables.
    Growable(GrowableFilter),
    /// One table that grows (boxed: its table's directory makes it far larger than the others).
    Expanding(Box<ExpandingFilter>),
}

/// Runs the same code on whichever filter an enum holds.
macro_rules! on_filter {
    ($value:expr, $filter:ident => $body:expr) => {
        match $value {
            Owned::Fixed($filter) => $body,
            Owned::Growable($filter) => $body,
            Owned::Expanding($filter) => $body,
        }
    };
}

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

impl Owned {
    /// Reads and checks a filter file.
    pub(crate) fn load(path: &Path) -> Result<Self, Failure> {
        Self::read(path, open_file(path)?)
    }

    /// Takes the file's lock (waiting for it, and saying so if `announce`), then reads and
    /// checks the filter: the caller changes it and saves it while holding the lock.
    pub(crate) fn load_locked(path: &Path, announce: bool) -> Result<(Self, Lock), Failure> {
        let lock = Lock::take(path, announce)?;
        let filter = Self::read(path, &lock.file)?;
        Ok((filter, lock))
    }

    /// Reads and checks the filter in an open file.
    fn read(path: &Path, mut file: impl Read) -> Result<Self, Failure> {
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|error| Failure::io(path, &error))?;
        Self::from_bytes(&bytes).map_err(|error| persist_failure(path, bytes.len(), &error))
    }

    /// The filter of any kind in `bytes`, checked.
    fn from_bytes(bytes: &[u8]) -> Result<Self, PersistError> {
        match FilterKind::detect(bytes)? {
            FilterKind::Cuckoo => CuckooFilter::from_bytes(bytes).map(Self::Fixed),
            FilterKind::Growable => GrowableFilter::from_bytes(bytes).map(Self::Growable),
            FilterKind::Expanding => {
                ExpandingFilter::from_bytes(bytes).map(|filter| Self::Expanding(Box::new(filter)))
            }
            kind => Err(PersistError::WrongKind { expected: FilterKind::Cuckoo, found: kind }),
        }
    }

    /// Saves atomically: the file is replaced whole or not at all.
    pub(crate) fn save(&self, path: &Path) -> Result<(), Failure> {
        on_filter!(self, filter => filter.save(path)).map_err(|error| Failure::io(path, &error))
    }

    pub(crate) fn hash_of_bytes(&self, item: &[u8]) -> u64 {
        on_filter!(self, filter => filter.hash_of_bytes(item))
    }

    /// Whether an add-if-absent insert was ever skipped because the item's fingerprint was there.
    pub(crate) fn has_skipped_inserts(&self) -> bool {
        on_filter!(self, filter => filter.has_skipped_inserts())
    }

    /// The most items a growable filter with a maximum takes (`None` for any other): a chain's
    /// limit, or the maximum a filter in one table was declared for.
    pub(crate) fn max_capacity(&self) -> Option<usize> {
        match self {
            Self::Fixed(_) => None,
            Self::Growable(filter) => filter.max_capacity(),
            Self::Expanding(filter) => Some(usize::try_from(filter.max_items()).unwrap_or(usize::MAX)),
        }
    }

    pub(crate) fn contains_hash_batch(&self, hashes: &[u64]) -> Vec<bool> {
        on_filter!(self, filter => filter.contains_hash_batch(hashes))
    }

    pub(crate) fn insert_unique_hash(&mut self, hash: u64) -> Result<bool, InsertError> {
        on_filter!(self, filter => filter.insert_unique_hash(hash))
    }

    pub(crate) fn insert_hash_batch(&mut self, hashes: &[u64]) -> Vec<Result<(), InsertError>> {
        on_filter!(self, filter => filter.insert_hash_batch(hashes))
    }

    pub(crate) fn remove_hash(&mut self, hash: u64) -> bool {
        on_filter!(self, filter => filter.remove_hash(hash))
    }
}

/// A filter file mapped for queries.
pub(crate) struct Mapped {
    map: Mmap,
}

/// A filter to query: a view into a mapped file, or a filter read into memory (a chain of
/// tables).
pub(crate) enum Query<'a> {
    View(Box<CuckooView<'a>>),
    ExpandingView(Box<ExpandingView<'a>>),
    Loaded(Box<Owned>),
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

    /// The filter, checked (the file is `path`, for errors).
    pub(crate) fn query(&self, path: &Path) -> Result<Query<'_>, Failure> {
        let failure = |error: PersistError| persist_failure(path, self.map.len(), &error);
        match FilterKind::detect(&self.map).map_err(failure)? {
            FilterKind::Cuckoo => {
                Ok(Query::View(Box::new(CuckooView::from_bytes(&self.map).map_err(failure)?)))
            }
            FilterKind::Expanding => {
                Ok(Query::ExpandingView(Box::new(ExpandingView::from_bytes(&self.map).map_err(failure)?)))
            }
            _ => Ok(Query::Loaded(Box::new(Owned::from_bytes(&self.map).map_err(failure)?))),
        }
    }
}

impl Query<'_> {
    pub(crate) fn hash_of_bytes(&self, item: &[u8]) -> u64 {
        match self {
            Self::View(filter) => filter.hash_of_bytes(item),
            Self::ExpandingView(filter) => filter.hash_of_bytes(item),
            Self::Loaded(filter) => filter.hash_of_bytes(item),
        }
    }

    pub(crate) fn contains_hash_batch(&self, hashes: &[u64]) -> Vec<bool> {
        match self {
            Self::View(filter) => filter.contains_hash_batch(hashes),
            Self::ExpandingView(filter) => filter.contains_hash_batch(hashes),
            Self::Loaded(filter) => filter.contains_hash_batch(hashes),
        }
    }
}

/// A reader's error, in words for a person.
fn persist_failure(path: &Path, len: usize, error: &PersistError) -> Failure {
    let what = match error {
        PersistError::BadMagic => "not a bugu filter file".to_string(),
        PersistError::Truncated { .. } => format!("truncated or corrupt bugu filter ({len} bytes): {error}"),
        PersistError::WrongKind { found, .. } => format!("a {found} filter, which this command cannot open"),
        _ => format!("corrupt bugu filter: {error}"),
    };
    Failure::message(what).in_file(path)
}
