//! A database that deletes: a cuckoo filter of the `users` table's ids in front of SQLite's point
//! lookups, kept in step as rows are inserted and deleted, saved beside the database and rebuilt
//! from the table when the saved copy is missing, corrupt or stale.
//!
//! ```sh
//! cargo run --release -p bugu-scenarios --example database
//! ```
//!
//! ## What it shows
//!
//! A SQLite database (`rusqlite`, SQLite bundled) in a temporary directory gets a table of
//! 300,000 users with sparse random ids; then 20,000 users are inserted and 20,000 deleted, in
//! transactions of 100 rows. A million point lookups (`SELECT name, email FROM users WHERE id =
//! ?`), 90% of them for ids that are not in the table (never used, or deleted), run twice: once
//! querying SQLite every time, once asking the filter first and querying only when it says
//! "maybe". The report gives both times, the queries saved, the false positives, and checks that
//! the two runs return the same rows, so the filter never hid a present id (no false negative).
//! Four restarts follow, each checked against the whole table: the saved filter loads; deleted, it
//! is rebuilt; corrupted (one byte flipped), it is refused and rebuilt; stale (rows written after
//! it was saved), it is rebuilt.
//!
//! ## Keeping the filter in step: why a crash cannot cause a false negative
//!
//! The rule is that **at every instant, the filter holds every row that is committed** (and
//! possibly a few more ids, which only cost a useless query: a false positive). Two orderings
//! give it:
//!
//! - **Insert: into the filter first, then commit the row.** Between the two, the filter says
//!   "maybe" for a row that is not there yet: a false positive. If the transaction then fails,
//!   the fingerprint is removed again (we inserted it, so removing it is safe); if the process
//!   crashes instead, nothing of the in-memory filter survives anyway. If the filter refuses the
//!   id (it is full), the transaction is never committed, so the table never holds a row the
//!   filter lacks.
//! - **Delete: commit the delete first, then remove from the filter.** Between the two, the
//!   filter still says "maybe" for a row that is gone: a false positive again. Only ids whose
//!   `DELETE` removed a row are removed from the filter (removing an id the filter never held
//!   could delete another id's fingerprint).
//!
//! A filter read at any moment, by a lookup or by a save to disk, therefore lacks no committed
//! row. The other order would open a window for false negatives: a row committed before its
//! fingerprint is added, or a fingerprint removed before a delete that then rolls back.
//!
//! ## The saved filter, and when not to trust it
//!
//! The filter is saved beside the database as `users.db.bugu`, with `CuckooFilter::save`, which
//! replaces the file atomically (a crash leaves the old file or the new one, never a mix).
//! Loading validates every byte (a checksum among others), so a missing or corrupt file is
//! detected and the filter is rebuilt from `SELECT id FROM users`.
//!
//! A valid file can still be **stale**: rows committed after it was saved are not in it, and
//! trusting it would answer "absent" for them. Staleness is tracked with a **generation** number
//! kept in the database itself, in a `meta` table:
//!
//! - every write transaction increments `meta.generation` in the same transaction as its rows,
//!   so the generation changes exactly when the committed data does;
//! - after the filter file has been saved (the atomic rename is flushed to disk), a separate
//!   transaction records the generation the filter was saved at as `meta.filter_generation`;
//! - at startup, the file is used only if it loads **and** `filter_generation == generation`.
//!   Anything else rebuilds.
//!
//! A crash after a save but before it is recorded leaves the old `filter_generation`, which no
//! longer matches: a needless rebuild, never a stale filter. A crash after writes that follow
//! a save leaves a newer `generation`: a rebuild. The argument needs committed transactions to be
//! durable, so the database runs with `synchronous = FULL` (WAL journal); with a weaker setting a
//! power loss could undo a commit that a saved filter already reflects. Writes come from one
//! connection, and the filter is saved between transactions, so the file always matches the
//! generation read beside it (a server with several writers would take the write lock while it
//! saves).
//!
//! The filter is sized for [`Config::filter_capacity`] ids, or 25% more than the table holds
//! when it is rebuilt, whichever is larger; a table that outgrows it makes inserts fail (and
//! their transactions roll back) until the filter is rebuilt larger.

use std::collections::HashSet;
use std::error::Error;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bugu::{CuckooFilter, Filter, FilterMut, PersistError};
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::util::{Count, Millis, SplitMix64, TempDir, count, percent, timed};

