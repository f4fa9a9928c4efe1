//! The C++ reference benchmark: FastFilter's fastfilter_cpp
//! (<https://github.com/FastFilter/fastfilter_cpp>), `benchmarks/bulk-insert-and-query.exe`.
//! Building it in a checkout, running it, and reading its result rows. None of its code lives
//! here: the harness only runs the program a checkout builds.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The benchmark program, in the checkout's `benchmarks/` folder.
pub const EXE: &str = "bulk-insert-and-query.exe";

/// The benchmark's algorithm id and row name of its 12-bit cuckoo filter (buckets of 4).
pub const CUCKOO12: (u32, &str) = (11, "Cuckoo12");

/// The benchmark's algorithm id and row name of its 13-bit semi-sorted cuckoo filter.
pub const SEMI_SORT13: (u32, &str) = (13, "CuckooSemiSort13");

/// The benchmark's algorithm id and row name of the vector quotient filter. Built only where
/// the compiler targets AVX2 (the benchmark's `-march=native` on an AVX2 machine). Its insert
/// column is the benchmark's `AddAll`, which for VQF inserts the keys one by one in a loop.
pub const VQF: (u32, &str) = (31, "VQF");

/// The benchmark's algorithm id and row name of its blocked Bloom filter (`SimdBlockFilterFixed`,
/// keys added one by one). Built where the compiler targets AVX2, and on aarch64.
pub const BLOCKED_BLOOM: (u32, &str) = (51, "BlockedBloom");

/// Every algorithm the harness runs, in the order the benchmark prints them.
pub const ALGORITHMS: [(u32, &str); 4] = [CUCKOO12, SEMI_SORT13, VQF, BLOCKED_BLOOM];

/// Numbers in a result row after the name.
const COLUMNS: usize = 13;

/// One result row of the benchmark; times are ns per key.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The algorithm's name, e.g. `Cuckoo12`.
    pub name: String,
    /// ns per insert.
    pub add_ns: f64,
    /// ns per remove.
    pub remove_ns: f64,
    /// ns per lookup with 0%, 25%, 50%, 75% and 100% of the looked-up keys present.
    pub find_ns: [f64; 5],
    /// 1 x add + 3 x find.
    pub add_and_3_finds_ns: f64,
    /// False-positive rate in percent (the `ε%` column).
    pub fp_percent: f64,
    /// Bits of memory per key.
    pub bits_per_item: f64,
    /// The information-theoretic minimum bits per key at the measured rate.
    pub optimal_bits_per_item: f64,
    /// Space wasted against the optimum, percent.
    pub wasted_space_percent: f64,
    /// Keys inserted, in millions.
    pub million_keys: f64,
}

/// The result rows in the benchmark's output, in order.
///
/// A result row is a name followed by exactly 13 finite numbers. Everything else — the
/// progress text (overwritten in place with `\r`, so it is split there too), the column headers,
/// the performance-counter lines — is skipped.
pub fn parse_rows(output: &str) -> Vec<Row> {
    output.split(['\n', '\r']).filter_map(parse_row).collect()
}

fn parse_row(line: &str) -> Option<Row> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let split = words.len().checked_sub(COLUMNS).filter(|&n| n > 0)?;
    let (name, numbers) = words.split_at(split);
    let mut values = [0.0; COLUMNS];
    for (value, word) in values.iter_mut().zip(numbers) {
        *value = word.parse::<f64>().ok().filter(|v| v.is_finite())?;
    }
    let [add, remove, f0, f25, f50, f75, f100, combined, fp, bits, optimal, wasted, keys] = values;
    Some(Row {
        name: name.join(" "),
        add_ns: add,
        remove_ns: remove,
        find_ns: [f0, f25, f50, f75, f100],
        add_and_3_finds_ns: combined,
        fp_percent: fp,
        bits_per_item: bits,
        optimal_bits_per_item: optimal,
        wasted_space_percent: wasted,
        million_keys: keys,
    })
}

