//! Native methods on a filter's bytes and files.

use std::path::{Path, PathBuf};

use bugu::persist::FilterKind;
use bugu::{AnyFilter, AnyView, Persist};
use jni::JNIEnv;
use jni::objects::{JByteArray, JClass, JString};
use jni::sys::{JNI_FALSE, jboolean, jbyteArray, jlong};

use crate::handle::{Handle, MappedFilter};
use crate::throw::{Thrown, bugu_exception, file_failure, guard};
use crate::{handle, publish};

/// The filter's bytes in bugu's persistent format.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_toBytes(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
) -> jbyteArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: as in `query`.
        let bytes = unsafe { handle(filter) }?.to_bytes();
        Ok(env.byte_array_from_slice(&bytes)?.into_raw())
    })
}

/// Writes the filter to a file atomically.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_save(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    filter: jlong,
    path: JString<'_>,
) {
    guard(&mut env, (), |env| {
        let path = path_of(env, &path)?;
        // SAFETY: as in `query`.
        unsafe { handle(filter) }?.save(&path)
    });
}

/// A filter of the Java class's kind from bytes (`growable` for a `GrowableFilter`).
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_fromBytes(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    bytes: JByteArray<'_>,
    growable: jboolean,
) -> jlong {
    guard(&mut env, 0, |env| {
        let bytes = env.convert_byte_array(&bytes)?;
        read(Source::Bytes(&bytes), growable != JNI_FALSE).map(publish)
    })
}

/// A filter of the Java class's kind from a file.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_load(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    path: JString<'_>,
    growable: jboolean,
) -> jlong {
    guard(&mut env, 0, |env| {
        let path = path_of(env, &path)?;
        read(Source::File(&path), growable != JNI_FALSE).map(publish)
    })
}

/// Where a filter is read from.
#[derive(Clone, Copy)]
enum Source<'a> {
    Bytes(&'a [u8]),
    File(&'a Path),
}

impl Source<'_> {
    /// The filter, through the library's own reader for each source.
    fn read<T: Persist>(self) -> Result<T, Thrown> {
        match self {
            Source::Bytes(bytes) => T::from_bytes(bytes).map_err(bugu_exception),
            Source::File(path) => T::load(path).map_err(|error| file_failure(path, error)),
        }
    }
}

/// A handle from a filter's bytes or file: a fixed filter for a `CuckooFilter`, a filter that
/// grows for a `GrowableFilter`.
fn read(source: Source<'_>, growable: bool) -> Result<Handle, Thrown> {
    if !growable {
        return source.read().map(Handle::Shared);
    }
    let filter: AnyFilter = source.read()?;
    if filter.kind() == FilterKind::Cuckoo {
        return Err(bugu_exception(
            "these bytes hold a fixed-size filter: read them with CuckooFilter.fromByteArray",
        ));
    }
    Ok(Handle::Locked(filter.into()))
}

/// A path given as a Java `String`.
fn path_of(env: &mut JNIEnv<'_>, path: &JString<'_>) -> Result<PathBuf, Thrown> {
    Ok(PathBuf::from(String::from(env.get_string(path)?)))
}

/// A filter file of any kind mapped read-only (`FilterView.open`): a fixed-size filter and a
/// filter in one table are queried in place, a chain of tables is read into memory.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_github_bugu_Native_open(
    mut env: JNIEnv<'_>,
    _class: JClass<'_>,
    path: JString<'_>,
) -> jlong {
    guard(&mut env, 0, |env| {
        let path = path_of(env, &path)?;
        let failed = |error: std::io::Error| file_failure(&path, error);
        let file = std::fs::File::open(&path).map_err(failed)?;
        if file.metadata().map_err(failed)?.is_dir() {
            return Err(failed(std::io::Error::from(std::io::ErrorKind::IsADirectory)));
        }
        // SAFETY: the map is read-only and private to this handle. bugu never writes a filter
        // file in place (a save renames a new file over the name, leaving this map on the old
        // one); another program truncating or rewriting the file while it is mapped is outside
        // what a mapping can guard against, as with the `bugu` command's and Python's maps.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(failed)?;
        let file = MappedFilter::try_new(map, |map| AnyView::from_bytes(map)).map_err(bugu_exception)?;
        Ok(publish(Handle::View(file)))
    })
}
