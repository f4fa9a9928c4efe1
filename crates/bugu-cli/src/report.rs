//! How a command reports what it did: a summary line on standard error for a person, one JSON
//! object on standard output for a script (`--json`), or nothing at all (`-q`: the exit status is
//! the answer).

use clap::Args;
use serde_json::{Value, json};

use crate::error::{Failure, print};

/// The output flags every command that prints a result or a summary takes.
#[derive(Debug, Clone, Copy, Default, Args)]
pub(crate) struct Output {
    /// Print the result as one JSON object on standard output.
    #[arg(long)]
    pub(crate) json: bool,
    /// Print nothing: the exit status is the answer (an error still prints its one line).
    #[arg(short, long, conflicts_with = "json")]
    pub(crate) quiet: bool,
}

impl Output {
    /// Whether a person is reading: neither `--json` nor `-q`.
    pub(crate) fn for_person(self) -> bool {
        !self.json && !self.quiet
    }

    /// Notes a per-item event on standard error (for a person only; JSON carries it in the
    /// result).
    pub(crate) fn note(self, path: &std::path::Path, what: &str) {
        if self.for_person() {
            eprintln!("bugu: {}: {what}", path.display());
        }
    }

    /// Prints the end of a command: `summary` as `bugu: <text> in <time> (<rate> items/s)` on
    /// standard error if `text` (and a person is reading), or `fields` with the file, the items
    /// read and the time as JSON on standard output.
    pub(crate) fn summary(self, done: Done<'_>, text: bool, mut fields: Value) -> Result<(), Failure> {
        if self.json {
            fields["file"] = json!(done.file.display().to_string());
            fields["items"] = json!(done.items);
            fields["seconds"] = json!(done.seconds);
            let line = serde_json::to_string(&fields).map_err(|error| Failure::message(error.to_string()))?;
            print(&(line + "\n"))
        } else {
            if text && !self.quiet {
                let rate = done.items as f64 / done.seconds.max(1e-9);
                eprintln!("bugu: {} in {:.2} s ({} items/s)", done.text, done.seconds, human(rate));
            }
            Ok(())
        }
    }
}

/// What a command did, for its summary.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Done<'a> {
    pub(crate) file: &'a std::path::Path,
    /// The summary line's words.
    pub(crate) text: &'a str,
    /// Items read.
    pub(crate) items: u64,
    /// Wall-clock time the command took.
    pub(crate) seconds: f64,
}

/// 1234567.0 -> "1.23 M".
fn human(rate: f64) -> String {
    match rate {
        r if r >= 1e6 => format!("{:.2} M", r / 1e6),
        r if r >= 1e3 => format!("{:.1} k", r / 1e3),
        r => format!("{r:.0}"),
    }
}
