//! The table mode's report: the markdown table of every row, the per-insert figures, and the
//! ratios the project judges growth by, each next to its target.

use std::fmt::Write as _;

use bugu_bench::growth::profile::{InsertProfile, clock_cost_ns};
use bugu_bench::growth::rows::{ROWS, Row};
use bugu_bench::run::Measurement;
use bugu_bench::targets::{RatioRow, table_worded};

use super::{Cli, TABLE_RATIOS};

/// Microseconds with one decimal, or "-" when the row has no per-insert fill.
fn micros(ns: Option<u64>) -> String {
    ns.map_or_else(|| "-".to_string(), |ns| format!("{:.1}", ns as f64 / 1_000.0))
}

/// The report of one table-mode run; `profiles` is in [`ROWS`] order (`None` for batched rows).
pub(crate) fn render(
    cli: &Cli,
    results: &[Measurement],
    profiles: &[Option<InsertProfile>],
    sizes: &[usize],
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} keys (random u64), grown from {} (declared maximum {} for ExpandingFilter and qfilter); \
         target false-positive rate {}; {} lookups per mix; median of {} repeats; {}.\n",
        cli.keys,
        cli.initial,
        cli.max_items,
        cli.fpr,
        results[0].lookups,
        cli.repeats.max(1),
        cli.clock.describe()
    );
    out.push_str(
        "| filter | insert ns | slowest insert µs | slowest in each fill µs | p99.9 insert µs | lookup 0% ns | lookup 50% ns | \
         lookup 100% ns | delete ns | bits/item | bits/item averaged | FPR | false neg. | kept keys lost \
         by deletes | failed deletes | configuration |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    let profile = |row: Row| profiles[ROWS.iter().position(|&r| r == row).expect("a row")].as_ref();
    for m in results {
        let row = Row::of(m.kind);
        let p = profile(row);
        let _ = writeln!(
            out,
            "| {} | {:.1} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {} | {:.2} | {} | {:.4}% | {} | {} | {} | {} |",
            row.label(),
            m.insert_ns,
            micros(p.map(|p| p.max_ns)),
            p.map_or("-".to_string(), |p| {
                p.fill_max_ns.iter().map(|&ns| micros(Some(ns))).collect::<Vec<_>>().join(", ")
            }),
            micros(p.map(|p| p.p999_ns)),
            m.lookup_ns[0],
            m.lookup_ns[1],
            m.lookup_ns[2],
            m.delete_ns.map_or("-".to_string(), |ns| format!("{ns:.1}")),
            m.bits_per_item(),
            p.and_then(InsertProfile::bits_averaged).map_or("-".to_string(), |b| format!("{b:.2}")),
            m.fp_rate() * 100.0,
            m.false_negatives,
            m.false_negatives_after_delete.map_or("-".to_string(), |n| n.to_string()),
            m.failed_deletes.map_or("-".to_string(), |n| n.to_string()),
            m.config
        );
    }
    let sizes_text: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
    let _ = writeln!(
        out,
        "\nInsert ns is the amortized time of the timed fill. The slowest insert and the 99.9th \
         percentile come from {} further fills of each one-by-one row with every insert timed on \
         its own ({}), each insert's time its least over those fills: the same keys give every \
         fill the same work, and the least leaves out the pauses the machine adds (on a shared \
         virtual machine a thread is stopped for a millisecond or more now and then, and its CPU \
         clock runs on). The slowest insert of each fill on its own is shown beside it. Each time \
         includes the clock's own cost, {} ns (median of 10,001 readings around nothing, this \
         run). Batched rows \
         insert in batches and have no per-insert figures. Bits/item averaged: the mean of the bits \
         per item when the filter held {} items (memory_bytes() sampled during that fill); for the \
         pre-sized CuckooFilter, the mean over filters pre-sized for each of those sizes (what a \
         user who knew the size would hold; the filter sized for all keys would count its empty \
         table at the small sizes).",
        cli.insert_fills.max(1),
        cli.clock.describe(),
        clock_cost_ns(cli.clock, 10_001),
        if sizes_text.is_empty() {
            "no sampled size (fewer than 10^4 keys)".to_string()
        } else {
            sizes_text.join(", ")
        }
    );

    let find = |row: Row| results.iter().find(|m| Row::of(m.kind) == row).expect("every row is measured");
    let (pre, pre_b, exp, exp_b, qf) = (
        find(Row::PreSized),
        find(Row::PreSizedBatched),
        find(Row::Expanding),
        find(Row::ExpandingBatched),
        find(Row::QFilter),
    );
    let averaged = |row: Row| profile(row).and_then(InsertProfile::bits_averaged);
    let values: [(&str, Option<f64>); 13] = [
        (
            "ExpandingFilter / pre-sized: absent lookups, one by one",
            Some(exp.lookup_ns[0] / pre.lookup_ns[0]),
        ),
        (
            "ExpandingFilter / pre-sized: present lookups, one by one",
            Some(exp.lookup_ns[2] / pre.lookup_ns[2]),
        ),
        (
            "ExpandingFilter / pre-sized: absent lookups, batched",
            Some(exp_b.lookup_ns[0] / pre_b.lookup_ns[0]),
        ),
        (
            "ExpandingFilter / pre-sized: present lookups, batched",
            Some(exp_b.lookup_ns[2] / pre_b.lookup_ns[2]),
        ),
        ("ExpandingFilter / pre-sized: insert, amortized", Some(exp.insert_ns / pre.insert_ns)),
        (
            "ExpandingFilter / pre-sized: bits per item, final",
            Some(exp.bits_per_item() / pre.bits_per_item()),
        ),
        (
            "ExpandingFilter / pre-sized: bits per item averaged over the sizes",
            averaged(Row::Expanding).zip(averaged(Row::PreSized)).map(|(e, p)| e / p),
        ),
        (
            "ExpandingFilter bits per item, final (a value; its target applies at 10^7)",
            Some(exp.bits_per_item()),
        ),
        (
            "ExpandingFilter slowest single insert, µs (a value; its target applies at 10^7)",
            profile(Row::Expanding).map(|p| p.max_ns as f64 / 1_000.0),
        ),
        ("ExpandingFilter measured false-positive rate / target", Some(exp.fp_rate() / cli.fpr)),
        ("ExpandingFilter / qfilter resizeable: absent lookups", Some(exp.lookup_ns[0] / qf.lookup_ns[0])),
        ("ExpandingFilter / qfilter resizeable: present lookups", Some(exp.lookup_ns[2] / qf.lookup_ns[2])),
        (
            "ExpandingFilter / qfilter resizeable: bits per item (same declared maximum)",
            Some(exp.bits_per_item() / qf.bits_per_item()),
        ),
    ];
    let rows: Vec<RatioRow<'_>> = TABLE_RATIOS
        .iter()
        .zip(&values)
        .map(|(&name, &(label, value))| RatioRow { name, label, value, per_round: Vec::new() })
        .collect();
    let table_targets: Vec<_> =
        cli.targets.iter().filter(|t| TABLE_RATIOS.contains(&t.name.as_str())).cloned().collect();
    let (ratios, met) = table_worded(&rows, &table_targets, ["met", "missed"]);
    let _ = writeln!(out, "\n{ratios}\n{met} of {} targets met.", table_targets.len());

    let scalable = find(Row::Scalable);
    for row in [Row::Growable, Row::GrowableBatched, Row::Expanding, Row::ExpandingBatched] {
        let grown = find(row);
        let _ = writeln!(
            out,
            "{}: {:.2}x faster than scalable_cuckoo_filter at 0%, {:.2}x at 100%",
            row.label(),
            scalable.lookup_ns[0] / grown.lookup_ns[0],
            scalable.lookup_ns[2] / grown.lookup_ns[2],
        );
    }
    let chain = find(Row::Growable);
    let _ = writeln!(
        out,
        "bugu GrowableFilter (the chain) / pre-sized: lookups 0% {:.2}x, 100% {:.2}x; bits per item {:.2}x",
        chain.lookup_ns[0] / pre.lookup_ns[0],
        chain.lookup_ns[2] / pre.lookup_ns[2],
        chain.bits_per_item() / pre.bits_per_item(),
    );
    out
}