/// The sizes of a run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Users loaded into the table at the start.
    pub users: usize,
    /// Users inserted, and as many deleted, after the initial load.
    pub churn: usize,
    /// Rows per write transaction during the churn.
    pub batch: usize,
    /// Point lookups in the measured workload.
    pub lookups: usize,
    /// Share of the lookups for ids not in the table (from 0 to 1).
    pub absent_share: f64,
    /// The number of ids the filter is sized for (at least; see the module docs).
    pub filter_capacity: usize,
    /// The filter's false-positive rate.
    pub false_positive_rate: f64,
    /// Seed of the ids and of the workload.
    pub seed: u64,
}

impl Default for Config {
    /// The full-size run: 300,000 users, 20,000 inserts and deletes, a million lookups.
    fn default() -> Self {
        Config {
            users: 300_000,
            churn: 20_000,
            batch: 100,
            lookups: 1_000_000,
            absent_share: 0.9,
            filter_capacity: 400_000,
            false_positive_rate: 0.001,
            seed: 0x5eed_da7a,
        }
    }
}

impl Config {
    /// A run of a second or so, for tests.
    pub fn small() -> Self {
        Config {
            users: 5_000,
            churn: 1_000,
            batch: 50,
            lookups: 20_000,
            filter_capacity: 8_000,
            ..Config::default()
        }
    }
}

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
    /// Lookups whose answer differed between the two runs (must be 0).
    pub answers_differ: usize,
    /// Time of the workload querying SQLite every time.
    pub every_time: Duration,
    /// Time of the workload with the filter in front.
    pub with_filter: Duration,
    /// The first start (no file yet) and the four restarts.
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
            "false negatives:        {} (answers differing between the two runs: {})",
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
            "filter first:           {} ({:.2} us per lookup)",
            Millis(self.with_filter),
            per_lookup(self.with_filter)
        )?;
        writeln!(
            f,
            "time saved:             {} ({:.1}x faster)",
            Millis(self.every_time.saturating_sub(self.with_filter)),
            self.every_time.as_secs_f64() / self.with_filter.as_secs_f64().max(1e-9)
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

/// A user row.
type User = (String, String);

/// Rows per transaction of the initial load.
const LOAD_BATCH: usize = 10_000;

/// The database, its filter, and where the filter is saved.
struct UserDb {
    conn: Connection,
    filter: CuckooFilter,
    filter_path: PathBuf,
}

impl UserDb {
    /// Opens (creating if needed) the database at `path` and gets its filter: loaded from
    /// `<path>.bugu` if that is valid and current, else rebuilt from the table and saved.
    fn open(path: &Path, config: &Config) -> Result<(Self, Startup, Duration), Box<dyn Error>> {
        let conn = Connection::open(path)?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = FULL;
             CREATE TABLE IF NOT EXISTS users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER);
             INSERT OR IGNORE INTO meta (key, value) VALUES ('generation', 0), ('filter_generation', NULL);",
        )?;
        let mut name = path.as_os_str().to_owned();
        name.push(".bugu");
        let filter_path = PathBuf::from(name);

        let (opened, took) = timed(|| -> Result<_, Box<dyn Error>> {
            let reason = match CuckooFilter::load(&filter_path) {
                Ok(filter) => {
                    let (generation, saved) = generations(&conn)?;
                    if saved == Some(generation) {
                        return Ok((filter, Startup::Loaded { generation }, None));
                    }
                    RebuildReason::Stale { saved, current: generation }
                }
                Err(PersistError::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => {
                    RebuildReason::Missing
                }
                Err(error) => RebuildReason::Corrupt(error.to_string()),
            };
            let (filter, generation) = rebuild(&conn, config)?;
            Ok((filter, Startup::Rebuilt(reason), Some(generation)))
        });
        let (filter, startup, rebuilt_at) = opened?;
        let db = UserDb { conn, filter, filter_path };
        if let Some(generation) = rebuilt_at {
            db.save_filter(generation)?;
        }
        Ok((db, startup, took))
    }

    /// Saves the filter with the generation it matches.
    fn checkpoint(&self) -> Result<(), Box<dyn Error>> {
        let (generation, _) = generations(&self.conn)?;
        self.save_filter(generation)
    }

    /// Saves the filter atomically, then records `generation`, the one it matches.
    fn save_filter(&self, generation: i64) -> Result<(), Box<dyn Error>> {
        self.filter.save(&self.filter_path)?;
        // Only once the file is in place: a crash before this line leaves an older record, which
        // does not match, so the next start rebuilds.
        self.conn
            .execute("UPDATE meta SET value = ?1 WHERE key = 'filter_generation'", params![generation])?;
        Ok(())
    }

    /// Inserts users in one transaction: their ids go into the filter before the commit.
    fn insert_users(&mut self, ids: &[i64]) -> Result<(), Box<dyn Error>> {
        for (done, id) in ids.iter().enumerate() {
            if let Err(error) = self.filter.insert(id) {
                // Nothing is committed: take back the ids added so far, and give up.
                for id in &ids[..done] {
                    self.filter.remove(id);
                }
                return Err(error.into());
            }
        }
        let committed = (|| -> rusqlite::Result<()> {
            let tx = self.conn.transaction()?;
            {
                let mut insert =
                    tx.prepare_cached("INSERT INTO users (id, name, email) VALUES (?1, ?2, ?3)")?;
                for id in ids {
                    insert.execute(params![id, format!("user {id}"), format!("user{id}@example.com")])?;
                }
            }
            bump_generation(&tx)?;
            tx.commit()
        })();
        if let Err(error) = committed {
            // Rolled back (dropping the transaction rolls it back): the rows are not there, so
            // the fingerprints this call added are removed again.
            for id in ids {
                self.filter.remove(id);
            }
            return Err(error.into());
        }
        Ok(())
    }

    /// Deletes users in one transaction: their ids leave the filter after the commit. Returns how
    /// many rows were deleted.
    fn delete_users(&mut self, ids: &[i64]) -> Result<usize, Box<dyn Error>> {
        let mut deleted = Vec::with_capacity(ids.len());
        let tx = self.conn.transaction()?;
        {
            let mut delete = tx.prepare_cached("DELETE FROM users WHERE id = ?1")?;
            for &id in ids {
                if delete.execute(params![id])? == 1 {
                    deleted.push(id);
                }
            }
        }
        bump_generation(&tx)?;
        tx.commit()?;
        // The rows are gone for good: only now may their ids leave the filter.
        for id in &deleted {
            self.filter.remove(id);
        }
        Ok(deleted.len())
    }

    /// The user with this id, asking SQLite.
    fn query(&self, id: i64) -> rusqlite::Result<Option<User>> {
        let mut select = self.conn.prepare_cached("SELECT name, email FROM users WHERE id = ?1")?;
        select.query_row(params![id], |row| Ok((row.get(0)?, row.get(1)?))).optional()
    }

    /// The user with this id, asking the filter first; `None` without a query when the filter
    /// rules the id out. Says whether SQLite was queried.
    fn find(&self, id: i64) -> rusqlite::Result<(Option<User>, bool)> {
        if !self.filter.contains(&id) {
            return Ok((None, false));
        }
        Ok((self.query(id)?, true))
    }

    /// Every id in the table.
    fn ids(&self) -> rusqlite::Result<Vec<i64>> {
        let mut select = self.conn.prepare("SELECT id FROM users")?;
        select.query_map([], |row| row.get(0))?.collect()
    }

    /// `(rows, rows whose id the filter lacks)`.
    fn check(&self) -> rusqlite::Result<(usize, usize)> {
        let ids = self.ids()?;
        let missing = ids.iter().filter(|id| !self.filter.contains(*id)).count();
        Ok((ids.len(), missing))
    }
}

