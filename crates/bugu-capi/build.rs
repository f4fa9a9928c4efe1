//! Writes the key operations of every handle into `$OUT_DIR/keys.rs`: every operation (insert,
//! insert-unique, contains, count, remove) for every key kind (bytes, string, u64, i64), one key
//! at a time and in batches, for `bugu_filter`, `bugu_growable` and `bugu_expanding`; and each
//! handle's life cycle (free, save, load, to and from a buffer) and statistics, alike for every
//! handle through `bugu::Persist` and `summary()`. They are written once, here,
//! as a table; `src/keys.rs` includes the generated file, and tests/header.rs hands it to cbindgen
//! (which reads source as written, so it would not see functions made by a macro).

use std::fmt::Write as _;
use std::path::PathBuf;

/// A handle type. Every handle boxes a filter that persists through `bugu::Persist` and reports
/// through `summary()`, so its life cycle needs nothing more than its name.
struct Handle {
    /// The name in function names: `bugu_{name}_insert`.
    name: &'static str,
    /// Whether updates need the handle to themselves (`*mut`, through `target_mut`); a
    /// `bugu_filter` is updated through a shared pointer from any thread.
    exclusive_updates: bool,
    /// What the handle is, in doc comments ("filter", "growable filter").
    noun: &'static str,
}

impl Handle {
    /// The handle parameter's pointer type and the function that checks it and gives the filter,
    /// and who else may use the handle meanwhile (for the safety section).
    fn access(&self, update: bool) -> (String, &'static str, &'static str) {
        let name = self.name;
        match (self.exclusive_updates, update) {
            (false, _) => (format!("*const bugu_{name}"), "target", ""),
            (true, false) => (format!("*const bugu_{name}"), "target", " that no call updates meanwhile"),
            (true, true) => (format!("*mut bugu_{name}"), "target_mut", " that no other call uses meanwhile"),
        }
    }
}

const HANDLES: [Handle; 3] = [
    Handle { name: "filter", exclusive_updates: false, noun: "filter" },
    Handle { name: "growable", exclusive_updates: true, noun: "growable filter" },
    Handle { name: "expanding", exclusive_updates: true, noun: "one-table filter" },
];

/// One way of passing a key (or, for batches, `n` keys).
struct KeyKind {
    /// The function name's suffix after the operation.
    suffix: &'static str,
    /// The parameters after the handle.
    params: &'static str,
    /// What the key is (a sentence of the doc comment).
    what: &'static str,
    /// What the caller promises about the parameters; empty when there is nothing to promise.
    promise: &'static str,
    /// The statement that binds `hash` (one key) or `hashes` (a batch) from `target`; when it
    /// reads the caller's memory, the promise above is its safety comment.
    hash: &'static str,
}

const KEYS: [KeyKind; 4] = [
    KeyKind {
        suffix: "",
        params: "key: *const c_void, len: usize",
        what: "The key: the `len` bytes at `key` (NULL allowed when `len` is 0)",
        promise: "`key` points to `len` readable bytes, or `len` is 0",
        hash: "let hash = target.hash_bytes(unsafe { args::bytes(key, len) }?);",
    },
    KeyKind {
        suffix: "_str",
        params: "key: *const c_char",
        what: "The key: the bytes of the NUL-terminated string `key`",
        promise: "`key` is a NUL-terminated string",
        hash: "let hash = target.hash_bytes(unsafe { args::text(key) }?);",
    },
    KeyKind {
        suffix: "_u64",
        params: "key: u64",
        what: "The key: the integer `key` (8 bytes, little-endian)",
        promise: "",
        hash: "let hash = target.hash_u64(key);",
    },
    KeyKind {
        suffix: "_i64",
        params: "key: i64",
        what: "The key: the integer `key` (8 bytes, little-endian, as its `_u64` value when non-negative)",
        promise: "",
        hash: "let hash = target.hash_i64(key);",
    },
];

