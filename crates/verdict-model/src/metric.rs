//! Metrics: what to read from an iteration, where, and which way is better.
//! Declarations only; the extractors (the registry of metric parsers, with
//! their defaults) live in verdict-parse.

use serde::{Deserialize, Serialize};
pub use verdict_parse::{Extractor, Stream};
pub use verdict_stats::verdict::Better;

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
    pub(crate) fn default_direction(&self) -> Option<Better> {
        match self {
            Self::Builtin(_) => Some(Better::Lower),
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
    // Stored experiments spell it `higher_is_better`/`lower_is_better`.
    #[serde(with = "stored_better")]
    #[cfg_attr(feature = "schema", schemars(with = "stored_better::StoredBetter"))]
    pub direction: Better,
    pub unit: String,
    /// Practical threshold for this metric (fraction); falls back to the
    /// experiment's.
    pub threshold: Option<f64>,
}

/// `MetricSpec::direction` as every stored experiment spells it (the
/// store's runs, bisections, work): `higher_is_better`, `lower_is_better`.
/// The reports spell [`Better`] `higher`, `lower`; both are one type.
mod stored_better {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use verdict_stats::verdict::Better;

    #[derive(Serialize, Deserialize)]
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    #[serde(rename = "Direction", rename_all = "snake_case")]
    pub(super) enum StoredBetter {
        HigherIsBetter,
        LowerIsBetter,
    }

    pub(super) fn serialize<S: Serializer>(
        better: &Better,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match better {
            Better::Higher => StoredBetter::HigherIsBetter,
            Better::Lower => StoredBetter::LowerIsBetter,
        }
        .serialize(serializer)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Better, D::Error> {
        Ok(match StoredBetter::deserialize(deserializer)? {
            StoredBetter::HigherIsBetter => Better::Higher,
            StoredBetter::LowerIsBetter => Better::Lower,
        })
    }
}

impl MetricSpec {
    /// The default primary metric: wall time, lower is better.
    pub fn wall() -> MetricSpec {
        MetricSpec {
            name: "wall".to_string(),
            source: MetricSource::Builtin(Builtin::Wall),
            stream: Stream::Output,
            direction: Better::Lower,
            unit: "s".to_string(),
            threshold: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stored experiments keep the spelling every verdict version wrote.
    #[test]
    fn a_stored_direction_keeps_its_spelling() {
        let mut metric = MetricSpec::wall();
        let json = serde_json::to_value(&metric).unwrap();
        assert_eq!(json["direction"], "lower_is_better");
        metric.direction = Better::Higher;
        let json = serde_json::to_string(&metric).unwrap();
        assert!(json.contains(r#""direction":"higher_is_better""#), "{json}");
        let back: MetricSpec = serde_json::from_str(&json).unwrap();
        assert_eq!(back.direction, Better::Higher);
    }
}
