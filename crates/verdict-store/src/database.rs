//! `Database`: the store a command named with `--db` (a SQLite file or a
//! PostgreSQL URL, see `Location`), opened for writing, for reading only,
//! or only if it exists, and used through the same `Store` and
//! `HistoryStore` traits whichever it is. Must not hold SQL (each backend
//! has its own) or print.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use verdict_model::{Cell, Environment, RunId, RunStatus, Sample};

use crate::StoreError;
use crate::history::{HistoryCache, HistoryRun, HistorySelection, HistoryStore};
use crate::location::Location;
use crate::postgres::PostgresStore;
use crate::sqlite::{ReadOnly, SqliteStore};
use crate::store::{
    BisectId, BisectRecord, BisectSummary, NewBisect, NewRun, RunRecord, RunSummary, RunTimes,
    SelectedValue, Selection, Store,
};

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
    fn create_run(&self, run: &NewRun) -> Result<RunId, StoreError> {
        self.store().create_run(run)
    }
    fn finish_run(
        &self,
        run: RunId,
        status: RunStatus,
        finished_at_ms: i64,
        environment_end: Option<&Environment>,
    ) -> Result<(), StoreError> {
        self.store()
            .finish_run(run, status, finished_at_ms, environment_end)
    }
    fn set_status(&self, run: RunId, status: RunStatus) -> Result<(), StoreError> {
        self.store().set_status(run, status)
    }
    fn set_planned(&self, run: RunId, planned: u64) -> Result<(), StoreError> {
        self.store().set_planned(run, planned)
    }
    fn list_runs(&self) -> Result<Vec<RunSummary>, StoreError> {
        self.store().list_runs()
    }
    fn run(&self, run: RunId) -> Result<RunRecord, StoreError> {
        self.store().run(run)
    }
    fn latest_run(&self) -> Result<Option<RunRecord>, StoreError> {
        self.store().latest_run()
    }
    fn append_sample(&self, run: RunId, sample: &Sample, cell: &Cell) -> Result<(), StoreError> {
        self.store().append_sample(run, sample, cell)
    }
    fn samples(&self, run: RunId) -> Result<Vec<Sample>, StoreError> {
        self.store().samples(run)
    }
    fn select_samples(&self, selection: &Selection) -> Result<Vec<SelectedValue>, StoreError> {
        self.store().select_samples(selection)
    }
    fn cells(&self, run: RunId) -> Result<Vec<(usize, Cell)>, StoreError> {
        self.store().cells(run)
    }
    fn run_times(&self) -> Result<Vec<RunTimes>, StoreError> {
        self.store().run_times()
    }
    fn iteration_spans(&self, run: RunId) -> Result<Vec<(i64, i64)>, StoreError> {
        self.store().iteration_spans(run)
    }
    fn put_annotation(&self, run: RunId, key: &str, value: &Value) -> Result<(), StoreError> {
        self.store().put_annotation(run, key, value)
    }
    fn annotations(&self, run: RunId) -> Result<BTreeMap<String, Value>, StoreError> {
        self.store().annotations(run)
    }
    fn put_kernel_config(&self, sha256: &str, source: &str, text: &str) -> Result<(), StoreError> {
        self.store().put_kernel_config(sha256, source, text)
    }
    fn kernel_config(&self, sha256: &str) -> Result<Option<(String, String)>, StoreError> {
        self.store().kernel_config(sha256)
    }
    fn create_bisect(&self, bisect: &NewBisect) -> Result<BisectId, StoreError> {
        self.store().create_bisect(bisect)
    }
    fn append_bisect_event(
        &self,
        bisect: BisectId,
        sequence: u32,
        event: &Value,
    ) -> Result<(), StoreError> {
        self.store().append_bisect_event(bisect, sequence, event)
    }
    fn create_boot(&self, run: RunId, boot: &crate::NewBoot) -> Result<u32, StoreError> {
        self.store().create_boot(run, boot)
    }
    fn update_boot(&self, run: RunId, row: &crate::BootRow) -> Result<(), StoreError> {
        self.store().update_boot(run, row)
    }
    fn boots(&self, run: RunId) -> Result<Vec<crate::BootRow>, StoreError> {
        self.store().boots(run)
    }
    fn bisect_runs(&self, bisect: BisectId) -> Result<Vec<RunSummary>, StoreError> {
        self.store().bisect_runs(bisect)
    }
    fn bisect_events(&self, bisect: BisectId) -> Result<Vec<(u32, Value)>, StoreError> {
        self.store().bisect_events(bisect)
    }
    fn finish_bisect(
        &self,
        bisect: BisectId,
        status: RunStatus,
        finished_at_ms: i64,
        result: &Value,
    ) -> Result<(), StoreError> {
        self.store()
            .finish_bisect(bisect, status, finished_at_ms, result)
    }
    fn list_bisects(&self) -> Result<Vec<BisectSummary>, StoreError> {
        self.store().list_bisects()
    }
    fn bisect(&self, bisect: BisectId) -> Result<BisectRecord, StoreError> {
        self.store().bisect(bisect)
    }
    fn latest_bisect(&self) -> Result<Option<BisectRecord>, StoreError> {
        self.store().latest_bisect()
    }
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
