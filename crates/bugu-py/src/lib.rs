//! `import bugu`: the Python module (built by maturin; see `pyproject.toml` and `python/bugu`).
//!
//! The classes are thin over the library's public API: keys become bytes by the project's one
//! encoding (the `keys` module) and are hashed by each filter's `hash_of_bytes`, as in the `bugu` command
//! and the Redis module, so files answer the same in every front end.

mod backend;
mod classes;
mod errors;
mod keys;
mod view;

use pyo3::prelude::*;

/// The compiled part of the `bugu` package.
#[pymodule]
fn _bugu(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add_class::<classes::CuckooFilterPy>()?;
    module.add_class::<classes::GrowableFilterPy>()?;
    module.add_class::<classes::ExpandingFilterPy>()?;
    module.add_class::<classes::ConcurrentFilterPy>()?;
    module.add_class::<view::FilterView>()?;
    module.add_function(wrap_pyfunction!(view::open, module)?)?;
    module.add("FilterFullError", py.get_type::<errors::FilterFullError>())?;
    module.add("CorruptFilterError", py.get_type::<errors::CorruptFilterError>())?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
