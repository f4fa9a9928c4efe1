//! Argument parsing shared by the benchmark binaries.

/// A positive whole number written plainly, with `_` separators or in scientific notation:
/// `10000000`, `10_000_000` and `1e7` are the same count.
pub fn parse_count(text: &str) -> Result<usize, String> {
    let cleaned = text.trim().replace('_', "");
    let value: f64 = cleaned.parse().map_err(|_| format!("not a number: {text}"))?;
    if !(value >= 1.0 && value.fract() == 0.0 && value < 1e12) {
        return Err(format!("expected a positive whole number below 1e12, got {text}"));
    }
    Ok(value as usize)
}

/// A number of keys ([`parse_count`]) from `min` to 10^9.
pub fn parse_keys(text: &str, min: usize) -> Result<usize, String> {
    let keys = parse_count(text)?;
    if (min..=1_000_000_000).contains(&keys) {
        Ok(keys)
    } else {
        Err(format!("number of keys must be from {min} to 1e9: {text}"))
    }
}

/// A number of keys for a table of at least a hundred: the `--sizes` of `vs_fastfilter` and
/// `lookup_kernels`.
pub fn parse_table_keys(text: &str) -> Result<usize, String> {
    parse_keys(text, 100)
}

/// A binary's exit: success, or the error on one line of standard error and failure.
pub fn exit_code(result: Result<(), String>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The arguments the one-process harnesses (`lookup_kernels`, `insert_kernels`) share.
#[derive(Debug, Clone, clap::Args)]
pub struct SizesAndReport {
    /// Numbers of keys, comma-separated: 1e7,1e8 or 10_000_000.
    #[arg(long, value_delimiter = ',', value_parser = parse_table_keys, default_value = "1e7,1e8")]
    pub sizes: Vec<usize>,
    /// Where the report goes.
    #[arg(long, default_value = "target/bench-results")]
    pub out_dir: std::path::PathBuf,
}

/// What the one-process harnesses do with their measurements: measure at each size, render the
/// runs with the machine and its load at the start and the end, write the report to `file` in
/// the output directory, and print it.
pub fn measure_and_report<R>(
    args: &SizesAndReport,
    file: &str,
    mut measure: impl FnMut(usize) -> R,
    render: impl FnOnce(&str, crate::machine::Loads, &[R]) -> String,
) -> Result<(), String> {
    use crate::machine;
    let path = args.out_dir.join(file);
    let start = machine::load_average();
    let runs: Vec<R> = args.sizes.iter().map(|&keys| measure(keys)).collect();
    let report = render(&machine::describe(), (start, machine::load_average()), &runs);
    crate::report::save(&path, &report)?;
    println!("{report}");
    eprintln!("wrote {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_read_in_every_spelling() {
        assert_eq!(parse_count("10000000"), Ok(10_000_000));
        assert_eq!(parse_count("10_000_000"), Ok(10_000_000));
        assert_eq!(parse_count("1e7"), Ok(10_000_000));
        assert_eq!(parse_count(" 2.5e3 "), Ok(2_500));
    }

    #[test]
    fn key_counts_are_bounded() {
        assert_eq!(parse_keys("1e7", 1000), Ok(10_000_000));
        assert!(parse_keys("999", 1000).is_err());
        assert!(parse_keys("2e9", 1000).is_err());
    }

    #[test]
    fn non_counts_are_refused() {
        for text in ["", "x", "0", "-5", "1.5", "1e12", "NaN", "inf"] {
            assert!(parse_count(text).is_err(), "{text:?} accepted");
        }
    }
}
