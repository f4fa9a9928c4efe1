//! What an atomic save replaces, and the temporary file it writes first.
//!
//! A save writes a new file and renames it over the destination, so everything the old file
//! carried besides its bytes would be lost unless it is carried over on purpose: the save
//! follows symbolic links to the file they name (the link stays a link), copies the old file's
//! permissions and, where the process may set them, its owner and group, and refuses a read-only
//! file rather than replacing it (a rename needs only the directory's permission, so nothing
//! else would stop it).
//!
//! Temporary files are named `.NAME.bugu-tmp-PID-N`, next to the destination, so that a person
//! can tell what left them and the next save of the same file can remove them. A process killed
//! during a save leaves its temporary file behind; the next save removes every temporary file of
//! the same destination whose process is gone (no such process id, and no lock on the file:
//! each save holds an advisory lock on its temporary file, which the system releases when the
//! process dies, so a live saver in another process id namespace is not mistaken for a dead one).

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, Metadata, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The most symbolic links followed from one path (as Linux's own limit).
const MAX_LINKS: usize = 40;

/// The longest part of the destination's name kept in a temporary file's name, so that the
/// temporary name fits any file system (255 bytes) whatever the destination's.
const MAX_STEM_CHARS: usize = 100;

/// Where a save writes: the file a path names once symbolic links are followed, and what is
/// known of it.
#[derive(Debug)]
pub(super) struct Destination {
    /// The file to replace (a link's final target).
    pub(super) path: PathBuf,
    /// Its directory, where the temporary file is written (a rename cannot cross file systems).
    pub(super) dir: PathBuf,
    /// Its metadata if it exists, to carry over to the new file.
    existing: Option<Metadata>,
}

impl Destination {
    /// Follows `path`'s links, and checks that what it names may be replaced: an absent file or a
    /// writable regular file.
    pub(super) fn of(path: &Path) -> io::Result<Self> {
        let path = follow_links(path)?;
        path.file_name().ok_or_else(|| invalid("the path names no file"))?;
        let dir = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let existing = match fs::metadata(&path) {
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        if let Some(meta) = &existing {
            check_replaceable(&path, meta)?;
        }
        Ok(Self { path, dir, existing })
    }

    /// The destination's name, shortened for temporary names.
    fn stem(&self) -> String {
        let name = self.path.file_name().unwrap_or(OsStr::new("filter"));
        name.to_string_lossy().chars().take(MAX_STEM_CHARS).collect()
    }

    /// The start of every temporary file name of this destination.
    fn temp_prefix(&self) -> String {
        format!(".{}.bugu-tmp-", self.stem())
    }

    /// Gives `file` (the new content) the old file's permissions, and its owner and group where
    /// this process may set them (the owner first: changing it can clear set-id bits).
    pub(super) fn carry_over(&self, file: &File) -> io::Result<()> {
        let Some(meta) = &self.existing else { return Ok(()) };
        #[cfg(unix)]
        {
            use std::os::unix::fs::{MetadataExt, fchown};
            let ours = file.metadata()?;
            if (ours.uid(), ours.gid()) != (meta.uid(), meta.gid())
                && fchown(file, Some(meta.uid()), Some(meta.gid())).is_err()
            {
                // Not allowed to give the file away: keep at least its group if we belong to it.
                let _ = fchown(file, None, Some(meta.gid()));
            }
        }
        file.set_permissions(meta.permissions())
    }

    /// Removes the temporary files of this destination that a dead process left, as far as it
    /// can: a file it cannot remove is left for a later save.
    pub(super) fn remove_stale_temps(&self) {
        let prefix = self.temp_prefix();
        let Ok(entries) = fs::read_dir(&self.dir) else { return };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(|name| temp_pid(name, &prefix)) else { continue };
            let path = entry.path();
            if !process_alive(pid) && !locked(&path) {
                let _ = fs::remove_file(&path);
            }
        }
    }

    /// Creates a new temporary file next to the destination, locked while it lives; it is
    /// removed when dropped unless [`Temp::persist`] renamed it over the destination.
    pub(super) fn create_temp(&self) -> io::Result<Temp> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let prefix = self.temp_prefix();
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = self.dir.join(OsString::from(format!("{prefix}{}-{n}", std::process::id())));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    lock(&file);
                    return Ok(Temp { path, file, persisted: false });
                }
                // Left by a process that had our id and is still there (or that another save
                // could not lock to remove): take the next number.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// A temporary file being written; removed on drop unless persisted.
pub(super) struct Temp {
    path: PathBuf,
    pub(super) file: File,
    persisted: bool,
}

impl Temp {
    /// Renames the temporary file over `destination`; dropping it then closes the file (which
    /// releases its lock) and leaves the name alone.
    pub(super) fn persist(mut self, destination: &Path) -> io::Result<()> {
        fs::rename(&self.path, destination)?;
        self.persisted = true;
        Ok(())
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        // Not renamed: the save failed (or its writer panicked) before the rename.
        if !self.persisted {
            let _ = fs::remove_file(&self.path);
        }
    }
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// The path a chain of symbolic links ends at (the path itself if it is not a link); the final
/// target need not exist (the save creates it, as a shell redirection would).
fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&path)?;
                // A relative target is relative to the link's directory; an absolute one replaces it.
                path = match path.parent() {
                    Some(parent) => parent.join(target),
                    None => target,
                };
            }
            _ => return Ok(path),
        }
    }
    Err(io::Error::other(format!("too many levels of symbolic links from {}", path.display())))
}

/// Refuses what a save must not replace: a directory, a special file, a read-only file.
fn check_replaceable(path: &Path, meta: &Metadata) -> io::Result<()> {
    if meta.is_dir() {
        return Err(io::Error::new(io::ErrorKind::IsADirectory, "is a directory"));
    }
    if !meta.is_file() {
        return Err(invalid("not a regular file; a save replaces only regular files"));
    }
    let read_only =
        || io::Error::new(io::ErrorKind::PermissionDenied, "the file is read-only; it was not replaced");
    // No write permission for anyone: read-only even to a process that could write it anyway.
    if meta.permissions().readonly() {
        return Err(read_only());
    }
    // Opening for writing (without truncating) asks the system whether this process may.
    match OpenOptions::new().write(true).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Err(read_only()),
        Err(e) => Err(e),
    }
}

/// The process id in a temporary file name `PREFIX<pid>-<n>`, if the name is one.
fn temp_pid(name: &str, prefix: &str) -> Option<u32> {
    let (pid, n) = name.strip_prefix(prefix)?.split_once('-')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// Whether a process with this id exists (one we may not signal exists too).
#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: signal 0 sends nothing; it only checks that the process exists.
    let sent = unsafe { libc::kill(pid, 0) };
    sent == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Without a way to ask, every process is taken to be alive (nothing is removed).
#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    true
}

/// Takes an advisory lock on a temporary file being written, as a sign of life to other
/// processes' cleanup; it is released when the file is closed or the process dies. Best effort:
/// a file system without locks still gets the process id check.
#[cfg(unix)]
fn lock(file: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is open for the call's duration; a non-blocking flock only sets a lock.
    let _ = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
}

#[cfg(not(unix))]
fn lock(_file: &File) {}

/// Whether some process holds the lock of a temporary file (or it cannot be checked).
#[cfg(unix)]
fn locked(path: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(file) = File::open(path) else { return true };
    // SAFETY: as in `lock`; the lock taken here is released when `file` closes.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) != 0 }
}

#[cfg(not(unix))]
fn locked(_path: &Path) -> bool {
    true
}
