//! Each scenario at its small size: the invariants hold (no false negatives, counts consistent,
//! false-positive rates near their bounds, the filters matching what they stand for). Timing is
//! printed, never asserted.

use std::error::Error;

use bugu_scenarios::database::{RebuildReason, Startup};
use bugu_scenarios::{blocklist, cache, database};

/// A measured false-positive rate must stay under this multiple of the filter's bound (generous:
/// the small runs see few absent items).
const SLACK: f64 = 3.0;

#[test]
fn database_scenario() -> Result<(), Box<dyn Error>> {
    let config = database::Config::small();
    let report = database::run(&config)?;
    println!("{report}");

    assert_eq!((report.journal_mode.as_str(), report.synchronous), ("wal", 2), "WAL, synchronous = FULL");
    assert_eq!(report.users_loaded, config.users);
    assert_eq!((report.inserted, report.deleted), (config.churn, config.churn));
    assert_eq!(report.rows, config.users);
    assert_eq!(report.filter_items, report.rows, "the filter holds exactly the table's ids");
    assert_eq!(report.lookups, config.lookups);
    assert_eq!(report.queries_sent + report.queries_saved, report.lookups);
    assert_eq!(report.false_negatives, 0);
    assert_eq!(report.answers_differ, 0);
    let present = report.lookups - report.absent_lookups;
    assert_eq!(report.queries_sent, present + report.false_positives);
    let share = report.absent_lookups as f64 / report.lookups as f64;
    assert!((share - config.absent_share).abs() < 0.02, "absent share {share}");
    assert!(report.false_positive_rate() < SLACK * report.filter_bound, "{}", report.false_positive_rate());
    assert!(report.file_bytes > 0);

    let startups: Vec<&Startup> = report.restarts.iter().map(|restart| &restart.startup).collect();
    assert_eq!(startups.len(), 6);
    assert_eq!(startups[0], &Startup::Rebuilt(RebuildReason::Missing), "first start: no file yet");
    assert!(matches!(startups[1], Startup::Loaded { .. }), "clean restart: {:?}", startups[1]);
    assert_eq!(startups[2], &Startup::Rebuilt(RebuildReason::Missing), "file deleted");
    assert!(
        matches!(startups[3], Startup::Rebuilt(RebuildReason::Corrupt(_))),
        "file corrupted: {:?}",
        startups[3]
    );
    match startups[4] {
        Startup::Rebuilt(RebuildReason::Stale { saved: Some(saved), current }) => assert!(saved < current),
        other => panic!("stale file: {other:?}"),
    }
    match startups[5] {
        Startup::Rebuilt(RebuildReason::Stale { saved: Some(saved), current }) => assert!(saved < current),
        other => panic!("another program wrote while the scenario was down: {other:?}"),
    }
    for restart in &report.restarts {
        assert_eq!(restart.rows_missing, 0, "{}: every row is in the filter", restart.case);
    }
    assert!(report.restarts[1..].iter().all(|restart| restart.rows == config.users));
    let would_miss = report.restarts[4].stale_file_would_miss.unwrap_or(0);
    assert!(would_miss > config.batch / 2, "the stale file lacks the rows written after it: {would_miss}");
    let would_miss = report.restarts[5].stale_file_would_miss.unwrap_or(0);
    assert!(would_miss > config.batch / 2, "the file lacks the other program's rows: {would_miss}");

    // Another program wrote while the scenario ran: it noticed at the next lookup the filter
    // answered absent, rebuilt once, and then reported no row absent.
    let other = &report.other_program;
    assert_eq!(
        (other.inserted, other.renumbered, other.deleted),
        (config.batch, config.batch / 5, config.batch)
    );
    assert!(
        other.filter_lacked > config.batch / 2,
        "the filter lacked the other program's rows: {}",
        other.filter_lacked
    );
    assert_eq!(other.rebuilds, 1);
    assert_eq!(other.rows, config.users);
    assert_eq!(other.rows_reported_absent, 0);
    Ok(())
}

