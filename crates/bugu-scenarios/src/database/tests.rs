//! Another program writing to the database behind the scenario's back: through a second
//! connection, from a second process, while the scenario is closed, and by recreating the table.
//! Afterwards no row of the table may be reported absent.

use std::error::Error;
use std::path::Path;
use std::process::{Command, Stdio};

use rusqlite::{Connection, params};

use super::store::UserDb;
use super::{Config, RebuildReason, Startup};
use crate::util::TempDir;

type TestResult = Result<(), Box<dyn Error>>;

/// The environment variable that tells [`second_process_writer`] which database to write to.
const WRITER_DB: &str = "BUGU_SCENARIO_WRITER_DB";

/// A scenario database at `dir` holding the ids `1..=200`, its filter saved.
fn open_with_rows(dir: &TempDir) -> Result<UserDb, Box<dyn Error>> {
    let (mut db, _, _) = UserDb::open(&dir.path().join("users.db"), &Config::small())?;
    db.insert_users(&(1..=200).collect::<Vec<i64>>())?;
    db.checkpoint()?;
    Ok(db)
}

/// What another program does: inserts `1_001..=1_100`, renumbers id 5 to 5_005 and deletes id 6,
/// each in its own transaction, as plain SQL.
fn write_behind_the_back(path: &Path) -> rusqlite::Result<()> {
    let conn = Connection::open(path)?;
    let tx = conn.unchecked_transaction()?;
    for id in 1_001..=1_100_i64 {
        tx.execute(
            "INSERT INTO users (id, name, email) VALUES (?1, 'other', 'other@example.com')",
            params![id],
        )?;
    }
    tx.commit()?;
    conn.execute("UPDATE users SET id = 5005 WHERE id = 5", [])?;
    conn.execute("DELETE FROM users WHERE id = 6", [])?;
    Ok(())
}

/// Asks the scenario for every row of the table; fails on any row reported absent.
fn assert_nothing_hidden(db: &mut UserDb) -> TestResult {
    let ids = db.ids()?;
    let mut hidden = Vec::new();
    for &id in &ids {
        if db.find(id)?.0.is_none() {
            hidden.push(id);
        }
    }
    assert!(
        hidden.is_empty(),
        "{} of {} rows reported absent: {:?}",
        hidden.len(),
        ids.len(),
        &hidden[..hidden.len().min(10)]
    );
    Ok(())
}

/// After [`write_behind_the_back`]: the old id of the renumbered row and the deleted one may still
/// pass the filter (a stale "maybe"), but SQLite then answers that they are gone.
fn assert_gone_after_the_other_writes(db: &mut UserDb) -> TestResult {
    assert!(db.find(5)?.0.is_none() && db.find(6)?.0.is_none());
    assert!(db.find(5_005)?.0.is_some());
    Ok(())
}

#[test]
fn rows_written_through_a_second_connection_are_never_reported_absent() -> TestResult {
    let dir = TempDir::new("bugu-scenario-database-test")?;
    let mut db = open_with_rows(&dir)?;
    assert_nothing_hidden(&mut db)?;
    write_behind_the_back(&dir.path().join("users.db"))?;
    assert_eq!(db.ids()?.len(), 200 + 100 - 1);
    assert_nothing_hidden(&mut db)?;
    assert_gone_after_the_other_writes(&mut db)
}

#[test]
fn rows_written_by_a_second_process_are_never_reported_absent() -> TestResult {
    let dir = TempDir::new("bugu-scenario-database-test")?;
    let path = dir.path().join("users.db");
    let mut db = open_with_rows(&dir)?;
    assert_nothing_hidden(&mut db)?;
    // This test binary again, running only the writer below.
    let status = Command::new(std::env::current_exe()?)
        .args(["database::tests::second_process_writer", "--exact", "--ignored", "--test-threads=1"])
        .env(WRITER_DB, &path)
        .stdout(Stdio::null())
        .status()?;
    assert!(status.success(), "the second process failed: {status}");
    let ids = db.ids()?;
    assert!((1_001..=1_100).all(|id| ids.contains(&id)), "the second process wrote its rows");
    assert_nothing_hidden(&mut db)?;
    assert_gone_after_the_other_writes(&mut db)
}

/// The second process of the test above, which runs it with [`WRITER_DB`] set; alone it fails.
#[test]
#[ignore = "run as a second process by rows_written_by_a_second_process_are_never_reported_absent"]
fn second_process_writer() -> TestResult {
    let path = std::env::var_os(WRITER_DB).ok_or("run by another test, with the database's path")?;
    Ok(write_behind_the_back(Path::new(&path))?)
}

