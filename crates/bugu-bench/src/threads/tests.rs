use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::run::Keys;
use super::*;
use crate::targets::Target;

fn sample(ns_per_op: f64, missing: u64) -> Sample {
    Sample {
        ops: 1000,
        wall_ns: ns_per_op * 1000.0,
        per_thread_ns: ns_per_op,
        cpu_share: 1.0,
        failed: 0,
        checked: 10,
        missing,
        capped: false,
    }
}

/// A round where ConcurrentFilter looks up at `concurrent_1` ns/op with 1 thread.
fn round(concurrent_1: f64) -> Round {
    let mut samples = Samples::new();
    samples.insert((Workload::Lookups, Row::Cuckoo, 1), sample(10.0, 0));
    samples.insert((Workload::Lookups, Row::Concurrent, 1), sample(concurrent_1, 0));
    samples.insert((Workload::Lookups, Row::Concurrent, 2), sample(6.0, 0));
    samples.insert((Workload::Lookups, Row::Atomic, 2), sample(20.0, 0));
    samples.insert((Workload::Mix, Row::Concurrent, 1), sample(20.0, 0));
    samples.insert((Workload::Mix, Row::Concurrent, 2), sample(14.0, 0));
    Round { load: (None, None), order: Row::SCHEDULE.to_vec(), samples }
}

fn size(rounds: Vec<Round>) -> SizeRun {
    SizeRun {
        keys: 1000,
        lookups: 1000,
        mix: MixPlan::new(1000, None),
        configs: BTreeMap::new(),
        rounds_asked: 3,
        rounds,
        notes: Vec::new(),
    }
}

/// Targets as a run would pass them on the command line.
fn parsed(targets: &[&str]) -> Vec<Target> {
    targets.iter().map(|t| t.parse().expect("a valid target")).collect()
}

#[test]
fn ratios_verdicts_and_false_negatives() {
    let run = size(vec![round(11.0), round(13.0), round(12.0)]);
    let all = ratios();
    let met = |target: &str, i: usize| {
        let target = &parsed(&[target])[0];
        assert_eq!(target.name, all[i].name);
        target.met(run.ratio(&all[i]).unwrap(), &run.ratio_per_round(&all[i]))
    };
    // Medians: ConcurrentFilter 12 ns against CuckooFilter's 10: 1.2, met at most 1.2 (but not in
    // the round at 13 ns).
    assert!((run.ratio(&all[0]).unwrap() - 1.2).abs() < 1e-12);
    assert!(met("lookup-1t-vs-cuckoo<=1.2", 0));
    assert!(!met("lookup-1t-vs-cuckoo<=1.2:every-round", 0));
    assert_eq!(run.ratio_per_round(&all[0]).len(), 3);
    // 2 threads at 6 ns/op (wall) against 12: twice the throughput, >= 1.8.
    assert!((run.ratio(&all[1]).unwrap() - 2.0).abs() < 1e-12);
    assert!(met("lookup-scaling>=1.8", 1));
    // Mix 20 -> 14 ns/op: 1.43x, below 1.5.
    let mix = run.ratio(&all[2]).unwrap();
    assert!((mix - 20.0 / 14.0).abs() < 1e-12);
    assert!(!met("mix-scaling>=1.5", 2));
    // Against atomic at 2 threads: 20 / 6 = 3.33, >= 3.
    assert!(met("lookup-2t-vs-atomic>=3", 3));
    // The batched row was not measured: no ratio.
    assert_eq!(run.ratio(&all[4]), None);
    assert_eq!(run.false_negatives(), (0, 60 * 3));
    let names = ratio_names();
    assert_eq!(names.len(), all.len());
    assert!(names.iter().enumerate().all(|(i, name)| !names[..i].contains(name)), "names are unique");

    let mut bad = round(12.0);
    bad.samples.get_mut(&(Workload::Mix, Row::Concurrent, 2)).unwrap().missing = 2;
    assert_eq!(size(vec![bad]).false_negatives(), (2, 60));
}

