//! Why a report could not be built: the options named something the run
//! does not have, or a comparison could not be computed. One typed error
//! for the builders of the report models (`RunReport::build`,
//! `PivotReport::build`, `ExplainReport::build`), with the messages the
//! CLI prints and the exit class they end a command with. Must not print
//! or decide an exit code itself (the class's code is verdict-model's
//! table).

use verdict_model::ExitClass;
use verdict_stats::StatsError;

/// Why a report model could not be built. The messages name the option and
/// what the run has instead (its metrics, factors, levels, comparisons).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnalysisError {
    /// `explain --q` outside (0, 1).
    #[error("--q {q} is not a rate between 0 and 1")]
    FalseDiscoveryRate { q: f64 },
    /// `explain --comparison` names none of the run's comparisons.
    #[error("the run has no comparison named `{wanted}`; its comparisons: {}", comparisons.join("; "))]
    UnknownComparison {
        wanted: String,
        comparisons: Vec<String>,
    },
    /// `--metric`/`--metrics` names a metric the run did not record.
    #[error("the run has no metric `{name}`; it has: {}", available.join(", "))]
    UnknownMetric {
        name: String,
        available: Vec<String>,
    },
    /// A pivot's `--metric` names none of the experiment's metrics.
    #[error("the run has no metric `{name}`")]
    UndeclaredMetric { name: String },
    /// `--rows`, `--cols` or `--ratio` names a factor the run does not have.
    #[error("the run has no factor `{name}`; it has: {}", factors.join(", "))]
    UnknownFactor { name: String, factors: Vec<String> },
    /// A pivot without `--cols` and no factor left for the columns.
    #[error("a pivot needs a column factor (--cols); the run has too few factors")]
    NoColumnFactor,
    /// `--ratio`'s factor is the column factor.
    #[error("--ratio must name a row factor, not the column factor")]
    RatioOnColumns,
    /// `--rows` and `--cols` are one factor.
    #[error("--rows and --cols name the same factor")]
    SameRowsAndColumns,
    /// `--ratio`'s factor is not compared (`compare = false`).
    #[error(
        "--ratio: factor `{factor}` has compare = false in the experiment; its levels are not compared"
    )]
    RatioNotCompared { factor: String },
    /// `--ratio A/B` names a level its factor does not have.
    #[error("--ratio: factor `{factor}` has no level `{level}`")]
    RatioLevel { factor: String, level: String },
    /// `--ratio` with another row factor of several levels.
    #[error("--ratio needs the row factors other than the ratio factor to have one level each")]
    RatioRowLevels,
    /// `--baseline` is not `FACTOR=LEVEL`.
    #[error("--baseline `{text}`: expected FACTOR=LEVEL")]
    BaselineSyntax { text: String },
    /// `--baseline`'s factor is not the column factor.
    #[error("--baseline names `{factor}` but the columns are `{columns}`")]
    BaselineFactor { factor: String, columns: String },
    /// `--baseline FACTOR=LEVEL` names a level the factor does not have.
    #[error("--baseline: factor `{factor}` has no level `{level}`")]
    BaselineLevel { factor: String, level: String },
    /// A comparison of the stored values could not be computed.
    #[error(transparent)]
    Stats(#[from] StatsError),
}

impl AnalysisError {
    /// The exit class this error ends a command with: every one is about
    /// the options or the run the user named.
    pub fn exit_class(&self) -> ExitClass {
        ExitClass::Input
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_joined_as_the_cli_prints_them() {
        let error = AnalysisError::UnknownMetric {
            name: "rss".into(),
            available: vec!["wall".into(), "sys".into()],
        };
        assert_eq!(
            error.to_string(),
            "the run has no metric `rss`; it has: wall, sys"
        );
        assert_eq!(error.exit_class(), ExitClass::Input);
        let error = AnalysisError::FalseDiscoveryRate { q: 1.5 };
        assert_eq!(error.to_string(), "--q 1.5 is not a rate between 0 and 1");
    }
}
