//! The store's error type. Messages are lowercase fragments that read after
//! "failed to" and name the database path (and the run, bisection or sample)
//! so the binary can show them as they are. Must not print or exit.

use std::path::PathBuf;
use verdict_model::RunId;

use crate::store::BisectId;

/// Everything that can go wrong reading or writing the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("open database {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    #[error("open database {path}: there is no such file; `verdict run` creates it")]
    Missing { path: PathBuf },

    #[error(
        "open database {path}: it has schema version {found}, newer than this verdict \
         (knows up to {known}); upgrade verdict"
    )]
    NewerSchema {
        path: PathBuf,
        found: i64,
        known: i64,
    },

    #[error("open database {path}: {reason}; it is not a verdict database")]
    NotVerdict { path: PathBuf, reason: String },

    #[error("migrate database {path} to schema version {version}: {source}")]
    Migrate {
        path: PathBuf,
        version: i64,
        #[source]
        source: rusqlite::Error,
    },

    #[error("find run {run}: no run {run} in {path}; `verdict runs` lists them")]
    UnknownRun { path: PathBuf, run: RunId },

    #[error("find bisection {bisect}: no bisection {bisect} in {path}")]
    UnknownBisect { path: PathBuf, bisect: BisectId },

    #[error(
        "store sample {sequence} of run {run} in {path}: a sample with that sequence is \
         already stored (a sample is never stored twice)"
    )]
    DuplicateSample {
        path: PathBuf,
        run: RunId,
        sequence: u32,
    },

    #[error(
        "store event {sequence} of bisection {bisect} in {path}: an event with that \
         sequence is already stored"
    )]
    DuplicateBisectEvent {
        path: PathBuf,
        bisect: BisectId,
        sequence: u32,
    },

    #[error("store {what} in {path}: {reason}")]
    InvalidValue {
        path: PathBuf,
        what: String,
        reason: String,
    },

    #[error("read {what} from {path}: {reason} (the database was changed outside verdict?)")]
    Corrupt {
        path: PathBuf,
        what: String,
        reason: String,
    },

    #[error("open database {location}: {reason}")]
    PostgresOpen { location: String, reason: String },

    #[error(
        "open database {location}: cannot connect: {}",
        postgres_message(source)
    )]
    PostgresConnect {
        location: String,
        #[source]
        source: postgres::Error,
    },

    #[error(
        "migrate database {location} to schema version {version}: {}",
        postgres_message(source)
    )]
    PostgresMigrate {
        location: String,
        version: i64,
        #[source]
        source: postgres::Error,
    },

    #[error("{operation} in {location}: {}", postgres_message(source))]
    Postgres {
        /// The URL, its password redacted.
        location: String,
        operation: String,
        #[source]
        source: postgres::Error,
    },

    #[error(
        "store a sample of block {block} of run {run} in {location}: {reason}; this worker \
         stops measuring it"
    )]
    LostClaim {
        location: String,
        run: RunId,
        block: u32,
        reason: String,
    },

    #[error(
        "share the work of {path}: a SQLite file cannot be shared between controllers; use a \
         PostgreSQL store (--db postgres://…)"
    )]
    NeedsPostgres { path: PathBuf },

    #[error("{operation} in {path}: {source}")]
    Sql {
        path: PathBuf,
        operation: String,
        #[source]
        source: rusqlite::Error,
    },
}

impl StoreError {
    /// Whether this is the PostgreSQL server going away or not being
    /// reachable (shut down, restarting, the connection closed): after a
    /// reconnect the same request may succeed. Never true for SQLite.
    pub fn is_connection_lost(&self) -> bool {
        match self {
            StoreError::Postgres { source, .. }
            | StoreError::PostgresConnect { source, .. }
            | StoreError::PostgresMigrate { source, .. } => connection_lost(source),
            _ => false,
        }
    }
}

/// The server shut down or restarted, or the connection is gone.
fn connection_lost(error: &postgres::Error) -> bool {
    use postgres::error::SqlState;
    if error.is_closed() {
        return true;
    }
    if let Some(code) = error.code() {
        return [
            SqlState::ADMIN_SHUTDOWN,
            SqlState::CRASH_SHUTDOWN,
            SqlState::CANNOT_CONNECT_NOW,
            SqlState::CONNECTION_EXCEPTION,
            SqlState::CONNECTION_FAILURE,
            SqlState::SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION,
        ]
        .contains(code);
    }
    // No server answer: an I/O error (refused, reset, the socket gone).
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if cause.is::<std::io::Error>() {
            return true;
        }
        source = cause.source();
    }
    false
}

/// A PostgreSQL error with the server's message (`db error` alone says
/// nothing): "db error: ERROR: permission denied for table runs".
pub(crate) fn postgres_message(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(database) => format!("{error}: {}: {}", database.severity(), database.message()),
        None => match std::error::Error::source(error) {
            Some(source) => format!("{error}: {source}"),
            None => error.to_string(),
        },
    }
}
