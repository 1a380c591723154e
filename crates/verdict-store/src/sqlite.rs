//! `SqliteStore`: the `Store` on an embedded SQLite file (rusqlite, bundled).
//!
//! Durability: WAL journal with `synchronous = NORMAL`. Every write method is
//! one transaction, committed before it returns; a committed transaction
//! survives the process being killed (SIGKILL included), because it is in the
//! WAL file the moment COMMIT returns. A power loss or kernel crash may lose
//! the last few commits (not yet fsynced) but never corrupts the database.
//! `synchronous = FULL` would fsync on every sample, which would dominate
//! verdict's per-iteration overhead (it must stay below hyperfine's).
//! Alongside `PATH` SQLite keeps `PATH-wal` and `PATH-shm` while the database
//! is open; they belong to the database. The last connection to close
//! checkpoints and deletes them. (Keeping the WAL between runs was tried and
//! measured: SQLite then re-reads the whole WAL at every open, the frames
//! count as not yet checkpointed, and the file grows to the checkpoint
//! limit; slower, not faster.)
//!
//! The store's queries are `queries.rs`'s, run through this file's
//! `Backend`. Must not know about experiments beyond storing them, nor
//! read clocks.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, Transaction, TransactionBehavior};
use verdict_model::Cell;

use crate::StoreError;
use crate::migrations::{APPLICATION_ID, LATEST_VERSION, known_version, pending};
use crate::sql::{Backend, Dialect, Param, RawError, Row, visit};

/// Page size of new databases (set where a new file is first configured).
const PAGE_SIZE: i64 = 2048;

/// Prepared statements kept per connection (every query the store has).
const STATEMENT_CACHE: usize = 128;

/// How long a connection waits for another writer before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// A verdict database in one SQLite file (plus `PATH-wal` and `PATH-shm`
/// while open).
///
/// Each write method is one transaction, committed before it returns, in
/// WAL mode with `synchronous = NORMAL`: what a method reported as written
/// survives the process being killed, SIGKILL included. A power loss or
/// kernel crash may lose the last few commits (never corrupting the file);
/// an fsync per sample (`synchronous = FULL`) would dominate the harness
/// overhead. Readers in other processes are never blocked by the writer;
/// writers wait for each other up to a busy timeout of 10 s. Not `Sync`:
/// one store per thread.
#[derive(Debug)]
pub struct SqliteStore {
    pub(crate) connection: Connection,
    pub(crate) path: PathBuf,
    /// Cells of runs this connection stored or checked, so the per-sample
    /// write skips re-reading `run_cells`: one INSERT per sample (plus its
    /// metrics), which is most of verdict's per-iteration overhead.
    known_cells: RefCell<HashMap<(i64, i64), Cell>>,
    /// How a reader opened the file; `None` for a read-write store.
    read_only: Option<ReadOnly>,
}

/// How `SqliteStore::open_read_only` reached the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOnly {
    /// No write-ahead log beside the file (no run is writing): the file is
    /// read as an immutable snapshot, without locks and without creating
    /// `PATH-wal` or `PATH-shm`, so a reader that may not write the file or
    /// its directory can read it.
    Snapshot,
    /// A write-ahead log is beside the file (a run is writing, or one was
    /// killed): read-only, through the log's shared-memory index, so rows
    /// committed by the writer are seen.
    Live,
    /// The file has an older schema (this version): it was copied into
    /// memory and migrated there; the file itself is left as it is (the
    /// next command that writes migrates it).
    MigratedCopy { from_version: i64 },
}

impl SqliteStore {
    /// Opens the database at `path`, creating it when missing and migrating
    /// an older schema forward. A database written by a newer verdict, or a
    /// SQLite file that is not a verdict database, is refused untouched.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteStore, StoreError> {
        let path = path.as_ref();
        let connection = Connection::open(path).map_err(|source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        Self::initialize(connection, path.to_path_buf())
    }

