//! What a run of the database scenario measured, and how it is printed.

use std::fmt;
use std::time::Duration;

use crate::util::{Count, Millis, count, percent};

/// Why a startup rebuilt the filter from the table.
#[derive(Debug, Clone, PartialEq)]
pub enum RebuildReason {
    /// There was no saved filter.
    Missing,
    /// The saved filter could not be read (the error, as text).
    Corrupt(String),
    /// The saved filter is valid but older than the table's last change.
    Stale {
        /// The generation the file was saved at, if one was recorded.
        saved: Option<i64>,
        /// The table's generation.
        current: i64,
    },
    /// The saved filter matches the table's change counter, but a table or trigger was created,
    /// altered or dropped since it was saved (another program may have written rows while the
    /// triggers that count them were missing).
    SchemaChanged,
}

/// How a startup got its filter.
#[derive(Debug, Clone, PartialEq)]
pub enum Startup {
    /// The saved filter was loaded: valid, and saved at the table's current generation.
    Loaded {
        /// The generation.
        generation: i64,
    },
    /// The filter was rebuilt from the table (and saved).
    Rebuilt(RebuildReason),
}

/// One restart of the database and its filter.
#[derive(Debug, Clone)]
pub struct Restart {
    /// What was done to the saved filter before the restart.
    pub case: &'static str,
    /// How the filter was obtained.
    pub startup: Startup,
    /// Time to load or rebuild the filter (without saving it).
    pub took: Duration,
    /// Rows in the table.
    pub rows: usize,
    /// Rows whose id the new filter does not contain (must be 0).
    pub rows_missing: usize,
    /// For the stale case: rows the stale file lacks, which trusting it would have hidden.
    pub stale_file_would_miss: Option<usize>,
}

/// Another program writing to the table through its own connection while the scenario runs.
#[derive(Debug, Clone)]
pub struct OtherProgram {
    /// Users it inserted.
    pub inserted: usize,
    /// Users it gave a new id.
    pub renumbered: usize,
    /// Users it deleted.
    pub deleted: usize,
    /// Rows of the table the filter lacked before it caught up (inserted or renumbered by the
    /// other program): rows that trusting the filter would have hidden.
    pub filter_lacked: usize,
    /// Rebuilds the scenario made because the table changed behind its back.
    pub rebuilds: usize,
    /// Time of the first lookup after the writes, which noticed them and rebuilt the filter.
    pub caught_up_took: Duration,
    /// Rows in the table afterwards.
    pub rows: usize,
    /// Rows the scenario then reported absent, asked one by one (must be 0).
    pub rows_reported_absent: usize,
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// The bundled SQLite's version.
    pub sqlite_version: String,
    /// The journal mode, as SQLite reports it (`wal`).
    pub journal_mode: String,
    /// The `synchronous` setting, as SQLite reports it (2: `FULL`).
    pub synchronous: i64,
    /// Users loaded at the start.
    pub users_loaded: usize,
    /// Time to load them (filter and table, in transactions of 10,000 rows).
    pub load_took: Duration,
    /// Users inserted after the load.
    pub inserted: usize,
    /// Users deleted after the load.
    pub deleted: usize,
    /// Write transactions of the churn.
    pub churn_transactions: usize,
    /// Time of the churn.
    pub churn_took: Duration,
    /// Rows in the table during the workload.
    pub rows: usize,
    /// Ids in the filter during the workload (rows, plus any fingerprint left by a failed write).
    pub filter_items: usize,
    /// The number of ids the filter is sized for.
    pub filter_capacity: usize,
    /// The filter's memory.
    pub filter_bytes: usize,
    /// The filter's fingerprint width.
    pub fingerprint_bits: u32,
    /// The false-positive rate the filter guarantees (its bound at full load).
    pub filter_bound: f64,
    /// Size of the saved filter file.
    pub file_bytes: u64,
    /// Lookups in the workload.
    pub lookups: usize,
    /// Lookups whose id was not in the table.
    pub absent_lookups: usize,
    /// Lookups that reached SQLite with the filter in front.
    pub queries_sent: usize,
    /// Lookups the filter answered alone ("absent").
    pub queries_saved: usize,
    /// Queries sent for ids that were not in the table.
    pub false_positives: usize,
    /// Ids in the table that the filter called absent (must be 0).
    pub false_negatives: usize,
    /// Lookups whose answer differed from SQLite's, over the two runs with the filter (must be 0).
    pub answers_differ: usize,
    /// Time of the workload querying SQLite every time.
    pub every_time: Duration,
    /// Time of the workload with the filter in front.
    pub with_filter: Duration,
    /// Time of the workload with the filter in front, trusting its "absent" answers without
    /// checking for other programs' writes (unsound when there are any; shows the check's cost).
    pub without_check: Duration,
    /// Another program writing while the scenario runs.
    pub other_program: OtherProgram,
    /// The first start (no file yet) and the five restarts.
    pub restarts: Vec<Restart>,
}

