//! `verdict runs --format json` (`verdict.runs/v1`): every stored run with
//! the host it ran on, the bisection it measured for and, for a detached
//! run, where its blocks were measured. Plain data built by the command
//! from the store's records; its keys print in alphabetical order (see
//! [`crate::schema::sorted`]).

use schemars::JsonSchema;
use serde::Serialize;

use verdict_model::Placement;

use crate::work::WorkSection;

/// The schema of a run listing.
pub const RUNS_SCHEMA: &str = "verdict.runs/v1";

/// The run listing.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RunsDocument {
    pub schema: &'static str,
    pub runs: Vec<RunEntry>,
}

/// One stored run.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RunEntry {
    pub id: i64,
    pub name: String,
    pub kind: String,
    pub status: String,
    /// Where the run measured: `local`, `hosts`, `vm` or `booted_host`.
    pub placement: Placement,
    pub planned: u64,
    /// Stored samples: data, failed and warmup.
    pub done: u64,
    pub failed: u64,
    pub started_at_ms: i64,
    pub finished_at_ms: Option<i64>,
    pub host: String,
    /// The bisection the run measured for, if any.
    pub bisect: Option<i64>,
    /// Where a detached run's blocks were measured (detached runs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work: Option<WorkSection>,
}
