//! Several `bugu` processes changing one file at once: each holds the file's lock from its read
//! to its save, so no change is lost.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Workspace, arg, bugu, bugu_path};

#[test]
fn eight_parallel_adds_of_distinct_keys_all_land() {
    let ws = Workspace::new();
    let f = ws.path("shared.bugu");
    bugu().args(["create", arg(&f), "--capacity", "20000"]).assert().success();
    let lists: Vec<_> =
        (0..8).map(|p| ws.list(&format!("keys{p}.txt"), &format!("p{p}-"), 0..1_000)).collect();
    // Started together: each reads the file, adds its thousand keys and saves it.
    let children: Vec<_> = lists
        .iter()
        .map(|list| {
            Command::new(bugu_path())
                .args(["add", arg(&f), "--input", arg(list), "-q"])
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    }
    for list in &lists {
        bugu().args(["check", arg(&f), "--input", arg(list), "--count"]).assert().code(0).stdout("1000\n");
    }
    let info = common::json_of(&bugu().args(["info", arg(&f), "--json"]).output().unwrap().stdout);
    assert_eq!(info["items"].as_u64(), Some(8_000));
    assert_eq!(ws.names().len(), 9, "{:?}", ws.names());
}

#[test]
fn a_command_waits_for_the_lock_and_says_so() {
    let ws = Workspace::new();
    let f = ws.path("f.bugu");
    bugu().args(["create", arg(&f), "--capacity", "100"]).assert().success();
    // Another holder of the lock (what a running `bugu add` takes).
    let held = std::fs::File::open(&f).unwrap();
    fs4::FileExt::lock(&held).unwrap();
    let mut child = Command::new(bugu_path())
        .args(["add", arg(&f), "waiting-key"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(child.try_wait().unwrap().is_none(), "the add did not wait for the lock");
    fs4::FileExt::unlock(&held).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the add never finished");
        std::thread::sleep(Duration::from_millis(10));
    }
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.starts_with(&format!("bugu: waiting for lock on {}\n", f.display())), "{stderr}");
    bugu().args(["check", arg(&f), "waiting-key"]).assert().code(0);

    // With -q it waits without a word.
    fs4::FileExt::lock(&held).unwrap();
    let child = Command::new(bugu_path())
        .args(["remove", arg(&f), "waiting-key", "-q"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    fs4::FileExt::unlock(&held).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!((output.status.code(), output.stderr.as_slice()), (Some(0), &b""[..]));
}
