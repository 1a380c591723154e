//! `PostgresStore`: the store on a PostgreSQL database (the sync
//! `postgres` crate), for a lab's shared store. Same tables and numbered
//! migrations as SQLite (`migrations.rs`, PostgreSQL dialect); the schema
//! version is in `verdict_schema`, migrations run under an advisory lock
//! so that processes opening a fresh database at once migrate it once. The
//! store's queries are `queries.rs`'s, run through this file's `Backend`.
//!
//! Every value reaches the server as a bound parameter of a prepared
//! statement (cached per connection); SQL text is only ever assembled from
//! constants. The URL's password is kept in memory with the connection
//! settings, to reconnect after the server went away (`reconnect`), and
//! nowhere else: messages name the database by its URL with the password
//! redacted.
//!
//! Durability: every write method is one transaction, committed before it
//! returns (the server's own `synchronous_commit` decides when that is on
//! disk). Must not know about experiments beyond storing them, read clocks,
//! or print.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::PathBuf;

use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, Statement};
use verdict_model::Cell;

use crate::StoreError;
use crate::location::{postgres_config, redact};
use crate::migrations::{
    APPLICATION_ID, LATEST_VERSION, POSTGRES_BOOTSTRAP, known_version, pending,
};
use crate::sql::{Backend, Dialect, Param, RawError, Row, visit};

