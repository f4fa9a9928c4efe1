//! The real `bugu` binary on temporary files: the commands' everyday work.

mod common;

use std::fs;
use std::path::Path;

use common::{Workspace, bugu, fails_with};
use predicates::prelude::*;

fn count_lines(output: &[u8]) -> usize {
    output.iter().filter(|&&b| b == b'\n').count()
}

#[test]
fn build_then_check_every_line_and_absent_ones() {
    let ws = Workspace::new();
    let list = ws.list("present.txt", "user_", 0..100_000);
    let absent = ws.list("absent.txt", "other_", 0..100_000);
    let filter = ws.path("users.bugu");
    bugu()
        .args(["build", filter.to_str().unwrap(), "--input", list.to_str().unwrap(), "--fpr", "0.01"])
        .assert()
        .success()
        .stderr(predicate::str::contains("added 100000, already present 0, repeated 0, at copy limit 0"));

    // Every built line is found: printed back, in order, and exit 0.
    let output =
        bugu().args(["check", filter.to_str().unwrap(), "--input", list.to_str().unwrap()]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(output.stdout, fs::read(&list).unwrap());

    // Absent lines: the false-positive rate is near the configured 1%, and exit 1.
    let output = bugu()
        .args(["check", filter.to_str().unwrap(), "--input", absent.to_str().unwrap(), "--count"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let false_positives: usize = String::from_utf8(output.stdout).unwrap().trim().parse().unwrap();
    assert!((100..=1_500).contains(&false_positives), "{false_positives} false positives of 100,000");
    let output = bugu()
        .args(["check", filter.to_str().unwrap(), "--input", absent.to_str().unwrap(), "--absent"])
        .output()
        .unwrap();
    assert_eq!(count_lines(&output.stdout), 100_000 - false_positives);
}

#[test]
fn add_remove_check_through_standard_input() {
    let ws = Workspace::new();
    let filter = ws.path("f.bugu");
    let f = filter.to_str().unwrap();
    bugu().args(["create", f, "--capacity", "1000"]).assert().success();
    bugu().args(["add", f]).write_stdin("apple\r\nbanana\n\ncherry").assert().success();
    // CRLF and a missing last newline are line endings; the empty line is an item.
    bugu()
        .args(["check", f, "apple", "banana", "", "cherry"])
        .assert()
        .code(0)
        .stdout("apple\nbanana\n\ncherry\n");
    bugu().args(["check", f, "--absent"]).write_stdin("apple\ndurian\n").assert().code(1).stdout("durian\n");
    bugu()
        .args(["add", f, "--unique", "apple", "elder"])
        .assert()
        .success()
        .stderr(predicate::str::contains("added 1, already present 1"));
    // The skipped "apple" was the item itself, so removing is safe here: say so.
    let remove = ["remove", f, "--allow-false-negatives"];
    bugu().args(remove).write_stdin("apple\nbanana\n").assert().code(0);
    bugu().args(["check", f, "--count", "apple", "banana", "cherry", "elder"]).assert().code(1).stdout("2\n");
    // Removing what is not there: exit 1, and the file is unchanged.
    let before = fs::read(&filter).unwrap();
    bugu().args(remove).arg("never-added").assert().code(1).stderr(predicate::str::contains("not found 1"));
    assert_eq!(fs::read(&filter).unwrap(), before);
}

#[test]
fn hex_items_are_binary_keys() {
    let ws = Workspace::new();
    let f = ws.path("f.bugu");
    let f = f.to_str().unwrap();
    bugu().args(["create", f, "-n", "100"]).assert().success();
    bugu().args(["add", f, "--hex", "00ff10", "0a0d"]).assert().success();
    bugu()
        .args(["check", f, "--hex"])
        .write_stdin("00FF10\n0a0d\n")
        .assert()
        .code(0)
        .stdout("00FF10\n0a0d\n");
    bugu()
        .args(["check", f, "--hex", "0g"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("argument 1 is not hex"));
}

#[test]
fn growable_filters_grow_and_keep_everything() {
    let ws = Workspace::new();
    let list = ws.list("list.txt", "k", 0..20_000);
    let f = ws.path("g.bugu");
    let f = f.to_str().unwrap();
    bugu().args(["create", f, "--capacity", "100", "--growable"]).assert().success();
    bugu().args(["add", f, "--input", list.to_str().unwrap()]).assert().success();
    bugu()
        .args(["check", f, "--input", list.to_str().unwrap(), "--count"])
        .assert()
        .code(0)
        .stdout("20000\n");
    let info = bugu().args(["info", f, "--json"]).output().unwrap();
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).expect("--json parses");
    assert_eq!((info["kind"].as_str(), info["items"].as_u64()), (Some("growable"), Some(20_000)));
    assert!(info["levels"].as_array().unwrap().len() > 1);
}

#[test]
fn one_table_filters_grow_keep_everything_and_refuse_what_they_cannot_do() {
    let ws = Workspace::new();
    let list = ws.list("list.txt", "k", 0..20_000);
    let list = list.to_str().unwrap();
    let f = ws.path("e.bugu");
    let f = f.to_str().unwrap();
    bugu().args(["create", f, "--capacity", "100", "--growable", "--one-table"]).assert().success();
    bugu().args(["add", f, "--input", list]).assert().success();
    bugu().args(["check", f, "--input", list, "--count"]).assert().code(0).stdout("20000\n");
    let info = bugu().args(["info", f, "--json"]).output().unwrap();
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).expect("--json parses");
    assert_eq!((info["kind"].as_str(), info["items"].as_u64()), (Some("expanding"), Some(20_000)));
    assert!(info["level"].as_u64().unwrap() > 0, "{info}");
    assert!(info["expected_false_positive_rate"].as_f64().unwrap() <= 0.001, "{info}");
    bugu()
        .args(["info", f])
        .assert()
        .success()
        .stdout(predicates::str::contains("in one table").and(predicates::str::contains("split pointer")));
    bugu()
        .args(["dump", f, "--buckets", "0..4"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("bugu info"));

    // Removes are exact: every removed item goes, every other stays.
    let half = ws.list("half.txt", "k", 0..10_000);
    bugu().args(["remove", f, "--input", half.to_str().unwrap()]).assert().code(0);
    let rest = ws.list("rest.txt", "k", 10_000..20_000);
    bugu()
        .args(["check", f, "--input", rest.to_str().unwrap(), "--count"])
        .assert()
        .code(0)
        .stdout("10000\n");
    // A skipped add-if-absent insert is remembered, and removes are then refused.
    bugu().args(["add", f, "--unique", "k10000", "-q"]).assert().code(0);
    fails_with(&["remove", f, "k10001"], "refusing to remove");

    // Settings a one-table filter cannot honour are refused by name.
    let g = ws.path("g.bugu");
    let g = g.to_str().unwrap();
    for (extra, says) in [
        (&["--bits", "12"][..], "--bits"),
        (&["--bucket-size", "2"][..], "--bucket-size 4"),
        (&["--hash", "xxh3"][..], "--hash xxh3-mix8"),
    ] {
        let mut args = vec!["create", g, "--capacity", "100", "--growable", "--one-table"];
        args.extend_from_slice(extra);
        fails_with(&args, says);
    }
    bugu().args(["create", g, "--capacity", "100", "--one-table"]).assert().code(2);

    // Past the size it was declared for, an insert is refused and nothing is saved.
    bugu()
        .args(["create", g, "--capacity", "100", "--growable", "--one-table", "--max-capacity", "1000"])
        .assert()
        .success();
    let before = std::fs::read(g).unwrap();
    bugu()
        .args(["add", g, "--input", list])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("declared for"));
    assert_eq!(std::fs::read(g).unwrap(), before);

    // Narrow entries (10 bits here) are read in place too.
    let narrow = ws.path("narrow.bugu");
    let narrow = narrow.to_str().unwrap();
    let some = ws.list("some.txt", "k", 0..500);
    let some = some.to_str().unwrap();
    bugu()
        .args(["build", narrow, "-i", some, "--capacity", "100", "--growable", "--one-table"])
        .args(["--fpr", "0.1", "--max-capacity", "1000", "-q"])
        .assert()
        .code(0);
    let info = bugu().args(["info", narrow, "--json"]).output().unwrap();
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).expect("--json parses");
    let entry_bits = info["fingerprint_bits"].as_u64().unwrap() + info["tail_bits"].as_u64().unwrap() + 1;
    assert!(entry_bits < 15, "{info}");
    bugu().args(["check", narrow, "--input", some, "--count"]).assert().code(0).stdout("500\n");
}

#[test]
fn info_and_dump() {
    let ws = Workspace::new();
    let list = ws.list("list.txt", "x", 0..500);
    let f = ws.path("f.bugu");
    let f = f.to_str().unwrap();
    bugu()
        .args(["build", f, "-i", list.to_str().unwrap(), "--bits", "12", "--bucket-size", "2", "-q"])
        .assert()
        .success()
        .stderr("");
    let info = bugu().args(["info", f, "--json"]).output().unwrap();
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).expect("--json parses");
    assert_eq!(
        (
            info["kind"].as_str(),
            info["items"].as_u64(),
            info["fingerprint_bits"].as_u64(),
            info["bucket_size"].as_u64()
        ),
        (Some("cuckoo"), Some(500), Some(12), Some(2))
    );
    bugu()
        .args(["info", f])
        .assert()
        .success()
        .stdout(predicate::str::contains("items:               500 of capacity 500"));
    let dump = bugu().args(["dump", f, "--buckets", "0..=9"]).output().unwrap();
    assert_eq!(count_lines(&dump.stdout), 10);
    assert!(String::from_utf8(dump.stdout).unwrap().starts_with("#0:"));
    bugu()
        .args(["dump", f, "--buckets", "0..100000"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("outside the filter's"));
}

/// `info` reports every kind in the same fields, and names each rate: the bound that holds now,
/// and the target of a growable filter (a fixed one has none).
#[test]
fn info_gives_every_kind_the_same_fields_and_names_its_rates() {
    let ws = Workspace::new();
    let list = ws.list("list.txt", "k", 0..3_000);
    let kinds: [(&str, &[&str], Option<f64>); 3] = [
        ("cuckoo", &[], None),
        ("growable", &["--growable", "--fpr", "0.01"], Some(0.01)),
        ("expanding", &["--growable", "--one-table", "--fpr", "0.01"], Some(0.01)),
    ];
    for (kind, flags, target) in kinds {
        let f = ws.path(&format!("{kind}.bugu"));
        let f = f.to_str().unwrap();
        bugu().args(["create", f, "--capacity", "4000"]).args(flags).assert().success();
        bugu().args(["add", f, "--input", list.to_str().unwrap(), "-q"]).assert().success();
        let info = bugu().args(["info", f, "--json"]).output().unwrap();
        let info: serde_json::Value = serde_json::from_slice(&info.stdout).expect("--json parses");
        assert_eq!((info["kind"].as_str(), info["items"].as_u64()), (Some(kind), Some(3_000)), "{info}");
        for field in ["capacity", "level_count", "buckets", "bucket_size", "fingerprint_bits", "memory_bytes"]
        {
            assert!(info[field].as_u64().is_some_and(|value| value > 0), "{field}: {info}");
        }
        assert_eq!(info["target_false_positive_rate"].as_f64(), target, "{info}");
        assert!(info.get("false_positive_rate").is_none(), "a rate that does not say which: {info}");
        let bound = info["false_positive_rate_bound"].as_f64().unwrap();
        let expected = info["expected_false_positive_rate"].as_f64().unwrap();
        assert!(0.0 < expected && expected <= bound && bound <= target.unwrap_or(0.001), "{info}");
        let text = String::from_utf8(bugu().args(["info", f]).output().unwrap().stdout).unwrap();
        assert!(text.contains("(the bound)\n"), "{text}");
        assert_eq!(text.contains("target rate:         1.0000% at every size\n"), target.is_some(), "{text}");
    }
}

#[test]
fn each_hash_function_is_kept_in_the_file_and_answers_for_its_items() {
    let ws = Workspace::new();
    // Eight-byte lines take the mixer under xxh3-mix8; the others XXH3 under both.
    let list = ws.list("list.txt", "key_", 1_000..3_000);
    for (flag, name) in [(None, "xxh3-mix8"), (Some("xxh3"), "xxh3"), (Some("xxh3-mix8"), "xxh3-mix8")] {
        let f = ws.path(&format!("{name}.bugu"));
        let f = f.to_str().unwrap();
        let mut create = bugu();
        create.args(["create", f, "--capacity", "2000", "--force"]);
        if let Some(flag) = flag {
            create.args(["--hash", flag]);
        }
        create.assert().success();
        bugu().args(["add", f, "--input", list.to_str().unwrap(), "-q"]).assert().success();
        bugu()
            .args(["check", f, "--input", list.to_str().unwrap(), "--count"])
            .assert()
            .code(0)
            .stdout("2000\n");
        let info = bugu().args(["info", f, "--json"]).output().unwrap();
        let info: serde_json::Value = serde_json::from_slice(&info.stdout).expect("--json parses");
        assert_eq!(info["hash_function"].as_str(), Some(name));
        bugu()
            .args(["info", f])
            .assert()
            .success()
            .stdout(predicate::str::contains(format!("hash {name}\n")));
    }
    fails_with(&["create", "x.bugu", "--capacity", "10", "--hash", "md5"], "invalid value 'md5'");
}

#[test]
fn bad_files_give_one_line_errors() {
    let ws = Workspace::new();
    let good = ws.path("good.bugu");
    bugu()
        .args(["build", good.to_str().unwrap(), "-i", ws.list("l", "a", 0..1000).to_str().unwrap()])
        .assert()
        .success();
    let bytes = fs::read(&good).unwrap();
    let write = |name: &str, content: &[u8]| -> String {
        let path = ws.path(name);
        fs::write(&path, content).unwrap();
        path.to_str().unwrap().to_string()
    };
    let mut corrupt = bytes.clone();
    corrupt[bytes.len() / 2] ^= 0x10;
    let truncated = write("truncated.bugu", &bytes[..bytes.len() - 100]);
    let corrupt = write("corrupt.bugu", &corrupt);
    let text = write("text.bugu", b"hello\n");
    let empty = write("empty.bugu", b"");
    let missing = ws.path("missing.bugu");
    let missing = missing.to_str().unwrap();
    for command in ["check", "add", "remove"] {
        fails_with(&[command, &truncated, "x"], "truncated");
        fails_with(&[command, &corrupt, "x"], "corrupt bugu filter");
        fails_with(&[command, &text, "x"], "not a bugu filter file");
        fails_with(&[command, missing, "x"], "missing.bugu: no such file");
    }
    fails_with(&["check", &empty, "x"], "empty file");
    fails_with(&["info", &corrupt], "checksum mismatch");
    fails_with(&["create", good.to_str().unwrap(), "-n", "5"], "already exists");
    fails_with(
        &["create", &ws.path("n.bugu").to_string_lossy(), "-n", "5", "--bucket-size", "3"],
        "bucket size",
    );
    fails_with(&["add", good.to_str().unwrap(), "a", "--input", "list"], "not both");
    // Bad flags: one line too, exit 2.
    fails_with(&["check"], "required");
    fails_with(&["create", "x.bugu"], "--capacity");
    fails_with(&["check", "f.bugu", "--colour"], "unexpected argument '--colour'");
    bugu().args(["--help"]).assert().code(0).stdout(predicate::str::contains("Usage: bugu"));
}

#[test]
fn a_full_filter_refuses_and_leaves_the_file_byte_identical() {
    let ws = Workspace::new();
    let f = ws.path("small.bugu");
    let f = f.to_str().unwrap();
    bugu().args(["create", f, "--capacity", "50", "--fpr", "0.01"]).assert().success();
    bugu().args(["add", f, "--input", ws.list("first", "a", 0..40).to_str().unwrap()]).assert().success();
    let before = fs::read(f).unwrap();
    let many = ws.list("many", "b", 0..10_000);
    fails_with(&["add", f, "--input", many.to_str().unwrap()], "the filter is full");
    assert_eq!(fs::read(f).unwrap(), before);
}

#[test]
fn build_refuses_standard_input_without_a_capacity_and_sizes_from_it_with_one() {
    let ws = Workspace::new();
    let f = ws.path("f.bugu");
    let f = f.to_str().unwrap();
    fails_with(&["build", f], "--capacity");
    bugu().args(["build", f, "--capacity", "10", "-q"]).write_stdin("a\nb\n").assert().success();
    bugu().args(["check", f, "a", "b"]).assert().code(0);
    assert!(Path::new(f).exists());
}

#[test]
fn a_closed_output_ends_quietly() {
    let ws = Workspace::new();
    let list = ws.list("list.txt", "k", 0..200_000);
    let f = ws.path("f.bugu");
    let f = f.to_str().unwrap();
    bugu().args(["build", f, "-i", list.to_str().unwrap(), "-q"]).assert().success();
    // The reader takes one line and goes away; bugu ends without a word (no panic, no error).
    let script = format!("{} check {f} --input {} | head -1", common::bugu_path().display(), list.display());
    let output = std::process::Command::new("sh").args(["-c", &script]).output().unwrap();
    assert_eq!(output.stdout, b"k0\n");
    assert!(
        !String::from_utf8_lossy(&output.stderr).contains("panicked"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[cfg(feature = "bench")]
#[test]
fn bench_prints_the_bloom_vs_cuckoo_table_and_plots_it() {
    let ws = Workspace::new();
    let plot = ws.path("plot.svg");
    bugu()
        .args(["bench", "--sizes", "1000", "--repeats", "1", "--plot", plot.to_str().unwrap()])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("Bloom filter (fastbloom)")
                .and(predicate::str::contains("Cuckoo filter (bugu)")),
        );
    assert!(fs::read_to_string(plot).unwrap().starts_with("<svg"));
}

#[test]
fn bench_refuses_a_bad_rate_with_or_without_the_table() {
    bugu().args(["bench", "--fpr", "0.9"]).assert().code(2).stderr(predicate::str::contains("--fpr"));
}

/// A default build has no harness: `bench` fails as any error does, saying how to get it.
#[cfg(not(feature = "bench"))]
#[test]
fn bench_without_the_feature_says_how_to_get_it() {
    let out = bugu().args(["bench", "--sizes", "1000", "--json"]).assert().code(2).get_output().clone();
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("bugu: ") && stderr.contains("--features bench"), "{stderr}");
}
