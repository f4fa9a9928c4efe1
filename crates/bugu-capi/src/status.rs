//! Status codes, the thread's last error message, and the guard every entry point runs in.

use std::cell::RefCell;
use std::ffi::{CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

use bugu::expanding::ExpandingConfigError;
use bugu::{ConfigError, GrowableConfigError, InsertError, PersistError};

/// What a function did: `BUGU_OK`, or why it failed (then `bugu_last_error_message` says more).
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum bugu_status {
    /// Success.
    BUGU_OK = 0,
    /// No room for the item; nothing was changed.
    BUGU_FULL = 1,
    /// The item is already stored as often as one item can be; nothing was changed.
    BUGU_COPY_LIMIT = 2,
    /// A NULL handle, a NULL key with a non-zero length, or a bad configuration.
    BUGU_INVALID_ARGUMENT = 3,
    /// Bytes or a file that are not a valid filter of the asked kind.
    BUGU_CORRUPT = 4,
    /// Memory could not be allocated.
    BUGU_OUT_OF_MEMORY = 5,
    /// Reading or writing a file failed.
    BUGU_IO = 6,
    /// The caller's buffer is too small.
    BUGU_BUFFER_TOO_SMALL = 7,
    /// An internal error (a caught panic): a bug in bugu.
    BUGU_INTERNAL = 8,
}

/// A failure: its status and its message.
pub(crate) struct Failure(pub(crate) bugu_status, pub(crate) String);

pub(crate) type Outcome = Result<(), Failure>;

pub(crate) fn invalid(message: impl Into<String>) -> Failure {
    Failure(bugu_status::BUGU_INVALID_ARGUMENT, message.into())
}

impl From<InsertError> for Failure {
    fn from(error: InsertError) -> Self {
        let status = match error {
            InsertError::CopyLimit { .. } => bugu_status::BUGU_COPY_LIMIT,
            InsertError::OutOfMemory { .. } => bugu_status::BUGU_OUT_OF_MEMORY,
            _ => bugu_status::BUGU_FULL,
        };
        Failure(status, error.to_string())
    }
}

impl From<ConfigError> for Failure {
    fn from(error: ConfigError) -> Self {
        let status = match error {
            ConfigError::OutOfMemory { .. } => bugu_status::BUGU_OUT_OF_MEMORY,
            _ => bugu_status::BUGU_INVALID_ARGUMENT,
        };
        Failure(status, error.to_string())
    }
}

impl From<GrowableConfigError> for Failure {
    fn from(error: GrowableConfigError) -> Self {
        match error {
            GrowableConfigError::Level(error) => error.into(),
            error => invalid(error.to_string()),
        }
    }
}

impl From<ExpandingConfigError> for Failure {
    fn from(error: ExpandingConfigError) -> Self {
        let status = match error {
            ExpandingConfigError::OutOfMemory { .. } => bugu_status::BUGU_OUT_OF_MEMORY,
            _ => bugu_status::BUGU_INVALID_ARGUMENT,
        };
        Failure(status, error.to_string())
    }
}

impl From<PersistError> for Failure {
    fn from(error: PersistError) -> Self {
        let status = match error {
            PersistError::OutOfMemory { .. } => bugu_status::BUGU_OUT_OF_MEMORY,
            PersistError::Io(_) => bugu_status::BUGU_IO,
            _ => bugu_status::BUGU_CORRUPT,
        };
        Failure(status, error.to_string())
    }
}

impl From<std::io::Error> for Failure {
    fn from(error: std::io::Error) -> Self {
        let status = match error.kind() {
            std::io::ErrorKind::OutOfMemory => bugu_status::BUGU_OUT_OF_MEMORY,
            _ => bugu_status::BUGU_IO,
        };
        Failure(status, error.to_string())
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|last| *last.borrow_mut() = text);
}

/// Runs an entry point's body: a panic becomes `BUGU_INTERNAL`, a failure its status, and either
/// sets the thread's last error message.
pub(crate) fn guard(body: impl FnOnce() -> Outcome) -> bugu_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => bugu_status::BUGU_OK,
        Ok(Err(Failure(status, message))) => {
            set_last_error(&message);
            status
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            set_last_error(&format!("internal error (a bug in bugu): {what}"));
            bugu_status::BUGU_INTERNAL
        }
    }
}

/// The message of the last failed call on this thread ("" if none), valid until the next failing
/// call on this thread. Never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn bugu_last_error_message() -> *const c_char {
    catch_unwind(|| LAST_ERROR.with(|last| last.borrow().as_ptr())).unwrap_or(c"internal error".as_ptr())
}
