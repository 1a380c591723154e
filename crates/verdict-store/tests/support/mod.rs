//! One store test body, two backends: `Backend` is a fresh store of either
//! kind (a SQLite file in a temporary directory, or a database in a
//! throwaway PostgreSQL cluster started for the test and stopped when the
//! backend is dropped), and `on_both_backends!` turns each body into a
//! `sqlite` and a `postgres` test. Must not share a store between tests.

#![allow(dead_code)]

pub mod rows;

use std::path::PathBuf;

use verdict_store::{Database, Location};
use verdict_testkit::postgres::PostgresServer;

pub struct Backend {
    pub location: Location,
    pub server: Option<PostgresServer>,
    pub directory: tempfile::TempDir,
}

impl Backend {
    pub fn sqlite() -> Backend {
        let directory = tempfile::tempdir().unwrap();
        Backend {
            location: Location::Sqlite(directory.path().join("verdict.db")),
            server: None,
            directory,
        }
    }

    /// `None` when PostgreSQL is missing and VERDICT_TEST_ALLOW_MISSING=1.
    pub fn postgres() -> Option<Backend> {
        let server = PostgresServer::start()?;
        let url = server.create_database("verdict");
        Some(Backend {
            location: Location::Postgres(url),
            server: Some(server),
            directory: tempfile::tempdir().unwrap(),
        })
    }

    /// A new connection to the store (the store persists across opens).
    pub fn open(&self) -> Database {
        Database::open(&self.location).expect("open store")
    }

    /// Takes the store back from schema 15 to 14: without the placement
    /// column and the checks of the stored words.
    pub fn undo_migration_15(&self) {
        match self.sqlite_path() {
            Some(_) => {
                for trigger in [
                    "runs_words_insert",
                    "runs_words_update",
                    "boots_status_insert",
                    "boots_status_update",
                    "bisects_status_insert",
                    "bisects_status_update",
                    "work_blocks_state_insert",
                    "work_blocks_state_update",
                ] {
                    self.raw_rows(&format!("DROP TRIGGER {trigger}"));
                }
            }
            None => {
                for (table, constraint) in [
                    ("runs", "runs_kind"),
                    ("runs", "runs_status"),
                    ("boots", "boots_status"),
                    ("bisects", "bisects_status"),
                    ("work_blocks", "work_blocks_state"),
                ] {
                    self.raw_rows(&format!("ALTER TABLE {table} DROP CONSTRAINT {constraint}"));
                }
            }
        }
        self.raw_rows("ALTER TABLE runs DROP COLUMN placement");
    }

    /// How errors name the store: the path, or the URL.
    pub fn name(&self) -> String {
        self.location.redacted()
    }

    pub fn sqlite_path(&self) -> Option<PathBuf> {
        match &self.location {
            Location::Sqlite(path) => Some(path.clone()),
            Location::Postgres(_) => None,
        }
    }

    /// Rows of a query run outside verdict, each as its columns joined by
    /// `|` (what `psql -A -t` prints), to look at what is stored.
    pub fn raw_rows(&self, sql: &str) -> Vec<String> {
        match (&self.location, &self.server) {
            (Location::Sqlite(path), _) => {
                let connection = rusqlite::Connection::open(path).unwrap();
                let mut statement = connection.prepare(sql).unwrap();
                let columns = statement.column_count();
                statement
                    .query_map([], |row| {
                        Ok((0..columns)
                            .map(|index| match row.get_ref(index).unwrap() {
                                rusqlite::types::ValueRef::Null => String::new(),
                                rusqlite::types::ValueRef::Integer(value) => value.to_string(),
                                rusqlite::types::ValueRef::Real(value) => value.to_string(),
                                rusqlite::types::ValueRef::Text(text) => {
                                    String::from_utf8_lossy(text).into_owned()
                                }
                                rusqlite::types::ValueRef::Blob(_) => "<blob>".to_string(),
                            })
                            .collect::<Vec<_>>()
                            .join("|"))
                    })
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap()
            }
            (Location::Postgres(_), Some(server)) => server
                .psql("verdict", sql)
                .lines()
                .map(str::to_string)
                .collect(),
            (Location::Postgres(_), None) => unreachable!("a postgres backend has its server"),
        }
    }
}

/// `on_both_backends! { fn name(backend) { body } ... }`: a module `name`
/// with tests `sqlite` and `postgres` running the body on each.
#[macro_export]
macro_rules! on_both_backends {
    ($($(#[$meta:meta])* fn $name:ident($backend:ident) $body:block)*) => {$(
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            fn body($backend: &$crate::support::Backend) $body

            #[test]
            fn sqlite() {
                body(&$crate::support::Backend::sqlite());
            }

            #[test]
            fn postgres() {
                let Some(backend) = $crate::support::Backend::postgres() else {
                    return;
                };
                body(&backend);
            }
        }
    )*};
}