#[test]
fn cache_scenario() -> Result<(), Box<dyn Error>> {
    let config = cache::Config::small();
    let report = cache::run(&config)?;
    println!("{report}");

    for node in &report.nodes {
        assert_eq!(node.requests, config.requests);
        assert_eq!(node.cached, config.cache_entries, "node {}: the cache is full", node.name);
        assert_eq!(node.filter_items, node.cached, "node {}: one filter item per cached URL", node.name);
        assert_eq!(node.cached_not_in_filter, 0, "node {}", node.name);
        assert_eq!(node.size_mismatches, 0, "node {}", node.name);
        assert!(node.evictions > 0, "node {}: the LRU evicted", node.name);
        let hit_rate = node.hits as f64 / node.requests as f64;
        assert!((0.2..0.95).contains(&hit_rate), "node {}: hit rate {hit_rate}", node.name);
        assert!(
            node.digest_bytes * 10 < node.url_list_bytes,
            "node {}: the digest is much smaller",
            node.name
        );
    }
    let exchanges = config.requests.div_ceil(config.exchange_every);
    assert_eq!(report.exchanges, exchanges);
    let digests: usize = report.nodes.iter().map(|node| node.digest_bytes).sum();
    assert_eq!(report.bytes_on_the_wire, exchanges * (digests + 16), "each digest with its length");
    let misses: usize = report.nodes.iter().map(|node| node.requests - node.hits).sum();
    assert_eq!(report.digest_queries, misses, "every miss asks the peer's digest");
    assert_eq!(report.false_negatives, 0);
    assert!(report.digest_yes >= report.in_peer);
    assert_eq!(report.digest_yes, report.in_peer + report.false_positives);
    let peer_hits: usize = report.nodes.iter().map(|node| node.peer_hits).sum();
    // A URL held at the exchange is served by the peer unless evicted since; a "yes" for one the
    // peer did not hold may still find it, if the peer fetched it after the exchange.
    assert!(peer_hits + report.stale_yes >= report.in_peer);
    assert!(peer_hits <= report.digest_yes);
    // Every miss whose URL the peer held when asked was served by it, or sent to the origin by a
    // stale "no" (the peer fetched it after its digest); both show in the report.
    assert!(report.stale_no > 0, "the peers fetch URLs between exchanges");
    assert_eq!(peer_hits + report.stale_no, report.peer_held_now);
    let printed = report.to_string();
    assert!(printed.contains("stale no:") && printed.contains("stale yes:"), "{printed}");
    assert!(report.false_positive_rate() < SLACK * report.filter_bound, "{}", report.false_positive_rate());
    Ok(())
}

#[test]
fn blocklist_scenario() -> Result<(), Box<dyn Error>> {
    let config = blocklist::Config::small();
    let report = blocklist::run(&config)?;
    println!("{report}");

    assert_eq!(report.lines, config.addresses + config.ranges_24 + config.ranges_20);
    let most = config.addresses + 256 * config.ranges_24 + 4_096 * config.ranges_20;
    assert!(
        report.blocked <= most && report.blocked > most * 9 / 10,
        "{} distinct of {most}",
        report.blocked
    );
    assert_eq!(report.passes.len(), 3);
    for pass in &report.passes {
        assert_eq!(pass.false_negatives, 0, "{}", pass.name);
        assert_eq!(pass.differs_from_first, 0, "{}", pass.name);
        assert!(pass.positives >= report.blocked_lookups, "{}", pass.name);
    }
    let share = report.blocked_lookups as f64 / report.lookups as f64;
    assert!((share - config.blocked_share).abs() < 0.01, "blocked share {share}");
    assert!(report.false_positive_rate() > 0.0, "a few false positives in {} clean lookups", report.lookups);
    assert!(report.false_positive_rate() < SLACK * report.filter_bound, "{}", report.false_positive_rate());
    Ok(())
}
