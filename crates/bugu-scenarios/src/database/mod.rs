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
//! ?`), 90% of them for ids that are not in the table (never used, or deleted), run three times:
//! querying SQLite every time; asking the filter first and querying only when it says "maybe";
//! and the same without the check for other programs' writes described below, which is unsound
//! and timed only to show what that check costs. The report gives the times, the queries saved,
//! the false positives, and checks that every run returns the rows SQLite returns, so the filter
//! never hid a present id (no false negative).
//!
//! Then another program writes to the table through its own connection, in plain SQL: it inserts
//! rows, gives rows new ids and deletes rows. The report says how many rows the filter lacked,
//! that the next lookup the filter answered "absent" noticed and rebuilt it, and that afterwards
//! no row of the table is reported absent.
//!
//! Five restarts follow, each checked against the whole table: the saved filter loads; deleted,
//! it is rebuilt; corrupted (one byte flipped), it is refused and rebuilt; stale (rows written
//! after it was saved), it is rebuilt; and after another program wrote while the scenario was
//! down, it is rebuilt.
//!
//! ## Keeping the filter in step: why a crash cannot cause a false negative
//!
//! The rule is that **at every instant, the filter holds every row that is committed** (and
//! possibly a few more ids, which only cost a useless query: a false positive). For the
//! scenario's own writes, two orderings give it:
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
//! The other order would open a window for false negatives: a row committed before its
//! fingerprint is added, or a fingerprint removed before a delete that then rolls back.
//!
//! ## Other programs writing to the database
//!
//! Any program can open the database and write rows the filter never sees; trusting the filter
//! would then answer "absent" for rows that are there. So the database counts its own changes:
//! triggers on `users` add one to `meta.generation` for every inserted row, every changed id
//! and every deleted row, **in the same transaction as the change**, whichever program makes it
//! (they are part of the schema, so a program needs no cooperation beyond writing through
//! SQLite). The filter remembers the **stamp** it holds every row of: that counter and SQLite's
//! `schema_version`, which changes whenever a table or trigger is created, altered or dropped
//! (a program that drops and recreates `users` also drops its triggers, and could write rows
//! while they are missing).
//!
//! - **A lookup trusts an "absent" only after a check.** `PRAGMA data_version`, which SQLite
//!   changes only when another connection commits, is read first; unchanged, no other program
//!   has committed anything since the filter was last confirmed, so the filter still holds every
//!   committed row and the "absent" is true at that moment. Changed, the stamp is read: the same
//!   (another table, or only names changed), the filter is confirmed; different, the triggers
//!   are restored if missing and the filter is rebuilt from the table (ids and stamp read in one
//!   transaction), and the lookup is answered from the new filter. A "maybe" needs no check:
//!   SQLite answers it from the table as it is.
//! - **The scenario's own writes** take the write lock when they begin (`BEGIN IMMEDIATE`, so
//!   no other program commits until they end) and read the stamp first. If it is the one the
//!   filter holds, the filter matches the stamp read at the end of the transaction. If not,
//!   another program has written: after the commit the filter is rebuilt, and a delete does not
//!   remove ids from the filter, since a deleted row may be one the filter never held.
//! - **Deletes and id changes by another program** leave ids in the filter whose rows are gone:
//!   "maybe" answers that SQLite then answers "not found", which costs a query and is safe. The
//!   counter counts them anyway, so the filter is rebuilt, which also drops those ids.
//!
//! The check is one statement per "absent" answer. Its cost is a read transaction's: SQLite
//! takes and releases its shared-memory read lock (two `fcntl` calls), as every point query
//! does, so it saves the query's B-tree search but not its locking. The report times the
//! lookups with and without it. (A database opened with `locking_mode = EXCLUSIVE` takes no
//! such lock, but then no other program can read or write it at all.) A program that writes often makes the scenario rebuild often; a deployment with
//! busy writers would log changed ids from the triggers and add them instead. The guarantee
//! holds against programs that write rows through SQLite; it does not hold against one that
//! edits `meta`, replaces the triggers with others of the same names, or turns triggers off
//! (`SQLITE_DBCONFIG_ENABLE_TRIGGER`).
//!
//! ## The saved filter, and when not to trust it
//!
//! The filter is saved beside the database as `users.db.bugu`, with `CuckooFilter::save`, which
//! replaces the file atomically (a crash leaves the old file or the new one, never a mix).
//! Loading validates every byte (a checksum among others), so a missing or corrupt file is
//! detected and the filter is rebuilt from `SELECT id FROM users`.
//!
//! A valid file can still be **stale**: rows committed after it was saved, by the scenario or
//! another program, are not in it, and trusting it would answer "absent" for them. So:
//!
//! - after the filter file has been saved (the atomic rename is flushed to disk), a separate
//!   transaction records the stamp the filter holds every row of, as `meta.filter_generation`
//!   and `meta.filter_schema` (the stamp last confirmed, not the table's now: if another program
//!   has written since, the record does not match either);
//! - at startup, the triggers are created if missing, and the file is used only if it loads
//!   **and** the recorded stamp is the table's. Anything else rebuilds.
//!
//! A crash after a save but before it is recorded leaves the old record, which no longer
//! matches: a needless rebuild, never a stale filter. A crash after writes that follow a save
//! leaves a newer counter: a rebuild. The argument needs committed transactions to be durable,
//! so the database runs with `synchronous = FULL` (WAL journal); with a weaker setting a power
//! loss could undo a commit that a saved filter already reflects.
//!
//! The filter is sized for [`Config::filter_capacity`] ids, or 25% more than the table holds
//! when it is rebuilt, whichever is larger; a table that outgrows it makes inserts fail (and
//! their transactions roll back) until the filter is rebuilt larger.

use std::collections::HashSet;
use std::error::Error;
use std::path::Path;

use bugu::{CuckooFilter, Filter, Persist};
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
    // The filter first again, trusting every "absent" without asking SQLite whether another
    // program has written: unsound when one has, timed only to show what the check costs.
    let (unchecked, without_check) = timed(|| -> rusqlite::Result<Vec<bool>> {
        let ask = |id: &i64| {
            if db.filter.contains(id) { db.query(*id).map(|user| user.is_some()) } else { Ok(false) }
        };
        lookups.iter().map(ask).collect()
    });
    let unchecked = unchecked?;
    let present = every.iter().filter(|&&found| found).count();
    let in_filter: Vec<bool> = lookups.iter().map(|id| db.filter.contains(id)).collect();
    let false_negatives = in_filter.iter().zip(&every).filter(|&(&maybe, &found)| found && !maybe).count();
    let false_positives = in_filter.iter().zip(&every).filter(|&(&maybe, &found)| maybe && !found).count();
    let differ = |answers: &[bool]| answers.iter().zip(&every).filter(|(a, b)| a != b).count();
    let answers_differ = differ(&filtered) + differ(&unchecked);

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
        without_check,
        other_program,
        restarts,
    })
}