impl Report {
    /// The filter's measured false-positive rate over the absent lookups.
    pub fn false_positive_rate(&self) -> f64 {
        crate::util::ratio(self.false_positives as u64, self.absent_lookups as u64)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let per_lookup = |d: Duration| d.as_secs_f64() * 1e6 / self.lookups.max(1) as f64;
        let synchronous = match self.synchronous {
            0 => "OFF",
            1 => "NORMAL",
            2 => "FULL",
            3 => "EXTRA",
            _ => "unknown",
        };
        writeln!(
            f,
            "database: SQLite {} (rusqlite, bundled), journal_mode = {}, synchronous = {synchronous}",
            self.sqlite_version, self.journal_mode
        )?;
        writeln!(
            f,
            "initial load:           {} users in {}",
            count(self.users_loaded),
            Millis(self.load_took)
        )?;
        writeln!(
            f,
            "churn:                  {} inserted, {} deleted in {} transactions, {}",
            count(self.inserted),
            count(self.deleted),
            count(self.churn_transactions),
            Millis(self.churn_took)
        )?;
        writeln!(f, "table:                  {} rows", count(self.rows))?;
        writeln!(
            f,
            "filter:                 {} ids (sized for {}), {}-bit fingerprints, {} bytes in memory ({:.1} bits per id), {} bytes on disk",
            count(self.filter_items),
            count(self.filter_capacity),
            self.fingerprint_bits,
            count(self.filter_bytes),
            self.filter_bytes as f64 * 8.0 / self.filter_items.max(1) as f64,
            Count(self.file_bytes)
        )?;
        writeln!(
            f,
            "workload:               {} point lookups, {} for ids not in the table ({})",
            count(self.lookups),
            count(self.absent_lookups),
            percent(self.absent_lookups as u64, self.lookups as u64, 1)
        )?;
        writeln!(
            f,
            "queries sent:           {} ({} present ids + {} false positives)",
            count(self.queries_sent),
            count(self.queries_sent.saturating_sub(self.false_positives)),
            count(self.false_positives)
        )?;
        writeln!(
            f,
            "queries saved:          {} ({} of lookups)",
            count(self.queries_saved),
            percent(self.queries_saved as u64, self.lookups as u64, 1)
        )?;
        writeln!(
            f,
            "false-positive rate:    {:.4}% of absent ids (the filter's bound: {:.4}%)",
            self.false_positive_rate() * 100.0,
            self.filter_bound * 100.0
        )?;
        writeln!(
            f,
            "false negatives:        {} (answers differing from SQLite's: {})",
            count(self.false_negatives),
            count(self.answers_differ)
        )?;
        writeln!(
            f,
            "query every time:       {} ({:.2} us per lookup)",
            Millis(self.every_time),
            per_lookup(self.every_time)
        )?;
        writeln!(
            f,
            "filter first:           {} ({:.2} us per lookup; each \"absent\" checks for other programs' writes)",
            Millis(self.with_filter),
            per_lookup(self.with_filter)
        )?;
        writeln!(
            f,
            "time saved:             {} ({:.1}x faster)",
            Millis(self.every_time.saturating_sub(self.with_filter)),
            self.every_time.as_secs_f64() / self.with_filter.as_secs_f64().max(1e-9)
        )?;
        writeln!(
            f,
            "without that check:     {} ({:.2} us per lookup, {:.1}x faster than every time; hides rows other programs write)",
            Millis(self.without_check),
            per_lookup(self.without_check),
            self.every_time.as_secs_f64() / self.without_check.as_secs_f64().max(1e-9)
        )?;
        let other = &self.other_program;
        writeln!(
            f,
            "other program:          {} inserted, {} renumbered, {} deleted through its own connection; the filter lacked {} rows",
            count(other.inserted),
            count(other.renumbered),
            count(other.deleted),
            count(other.filter_lacked)
        )?;
        writeln!(
            f,
            "caught up:              at the next lookup the filter answered absent: {} rebuild in {}; {} rows, {} reported absent",
            count(other.rebuilds),
            Millis(other.caught_up_took),
            count(other.rows),
            count(other.rows_reported_absent)
        )?;
        for restart in &self.restarts {
            let outcome = match &restart.startup {
                Startup::Loaded { generation } => format!("loaded users.db.bugu (generation {generation})"),
                Startup::Rebuilt(RebuildReason::Missing) => {
                    "rebuilt from the table (file missing)".to_owned()
                }
                Startup::Rebuilt(RebuildReason::Corrupt(error)) => {
                    format!("rebuilt from the table (file refused: {error})")
                }
                Startup::Rebuilt(RebuildReason::SchemaChanged) => {
                    "rebuilt from the table (the schema changed since the file was saved)".to_owned()
                }
                Startup::Rebuilt(RebuildReason::Stale { saved, current }) => format!(
                    "rebuilt from the table (file saved at generation {}, table at {current})",
                    saved.map_or("none".to_owned(), |g| g.to_string())
                ),
            };
            write!(
                f,
                "{:<24}{outcome} in {}; {} rows, {} missing from the filter",
                format!("{}:", restart.case),
                Millis(restart.took),
                count(restart.rows),
                count(restart.rows_missing)
            )?;
            if let Some(missed) = restart.stale_file_would_miss {
                write!(f, " (trusting the stale file would have hidden {} rows)", count(missed))?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
