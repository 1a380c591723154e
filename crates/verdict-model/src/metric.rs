//! Metrics: what to read from an iteration, where, and which way is better.
//! Declarations only; the extractors live in verdict-parse.

use serde::{Deserialize, Serialize};

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    HigherIsBetter,
    LowerIsBetter,
}

/// Where an iteration's metric comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "source")]
pub enum MetricSource {
    /// Wall-clock seconds of the iteration (monotonic clock).
    Wall,
    /// User CPU seconds of the workload process tree (wait4 rusage).
    User,
    /// System CPU seconds.
    Sys,
    /// Maximum resident set size, KiB.
    MaxRss,
    /// stress-ng `--metrics-brief`/`--metrics` table.
    StressNg {
        stressor: Option<String>,
        field: String,
    },
    /// stress-ng `--yaml FILE`.
    StressNgYaml {
        stressor: Option<String>,
        field: String,
    },
    /// `perf stat -x,` CSV.
    PerfStat { event: String },
    /// GNU `time -v`.
    TimeVerbose { field: String },
    /// POSIX `time -p` (or bash `time`).
    TimePosix { field: String },
    /// A regex with a named group `value` (or the first group).
    Regex { pattern: String },
    /// A JSON path into JSON output.
    JsonPath { path: String },
    /// The output is a single number.
    Number,
}

impl MetricSource {
    /// Measured by verdict itself rather than parsed from output.
    pub fn is_builtin(&self) -> bool {
        matches!(self, Self::Wall | Self::User | Self::Sys | Self::MaxRss)
    }

    pub(crate) fn default_direction(&self) -> Option<Direction> {
        match self {
            Self::Wall
            | Self::User
            | Self::Sys
            | Self::MaxRss
            | Self::TimeVerbose { .. }
            | Self::TimePosix { .. } => Some(Direction::LowerIsBetter),
            Self::StressNg { field, .. } | Self::StressNgYaml { field, .. } => {
                Some(if field.contains("time") && !field.contains("per-second") {
                    Direction::LowerIsBetter
                } else {
                    Direction::HigherIsBetter
                })
            }
            Self::PerfStat { .. } => Some(Direction::LowerIsBetter),
            Self::Regex { .. } | Self::JsonPath { .. } | Self::Number => None,
        }
    }

    pub(crate) fn default_unit(&self) -> &'static str {
        match self {
            Self::Wall | Self::User | Self::Sys => "s",
            Self::MaxRss => "KiB",
            Self::StressNg { field, .. } | Self::StressNgYaml { field, .. } => {
                if field.contains("per-second") {
                    "bogo-ops/s"
                } else if field.contains("time") {
                    "s"
                } else {
                    "bogo-ops"
                }
            }
            Self::PerfStat { .. } => "count",
            Self::TimeVerbose { .. } | Self::TimePosix { .. } => "",
            Self::Regex { .. } | Self::JsonPath { .. } | Self::Number => "",
        }
    }
}

/// Which output a parsed metric is read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    Stdout,
    Stderr,
    /// stdout, then stderr if nothing was found there.
    Output,
    /// A file the workload writes (path relative to the working directory;
    /// placeholders substituted).
    File(String),
}

/// A declared metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricSpec {
    pub name: String,
    pub source: MetricSource,
    pub stream: Stream,
    pub direction: Direction,
    pub unit: String,
    /// Practical threshold for this metric (fraction); falls back to the
    /// experiment's.
    pub threshold: Option<f64>,
}

impl MetricSpec {
    /// The default primary metric: wall time, lower is better.
    pub fn wall() -> MetricSpec {
        MetricSpec {
            name: "wall".to_string(),
            source: MetricSource::Wall,
            stream: Stream::Output,
            direction: Direction::LowerIsBetter,
            unit: "s".to_string(),
            threshold: None,
        }
    }
}
