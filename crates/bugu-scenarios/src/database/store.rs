//! The database and its filter: opening (loading the saved filter or rebuilding it), writes that
//! keep the filter in step, lookups, and catching up with rows other programs wrote.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bugu::{CuckooFilter, Filter, FilterMut, Persist, PersistError};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use super::{Config, RebuildReason, Startup};
use crate::util::timed;

/// A user row.
type User = (String, String);

/// The tables, and the triggers that count every change of an id in the same transaction as the
/// change, whichever program makes it. Run at every open and rebuild: it restores a trigger or a
/// table another program dropped (which changes the schema's version, so the filter is rebuilt).
const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER);
    INSERT OR IGNORE INTO meta (key, value)
        VALUES ('generation', 0), ('filter_generation', NULL), ('filter_schema', NULL);
    CREATE TRIGGER IF NOT EXISTS users_insert_counted AFTER INSERT ON users
        BEGIN UPDATE meta SET value = value + 1 WHERE key = 'generation'; END;
    CREATE TRIGGER IF NOT EXISTS users_id_update_counted AFTER UPDATE OF id ON users
        BEGIN UPDATE meta SET value = value + 1 WHERE key = 'generation'; END;
    CREATE TRIGGER IF NOT EXISTS users_delete_counted AFTER DELETE ON users
        BEGIN UPDATE meta SET value = value + 1 WHERE key = 'generation'; END;";

/// Where the table stands: the change counter the triggers keep, and the schema's version (which
/// SQLite changes whenever a table or trigger is created, altered or dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    generation: i64,
    schema: i64,
}

/// What the database says, read in one transaction so the numbers agree with each other.
struct State {
    /// The table now.
    current: Stamp,
    /// The table when the saved filter was saved, if one was recorded.
    saved: Option<Stamp>,
    /// This connection's `PRAGMA data_version`: it changes when another connection commits.
    data_version: i64,
}

/// The database, its filter, and where the filter is saved.
pub(super) struct UserDb {
    pub(super) conn: Connection,
    pub(super) filter: CuckooFilter,
    pub(super) filter_path: PathBuf,
    /// The sizes a rebuild uses.
    config: Config,
    /// The table's stamp that the filter holds every row of.
    seen: Stamp,
    /// `PRAGMA data_version` when `seen` was last confirmed: while it stays the same, no other
    /// connection has committed anything.
    data_version: i64,
    /// Rebuilds because another program had changed the table.
    pub(super) caught_up: usize,
}