#[test]
fn rows_written_while_the_scenario_is_closed_make_it_rebuild() -> TestResult {
    let dir = TempDir::new("bugu-scenario-database-test")?;
    let path = dir.path().join("users.db");
    drop(open_with_rows(&dir)?);
    write_behind_the_back(&path)?;
    let (mut db, startup, _) = UserDb::open(&path, &Config::small())?;
    assert!(matches!(startup, Startup::Rebuilt(RebuildReason::Stale { .. })), "{startup:?}");
    assert_nothing_hidden(&mut db)?;
    assert_gone_after_the_other_writes(&mut db)
}

#[test]
fn a_table_recreated_by_another_program_is_caught() -> TestResult {
    let dir = TempDir::new("bugu-scenario-database-test")?;
    let path = dir.path().join("users.db");
    let mut db = open_with_rows(&dir)?;
    // An import that replaces the table: whatever the table carried with it is gone too.
    let other = Connection::open(&path)?;
    other.execute_batch(
        "BEGIN;
         DROP TABLE users;
         CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL);
         WITH RECURSIVE n(id) AS (SELECT 3001 UNION ALL SELECT id + 1 FROM n WHERE id < 3100)
         INSERT INTO users (id, name, email) SELECT id, 'imported', 'i@example.com' FROM n;
         COMMIT;",
    )?;
    assert_eq!(db.ids()?.len(), 100);
    assert_nothing_hidden(&mut db)?;
    // Rows inserted afterwards, with the table's bookkeeping gone, are caught as well.
    other.execute("INSERT INTO users (id, name, email) VALUES (4001, 'late', 'late@example.com')", [])?;
    assert_nothing_hidden(&mut db)
}

#[test]
fn the_scenarios_own_writes_after_an_unseen_one_keep_every_row() -> TestResult {
    let dir = TempDir::new("bugu-scenario-database-test")?;
    let path = dir.path().join("users.db");
    let mut db = open_with_rows(&dir)?;
    let other = Connection::open(&path)?;
    other.execute("INSERT INTO users (id, name, email) VALUES (7001, 'other', 'o@example.com')", [])?;
    // The scenario's next write transactions start after the other program's commit, before any
    // lookup has noticed it: one deletes the row the filter never saw, one inserts.
    assert_eq!(db.delete_users(&[7001, 10])?, 2);
    other.execute("INSERT INTO users (id, name, email) VALUES (7002, 'other', 'o@example.com')", [])?;
    db.insert_users(&[8001, 8002])?;
    assert_nothing_hidden(&mut db)?;
    let (rows, missing) = db.check()?;
    assert_eq!((rows, missing), (200 - 1 + 1 + 2, 0));
    Ok(())
}

#[test]
fn a_change_that_moves_no_id_costs_no_rebuild() -> TestResult {
    let dir = TempDir::new("bugu-scenario-database-test")?;
    let mut db = open_with_rows(&dir)?;
    let other = Connection::open(dir.path().join("users.db"))?;
    other.execute("UPDATE users SET name = 'renamed' WHERE id = 7", [])?;
    other.execute_batch("CREATE TEMP TABLE scratch (x); INSERT INTO scratch VALUES (1);")?;
    assert_nothing_hidden(&mut db)?;
    assert_eq!(db.caught_up, 0, "names are not in the filter: nothing to rebuild");
    other.execute("INSERT INTO users (id, name, email) VALUES (9001, 'other', 'o@example.com')", [])?;
    assert_nothing_hidden(&mut db)?;
    assert_eq!(db.caught_up, 1);
    Ok(())
}

#[test]
fn every_row_committed_before_a_lookup_begins_is_found_while_another_thread_writes() -> TestResult {
    let dir = TempDir::new("bugu-scenario-database-test")?;
    let path = dir.path().join("users.db");
    let mut db = open_with_rows(&dir)?;
    let (committed, receive) = std::sync::mpsc::channel::<i64>();
    let writer = std::thread::spawn(move || -> rusqlite::Result<()> {
        let conn = Connection::open(path)?;
        for id in 10_001..=10_200_i64 {
            conn.execute("INSERT INTO users (id, name, email) VALUES (?1, 'other', 'o@example.com')", [id])?;
            // Told only once committed: the lookup that follows must find it.
            if committed.send(id).is_err() {
                break;
            }
        }
        Ok(())
    });
    let mut own = 20_001;
    for id in receive {
        assert!(db.find(id)?.0.is_some(), "row {id} committed before the lookup began was reported absent");
        if id % 20 == 0 {
            // The scenario's own writes, interleaved with the other thread's.
            db.insert_users(&[own])?;
            db.delete_users(&[own - 1, id - 1])?;
            own += 1;
        }
    }
    writer.join().map_err(|_| "the writer thread panicked")??;
    assert_nothing_hidden(&mut db)
}
