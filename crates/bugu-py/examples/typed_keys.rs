//! Rust's side of the Python tests' cross-front-end check, with typed keys (`bugu::Key`):
//!
//! - `typed_keys write FILE`: saves a filter holding the keys of [`keys`], inserted as their
//!   Rust types (text, bytes, and integers of several widths and signs);
//! - `typed_keys check FILE`: reads a filter file (fixed-size or growable) and prints, for each
//!   probe of [`keys`] and its absent twins, `1` if present and `0` if not, one per line.
//!
//! The Python tests give the same keys as `str`, `bytes` and `int` and compare the answers.

use std::process::ExitCode;

use bugu::persist::FilterKind;
use bugu::{CuckooFilter, Filter, FilterMut, GrowableFilter, Persist};

/// The keys, by type; `present` picks the ones written (the others are probes).
enum Key {
    Text(String),
    Bytes(Vec<u8>),
    Unsigned(u64),
    Signed(i64),
    Small(i32),
}

fn keys(present: bool) -> Vec<Key> {
    let offset: i64 = if present { 0 } else { 1_000_000 };
    let mut keys = Vec::new();
    for i in 0..300i64 {
        let n = i + offset;
        keys.push(Key::Text(format!("rust_{n}_é")));
        keys.push(Key::Bytes(vec![0, 255, (n % 256) as u8, (n / 256) as u8, 7]));
        keys.push(Key::Unsigned(u64::MAX - n as u64));
        keys.push(Key::Signed(-(n + 1) * 1_000_003));
        keys.push(Key::Small(n as i32 * 7));
    }
    keys
}

fn check(filter: &impl Filter) {
    for key in keys(true).iter().chain(&keys(false)) {
        let present = match key {
            Key::Text(text) => filter.contains(text.as_str()),
            Key::Bytes(bytes) => filter.contains(bytes),
            Key::Unsigned(value) => filter.contains(value),
            Key::Signed(value) => filter.contains(value),
            Key::Small(value) => filter.contains(value),
        };
        println!("{}", u8::from(present));
    }
}

fn run(args: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    match args {
        [command, file] if command == "write" => {
            let mut filter =
                CuckooFilter::builder().capacity(2_000).false_positive_rate(0.01).seed(7).build()?;
            for key in keys(true) {
                match key {
                    Key::Text(text) => filter.insert(text.as_str())?,
                    Key::Bytes(bytes) => filter.insert(&bytes)?,
                    Key::Unsigned(value) => filter.insert(&value)?,
                    Key::Signed(value) => filter.insert(&value)?,
                    Key::Small(value) => filter.insert(&value)?,
                }
            }
            filter.save(file)?;
        }
        [command, file] if command == "check" => {
            let bytes = std::fs::read(file)?;
            match FilterKind::detect(&bytes)? {
                FilterKind::Growable => check(&GrowableFilter::from_bytes(&bytes)?),
                _ => check(&CuckooFilter::from_bytes(&bytes)?),
            }
        }
        _ => return Err("usage: typed_keys write|check FILE".into()),
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("typed_keys: {error}");
            ExitCode::FAILURE
        }
    }
}
