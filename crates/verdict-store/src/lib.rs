//! verdict-store: the only crate that knows SQL. The `Store` trait (runs,
//! samples, selections across runs, run annotations, bisection state) and
//! `SqliteStore`, its embedded SQLite implementation with numbered schema
//! migrations. Must not start processes, read clocks or print.

mod error;
mod history;
mod migrations;
mod sqlite;
mod store;

pub use error::StoreError;
pub use history::{HistoryCache, HistoryRun, HistorySelection};
pub use sqlite::SqliteStore;
pub use store::{
    BisectId, BisectRecord, BisectSummary, NewBisect, NewRun, RunRecord, RunSummary, SelectedValue,
    Selection, Store,
};
