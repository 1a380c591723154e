//! verdict-store: the only crate that knows SQL. The `Store` trait (runs,
//! samples, selections across runs, run annotations, bisection state) and
//! `SqliteStore`, its embedded SQLite implementation with numbered schema
//! migrations (and a read-only open for commands that only read), and
//! `overlap`: which runs measured at the same time on a host. Must not
//! start processes, read clocks or print.

mod boots;
mod error;
mod history;
mod migrations;
pub mod overlap;
mod sqlite;
mod store;

pub use error::StoreError;
pub use history::{HistoryCache, HistoryRun, HistorySelection};
pub use sqlite::{ReadOnly, SqliteStore};
pub use store::{
    BisectId, BisectRecord, BisectSummary, BootRow, NewBisect, NewBoot, NewRun, RunRecord,
    RunSummary, RunTimes, SelectedValue, Selection, Store,
};
