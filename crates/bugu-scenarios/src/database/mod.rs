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
use std::path::Path;

use bugu::{CuckooFilter, Filter};
use rusqlite::Connection;

use crate::util::{SplitMix64, TempDir, timed};

mod report;
mod store;
#[cfg(test)]
mod tests;

pub use report::{OtherProgram, RebuildReason, Report, Restart, Startup};
use store::UserDb;

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

/// Rows per transaction of the initial load.
const LOAD_BATCH: usize = 10_000;

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

/// What [`other_program_writes`] did.
struct OtherWrites {
    inserted: usize,
    renumbered: usize,
    deleted: usize,
}

/// Another program writing to the database through its own connection, in plain SQL and its own
/// transactions: inserts `batch` fresh users, gives `batch / 5` users a new id, deletes `batch`.
fn other_program_writes(path: &Path, ids: &mut Ids, batch: usize) -> Result<OtherWrites, Box<dyn Error>> {
    let conn = Connection::open(path)?;
    let added: Vec<i64> = (0..batch.max(1)).map(|_| ids.fresh()).collect();
    let tx = conn.unchecked_transaction()?;
    for id in &added {
        tx.execute(
            "INSERT INTO users (id, name, email) VALUES (?1, 'imported', 'imported@example.com')",
            [id],
        )?;
    }
    tx.commit()?;
    ids.live.extend_from_slice(&added);
    let mut renumbered = 0;
    for _ in 0..batch / 5 {
        let (Some(old), new) = (ids.take_live(), ids.fresh()) else { break };
        renumbered += conn.execute("UPDATE users SET id = ?1 WHERE id = ?2", [new, old])?;
        ids.live.push(new);
    }
    let mut deleted = 0;
    for _ in 0..batch {
        let Some(id) = ids.take_live() else { break };
        deleted += conn.execute("DELETE FROM users WHERE id = ?1", [id])?;
    }
    Ok(OtherWrites { inserted: added.len(), renumbered, deleted })
}

/// Rows of the table that the filter saved at `filter_path` lacks.
fn saved_filter_would_miss(path: &Path, filter_path: &Path) -> Result<usize, Box<dyn Error>> {
    let saved = CuckooFilter::load(filter_path)?;
    let probe = Connection::open(path)?;
    let ids: Vec<i64> =
        probe.prepare("SELECT id FROM users")?.query_map([], |row| row.get(0))?.collect::<Result<_, _>>()?;
    Ok(ids.iter().filter(|id| !saved.contains(*id)).count())
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
    let (filtered, with_filter) = timed(|| -> Result<(Vec<bool>, usize), Box<dyn Error>> {
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

    // Another program writes through its own connection while the scenario runs.
    let other = other_program_writes(&path, &mut ids, config.batch)?;
    let table = db.ids()?;
    let lacked: Vec<i64> = table.iter().copied().filter(|id| !db.filter.contains(id)).collect();
    // The first lookup of a row the filter lacks is the one that notices the other program.
    let probe = lacked.first().or(table.first()).copied().unwrap_or(0);
    let (first, caught_up_took) = timed(|| db.find(probe));
    first?;
    let mut reported_absent = 0;
    for &id in &table {
        reported_absent += usize::from(db.find(id)?.0.is_none());
    }
    let other_program = OtherProgram {
        inserted: other.inserted,
        renumbered: other.renumbered,
        deleted: other.deleted,
        filter_lacked: lacked.len(),
        rebuilds: db.caught_up,
        caught_up_took,
        rows: table.len(),
        rows_reported_absent: reported_absent,
    };

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
    let would_miss = saved_filter_would_miss(&path, &filter_path)?;
    let (db, mut stale_restart) = restart(&path, config, "stale file")?;
    stale_restart.stale_file_would_miss = Some(would_miss);
    restarts.push(stale_restart);

    // Another program writes while the scenario is down.
    drop(db);
    other_program_writes(&path, &mut ids, config.batch)?;
    let would_miss = saved_filter_would_miss(&path, &filter_path)?;
    let (db, mut other_restart) = restart(&path, config, "other program wrote")?;
    other_restart.stale_file_would_miss = Some(would_miss);
    restarts.push(other_restart);
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
        other_program,
        restarts,
    })
}
