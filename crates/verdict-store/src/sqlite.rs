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
//! Must not know about experiments beyond storing them, nor read clocks.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, ffi, params};
use serde_json::Value;
use verdict_model::{Cell, Environment, RunId, RunStatus, Sample, SampleDetails};

use crate::StoreError;
use crate::builtin;
use crate::filters::Dialect;
use crate::migrations::{APPLICATION_ID, LATEST_VERSION, MIGRATIONS};
use crate::rows::{RawBisect, RawRun, RawSample};
use crate::store::{
    BisectId, BisectRecord, BisectSummary, DetailCounts, NewBisect, NewRun, RunRecord, RunSummary,
    RunTimes, SelectedValue, Selection, Store,
};

/// Page size of new databases (set where a new file is first configured).
const PAGE_SIZE: i64 = 2048;

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
            let deadline = Instant::now() + BUSY_TIMEOUT;
            let version = loop {
                match identify(&connection, path) {
                    Err(error)
                        if matches!(
                            error.sqlite_error_code(),
                            Some(
                                rusqlite::ErrorCode::DatabaseBusy
                                    | rusqlite::ErrorCode::DatabaseLocked
                            )
                        ) && Instant::now() < deadline =>
                    {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(error) => return Err(open_error(error)),
                    Ok(identified) => break identified?,
                }
            };
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

    /// The runs measured on `host`, oldest first (the database filters).
    pub fn list_runs_on_host(&self, host: &str) -> Result<Vec<RunSummary>, StoreError> {
        Ok(self
            .query_runs(
                "WHERE host = ?1 ORDER BY id",
                Some(SqlValue::Text(host.to_string())),
            )?
            .into_iter()
            .map(RunSummary::from)
            .collect())
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
        let deadline = Instant::now() + BUSY_TIMEOUT;
        loop {
            match prepare(&connection, &path) {
                Err(error) if is_busy(&error) && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(error) => return Err(error),
                Ok(()) => {
                    return Ok(SqliteStore {
                        connection,
                        path,
                        known_cells: RefCell::default(),
                        read_only: None,
                    });
                }
            }
        }
    }

    pub(crate) fn sql_error(
        &self,
        operation: &str,
    ) -> impl FnOnce(rusqlite::Error) -> StoreError + '_ {
        let operation = operation.to_string();
        move |source| StoreError::Sql {
            path: self.path.clone(),
            operation,
            source,
        }
    }

    pub(crate) fn corrupt(&self, what: &str, reason: impl std::fmt::Display) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            what: what.to_string(),
            reason: reason.to_string(),
        }
    }

    pub(crate) fn invalid(&self, what: impl Into<String>, reason: impl Into<String>) -> StoreError {
        StoreError::InvalidValue {
            path: self.path.clone(),
            what: what.into(),
            reason: reason.into(),
        }
    }

    /// An environment as JSON that reads back: serde_json writes a NaN
    /// (say, an unparsable load average) as `null`, which would make the run
    /// unreadable later, so it is refused now.
    pub(crate) fn environment_json(
        &self,
        what: &str,
        environment: &Environment,
    ) -> Result<String, StoreError> {
        let text = to_json(environment);
        match serde_json::from_str::<Environment>(&text) {
            Ok(read_back) if read_back == *environment => Ok(text),
            _ => Err(self.invalid(
                what,
                format!("its environment has a value that is not a number: {text}"),
            )),
        }
    }

    fn unknown_run(&self, run: RunId) -> StoreError {
        StoreError::UnknownRun {
            path: self.path.clone(),
            run,
        }
    }

    fn unknown_bisect(&self, bisect: BisectId) -> StoreError {
        StoreError::UnknownBisect {
            path: self.path.clone(),
            bisect,
        }
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction: the write lock is
    /// taken up front so a concurrent writer makes us wait (busy timeout)
    /// instead of failing on an upgraded read snapshot.
    /// Runs `body` in one `BEGIN IMMEDIATE` transaction and commits it; any
    /// error (or a panic) rolls it back. BEGIN and COMMIT are cached
    /// prepared statements: parsing them per sample costs more than the
    /// sample's INSERT.
    fn write<T>(
        &self,
        operation: &str,
        body: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.execute_cached("BEGIN IMMEDIATE")
            .map_err(self.sql_error(operation))?;
        let mut open = OpenTransaction {
            connection: &self.connection,
            committed: false,
        };
        let value = body(&self.connection)?;
        self.execute_cached("COMMIT")
            .map_err(self.sql_error(operation))?;
        open.committed = true;
        Ok(value)
    }

    fn execute_cached(&self, sql: &str) -> rusqlite::Result<usize> {
        self.connection
            .prepare_cached(sql)
            .and_then(|mut statement| statement.execute([]))
    }

    pub(crate) fn run_exists(&self, run: RunId) -> Result<(), StoreError> {
        let found = self
            .connection
            .prepare_cached("SELECT 1 FROM runs WHERE id = ?1")
            .and_then(|mut statement| statement.exists([run.0]))
            .map_err(self.sql_error("look up a run"))?;
        if found {
            Ok(())
        } else {
            Err(self.unknown_run(run))
        }
    }

    fn bisect_exists(&self, bisect: BisectId) -> Result<(), StoreError> {
        let found = self
            .connection
            .prepare_cached("SELECT 1 FROM bisects WHERE id = ?1")
            .and_then(|mut statement| statement.exists([bisect.0]))
            .map_err(self.sql_error("look up a bisection"))?;
        if found {
            Ok(())
        } else {
            Err(self.unknown_bisect(bisect))
        }
    }

    fn query_runs(
        &self,
        filter: &str,
        parameter: Option<SqlValue>,
    ) -> Result<Vec<RunRecord>, StoreError> {
        let sql = format!(
            "SELECT id, name, kind, status, experiment_text, experiment_sha256, \
                    experiment_json, tool_version, seed, host, planned, started_at_ms, \
                    finished_at_ms, environment_start, environment_end, command_line, \
                    (SELECT COUNT(*) FROM samples WHERE run_id = runs.id), \
                    (SELECT COUNT(*) FROM samples WHERE run_id = runs.id AND failed) \
             FROM runs {filter}"
        );
        let mut statement = self
            .connection
            .prepare_cached(&sql)
            .map_err(self.sql_error("read runs"))?;
        let parameters: Vec<SqlValue> = parameter.into_iter().collect();
        let raw_runs = statement
            .query_map(rusqlite::params_from_iter(parameters), |row| {
                RawRun::read(row)
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(self.sql_error("read runs"))?;
        raw_runs
            .into_iter()
            .map(|raw| raw.record(&|what, reason| self.corrupt(what, reason)))
            .collect()
    }

    fn query_bisects(
        &self,
        filter: &str,
        parameter: Option<i64>,
    ) -> Result<Vec<BisectRecord>, StoreError> {
        let sql = format!(
            "SELECT id, repo, good, bad, experiment_text, config_json, status, \
                    started_at_ms, finished_at_ms, result_json, \
                    (SELECT COUNT(*) FROM bisect_events WHERE bisect_id = bisects.id) \
             FROM bisects {filter}"
        );
        let mut statement = self
            .connection
            .prepare_cached(&sql)
            .map_err(self.sql_error("read bisections"))?;
        let parameters: Vec<SqlValue> = parameter.into_iter().map(SqlValue::Integer).collect();
        let raw_bisects = statement
            .query_map(rusqlite::params_from_iter(parameters), |row| {
                RawBisect::read(row)
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(self.sql_error("read bisections"))?;
        raw_bisects
            .into_iter()
            .map(|raw| raw.record(&|what, reason| self.corrupt(what, reason)))
            .collect()
    }

    /// Records a run's cell the first time one of its samples is stored;
    /// afterwards checks that the same index still means the same levels.
    fn store_cell(
        &self,
        transaction: &Connection,
        run: RunId,
        cell_index: i64,
        cell: &Cell,
        what: &str,
    ) -> Result<(), StoreError> {
        if let Some(known) = self.known_cells.borrow().get(&(run.0, cell_index)) {
            return if known == cell {
                Ok(())
            } else {
                Err(self.invalid(
                    what,
                    format!(
                        "cell {cell_index} is stored with levels {}, not {}",
                        to_json(&known.levels),
                        to_json(&cell.levels)
                    ),
                ))
            };
        }
        let operation = format!("store {what}");
        let levels_json = to_json(&cell.levels);
        let stored: Option<String> = transaction
            .prepare_cached("SELECT levels_json FROM run_cells WHERE run_id = ?1 AND cell = ?2")
            .and_then(|mut statement| {
                statement
                    .query_row(params![run.0, cell_index], |row| row.get(0))
                    .optional()
            })
            .map_err(self.sql_error(&operation))?;
        match stored {
            Some(stored) if stored == levels_json => return Ok(()),
            Some(stored) => {
                return Err(self.invalid(
                    what,
                    format!("cell {cell_index} is stored with levels {stored}, not {levels_json}"),
                ));
            }
            None => {}
        }
        transaction
            .prepare_cached("INSERT INTO run_cells (run_id, cell, levels_json) VALUES (?1, ?2, ?3)")
            .and_then(|mut statement| statement.execute(params![run.0, cell_index, levels_json]))
            .map_err(|error| match constraint(&error) {
                Some(ffi::SQLITE_CONSTRAINT_FOREIGNKEY) => self.unknown_run(run),
                _ => self.sql_error(&operation)(error),
            })?;
        let mut insert_level = transaction
            .prepare_cached(
                "INSERT INTO cell_levels (run_id, cell, factor, level) VALUES (?1, ?2, ?3, ?4)",
            )
            .map_err(self.sql_error(&operation))?;
        for (factor, level) in &cell.levels {
            insert_level
                .execute(params![run.0, cell_index, factor, level])
                .map_err(|error| match constraint(&error) {
                    Some(ffi::SQLITE_CONSTRAINT_PRIMARYKEY) => {
                        self.invalid(what, format!("factor `{factor}` twice in its cell"))
                    }
                    _ => self.sql_error(&operation)(error),
                })?;
        }
        Ok(())
    }

    fn update_run(
        &self,
        run: RunId,
        operation: &str,
        sql: &str,
        parameters: &[&dyn rusqlite::ToSql],
    ) -> Result<(), StoreError> {
        let changed = self
            .connection
            .prepare_cached(sql)
            .and_then(|mut statement| statement.execute(parameters))
            .map_err(self.sql_error(operation))?;
        if changed == 0 {
            return Err(self.unknown_run(run));
        }
        Ok(())
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

impl Store for SqliteStore {
    fn create_run(&self, run: &NewRun) -> Result<RunId, StoreError> {
        let planned = i64::try_from(run.planned).map_err(|_| {
            self.invalid("a run", format!("planned count {} too large", run.planned))
        })?;
        let environment_start = self.environment_json("a run", &run.environment_start)?;
        let command_line = to_json(&crate::location::redact_arguments(&run.command_line));
        let uuid = crate::identity::new_run_uuid();
        self.write("create a run", |transaction| {
            transaction
                .prepare_cached(
                    "INSERT INTO runs (name, kind, status, experiment_text, experiment_sha256, \
                        experiment_json, tool_version, seed, host, planned, started_at_ms, \
                        environment_start, command_line, uuid, bisect_id) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                )
                .and_then(|mut statement| {
                    statement.execute(params![
                        run.name,
                        run.kind,
                        RunStatus::Running.as_str(),
                        run.experiment_text,
                        run.experiment_sha256,
                        run.experiment_json,
                        run.tool_version,
                        run.seed as i64,
                        run.host,
                        planned,
                        run.started_at_ms,
                        environment_start,
                        command_line,
                        uuid,
                        run.bisect.map(|bisect| bisect.0),
                    ])
                })
                .map_err(self.sql_error("create a run"))?;
            Ok(RunId(transaction.last_insert_rowid()))
        })
    }

    fn finish_run(
        &self,
        run: RunId,
        status: RunStatus,
        finished_at_ms: i64,
        environment_end: Option<&Environment>,
    ) -> Result<(), StoreError> {
        let environment_end = environment_end
            .map(|environment| self.environment_json(&format!("run {run}"), environment))
            .transpose()?;
        self.update_run(
            run,
            &format!("finish run {run}"),
            "UPDATE runs SET status = ?2, finished_at_ms = ?3, environment_end = ?4 \
             WHERE id = ?1",
            &[&run.0, &status.as_str(), &finished_at_ms, &environment_end],
        )
    }

    fn set_status(&self, run: RunId, status: RunStatus) -> Result<(), StoreError> {
        self.update_run(
            run,
            &format!("set the status of run {run}"),
            "UPDATE runs SET status = ?2, \
                finished_at_ms = CASE WHEN ?2 = 'running' THEN NULL ELSE finished_at_ms END \
             WHERE id = ?1",
            &[&run.0, &status.as_str()],
        )
    }

    fn set_planned(&self, run: RunId, planned: u64) -> Result<(), StoreError> {
        let planned = i64::try_from(planned).map_err(|_| {
            self.invalid(
                format!("run {run}"),
                format!("planned count {planned} too large"),
            )
        })?;
        self.update_run(
            run,
            &format!("set the planned count of run {run}"),
            "UPDATE runs SET planned = ?2 WHERE id = ?1",
            &[&run.0, &planned],
        )
    }

    fn list_runs(&self) -> Result<Vec<RunSummary>, StoreError> {
        Ok(self
            .query_runs("ORDER BY id", None)?
            .into_iter()
            .map(RunSummary::from)
            .collect())
    }

    fn run(&self, run: RunId) -> Result<RunRecord, StoreError> {
        self.query_runs("WHERE id = ?1", Some(SqlValue::Integer(run.0)))?
            .pop()
            .ok_or_else(|| self.unknown_run(run))
    }

    fn latest_run(&self) -> Result<Option<RunRecord>, StoreError> {
        Ok(self.query_runs("ORDER BY id DESC LIMIT 1", None)?.pop())
    }

    fn append_sample(&self, run: RunId, sample: &Sample, cell: &Cell) -> Result<(), StoreError> {
        self.append_sample_with(run, sample, cell, None)
    }

    fn append_sample_details(
        &self,
        run: RunId,
        sample: &Sample,
        cell: &Cell,
        details: &SampleDetails,
    ) -> Result<(), StoreError> {
        self.append_sample_with(run, sample, cell, Some(details))
    }

    fn append_details(
        &self,
        run: RunId,
        sequence: u32,
        details: &SampleDetails,
    ) -> Result<(), StoreError> {
        let operation = format!("store what sample {sequence} of run {run} captured");
        self.write(&operation, |transaction| {
            self.insert_details(transaction, run, sequence, details, &operation)
        })
    }

    fn sample_details(&self, run: RunId) -> Result<BTreeMap<u32, SampleDetails>, StoreError> {
        self.read_details(run)
    }

    fn detail_counts(&self, run: RunId) -> Result<DetailCounts, StoreError> {
        self.count_details(run)
    }

    fn samples(&self, run: RunId) -> Result<Vec<Sample>, StoreError> {
        self.run_exists(run)?;
        let operation = format!("read the samples of run {run}");
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT s.sequence, s.cell, s.block, s.warmup, s.started_at_ms, s.wall_seconds, \
                    s.user_seconds, s.sys_seconds, s.max_rss_kib, s.exit_code, s.signal, \
                    s.timed_out, s.failed, f.reason, f.output_tail, s.builtin_metrics \
                 FROM samples s LEFT JOIN sample_failures f \
                    ON f.run_id = s.run_id AND f.sequence = s.sequence \
                 WHERE s.run_id = ?1 ORDER BY s.sequence",
            )
            .map_err(self.sql_error(&operation))?;
        let rows = statement
            .query_map([run.0], |row| RawSample::read(row))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(self.sql_error(&operation))?;
        let mut samples = Vec::with_capacity(rows.len());
        let mut index_by_sequence = HashMap::with_capacity(rows.len());
        for raw in rows {
            let sample = raw.sample(run, &|what, reason| self.corrupt(what, reason))?;
            index_by_sequence.insert(sample.sequence, samples.len());
            samples.push(sample);
        }
        let mut statement = self
            .connection
            .prepare_cached("SELECT sequence, name, value FROM sample_metrics WHERE run_id = ?1")
            .map_err(self.sql_error(&operation))?;
        let metrics = statement
            .query_map([run.0], |row| {
                Ok((
                    row.get::<_, u32>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, f64>(2)?,
                ))
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(self.sql_error(&operation))?;
        for (sequence, name, value) in metrics {
            if let Some(&index) = index_by_sequence.get(&sequence) {
                samples[index].metrics.insert(name, value);
            }
        }
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT sequence, leftovers_json, missing_json FROM sample_notes WHERE run_id = ?1",
            )
            .map_err(self.sql_error(&operation))?;
        let notes = statement
            .query_map([run.0], |row| {
                Ok((
                    row.get::<_, u32>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                ))
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(self.sql_error(&operation))?;
        for (sequence, leftovers, missing) in notes {
            let what = format!("notes of sample {sequence} of run {run}");
            if let Some(&index) = index_by_sequence.get(&sequence) {
                samples[index].leftovers =
                    serde_json::from_str(&leftovers).map_err(|error| self.corrupt(&what, error))?;
                samples[index].missing =
                    serde_json::from_str(&missing).map_err(|error| self.corrupt(&what, error))?;
            }
        }
        Ok(samples)
    }

    fn select_samples(&self, selection: &Selection) -> Result<Vec<SelectedValue>, StoreError> {
        if let Some(run) = selection.run {
            self.run_exists(run)?;
        }
        // A built-in metric may be a flag on the sample (schema v3) rather
        // than a `sample_metrics` row.
        let value = builtin::value_sql(&selection.metric);
        let mut sql = format!(
            "SELECT s.run_id, s.sequence, {value}, s.started_at_ms, c.levels_json \
             FROM samples s \
             LEFT JOIN sample_metrics m \
                ON m.run_id = s.run_id AND m.sequence = s.sequence AND m.name = ? \
             JOIN run_cells c ON c.run_id = s.run_id AND c.cell = s.cell \
             WHERE s.warmup = 0 AND s.failed = 0 AND ({value}) IS NOT NULL",
        );
        let mut parameters = vec![SqlValue::Text(selection.metric.clone())];
        if let Some(run) = selection.run {
            sql.push_str(" AND s.run_id = ?");
            parameters.push(SqlValue::Integer(run.0));
        }
        for (factor, level) in &selection.levels {
            let (filter, values) = crate::filters::level_filter(Dialect::Sqlite, factor, level);
            sql.push_str(&filter);
            parameters.extend(values.into_iter().map(SqlValue::Text));
        }
        sql.push_str(" ORDER BY s.run_id, s.sequence");
        let operation = format!("select metric `{}`", selection.metric);
        let mut statement = self
            .connection
            .prepare(&sql)
            .map_err(self.sql_error(&operation))?;
        let rows = statement
            .query_map(rusqlite::params_from_iter(parameters), |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, u32>(1)?,
                    row.get::<_, f64>(2)?,
                    row.get::<_, i64>(3)?,
                    row.get::<_, String>(4)?,
                ))
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(self.sql_error(&operation))?;
        rows.into_iter()
            .map(|(run, sequence, value, started_at_ms, levels_json)| {
                let levels = serde_json::from_str(&levels_json).map_err(|error| {
                    self.corrupt(&format!("sample {sequence} of run {run}"), error)
                })?;
                Ok(SelectedValue {
                    run: RunId(run),
                    sequence,
                    value,
                    started_at_ms,
                    levels,
                })
            })
            .collect()
    }

    fn cells(&self, run: RunId) -> Result<Vec<(usize, Cell)>, StoreError> {
        self.run_exists(run)?;
        let operation = format!("read the cells of run {run}");
        let rows = self
            .connection
            .prepare_cached(
                "SELECT cell, levels_json FROM run_cells WHERE run_id = ?1 ORDER BY cell",
            )
            .and_then(|mut statement| {
                statement
                    .query_map([run.0], |row| {
                        Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
                    })?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(self.sql_error(&operation))?;
        rows.into_iter()
            .map(|(index, levels_json)| {
                let what = format!("cell {index} of run {run}");
                let index =
                    usize::try_from(index).map_err(|_| self.corrupt(&what, "negative index"))?;
                let levels = serde_json::from_str(&levels_json)
                    .map_err(|error| self.corrupt(&what, error))?;
                Ok((index, Cell { levels }))
            })
            .collect()
    }

    fn run_times(&self) -> Result<Vec<RunTimes>, StoreError> {
        self.connection
            .prepare_cached(
                "SELECT r.id, r.host, r.started_at_ms, r.finished_at_ms, s.first, s.last \
                 FROM runs r LEFT JOIN ( \
                    SELECT run_id, MIN(started_at_ms) AS first, \
                        MAX(started_at_ms + CAST(ROUND(wall_seconds * 1000) AS INTEGER)) AS last \
                    FROM samples GROUP BY run_id) s ON s.run_id = r.id \
                 ORDER BY r.id",
            )
            .and_then(|mut statement| {
                statement
                    .query_map([], |row| {
                        Ok(RunTimes {
                            run: RunId(row.get(0)?),
                            host: row.get(1)?,
                            started_at_ms: row.get(2)?,
                            finished_at_ms: row.get(3)?,
                            first_iteration_ms: row.get(4)?,
                            last_iteration_end_ms: row.get(5)?,
                        })
                    })?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(self.sql_error("read when runs measured"))
    }

    fn iteration_spans(&self, run: RunId) -> Result<Vec<(i64, i64)>, StoreError> {
        self.run_exists(run)?;
        self.connection
            .prepare_cached(
                "SELECT started_at_ms, \
                    started_at_ms + CAST(ROUND(wall_seconds * 1000) AS INTEGER) \
                 FROM samples WHERE run_id = ?1 ORDER BY sequence",
            )
            .and_then(|mut statement| {
                statement
                    .query_map([run.0], |row| {
                        let (start, end): (i64, i64) = (row.get(0)?, row.get(1)?);
                        Ok((start, end.max(start)))
                    })?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(self.sql_error(&format!("read when run {run} measured")))
    }

    fn create_boot(&self, run: RunId, boot: &crate::NewBoot) -> Result<u32, StoreError> {
        self.write(&format!("record a boot of run {run}"), |_| {
            self.create_boot_row(run, boot)
        })
    }

    fn update_boot(&self, run: RunId, row: &crate::BootRow) -> Result<(), StoreError> {
        self.write(&format!("update boot {} of run {run}", row.id), |_| {
            self.update_boot_row(run, row)
        })
    }

    fn boots(&self, run: RunId) -> Result<Vec<crate::BootRow>, StoreError> {
        self.boot_rows(run)
    }

    crate::adaptive::store_methods!();

    fn put_annotation(&self, run: RunId, key: &str, value: &Value) -> Result<(), StoreError> {
        let operation = format!("store annotation `{key}` of run {run}");
        self.write(&operation, |transaction| {
            transaction
                .prepare_cached(
                    "INSERT INTO run_annotations (run_id, key, value_json) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (run_id, key) DO UPDATE SET value_json = excluded.value_json",
                )
                .and_then(|mut statement| statement.execute(params![run.0, key, to_json(value)]))
                .map_err(|error| match constraint(&error) {
                    Some(ffi::SQLITE_CONSTRAINT_FOREIGNKEY) => self.unknown_run(run),
                    _ => self.sql_error(&operation)(error),
                })?;
            Ok(())
        })
    }

    fn put_kernel_config(&self, sha256: &str, source: &str, text: &str) -> Result<(), StoreError> {
        let operation = format!("store kernel config {sha256}");
        let exists = self
            .connection
            .prepare_cached("SELECT 1 FROM kernel_configs WHERE sha256 = ?1")
            .and_then(|mut statement| statement.exists([sha256]))
            .map_err(self.sql_error(&operation))?;
        if exists {
            return Ok(());
        }
        self.connection
            .prepare_cached(
                "INSERT OR IGNORE INTO kernel_configs (sha256, source, text) VALUES (?1, ?2, ?3)",
            )
            .and_then(|mut statement| statement.execute(params![sha256, source, text]))
            .map_err(self.sql_error(&operation))?;
        Ok(())
    }

    fn kernel_config(&self, sha256: &str) -> Result<Option<(String, String)>, StoreError> {
        self.connection
            .prepare_cached("SELECT source, text FROM kernel_configs WHERE sha256 = ?1")
            .and_then(|mut statement| {
                statement
                    .query_row([sha256], |row| Ok((row.get(0)?, row.get(1)?)))
                    .optional()
            })
            .map_err(self.sql_error(&format!("read kernel config {sha256}")))
    }

    fn annotations(&self, run: RunId) -> Result<BTreeMap<String, Value>, StoreError> {
        self.run_exists(run)?;
        let operation = format!("read the annotations of run {run}");
        let rows = self
            .connection
            .prepare_cached("SELECT key, value_json FROM run_annotations WHERE run_id = ?1")
            .and_then(|mut statement| {
                statement
                    .query_map([run.0], |row| {
                        Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
                    })?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(self.sql_error(&operation))?;
        rows.into_iter()
            .map(|(key, text)| {
                let value = serde_json::from_str(&text).map_err(|error| {
                    self.corrupt(&format!("annotation `{key}` of run {run}"), error)
                })?;
                Ok((key, value))
            })
            .collect()
    }

    fn create_bisect(&self, bisect: &NewBisect) -> Result<BisectId, StoreError> {
        self.write("create a bisection", |transaction| {
            transaction
                .prepare_cached(
                    "INSERT INTO bisects (repo, good, bad, experiment_text, config_json, \
                        status, started_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .and_then(|mut statement| {
                    statement.execute(params![
                        bisect.repo,
                        bisect.good,
                        bisect.bad,
                        bisect.experiment_text,
                        to_json(&bisect.config),
                        RunStatus::Running.as_str(),
                        bisect.started_at_ms,
                    ])
                })
                .map_err(self.sql_error("create a bisection"))?;
            Ok(BisectId(transaction.last_insert_rowid()))
        })
    }

    fn append_bisect_event(
        &self,
        bisect: BisectId,
        sequence: u32,
        event: &Value,
    ) -> Result<(), StoreError> {
        let operation = format!("store event {sequence} of bisection {bisect}");
        self.write(&operation, |transaction| {
            transaction
                .prepare_cached(
                    "INSERT INTO bisect_events (bisect_id, sequence, event_json) \
                     VALUES (?1, ?2, ?3)",
                )
                .and_then(|mut statement| {
                    statement.execute(params![bisect.0, sequence, to_json(event)])
                })
                .map_err(|error| match constraint(&error) {
                    Some(ffi::SQLITE_CONSTRAINT_PRIMARYKEY) => StoreError::DuplicateBisectEvent {
                        path: self.path.clone(),
                        bisect,
                        sequence,
                    },
                    Some(ffi::SQLITE_CONSTRAINT_FOREIGNKEY) => self.unknown_bisect(bisect),
                    _ => self.sql_error(&operation)(error),
                })?;
            Ok(())
        })
    }

    fn bisect_runs(&self, bisect: BisectId) -> Result<Vec<RunSummary>, StoreError> {
        self.bisect_exists(bisect)?;
        Ok(self
            .query_runs(
                "WHERE bisect_id = ?1 ORDER BY id",
                Some(SqlValue::Integer(bisect.0)),
            )?
            .into_iter()
            .map(RunSummary::from)
            .collect())
    }

    fn bisect_events(&self, bisect: BisectId) -> Result<Vec<(u32, Value)>, StoreError> {
        self.bisect_exists(bisect)?;
        let operation = format!("read the events of bisection {bisect}");
        let rows = self
            .connection
            .prepare_cached(
                "SELECT sequence, event_json FROM bisect_events WHERE bisect_id = ?1 \
                 ORDER BY sequence",
            )
            .and_then(|mut statement| {
                statement
                    .query_map([bisect.0], |row| {
                        Ok((row.get::<_, u32>(0)?, row.get::<_, String>(1)?))
                    })?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(self.sql_error(&operation))?;
        rows.into_iter()
            .map(|(sequence, text)| {
                let value = serde_json::from_str(&text).map_err(|error| {
                    self.corrupt(&format!("event {sequence} of bisection {bisect}"), error)
                })?;
                Ok((sequence, value))
            })
            .collect()
    }

    fn finish_bisect(
        &self,
        bisect: BisectId,
        status: RunStatus,
        finished_at_ms: i64,
        result: &Value,
    ) -> Result<(), StoreError> {
        let changed = self
            .connection
            .prepare_cached(
                "UPDATE bisects SET status = ?2, finished_at_ms = ?3, result_json = ?4 \
                 WHERE id = ?1",
            )
            .and_then(|mut statement| {
                statement.execute(params![
                    bisect.0,
                    status.as_str(),
                    finished_at_ms,
                    to_json(result)
                ])
            })
            .map_err(self.sql_error(&format!("finish bisection {bisect}")))?;
        if changed == 0 {
            return Err(self.unknown_bisect(bisect));
        }
        Ok(())
    }

    fn list_bisects(&self) -> Result<Vec<BisectSummary>, StoreError> {
        Ok(self
            .query_bisects("ORDER BY id", None)?
            .into_iter()
            .map(|record| BisectSummary {
                id: record.id,
                repo: record.repo,
                good: record.good,
                bad: record.bad,
                status: record.status,
                events: record.events,
                started_at_ms: record.started_at_ms,
                finished_at_ms: record.finished_at_ms,
            })
            .collect())
    }

    fn bisect(&self, bisect: BisectId) -> Result<BisectRecord, StoreError> {
        self.query_bisects("WHERE id = ?1", Some(bisect.0))?
            .pop()
            .ok_or_else(|| self.unknown_bisect(bisect))
    }

    fn latest_bisect(&self) -> Result<Option<BisectRecord>, StoreError> {
        Ok(self.query_bisects("ORDER BY id DESC LIMIT 1", None)?.pop())
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
    } else if version > LATEST_VERSION {
        Err(StoreError::NewerSchema {
            path,
            found: version,
            known: LATEST_VERSION,
        })
    } else {
        Ok(version)
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
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        let target = index as i64 + 1;
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

/// A lock conflict worth waiting out.
fn is_busy(error: &StoreError) -> bool {
    let source = match error {
        StoreError::Open { source, .. } | StoreError::Migrate { source, .. } => source,
        _ => return false,
    };
    matches!(
        source.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// The extended result code of a constraint violation.
fn constraint(error: &rusqlite::Error) -> Option<i32> {
    match error {
        rusqlite::Error::SqliteFailure(failure, _)
            if failure.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            Some(failure.extended_code)
        }
        _ => None,
    }
}

/// Serializes a value the store itself controls; these types cannot fail to
/// serialize (no maps with non-string keys, no failing `Serialize`).
pub(crate) fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("plain data serializes to JSON")
}

impl SqliteStore {
    /// One iteration, and with `details` what it captured, in one
    /// transaction.
    fn append_sample_with(
        &self,
        run: RunId,
        sample: &Sample,
        cell: &Cell,
        details: Option<&SampleDetails>,
    ) -> Result<(), StoreError> {
        let what = || format!("sample {} of run {run}", sample.sequence);
        for (name, value) in [
            ("wall_seconds", sample.wall_seconds),
            ("user_seconds", sample.user_seconds),
            ("sys_seconds", sample.sys_seconds),
        ]
        .into_iter()
        .chain(
            sample
                .metrics
                .iter()
                .map(|(name, value)| (name.as_str(), *value)),
        ) {
            if !value.is_finite() {
                return Err(self.invalid(what(), format!("`{name}` is {value}, not a number")));
            }
        }
        let max_rss_kib = i64::try_from(sample.max_rss_kib).map_err(|_| {
            self.invalid(
                what(),
                format!("max RSS {} KiB too large", sample.max_rss_kib),
            )
        })?;
        let cell_index = i64::try_from(sample.cell)
            .map_err(|_| self.invalid(what(), format!("cell index {} too large", sample.cell)))?;
        // Built-in metrics equal to the sample's own column are a flag, not
        // a row (schema v3); bitwise equality keeps this lossless.
        let builtin_metrics = builtin::flags(sample);
        let operation = format!("store {}", what());
        // With the cell already checked, no failure and every metric a
        // flag, the body is one INSERT, atomic on its own: no BEGIN/COMMIT.
        let one_statement = sample.failure.is_none()
            && details.is_none_or(SampleDetails::is_empty)
            && sample.leftovers.is_empty()
            && sample.missing.is_empty()
            && self.known_cells.borrow().get(&(run.0, cell_index)) == Some(cell)
            && sample
                .metrics
                .keys()
                .all(|name| builtin::is_flagged(name, builtin_metrics));
        let body = |transaction: &Connection| {
            self.store_cell(transaction, run, cell_index, cell, &what())?;
            let inserted = transaction
                .prepare_cached(
                    "INSERT INTO samples (run_id, sequence, cell, block, warmup, failed, \
                        started_at_ms, wall_seconds, user_seconds, sys_seconds, max_rss_kib, \
                        exit_code, signal, timed_out, builtin_metrics) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                )
                .and_then(|mut statement| {
                    statement.execute(params![
                        run.0,
                        sample.sequence,
                        cell_index,
                        sample.block,
                        sample.warmup,
                        sample.failure.is_some(),
                        sample.started_at_ms,
                        sample.wall_seconds,
                        sample.user_seconds,
                        sample.sys_seconds,
                        max_rss_kib,
                        sample.exit_code,
                        sample.signal,
                        sample.timed_out,
                        builtin_metrics,
                    ])
                });
            match inserted {
                Ok(_) => {}
                Err(error) if constraint(&error) == Some(ffi::SQLITE_CONSTRAINT_PRIMARYKEY) => {
                    return Err(StoreError::DuplicateSample {
                        path: self.path.clone(),
                        run,
                        sequence: sample.sequence,
                    });
                }
                Err(error) => return Err(self.sql_error(&operation)(error)),
            }
            if let Some(failure) = &sample.failure {
                transaction
                    .prepare_cached(
                        "INSERT INTO sample_failures (run_id, sequence, reason, output_tail) \
                         VALUES (?1, ?2, ?3, ?4)",
                    )
                    .and_then(|mut statement| {
                        statement.execute(params![
                            run.0,
                            sample.sequence,
                            failure.reason,
                            failure.output_tail
                        ])
                    })
                    .map_err(self.sql_error(&operation))?;
            }
            if !sample.leftovers.is_empty() || !sample.missing.is_empty() {
                transaction
                    .prepare_cached(
                        "INSERT INTO sample_notes (run_id, sequence, leftovers_json, missing_json) \
                         VALUES (?1, ?2, ?3, ?4)",
                    )
                    .and_then(|mut statement| {
                        statement.execute(params![
                            run.0,
                            sample.sequence,
                            to_json(&sample.leftovers),
                            to_json(&sample.missing)
                        ])
                    })
                    .map_err(self.sql_error(&operation))?;
            }
            let mut insert_metric = transaction
                .prepare_cached(
                    "INSERT INTO sample_metrics (run_id, sequence, name, value) \
                     VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(self.sql_error(&operation))?;
            for (name, value) in &sample.metrics {
                if builtin::is_flagged(name, builtin_metrics) {
                    continue;
                }
                insert_metric
                    .execute(params![run.0, sample.sequence, name, value])
                    .map_err(self.sql_error(&operation))?;
            }
            if let Some(details) = details {
                self.insert_details(transaction, run, sample.sequence, details, &operation)?;
            }
            Ok(())
        };
        if one_statement {
            body(&self.connection)?;
        } else {
            self.write(&operation, body)?;
        }
        // Only after the commit: a rolled-back transaction may have taken
        // the cell's rows with it.
        self.known_cells
            .borrow_mut()
            .entry((run.0, cell_index))
            .or_insert_with(|| cell.clone());
        Ok(())
    }
}
