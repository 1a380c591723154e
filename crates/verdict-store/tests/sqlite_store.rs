//! What only the SQLite store has, on real database files in temporary
//! directories: a reader beside an open write transaction (WAL), the
//! in-memory store, the file alone complete after close, page sizes. The
//! behaviour both stores share is tested on both in `store.rs`. Must not
//! depend on another test's database.

use std::path::Path;
use std::time::{Duration, Instant};

use verdict_store::{SqliteStore, Store};

mod support;
use support::rows::{cell, new_run, sample};

fn open(directory: &Path) -> SqliteStore {
    SqliteStore::open(directory.join("verdict.db")).expect("open store")
}

/// WAL: a reader opens the database and reads while another connection holds
/// an uncommitted write transaction; it neither waits for the busy timeout
/// nor sees the uncommitted sample.
#[test]
fn a_reader_is_not_blocked_by_an_open_write_transaction() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("verdict.db");
    let writer = SqliteStore::open(&path).unwrap();
    let run = writer.create_run(&new_run("wal")).unwrap();
    writer
        .append_sample(run, &sample(0, 0, 1.0), &cell(&[("mode", "a")]))
        .unwrap();

    let raw = rusqlite::Connection::open(&path).unwrap();
    let mode: String = raw
        .pragma_query_value(None, "journal_mode", |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    raw.execute_batch(
        "BEGIN IMMEDIATE;
         INSERT INTO samples VALUES (1, 1, 0, 0, 0, 0, 0, 2.0, 1.0, 0.5, 1, 0, NULL, 0, 0, NULL);",
    )
    .unwrap();

    let started = Instant::now();
    let reader = SqliteStore::open(&path).unwrap();
    let seen = reader.samples(run).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "reader waited for the writer"
    );
    assert_eq!(seen.len(), 1, "uncommitted sample visible");

    // A second writer waits (busy timeout) rather than failing at once, and
    // gets its turn as soon as the first commits.
    let waiter = std::thread::spawn(move || {
        let second = SqliteStore::open(&path).unwrap();
        second
            .append_sample(run, &sample(2, 0, 3.0), &cell(&[("mode", "a")]))
            .map(|()| second.samples(run).unwrap().len())
    });
    std::thread::sleep(Duration::from_millis(100));
    raw.execute_batch("COMMIT").unwrap();
    assert_eq!(waiter.join().unwrap().unwrap(), 3);
    let sequences: Vec<u32> = reader
        .samples(run)
        .unwrap()
        .iter()
        .map(|s| s.sequence)
        .collect();
    assert_eq!(sequences, vec![0, 1, 2]);
}

#[test]
fn the_in_memory_store_behaves_like_the_file() {
    // Callers hold it as a trait object, as they will a PostgreSQL store.
    let store: Box<dyn Store> = Box::new(SqliteStore::open_in_memory().unwrap());
    let run = store.create_run(&new_run("memory")).unwrap();
    store
        .append_sample(run, &sample(0, 0, 1.0), &cell(&[("mode", "a")]))
        .unwrap();
    assert!(
        store
            .append_sample(run, &sample(0, 0, 1.0), &cell(&[("mode", "a")]))
            .is_err()
    );
    assert_eq!(store.samples(run).unwrap(), vec![sample(0, 0, 1.0)]);
}

/// When the store closes, the WAL is folded into the database file and
/// removed: the file alone, copied elsewhere, holds every sample.
#[test]
fn the_database_file_alone_is_complete_after_close() {
    let directory = tempfile::tempdir().unwrap();
    let store = open(directory.path());
    let run = store.create_run(&new_run("close")).unwrap();
    for sequence in 0..50 {
        store
            .append_sample(run, &sample(sequence, 0, 1.0), &cell(&[("mode", "a")]))
            .unwrap();
    }
    drop(store);
    assert!(!directory.path().join("verdict.db-wal").exists());
    let copy = tempfile::tempdir().unwrap();
    std::fs::copy(
        directory.path().join("verdict.db"),
        copy.path().join("verdict.db"),
    )
    .unwrap();
    assert_eq!(open(copy.path()).samples(run).unwrap().len(), 50);
}

/// New databases use 2 KiB pages (each sample writes one page to the WAL);
/// a database made with another page size keeps it and works as before.
#[test]
fn new_databases_use_small_pages_and_old_ones_keep_theirs() {
    let directory = tempfile::tempdir().unwrap();
    drop(open(directory.path()));
    let page_size = |path: &Path| -> i64 {
        rusqlite::Connection::open(path)
            .unwrap()
            .pragma_query_value(None, "page_size", |row| row.get(0))
            .unwrap()
    };
    assert_eq!(page_size(&directory.path().join("verdict.db")), 2048);

    let old = tempfile::tempdir().unwrap();
    let path = old.path().join("verdict.db");
    {
        let connection = rusqlite::Connection::open(&path).unwrap();
        connection.pragma_update(None, "page_size", 4096).unwrap();
        connection.execute_batch("VACUUM").unwrap();
    }
    let store = open(old.path());
    let run = store.create_run(&new_run("old pages")).unwrap();
    store
        .append_sample(run, &sample(0, 0, 1.0), &cell(&[("mode", "a")]))
        .unwrap();
    assert_eq!(store.samples(run).unwrap().len(), 1);
    drop(store);
    assert_eq!(page_size(&path), 4096);
}
