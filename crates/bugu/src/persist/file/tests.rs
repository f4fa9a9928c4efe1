//! Atomic saves: replacing, failing cleanly, and respecting the file replaced (links,
//! permissions, owner, read-only files, directories, temporary files left by killed saves).

use std::ffi::OsString;
use std::fs;
use std::path::PathBuf;

use super::*;
use crate::{CuckooFilter, FilterMut, Persist, PersistError};

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

/// The names in a directory, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    names
}

/// A filter holding `items` items, to tell saves apart.
fn filter_of(items: u32) -> CuckooFilter {
    let mut filter = CuckooFilter::new(100).unwrap();
    for i in 0..items {
        filter.insert(&i).unwrap();
    }
    filter
}

#[test]
fn a_save_through_a_symbolic_link_replaces_its_target_and_keeps_the_link() {
    let dir = scratch_dir("link");
    fs::create_dir(dir.join("real")).unwrap();
    let target = dir.join("real").join("f.bugu");
    filter_of(1).save(&target).unwrap();
    // A relative link, and a link to that link.
    std::os::unix::fs::symlink("real/f.bugu", dir.join("link.bugu")).unwrap();
    std::os::unix::fs::symlink(dir.join("link.bugu"), dir.join("link2.bugu")).unwrap();
    let filter = filter_of(5);
    filter.save(dir.join("link2.bugu")).unwrap();
    for link in ["link.bugu", "link2.bugu"] {
        assert!(fs::symlink_metadata(dir.join(link)).unwrap().file_type().is_symlink(), "{link}");
    }
    assert_eq!(fs::read(&target).unwrap(), filter.to_bytes());
    assert_eq!(names(&dir.join("real")), ["f.bugu"]);
    // A dangling link: its target is created, as a shell redirection would.
    std::os::unix::fs::symlink("real/new.bugu", dir.join("dangling.bugu")).unwrap();
    filter.save(dir.join("dangling.bugu")).unwrap();
    assert_eq!(fs::read(dir.join("real/new.bugu")).unwrap(), filter.to_bytes());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_save_keeps_the_permissions_and_owner_of_the_file_it_replaces() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt, chown};
    let dir = scratch_dir("mode");
    let path = dir.join("f.bugu");
    filter_of(1).save(&path).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    // Giving the file away needs privileges; as root the owner must be kept too.
    let given_away = chown(&path, Some(4321), Some(4322)).is_ok();
    filter_of(3).save(&path).unwrap();
    let meta = fs::metadata(&path).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7777, 0o640);
    if given_away {
        assert_eq!((meta.uid(), meta.gid()), (4321, 4322));
    }
    assert_eq!(fs::read(&path).unwrap(), filter_of(3).to_bytes());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_read_only_file_a_directory_and_a_special_file_are_refused_untouched() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch_dir("refuse");
    let path = dir.join("f.bugu");
    filter_of(1).save(&path).unwrap();
    let before = fs::read(&path).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    let error = filter_of(2).save(&path).unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::PermissionDenied);
    assert!(error.to_string().contains("read-only"), "{error}");
    assert_eq!(fs::read(&path).unwrap(), before);
    assert_eq!(names(&dir), ["f.bugu"]);

    fs::create_dir(dir.join("d")).unwrap();
    let error = filter_of(2).save(dir.join("d")).unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::IsADirectory);
    assert_eq!(error.to_string(), "is a directory");

    let error = filter_of(2).save("/dev/null").unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
    assert_eq!(names(&dir), ["d", "f.bugu"]);
    fs::remove_dir_all(&dir).unwrap();
}

/// The id of a process that has ended.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn a_save_removes_the_temporary_files_dead_saves_of_the_same_file_left() {
    let dir = scratch_dir("stale");
    let path = dir.join("f.bugu");
    filter_of(1).save(&path).unwrap();
    let dead = dead_pid();
    let plant = |name: String| fs::write(dir.join(name), b"half a filter").unwrap();
    plant(format!(".f.bugu.bugu-tmp-{dead}-0"));
    plant(format!(".f.bugu.bugu-tmp-{dead}-17"));
    // Kept: a live process's (this one's) temporary file, another file's, and look-alike names.
    let kept = [
        format!(".f.bugu.bugu-tmp-{}-999999", std::process::id()),
        format!(".g.bugu.bugu-tmp-{dead}-0"),
        format!(".f.bugu.bugu-tmp-{dead}"),
        "f.bugu.bugu-tmp-1-0".to_string(),
    ];
    for name in &kept {
        plant(name.clone());
    }
    filter_of(2).save(&path).unwrap();
    let mut expected: Vec<String> = kept.to_vec();
    expected.push("f.bugu".to_string());
    expected.sort();
    assert_eq!(names(&dir), expected);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_temporary_file_locked_by_its_writer_is_not_removed() {
    use std::os::fd::AsRawFd;
    let dir = scratch_dir("locked");
    let path = dir.join("f.bugu");
    // A writer in another process id namespace: its id means nothing here, its lock does.
    let name = format!(".f.bugu.bugu-tmp-{}-0", dead_pid());
    let held = fs::File::create(dir.join(&name)).unwrap();
    // SAFETY: the descriptor is open; the lock is released when `held` closes.
    assert_eq!(unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) }, 0);
    filter_of(2).save(&path).unwrap();
    assert_eq!(names(&dir), [name.as_str(), "f.bugu"]);
    drop(held);
    filter_of(3).save(&path).unwrap();
    assert_eq!(names(&dir), ["f.bugu"]);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_writer_that_panics_leaves_no_temporary_file() {
    let dir = scratch_dir("panic");
    let path = dir.join("f.bugu");
    let result = std::panic::catch_unwind(|| {
        let _ = save_atomically(&path, |w| {
            w.write_all(b"partial")?;
            panic!("the writer failed");
        });
    });
    assert!(result.is_err());
    assert!(names(&dir).is_empty(), "{:?}", names(&dir));
    fs::remove_dir_all(&dir).unwrap();
}
