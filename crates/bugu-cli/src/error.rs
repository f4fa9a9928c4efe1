//! The one-line errors the command prints (`bugu: FILE: what is wrong`), and its exit codes.

use std::fmt;
use std::io;
use std::path::Path;
use std::process::ExitCode;

/// Why a command failed: printed as one line on standard error, exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    message: String,
    /// The reader of the output went away (`bugu check ... | head`): end quietly, as `grep` does.
    closed_output: bool,
}

impl Failure {
    /// A failure described in words (a bad flag, a refused insert, ...).
    pub(crate) fn message(message: impl Into<String>) -> Self {
        Self { message: message.into(), closed_output: false }
    }

    /// An error writing to standard output.
    pub(crate) fn output(error: io::Error) -> Self {
        Self {
            closed_output: error.kind() == io::ErrorKind::BrokenPipe,
            ..Self::message(format!("cannot write the output: {error}"))
        }
    }

    /// An I/O error on a file, in words (no error codes).
    pub(crate) fn io(path: &Path, error: &io::Error) -> Self {
        let what = match error.kind() {
            io::ErrorKind::IsADirectory => {
                return Self::message(format!("{} is a directory", path.display()));
            }
            // The library's own errors explain themselves (a read-only file it will not replace).
            _ if error.get_ref().is_some() => error.to_string(),
            io::ErrorKind::NotFound => "no such file".to_string(),
            io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            io::ErrorKind::AlreadyExists => "already exists (use --force to replace it)".to_string(),
            _ => error.to_string(),
        };
        Self::message(what).in_file(path)
    }

    /// The same failure, naming the file it concerns.
    pub(crate) fn in_file(self, path: &Path) -> Self {
        Self { message: format!("{}: {}", path.display(), self.message), ..self }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Writes text to standard output.
pub(crate) fn print(text: &str) -> Result<(), Failure> {
    use std::io::Write;
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(Failure::output)
}

/// How a command that succeeded ended, as `grep` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Exit 0: every item was found (or added, or removed).
    All,
    /// Exit 1: some item was absent (`check`) or not removed (`remove`).
    Some,
}

/// The exit code of a command's outcome, printing the failure if there is one.
pub(crate) fn exit_code(outcome: Result<Status, Failure>) -> ExitCode {
    match outcome {
        Ok(Status::All) => ExitCode::SUCCESS,
        Ok(Status::Some) => ExitCode::from(1),
        Err(failure) if failure.closed_output => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("bugu: {failure}");
            ExitCode::from(2)
        }
    }
}