    /// Like `open`, for commands that only read what runs stored (`runs`,
    /// `report`, `compare`): a missing file is an error rather than a new
    /// empty database in the wrong directory.
    pub fn open_existing(path: impl AsRef<Path>) -> Result<SqliteStore, StoreError> {
        let path = path.as_ref();
        if !path.exists() {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
            | rusqlite::OpenFlags::SQLITE_OPEN_URI
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let connection =
            Connection::open_with_flags(path, flags).map_err(|source| StoreError::Open {
                path: path.to_path_buf(),
                source,
            })?;
        Self::initialize(connection, path.to_path_buf())
    }

    /// Opens an existing database for commands that only read (`runs`,
    /// `report`, `compare`, `export`): never writes the file, never creates
    /// files beside it, and works for a user who may write neither the file
    /// nor its directory.
    ///
    /// Without a write-ahead log beside the file (`PATH-wal`, or a rollback
    /// `PATH-journal`) no verdict is writing and every commit is in the file:
    /// it is opened `immutable` (no locks, no `-shm`). A plain read-only open
    /// would have to create `PATH-wal` and `PATH-shm` (which a read-only
    /// connection then leaves behind) or fail where it cannot. With a log
    /// present it is opened `mode=ro` and reads through the writer's
    /// `-shm`, seeing every committed sample. The log is looked for again
    /// after the open, so a writer that started meanwhile is seen. (Left
    /// open: a writer that starts after that check and checkpoints into the
    /// file, which it does only on closing or after ~32 MB of log, while
    /// this reader is still reading.)
    ///
    /// A file with an older schema is copied into memory and migrated
    /// there (`read_only()` says so); a newer schema or a file that is not
    /// a verdict database is refused as by `open`.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<SqliteStore, StoreError> {
        let path = path.as_ref();
        if !path.exists() {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        let open_error = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let mut live = has_log(path);
        let (connection, version) = loop {
            let connection = open_read_only_connection(path, live).map_err(open_error)?;
            let version =
                while_busy(is_busy_code, || identify(&connection, path)).map_err(open_error)??;
            if !live && has_log(path) {
                live = true;
                continue;
            }
            break (connection, version);
        };
        let (connection, read_only) = if version < LATEST_VERSION {
            let mut memory = Connection::open_in_memory().map_err(open_error)?;
            rusqlite::backup::Backup::new(&connection, &mut memory)
                .and_then(|backup| backup.run_to_completion(1024, Duration::ZERO, None))
                .map_err(open_error)?;
            drop(connection);
            prepare(&memory, path)?;
            (
                memory,
                ReadOnly::MigratedCopy {
                    from_version: version,
                },
            )
        } else if live {
            (connection, ReadOnly::Live)
        } else {
            (connection, ReadOnly::Snapshot)
        };
        connection.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // A migrated copy in memory would accept writes and lose them.
        connection
            .pragma_update(None, "query_only", true)
            .map_err(open_error)?;
        Ok(SqliteStore {
            connection,
            path: path.to_path_buf(),
            known_cells: RefCell::default(),
            read_only: Some(read_only),
        })
    }

    /// How a store from `open_read_only` reads (`None`: a read-write store).
    pub fn read_only(&self) -> Option<ReadOnly> {
        self.read_only
    }

    /// A private in-memory database: the deterministic fake for tests of
    /// callers (no file, same SQL).
    pub fn open_in_memory() -> Result<SqliteStore, StoreError> {
        let path = PathBuf::from(":memory:");
        let connection = Connection::open_in_memory().map_err(|source| StoreError::Open {
            path: path.clone(),
            source,
        })?;
        Self::initialize(connection, path)
    }
    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version this build of verdict reads and writes.
    pub fn schema_version() -> i64 {
        LATEST_VERSION
    }

    fn initialize(connection: Connection, path: PathBuf) -> Result<SqliteStore, StoreError> {
        connection.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        connection
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|source| StoreError::Open {
                path: path.clone(),
                source,
            })?;
        // Some lock conflicts while another process creates or converts the
        // file are reported as busy without calling the busy handler (SQLite
        // refuses to wait where waiting could deadlock, e.g. switching to
        // WAL); every step below is idempotent, so retry them all.
        while_busy(is_busy, || prepare(&connection, &path))?;
        Ok(SqliteStore {
            connection,
            path,
            known_cells: RefCell::default(),
            read_only: None,
        })
    }

    /// The database file as its name in messages.
    fn io_name(&self) -> PathBuf {
        self.path.clone()
    }

    fn execute_cached(&self, sql: &str) -> rusqlite::Result<usize> {
        self.connection
            .prepare_cached(sql)
            .and_then(|mut statement| statement.execute([]))
    }
}

