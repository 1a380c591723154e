//! What the store's queries need from a database, the same for SQLite and
//! PostgreSQL: `Backend` (run a statement, read its rows one at a time, a
//! transaction, how messages name the store), `Param` (a value bound to a
//! `$N` parameter: SQLite reads `$N` as a named parameter and the store
//! binds it by that name, PostgreSQL as a positional one), `Row` (reading
//! the columns of a result row of either) and `RawError` (a driver's
//! error, with the constraint it violated). Everything written in SQL once
//! (`queries.rs`, `boots.rs`, `history.rs`, ...) runs on either through
//! these. Must not hold queries of verdict's tables.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::PathBuf;

use verdict_model::{BootStatus, Cell, Environment, Placement, RunId, RunKind, RunStatus};

use crate::StoreError;
use crate::store::BisectId;

/// A value bound to one `$N` parameter.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Param<'a> {
    Integer(i64),
    OptionalInteger(Option<i64>),
    Real(f64),
    Text(&'a str),
    OptionalText(Option<&'a str>),
    Boolean(bool),
    /// A PostgreSQL `TEXT[]` (shared work's batched rows; not in SQLite).
    Texts(&'a [String]),
    /// A PostgreSQL `DOUBLE PRECISION[]`.
    Reals(&'a [f64]),
    /// A PostgreSQL `BIGINT[]` (a profile's symbols' weights; not in SQLite).
    Integers(&'a [i64]),
    /// A BLOB (SQLite) or BYTEA (PostgreSQL): a profile's stacks.
    Bytes(&'a [u8]),
    OptionalBytes(Option<&'a [u8]>),
}

impl From<i64> for Param<'_> {
    fn from(value: i64) -> Self {
        Param::Integer(value)
    }
}

impl From<u32> for Param<'_> {
    fn from(value: u32) -> Self {
        Param::Integer(i64::from(value))
    }
}

impl From<Option<i64>> for Param<'_> {
    fn from(value: Option<i64>) -> Self {
        Param::OptionalInteger(value)
    }
}

impl From<Option<i32>> for Param<'_> {
    fn from(value: Option<i32>) -> Self {
        Param::OptionalInteger(value.map(i64::from))
    }
}

impl From<f64> for Param<'_> {
    fn from(value: f64) -> Self {
        Param::Real(value)
    }
}

impl From<bool> for Param<'_> {
    fn from(value: bool) -> Self {
        Param::Boolean(value)
    }
}

/// The stored words (`runs.kind`, `runs.status`, `runs.placement`,
/// `boots.status`) bound as their one spelling.
macro_rules! spelled_params {
    ($($type:ty),*) => {$(
        impl From<$type> for Param<'_> {
            fn from(value: $type) -> Self {
                Param::Text(value.as_str())
            }
        }
    )*};
}

spelled_params!(RunKind, RunStatus, Placement, BootStatus);

impl<'a> From<&'a str> for Param<'a> {
    fn from(value: &'a str) -> Self {
        Param::Text(value)
    }
}

impl<'a> From<&'a String> for Param<'a> {
    fn from(value: &'a String) -> Self {
        Param::Text(value)
    }
}

impl<'a> From<Option<&'a str>> for Param<'a> {
    fn from(value: Option<&'a str>) -> Self {
        Param::OptionalText(value)
    }
}

impl<'a> From<&'a Option<String>> for Param<'a> {
    fn from(value: &'a Option<String>) -> Self {
        Param::OptionalText(value.as_deref())
    }
}

impl<'a> From<&'a [String]> for Param<'a> {
    fn from(value: &'a [String]) -> Self {
        Param::Texts(value)
    }
}

impl<'a> From<&'a [f64]> for Param<'a> {
    fn from(value: &'a [f64]) -> Self {
        Param::Reals(value)
    }
}

impl<'a> From<&'a [i64]> for Param<'a> {
    fn from(value: &'a [i64]) -> Self {
        Param::Integers(value)
    }
}

