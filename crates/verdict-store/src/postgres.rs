//! `PostgresStore`: the `Store` on a PostgreSQL database (the sync
//! `postgres` crate), for a lab's shared store. Same tables and numbered
//! migrations as SQLite (`migrations.rs`, PostgreSQL dialect); the schema
//! version is in `verdict_schema`, migrations run under an advisory lock
//! so that processes opening a fresh database at once migrate it once.
//!
//! Every value reaches the server as a bound parameter of a prepared
//! statement (cached per connection); SQL text is only ever assembled from
//! constants. The URL's password is used to connect and is then forgotten:
//! messages name the database by its URL with the password redacted.
//!
//! Durability: every write method is one transaction, committed before it
//! returns (the server's own `synchronous_commit` decides when that is on
//! disk). Must not know about experiments beyond storing them, read clocks,
//! or print.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, Row, Statement};
use serde_json::Value;
use verdict_model::{Cell, Environment, RunId, RunStatus, Sample, SampleDetails};

use crate::StoreError;
use crate::builtin;
use crate::location::{postgres_config, redact_url};
use crate::migrations::{APPLICATION_ID, LATEST_VERSION, MIGRATIONS, POSTGRES_BOOTSTRAP};
use crate::rows::{RawBisect, RawRun, RawSample};
use crate::sqlite::to_json;
use crate::store::{
    BisectId, BisectRecord, BisectSummary, DetailCounts, NewBisect, NewRun, RunRecord, RunSummary,
    RunTimes, SelectedValue, Selection, Store,
};