/// The row named `name`, or an error naming the rows there are.
pub fn find<'a>(rows: &'a [Row], name: &str) -> Result<&'a Row, String> {
    rows.iter().find(|row| row.name == name).ok_or_else(|| {
        let found: Vec<&str> = rows.iter().map(|row| row.name.as_str()).collect();
        format!("the C++ benchmark printed no {name} row (rows found: {})", list_or_none(&found))
    })
}

fn list_or_none(names: &[&str]) -> String {
    if names.is_empty() { "none".to_string() } else { names.join(", ") }
}

/// The benchmark program of the checkout at `checkout`, built first with
/// `make bulk-insert-and-query.exe UNAME_P=x86_64` in its `benchmarks/` folder if it is missing
/// (make's output goes to stderr).
pub fn ensure_built(checkout: &Path) -> Result<PathBuf, String> {
    let dir = checkout.join("benchmarks");
    if !dir.is_dir() {
        return Err(format!(
            "{} has no benchmarks/ folder: is it a fastfilter_cpp checkout?",
            checkout.display()
        ));
    }
    let exe = dir.join(EXE);
    if exe.is_file() {
        return Ok(exe);
    }
    let args = [EXE, "UNAME_P=x86_64"];
    eprintln!("building the C++ benchmark: make {} (in {})", args.join(" "), dir.display());
    let status = Command::new("make")
        .args(args)
        .current_dir(&dir)
        .stdout(Stdio::from(std::io::stderr()))
        .status()
        .map_err(|error| format!("cannot run make (needed to build {}): {error}", exe.display()))?;
    if !status.success() {
        return Err(format!("make {} failed in {} ({status})", args.join(" "), dir.display()));
    }
    if !exe.is_file() {
        return Err(format!("make {} succeeded but {} is missing", args.join(" "), exe.display()));
    }
    Ok(exe)
}

/// Runs `exe` on `keys` keys with the algorithms `ids`; its result rows. Its stderr passes
/// through; its stdout (progress text and results) is read once it exits.
pub fn run(exe: &Path, keys: usize, ids: &[u32]) -> Result<Vec<Row>, String> {
    let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
    let ids = ids.join(",");
    let output = Command::new(exe)
        .arg(keys.to_string())
        .arg(&ids)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|error| format!("cannot run {}: {error}", exe.display()))?;
    if !output.status.success() {
        return Err(format!("{} {keys} {ids} failed ({})", exe.display(), output.status));
    }
    Ok(parse_rows(&String::from_utf8_lossy(&output.stdout)))
}