impl<'a> From<&'a [u8]> for Param<'a> {
    fn from(value: &'a [u8]) -> Self {
        Param::Bytes(value)
    }
}

impl<'a> From<Option<&'a [u8]>> for Param<'a> {
    fn from(value: Option<&'a [u8]>) -> Self {
        Param::OptionalBytes(value)
    }
}

/// `&[Param]` from values of any type a `Param` is made from.
macro_rules! params {
    ($($value:expr),* $(,)?) => {
        &[$($crate::sql::Param::from($value)),*][..]
    };
}
pub(crate) use params;

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, Value, ValueRef};
        Ok(match *self {
            Param::Integer(value) => ToSqlOutput::Owned(Value::Integer(value)),
            Param::OptionalInteger(value) => match value {
                Some(value) => ToSqlOutput::Owned(Value::Integer(value)),
                None => ToSqlOutput::Owned(Value::Null),
            },
            Param::Real(value) => ToSqlOutput::Owned(Value::Real(value)),
            Param::Text(text) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
            Param::OptionalText(text) => match text {
                Some(text) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
                None => ToSqlOutput::Owned(Value::Null),
            },
            Param::Boolean(value) => ToSqlOutput::Owned(Value::Integer(i64::from(value))),
            Param::Bytes(bytes) => ToSqlOutput::Borrowed(ValueRef::Blob(bytes)),
            Param::OptionalBytes(bytes) => match bytes {
                Some(bytes) => ToSqlOutput::Borrowed(ValueRef::Blob(bytes)),
                None => ToSqlOutput::Owned(Value::Null),
            },
            Param::Texts(_) | Param::Reals(_) | Param::Integers(_) => {
                return Err(rusqlite::Error::ToSqlConversionFailure(
                    "an array parameter has no SQLite form".into(),
                ));
            }
        })
    }
}

impl Param<'_> {
    /// This value for the postgres crate.
    pub(crate) fn postgres(&self) -> &(dyn postgres::types::ToSql + Sync) {
        match self {
            Param::Integer(value) => value,
            Param::OptionalInteger(value) => value,
            Param::Real(value) => value,
            Param::Text(text) => text,
            Param::OptionalText(text) => text,
            Param::Boolean(value) => value,
            Param::Texts(texts) => texts,
            Param::Reals(values) => values,
            Param::Integers(values) => values,
            Param::Bytes(bytes) => bytes,
            Param::OptionalBytes(bytes) => bytes,
        }
    }
}

/// A constraint a write violated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Violation {
    /// A primary key or unique index: the row is already there.
    Unique,
    /// A foreign key: the row it refers to is not there.
    ForeignKey,
}

/// A driver's error.
#[derive(Debug)]
pub(crate) enum RawError {
    Sqlite(rusqlite::Error),
    Postgres(postgres::Error),
}

impl From<rusqlite::Error> for RawError {
    fn from(error: rusqlite::Error) -> Self {
        RawError::Sqlite(error)
    }
}

impl From<postgres::Error> for RawError {
    fn from(error: postgres::Error) -> Self {
        RawError::Postgres(error)
    }
}

impl RawError {
    /// The constraint the statement violated, if that is why it failed.
    pub(crate) fn violation(&self) -> Option<Violation> {
        match self {
            RawError::Sqlite(rusqlite::Error::SqliteFailure(failure, _))
                if failure.code == rusqlite::ErrorCode::ConstraintViolation =>
            {
                match failure.extended_code {
                    rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                    | rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE => Some(Violation::Unique),
                    rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY => Some(Violation::ForeignKey),
                    _ => None,
                }
            }
            RawError::Sqlite(_) => None,
            RawError::Postgres(error) => match error.code() {
                Some(code) if *code == postgres::error::SqlState::UNIQUE_VIOLATION => {
                    Some(Violation::Unique)
                }
                Some(code) if *code == postgres::error::SqlState::FOREIGN_KEY_VIOLATION => {
                    Some(Violation::ForeignKey)
                }
                _ => None,
            },
        }
    }

