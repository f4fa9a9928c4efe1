//! [`Persist`]: the one shape of persistence every filter type has. A type writes its bytes and
//! reads them back from a stream; the trait turns those two into bytes in memory, whole inputs
//! (trailing bytes refused) and files saved atomically, the same way for every type.

use std::io::{self, Read, Write};
use std::path::Path;

use super::error::PersistError;
use super::file::{open, save_atomically};

/// A filter type with a persistent form (`docs/format.md`): a self-describing, checksummed,
/// little-endian byte string that any platform reads back, validated byte by byte.
///
/// A type implements [`serialized_len`](Self::serialized_len), [`write_to`](Self::write_to) and
/// [`read_counted`](Self::read_counted); the trait provides the rest:
///
/// | in memory | through `Read` / `Write` | files |
/// |---|---|---|
/// | [`to_bytes`](Self::to_bytes), [`from_bytes`](Self::from_bytes) | [`write_to`](Self::write_to), [`read_from`](Self::read_from) | [`save`](Self::save), [`load`](Self::load) |
///
/// Readers validate every field before sizing anything from it, bound every allocation by the
/// input rather than by a length it claims, check the checksum, and report a typed
/// [`PersistError`]; no input makes them panic. Views of the bytes without a copy
/// ([`CuckooView`](crate::CuckooView), [`ExpandingView`](crate::ExpandingView),
/// [`AnyView`](crate::AnyView)) are opened by their own `from_bytes`.
///
/// ```
/// use bugu::{CuckooFilter, Filter, FilterMut, GrowableFilter, Persist};
///
/// /// Any filter type, saved and read back the same way.
/// fn round_trip<F: Persist>(filter: &F) -> Result<F, bugu::PersistError> {
///     F::from_bytes(&filter.to_bytes())
/// }
///
/// let mut fixed = CuckooFilter::new(1_000)?;
/// fixed.insert("apple")?;
/// assert!(round_trip(&fixed)?.contains("apple"));
///
/// let mut grown = GrowableFilter::new(100)?;
/// grown.insert("pear")?;
/// assert!(round_trip(&grown)?.contains("pear"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Persist: Sized {
    /// The length of [`to_bytes`](Self::to_bytes), without building them.
    fn serialized_len(&self) -> usize;

    /// Streams the persistent bytes into `writer` without building them in memory: tables go to
    /// the writer as they are, the checksum is computed on the way. Wrap unbuffered writers
    /// (files, sockets) in a [`BufWriter`](std::io::BufWriter); the writer is not flushed.
    fn write_to<W: Write>(&self, writer: W) -> io::Result<()>;

    /// Reads one filter from a stream, validating every byte, and says how many bytes it took.
    /// `len`, when known, is how many bytes the input holds from here: it bounds every
    /// allocation before anything is read. When it is `None` (a socket, a pipe), tables grow as
    /// their bytes arrive, so a short hostile stream that claims a huge table costs a few KiB
    /// before it is found truncated. Reading stops after the checksum.
    fn read_counted<R: Read>(reader: R, len: Option<u64>) -> Result<(Self, u64), PersistError>;

    /// The filter in the persistent format.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut, Persist};
    ///
    /// let mut filter = CuckooFilter::new(1_000)?;
    /// filter.insert("apple")?;
    /// let bytes = filter.to_bytes();
    /// assert_eq!(bytes.len(), filter.serialized_len());
    /// assert_eq!(CuckooFilter::from_bytes(&bytes)?.to_bytes(), bytes);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.serialized_len());
        self.write_to(&mut bytes).expect("writing to a Vec cannot fail");
        debug_assert_eq!(bytes.len(), self.serialized_len());
        bytes
    }

    /// Reads one filter from a stream, as [`read_counted`](Self::read_counted) with an unknown
    /// length: exactly one filter is read, so several can follow each other in one stream. Wrap
    /// unbuffered readers in a [`BufReader`](std::io::BufReader).
    ///
    /// ```
    /// use bugu::{CuckooFilter, Filter, FilterMut, Persist, PersistError};
    ///
    /// let mut a = CuckooFilter::new(100)?;
    /// a.insert("a")?;
    /// let b = CuckooFilter::new(200)?;
    /// let mut stream = Vec::new();
    /// a.write_to(&mut stream)?;
    /// b.write_to(&mut stream)?;
    ///
    /// let mut reader = &stream[..];
    /// assert!(CuckooFilter::read_from(&mut reader)?.contains("a"));
    /// assert_eq!(CuckooFilter::read_from(&mut reader)?.capacity(), 200);
    /// assert!(matches!(CuckooFilter::read_from(&mut reader), Err(PersistError::Truncated { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn read_from<R: Read>(reader: R) -> Result<Self, PersistError> {
        Self::read_counted(reader, None).map(|(filter, _)| filter)
    }

    /// Reads a filter from exactly the bytes of [`to_bytes`](Self::to_bytes): bytes left after
    /// it are an error ([`PersistError::TrailingBytes`]).
    ///
    /// ```
    /// use bugu::{CuckooFilter, GrowableFilter, Persist, PersistError};
    ///
    /// let mut bytes = CuckooFilter::new(100)?.to_bytes();
    /// assert!(matches!(GrowableFilter::from_bytes(&bytes), Err(PersistError::WrongKind { .. })));
    /// bytes.push(0);
    /// assert!(matches!(CuckooFilter::from_bytes(&bytes), Err(PersistError::TrailingBytes(1))));
    /// assert!(matches!(CuckooFilter::from_bytes(b"junk"), Err(PersistError::BadMagic)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn from_bytes(bytes: &[u8]) -> Result<Self, PersistError> {
        read_whole(bytes, bytes.len() as u64)
    }

    /// Saves the filter to `path` atomically: it writes a temporary file in the same directory,
    /// flushes it to disk, renames it over `path` and flushes the directory. Whatever happens —
    /// a crash, a full disk, a concurrent reader — `path` holds either its old content or the
    /// whole new filter, never part of it. An error before the rename leaves `path` untouched
    /// and removes the temporary file; an error flushing the directory after it is reported
    /// too (the new filter is in place, but the rename may not survive a power loss).
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
    /// use bugu::{CuckooFilter, Filter, FilterMut, Persist};
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
    fn save(&self, path: impl AsRef<Path>) -> io::Result<()> {
        save_atomically(path.as_ref(), |writer| self.write_to(writer))
    }

    /// Loads a filter saved by [`save`](Self::save) (or any file holding exactly the bytes of
    /// [`to_bytes`](Self::to_bytes)), validated as [`from_bytes`](Self::from_bytes) does, in one
    /// pass and without a second copy: the file's length bounds what is allocated. To query a
    /// large file without loading it, memory-map it and open a view.
    ///
    /// ```
    /// use bugu::{CuckooFilter, Persist, PersistError};
    ///
    /// let path = std::env::temp_dir().join(format!("bugu-load-doc-{}", std::process::id()));
    /// std::fs::write(&path, b"hello")?;
    /// assert!(matches!(CuckooFilter::load(&path), Err(PersistError::BadMagic)));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn load(path: impl AsRef<Path>) -> Result<Self, PersistError> {
        let (reader, len) = open(path.as_ref())?;
        read_whole(reader, len)
    }
}

/// Reads the one filter a whole input of `len` bytes holds (a file, a buffer): bytes left after
/// the filter are an error here, where a stream reader stops after one filter and leaves them for
/// the next.
fn read_whole<T: Persist, R: Read>(input: R, len: u64) -> Result<T, PersistError> {
    let (filter, consumed) = T::read_counted(input, Some(len))?;
    if consumed < len {
        return Err(PersistError::TrailingBytes(len - consumed));
    }
    Ok(filter)
}
