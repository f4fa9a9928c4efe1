//! Errors as Java sees them: every native call runs inside [`guard`], which turns an error into
//! the Java exception it names and a Rust panic into a `RuntimeException`, so that no panic
//! unwinds into the JVM.

use std::panic::{AssertUnwindSafe, catch_unwind};

use jni::JNIEnv;

/// A Java exception to throw: its class and message.
#[derive(Debug)]
pub(crate) struct Thrown {
    class: &'static str,
    message: String,
}

/// A bad configuration or argument (`IllegalArgumentException`).
pub(crate) fn illegal_argument(message: impl ToString) -> Thrown {
    Thrown { class: "java/lang/IllegalArgumentException", message: message.to_string() }
}

/// Bytes or a file that do not hold a filter of the kind asked for, or an I/O failure
/// (`io.github.bugu.BuguException`, checked).
pub(crate) fn bugu_exception(message: impl ToString) -> Thrown {
    Thrown { class: "io/github/bugu/BuguException", message: message.to_string() }
}

impl Thrown {
    /// Memory the filter needed could not be had (`OutOfMemoryError`).
    pub(crate) fn out_of_memory(message: String) -> Thrown {
        Thrown { class: "java/lang/OutOfMemoryError", message }
    }

    /// An update of a filter opened read-only (`UnsupportedOperationException`).
    pub(crate) fn read_only() -> Thrown {
        Thrown {
            class: "java/lang/UnsupportedOperationException",
            message: "the filter was opened read-only (FilterView.open): load it to change it".to_string(),
        }
    }

    /// A call on a filter already closed (`IllegalStateException`).
    pub(crate) fn closed() -> Thrown {
        Thrown { class: "java/lang/IllegalStateException", message: "the filter is closed".to_string() }
    }
}

/// A file that could not be read, written or understood, named in the message.
pub(crate) fn file_failure(path: &std::path::Path, error: impl std::fmt::Display) -> Thrown {
    bugu_exception(format!("{}: {error}", path.display()))
}

/// A failure of the JVM itself (an exception already pending from a JNI call is left to
/// propagate).
impl From<jni::errors::Error> for Thrown {
    fn from(error: jni::errors::Error) -> Self {
        Thrown { class: "java/lang/RuntimeException", message: format!("JNI: {error}") }
    }
}

/// Runs a native call's body: its value, or `fallback` with the exception it raised thrown.
pub(crate) fn guard<T>(
    env: &mut JNIEnv<'_>,
    fallback: T,
    body: impl FnOnce(&mut JNIEnv<'_>) -> Result<T, Thrown>,
) -> T {
    let outcome = catch_unwind(AssertUnwindSafe(|| body(env)));
    let thrown = match outcome {
        Ok(Ok(value)) => return value,
        Ok(Err(thrown)) => thrown,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Thrown { class: "java/lang/RuntimeException", message: format!("bugu: internal error: {what}") }
        }
    };
    // A JNI call that failed may have left its own exception pending: that one is the cause.
    if !env.exception_check().unwrap_or(true) {
        // If even throwing fails there is nothing more native code can do; the JVM reports it.
        let _ = env.throw_new(thrown.class, thrown.message);
    }
    fallback
}
