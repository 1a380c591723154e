//! `verdict plan --format json` (`verdict.plan/v1`): the runs per cell
//! each design needs (fixed, adaptive with and without a cap,
//! block-paired), with their expected wall time. Plain data built by the
//! command from the planner's figures; its keys print in alphabetical
//! order (see [`crate::schema::sorted`]).

use schemars::JsonSchema;
use serde::Serialize;

/// The schema of a plan.
pub const PLAN_SCHEMA: &str = "verdict.plan/v1";

/// A whole plan.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlanDocument {
    pub schema: &'static str,
    /// Where the noise came from (`--cv`, or the pilot run).
    pub source: String,
    pub cv: f64,
    pub threshold: f64,
    /// The family's α, before the split over `comparisons`.
    pub alpha: f64,
    pub comparisons: usize,
    /// The level each comparison is planned at (α / comparisons).
    pub level: f64,
    pub power: f64,
    pub cells: usize,
    pub seconds_per_iteration: f64,
    pub fixed: FixedPlan,
    pub adaptive: AdaptivePlan,
    pub adaptive_without_cap: UncappedPlan,
    pub paired: PairedPlan,
}

/// The fixed design.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FixedPlan {
    pub runs_per_cell: usize,
    /// The 80% range of the runs over the spread's uncertainty.
    pub range: [usize; 2],
    pub wall_hours: f64,
}

/// The adaptive design with a cap.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AdaptivePlan {
    pub procedure: String,
    pub method: String,
    pub cap_per_cell: usize,
    pub if_change_is_threshold: AtThreshold,
    pub if_no_change: NoChange,
    /// Monte-Carlo trials per line (0: not simulated).
    pub trials: usize,
    pub monte_carlo: Option<MonteCarloCheck>,
}

/// The adaptive design without a cap.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct UncappedPlan {
    pub procedure: String,
    pub method: String,
    pub planned_end_if_no_change: usize,
    pub if_change_is_threshold: AtThreshold,
    pub if_no_change: NoChange,
}

/// A design's figures if the change is the threshold.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AtThreshold {
    pub mean_runs: f64,
    pub p95_runs: usize,
    pub power: f64,
    pub wall_hours: f64,
}

/// A design's figures if nothing changed.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct NoChange {
    pub mean_runs: f64,
    pub p95_runs: usize,
    pub equivalent: f64,
    pub false_alarms: f64,
    pub wall_hours: f64,
}

/// The adaptive figures checked by simulation (`--trials`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MonteCarloCheck {
    pub if_change_is_threshold: SimulatedAtThreshold,
    pub if_no_change: SimulatedNoChange,
}

/// Simulated figures if the change is the threshold.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SimulatedAtThreshold {
    pub mean_runs: f64,
    pub p95_runs: usize,
    pub power: f64,
}

/// Simulated figures if nothing changed.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SimulatedNoChange {
    pub mean_runs: f64,
    pub p95_runs: usize,
    pub equivalent: f64,
    pub false_alarms: f64,
}

/// The block-paired fixed design.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PairedPlan {
    pub correlation: f64,
    pub correlation_source: String,
    pub runs_per_cell: usize,
    pub wall_hours: f64,
}