    /// The store's error for this failure of `operation` in the store
    /// named `name`.
    pub(crate) fn into_store(self, name: PathBuf, operation: &str) -> StoreError {
        match self {
            RawError::Sqlite(source) => StoreError::Sql {
                path: name,
                operation: operation.to_string(),
                source,
            },
            RawError::Postgres(source) => StoreError::Postgres {
                location: name.display().to_string(),
                operation: operation.to_string(),
                source,
            },
        }
    }
}

/// One result row of either backend.
#[derive(Clone, Copy)]
pub(crate) enum Row<'a> {
    Sqlite(&'a rusqlite::Row<'a>),
    Postgres(&'a postgres::Row),
}

/// `Row`'s getters: each reads column `index` as its type in both
/// backends.
macro_rules! getters {
    ($($(#[$doc:meta])* $name:ident -> $type:ty;)*) => {$(
        $(#[$doc])*
        pub(crate) fn $name(&self, index: usize) -> Result<$type, RawError> {
            match self {
                Row::Sqlite(row) => row.get(index).map_err(RawError::Sqlite),
                Row::Postgres(row) => row.try_get(index).map_err(RawError::Postgres),
            }
        }
    )*};
}

impl Row<'_> {
    getters! {
        integer -> i64;
        optional_integer -> Option<i64>;
        real -> f64;
        text -> String;
        optional_text -> Option<String>;
        /// A flag: SQLite's 0/1 integer, PostgreSQL's BOOLEAN.
        boolean -> bool;
        /// A BLOB (SQLite) or BYTEA (PostgreSQL).
        bytes -> Vec<u8>;
    }
}

/// How the two SQL dialects differ where one text cannot serve both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// The run's kernel release from its JSON `environment_start`.
    pub(crate) fn kernel_release(self) -> &'static str {
        match self {
            Dialect::Sqlite => "json_extract(environment_start, '$.kernel_release')",
            Dialect::Postgres => "(environment_start::jsonb ->> 'kernel_release')",
        }
    }

    /// ` FOR UPDATE` where rows can be locked (PostgreSQL); SQLite's
    /// writer holds the whole database.
    pub(crate) fn lock_rows(self) -> &'static str {
        match self {
            Dialect::Sqlite => "",
            Dialect::Postgres => " FOR UPDATE",
        }
    }
}

