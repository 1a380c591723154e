//! Metrics: what to read from an iteration, where, and which way is better.
//! Declarations only; the extractors (the registry of metric parsers, with
//! their defaults) live in verdict-parse.

use serde::{Deserialize, Serialize};
pub use verdict_parse::{Direction, Extractor, Stream};

/// A value verdict measures itself, from the iteration's process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Builtin {
    /// Wall-clock seconds of the iteration (monotonic clock).
    Wall,
    /// User CPU seconds of the workload (wait4 rusage of that child).
    User,
    /// System CPU seconds.
    Sys,
    /// Maximum resident set size, KiB.
    MaxRss,
}

impl Builtin {
    /// Every built-in metric.
    pub const ALL: [Builtin; 4] = [Builtin::Wall, Builtin::User, Builtin::Sys, Builtin::MaxRss];

    /// Its name as a metric source, and the name of the metric that
    /// measures it unless the experiment names it otherwise: `wall`,
    /// `user`, `sys`, `maxrss`.
    pub const fn name(self) -> &'static str {
        match self {
            Builtin::Wall => "wall",
            Builtin::User => "user",
            Builtin::Sys => "sys",
            Builtin::MaxRss => "maxrss",
        }
    }

    /// The built-in metric called `name`, if any.
    pub fn from_name(name: &str) -> Option<Builtin> {
        Builtin::ALL
            .into_iter()
            .find(|builtin| builtin.name() == name)
    }
}

/// Where an iteration's metric comes from: measured by verdict, or parsed
/// from the workload's output by a verdict-parse extractor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum MetricSource {
    Builtin(Builtin),
    Parsed(Extractor),
}

impl MetricSource {
    pub(crate) fn default_direction(&self) -> Option<Direction> {
        match self {
            Self::Builtin(_) => Some(Direction::LowerIsBetter),
            Self::Parsed(extractor) => extractor.default_direction(),
        }
    }

    pub(crate) fn default_unit(&self) -> &str {
        match self {
            Self::Builtin(Builtin::MaxRss) => "KiB",
            Self::Builtin(_) => "s",
            Self::Parsed(extractor) => extractor.default_unit(),
        }
    }
}

/// A declared metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
            source: MetricSource::Builtin(Builtin::Wall),
            stream: Stream::Output,
            direction: Direction::LowerIsBetter,
            unit: "s".to_string(),
            threshold: None,
        }
    }
}
