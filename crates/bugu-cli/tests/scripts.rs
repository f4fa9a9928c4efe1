//! `bugu` in scripts: `--json` results, `-q` with the exit status as the only answer, and the
//! exit codes documented in `--help`.

mod common;

use common::{Workspace, arg, bugu, json_of};
use predicates::prelude::*;

#[test]
fn every_command_that_reports_can_report_json() {
    let ws = Workspace::new();
    let list = ws.list("list.txt", "k", 0..50);
    let f = ws.path("f.bugu");
    let run = |args: &[&str], code: i32| {
        let output = bugu().args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(code), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        assert!(output.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        json_of(&output.stdout)
    };
    let built = run(&["build", arg(&f), "--input", arg(&list), "--json"], 0);
    assert_eq!((built["added"].as_u64(), built["items"].as_u64()), (Some(50), Some(50)));
    assert_eq!(built["file"].as_str(), Some(arg(&f)));
    assert!(built["seconds"].as_f64().is_some());

    let added = run(&["add", arg(&f), "--json", "x", "y"], 0);
    assert_eq!(added["added"].as_u64(), Some(2));

    let removed = run(&["remove", arg(&f), "--json", "x", "never"], 1);
    assert_eq!((removed["removed"].as_u64(), removed["not_found"].as_u64()), (Some(1), Some(1)));

    let checked = run(&["check", arg(&f), "--json", "k1", "y", "absent-key"], 1);
    assert_eq!((checked["may_be_present"].as_u64(), checked["absent"].as_u64()), (Some(2), Some(1)));
    assert_eq!(checked["present_items"], serde_json::json!(["k1", "y"]));
    let checked = run(&["check", arg(&f), "--json", "--absent", "k1", "absent-key"], 1);
    assert_eq!(checked["absent_items"], serde_json::json!(["absent-key"]));
    let counted = run(&["check", arg(&f), "--json", "--count", "k1"], 0);
    assert!(counted.get("present_items").is_none());

    let info = run(&["info", arg(&f), "--json"], 0);
    assert_eq!(info["items"].as_u64(), Some(51));
    let dump = run(&["dump", arg(&f), "--buckets", "0..3", "--json"], 0);
    assert_eq!(dump.as_array().map(Vec::len), Some(3));
    assert_eq!(dump[2]["index"].as_u64(), Some(2));
}

#[cfg(feature = "bench")]
#[test]
fn bench_json_is_the_only_output() {
    // The harness logs its rounds on standard error: only the result goes to standard output.
    let bench = bugu().args(["bench", "--sizes", "1000", "--repeats", "1", "--json"]).output().unwrap();
    assert_eq!(bench.status.code(), Some(0));
    let bench = json_of(&bench.stdout);
    assert!(bench["measurements"].as_array().is_some_and(|rows| rows.len() >= 2), "{bench}");
    // Each rate says which it is: the target both filters were built for, the one measured.
    assert_eq!(bench["target_false_positive_rate"].as_f64(), Some(0.004), "{bench}");
    for row in bench["measurements"].as_array().unwrap() {
        assert!(
            row["measured_false_positive_rate"].as_f64().is_some()
                && row.get("false_positive_rate").is_none()
        );
    }
}

#[test]
fn quiet_prints_nothing_and_answers_with_the_exit_status() {
    let ws = Workspace::new();
    let list = ws.list("list.txt", "k", 0..50);
    let f = ws.path("f.bugu");
    let quiet = |args: &[&str], code: i32| {
        bugu().args(args).arg("-q").assert().code(code).stdout("").stderr("");
    };
    quiet(&["build", arg(&f), "--input", arg(&list)], 0);
    quiet(&["check", arg(&f), "k1", "k2"], 0);
    quiet(&["check", arg(&f), "k1", "absent-key"], 1);
    quiet(&["check", arg(&f), "--count", "k1"], 0);
    quiet(&["add", arg(&f), "new"], 0);
    quiet(&["remove", arg(&f), "new"], 0);
    quiet(&["remove", arg(&f), "new"], 1);
    quiet(&["info", arg(&f)], 0);
    quiet(&["dump", arg(&f), "--buckets", "0..2"], 0);
    // An error still says what went wrong, in one line.
    bugu()
        .args(["info", "missing.bugu", "-q"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("no such file"));
    bugu()
        .args(["check", arg(&f), "-q", "--json", "k1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
}

#[test]
fn help_documents_the_exit_codes() {
    bugu().arg("--help").assert().code(0).stdout(
        predicate::str::contains("Exit status")
            .and(predicate::str::contains("0  success"))
            .and(predicate::str::contains("1  check: some item is absent"))
            .and(predicate::str::contains("2  an error")),
    );
}