type Parameters<'a> = &'a [&'a (dyn ToSql + Sync)];

/// A verdict database in PostgreSQL. One connection; not `Sync`: one store
/// per thread.
pub struct PostgresStore {
    client: RefCell<Client>,
    /// The URL, password redacted: what messages name.
    location: String,
    statements: RefCell<HashMap<String, Statement>>,
    /// Cells of runs this connection stored or checked (as in SQLite).
    known_cells: RefCell<HashMap<(i64, i64), Cell>>,
    read_only: bool,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("PostgresStore")
            .field("location", &self.location)
            .field("read_only", &self.read_only)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to `url` (settings missing from it completed from the
    /// environment, see `location::postgres_config`), creates verdict's
    /// tables in an empty database and migrates an older schema forward.
    /// A database with a newer schema is refused untouched.
    pub fn open(url: &str) -> Result<PostgresStore, StoreError> {
        let store = Self::connect(url, false)?;
        store.prepare_schema()?;
        Ok(store)
    }

    /// Connects for reading only: the session refuses writes
    /// (`default_transaction_read_only`), nothing is created or migrated,
    /// so a role with only `SELECT` rights can read. A database without
    /// verdict's tables, or with another schema version, is refused.
    pub fn open_read_only(url: &str) -> Result<PostgresStore, StoreError> {
        let store = Self::connect(url, true)?;
        store
            .client
            .borrow_mut()
            .batch_execute("SET default_transaction_read_only = on")
            .map_err(store.error("open read-only"))?;
        match store.schema_version()? {
            None => Err(StoreError::PostgresOpen {
                location: store.location.clone(),
                reason: "it has no verdict tables; `verdict run --db URL` creates them".into(),
            }),
            Some(version) if version > LATEST_VERSION => Err(StoreError::NewerSchema {
                path: store.location.clone().into(),
                found: version,
                known: LATEST_VERSION,
            }),
            Some(version) if version < LATEST_VERSION => Err(StoreError::PostgresOpen {
                location: store.location.clone(),
                reason: format!(
                    "it has schema version {version}, older than this verdict's \
                     {LATEST_VERSION}; a command that writes (such as `verdict run`) migrates it"
                ),
            }),
            Some(_) => Ok(store),
        }
    }

    fn connect(url: &str, read_only: bool) -> Result<PostgresStore, StoreError> {
        let location = redact_url(url);
        let open_error = |reason: String| StoreError::PostgresOpen {
            location: location.clone(),
            reason,
        };
        let config = postgres_config(url, &|name| std::env::var(name).ok())
            .map_err(|error| open_error(error.0))?;
        let client = connect_with(&config).map_err(|error| {
            open_error(format!(
                "cannot connect: {}",
                crate::error::postgres_message(&error)
            ))
        })?;
        Ok(PostgresStore {
            client: RefCell::new(client),
            location,
            statements: RefCell::default(),
            known_cells: RefCell::default(),
            read_only,
        })
    }

    /// The runs measured on `host`, oldest first (the database filters).
    pub fn list_runs_on_host(&self, host: &str) -> Result<Vec<RunSummary>, StoreError> {
        Ok(self
            .query_runs("WHERE host = $1 ORDER BY id", Some(&host))?
            .into_iter()
            .map(RunSummary::from)
            .collect())
    }

    /// The database's URL with its password redacted.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Whether the store was opened with `open_read_only`.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The schema version, or `None` when the database has no verdict
    /// tables. A `verdict_schema` with another application id is refused.
    fn schema_version(&self) -> Result<Option<i64>, StoreError> {
        let mut client = self.client.borrow_mut();
        let exists: bool = client
            .query_one("SELECT to_regclass('verdict_schema') IS NOT NULL", &[])
            .and_then(|row| row.try_get(0))
            .map_err(self.error("read the schema version"))?;
        if !exists {
            return Ok(None);
        }
        let row = client
            .query_opt("SELECT application_id, version FROM verdict_schema", &[])
            .map_err(self.error("read the schema version"))?;
        match row {
            None => Ok(Some(0)),
            Some(row) => {
                let application_id: i64 = row.get(0);
                if application_id != APPLICATION_ID {
                    return Err(StoreError::NotVerdict {
                        path: self.location.clone().into(),
                        reason: format!(
                            "its verdict_schema has application id {application_id:#x}"
                        ),
                    });
                }
                Ok(Some(row.get(1)))
            }
        }
    }

    /// Creates `verdict_schema` and runs the missing migrations in one
    /// transaction under an advisory lock (a second process waits, then
    /// finds the schema current).
    fn prepare_schema(&self) -> Result<(), StoreError> {
        if let Some(version) = self.schema_version()? {
            if version == LATEST_VERSION {
                return Ok(());
            }
            if version > LATEST_VERSION {
                return Err(StoreError::NewerSchema {
                    path: self.location.clone().into(),
                    found: version,
                    known: LATEST_VERSION,
                });
            }
        }
        let migrate_error = |version: i64| {
            let location = self.location.clone();
            move |source| StoreError::PostgresMigrate {
                location,
                version,
                source,
            }
        };
        let mut client = self.client.borrow_mut();
        let mut transaction = client
            .transaction()
            .map_err(migrate_error(LATEST_VERSION))?;
        transaction
            .execute("SELECT pg_advisory_xact_lock($1)", &[&APPLICATION_ID])
            .map_err(migrate_error(LATEST_VERSION))?;
        transaction
            .batch_execute(POSTGRES_BOOTSTRAP)
            .map_err(migrate_error(LATEST_VERSION))?;
        let row = transaction
            .query_opt("SELECT application_id, version FROM verdict_schema", &[])
            .map_err(migrate_error(LATEST_VERSION))?;
        let version: i64 = match row {
            Some(row) => {
                let application_id: i64 = row.get(0);
                if application_id != APPLICATION_ID {
                    return Err(StoreError::NotVerdict {
                        path: self.location.clone().into(),
                        reason: format!(
                            "its verdict_schema has application id {application_id:#x}"
                        ),
                    });
                }
                row.get(1)
            }
            None => {
                transaction
                    .execute(
                        "INSERT INTO verdict_schema (application_id, version) VALUES ($1, 0)",
                        &[&APPLICATION_ID],
                    )
                    .map_err(migrate_error(LATEST_VERSION))?;
                0
            }
        };
        if version > LATEST_VERSION {
            return Err(StoreError::NewerSchema {
                path: self.location.clone().into(),
                found: version,
                known: LATEST_VERSION,
            });
        }
        for (index, migration) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            let target = index as i64 + 1;
            transaction
                .batch_execute(migration.postgres)
                .and_then(|()| {
                    transaction.execute("UPDATE verdict_schema SET version = $1", &[&target])
                })
                .map_err(migrate_error(target))?;
        }
        transaction.commit().map_err(migrate_error(LATEST_VERSION))
    }

    pub(crate) fn error(&self, operation: &str) -> impl FnOnce(postgres::Error) -> StoreError + '_ {
        let operation = operation.to_string();
        move |source| StoreError::Postgres {
            location: self.location.clone(),
            operation,
            source,
        }
    }

    pub(crate) fn corrupt(&self, what: &str, reason: impl std::fmt::Display) -> StoreError {
        StoreError::Corrupt {
            path: self.location.clone().into(),
            what: what.to_string(),
            reason: reason.to_string(),
        }
    }

    pub(crate) fn invalid(&self, what: impl Into<String>, reason: impl Into<String>) -> StoreError {
        StoreError::InvalidValue {
            path: self.location.clone().into(),
            what: what.into(),
            reason: reason.into(),
        }
    }

    fn unknown_run(&self, run: RunId) -> StoreError {
        StoreError::UnknownRun {
            path: self.location.clone().into(),
            run,
        }
    }

    fn unknown_bisect(&self, bisect: BisectId) -> StoreError {
        StoreError::UnknownBisect {
            path: self.location.clone().into(),
            bisect,
        }
    }

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

    /// The prepared statement for `sql` (prepared once per connection).
    fn statement(&self, client: &mut Client, sql: &str) -> Result<Statement, postgres::Error> {
        if let Some(statement) = self.statements.borrow().get(sql) {
            return Ok(statement.clone());
        }
        let statement = client.prepare(sql)?;
        self.statements
            .borrow_mut()
            .insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    /// Rows of `sql` with `parameters` bound; the raw error for callers
    /// that map constraint violations.
    pub(crate) fn query_raw(
        &self,
        sql: &str,
        parameters: Parameters<'_>,
    ) -> Result<Vec<Row>, postgres::Error> {
        let mut client = self.client.borrow_mut();
        let statement = self.statement(&mut client, sql)?;
        client.query(&statement, parameters)
    }

    pub(crate) fn query(
        &self,
        operation: &str,
        sql: &str,
        parameters: Parameters<'_>,
    ) -> Result<Vec<Row>, StoreError> {
        self.query_raw(sql, parameters)
            .map_err(self.error(operation))
    }

    pub(crate) fn execute_raw(
        &self,
        sql: &str,
        parameters: Parameters<'_>,
    ) -> Result<u64, postgres::Error> {
        let mut client = self.client.borrow_mut();
        let statement = self.statement(&mut client, sql)?;
        client.execute(&statement, parameters)
    }

    pub(crate) fn execute(
        &self,
        operation: &str,
        sql: &str,
        parameters: Parameters<'_>,
    ) -> Result<u64, StoreError> {
        self.execute_raw(sql, parameters)
            .map_err(self.error(operation))
    }

    /// Runs `body` in one transaction and commits it; an error rolls it
    /// back.
    pub(crate) fn write<T>(
        &self,
        operation: &str,
        body: impl FnOnce() -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.client
            .borrow_mut()
            .batch_execute("BEGIN")
            .map_err(self.error(operation))?;
        match body() {
            Ok(value) => {
                self.client
                    .borrow_mut()
                    .batch_execute("COMMIT")
                    .map_err(self.error(operation))?;
                Ok(value)
            }
            Err(error) => {
                let _ = self.client.borrow_mut().batch_execute("ROLLBACK");
                Err(error)
            }
        }
    }

    pub(crate) fn run_exists(&self, run: RunId) -> Result<(), StoreError> {
        let rows = self.query(
            "look up a run",
            "SELECT 1 FROM runs WHERE id = $1",
            &[&run.0],
        )?;
        if rows.is_empty() {
            Err(self.unknown_run(run))
        } else {
            Ok(())
        }
    }

    fn bisect_exists(&self, bisect: BisectId) -> Result<(), StoreError> {
        let rows = self.query(
            "look up a bisection",
            "SELECT 1 FROM bisects WHERE id = $1",
            &[&bisect.0],
        )?;
        if rows.is_empty() {
            Err(self.unknown_bisect(bisect))
        } else {
            Ok(())
        }
    }

    fn query_runs(
        &self,
        filter: &str,
        parameter: Option<&(dyn ToSql + Sync)>,
    ) -> Result<Vec<RunRecord>, StoreError> {
        let sql = format!(
            "SELECT id, name, kind, status, experiment_text, experiment_sha256, \
                    experiment_json, tool_version, seed, host, planned, started_at_ms, \
                    finished_at_ms, environment_start, environment_end, command_line, \
                    (SELECT COUNT(*) FROM samples WHERE run_id = runs.id), \
                    (SELECT COUNT(*) FROM samples WHERE run_id = runs.id AND failed) \
             FROM runs {filter}"
        );
        let rows = match parameter {
            Some(value) => self.query("read runs", &sql, &[value])?,
            None => self.query("read runs", &sql, &[])?,
        };
        rows.iter()
            .map(|row| {
                RawRun::read(row)
                    .map_err(self.error("read runs"))?
                    .record(&|what, reason| self.corrupt(what, reason))
            })
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
        let rows = match &parameter {
            Some(value) => self.query("read bisections", &sql, &[value])?,
            None => self.query("read bisections", &sql, &[])?,
        };
        rows.iter()
            .map(|row| {
                RawBisect::read(row)
                    .map_err(self.error("read bisections"))?
                    .record(&|what, reason| self.corrupt(what, reason))
            })
            .collect()
    }

    /// Records a run's cell the first time one of its samples is stored;
    /// afterwards checks that the same index still means the same levels.
    fn store_cell(
        &self,
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
        let stored = self.query(
            &operation,
            "SELECT levels_json FROM run_cells WHERE run_id = $1 AND cell = $2",
            &[&run.0, &cell_index],
        )?;
        if let Some(row) = stored.first() {
            let stored: String = row.get(0);
            return if stored == levels_json {
                Ok(())
            } else {
                Err(self.invalid(
                    what,
                    format!("cell {cell_index} is stored with levels {stored}, not {levels_json}"),
                ))
            };
        }
        self.execute_raw(
            "INSERT INTO run_cells (run_id, cell, levels_json) VALUES ($1, $2, $3)",
            &[&run.0, &cell_index, &levels_json],
        )
        .map_err(|error| match error.code() {
            Some(code) if *code == SqlState::FOREIGN_KEY_VIOLATION => self.unknown_run(run),
            _ => self.error(&operation)(error),
        })?;
        for (factor, level) in &cell.levels {
            self.execute_raw(
                "INSERT INTO cell_levels (run_id, cell, factor, level) VALUES ($1, $2, $3, $4)",
                &[&run.0, &cell_index, factor, level],
            )
            .map_err(|error| match error.code() {
                Some(code) if *code == SqlState::UNIQUE_VIOLATION => {
                    self.invalid(what, format!("factor `{factor}` twice in its cell"))
                }
                _ => self.error(&operation)(error),
            })?;
        }
        Ok(())
    }

    fn update_run(
        &self,
        run: RunId,
        operation: &str,
        sql: &str,
        parameters: Parameters<'_>,
    ) -> Result<(), StoreError> {
        if self.execute(operation, sql, parameters)? == 0 {
            return Err(self.unknown_run(run));
        }
        Ok(())
    }
}

/// Connects over TLS when built with the `tls` feature (honouring the
/// URL's `sslmode`), in plain text otherwise.
fn connect_with(config: &postgres::Config) -> Result<Client, postgres::Error> {
    #[cfg(feature = "tls")]
    {
        if config.get_ssl_mode() != postgres::config::SslMode::Disable {
            if let Ok(connector) = native_tls::TlsConnector::new() {
                return config.connect(postgres_native_tls::MakeTlsConnector::new(connector));
            }
        }
    }
    config.connect(postgres::NoTls)
}

impl Store for PostgresStore {
    fn create_run(&self, run: &NewRun) -> Result<RunId, StoreError> {
        let planned = i64::try_from(run.planned).map_err(|_| {
            self.invalid("a run", format!("planned count {} too large", run.planned))
        })?;
        let environment_start = self.environment_json("a run", &run.environment_start)?;
        let command_line = to_json(&crate::location::redact_arguments(&run.command_line));
        let uuid = crate::identity::new_run_uuid();
        let rows = self.query(
            "create a run",
            "INSERT INTO runs (name, kind, status, experiment_text, experiment_sha256, \
                experiment_json, tool_version, seed, host, planned, started_at_ms, \
                environment_start, command_line, uuid, bisect_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING id",
            &[
                &run.name,
                &run.kind,
                &RunStatus::Running.as_str(),
                &run.experiment_text,
                &run.experiment_sha256,
                &run.experiment_json,
                &run.tool_version,
                &(run.seed as i64),
                &run.host,
                &planned,
                &run.started_at_ms,
                &environment_start,
                &command_line,
                &uuid,
                &run.bisect.map(|bisect| bisect.0),
            ],
        )?;
        Ok(RunId(rows[0].get(0)))
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
            "UPDATE runs SET status = $2, finished_at_ms = $3, environment_end = $4 \
             WHERE id = $1",
            &[&run.0, &status.as_str(), &finished_at_ms, &environment_end],
        )
    }

    fn set_status(&self, run: RunId, status: RunStatus) -> Result<(), StoreError> {
        self.update_run(
            run,
            &format!("set the status of run {run}"),
            "UPDATE runs SET status = $2, \
                finished_at_ms = CASE WHEN $2 = 'running' THEN NULL ELSE finished_at_ms END \
             WHERE id = $1",
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
            "UPDATE runs SET planned = $2 WHERE id = $1",
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
        self.query_runs("WHERE id = $1", Some(&run.0))?
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
        self.write(&operation, || {
            self.insert_details(run, sequence, details, &operation)
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
        let rows = self.query(
            &operation,
            "SELECT s.sequence, s.cell, s.block, s.warmup, s.started_at_ms, s.wall_seconds, \
                s.user_seconds, s.sys_seconds, s.max_rss_kib, s.exit_code, s.signal, \
                s.timed_out, s.failed, f.reason, f.output_tail, s.builtin_metrics \
             FROM samples s LEFT JOIN sample_failures f \
                ON f.run_id = s.run_id AND f.sequence = s.sequence \
             WHERE s.run_id = $1 ORDER BY s.sequence",
            &[&run.0],
        )?;
        let mut samples = Vec::with_capacity(rows.len());
        let mut index_by_sequence = HashMap::with_capacity(rows.len());
        for row in &rows {
            let sample = RawSample::read(row)
                .map_err(self.error(&operation))?
                .sample(run, &|what, reason| self.corrupt(what, reason))?;
            index_by_sequence.insert(i64::from(sample.sequence), samples.len());
            samples.push(sample);
        }
        for row in self.query(
            &operation,
            "SELECT sequence, name, value FROM sample_metrics WHERE run_id = $1",
            &[&run.0],
        )? {
            let sequence: i64 = row.get(0);
            if let Some(&index) = index_by_sequence.get(&sequence) {
                samples[index].metrics.insert(row.get(1), row.get(2));
            }
        }
        for row in self.query(
            &operation,
            "SELECT sequence, leftovers_json, missing_json FROM sample_notes WHERE run_id = $1",
            &[&run.0],
        )? {
            let sequence: i64 = row.get(0);
            let what = format!("notes of sample {sequence} of run {run}");
            if let Some(&index) = index_by_sequence.get(&sequence) {
                let leftovers: String = row.get(1);
                let missing: String = row.get(2);
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
        let value = builtin::value_sql(&selection.metric);
        let mut sql = format!(
            "SELECT s.run_id, s.sequence, {value}, s.started_at_ms, c.levels_json \
             FROM samples s \
             LEFT JOIN sample_metrics m \
                ON m.run_id = s.run_id AND m.sequence = s.sequence AND m.name = $1 \
             JOIN run_cells c ON c.run_id = s.run_id AND c.cell = s.cell \
             WHERE NOT s.warmup AND NOT s.failed AND ({value}) IS NOT NULL",
        );
        let mut parameters: Vec<Box<dyn ToSql + Sync>> = vec![Box::new(selection.metric.clone())];
        if let Some(run) = selection.run {
            parameters.push(Box::new(run.0));
            sql.push_str(&format!(" AND s.run_id = ${}", parameters.len()));
        }
        for (factor, level) in &selection.levels {
            let (filter, values) =
                crate::filters::level_filter(crate::filters::Dialect::Postgres, factor, level);
            sql.push_str(&crate::filters::number_placeholders(
                &filter,
                parameters.len() + 1,
            ));
            for value in values {
                parameters.push(Box::new(value));
            }
        }
        sql.push_str(" ORDER BY s.run_id, s.sequence");
        let operation = format!("select metric `{}`", selection.metric);
        let references: Vec<&(dyn ToSql + Sync)> = parameters
            .iter()
            .map(|parameter| parameter.as_ref())
            .collect();
        let rows = self.query(&operation, &sql, &references)?;
        rows.iter()
            .map(|row| {
                let run: i64 = row.get(0);
                let sequence: i64 = row.get(1);
                let levels_json: String = row.get(4);
                let what = format!("sample {sequence} of run {run}");
                Ok(SelectedValue {
                    run: RunId(run),
                    sequence: u32::try_from(sequence)
                        .map_err(|_| self.corrupt(&what, "sequence out of range"))?,
                    value: row.get(2),
                    started_at_ms: row.get(3),
                    levels: serde_json::from_str(&levels_json)
                        .map_err(|error| self.corrupt(&what, error))?,
                })
            })
            .collect()
    }

    fn cells(&self, run: RunId) -> Result<Vec<(usize, Cell)>, StoreError> {
        self.run_exists(run)?;
        let operation = format!("read the cells of run {run}");
        self.query(
            &operation,
            "SELECT cell, levels_json FROM run_cells WHERE run_id = $1 ORDER BY cell",
            &[&run.0],
        )?
        .iter()
        .map(|row| {
            let index: i64 = row.get(0);
            let levels_json: String = row.get(1);
            let what = format!("cell {index} of run {run}");
            let index =
                usize::try_from(index).map_err(|_| self.corrupt(&what, "negative index"))?;
            let levels =
                serde_json::from_str(&levels_json).map_err(|error| self.corrupt(&what, error))?;
            Ok((index, Cell { levels }))
        })
        .collect()
    }

    fn run_times(&self) -> Result<Vec<RunTimes>, StoreError> {
        Ok(self
            .query(
                "read when runs measured",
                "SELECT r.id, r.host, r.started_at_ms, r.finished_at_ms, s.first, s.last \
                 FROM runs r LEFT JOIN ( \
                    SELECT run_id, MIN(started_at_ms) AS first, \
                        MAX(started_at_ms + CAST(ROUND(wall_seconds * 1000) AS BIGINT)) AS last \
                    FROM samples GROUP BY run_id) s ON s.run_id = r.id \
                 ORDER BY r.id",
                &[],
            )?
            .iter()
            .map(|row| RunTimes {
                run: RunId(row.get(0)),
                host: row.get(1),
                started_at_ms: row.get(2),
                finished_at_ms: row.get(3),
                first_iteration_ms: row.get(4),
                last_iteration_end_ms: row.get(5),
            })
            .collect())
    }

    fn iteration_spans(&self, run: RunId) -> Result<Vec<(i64, i64)>, StoreError> {
        self.run_exists(run)?;
        Ok(self
            .query(
                &format!("read when run {run} measured"),
                "SELECT started_at_ms, \
                    started_at_ms + CAST(ROUND(wall_seconds * 1000) AS BIGINT) \
                 FROM samples WHERE run_id = $1 ORDER BY sequence",
                &[&run.0],
            )?
            .iter()
            .map(|row| {
                let (start, end): (i64, i64) = (row.get(0), row.get(1));
                (start, end.max(start))
            })
            .collect())
    }

    crate::adaptive::store_methods!();

    fn put_annotation(&self, run: RunId, key: &str, value: &Value) -> Result<(), StoreError> {
        let operation = format!("store annotation `{key}` of run {run}");
        self.execute_raw(
            "INSERT INTO run_annotations (run_id, key, value_json) VALUES ($1, $2, $3) \
             ON CONFLICT (run_id, key) DO UPDATE SET value_json = excluded.value_json",
            &[&run.0, &key, &to_json(value)],
        )
        .map_err(|error| match error.code() {
            Some(code) if *code == SqlState::FOREIGN_KEY_VIOLATION => self.unknown_run(run),
            _ => self.error(&operation)(error),
        })?;
        Ok(())
    }

    fn annotations(&self, run: RunId) -> Result<BTreeMap<String, Value>, StoreError> {
        self.run_exists(run)?;
        let operation = format!("read the annotations of run {run}");
        self.query(
            &operation,
            "SELECT key, value_json FROM run_annotations WHERE run_id = $1",
            &[&run.0],
        )?
        .iter()
        .map(|row| {
            let key: String = row.get(0);
            let text: String = row.get(1);
            let value = serde_json::from_str(&text).map_err(|error| {
                self.corrupt(&format!("annotation `{key}` of run {run}"), error)
            })?;
            Ok((key, value))
        })
        .collect()
    }

    fn put_kernel_config(&self, sha256: &str, source: &str, text: &str) -> Result<(), StoreError> {
        let operation = format!("store kernel config {sha256}");
        if !self
            .query(
                &operation,
                "SELECT 1 FROM kernel_configs WHERE sha256 = $1",
                &[&sha256],
            )?
            .is_empty()
        {
            return Ok(());
        }
        self.execute(
            &operation,
            "INSERT INTO kernel_configs (sha256, source, text) VALUES ($1, $2, $3) \
             ON CONFLICT (sha256) DO NOTHING",
            &[&sha256, &source, &text],
        )?;
        Ok(())
    }

    fn kernel_config(&self, sha256: &str) -> Result<Option<(String, String)>, StoreError> {
        Ok(self
            .query(
                &format!("read kernel config {sha256}"),
                "SELECT source, text FROM kernel_configs WHERE sha256 = $1",
                &[&sha256],
            )?
            .first()
            .map(|row| (row.get(0), row.get(1))))
    }

    fn create_bisect(&self, bisect: &NewBisect) -> Result<BisectId, StoreError> {
        let rows = self.query(
            "create a bisection",
            "INSERT INTO bisects (repo, good, bad, experiment_text, config_json, \
                status, started_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
            &[
                &bisect.repo,
                &bisect.good,
                &bisect.bad,
                &bisect.experiment_text,
                &to_json(&bisect.config),
                &RunStatus::Running.as_str(),
                &bisect.started_at_ms,
            ],
        )?;
        Ok(BisectId(rows[0].get(0)))
    }

    fn append_bisect_event(
        &self,
        bisect: BisectId,
        sequence: u32,
        event: &Value,
    ) -> Result<(), StoreError> {
        let operation = format!("store event {sequence} of bisection {bisect}");
        self.execute_raw(
            "INSERT INTO bisect_events (bisect_id, sequence, event_json) VALUES ($1, $2, $3)",
            &[&bisect.0, &i64::from(sequence), &to_json(event)],
        )
        .map_err(|error| match error.code() {
            Some(code) if *code == SqlState::UNIQUE_VIOLATION => StoreError::DuplicateBisectEvent {
                path: self.location.clone().into(),
                bisect,
                sequence,
            },
            Some(code) if *code == SqlState::FOREIGN_KEY_VIOLATION => self.unknown_bisect(bisect),
            _ => self.error(&operation)(error),
        })?;
        Ok(())
    }

    fn create_boot(&self, run: RunId, boot: &crate::NewBoot) -> Result<u32, StoreError> {
        self.create_boot_row(run, boot)
    }
    fn update_boot(&self, run: RunId, row: &crate::BootRow) -> Result<(), StoreError> {
        self.update_boot_row(run, row)
    }
    fn boots(&self, run: RunId) -> Result<Vec<crate::BootRow>, StoreError> {
        self.boot_rows(run)
    }
    fn bisect_runs(&self, bisect: BisectId) -> Result<Vec<RunSummary>, StoreError> {
        self.bisect_exists(bisect)?;
        Ok(self
            .query_runs("WHERE bisect_id = $1 ORDER BY id", Some(&bisect.0))?
            .into_iter()
            .map(RunSummary::from)
            .collect())
    }

    fn bisect_events(&self, bisect: BisectId) -> Result<Vec<(u32, Value)>, StoreError> {
        self.bisect_exists(bisect)?;
        let operation = format!("read the events of bisection {bisect}");
        self.query(
            &operation,
            "SELECT sequence, event_json FROM bisect_events WHERE bisect_id = $1 ORDER BY sequence",
            &[&bisect.0],
        )?
        .iter()
        .map(|row| {
            let sequence: i64 = row.get(0);
            let text: String = row.get(1);
            let what = format!("event {sequence} of bisection {bisect}");
            let sequence = u32::try_from(sequence)
                .map_err(|_| self.corrupt(&what, "sequence out of range"))?;
            let value = serde_json::from_str(&text).map_err(|error| self.corrupt(&what, error))?;
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
        let changed = self.execute(
            &format!("finish bisection {bisect}"),
            "UPDATE bisects SET status = $2, finished_at_ms = $3, result_json = $4 WHERE id = $1",
            &[
                &bisect.0,
                &status.as_str(),
                &finished_at_ms,
                &to_json(result),
            ],
        )?;
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
        self.query_bisects("WHERE id = $1", Some(bisect.0))?
            .pop()
            .ok_or_else(|| self.unknown_bisect(bisect))
    }

    fn latest_bisect(&self) -> Result<Option<BisectRecord>, StoreError> {
        Ok(self.query_bisects("ORDER BY id DESC LIMIT 1", None)?.pop())
    }
}

impl PostgresStore {
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
        let builtin_metrics = builtin::flags(sample);
        let operation = format!("store {}", what());
        self.write(&operation, || {
            self.store_cell(run, cell_index, cell, &what())?;
            self.insert_sample_rows(
                run,
                sample,
                cell_index,
                max_rss_kib,
                builtin_metrics,
                &operation,
            )?;
            if let Some(details) = details {
                self.insert_details(run, sample.sequence, details, &operation)?;
            }
            Ok(())
        })?;
        self.known_cells
            .borrow_mut()
            .entry((run.0, cell_index))
            .or_insert_with(|| cell.clone());
        Ok(())
    }
}

impl PostgresStore {
    /// Stores several samples of a run in one transaction (all or none):
    /// one commit instead of one per sample, for copying runs.
    pub fn append_samples(&self, run: RunId, samples: &[(Sample, Cell)]) -> Result<(), StoreError> {
        let operation = format!("store {} samples of run {run}", samples.len());
        self.write(&operation, || {
            for (sample, cell) in samples {
                let what = format!("sample {} of run {run}", sample.sequence);
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
                        return Err(
                            self.invalid(&what, format!("`{name}` is {value}, not a number"))
                        );
                    }
                }
                let max_rss_kib = i64::try_from(sample.max_rss_kib)
                    .map_err(|_| self.invalid(&what, "max RSS too large"))?;
                let cell_index = i64::try_from(sample.cell)
                    .map_err(|_| self.invalid(&what, "cell index too large"))?;
                let builtin_metrics = builtin::flags(sample);
                self.store_cell(run, cell_index, cell, &what)?;
                self.insert_sample_rows(
                    run,
                    sample,
                    cell_index,
                    max_rss_kib,
                    builtin_metrics,
                    &operation,
                )?;
            }
            Ok(())
        })?;
        // Cells are remembered only after the commit (as in append_sample).
        for (sample, cell) in samples {
            self.known_cells
                .borrow_mut()
                .entry((run.0, sample.cell as i64))
                .or_insert_with(|| cell.clone());
        }
        Ok(())
    }

    /// The sample's rows (sample, failure, notes, metrics), inside the
    /// caller's transaction; a sequence already stored is
    /// `DuplicateSample`.
    pub(crate) fn insert_sample_rows(
        &self,
        run: RunId,
        sample: &Sample,
        cell_index: i64,
        max_rss_kib: i64,
        builtin_metrics: i64,
        operation: &str,
    ) -> Result<(), StoreError> {
        let sequence = i64::from(sample.sequence);
        let exit_code = sample.exit_code.map(i64::from);
        let signal = sample.signal.map(i64::from);
        self.execute_raw(
            "INSERT INTO samples (run_id, sequence, cell, block, warmup, failed, \
                started_at_ms, wall_seconds, user_seconds, sys_seconds, max_rss_kib, \
                exit_code, signal, timed_out, builtin_metrics) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
            &[
                &run.0,
                &sequence,
                &cell_index,
                &i64::from(sample.block),
                &sample.warmup,
                &sample.failure.is_some(),
                &sample.started_at_ms,
                &sample.wall_seconds,
                &sample.user_seconds,
                &sample.sys_seconds,
                &max_rss_kib,
                &exit_code,
                &signal,
                &sample.timed_out,
                &builtin_metrics,
            ],
        )
        .map_err(|error| match error.code() {
            Some(code) if *code == SqlState::UNIQUE_VIOLATION => StoreError::DuplicateSample {
                path: self.location.clone().into(),
                run,
                sequence: sample.sequence,
            },
            Some(code) if *code == SqlState::FOREIGN_KEY_VIOLATION => self.unknown_run(run),
            _ => self.error(operation)(error),
        })?;
        if let Some(failure) = &sample.failure {
            self.execute(
                operation,
                "INSERT INTO sample_failures (run_id, sequence, reason, output_tail) \
                 VALUES ($1, $2, $3, $4)",
                &[&run.0, &sequence, &failure.reason, &failure.output_tail],
            )?;
        }
        if !sample.leftovers.is_empty() || !sample.missing.is_empty() {
            self.execute(
                operation,
                "INSERT INTO sample_notes (run_id, sequence, leftovers_json, missing_json) \
                 VALUES ($1, $2, $3, $4)",
                &[
                    &run.0,
                    &sequence,
                    &to_json(&sample.leftovers),
                    &to_json(&sample.missing),
                ],
            )?;
        }
        for (name, value) in &sample.metrics {
            if builtin::is_flagged(name, builtin_metrics) {
                continue;
            }
            self.execute(
                operation,
                "INSERT INTO sample_metrics (run_id, sequence, name, value) \
                 VALUES ($1, $2, $3, $4)",
                &[&run.0, &sequence, name, value],
            )?;
        }
        Ok(())
    }
}

/// One `EXISTS` per (factor, level), both bound as parameters.
pub(crate) fn push_level_filters(
    sql: &mut String,
    parameters: &mut Vec<Box<dyn ToSql + Sync>>,
    levels: &[(String, String)],
) {
    for (factor, level) in levels {
        parameters.push(Box::new(factor.clone()));
        parameters.push(Box::new(level.clone()));
        let (factor_index, level_index) = (parameters.len() - 1, parameters.len());
        sql.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM cell_levels l WHERE l.run_id = s.run_id \
               AND l.cell = s.cell AND l.factor = ${factor_index} AND l.level = ${level_index})"
        ));
    }
}
