//! `Database`: the store a command named with `--db` (a SQLite file or a
//! PostgreSQL connection string, see `Location`), opened for writing, for
//! reading only, or only if it exists, and used through the same `Store`
//! and `HistoryStore` traits whichever it is (it hands every statement to
//! the store it holds). Must not hold SQL or print.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use verdict_model::Cell;

use crate::StoreError;
use crate::location::Location;
use crate::postgres::PostgresStore;
use crate::sql::{Backend, Dialect, Param, RawError, Row};
use crate::sqlite::{ReadOnly, SqliteStore};

/// An open store of either kind.
#[derive(Debug)]
pub enum Database {
    Sqlite(SqliteStore),
    Postgres {
        store: Box<PostgresStore>,
        /// The URL with its password redacted, as a path-like name.
        name: PathBuf,
    },
}

impl Database {
    /// Opens (creating and migrating as needed) the store at `location`.
    pub fn open(location: &Location) -> Result<Database, StoreError> {
        match location {
            Location::Sqlite(path) => SqliteStore::open(path).map(Database::Sqlite),
            Location::Postgres(url) => PostgresStore::open(url).map(Database::postgres),
        }
    }

    /// Opens a store that must already exist (a missing SQLite file is an
    /// error; a PostgreSQL database is opened as by `open`).
    pub fn open_existing(location: &Location) -> Result<Database, StoreError> {
        match location {
            Location::Sqlite(path) => SqliteStore::open_existing(path).map(Database::Sqlite),
            Location::Postgres(url) => PostgresStore::open(url).map(Database::postgres),
        }
    }

    /// Opens an existing store for reading only (see
    /// `SqliteStore::open_read_only`, `PostgresStore::open_read_only`).
    pub fn open_read_only(location: &Location) -> Result<Database, StoreError> {
        match location {
            Location::Sqlite(path) => SqliteStore::open_read_only(path).map(Database::Sqlite),
            Location::Postgres(url) => PostgresStore::open_read_only(url).map(Database::postgres),
        }
    }

    fn postgres(store: PostgresStore) -> Database {
        let name = PathBuf::from(store.location());
        Database::Postgres {
            store: Box::new(store),
            name,
        }
    }

    /// The SQLite file, or the PostgreSQL URL with its password redacted
    /// (as a path, for naming things after the store).
    pub fn path(&self) -> &Path {
        match self {
            Database::Sqlite(store) => store.path(),
            Database::Postgres { name, .. } => name,
        }
    }

    /// How a SQLite store opened read-only reads its file (`None` for a
    /// read-write store and for PostgreSQL).
    pub fn read_only(&self) -> Option<ReadOnly> {
        match self {
            Database::Sqlite(store) => store.read_only(),
            Database::Postgres { .. } => None,
        }
    }

    /// The schema version this build of verdict reads and writes.
    pub fn schema_version() -> i64 {
        SqliteStore::schema_version()
    }
}

/// Each statement goes to the store the enum holds: `Database` is a
/// `Store` and a `HistoryStore` through the same queries as either.
impl Backend for Database {
    fn name(&self) -> PathBuf {
        match self {
            Database::Sqlite(store) => store.name(),
            Database::Postgres { store, .. } => store.name(),
        }
    }

    fn dialect(&self) -> Dialect {
        match self {
            Database::Sqlite(store) => store.dialect(),
            Database::Postgres { store, .. } => store.dialect(),
        }
    }

    fn execute_raw(&self, sql: &str, parameters: &[Param<'_>]) -> Result<u64, RawError> {
        match self {
            Database::Sqlite(store) => store.execute_raw(sql, parameters),
            Database::Postgres { store, .. } => store.execute_raw(sql, parameters),
        }
    }

    fn each_row_raw(
        &self,
        sql: &str,
        parameters: &[Param<'_>],
        each: &mut dyn FnMut(Row<'_>) -> Result<ControlFlow<()>, StoreError>,
    ) -> Result<Result<(), StoreError>, RawError> {
        match self {
            Database::Sqlite(store) => store.each_row_raw(sql, parameters, each),
            Database::Postgres { store, .. } => store.each_row_raw(sql, parameters, each),
        }
    }

    fn transaction<T>(
        &self,
        operation: &str,
        body: impl FnOnce() -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        match self {
            Database::Sqlite(store) => store.transaction(operation, body),
            Database::Postgres { store, .. } => store.transaction(operation, body),
        }
    }

    fn known_cells(&self) -> &RefCell<HashMap<(i64, i64), Cell>> {
        match self {
            Database::Sqlite(store) => store.known_cells(),
            Database::Postgres { store, .. } => store.known_cells(),
        }
    }
}
