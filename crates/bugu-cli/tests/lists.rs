//! Lists as their users write them: repeated lines, keys added more often than a filter can hold,
//! empty lists; and what the messages say about them.

mod common;

use std::fs;

use common::{Workspace, arg, bugu, fails_with, json_of};
use predicates::prelude::*;

#[test]
fn build_stores_a_repeated_line_once_and_counts_the_repeats() {
    let ws = Workspace::new();
    // One line nine times (more copies than its two buckets hold), among distinct ones.
    let mut text = String::new();
    for i in 0..100 {
        text += &format!("key{i}\n");
        if i % 10 == 0 {
            text += "again\n";
        }
    }
    let list = ws.file("list.txt", text.as_bytes());
    let f = ws.path("f.bugu");
    bugu()
        .args(["build", arg(&f), "--input", arg(&list)])
        .assert()
        .code(0)
        .stderr(predicate::str::contains("added 101, already present 0, repeated 9, at copy limit 0"));
    let info = json_of(&bugu().args(["info", arg(&f), "--json"]).output().unwrap().stdout);
    assert_eq!(info["items"].as_u64(), Some(101));
    bugu().args(["check", arg(&f), "--input", arg(&list), "--count"]).assert().code(0).stdout("110\n");
    // Stored once: one remove takes it out.
    bugu().args(["remove", arg(&f), "again", "-q"]).assert().code(0);
    bugu().args(["check", arg(&f), "again"]).assert().code(1);
    // The same from standard input, with --unique too, and as JSON.
    let g = ws.path("g.bugu");
    let output = bugu()
        .args(["build", arg(&g), "--capacity", "200", "--unique", "--json"])
        .write_stdin(text)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let summary = json_of(&output.stdout);
    assert_eq!(
        (summary["added"].as_u64(), summary["repeated"].as_u64(), summary["items"].as_u64()),
        (Some(101), Some(9), Some(110))
    );
}

#[test]
fn repeats_are_found_across_blocks_and_look_alikes_are_all_stored() {
    let ws = Workspace::new();
    // More than one read block (1 MB) of distinct keys, one repeated right away, every seventh
    // repeated at the end; eight-bit fingerprints make look-alikes common (about 3%).
    let mut text = String::from("dup\ndup\n");
    for i in 0..150_000 {
        text += &format!("k{i}\n");
    }
    for i in (0..150_000).step_by(7) {
        text += &format!("k{i}\n");
    }
    assert!(text.len() > 1 << 20);
    let list = ws.file("list.txt", text.as_bytes());
    let f = ws.path("f.bugu");
    let output =
        bugu().args(["build", arg(&f), "--input", arg(&list), "--bits", "8", "--json"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let built = json_of(&output.stdout);
    assert_eq!(
        (built["added"].as_u64(), built["repeated"].as_u64(), built["items"].as_u64()),
        (Some(150_001), Some(21_429 + 1), Some(150_000 + 21_429 + 2)),
        "{built}"
    );
    let info = json_of(&bugu().args(["info", arg(&f), "--json"]).output().unwrap().stdout);
    assert_eq!(info["items"].as_u64(), Some(150_001));
    bugu()
        .args(["check", arg(&f), "--input", arg(&list), "--absent", "--count"])
        .assert()
        .code(0)
        .stdout("0\n");
}

#[test]
fn add_beyond_an_items_copy_limit_says_so_for_that_item_and_adds_the_others() {
    let ws = Workspace::new();
    let f = ws.path("f.bugu");
    bugu().args(["create", arg(&f), "--capacity", "1000", "--bucket-size", "4"]).assert().success();
    // Twenty copies of one key (eight fit), and two other keys.
    let text = format!("{}other\n{}last\n", "same\n".repeat(10), "same\n".repeat(10));
    let output = bugu().args(["add", arg(&f)]).write_stdin(text.clone()).output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let notes: Vec<&str> =
        stderr.lines().filter(|line| line.contains("has no room for another copy")).collect();
    assert_eq!(notes.len(), 1, "one note for the one key: {stderr}");
    assert!(
        notes[0].contains("\"same\" has no room")
            && notes[0].contains("hold 8 matches")
            && notes[0].contains("not added"),
        "{stderr}"
    );
    assert!(stderr.contains("added 10, already present 0, repeated 0, at copy limit 12"), "{stderr}");
    bugu().args(["check", arg(&f), "same", "other", "last"]).assert().code(0);
    // As JSON, the item is named in the result; with -q, only the exit status tells.
    let output = bugu().args(["add", arg(&f), "--json", "same", "new"]).output().unwrap();
    assert_eq!((output.status.code(), output.stderr.as_slice()), (Some(1), &b""[..]));
    let summary = json_of(&output.stdout);
    assert_eq!(summary["at_copy_limit_items"], serde_json::json!(["same"]));
    assert_eq!(summary["added"].as_u64(), Some(1));
    bugu().args(["add", arg(&f), "-q", "same"]).assert().code(1).stdout("").stderr("");
}

#[test]
fn an_empty_list_is_refused_unless_a_capacity_is_given() {
    let ws = Workspace::new();
    let empty = ws.file("empty.txt", b"");
    let f = ws.path("f.bugu");
    fails_with(&["build", arg(&f), "--input", arg(&empty)], "empty.txt: the list is empty");
    assert!(!f.exists());
    let output =
        bugu().args(["build", arg(&f), "--input", arg(&empty), "--capacity", "5000"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("the list is empty: an empty filter for --capacity 5000 items"), "{stderr}");
    let info = json_of(&bugu().args(["info", arg(&f), "--json"]).output().unwrap().stdout);
    assert_eq!((info["items"].as_u64(), info["capacity"].as_u64()), (Some(0), Some(5000)));
    // Standard input, empty: the same note.
    let g = ws.path("g.bugu");
    let output = bugu().args(["build", arg(&g), "--capacity", "70"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("the list is empty: an empty filter for --capacity 70 items"), "{stderr}");
}

#[test]
fn a_growable_filter_reports_its_capacity_and_maximum_honestly() {
    let ws = Workspace::new();
    let f = ws.path("g.bugu");
    bugu()
        .args(["create", arg(&f), "--capacity", "100", "--growable", "--max-capacity", "700"])
        .assert()
        .success();
    let list = ws.list("list.txt", "k", 0..600);
    bugu().args(["add", arg(&f), "--input", arg(&list), "-q"]).assert().success();
    let output = bugu().args(["info", arg(&f)]).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let items = text.lines().find(|line| line.starts_with("items:")).unwrap();
    assert!(!items.contains(" of capacity"), "{items}");
    assert!(items.contains("600; current capacity") && items.contains("maximum 700 items"), "{items}");
    // At its maximum, the hint is about the maximum: it is growable already.
    let more = ws.list("more.txt", "m", 0..1_000);
    let before = fs::read(&f).unwrap();
    fails_with(&["add", arg(&f), "--input", arg(&more)], "its maximum of 700 items (--max-capacity)");
    let output = bugu().args(["add", arg(&f), "--input", arg(&more)]).output().unwrap();
    assert!(!String::from_utf8(output.stderr).unwrap().contains("--growable"));
    assert_eq!(fs::read(&f).unwrap(), before);
}