const BATCH_KEYS: [KeyKind; 4] = [
    KeyKind {
        suffix: "_batch",
        params: "keys: *const *const c_void, lens: *const usize, n: usize",
        what: "The keys: `keys[i]` points to `lens[i]` bytes (NULL allowed when `lens[i]` is 0)",
        promise: "`keys` and `lens` hold `n` values each (or are NULL with `n` 0), and `keys[i]` points to \
                  `lens[i]` readable bytes or `lens[i]` is 0",
        hash: "let hashes = unsafe { batch::hash_bytes(&target, keys, lens, n) }?;",
    },
    KeyKind {
        suffix: "_str_batch",
        params: "keys: *const *const c_char, n: usize",
        what: "The keys: `keys[i]` is a NUL-terminated string (its bytes are the key)",
        promise: "`keys` holds `n` NUL-terminated strings (or is NULL with `n` 0)",
        hash: "let hashes = unsafe { batch::hash_str(&target, keys, n) }?;",
    },
    KeyKind {
        suffix: "_u64_batch",
        params: "keys: *const u64, n: usize",
        what: "The keys: `keys[i]` is an integer (8 bytes, little-endian)",
        promise: "`keys` holds `n` values (or is NULL with `n` 0)",
        hash: "let hashes = unsafe { batch::hash_u64(&target, keys, n) }?;",
    },
    KeyKind {
        suffix: "_i64_batch",
        params: "keys: *const i64, n: usize",
        what: "The keys: `keys[i]` is an integer (8 bytes, little-endian, sign-extended)",
        promise: "`keys` holds `n` values (or is NULL with `n` 0)",
        hash: "let hashes = unsafe { batch::hash_i64(&target, keys, n) }?;",
    },
];

/// An operation: what it does and the call that does it once the hash (or hashes) are known.
struct Operation {
    name: &'static str,
    update: bool,
    doc: &'static str,
    /// The parameter after the key(s), if any, and what the caller promises about it.
    out: Option<(&'static str, &'static str)>,
    /// The call; when it is unsafe, the promise about the parameter is its safety comment.
    call: &'static str,
}

const OPERATIONS: [Operation; 5] = [
    Operation {
        name: "insert",
        update: true,
        doc: "Stores one copy of the key. `BUGU_FULL` or `BUGU_COPY_LIMIT` when there is no room (nothing changed).",
        out: None,
        call: "ops::insert(target, hash)",
    },
    Operation {
        name: "insert_unique",
        update: true,
        doc: "Stores the key unless it may be present; `*added` (may be NULL) tells whether it was stored.",
        out: Some(("added: *mut bool", "`added` is NULL or writable")),
        call: "unsafe { ops::insert_unique(target, hash, added) }",
    },
    Operation {
        name: "contains",
        update: false,
        doc: "Whether the key may be present, in `*found` (false is certain; true is wrong at most at the \
              false-positive rate).",
        out: Some(("found: *mut bool", "`found` is NULL (refused) or writable")),
        call: "unsafe { ops::contains(target, hash, found) }",
    },
    Operation {
        name: "count",
        update: false,
        doc: "How many stored fingerprints match the key (an upper bound on its copies), in `*count`.",
        out: Some(("count: *mut usize", "`count` is NULL (refused) or writable")),
        call: "unsafe { ops::count(target, hash, count) }",
    },
    Operation {
        name: "remove",
        update: true,
        doc: "Removes one copy of the key; `*removed` (may be NULL) tells whether one was found. Remove only \
              keys you inserted.",
        out: Some(("removed: *mut bool", "`removed` is NULL or writable")),
        call: "unsafe { ops::remove(target, hash, removed) }",
    },
];

