//! Tests of the side-by-side report: medians, ratios, verdicts and the rendered markdown.

use super::*;

fn figures(insert_ns: f64, find_ns: f64) -> Figures {
    Figures { insert_ns, find0_ns: find_ns, find100_ns: find_ns, bits_per_item: 12.7, fp_percent: 0.18 }
}

/// bugu-12 batched finds at `batched_find` ns against C++ Cuckoo12 at 100 ns.
fn round(batched_find: f64) -> Round {
    let lineup = Lineup {
        cuckoo12: figures(200.0, 100.0),
        semi_sort13: figures(300.0, 120.0),
        bugu12: figures(100.0, 80.0),
        bugu12_batched: figures(70.0, batched_find),
        bugu13_semi_sorted: figures(310.0, 110.0),
        bugu12_concurrent: figures(150.0, 88.0),
        vqf: figures(120.0, 60.0),
        blocked_bloom: figures(20.0, 10.0),
        floor_ns_per_line: 20.0,
        prefetched_floor_ns_per_line: 15.0,
    };
    let floor = Floor {
        buffer_bytes: 1 << 20,
        reads: 1000,
        ns_per_line: 20.0,
        window: 64,
        prefetched_ns_per_line: Some(15.0),
    };
    Round { lineup, floor, load: (Some("0.5 0.4 0.3".into()), None), warnings: vec![] }
}

/// Targets for every ratio, as a run would pass them on the command line.
fn targets() -> Vec<Target> {
    [
        "find0-12<=0.85",
        "find100-12<=0.85",
        "find0-13<=1",
        "find100-13<=1",
        "insert-13<=1",
        "insert-12<=0.6",
        "batch-insert-12<=0.4",
        "batch-find0-12<=0.5:every-round",
        "batch-find100-12<=0.5:every-round",
        "batch-find0-floor<=1.2",
        "batch-find100-floor<=1.2",
        "batch-find0-prefetched-floor<=1.15",
        "batch-find100-prefetched-floor<=1.5",
        "concurrent-insert-12<=1.3",
        "concurrent-find0-12<=1.05",
        "concurrent-find100-12<=1.1",
        "insert-12-vs-vqf<=1",
        "find0-12-vs-vqf<=1",
        "find100-12-vs-vqf>=1.3",
        "insert-12-vs-blocked-bloom<=1",
        "find0-12-vs-blocked-bloom>=8",
        "find100-12-vs-blocked-bloom<=8:every-round",
    ]
    .iter()
    .map(|t| t.parse().expect("a valid target"))
    .collect()
}

fn verdicts(size: &SizeRun) -> Vec<bool> {
    let targets = targets();
    size.ratio_rows()
        .iter()
        .zip(&targets)
        .map(|(row, target)| {
            assert_eq!(row.name, target.name);
            target.met(row.value.unwrap(), &row.per_round)
        })
        .collect()
}

#[test]
fn medians_ratios_and_verdicts() {
    // Batched finds 40, 45 and 60 ns: median 45, so 0.45 of the C++ finds and 1.125 x the
    // floor per lookup (40 ns) — but one round is above 0.5.
    let size = SizeRun { keys: 1000, lookups: 1000, rounds: vec![round(40.0), round(60.0), round(45.0)] };
    let medians = size.medians().unwrap();
    assert_eq!(medians.bugu12_batched.find0_ns, 45.0);
    let all = ratios();
    assert_eq!(all.len(), targets().len());
    assert_eq!(all[0].of(&medians), 0.8);
    assert_eq!(all[7].of(&medians), 0.45);
    assert_eq!(all[9].of(&medians), 1.125);
    let named = |name: &str| all.iter().find(|r| r.name == name).unwrap().of(&medians);
    assert_eq!(named("batch-find0-prefetched-floor"), 1.5);
    assert_eq!(named("insert-12-vs-vqf"), 100.0 / 120.0);
    assert_eq!(named("find100-12-vs-blocked-bloom"), 8.0);
    // Met: bugu-12 finds 0.8; the semi-sorted finds (0.92); not its insert (1.03); bugu-12
    // insert 0.5; batched insert 0.35; batched finds only in the medians (so not met);
    // batched against the floor 1.125; against the prefetched floor 1.5 (only the second
    // met); the concurrent insert 1.5 (not met), its finds 1.1 (only the second met); bugu-12
    // against VQF: insert 0.83, finds 1.33 (the second and third met); against BlockedBloom:
    // insert 5, finds 8 (the second and third met).
    let expected = [
        true, true, true, true, false, true, true, false, false, true, true, false, true, false, false, true,
        true, false, true, false, true, true,
    ];
    assert_eq!(verdicts(&size), expected);
    let size = SizeRun { rounds: vec![round(40.0), round(45.0), round(48.0)], ..size };
    assert!(verdicts(&size)[7] && verdicts(&size)[8]);
}

