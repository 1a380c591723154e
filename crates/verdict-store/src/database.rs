//! `Database`: the store a command named with `--db` (a SQLite file or a
//! PostgreSQL URL, see `Location`), opened for writing, for reading only,
//! or only if it exists, and used through the same `Store` and
//! `HistoryStore` traits whichever it is. Must not hold SQL (each backend
//! has its own) or print.

use std::path::{Path, PathBuf};

use verdict_model::{Cell, RunId, Sample};

use crate::StoreError;
use crate::history::{HistoryCache, HistoryRun, HistorySelection, HistoryStore};
use crate::location::Location;
use crate::postgres::PostgresStore;
use crate::sqlite::{ReadOnly, SqliteStore};
use crate::store::{RunSummary, Store};

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

    /// The runs measured on any of `hosts`, oldest first (the database
    /// filters each host).
    pub fn list_runs_on_hosts(&self, hosts: &[String]) -> Result<Vec<RunSummary>, StoreError> {
        let mut runs = Vec::new();
        for host in hosts {
            runs.extend(match self {
                Database::Sqlite(store) => store.list_runs_on_host(host)?,
                Database::Postgres { store, .. } => store.list_runs_on_host(host)?,
            });
        }
        runs.sort_by_key(|run| run.id);
        runs.dedup_by_key(|run| run.id);
        Ok(runs)
    }

    /// Stores several samples of a run: in PostgreSQL in one transaction,
    /// in SQLite one commit each (a SQLite commit is cheap).
    pub fn append_samples(&self, run: RunId, samples: &[(Sample, Cell)]) -> Result<(), StoreError> {
        match self {
            Database::Postgres { store, .. } => store.append_samples(run, samples),
            Database::Sqlite(store) => samples
                .iter()
                .try_for_each(|(sample, cell)| store.append_sample(run, sample, cell)),
        }
    }

    /// The schema version this build of verdict reads and writes.
    pub fn schema_version() -> i64 {
        SqliteStore::schema_version()
    }

    /// The store behind the enum, as the trait.
    pub fn store(&self) -> &dyn HistoryStore {
        match self {
            Database::Sqlite(store) => store,
            Database::Postgres { store, .. } => store.as_ref(),
        }
    }
}

impl Store for Database {
    crate::forward_store!(store);
}

impl HistoryStore for Database {
    fn history_runs(&self, selection: &HistorySelection) -> Result<Vec<HistoryRun>, StoreError> {
        self.store().history_runs(selection)
    }
    fn newest_run_named(&self, experiment: Option<&str>) -> Result<Option<RunId>, StoreError> {
        self.store().newest_run_named(experiment)
    }
    fn set_run_commit(&self, run: RunId, commit: &str) -> Result<(), StoreError> {
        self.store().set_run_commit(run, commit)
    }
    fn run_commit(&self, run: RunId) -> Result<Option<String>, StoreError> {
        self.store().run_commit(run)
    }
    fn history_cache(&self, key: &str) -> Result<Option<HistoryCache>, StoreError> {
        self.store().history_cache(key)
    }
    fn put_history_cache(&self, key: &str, cache: &HistoryCache) -> Result<(), StoreError> {
        self.store().put_history_cache(key, cache)
    }
}
