//! `verdict bisect log --format json` (`verdict.bisect-log/v1`): a stored
//! bisection and every commit it measured, with its evidence and
//! decision. Plain data built by the command from the stored log; its
//! keys print in alphabetical order (see [`crate::schema::sorted`]).

use schemars::JsonSchema;
use serde::Serialize;
use verdict_bisect::Decision;

/// The schema of a bisection log.
pub const BISECT_LOG_SCHEMA: &str = "verdict.bisect-log/v1";

/// A stored bisection.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct BisectLogDocument {
    pub schema: &'static str,
    pub id: i64,
    pub repo: String,
    pub good: String,
    pub bad: String,
    pub status: String,
    /// When it started, as `YYYY-MM-DD HH:MM UTC`.
    pub started: String,
    pub total_runs: usize,
    /// Boots of a bisection on a VM target (null otherwise).
    pub total_boots: Option<usize>,
    pub failed_boots: Option<usize>,
    pub commits: Vec<BisectLogCommit>,
    /// The stored result, as the bisection recorded it (null while running).
    pub result: Option<serde_json::Value>,
    /// What the bisection's last run measured on (when recorded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_on: Option<crate::provenance::Provenance>,
}

/// One measured commit.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct BisectLogCommit {
    pub commit: String,
    pub subject: String,
    pub position: usize,
    pub n: usize,
    pub median: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// `good`, `bad`, `undecided` or `skipped` once classified.
    pub class: Option<String>,
    pub decision: Option<Decision>,
    pub boots: Option<usize>,
    pub failed_boots: Option<usize>,
}
