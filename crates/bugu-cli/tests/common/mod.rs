//! What the integration tests share: the real `bugu` binary, a scratch directory with lists,
//! and the check of a one-line error.

#![allow(dead_code, unreachable_pub)]

use std::fs;
use std::path::PathBuf;

use assert_cmd::Command;
use tempfile::TempDir;

pub fn bugu() -> Command {
    Command::cargo_bin("bugu").expect("the binary is built")
}

/// The path of the binary, for tests that spawn it themselves.
pub fn bugu_path() -> PathBuf {
    assert_cmd::cargo::cargo_bin("bugu")
}

/// A temporary directory, removed at the end of the test.
pub struct Workspace {
    pub dir: TempDir,
}

impl Workspace {
    pub fn new() -> Self {
        Self { dir: TempDir::new().expect("a temporary directory") }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A list of the lines `prefix<i>` for `i` in `lines`.
    pub fn list(&self, name: &str, prefix: &str, lines: std::ops::Range<u32>) -> PathBuf {
        let text: String = lines.map(|i| format!("{prefix}{i}\n")).collect();
        self.file(name, text.as_bytes())
    }

    /// A file holding `content`.
    pub fn file(&self, name: &str, content: &[u8]) -> PathBuf {
        let path = self.path(name);
        fs::write(&path, content).expect("written");
        path
    }

    /// The names in the directory, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }
}

/// The path as a `&str` argument.
pub fn arg(path: &std::path::Path) -> &str {
    path.to_str().expect("a UTF-8 temporary path")
}

/// One line on standard error, `bugu: ...` containing `message`, and exit 2.
pub fn fails_with(args: &[&str], message: &str) {
    let output = bugu().args(args).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{args:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("bugu: ") && stderr.contains(message), "{stderr}");
}

/// The JSON object a command printed on standard output.
pub fn json_of(stdout: &[u8]) -> serde_json::Value {
    serde_json::from_slice(stdout)
        .unwrap_or_else(|error| panic!("not JSON ({error}): {}", String::from_utf8_lossy(stdout)))
}
