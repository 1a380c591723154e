//! `verdict history --format json` (`verdict.history/v1`): the series of
//! one median per stored run (per host) or per CSV row, and its change
//! points. Plain data built by the command from the engine's answer; its
//! keys print in alphabetical order (see [`crate::schema::sorted`]).

use schemars::JsonSchema;
use serde::Serialize;
use verdict_stats::shift::Interval;

/// The schema of a history document.
pub const HISTORY_SCHEMA: &str = "verdict.history/v1";

/// A whole `verdict history` answer.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HistoryDocument {
    pub schema: &'static str,
    pub source: HistorySource,
    pub metric: String,
    /// The metric's unit (stored runs only: a CSV column has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// `time`, `commit` or `run` for stored runs; `time` or `row` for a file.
    pub by: String,
    pub settings: HistorySettings,
    /// Stored runs left out for want of a recorded commit (`--by commit`).
    pub runs_without_commit: usize,
    pub series: Vec<HistorySeries>,
}

/// Where the series came from.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum HistorySource {
    /// A CSV file's column.
    File { file: String, column: String },
    /// Stored runs: the selection as written and the experiment it names.
    Selection {
        selection: String,
        experiment: Option<String>,
    },
}

/// The change point method and its thresholds.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HistorySettings {
    pub window: usize,
    pub pvalue: f64,
    pub magnitude: f64,
    /// The method in words.
    pub method: String,
    /// `ranks` or `otava`.
    pub method_name: String,
}

/// One host's series (a file's: host null).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HistorySeries {
    pub host: Option<String>,
    pub points: Vec<HistoryPoint>,
    pub change_points: Vec<HistoryChange>,
    /// Points whose weak change points were reused from the store.
    pub reused_points: usize,
    /// Sliding windows examined (null for a file).
    pub windows_examined: Option<usize>,
}

/// One point of a series.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum HistoryPoint {
    /// A CSV row: its value and label.
    Row {
        index: usize,
        label: String,
        n: usize,
        median: f64,
    },
    /// One stored run, or a commit's consecutive runs pooled.
    Runs {
        index: usize,
        runs: Vec<i64>,
        started_at_ms: i64,
        commit: Option<String>,
        n: usize,
        median: f64,
        /// 95% distribution-free interval of the median; null below 6 values.
        interval: Option<Interval>,
    },
}

/// A change point: its figures and where it is.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HistoryChange {
    #[serde(flatten)]
    pub figures: ChangeFigures,
    #[serde(flatten)]
    pub at: ChangeAt,
}

/// What changed at a change point.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ChangeFigures {
    /// 0-based position of the first point of the new regime.
    pub index: usize,
    pub median_before: f64,
    pub median_after: f64,
    /// Hodges–Lehmann relative shift (`after/before − 1`); null for values ≤ 0.
    pub change: Option<f64>,
    pub interval: Option<Interval>,
    pub pvalue: f64,
    pub mean_before: f64,
    pub mean_after: f64,
    pub mean_change: f64,
    pub segment_start: usize,
    pub segment_end: usize,
}

/// Where a change point is: between two rows, or two stored points.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ChangeAt {
    Row {
        label: String,
        label_before: String,
    },
    Runs {
        /// The first run after the change, and the last before it.
        run: Option<i64>,
        run_before: Option<i64>,
        started_at_ms: i64,
        commit: Option<String>,
        commit_before: Option<String>,
    },
}
