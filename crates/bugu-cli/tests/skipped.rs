//! No silent false negatives: a filter that skipped add-if-absent inserts (an item taken for
//! present because a look-alike's fingerprint was there) refuses removals, which could make the
//! skipped items read absent, unless the user accepts that risk.

mod common;

use std::fs;

use common::{Workspace, arg, bugu, fails_with, json_of};
use predicates::prelude::*;

#[test]
fn remove_refuses_a_filter_that_skipped_unique_inserts_unless_allowed() {
    let ws = Workspace::new();
    // Four-bit fingerprints: among 3,000 distinct keys, many have a look-alike.
    let list = ws.list("list.txt", "key", 0..3_000);
    let f = ws.path("f.bugu");
    let output = bugu()
        .args(["build", arg(&f), "--input", arg(&list), "--bits", "4", "--unique", "--json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let built = json_of(&output.stdout);
    let skipped = built["already_present"].as_u64().unwrap();
    assert!(skipped > 0 && built["repeated"].as_u64() == Some(0), "{built}");

    // Refused, naming the risk and the way out; the file is untouched.
    let before = fs::read(&f).unwrap();
    fails_with(&["remove", arg(&f), "key1"], "refusing to remove");
    fails_with(&["remove", arg(&f), "key1"], "false negatives");
    fails_with(&["remove", arg(&f), "key1"], "--allow-false-negatives");
    assert_eq!(fs::read(&f).unwrap(), before);

    // Accepted: the removes happen, and the skipped items may now read absent.
    let output = bugu()
        .args(["remove", arg(&f), "--input", arg(&list), "--allow-false-negatives", "--json"])
        .output()
        .unwrap();
    let removed = json_of(&output.stdout);
    assert_eq!(removed["removed"].as_u64(), Some(3_000 - skipped), "{removed}");
    assert_ne!(fs::read(&f).unwrap(), before);

    // A filter built without --unique never skipped anything: removes go ahead.
    let g = ws.path("g.bugu");
    bugu().args(["build", arg(&g), "--input", arg(&list), "--bits", "4", "-q"]).assert().code(0);
    bugu().args(["remove", arg(&g), "key1", "-q"]).assert().code(0);
    // add --unique records a skip too.
    bugu().args(["add", arg(&g), "--unique", "key2", "-q"]).assert().code(0);
    fails_with(&["remove", arg(&g), "key2"], "refusing to remove");
    // And the help says so.
    bugu().args(["remove", "--help"]).assert().code(0).stdout(
        predicate::str::contains("--allow-false-negatives").and(predicate::str::contains("false negative")),
    );
}