const BATCH_OPERATIONS: [Operation; 4] = [
    Operation {
        name: "insert",
        update: true,
        doc: "Stores one copy of each of `n` keys, in order, through the filter's batched insert (pipelined \
              in `bugu_filter`). Every key is tried, also after a \
              failure (as `n` one-by-one calls would be); `results` (may be NULL) gets each key's status. \
              Answers `BUGU_OK` if all were stored, else the first failure's status (its message names the \
              key's index). Bad arguments are refused before any key is stored.",
        out: Some(("results: *mut bugu_status", "`results` is NULL or holds `n` writable statuses")),
        call: "unsafe { batch::insert(target, &hashes, results) }",
    },
    Operation {
        name: "contains",
        update: false,
        doc: "Whether each of `n` keys may be present, pipelined: `found[i]` answers key `i`.",
        out: Some(("found: *mut bool", "`found` holds `n` writable bools (NULL refused unless `n` is 0)")),
        call: "unsafe { batch::contains(target, &hashes, found) }",
    },
    Operation {
        name: "count",
        update: false,
        doc: "How many stored fingerprints match each of `n` keys: `counts[i]` answers key `i`.",
        out: Some((
            "counts: *mut usize",
            "`counts` holds `n` writable values (NULL refused unless `n` is 0)",
        )),
        call: "unsafe { batch::count(target, &hashes, counts) }",
    },
    Operation {
        name: "remove",
        update: true,
        doc: "Removes one copy of each of `n` keys, in order; `removed` (may be NULL) gets, for each, whether \
              one was found. Remove only keys you inserted.",
        out: Some(("removed: *mut bool", "`removed` is NULL or holds `n` writable bools")),
        call: "unsafe { batch::remove(target, &hashes, removed) }",
    },
];

/// `statement`, after a safety comment made of the caller's `promise` when it has an unsafe block.
fn with_safety(statement: &str, promise: &str) -> String {
    if statement.contains("unsafe") {
        format!("// SAFETY: the caller promises {promise}.\n        {statement}")
    } else {
        statement.to_string()
    }
}

/// One function: `bugu_{handle}_{operation}{suffix}`.
fn function(out: &mut String, handle: &Handle, operation: &Operation, key: &KeyKind) {
    let (pointer, target, sharing) = handle.access(operation.update);
    let (out_param, out_promise) = operation.out.unwrap_or_default();
    let mut safety = format!("`filter` is NULL (refused) or a live handle{sharing}");
    for promise in [key.promise, out_promise].into_iter().filter(|promise| !promise.is_empty()) {
        write!(safety, "; {promise}").unwrap();
    }
    let mut params = format!("filter: {pointer}, {}", key.params);
    if !out_param.is_empty() {
        write!(params, ", {out_param}").unwrap();
    }
    let (hash, call) = (with_safety(key.hash, key.promise), with_safety(operation.call, out_promise));
    let (doc, what, name, handle_name, suffix) =
        (operation.doc, key.what, operation.name, handle.name, key.suffix);
    write!(
        out,
        "
/// {doc} {what}.
///
/// # Safety
/// {safety}.
#[unsafe(no_mangle)]
pub unsafe extern \"C\" fn bugu_{handle_name}_{name}{suffix}({params}) -> bugu_status {{
    guard(|| {{
        // SAFETY: the caller promises NULL (refused) or a live handle{sharing}.
        let target = unsafe {{ {target}(filter) }}?;
        {hash}
        {call}
    }})
}}
",
    )
    .unwrap();
}

/// A handle's life cycle and report: `bugu_{handle}_free`, `_save`, `_load`, `_to_buffer`,
/// `_from_buffer`, `_stats`.
fn life_cycle(out: &mut String, handle: &Handle) {
    let Handle { name, noun, .. } = handle;
    let (pointer, target, sharing) = handle.access(false);
    write!(
        out,
        "
/// Frees a {noun} (NULL is ignored). No other call may use it during or after this one.
///
/// # Safety
/// `filter` is NULL or a live handle, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern \"C\" fn bugu_{name}_free(filter: {mutable_pointer}) {{
    if !filter.is_null() {{
        // SAFETY: the caller gives back a handle made by Box::into_raw in `publish`.
        let _ = std::panic::catch_unwind(|| drop(unsafe {{ Box::from_raw(filter) }}));
    }}
}}

