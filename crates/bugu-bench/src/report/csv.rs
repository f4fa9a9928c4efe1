//! CSV files: one row per filter and size, and one per (bugu row, peer, size) ratio — for
//! spreadsheets and for re-plotting without re-running.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use super::Report;
use super::markdown::ratio_pairs;

/// Quotes a field if it needs quoting.
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

fn optional<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(String::new, |v| v.to_string())
}

/// The measurements, one row per filter and size.
pub fn measurements(report: &Report) -> String {
    let mut out = String::from(
        "key_type,keys,filter,config,insert_ns,lookup_0_ns,lookup_50_ns,lookup_100_ns,delete_ns,lookups,\
         false_positives,fp_rate,memory_bytes,bits_per_item,memory_source,failed_inserts,false_negatives,\
         false_negatives_after_delete,failed_deletes,repeats\n",
    );
    for m in &report.measurements {
        let _ = writeln!(
            out,
            "{},{},{},{},{:.2},{:.2},{:.2},{:.2},{},{},{},{:.6},{},{:.3},{},{},{},{},{},{}",
            report.key_type,
            m.keys,
            field(&m.name),
            field(&m.config),
            m.insert_ns,
            m.lookup_ns[0],
            m.lookup_ns[1],
            m.lookup_ns[2],
            optional(m.delete_ns.map(|ns| format!("{ns:.2}"))),
            m.lookups,
            m.false_positives,
            m.fp_rate(),
            m.memory_bytes,
            m.bits_per_item(),
            field(m.memory_source),
            m.failed_inserts,
            m.false_negatives,
            optional(m.false_negatives_after_delete),
            optional(m.failed_deletes),
            report.repeats,
        );
    }
    out
}

/// Peer time over bugu time for every bugu row and peer (above 1: bugu is faster).
pub fn ratios(report: &Report) -> String {
    let mut out = String::from("key_type,keys,bugu,peer,insert,lookup_0,lookup_50,lookup_100,delete\n");
    for (bugu, peer) in ratio_pairs(report) {
        let ratio = |a: f64, b: f64| format!("{:.3}", a / b);
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{}",
            report.key_type,
            bugu.keys,
            field(&bugu.name),
            field(&peer.name),
            ratio(peer.insert_ns, bugu.insert_ns),
            ratio(peer.lookup_ns[0], bugu.lookup_ns[0]),
            ratio(peer.lookup_ns[1], bugu.lookup_ns[1]),
            ratio(peer.lookup_ns[2], bugu.lookup_ns[2]),
            match (peer.delete_ns, bugu.delete_ns) {
                (Some(p), Some(b)) => ratio(p, b),
                _ => String::new(),
            },
        );
    }
    out
}

/// Writes `text` to `path`, creating the directory.
pub fn write(path: &Path, text: &str) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn fields_with_commas_are_quoted() {
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"x\", y"), "\"say \"\"x\"\", y\"");
        assert_eq!(field("plain"), "plain");
    }
}
