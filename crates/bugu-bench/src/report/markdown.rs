//! The markdown report printed on stdout: per size, the main table and bugu's ratios against each
//! peer measured in the same run, then the configurations and any warnings.

use std::fmt::Write as _;

use super::Report;
use crate::contender::{grouped, percent};
use crate::run::Measurement;

/// ns with one decimal.
fn ns(value: f64) -> String {
    format!("{value:.1}")
}

fn ratio(peer: f64, bugu: f64) -> String {
    format!("{:.2}x", peer / bugu)
}

/// Every (bugu row, peer row) pair at the same size, bugu rows in table order.
pub fn ratio_pairs(report: &Report) -> Vec<(&Measurement, &Measurement)> {
    let mut pairs = Vec::new();
    for keys in report.sizes() {
        for bugu in report.at(keys).filter(|m| m.kind.is_bugu()) {
            for peer in report.at(keys).filter(|m| !m.kind.is_bugu()) {
                pairs.push((bugu, peer));
            }
        }
    }
    pairs
}

/// The main table at one size.
pub fn table(report: &Report, keys: usize) -> String {
    let mut out = String::new();
    out.push_str(
        "| filter | insert | find 0% | find 50% | find 100% | delete | FP rate | bits/item | failed inserts | false neg. |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for m in report.at(keys) {
        let fn_total = m.total_false_negatives();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {:.2} | {} | {} |",
            m.name,
            ns(m.insert_ns),
            ns(m.lookup_ns[0]),
            ns(m.lookup_ns[1]),
            ns(m.lookup_ns[2]),
            m.delete_ns.map_or_else(|| "n/a".to_string(), ns),
            percent(m.fp_rate()),
            m.bits_per_item(),
            m.failed_inserts,
            if fn_total == 0 { "0".to_string() } else { format!("**{fn_total}**") },
        );
    }
    out
}

/// bugu's ratios against each peer at one size, one table per bugu row.
pub fn ratio_tables(report: &Report, keys: usize) -> String {
    let mut out = String::new();
    for bugu in report.at(keys).filter(|m| m.kind.is_bugu()) {
        let _ = writeln!(out, "Peer time / {} time (above 1: {} is faster):\n", bugu.name, bugu.name);
        out.push_str(
            "| peer | insert | find 0% | find 50% | find 100% | delete |\n|---|---:|---:|---:|---:|---:|\n",
        );
        for peer in report.at(keys).filter(|m| !m.kind.is_bugu()) {
            let delete = match (peer.delete_ns, bugu.delete_ns) {
                (Some(p), Some(b)) => ratio(p, b),
                _ => "n/a".to_string(),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                peer.name,
                ratio(peer.insert_ns, bugu.insert_ns),
                ratio(peer.lookup_ns[0], bugu.lookup_ns[0]),
                ratio(peer.lookup_ns[1], bugu.lookup_ns[1]),
                ratio(peer.lookup_ns[2], bugu.lookup_ns[2]),
                delete,
            );
        }
        out.push('\n');
    }
    out
}

/// The whole report.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for line in report.preamble() {
        let _ = writeln!(out, "{line}");
    }
    for keys in report.sizes() {
        let _ = writeln!(out, "\n### {} keys ({})\n", grouped(keys), report.key_type);
        out.push_str(&table(report, keys));
        out.push('\n');
        out.push_str(&ratio_tables(report, keys));
    }
    if let Some(&largest) = report.sizes().last() {
        let _ = writeln!(out, "Configurations (at {} keys):\n", grouped(largest));
        for m in report.at(largest) {
            let _ = writeln!(out, "- {}: {}; memory from {}", m.name, m.config, m.memory_source);
        }
    }
    let warnings = report.warnings();
    if !warnings.is_empty() {
        out.push('\n');
        for warning in warnings {
            let _ = writeln!(out, "**{warning}**");
        }
    }
    out
}