/// The checkout's commit (`git rev-parse --short HEAD`), if git can tell.
pub fn commit(checkout: &Path) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(checkout)
        .args(["rev-parse", "--short", "HEAD"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let hash = String::from_utf8_lossy(&output.stdout).trim().to_string();
    (output.status.success() && !hash.is_empty()).then_some(hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of the benchmark's output: progress text overwritten with `\r`, a two-line
    /// header, performance-counter lines, then one result row per algorithm.
    const SAMPLE: &str = "checking match size... \r                       \rgenerating samples with \
        probability 0 ... \r                                 \r                    find    find    find    \
        find    find  1*add+                       optimal  wasted million\n\
        \u{20}                                    add  remove      0%     25%     50%     75%    100%  \
        3*find      \u{3b5}%  bits/item  bits/item  space%    keys\n\
        \n\
        1-by-1 add\r             \radd    cycles:   0.0/key, instructions: (  0.0/key, -nan/cycle) cache \
        misses:  0.00/key branch misses: 0.00/key effective frequency 0.00 GHz\n\
        0.25%  cycles:   0.0/key, instructions: (  0.0/key, -nan/cycle) cache misses:  0.00/key\n\
        \u{20}                       Cuckoo12  237.90   87.90   64.24   61.14   63.23   69.04   80.82  \
        440.98  0.1835      12.77       9.09    40.4 100.000\n\
        \n\
        1-by-1 removeremove cycles:   0.0/key, instructions: (  0.0/key, -nan/cycle)\n\
        \u{20}               CuckooSemiSort13  279.37  122.50  104.49   97.86   97.23   98.59   98.36  \
        577.29  0.0928      12.77      10.07    26.7 100.000\n\
        \n\
        batched add\r             \radd    cycles:   0.0/key, instructions: (  0.0/key, -nan/cycle) cache \
        misses:  0.00/key branch misses: 0.00/key effective frequency 0.00 GHz\n\
        1.00%  cycles:   0.0/key, instructions: (  0.0/key, -nan/cycle) cache misses:  0.00/key\n\
        \u{20}                            VQF   22.24    0.00   20.55   24.66   64.02   47.60   17.63  \
        126.91  0.4240      11.47       7.88    45.6   0.100\n\
        \n\
        1-by-1 add\r             \radd    cycles:   0.0/key, instructions: (  0.0/key, -nan/cycle)\n\
        \u{20}                   BlockedBloom    4.00    0.00    5.71    3.25    5.53    5.59    3.30   \
        18.02  0.9490      10.66       6.72    58.7   0.100\n";

    #[test]
    fn result_rows_are_read_and_everything_else_is_skipped() {
        let rows = parse_rows(SAMPLE);
        let names: Vec<&str> = rows.iter().map(|row| row.name.as_str()).collect();
        assert_eq!(names, ALGORITHMS.map(|(_, name)| name), "{rows:#?}");
        let cuckoo = find(&rows, CUCKOO12.1).unwrap();
        assert_eq!(cuckoo.add_ns, 237.90);
        assert_eq!(cuckoo.remove_ns, 87.90);
        assert_eq!(cuckoo.find_ns, [64.24, 61.14, 63.23, 69.04, 80.82]);
        assert_eq!(cuckoo.add_and_3_finds_ns, 440.98);
        assert_eq!((cuckoo.fp_percent, cuckoo.bits_per_item), (0.1835, 12.77));
        assert_eq!((cuckoo.optimal_bits_per_item, cuckoo.wasted_space_percent), (9.09, 40.4));
        assert_eq!(cuckoo.million_keys, 100.0);
        let semi = find(&rows, SEMI_SORT13.1).unwrap();
        assert_eq!((semi.add_ns, semi.find_ns[0], semi.find_ns[4]), (279.37, 104.49, 98.36));
        assert_eq!((semi.fp_percent, semi.bits_per_item), (0.0928, 12.77));
        // The context rows, as the benchmark printed them at 10^5 keys (VQF has no remove).
        let vqf = find(&rows, VQF.1).unwrap();
        assert_eq!((vqf.add_ns, vqf.remove_ns, vqf.find_ns[0], vqf.find_ns[4]), (22.24, 0.0, 20.55, 17.63));
        assert_eq!((vqf.fp_percent, vqf.bits_per_item, vqf.million_keys), (0.4240, 11.47, 0.1));
        let bloom = find(&rows, BLOCKED_BLOOM.1).unwrap();
        assert_eq!((bloom.add_ns, bloom.find_ns[0], bloom.find_ns[4]), (4.00, 5.71, 3.30));
        assert_eq!((bloom.fp_percent, bloom.bits_per_item), (0.9490, 10.66));
    }

    #[test]
    fn a_missing_row_is_an_error_naming_what_was_found() {
        let rows = parse_rows(SAMPLE);
        let error = find(&rows, "Cuckoo16").unwrap_err();
        assert!(
            error.contains("no Cuckoo16 row")
                && error.contains("Cuckoo12, CuckooSemiSort13, VQF, BlockedBloom"),
            "{error}"
        );
        assert!(find(&parse_rows("no results\n"), "Cuckoo12").unwrap_err().contains("none"));
    }

    #[test]
    fn rows_need_a_name_and_thirteen_finite_numbers() {
        let numbers = "1 2 3 4 5 6 7 8 9 10 11 12 13";
        assert_eq!(parse_rows(numbers), vec![]);
        assert_eq!(parse_rows(&format!("X {numbers} 14")).len(), 1); // the name is "X 1"
        assert_eq!(parse_rows(&format!("Two words {numbers}"))[0].name, "Two words");
        assert_eq!(parse_rows(&format!("X {}", numbers.replace("13", "nan"))), vec![]);
        assert_eq!(parse_rows(&format!("X {}", numbers.replace("13", "13%"))), vec![]);
    }
}
