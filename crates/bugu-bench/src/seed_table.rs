//! `--seed-table`: the seed article's "Bloom vs cuckoo" table with measured numbers — memory,
//! insert time, query time and false-positive rate at 10K, 100K and 1M keys, a cuckoo filter
//! (bugu) against a Bloom filter (fastbloom) configured for the same target rate.

use std::fmt::Write as _;

use crate::contender::{Kind, grouped, percent};
use crate::report::Report;
use crate::run::Measurement;

/// The article's sizes.
pub const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];

/// The two rows, Bloom first as in the article.
pub const KINDS: [Kind; 2] = [Kind::FastBloom, Kind::BuguRate];

/// Bytes for people: B, KiB or MiB.
pub fn bytes(n: usize) -> String {
    let n = n as f64;
    if n >= 1024.0 * 1024.0 {
        format!("{:.2} MiB", n / (1024.0 * 1024.0))
    } else if n >= 1024.0 {
        format!("{:.1} KiB", n / 1024.0)
    } else {
        format!("{n} B")
    }
}

/// The table in markdown (`report` holds the two rows at each size).
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Bloom vs cuckoo at a target false-positive rate of {} ({} keys; {}; median of {} repeats by {})\n",
        percent(report.fpr),
        report.key_type,
        report.machine,
        report.repeats,
        report.clock.describe()
    );
    out.push_str("| keys | | Bloom filter (fastbloom) | Cuckoo filter (bugu) |\n|---:|---|---:|---:|\n");
    for keys in report.sizes() {
        let row = |kind: Kind| report.at(keys).find(|m| m.kind == kind);
        let (Some(bloom), Some(cuckoo)) = (row(Kind::FastBloom), row(Kind::BuguRate)) else { continue };
        let cells = |label: &str, f: &dyn Fn(&Measurement) -> String| {
            format!("| | {label} | {} | {} |\n", f(bloom), f(cuckoo))
        };
        let _ = writeln!(out, "| {} | configuration | {} | {} |", grouped(keys), bloom.config, cuckoo.config);
        out.push_str(&cells("memory", &|m| {
            format!("{} ({:.2} bits/key)", bytes(m.memory_bytes), m.bits_per_item())
        }));
        out.push_str(&cells("insert", &|m| format!("{:.1} ns/key", m.insert_ns)));
        out.push_str(&cells("query, present key", &|m| format!("{:.1} ns", m.lookup_ns[2])));
        out.push_str(&cells("query, absent key", &|m| format!("{:.1} ns", m.lookup_ns[0])));
        out.push_str(&cells("false-positive rate", &|m| format!("{} measured", percent(m.fp_rate()))));
        out.push_str(&cells("delete", &|m| {
            m.delete_ns.map_or_else(|| "not supported".to_string(), |ns| format!("{ns:.1} ns/key"))
        }));
    }
    for warning in report.warnings() {
        let _ = writeln!(out, "\n**{warning}**");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn byte_units() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(14_336), "14.0 KiB");
        assert_eq!(bytes(3 * 1024 * 1024), "3.00 MiB");
    }
}
