//! The files a changing command writes: kept as the user set them up (permissions, owner, a
//! symbolic link), refused when they must not be replaced (read-only, a directory), and no
//! temporary file left behind, whether the command fails or an earlier one was killed.

mod common;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

use common::{Workspace, arg, bugu, fails_with};

#[test]
fn a_change_keeps_the_permissions_and_owner_and_writes_through_a_link() {
    let ws = Workspace::new();
    fs::create_dir(ws.path("data")).unwrap();
    let real = ws.path("data/real.bugu");
    bugu().args(["create", arg(&real), "--capacity", "100"]).assert().success();
    fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
    // Giving the file away needs privileges; where the test has them, the owner must be kept.
    let given_away = std::os::unix::fs::chown(&real, Some(4321), Some(4322)).is_ok();
    let link = ws.path("link.bugu");
    std::os::unix::fs::symlink("data/real.bugu", &link).unwrap();

    bugu().args(["add", arg(&link), "apple", "-q"]).assert().success();
    bugu().args(["remove", arg(&link), "apple", "-q"]).assert().success();
    bugu().args(["add", arg(&link), "pear", "-q"]).assert().success();

    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    let meta = fs::metadata(&real).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7777, 0o640);
    if given_away {
        assert_eq!((meta.uid(), meta.gid()), (4321, 4322));
    }
    bugu().args(["check", arg(&real), "pear"]).assert().code(0);
    bugu().args(["check", arg(&real), "apple"]).assert().code(1);
    assert_eq!(ws.names(), ["data", "link.bugu"]);
    let mut in_data: Vec<_> =
        fs::read_dir(ws.path("data")).unwrap().map(|e| e.unwrap().file_name()).collect();
    in_data.sort();
    assert_eq!(in_data, ["real.bugu"]);
}

#[test]
fn a_read_only_file_is_refused_and_left_as_it_was() {
    let ws = Workspace::new();
    let f = ws.path("f.bugu");
    bugu().args(["create", arg(&f), "--capacity", "100"]).assert().success();
    fs::set_permissions(&f, fs::Permissions::from_mode(0o444)).unwrap();
    let before = fs::read(&f).unwrap();
    fails_with(&["add", arg(&f), "x"], "f.bugu: the file is read-only; it was not replaced");
    fails_with(&["build", arg(&f), "--force", "--capacity", "5"], "read-only");
    fails_with(&["create", arg(&f), "--force", "--capacity", "5"], "read-only");
    assert_eq!(fs::read(&f).unwrap(), before);
    assert_eq!(ws.names(), ["f.bugu"]);
}

#[test]
fn a_directory_is_named_as_one() {
    let ws = Workspace::new();
    let dir = ws.path("filters");
    fs::create_dir(&dir).unwrap();
    let expected = format!("{} is a directory", dir.display());
    for command in ["check", "add", "remove"] {
        fails_with(&[command, arg(&dir), "x"], &expected);
    }
    fails_with(&["info", arg(&dir)], &expected);
    fails_with(&["create", arg(&dir), "--force", "--capacity", "5"], &expected);
}

#[test]
fn stale_temporary_files_of_the_filter_are_removed_and_a_failed_save_leaves_none() {
    let ws = Workspace::new();
    let f = ws.path("f.bugu");
    bugu().args(["create", arg(&f), "--capacity", "50", "--fpr", "0.01"]).assert().success();
    // What a `bugu add` killed during its save leaves: its temporary file, its process gone.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = format!(".f.bugu.bugu-tmp-{dead}-0");
    ws.file(&stale, b"half a filter");
    let other = format!(".g.bugu.bugu-tmp-{dead}-0");
    ws.file(&other, b"another filter's");
    bugu().args(["add", arg(&f), "x", "-q"]).assert().success();
    assert_eq!(ws.names(), [other.as_str(), "f.bugu"]);
    // A failed command saves nothing, so writes no temporary file either.
    let before = fs::read(&f).unwrap();
    let many = ws.list("many.txt", "k", 0..10_000);
    fails_with(&["add", arg(&f), "--input", arg(&many)], "the filter is full");
    assert_eq!(fs::read(&f).unwrap(), before);
    assert_eq!(ws.names(), [other.as_str(), "f.bugu", "many.txt"]);
}
