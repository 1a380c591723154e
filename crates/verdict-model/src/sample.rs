//! Samples and runs as stored: one record per iteration, successful or not.

use crate::metric::Builtin;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Identifier of a stored run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunId(pub i64);

impl std::fmt::Display for RunId {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}", self.0)
    }
}

/// Lifecycle of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Complete,
    Interrupted,
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Complete => "complete",
            Self::Interrupted => "interrupted",
            Self::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<RunStatus> {
        match text {
            "running" => Some(Self::Running),
            "complete" => Some(Self::Complete),
            "interrupted" => Some(Self::Interrupted),
            "failed" => Some(Self::Failed),
            _ => None,
        }
    }
}

/// Why an iteration does not count as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Failure {
    /// e.g. "exit status 1", "timed out after 5s", "metric `bogo-ops/s`: no
    /// stress-ng metrics row for stressor `kill`".
    pub reason: String,
    /// The last lines of the iteration's output.
    pub output_tail: String,
}

/// One iteration, as recorded the moment it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Sample {
    /// Index of the cell in `Experiment::cells()`.
    pub cell: usize,
    /// Block (round) number, from 0.
    pub block: u32,
    /// Position in the run's schedule, from 0; unique within a run.
    pub sequence: u32,
    /// Warmup iterations are recorded but never used as data.
    pub warmup: bool,
    /// Start, milliseconds since the Unix epoch.
    pub started_at_ms: i64,
    pub wall_seconds: f64,
    pub user_seconds: f64,
    pub sys_seconds: f64,
    pub max_rss_kib: u64,
    /// Exit code when the process exited.
    pub exit_code: Option<i32>,
    /// Signal when the process was killed by one.
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// Every extracted metric by name (including the built-in ones).
    pub metrics: BTreeMap<String, f64>,
    pub failure: Option<Failure>,
    /// Metrics the tool could not measure in this iteration, with what it
    /// printed (`cycles`: perf printed `<not supported>`): missing values
    /// of those metrics only; the iteration still counts.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub missing: BTreeMap<String, String>,
    /// Processes of the iteration's process group still alive when its
    /// command exited, one name (`/proc/PID/comm`) per process.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leftovers: Vec<String>,
}

impl Sample {
    /// A successful, non-warmup iteration: counts as data.
    pub fn is_data(&self) -> bool {
        !self.warmup && self.failure.is_none()
    }

    /// The iteration's own measurement of a built-in metric: its wall,
    /// user or system seconds, or its maximum RSS in KiB.
    pub fn measured(&self, builtin: Builtin) -> f64 {
        match builtin {
            Builtin::Wall => self.wall_seconds,
            Builtin::User => self.user_seconds,
            Builtin::Sys => self.sys_seconds,
            Builtin::MaxRss => self.max_rss_kib as f64,
        }
    }

    /// The built-in metrics whose value in `metrics`, under the built-in's
    /// name, is bit for bit the iteration's own measurement: what a store
    /// may keep as a mark instead of a copy (`measured` gives it back).
    pub fn builtins_as_measured(&self) -> impl Iterator<Item = Builtin> + '_ {
        Builtin::ALL.into_iter().filter(|&builtin| {
            self.metrics
                .get(builtin.name())
                .is_some_and(|value| value.to_bits() == self.measured(builtin).to_bits())
        })
    }
}