impl UserDb {
    /// Opens (creating if needed) the database at `path` and gets its filter: loaded from
    /// `<path>.bugu` if that is valid and current, else rebuilt from the table and saved.
    pub(super) fn open(path: &Path, config: &Config) -> Result<(Self, Startup, Duration), Box<dyn Error>> {
        let mut conn = Connection::open(path)?;
        conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")?;
        ensure_schema(&mut conn)?;
        let mut name = path.as_os_str().to_owned();
        name.push(".bugu");
        let filter_path = PathBuf::from(name);

        let (opened, took) = timed(|| -> Result<_, Box<dyn Error>> {
            let reason = match CuckooFilter::load(&filter_path) {
                Ok(filter) => {
                    let state = snapshot(&conn)?;
                    match state.saved {
                        Some(saved) if saved == state.current => {
                            return Ok((
                                filter,
                                Startup::Loaded { generation: saved.generation },
                                state,
                                false,
                            ));
                        }
                        Some(saved) if saved.generation == state.current.generation => {
                            RebuildReason::SchemaChanged
                        }
                        saved => RebuildReason::Stale {
                            saved: saved.map(|stamp| stamp.generation),
                            current: state.current.generation,
                        },
                    }
                }
                Err(PersistError::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => {
                    RebuildReason::Missing
                }
                Err(error) => RebuildReason::Corrupt(error.to_string()),
            };
            let (filter, state) = rebuild(&conn, config)?;
            Ok((filter, Startup::Rebuilt(reason), state, true))
        });
        let (filter, startup, state, rebuilt) = opened?;
        let db = UserDb {
            conn,
            filter,
            filter_path,
            config: config.clone(),
            seen: state.current,
            data_version: state.data_version,
            caught_up: 0,
        };
        if rebuilt {
            db.save_filter()?;
        }
        Ok((db, startup, took))
    }

    /// Catches up with other programs' writes, then saves the filter.
    pub(super) fn checkpoint(&mut self) -> Result<(), Box<dyn Error>> {
        self.catch_up()?;
        self.save_filter()
    }

    /// Saves the filter atomically, then records the stamp of the table it holds every row of.
    fn save_filter(&self) -> Result<(), Box<dyn Error>> {
        self.filter.save(&self.filter_path)?;
        // Only once the file is in place: a crash before this line leaves an older record, which
        // does not match, so the next start rebuilds. The stamp recorded is the one the filter
        // was last confirmed against, not the table's now: if another program has written since,
        // the record does not match either.
        self.conn.execute(
            "UPDATE meta SET value = CASE key WHEN 'filter_generation' THEN ?1 ELSE ?2 END
             WHERE key IN ('filter_generation', 'filter_schema')",
            params![self.seen.generation, self.seen.schema],
        )?;
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
        let committed = self.write(|tx| {
            let mut insert = tx.prepare_cached("INSERT INTO users (id, name, email) VALUES (?1, ?2, ?3)")?;
            for id in ids {
                insert.execute(params![id, format!("user {id}"), format!("user{id}@example.com")])?;
            }
            Ok(())
        });
        match committed {
            Ok(((), Behind::No)) => Ok(()),
            // The rows are in, with rows of another program the filter has not seen: the filter
            // is made again from the table, which holds both.
            Ok(((), Behind::Yes)) => self.rebuild_behind(),
            Err(error) => {
                // Rolled back: the rows are not there, so the fingerprints this call added are
                // removed again.
                for id in ids {
                    self.filter.remove(id);
                }
                Err(error.into())
            }
        }
    }

    /// Deletes users in one transaction: their ids leave the filter after the commit. Returns how
    /// many rows were deleted.
    pub(super) fn delete_users(&mut self, ids: &[i64]) -> Result<usize, Box<dyn Error>> {
        let (deleted, behind) = self.write(|tx| {
            let mut delete = tx.prepare_cached("DELETE FROM users WHERE id = ?1")?;
            let mut deleted = Vec::with_capacity(ids.len());
            for &id in ids {
                if delete.execute(params![id])? == 1 {
                    deleted.push(id);
                }
            }
            Ok(deleted)
        })?;
        match behind {
            // The rows are gone for good: only now may their ids leave the filter.
            Behind::No => {
                for id in &deleted {
                    self.filter.remove(id);
                }
            }
            // A deleted row may be one another program wrote, whose id the filter never held:
            // removing it could take out another id's fingerprint. Rebuild instead.
            Behind::Yes => self.rebuild_behind()?,
        }
        Ok(deleted.len())
    }

    /// Runs `work` in a write transaction that takes the write lock at once (so no other program
    /// commits until it ends), and says whether the table had changed behind the filter's back
    /// before it began. When it had not, the filter is then known to match the table's new stamp
    /// (given what the caller does to the filter for its own rows).
    fn write<T>(
        &mut self,
        work: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<(T, Behind)> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let before = read_stamp(&tx)?;
        let value = work(&tx)?;
        let after = read_stamp(&tx)?;
        tx.commit()?;
        if before == self.seen {
            self.seen = after;
            Ok((value, Behind::No))
        } else {
            Ok((value, Behind::Yes))
        }
    }

    /// The user with this id, asking SQLite.
    pub(super) fn query(&self, id: i64) -> rusqlite::Result<Option<User>> {
        let mut select = self.conn.prepare_cached("SELECT name, email FROM users WHERE id = ?1")?;
        select.query_row(params![id], |row| Ok((row.get(0)?, row.get(1)?))).optional()
    }

    /// The user with this id, asking the filter first; `None` without a query when the filter
    /// rules the id out. Says whether SQLite was queried.
    ///
    /// A "maybe" goes to SQLite, which answers from the table as it is now. An "absent" is
    /// trusted only after [`catch_up`](Self::catch_up): the filter then holds every row committed
    /// before this call, whoever wrote it.
    pub(super) fn find(&mut self, id: i64) -> Result<(Option<User>, bool), Box<dyn Error>> {
        if !self.filter.contains(&id) {
            self.catch_up()?;
            if !self.filter.contains(&id) {
                return Ok((None, false));
            }
        }
        Ok((self.query(id)?, true))
    }

    /// Makes sure the filter lacks no committed row. Cheap when no other connection has
    /// committed since the last call (one `PRAGMA data_version`, which SQLite changes only for
    /// other connections' commits); otherwise the stamp is read, and if another program changed
    /// ids or the schema, the filter is rebuilt from the table.
    pub(super) fn catch_up(&mut self) -> Result<(), Box<dyn Error>> {
        let data_version: i64 =
            self.conn.prepare_cached("PRAGMA data_version")?.query_row([], |row| row.get(0))?;
        if data_version == self.data_version {
            return Ok(());
        }
        let state = snapshot(&self.conn)?;
        if state.current == self.seen {
            // Another connection committed, but not to the ids (another table, or names).
            self.data_version = state.data_version;
            return Ok(());
        }
        self.rebuild_behind()
    }

    /// Rebuilds the filter because another program changed the table.
    fn rebuild_behind(&mut self) -> Result<(), Box<dyn Error>> {
        ensure_schema(&mut self.conn)?;
        let (filter, state) = rebuild(&self.conn, &self.config)?;
        (self.filter, self.seen, self.data_version) = (filter, state.current, state.data_version);
        self.caught_up += 1;
        Ok(())
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

/// Whether a write transaction began after another program's change the filter had not seen.
enum Behind {
    No,
    Yes,
}

/// Creates what is missing of the tables and triggers, in one transaction.
fn ensure_schema(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(SCHEMA)?;
    tx.commit()
}

/// The table's stamp now.
fn read_stamp(conn: &Connection) -> Result<Stamp, rusqlite::Error> {
    let generation =
        conn.query_row("SELECT value FROM meta WHERE key = 'generation'", [], |row| row.get(0))?;
    let schema = conn.query_row("PRAGMA schema_version", [], |row| row.get(0))?;
    Ok(Stamp { generation, schema })
}

/// [`read_state`] in a read transaction of its own.
fn snapshot(conn: &Connection) -> Result<State, Box<dyn Error>> {
    let tx = conn.unchecked_transaction()?;
    let state = read_state(&tx)?;
    tx.commit()?;
    Ok(state)
}

/// The table's stamp, the one recorded with the saved filter, and this connection's data
/// version; inside a transaction, so that they agree.
fn read_state(tx: &Transaction<'_>) -> Result<State, Box<dyn Error>> {
    let current = read_stamp(tx).map_err(|error| {
        format!("the change counter in the meta table cannot be read ({error}); the filter is not trusted")
    })?;
    let (generation, schema): (Option<i64>, Option<i64>) = tx.query_row(
        "SELECT (SELECT value FROM meta WHERE key = 'filter_generation'),
                (SELECT value FROM meta WHERE key = 'filter_schema')",
        [],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    let saved = generation.zip(schema).map(|(generation, schema)| Stamp { generation, schema });
    let data_version = tx.query_row("PRAGMA data_version", [], |row| row.get(0))?;
    Ok(State { current, saved, data_version })
}

/// A filter of every id in the table, read in one transaction; with the state it matches.
fn rebuild(conn: &Connection, config: &Config) -> Result<(CuckooFilter, State), Box<dyn Error>> {
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
    // Read within the same transaction: the stamp and data version of the rows just read.
    let state = read_state(&tx)?;
    tx.commit()?;
    Ok((filter, state))
}