/// Hands one row to `each_row_raw`'s `each`: `Continue` to read the next
/// row, or `Break` with what the query's reading ends with (`each` broke
/// off, or failed).
pub(crate) fn visit(
    each: &mut dyn FnMut(Row<'_>) -> Result<ControlFlow<()>, StoreError>,
    row: Row<'_>,
) -> ControlFlow<Result<(), StoreError>> {
    match each(row) {
        Ok(ControlFlow::Continue(())) => ControlFlow::Continue(()),
        Ok(ControlFlow::Break(())) => ControlFlow::Break(Ok(())),
        Err(error) => ControlFlow::Break(Err(error)),
    }
}

/// A connection to a store of either kind: statements, rows one at a time,
/// transactions, and how its messages name it. The store's queries are
/// written once against this trait (`impl<B: Backend> Store for B`).
pub(crate) trait Backend {
    /// The SQLite file, or the PostgreSQL URL with its password redacted.
    fn name(&self) -> PathBuf;

    fn dialect(&self) -> Dialect;

    /// Runs one statement; how many rows it changed.
    fn execute_raw(&self, sql: &str, parameters: &[Param<'_>]) -> Result<u64, RawError>;

    /// Calls `each` with every row of `sql`, in order, as the rows arrive
    /// (memory does not grow with the rows), until it breaks. `each` must
    /// not use the store: the connection is busy with the query.
    fn each_row_raw(
        &self,
        sql: &str,
        parameters: &[Param<'_>],
        each: &mut dyn FnMut(Row<'_>) -> Result<ControlFlow<()>, StoreError>,
    ) -> Result<Result<(), StoreError>, RawError>;

    /// Runs `body` in one transaction, committed when it returns `Ok` and
    /// rolled back otherwise (SQLite takes the write lock at the start).
    fn transaction<T>(
        &self,
        operation: &str,
        body: impl FnOnce() -> Result<T, StoreError>,
    ) -> Result<T, StoreError>;

    /// Cells of runs this connection stored or checked, so a sample's
    /// write skips them (one statement per sample).
    fn known_cells(&self) -> &RefCell<HashMap<(i64, i64), Cell>>;

    /// Runs one statement; how many rows it changed.
    fn execute(
        &self,
        operation: &str,
        sql: &str,
        parameters: &[Param<'_>],
    ) -> Result<u64, StoreError> {
        self.execute_raw(sql, parameters)
            .map_err(|error| error.into_store(self.name(), operation))
    }

    /// Calls `each` with every row of `sql` as it arrives.
    fn each_row(
        &self,
        operation: &str,
        sql: &str,
        parameters: &[Param<'_>],
        each: &mut dyn FnMut(Row<'_>) -> Result<ControlFlow<()>, StoreError>,
    ) -> Result<(), StoreError> {
        self.each_row_raw(sql, parameters, each)
            .map_err(|error| error.into_store(self.name(), operation))?
    }

    /// Every row of `sql`, each decoded by `decode`.
    fn rows<T>(
        &self,
        operation: &str,
        sql: &str,
        parameters: &[Param<'_>],
        mut decode: impl FnMut(Row<'_>) -> Result<T, RawError>,
    ) -> Result<Vec<T>, StoreError> {
        let mut rows = Vec::new();
        let name = self.name();
        self.each_row(operation, sql, parameters, &mut |row| {
            rows.push(decode(row).map_err(|error| error.into_store(name.clone(), operation))?);
            Ok(ControlFlow::Continue(()))
        })?;
        Ok(rows)
    }

    /// The first row of `sql`, decoded, if there is one.
    fn first_row<T>(
        &self,
        operation: &str,
        sql: &str,
        parameters: &[Param<'_>],
        decode: impl FnMut(Row<'_>) -> Result<T, RawError>,
    ) -> Result<Option<T>, StoreError> {
        Ok(self
            .rows(operation, sql, parameters, decode)?
            .into_iter()
            .next())
    }

    fn corrupt(&self, what: &str, reason: impl std::fmt::Display) -> StoreError {
        StoreError::Corrupt {
            path: self.name(),
            what: what.to_string(),
            reason: reason.to_string(),
        }
    }

    fn invalid(&self, what: impl Into<String>, reason: impl Into<String>) -> StoreError {
        StoreError::InvalidValue {
            path: self.name(),
            what: what.into(),
            reason: reason.into(),
        }
    }

    fn unknown_run(&self, run: RunId) -> StoreError {
        StoreError::UnknownRun {
            path: self.name(),
            run,
        }
    }

    fn unknown_bisect(&self, bisect: BisectId) -> StoreError {
        StoreError::UnknownBisect {
            path: self.name(),
            bisect,
        }
    }

    /// An environment as JSON that reads back: serde_json writes a NaN
    /// (say, an unparsable load average) as `null`, which would make the
    /// run unreadable later, so it is refused now.
    fn environment_json(
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

    fn run_exists(&self, run: RunId) -> Result<(), StoreError> {
        let found = self.first_row(
            "look up a run",
            "SELECT 1 FROM runs WHERE id = $1",
            params![run.0],
            |_| Ok(()),
        )?;
        found.ok_or_else(|| self.unknown_run(run))
    }

    fn bisect_exists(&self, bisect: BisectId) -> Result<(), StoreError> {
        let found = self.first_row(
            "look up a bisection",
            "SELECT 1 FROM bisects WHERE id = $1",
            params![bisect.0],
            |_| Ok(()),
        )?;
        found.ok_or_else(|| self.unknown_bisect(bisect))
    }
}

/// Serializes a value the store itself controls; these types cannot fail to
/// serialize (no maps with non-string keys, no failing `Serialize`).
pub(crate) fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("plain data serializes to JSON")
}