/// `(generation, filter_generation)` from the `meta` table.
fn generations(conn: &Connection) -> rusqlite::Result<(i64, Option<i64>)> {
    let generation =
        conn.query_row("SELECT value FROM meta WHERE key = 'generation'", [], |row| row.get(0))?;
    let saved =
        conn.query_row("SELECT value FROM meta WHERE key = 'filter_generation'", [], |row| row.get(0))?;
    Ok((generation, saved))
}

/// Every write transaction calls this: the generation changes with the committed data.
fn bump_generation(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'", [])?;
    Ok(())
}

/// A filter of every id in the table, read in one transaction; with the generation it matches.
fn rebuild(conn: &Connection, config: &Config) -> Result<(CuckooFilter, i64), Box<dyn Error>> {
    let tx = conn.unchecked_transaction()?;
    let rows: i64 = tx.query_row("SELECT count(*) FROM users", [], |row| row.get(0))?;
    let rows = usize::try_from(rows)?;
    let mut filter = CuckooFilter::builder()
        .capacity(config.filter_capacity.max(rows + rows / 4))
        .false_positive_rate(config.false_positive_rate)
        .build()?;
    {
        let mut select = tx.prepare("SELECT id FROM users")?;
        let mut ids = select.query([])?;
        while let Some(row) = ids.next()? {
            filter.insert(&row.get::<_, i64>(0)?)?;
        }
    }
    let (generation, _) = generations(&tx)?;
    tx.commit()?;
    Ok((filter, generation))
}

