//! What a person at a terminal sees: `bugu` run under `script`, which gives it a terminal for
//! standard error while its standard input stays a pipe.

mod common;

use std::process::Command;

use common::{Workspace, arg, bugu_path};

/// Runs a shell command line under a terminal; returns what the terminal showed.
fn at_terminal(command: &str) -> String {
    let output = Command::new("script").args(["-qec", command, "/dev/null"]).output().expect("script runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stdout));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn standard_input_shows_a_count_and_rate_then_the_summary() {
    let ws = Workspace::new();
    let f = ws.path("f.bugu");
    // A pause in the input: the spinner redraws while it waits.
    let shown = at_terminal(&format!(
        "(seq 1 3000; sleep 1; seq 3001 6000) | {} build {} --capacity 10000",
        bugu_path().display(),
        arg(&f)
    ));
    assert!(shown.contains("items read"), "{shown}");
    assert!(shown.contains("/s"), "{shown}");
    assert!(shown.contains("added 6000, already present 0, repeated 0, at copy limit 0"), "{shown}");
}

#[test]
fn a_long_file_shows_a_bar_then_the_save_as_its_own_step() {
    let ws = Workspace::new();
    // Past the 8 MB from which a bar is drawn.
    let list = ws.list("list.txt", "user_", 0..1_000_000);
    let f = ws.path("f.bugu");
    let shown = at_terminal(&format!("{} build {} --input {}", bugu_path().display(), arg(&f), arg(&list)));
    assert!(shown.contains(&format!("saving {}", arg(&f))), "{shown}");
    assert!(shown.contains("added 1000000"), "{shown}");
}
