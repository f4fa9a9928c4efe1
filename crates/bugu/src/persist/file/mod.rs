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

#[cfg(all(test, unix))]
mod tests;