/// The ids a run has used, to draw fresh ones and absent ones.
struct Ids {
    rng: SplitMix64,
    live: Vec<i64>,
    deleted: Vec<i64>,
    ever: HashSet<i64>,
}

impl Ids {
    /// An id never used before, in `1..=2^40`.
    fn fresh(&mut self) -> i64 {
        loop {
            let id = (self.rng.next_u64() >> 24) as i64 + 1;
            if self.ever.insert(id) {
                return id;
            }
        }
    }

    /// An id not in the table: a deleted one a quarter of the time, else one never used.
    fn absent(&mut self) -> i64 {
        if !self.deleted.is_empty() && self.rng.below(4) == 0 {
            return self.deleted[self.rng.index(self.deleted.len())];
        }
        loop {
            let id = (self.rng.next_u64() >> 24) as i64 + 1;
            if !self.ever.contains(&id) {
                return id;
            }
        }
    }

    /// Removes a random live id and returns it.
    fn take_live(&mut self) -> Option<i64> {
        if self.live.is_empty() {
            return None;
        }
        let id = self.live.swap_remove(self.rng.index(self.live.len()));
        self.deleted.push(id);
        Some(id)
    }
}

/// Inserts `n` fresh users in transactions of `batch` rows; returns the transactions.
fn insert_fresh(db: &mut UserDb, ids: &mut Ids, n: usize, batch: usize) -> Result<usize, Box<dyn Error>> {
    let mut transactions = 0;
    let mut left = n;
    while left > 0 {
        let chunk: Vec<i64> = (0..left.min(batch)).map(|_| ids.fresh()).collect();
        db.insert_users(&chunk)?;
        ids.live.extend_from_slice(&chunk);
        left -= chunk.len();
        transactions += 1;
    }
    Ok(transactions)
}

/// Deletes `n` random users in transactions of `batch` rows; returns `(deleted, transactions)`.
fn delete_random(
    db: &mut UserDb,
    ids: &mut Ids,
    n: usize,
    batch: usize,
) -> Result<(usize, usize), Box<dyn Error>> {
    let (mut deleted, mut transactions) = (0, 0);
    let mut left = n;
    while left > 0 {
        let chunk: Vec<i64> = (0..left.min(batch)).map_while(|_| ids.take_live()).collect();
        if chunk.is_empty() {
            break;
        }
        deleted += db.delete_users(&chunk)?;
        left -= chunk.len();
        transactions += 1;
    }
    Ok((deleted, transactions))
}

/// Restarts the database, checks the new filter against the table, and records how it went.
fn restart(path: &Path, config: &Config, case: &'static str) -> Result<(UserDb, Restart), Box<dyn Error>> {
    let (db, startup, took) = UserDb::open(path, config)?;
    let (rows, rows_missing) = db.check()?;
    Ok((db, Restart { case, startup, took, rows, rows_missing, stale_file_would_miss: None }))
}