#[test]
fn the_report_shows_every_target_and_round() {
    let size = SizeRun { keys: 1_000_000, lookups: 1_000_000, rounds: vec![round(40.0), round(60.0)] };
    let comparison = Comparison {
        machine: "test CPU, 2 logical CPUs".into(),
        load: (Some("0.1 0.2 0.3".into()), Some("1.0 0.5 0.4".into())),
        checkout: "../fastfilter_cpp".into(),
        commit: Some("abc1234".into()),
        rounds: 2,
        targets: targets(),
        sizes: vec![size],
    };
    let text = comparison.render();
    assert!(text.contains("Machine: test CPU, 2 logical CPUs. Load average"), "{text}");
    assert!(text.contains("fastfilter_cpp at commit abc1234"));
    assert!(text.contains("Fewer than 3 rounds"));
    assert!(text.contains("## 1,000,000 keys"));
    assert!(
        text.contains("| bugu-12 batched find 0% / C++ Cuckoo12 find 0% (`batch-find0-12`) | 0.50 | 0.40, 0.60 | <= 0.50 (and in every round) | FAIL |"),
        "{text}"
    );
    assert!(text.contains("of 22 targets met."));
    assert!(text.contains("| 1 | bugu-12 concurrent, 1 thread | 150.0 | 88.0 | 88.0 | 12.70 | 0.1800 |"));
    assert!(text.contains("| 2 | bugu-12 batched | 70.0 | 60.0 | 60.0 | 12.70 | 0.1800 |"));
    assert!(text.contains("| 1 | 0.5 0.4 0.3 | n/a | 20.0 | 40.0 | 15.0 | 30.0 |"), "{text}");
    assert!(text.contains("Memory floor: 20.0 ns per line; 2 x 20.0 = 40.0 ns per lookup."));
    assert!(text.contains("Prefetched memory floor: 15.0 ns per line; 2 x 15.0 = 30.0 ns per lookup."));
    assert!(text.contains("prefetch window 64 reads"));
    assert!(text.contains("`benchmarks/bulk-insert-and-query.exe <keys> 11,13,31,51`"));
    // The context rows, in the medians and in each round.
    assert!(text.contains("| C++ VQF (context) | 120.0 | 60.0 | 60.0 | 12.70 | 0.1800 |"));
    assert!(text.contains("| 2 | C++ BlockedBloom (context) | 20.0 | 10.0 | 10.0 | 12.70 | 0.1800 |"));
    assert!(text.contains(
        "| bugu-12 insert / C++ VQF insert (`insert-12-vs-vqf`) | 0.83 | 0.83, 0.83 | <= 1.00 | pass |"
    ));
    for ratio in ratios() {
        assert!(text.contains(ratio.label), "{} missing", ratio.label);
    }
    // Without targets: the same ratios, no verdicts.
    let text = Comparison { targets: vec![], ..comparison }.render();
    assert!(text.contains("(`batch-find0-12`) | 0.50 | 0.40, 0.60 |  |  |"), "{text}");
    assert!(!text.contains("targets met"));
}

#[test]
fn the_ratio_names_are_unique_and_the_project_targets_are_expressible() {
    let names = ratio_names();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    // The context and prefetched-floor ratios a run can be judged by.
    let targets: Vec<Target> = [
        "insert-12-vs-vqf<=1",
        "find0-12-vs-vqf<=1",
        "find100-12-vs-vqf<=1",
        "insert-12-vs-blocked-bloom<=10",
        "find0-12-vs-blocked-bloom<=10",
        "find100-12-vs-blocked-bloom<=10",
        "batch-find0-prefetched-floor<=1.15",
        "batch-find100-prefetched-floor<=1.15:every-round",
    ]
    .iter()
    .map(|t| t.parse().unwrap())
    .collect();
    assert_eq!(targets::check_names(&targets, &names), Ok(()));
    let wrong: Vec<Target> = vec!["insert-12-vs-VQF<=1".parse().unwrap()];
    assert!(targets::check_names(&wrong, &names).is_err());
}