/// Binds `parameters` to `statement`: the parameter named `$N` gets the
/// N-th value, wherever in the text it first appears (SQLite numbers named
/// parameters in order of appearance).
fn bind(statement: &mut rusqlite::Statement<'_>, parameters: &[Param<'_>]) -> rusqlite::Result<()> {
    for index in 1..=statement.parameter_count() {
        let position = statement
            .parameter_name(index)
            .and_then(|name| name.strip_prefix('$'))
            .and_then(|number| number.parse::<usize>().ok())
            .filter(|number| (1..=parameters.len()).contains(number))
            .ok_or(rusqlite::Error::InvalidParameterCount(
                index,
                parameters.len(),
            ))?;
        statement.raw_bind_parameter(index, parameters[position - 1])?;
    }
    Ok(())
}

impl Backend for SqliteStore {
    fn name(&self) -> PathBuf {
        self.io_name()
    }

    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute_raw(&self, sql: &str, parameters: &[Param<'_>]) -> Result<u64, RawError> {
        let mut statement = self.connection.prepare_cached(sql)?;
        bind(&mut statement, parameters)?;
        Ok(statement.raw_execute()? as u64)
    }

    fn each_row_raw(
        &self,
        sql: &str,
        parameters: &[Param<'_>],
        each: &mut dyn FnMut(Row<'_>) -> Result<ControlFlow<()>, StoreError>,
    ) -> Result<Result<(), StoreError>, RawError> {
        let mut statement = self.connection.prepare_cached(sql)?;
        bind(&mut statement, parameters)?;
        let mut rows = statement.raw_query();
        while let Some(row) = rows.next()? {
            if let ControlFlow::Break(outcome) = visit(each, Row::Sqlite(row)) {
                return Ok(outcome);
            }
        }
        Ok(Ok(()))
    }

    /// `BEGIN IMMEDIATE`: the write lock is taken up front so a concurrent
    /// writer makes us wait (busy timeout) instead of failing on an
    /// upgraded read snapshot. BEGIN and COMMIT are cached prepared
    /// statements: parsing them per sample costs more than the sample's
    /// INSERT. Any error (or a panic) rolls the transaction back.
    fn transaction<T>(
        &self,
        operation: &str,
        body: impl FnOnce() -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let error = |source| StoreError::Sql {
            path: self.path.clone(),
            operation: operation.to_string(),
            source,
        };
        self.execute_cached("BEGIN IMMEDIATE").map_err(error)?;
        let mut open = OpenTransaction {
            connection: &self.connection,
            committed: false,
        };
        let value = body()?;
        self.execute_cached("COMMIT").map_err(error)?;
        open.committed = true;
        Ok(value)
    }

    fn known_cells(&self) -> &RefCell<HashMap<(i64, i64), Cell>> {
        &self.known_cells
    }
}

/// Rolls back the transaction `write` began unless it committed (an error
/// in the body, or a panic).
struct OpenTransaction<'a> {
    connection: &'a Connection,
    committed: bool,
}

impl Drop for OpenTransaction<'_> {
    fn drop(&mut self) {
        if !self.committed && !self.connection.is_autocommit() {
            let _ = self.connection.execute_batch("ROLLBACK");
        }
    }
}

/// Checks what the file is, switches it to WAL and migrates it. Refuses,
/// before changing anything, a file that is not a verdict database or has
/// a newer schema.
fn prepare(connection: &Connection, path: &Path) -> Result<(), StoreError> {
    let open_error = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    let version = identify(connection, path).map_err(open_error)??;
    if version == 0 {
        // Before the first page is written. Every committed sample writes a
        // whole page to the WAL, and closing fsyncs the WAL before
        // checkpointing it: with 2 KiB pages a 2000-sample run's close
        // took 31 ms instead of 44 (and the WAL written back during the run
        // halves). Databases made with other sizes keep theirs.
        connection
            .pragma_update(None, "page_size", PAGE_SIZE)
            .map_err(open_error)?;
    }
    // journal_mode answers "memory" for an in-memory database.
    let _mode: String = connection
        .pragma_update_and_check(None, "journal_mode", "wal", |row| row.get(0))
        .map_err(open_error)?;
    connection
        .pragma_update(None, "synchronous", "NORMAL")
        .map_err(open_error)?;
    // Checkpoints copy the WAL into the database and fsync: with the default
    // (every 1000 pages, about every 100 samples) they were the largest part
    // of verdict's per-iteration overhead. Every 16000 pages (~64 MiB of WAL)
    // they are rare during a run; closing the database checkpoints the rest.
    connection
        .pragma_update(None, "wal_autocheckpoint", 16000)
        .map_err(open_error)?;
    connection
        .pragma_update(None, "foreign_keys", "ON")
        .map_err(open_error)?;
    if version < LATEST_VERSION {
        migrate(connection, path)?;
    }
    Ok(())
}

/// The schema version of a verdict database (0 for an empty file), or why
/// the file is refused. Read in one statement, so from one snapshot: a file
/// another process is creating is seen either empty or complete.
fn identify(connection: &Connection, path: &Path) -> rusqlite::Result<Result<i64, StoreError>> {
    let (version, application_id, tables): (i64, i64, i64) = connection.query_row(
        "SELECT (SELECT user_version FROM pragma_user_version), \
                (SELECT application_id FROM pragma_application_id), \
                (SELECT COUNT(*) FROM sqlite_master)",
        [],
        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
    )?;
    let path = path.to_path_buf();
    Ok(if application_id != APPLICATION_ID && application_id != 0 {
        Err(StoreError::NotVerdict {
            path,
            reason: format!("its SQLite application_id is {application_id:#x}"),
        })
    } else if application_id == 0 && (version != 0 || tables != 0) {
        Err(StoreError::NotVerdict {
            path,
            reason: "it is a SQLite file with tables but no verdict mark".to_string(),
        })
    } else {
        known_version(path, version)
    })
}

/// Brings the schema from its current version to `LATEST_VERSION`, one
/// migration per step, all in one immediate transaction so that two
/// processes opening a fresh database at once cannot both migrate it.
fn migrate(connection: &Connection, path: &Path) -> Result<(), StoreError> {
    let migrate_error = |version| {
        move |source| StoreError::Migrate {
            path: path.to_path_buf(),
            version,
            source,
        }
    };
    let transaction = Transaction::new_unchecked(connection, TransactionBehavior::Immediate)
        .map_err(migrate_error(LATEST_VERSION))?;
    // Re-read under the write lock: another process may have migrated.
    let version = identify(&transaction, path).map_err(migrate_error(LATEST_VERSION))??;
    for (target, migration) in pending(version) {
        transaction
            .execute_batch(migration.sqlite)
            .and_then(|()| transaction.pragma_update(None, "user_version", target))
            .map_err(migrate_error(target))?;
    }
    transaction.commit().map_err(migrate_error(LATEST_VERSION))
}

/// Whether a write-ahead log (or a rollback journal) is beside `path`: a
/// writer is active, or one was killed before it could checkpoint.
fn has_log(path: &Path) -> bool {
    ["-wal", "-journal"].iter().any(|suffix| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        Path::new(&name).exists()
    })
}