/// Runs the scenario (see the module docs).
pub fn run(config: &Config) -> Result<Report, Box<dyn Error>> {
    if config.batch == 0 || config.lookups == 0 || !(0.0..=1.0).contains(&config.absent_share) {
        return Err("the batch size and the lookups must be positive, the absent share within 0..=1".into());
    }
    let dir = TempDir::new("bugu-scenario-database")?;
    let path = dir.path().join("users.db");
    let mut restarts = Vec::new();

    // First start: no filter file yet, an empty table.
    let (mut db, first) = restart(&path, config, "first start")?;
    restarts.push(first);
    let journal_mode: String = db.conn.query_row("PRAGMA journal_mode", [], |row| row.get(0))?;
    let synchronous: i64 = db.conn.query_row("PRAGMA synchronous", [], |row| row.get(0))?;

    let mut ids = Ids {
        rng: SplitMix64::new(config.seed),
        live: Vec::new(),
        deleted: Vec::new(),
        ever: HashSet::new(),
    };
    let (loaded, load_took) = timed(|| insert_fresh(&mut db, &mut ids, config.users, LOAD_BATCH));
    loaded?;

    // Churn: inserts and deletes interleaved, a transaction of each at a time.
    let (churn, churn_took) = timed(|| -> Result<_, Box<dyn Error>> {
        let (mut inserted, mut deleted, mut transactions) = (0, 0, 0);
        while inserted < config.churn {
            let n = config.batch.min(config.churn - inserted);
            transactions += insert_fresh(&mut db, &mut ids, n, config.batch)?;
            inserted += n;
            let (gone, t) = delete_random(&mut db, &mut ids, n, config.batch)?;
            deleted += gone;
            transactions += t;
        }
        Ok((inserted, deleted, transactions))
    });
    let (inserted, deleted, churn_transactions) = churn?;
    db.checkpoint()?;
    let file_bytes = std::fs::metadata(&db.filter_path)?.len();

    // The workload: the same lookups, filter first and then SQLite every time.
    let lookups: Vec<i64> = (0..config.lookups)
        .map(|_| {
            if ids.rng.unit() < config.absent_share || ids.live.is_empty() {
                ids.absent()
            } else {
                ids.live[ids.rng.index(ids.live.len())]
            }
        })
        .collect();
    let (filtered, with_filter) = timed(|| -> rusqlite::Result<(Vec<bool>, usize)> {
        let mut sent = 0;
        let mut found = Vec::with_capacity(lookups.len());
        for &id in &lookups {
            let (user, queried) = db.find(id)?;
            sent += usize::from(queried);
            found.push(user.is_some());
        }
        Ok((found, sent))
    });
    let (filtered, queries_sent) = filtered?;
    let (every, every_time) = timed(|| -> rusqlite::Result<Vec<bool>> {
        lookups.iter().map(|&id| db.query(id).map(|user| user.is_some())).collect()
    });
    let every = every?;
    let present = every.iter().filter(|&&found| found).count();
    let in_filter: Vec<bool> = lookups.iter().map(|id| db.filter.contains(id)).collect();
    let false_negatives = in_filter.iter().zip(&every).filter(|&(&maybe, &found)| found && !maybe).count();
    let false_positives = in_filter.iter().zip(&every).filter(|&(&maybe, &found)| maybe && !found).count();
    let answers_differ = filtered.iter().zip(&every).filter(|(a, b)| a != b).count();

    let rows = db.check()?.0;
    let (filter_items, filter_capacity, filter_bytes, fingerprint_bits, filter_bound) = (
        db.filter.len(),
        db.filter.capacity(),
        db.filter.memory_bytes(),
        db.filter.fingerprint_bits(),
        db.filter.false_positive_rate(),
    );

    // Restarts. A clean one: the saved filter is current.
    db.checkpoint()?;
    drop(db);
    let (db, clean) = restart(&path, config, "restart")?;
    restarts.push(clean);
    let filter_path = db.filter_path.clone();

    // The file deleted.
    drop(db);
    std::fs::remove_file(&filter_path)?;
    let (db, missing) = restart(&path, config, "file deleted")?;
    restarts.push(missing);

    // The file corrupted: one byte in the middle of the table flipped.
    drop(db);
    let mut bytes = std::fs::read(&filter_path)?;
    let middle = bytes.len() / 2;
    if let Some(byte) = bytes.get_mut(middle) {
        *byte ^= 0x5a;
    }
    std::fs::write(&filter_path, &bytes)?;
    let (mut db, corrupt) = restart(&path, config, "file corrupted")?;
    restarts.push(corrupt);

    // Stale: rows written after the last save, then a crash (the process ends without saving).
    insert_fresh(&mut db, &mut ids, config.batch, config.batch)?;
    delete_random(&mut db, &mut ids, config.batch, config.batch)?;
    drop(db);
    let stale = CuckooFilter::load(&filter_path)?;
    let probe = Connection::open(&path)?;
    let stale_ids: Vec<i64> =
        probe.prepare("SELECT id FROM users")?.query_map([], |row| row.get(0))?.collect::<Result<_, _>>()?;
    drop(probe);
    let would_miss = stale_ids.iter().filter(|id| !stale.contains(*id)).count();
    let (db, mut stale_restart) = restart(&path, config, "stale file")?;
    stale_restart.stale_file_would_miss = Some(would_miss);
    restarts.push(stale_restart);
    drop(db);

    Ok(Report {
        sqlite_version: rusqlite::version().to_owned(),
        journal_mode,
        synchronous,
        users_loaded: config.users,
        load_took,
        inserted,
        deleted,
        churn_transactions,
        churn_took,
        rows,
        filter_items,
        filter_capacity,
        filter_bytes,
        fingerprint_bits,
        filter_bound,
        file_bytes,
        lookups: lookups.len(),
        absent_lookups: lookups.len() - present,
        queries_sent,
        queries_saved: lookups.len() - queries_sent,
        false_positives,
        false_negatives,
        answers_differ,
        every_time,
        with_filter,
        restarts,
    })
}
