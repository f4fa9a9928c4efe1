//! One key, one meaning: a file built by the `bugu` binary answers a Rust program's typed keys
//! (`&str`, `String`, integers) and byte keys exactly as the binary answers its lines.

use std::fs;
use std::path::Path;

use assert_cmd::Command;
use bugu::{
    CuckooFilter, CuckooView, ExpandingFilter, ExpandingView, Filter, FilterMut, GrowableFilter, Persist,
};
use tempfile::TempDir;

/// Text keys (some non-ASCII), decimal integers as text, and absent keys to probe.
fn keys() -> (Vec<String>, Vec<String>) {
    let present =
        (0..20_000).map(|i| if i % 3 == 0 { format!("用户_{i}") } else { format!("user_{i}") }).collect();
    let absent = (0..20_000).map(|i| format!("nobody_{i}")).collect();
    (present, absent)
}

/// The lines `bugu check` prints back as present.
fn cli_present(file: &Path, probes: &[String], dir: &Path) -> Vec<bool> {
    let list = dir.join("probes.txt");
    fs::write(&list, probes.iter().map(|key| format!("{key}\n")).collect::<String>()).unwrap();
    let output = Command::cargo_bin("bugu")
        .unwrap()
        .args(["check", file.to_str().unwrap(), "--input", list.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.code().is_some_and(|code| code <= 1), "{output:?}");
    let printed: std::collections::HashSet<&[u8]> = output.stdout.split(|&b| b == b'\n').collect();
    probes.iter().map(|key| printed.contains(key.as_bytes())).collect()
}

fn build(dir: &Path, name: &str, extra: &[&str], present: &[String]) -> std::path::PathBuf {
    let list = dir.join(format!("{name}.txt"));
    fs::write(&list, present.iter().map(|key| format!("{key}\n")).collect::<String>()).unwrap();
    let file = dir.join(name);
    Command::cargo_bin("bugu")
        .unwrap()
        .args(["build", file.to_str().unwrap(), "--input", list.to_str().unwrap(), "--fpr", "0.01"])
        .args(extra)
        .assert()
        .success();
    file
}

/// Every way a Rust program can name a key gives the CLI's answer, for present and absent keys
/// (false positives included: the same key must hit the same fingerprint).
fn assert_same_answers(filter: &impl Filter, probes: &[String], cli: &[bool]) {
    for (key, &expected) in probes.iter().zip(cli) {
        assert_eq!(filter.contains(key.as_str()), expected, "&str {key}");
        assert_eq!(filter.contains(key), expected, "&String {key}");
        assert_eq!(filter.contains(&key.clone().into_bytes()), expected, "Vec<u8> {key}");
        assert_eq!(filter.contains(key.as_bytes()), expected, "&[u8] {key}");
        assert_eq!(filter.contains_bytes(key.as_bytes()), expected, "contains_bytes {key}");
    }
    let strs: Vec<&str> = probes.iter().map(String::as_str).collect();
    assert_eq!(filter.contains_batch(&strs), cli, "contains_batch of &str");
}

#[test]
fn a_cli_built_file_answers_rust_typed_and_byte_keys_as_the_cli_does() {
    let dir = TempDir::new().unwrap();
    let (present, absent) = keys();
    let probes: Vec<String> = present.iter().chain(&absent).cloned().collect();

    let fixed = build(dir.path(), "fixed.bugu", &[], &present);
    let cli = cli_present(&fixed, &probes, dir.path());
    assert!(cli[..present.len()].iter().all(|&found| found), "the CLI finds every key it added");
    assert!(cli[present.len()..].iter().any(|&found| !found));
    assert_same_answers(&CuckooFilter::load(&fixed).unwrap(), &probes, &cli);
    let bytes = fs::read(&fixed).unwrap();
    assert_same_answers(&CuckooView::from_bytes(&bytes).unwrap(), &probes, &cli);

    let growable = build(dir.path(), "growable.bugu", &["--growable", "--capacity", "1000"], &present);
    let cli = cli_present(&growable, &probes, dir.path());
    let loaded = GrowableFilter::load(&growable).unwrap();
    assert!(loaded.level_count() > 1, "the growable file grew");
    assert_same_answers(&loaded, &probes, &cli);

    let one_table =
        build(dir.path(), "one-table.bugu", &["--growable", "--one-table", "--capacity", "100"], &present);
    let cli = cli_present(&one_table, &probes, dir.path());
    assert!(cli[..present.len()].iter().all(|&found| found), "the CLI finds every key it added");
    let loaded = ExpandingFilter::load(&one_table).unwrap();
    assert!(loaded.stats().level > 0, "the one-table file grew");
    assert_same_answers(&loaded, &probes, &cli);
    let bytes = fs::read(&one_table).unwrap();
    assert_same_answers(&ExpandingView::from_bytes(&bytes).unwrap(), &probes, &cli);
}

#[test]
fn integers_from_rust_are_found_by_the_cli_as_their_8_little_endian_bytes() {
    let dir = TempDir::new().unwrap();
    let mut filter = CuckooFilter::new(1_000).unwrap();
    for i in 0..500u32 {
        filter.insert(&i).unwrap();
    }
    let file = dir.path().join("ints.bugu");
    filter.save(&file).unwrap();
    let hex: Vec<String> =
        (0..500u64).map(|i| i.to_le_bytes().iter().map(|b| format!("{b:02x}")).collect()).collect();
    let list = dir.path().join("ints.hex");
    fs::write(&list, hex.iter().map(|line| format!("{line}\n")).collect::<String>()).unwrap();
    Command::cargo_bin("bugu")
        .unwrap()
        .args(["check", file.to_str().unwrap(), "--hex", "--input", list.to_str().unwrap(), "--count"])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("500"));
}
