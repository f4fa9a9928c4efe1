//! The library's errors as Python exceptions, with the library's messages; and the guard that
//! keeps a panic from unwinding into the interpreter.

use std::panic::{AssertUnwindSafe, catch_unwind};

use bugu::expanding::ExpandingConfigError;
use bugu::{ConfigError, GrowableConfigError, InsertError, PersistError};
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::{PyErr, PyResult, create_exception};

create_exception!(
    bugu,
    FilterFullError,
    pyo3::exceptions::PyException,
    "An insert found no room: the filter is full (or holds as many copies of the item as it can). \
     Nothing was changed by the failed insert."
);
create_exception!(
    bugu,
    CorruptFilterError,
    PyValueError,
    "Bytes or a file that are not a valid bugu filter (truncated, damaged, or of another kind)."
);

pub(crate) fn config_error(error: ConfigError) -> PyErr {
    match error {
        ConfigError::OutOfMemory { .. } => PyMemoryError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
}

pub(crate) fn growable_config_error(error: GrowableConfigError) -> PyErr {
    match error {
        GrowableConfigError::Level(error) => config_error(error),
        _ => PyValueError::new_err(error.to_string()),
    }
}

pub(crate) fn expanding_config_error(error: ExpandingConfigError) -> PyErr {
    match error {
        ExpandingConfigError::OutOfMemory { .. } => PyMemoryError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
}

pub(crate) fn insert_error(error: InsertError) -> PyErr {
    match error {
        InsertError::OutOfMemory { .. } => PyMemoryError::new_err(error.to_string()),
        _ => FilterFullError::new_err(error.to_string()),
    }
}

/// The first failure of a batch of inserts, with how many failed.
pub(crate) fn batch_insert_error(results: &[Result<(), InsertError>]) -> PyResult<()> {
    let mut failures = results.iter().filter_map(|result| result.err());
    let Some(first) = failures.next() else { return Ok(()) };
    let failed = 1 + failures.count();
    let message = format!("{failed} of {} keys were not added: {first}", results.len());
    Err(match first {
        InsertError::OutOfMemory { .. } => PyMemoryError::new_err(message),
        _ => FilterFullError::new_err(message),
    })
}

pub(crate) fn persist_error(error: PersistError) -> PyErr {
    match error {
        PersistError::Io(error) => error.into(),
        PersistError::OutOfMemory { .. } => PyMemoryError::new_err(error.to_string()),
        _ => CorruptFilterError::new_err(error.to_string()),
    }
}

/// Runs `work`, turning a panic (a bug in bugu) into a `RuntimeError` instead of letting it
/// unwind: every method of the module runs its body through this.
pub(crate) fn shield<T>(work: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|text| text.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        Err(PyRuntimeError::new_err(format!("internal error in bugu: {message}")))
    })
}