/// A read-only connection to `path` through a `file:` URI: `mode=ro`, and
/// `immutable=1` unless a log is beside the file.
fn open_read_only_connection(path: &Path, live: bool) -> rusqlite::Result<Connection> {
    let uri = format!(
        "file:{}?mode=ro{}",
        uri_path(path),
        if live { "" } else { "&immutable=1" }
    );
    let connection = Connection::open_with_flags(
        uri,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
            | rusqlite::OpenFlags::SQLITE_OPEN_URI
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    Ok(connection)
}

/// A path as the path part of a `file:` URI (RFC 3986): bytes other than
/// unreserved characters and `/` percent-encoded, so `?`, `#` and `%` in a
/// file name stay part of the name.
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut encoded = String::new();
    for &byte in path.as_os_str().as_bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

/// Runs `attempt` again, every 5 ms for up to `BUSY_TIMEOUT`, while it
/// fails with a lock conflict (`busy`); then its outcome, whatever it is.
fn while_busy<T, E>(
    busy: impl Fn(&E) -> bool,
    mut attempt: impl FnMut() -> Result<T, E>,
) -> Result<T, E> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    loop {
        match attempt() {
            Err(error) if busy(&error) && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            outcome => return outcome,
        }
    }
}

/// A lock conflict worth waiting out.
fn is_busy(error: &StoreError) -> bool {
    match error {
        StoreError::Open { source, .. } | StoreError::Migrate { source, .. } => {
            is_busy_code(source)
        }
        _ => false,
    }
}

/// SQLite's answer to a lock conflict.
fn is_busy_code(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}