#[test]
fn the_report_shows_tables_and_verdicts() {
    let report = Report {
        machine: "test CPU, 2 logical CPUs".into(),
        load: (Some("0.1 0.2 0.3".into()), None),
        command: "--sizes 1000".into(),
        options: Options {
            threads: vec![1, 2],
            max_lookups: 10_000_000,
            max_mix_ops: None,
            phase_limit: Duration::from_secs(60),
            skip: vec![],
            targets: parsed(&["lookup-1t-vs-cuckoo<=1.2", "mix-scaling>=1.5"]),
            seed: 42,
        },
        sizes: vec![size(vec![round(11.0), round(13.0)])],
        seconds: 90.0,
    };
    let text = report.render();
    assert!(text.contains("Machine: test CPU, 2 logical CPUs."), "{text}");
    assert!(text.contains("Fewer than 3 rounds"));
    assert!(text.contains(
        "| bugu::ConcurrentFilter | 2 | 166.67 | 6.0 | 6.0 | 100% | 2.00x | - | 0 / 20 | 6.0, 6.0 |"
    ));
    assert!(text.contains(
        "| 1-thread lookups: ConcurrentFilter time / CuckooFilter time (`lookup-1t-vs-cuckoo`) | 1.20 | 1.10, 1.30 | <= 1.20 | pass |"
    ));
    // Mix 20 -> 14 ns/op: below its target; a ratio no target names has no verdict.
    assert!(text.contains("(`mix-scaling`) | 1.43 | 1.43, 1.43 | >= 1.50 | FAIL |"), "{text}");
    assert!(text.contains("(`lookup-2t-vs-atomic`) | 3.33 | 3.33, 3.33 |  |  |"), "{text}");
    assert!(
        text.contains(
            "| false negatives, every phase of every row and round | 0 of 120 checked | | 0 | pass |"
        )
    );
}

#[test]
fn skips_are_parsed() {
    assert_eq!("atomic".parse(), Ok(Skip { row: Row::Atomic, keys: None }));
    assert_eq!("mutex@1e8".parse(), Ok(Skip { row: Row::Mutex, keys: Some(100_000_000) }));
    assert!("nothing".parse::<Skip>().is_err());
    assert!("atomic@x".parse::<Skip>().is_err());
    let skip: Skip = "concurrent@1000".parse().unwrap();
    assert!(skip.applies(Row::ConcurrentBatch, 1000));
    assert!(!skip.applies(Row::ConcurrentBatch, 2000));
    assert!(!skip.applies(Row::Cuckoo, 1000));
}

#[test]
fn only_keys_a_capped_phase_inserted_are_checked() {
    let options = Options {
        threads: vec![1, 2],
        max_lookups: 1000,
        max_mix_ops: None,
        phase_limit: Duration::from_secs(60),
        skip: vec![],
        targets: vec![],
        seed: 1,
    };
    let keys = Keys::new(1000, &options);
    let lengths = |slices: Vec<&[u64]>| slices.iter().map(|s| s.len()).collect::<Vec<_>>();
    assert_eq!(lengths(keys.to_check(Workload::Inserts, 2, &[500, 500], false)), vec![500]);
    // Capped: each thread's first keys, at most 250 each (500 present lookup keys in all).
    let capped = keys.to_check(Workload::Inserts, 2, &[10, 400], true);
    assert_eq!(lengths(capped.clone()), vec![10, 250]);
    assert_eq!(capped[1][0], keys.present[500]);
    // The mix: the present lookup keys, then what each thread got to of its 100 inserts.
    let mix = keys.to_check(Workload::Mix, 2, &[30, 100], true);
    assert_eq!(lengths(mix.clone()), vec![500, 30, 100]);
    assert_eq!((mix[1][0], mix[2][0]), (keys.present[800], keys.present[900]));
}

#[test]
fn splits_and_mix_plans() {
    let keys: Vec<u64> = (0..7).collect();
    let parts = split(&keys, 3);
    assert_eq!(parts, vec![&[0, 1, 2][..], &[3, 4][..], &[5, 6][..]]);
    assert_eq!(split(&keys, 1), vec![&keys[..]]);
    let plan = MixPlan::new(1000, None);
    assert_eq!((plan.prefill, plan.inserts, plan.ops()), (800, 200, 2000));
    assert_eq!(MixPlan::new(1000, Some(500)).inserts, 50);
}

#[test]
fn every_row_is_measured_without_false_negatives() {
    let options = Options {
        threads: vec![1, 2],
        max_lookups: 4200,
        max_mix_ops: None,
        phase_limit: Duration::from_secs(60),
        skip: vec![],
        targets: vec![],
        seed: 7,
    };
    // 4,200 keys: atomic-cuckoo-filter rounds 1,050 buckets up to 2,048, so it is half full.
    // Two rounds asked, but a budget already spent: only the first runs, and the report says so.
    let run = measure_size(4200, 2, &options, Some(Instant::now()));
    assert_eq!((run.rounds.len(), run.rounds_asked), (1, 2));
    assert!(run.notes.iter().any(|note| note.starts_with("rounds 2 to 2 not run")), "{:?}", run.notes);
    for workload in Workload::ALL {
        for row in Row::ALL.into_iter().filter(|row| row.runs(workload)) {
            for t in row.threads(&options.threads) {
                let m = run.medians(workload, row, t).unwrap_or_else(|| panic!("{row:?} {workload:?} {t}"));
                assert_eq!((m.missing, m.failed, m.capped), (0, 0, false), "{row:?} {workload:?} {t}");
                assert!(m.checked >= 2000);
            }
        }
    }
    assert_eq!(run.rounds[0].samples[&(Workload::Mix, Row::Concurrent, 2)].ops, 8400);
}
