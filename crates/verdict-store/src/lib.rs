//! verdict-store: the only crate that knows SQL. The `Store` trait (runs,
//! samples, selections across runs, run annotations, adaptive state,
//! bisection state, shared work, what samples captured besides their
//! metrics) implemented once (`queries.rs`) over a
//! `Backend` (`sql.rs`): `SqliteStore`, an embedded SQLite file (and a
//! read-only open for commands that only read), `PostgresStore`, a shared
//! PostgreSQL database, and `Database`, whichever of the two `--db` names
//! (`Location`), which hands each statement to the one it opened; both on
//! one list of numbered schema migrations; and `overlap`: which runs
//! measured at the same time on a host. Must not start processes, read
//! clocks or print.

mod adaptive;
mod boots;
mod builtin;
pub mod copy;
mod database;
mod details;
mod error;
mod filters;
mod history;
mod identity;
pub mod location;
mod migrations;
pub mod overlap;
mod postgres;
mod queries;
mod rows;
mod sql;
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
    BatchSample, BisectId, BisectRecord, BisectSummary, BootRow, DetailCounts, NewBisect, NewBoot,
    NewRun, RunRecord, RunSummary, RunTimes, SelectedValue, Selection, Store,
};
pub use work::{
    BlockRecord, BlockState, Claim, ClaimedBatch, ClaimedBlock, ClaimedWrite, Takeover, WorkBlock,
    WorkProgress, WorkRecord, WorkStore,
};
