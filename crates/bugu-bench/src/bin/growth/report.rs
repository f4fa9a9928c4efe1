//! The table mode's report: the markdown table of every row measured, the per-insert figures,
//! and the ratios the project judges growth by, each next to its target; a ratio that needs a
//! skipped row is "n/a (row skipped)", neither met nor missed.

use std::fmt::Write as _;

use bugu_bench::growth::profile::{InsertProfile, SAMPLES_PER_DECADE, clock_cost_ns};
use bugu_bench::growth::rows::{ROWS, Row};
use bugu_bench::run::Measurement;
use bugu_bench::targets::{RatioRow, table_worded};

use super::{Cli, TABLE_RATIOS};

/// Microseconds with one decimal, or "-" when the row has no per-insert fill.
fn micros(ns: Option<u64>) -> String {
    ns.map_or_else(|| "-".to_string(), |ns| format!("{:.1}", ns as f64 / 1_000.0))
}

/// Bits with two decimals, or "-".
fn bits(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), |b| format!("{b:.2}"))
}

/// What a ratio is called, in words, which rows it needs, and its value when they were measured.
struct Ratio {
    name: &'static str,
    label: &'static str,
    needs: &'static [Row],
    value: Option<f64>,
}

/// The report of one table-mode run: `results` of the rows measured, `profiles` of their
/// one-by-one rows, `sizes` the memory was sampled at.
pub(crate) fn render(
    cli: &Cli,
    results: &[Measurement],
    profiles: &[(Row, InsertProfile)],
    sizes: &[usize],
) -> String {
    let mut out = String::new();
    let skipped: Vec<&str> = ROWS.iter().filter(|row| cli.skip.contains(row)).map(|row| row.name()).collect();
    let _ = writeln!(
        out,
        "{} keys (random u64), grown from {} (declared maximum {} for ExpandingFilter and qfilter); \
         target false-positive rate {}; {} lookups per mix; median of {} repeats; {}{}.\n",
        cli.keys,
        cli.initial,
        cli.max_items,
        cli.fpr,
        cli.max_lookups.min(cli.keys),
        cli.repeats.max(1),
        cli.clock.describe(),
        if skipped.is_empty() { String::new() } else { format!("; rows skipped: {}", skipped.join(", ")) }
    );
    out.push_str(
        "| filter | insert ns | slowest insert µs | slowest in each fill µs | p99.9 insert µs | lookup 0% ns | lookup 50% ns | \
         lookup 100% ns | delete ns | bits/item | bits/item averaged | bits/item peak | FPR | false neg. | kept keys \
         lost by deletes | failed deletes | configuration |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    let profile = |row: Row| profiles.iter().find(|(r, _)| *r == row).map(|(_, p)| p);
    for m in results {
        let row = Row::of(m.kind);
        let p = profile(row);
        let _ = writeln!(
            out,
            "| {} | {:.1} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {} | {:.2} | {} | {} | {:.4}% | {} | {} | {} | {} |",
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
            bits(p.and_then(InsertProfile::bits_averaged)),
            bits(p.and_then(InsertProfile::bits_peak)),
            m.fp_rate() * 100.0,
            m.false_negatives,
            m.false_negatives_after_delete.map_or("-".to_string(), |n| n.to_string()),
            m.failed_deletes.map_or("-".to_string(), |n| n.to_string()),
            m.config
        );
    }
    let sampled = match (sizes.first(), sizes.last()) {
        (Some(first), Some(last)) => format!(
            "when the filter held each of {} sizes from {first} to {last} ({SAMPLES_PER_DECADE} per decade, \
             log-spaced, and the key count)",
            sizes.len()
        ),
        _ => "at no size (fewer than 10^3 keys)".to_string(),
    };
    let _ = writeln!(
        out,
        "\nInsert ns is the amortized time of the timed fill. The slowest insert and the 99.9th \
         percentile come from {} further fill(s) of each one-by-one row with every insert timed on \
         its own ({}), each insert's time its least over those fills: the same keys give every \
         fill the same work, and the least leaves out the pauses the machine adds (on a shared \
         virtual machine a thread is stopped for a millisecond or more now and then, and its CPU \
         clock runs on). The slowest insert of each fill on its own is shown beside it. Each time \
         includes the clock's own cost, {} ns (median of 10,001 readings around nothing, this \
         run). Batched rows insert in batches and have no per-insert figures. Bits/item averaged \
         and peak: the mean and the most of the bits per item {sampled} (memory_bytes() sampled \
         during the first of those fills); for the pre-sized CuckooFilter, over filters pre-sized \
         for each of those sizes (what a user who knew the size would hold; the filter sized for \
         all keys would count its empty table at the small sizes).",
        cli.insert_fills.max(1),
        cli.clock.describe(),
        clock_cost_ns(cli.clock, 10_001),
    );

    let find = |row: Row| results.iter().find(|m| Row::of(m.kind) == row);
    let ratio = |a: Row, b: Row, f: fn(&Measurement) -> f64| find(a).zip(find(b)).map(|(a, b)| f(a) / f(b));
    let averaged = |row: Row| profile(row).and_then(InsertProfile::bits_averaged);
    let (exp, pre, exp_b, pre_b, qf) =
        (Row::Expanding, Row::PreSized, Row::ExpandingBatched, Row::PreSizedBatched, Row::QFilter);
    let ratios = [
        Ratio {
            name: "insert",
            label: "ExpandingFilter / pre-sized: insert, amortized",
            needs: &[Row::Expanding, Row::PreSized],
            value: ratio(exp, pre, |m| m.insert_ns),
        },
        Ratio {
            name: "qfilter-insert",
            label: "ExpandingFilter / qfilter resizeable: insert, amortized",
            needs: &[Row::Expanding, Row::QFilter],
            value: ratio(exp, qf, |m| m.insert_ns),
        },
        Ratio {
            name: "lookup-absent",
            label: "ExpandingFilter / pre-sized: absent lookups, one by one",
            needs: &[Row::Expanding, Row::PreSized],
            value: ratio(exp, pre, |m| m.lookup_ns[0]),
        },
        Ratio {
            name: "lookup-present",
            label: "ExpandingFilter / pre-sized: present lookups, one by one",
            needs: &[Row::Expanding, Row::PreSized],
            value: ratio(exp, pre, |m| m.lookup_ns[2]),
        },
        Ratio {
            name: "lookup-absent-batched",
            label: "ExpandingFilter / pre-sized: absent lookups, batched",
            needs: &[Row::ExpandingBatched, Row::PreSizedBatched],
            value: ratio(exp_b, pre_b, |m| m.lookup_ns[0]),
        },
        Ratio {
            name: "lookup-present-batched",
            label: "ExpandingFilter / pre-sized: present lookups, batched",
            needs: &[Row::ExpandingBatched, Row::PreSizedBatched],
            value: ratio(exp_b, pre_b, |m| m.lookup_ns[2]),
        },
        Ratio {
            name: "qfilter-absent",
            label: "ExpandingFilter / qfilter resizeable: absent lookups",
            needs: &[Row::Expanding, Row::QFilter],
            value: ratio(exp, qf, |m| m.lookup_ns[0]),
        },
        Ratio {
            name: "qfilter-present",
            label: "ExpandingFilter / qfilter resizeable: present lookups",
            needs: &[Row::Expanding, Row::QFilter],
            value: ratio(exp, qf, |m| m.lookup_ns[2]),
        },
        Ratio {
            name: "bits-peak",
            label: "ExpandingFilter bits per item, the most at any sampled size (a value)",
            needs: &[Row::Expanding],
            value: profile(exp).and_then(InsertProfile::bits_peak),
        },
        Ratio {
            name: "qfilter-bits-averaged",
            label: "ExpandingFilter / qfilter resizeable: bits per item averaged over the sampled sizes",
            needs: &[Row::Expanding, Row::QFilter],
            value: averaged(exp).zip(averaged(qf)).map(|(e, q)| e / q),
        },
        Ratio {
            name: "slowest-insert-us",
            label: "ExpandingFilter slowest single insert, µs (a value)",
            needs: &[Row::Expanding],
            value: profile(exp).map(|p| p.max_ns as f64 / 1_000.0),
        },
        Ratio {
            name: "fpr-over-target",
            label: "ExpandingFilter measured false-positive rate / target",
            needs: &[Row::Expanding],
            value: find(exp).map(|m| m.fp_rate() / cli.fpr),
        },
        Ratio {
            name: "bits-final",
            label: "ExpandingFilter / pre-sized: bits per item, final",
            needs: &[Row::Expanding, Row::PreSized],
            value: ratio(exp, pre, Measurement::bits_per_item),
        },
        Ratio {
            name: "bits-averaged",
            label: "ExpandingFilter / pre-sized: bits per item averaged over the sampled sizes",
            needs: &[Row::Expanding, Row::PreSized],
            value: averaged(exp).zip(averaged(pre)).map(|(e, p)| e / p),
        },
        Ratio {
            name: "bits-per-item",
            label: "ExpandingFilter bits per item, final (a value)",
            needs: &[Row::Expanding],
            value: find(exp).map(Measurement::bits_per_item),
        },
        Ratio {
            name: "qfilter-bits",
            label: "ExpandingFilter / qfilter resizeable: bits per item, final (same declared maximum)",
            needs: &[Row::Expanding, Row::QFilter],
            value: ratio(exp, qf, Measurement::bits_per_item),
        },
    ];
    assert_eq!(
        ratios.each_ref().map(|r| r.name),
        TABLE_RATIOS,
        "the report prints every table ratio, in order"
    );
    let rows: Vec<RatioRow<'_>> = ratios
        .iter()
        .map(|r| RatioRow {
            name: r.name,
            label: r.label,
            value: r.value,
            per_round: Vec::new(),
            unmeasured: r.needs.iter().any(|row| cli.skip.contains(row)).then_some("row skipped"),
        })
        .collect();
    let table_targets: Vec<_> =
        cli.targets.iter().filter(|t| TABLE_RATIOS.contains(&t.name.as_str())).cloned().collect();
    let (ratio_table, met) = table_worded(&rows, &table_targets, ["met", "missed"]);
    let not_applicable = table_targets
        .iter()
        .filter(|t| rows.iter().any(|r| r.name == t.name && r.value.is_none() && r.unmeasured.is_some()))
        .count();
    let _ = write!(out, "\n{ratio_table}\n{met} of {} targets met", table_targets.len() - not_applicable);
    if not_applicable > 0 {
        let _ = write!(out, "; {not_applicable} n/a (row skipped)");
    }
    out.push_str(".\n");

    if let Some(scalable) = find(Row::Scalable) {
        for row in [Row::Growable, Row::GrowableBatched, Row::Expanding, Row::ExpandingBatched] {
            let Some(grown) = find(row) else { continue };
            let _ = writeln!(
                out,
                "{}: {:.2}x faster than scalable_cuckoo_filter at 0%, {:.2}x at 100%",
                row.label(),
                scalable.lookup_ns[0] / grown.lookup_ns[0],
                scalable.lookup_ns[2] / grown.lookup_ns[2],
            );
        }
    }
    if let (Some(chain), Some(pre)) = (find(Row::Growable), find(Row::PreSized)) {
        let _ = writeln!(
            out,
            "bugu GrowableFilter (the chain) / pre-sized: lookups 0% {:.2}x, 100% {:.2}x; bits per item {:.2}x",
            chain.lookup_ns[0] / pre.lookup_ns[0],
            chain.lookup_ns[2] / pre.lookup_ns[2],
            chain.bits_per_item() / pre.bits_per_item(),
        );
    }
    out
}