/// A verdict database in PostgreSQL. One connection; not `Sync`: one store
/// per thread.
pub struct PostgresStore {
    client: RefCell<Client>,
    /// The connection settings (with the password, if any): what
    /// `reconnect` connects with.
    config: postgres::Config,
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
        match store.schema_version()? {
            None => Err(StoreError::PostgresOpen {
                location: store.location.clone(),
                reason: "it has no verdict tables; `verdict run --db URL` creates them".into(),
            }),
            Some(version) if known_version(&store.location, version)? < LATEST_VERSION => {
                Err(StoreError::PostgresOpen {
                    location: store.location.clone(),
                    reason: format!(
                        "it has schema version {version}, older than this verdict's \
                         {LATEST_VERSION}; a command that writes (such as `verdict run`) migrates it"
                    ),
                })
            }
            Some(_) => Ok(store),
        }
    }

    fn connect(url: &str, read_only: bool) -> Result<PostgresStore, StoreError> {
        let location = redact(url);
        let config = postgres_config(url, &crate::location::store_variable).map_err(|error| {
            StoreError::PostgresOpen {
                location: location.clone(),
                reason: error.0,
            }
        })?;
        let client = Self::session(&config, &location, read_only)?;
        Ok(PostgresStore {
            client: RefCell::new(client),
            config,
            location,
            statements: RefCell::default(),
            known_cells: RefCell::default(),
            read_only,
        })
    }

    /// A new connection with `config`; read-only sessions refuse writes.
    fn session(
        config: &postgres::Config,
        location: &str,
        read_only: bool,
    ) -> Result<Client, StoreError> {
        let open_error = |reason: String| StoreError::PostgresOpen {
            location: location.to_string(),
            reason,
        };
        let mut client = connect_with(config).map_err(|source| StoreError::PostgresConnect {
            location: location.to_string(),
            source,
        })?;
        if read_only {
            client
                .batch_execute("SET default_transaction_read_only = on")
                .map_err(|error| {
                    open_error(format!(
                        "open read-only: {}",
                        crate::error::postgres_message(&error)
                    ))
                })?;
        }
        Ok(client)
    }

    /// Replaces the connection with a new one (after the server went away
    /// and came back): prepared statements are prepared again as they are
    /// used. An error when the server is not reachable yet.
    pub fn reconnect(&self) -> Result<(), StoreError> {
        let client = Self::session(&self.config, &self.location, self.read_only)?;
        *self.client.borrow_mut() = client;
        self.statements.borrow_mut().clear();
        Ok(())
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
        let error = |operation: &str| {
            let location = self.location.clone();
            let operation = operation.to_string();
            move |source| StoreError::Postgres {
                location,
                operation,
                source,
            }
        };
        let mut client = self.client.borrow_mut();
        let exists: bool = client
            .query_one("SELECT to_regclass('verdict_schema') IS NOT NULL", &[])
            .and_then(|row| row.try_get(0))
            .map_err(error("read the schema version"))?;
        if !exists {
            return Ok(None);
        }
        let row = client
            .query_opt("SELECT application_id, version FROM verdict_schema", &[])
            .map_err(error("read the schema version"))?;
        match row {
            None => Ok(Some(0)),
            Some(row) => self.stored_version(&row).map(Some),
        }
    }

    /// The version in `verdict_schema`'s row, unless the row marks another
    /// application's table.
    fn stored_version(&self, row: &postgres::Row) -> Result<i64, StoreError> {
        let application_id: i64 = row.get(0);
        if application_id != APPLICATION_ID {
            return Err(StoreError::NotVerdict {
                path: self.location.clone().into(),
                reason: format!("its verdict_schema has application id {application_id:#x}"),
            });
        }
        Ok(row.get(1))
    }

    /// Creates `verdict_schema` and runs the missing migrations in one
    /// transaction under an advisory lock (a second process waits, then
    /// finds the schema current).
    fn prepare_schema(&self) -> Result<(), StoreError> {
        if let Some(version) = self.schema_version()? {
            if known_version(&self.location, version)? == LATEST_VERSION {
                return Ok(());
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
        let version = match row {
            Some(row) => self.stored_version(&row)?,
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
        let version = known_version(&self.location, version)?;
        for (target, migration) in pending(version) {
            transaction
                .batch_execute(migration.postgres)
                .and_then(|()| {
                    transaction.execute("UPDATE verdict_schema SET version = $1", &[&target])
                })
                .map_err(migrate_error(target))?;
        }
        transaction.commit().map_err(migrate_error(LATEST_VERSION))
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
}

impl Backend for PostgresStore {
    fn name(&self) -> PathBuf {
        PathBuf::from(&self.location)
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute_raw(&self, sql: &str, parameters: &[Param<'_>]) -> Result<u64, RawError> {
        let mut client = self.client.borrow_mut();
        let statement = self.statement(&mut client, sql)?;
        let values: Vec<_> = parameters.iter().map(Param::postgres).collect();
        Ok(client.execute(&statement, &values)?)
    }

    fn each_row_raw(
        &self,
        sql: &str,
        parameters: &[Param<'_>],
        each: &mut dyn FnMut(Row<'_>) -> Result<ControlFlow<()>, StoreError>,
    ) -> Result<Result<(), StoreError>, RawError> {
        let mut client = self.client.borrow_mut();
        let statement = self.statement(&mut client, sql)?;
        // Rows are read from the connection as they are consumed.
        let mut rows = client.query_raw(&statement, parameters.iter().map(Param::postgres))?;
        while let Some(row) = rows.next()? {
            if let ControlFlow::Break(outcome) = visit(each, Row::Postgres(&row)) {
                return Ok(outcome);
            }
        }
        Ok(Ok(()))
    }

    fn transaction<T>(
        &self,
        operation: &str,
        body: impl FnOnce() -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let error = |source| StoreError::Postgres {
            location: self.location.clone(),
            operation: operation.to_string(),
            source,
        };
        self.client
            .borrow_mut()
            .batch_execute("BEGIN")
            .map_err(error)?;
        match body() {
            Ok(value) => {
                self.client
                    .borrow_mut()
                    .batch_execute("COMMIT")
                    .map_err(error)?;
                Ok(value)
            }
            Err(failure) => {
                let _ = self.client.borrow_mut().batch_execute("ROLLBACK");
                Err(failure)
            }
        }
    }

    fn known_cells(&self) -> &RefCell<HashMap<(i64, i64), Cell>> {
        &self.known_cells
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
