//! The database and its filter: opening (loading the saved filter or rebuilding it), writes that
//! keep the filter in step, and lookups.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bugu::{CuckooFilter, Filter, FilterMut, PersistError};
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::{Config, RebuildReason, Startup};
use crate::util::timed;

/// A user row.
type User = (String, String);

/// The database, its filter, and where the filter is saved.
pub(super) struct UserDb {
    pub(super) conn: Connection,
    pub(super) filter: CuckooFilter,
    pub(super) filter_path: PathBuf,
}

impl UserDb {
    /// Opens (creating if needed) the database at `path` and gets its filter: loaded from
    /// `<path>.bugu` if that is valid and current, else rebuilt from the table and saved.
    pub(super) fn open(path: &Path, config: &Config) -> Result<(Self, Startup, Duration), Box<dyn Error>> {
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
    pub(super) fn checkpoint(&self) -> Result<(), Box<dyn Error>> {
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
    pub(super) fn insert_users(&mut self, ids: &[i64]) -> Result<(), Box<dyn Error>> {
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
    pub(super) fn delete_users(&mut self, ids: &[i64]) -> Result<usize, Box<dyn Error>> {
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
    pub(super) fn query(&self, id: i64) -> rusqlite::Result<Option<User>> {
        let mut select = self.conn.prepare_cached("SELECT name, email FROM users WHERE id = ?1")?;
        select.query_row(params![id], |row| Ok((row.get(0)?, row.get(1)?))).optional()
    }

    /// The user with this id, asking the filter first; `None` without a query when the filter
    /// rules the id out. Says whether SQLite was queried.
    pub(super) fn find(&self, id: i64) -> rusqlite::Result<(Option<User>, bool)> {
        if !self.filter.contains(&id) {
            return Ok((None, false));
        }
        Ok((self.query(id)?, true))
    }

    /// Every id in the table.
    pub(super) fn ids(&self) -> rusqlite::Result<Vec<i64>> {
        let mut select = self.conn.prepare("SELECT id FROM users")?;
        select.query_map([], |row| row.get(0))?.collect()
    }

    /// `(rows, rows whose id the filter lacks)`.
    pub(super) fn check(&self) -> rusqlite::Result<(usize, usize)> {
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
