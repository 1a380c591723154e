//! Adaptive stopping as a run records it: the procedure the run stops with
//! and where each comparison stood at the run's last look. The engine
//! writes these and the reports read them back through the store, typed:
//! the serde names are the fields and values the store has always kept
//! (`state` is `continue`, `decided` or `cap`; `verdict` is a `Verdict`).
//! Must not decide anything: verdict-stats' sequential designs do.

use serde::{Deserialize, Serialize};
pub use verdict_stats::verdict::Verdict;

/// Where a comparison stands after a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ComparisonState {
    /// Not decided: another block runs.
    Continue,
    /// The interval reached a verdict region.
    Decided,
    /// The cap was reached without a verdict.
    Cap,
}

impl ComparisonState {
    /// Its name in JSON and text output.
    pub const fn as_str(self) -> &'static str {
        match self {
            ComparisonState::Continue => "continue",
            ComparisonState::Decided => "decided",
            ComparisonState::Cap => "cap",
        }
    }
}

/// The state of one comparison after a look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ComparisonStatus {
    pub factor: String,
    pub baseline_cell: usize,
    pub candidate_cell: usize,
    pub baseline_label: String,
    pub candidate_label: String,
    pub state: ComparisonState,
    /// `regression`, `improvement` or `equivalent` when decided.
    pub verdict: Option<Verdict>,
    pub runs: usize,
    pub estimate: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub confidence: Option<f64>,
    /// Without a cap: runs per cell at which the comparison would reach
    /// the information its threshold needs, at the precision seen so far.
    #[serde(default)]
    pub projected_runs: Option<usize>,
}

impl ComparisonStatus {
    /// The verdict's name when decided, else the state's (`continue`,
    /// `cap`).
    pub fn outcome(&self) -> &'static str {
        self.verdict
            .map_or(self.state.as_str(), |verdict| verdict.as_str())
    }
}

/// What a run recorded about its adaptive stopping; empty for a run with a
/// fixed number of iterations.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AdaptiveRecord {
    /// The design, as `AdaptivePlan::describe` words it (recorded when the
    /// run starts).
    pub procedure: Option<String>,
    /// Every comparison at the run's last look (recorded when the run
    /// ends).
    pub decisions: Vec<ComparisonStatus>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON the engine stored as the `decisions` annotation before the
    /// adaptive state had its own table reads back as the typed record.
    #[test]
    fn the_old_annotation_json_reads_as_a_status() {
        let stored = r#"{"baseline_cell":0,"baseline_label":"variant=1.0","candidate_cell":1,"candidate_label":"variant=1.5","confidence":null,"estimate":0.48,"factor":"variant","high":null,"low":null,"projected_runs":null,"runs":4,"state":"cap","verdict":null}"#;
        let status: ComparisonStatus = serde_json::from_str(stored).unwrap();
        assert_eq!(status.state, ComparisonState::Cap);
        assert_eq!(status.outcome(), "cap");
        let decided = stored
            .replace(r#""state":"cap""#, r#""state":"decided""#)
            .replace(r#""verdict":null"#, r#""verdict":"equivalent""#);
        let status: ComparisonStatus = serde_json::from_str(&decided).unwrap();
        assert_eq!(status.verdict, Some(Verdict::Equivalent));
        assert_eq!(status.outcome(), "equivalent");
        let round_trip: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&status).unwrap()).unwrap();
        assert_eq!(
            round_trip,
            serde_json::from_str::<serde_json::Value>(&decided).unwrap()
        );
        assert!(serde_json::from_str::<ComparisonStatus>(&stored.replace("cap", "maybe")).is_err());
    }
}
