//! verdict-store: the only crate that knows SQL. The `Store` trait (runs,
//! samples, selections across runs, run annotations, adaptive state,
//! bisection state); `SqliteStore`, its embedded SQLite implementation
//! (and a read-only open for commands that only read); `PostgresStore`, the same on a shared
//! PostgreSQL database; both on one list of numbered schema migrations;
//! `Database`, whichever of the two `--db` names (`Location`); and
//! `overlap`: which runs measured at the same time on a host. Must not
//! start processes, read clocks or print.

mod adaptive;
mod boots;
mod builtin;
pub mod copy;
mod database;
mod details;
mod error;
mod filters;
#[doc(hidden)]
pub mod forward;
mod history;
mod identity;
pub mod location;
mod migrations;
pub mod overlap;
mod postgres;
mod postgres_boots;
mod postgres_details;
mod rows;
mod sqlite;
mod store;
pub mod work;

pub use copy::{CopiedRun, copy_run};
pub use database::Database;
pub use error::StoreError;
pub use history::{HistoryCache, HistoryRun, HistorySelection, HistoryStore};
pub use location::Location;
pub use postgres::PostgresStore;
pub use sqlite::{ReadOnly, SqliteStore};
pub use store::{
    BisectId, BisectRecord, BisectSummary, BootRow, DetailCounts, NewBisect, NewBoot, NewRun,
    RunRecord, RunSummary, RunTimes, SelectedValue, Selection, Store,
};
pub use work::{Claim, WorkBlock, WorkProgress, WorkStore};