/// Saves the {noun} to the file `path`, atomically (replaced whole or not at all).
///
/// # Safety
/// `filter` is NULL (refused) or live; `path` is NULL (refused) or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern \"C\" fn bugu_{name}_save(filter: {pointer}, path: *const c_char) -> bugu_status {{
    guard(|| {{
        // SAFETY: the caller promises NULL or a live handle, and NULL or a NUL-terminated path.
        let (f, path) = unsafe {{ ({target}(filter)?, args::path(path)?) }};
        Ok(f.save(path)?)
    }})
}}

/// Loads a {noun} saved by any front end from the file `path`, in `*out`.
///
/// # Safety
/// `path` is NULL (refused) or NUL-terminated; `out` is NULL (refused) or writable.
#[unsafe(no_mangle)]
pub unsafe extern \"C\" fn bugu_{name}_load(path: *const c_char, out: *mut {mutable_pointer}) -> bugu_status {{
    guard(|| {{
        // SAFETY: the caller promises NULL or a NUL-terminated path.
        let path = unsafe {{ args::path(path) }}?;
        publish(Persist::load(path)?, out)
    }})
}}

/// Writes the {noun}'s bytes (its file format) to `buffer` of `capacity` bytes; `*written` gets
/// their length, or the length needed when the answer is `BUGU_BUFFER_TOO_SMALL`. Pass a NULL
/// buffer and 0 to ask for the length.
///
/// # Safety
/// `filter` is NULL (refused) or live; `buffer` holds `capacity` writable bytes or is NULL with 0;
/// `written` is NULL (refused) or writable.
#[unsafe(no_mangle)]
pub unsafe extern \"C\" fn bugu_{name}_to_buffer(
    filter: {pointer},
    buffer: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> bugu_status {{
    guard(|| {{
        // SAFETY: the caller promises NULL or a live handle.
        let f = unsafe {{ {target}(filter) }}?;
        // SAFETY: the caller's promises on `buffer`, `capacity` and `written`.
        unsafe {{ to_buffer(f, buffer, capacity, written) }}
    }})
}}

/// Reads a {noun} from `len` bytes at `buffer` (validated: hostile bytes are refused), in `*out`.
///
/// # Safety
/// `buffer` holds `len` readable bytes or is NULL with 0; `out` is NULL (refused) or writable.
#[unsafe(no_mangle)]
pub unsafe extern \"C\" fn bugu_{name}_from_buffer(
    buffer: *const c_void,
    len: usize,
    out: *mut {mutable_pointer},
) -> bugu_status {{
    guard(|| {{
        // SAFETY: the caller promises `len` readable bytes or NULL with 0.
        let bytes = unsafe {{ args::bytes(buffer, len) }}?;
        publish(Persist::from_bytes(bytes)?, out)
    }})
}}

/// Sizing, occupancy and false-positive rates of the {noun}, in `*stats` (see `bugu_stats`).
///
/// # Safety
/// `filter` is NULL (refused) or a live handle{sharing}; `stats` is NULL (refused) or writable.
#[unsafe(no_mangle)]
pub unsafe extern \"C\" fn bugu_{name}_stats(filter: {pointer}, stats: *mut bugu_stats) -> bugu_status {{
    // SAFETY: the caller promises NULL or a live handle, and NULL or a writable `stats`.
    guard(|| unsafe {{ write_stats(&{target}(filter)?.summary(), stats) }})
}}
",
        mutable_pointer = format!("*mut bugu_{name}"),
    )
    .unwrap();
}

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let mut out = String::from(
        "// Generated by crates/bugu-capi/build.rs: the key operations and life cycle of every handle.\n",
    );
    for handle in &HANDLES {
        for operation in &OPERATIONS {
            for key in &KEYS {
                function(&mut out, handle, operation, key);
            }
        }
        for operation in &BATCH_OPERATIONS {
            for key in &BATCH_KEYS {
                function(&mut out, handle, operation, key);
            }
        }
        life_cycle(&mut out, handle);
    }
    let dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(dir.join("keys.rs"), out).expect("write the generated key operations");
}
