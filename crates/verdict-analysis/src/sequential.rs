//! `verdict compare --sequential`: each comparison replayed in order
//! through the adaptive procedure (verdict-stats `sequential`: the
//! planned-cap design with a cap, the information-based one without) and
//! the point where it stops. verdict-report renders the rows.

use schemars::JsonSchema;
use serde::Serialize;
use verdict_stats::sequential::{
    InformationDesign, InformationSettings, ReplayState, SequentialDesign, SequentialError,
    SequentialSettings, replay, replay_information,
};
use verdict_stats::verdict::{Magnitude, Verdict};

use crate::compare::ComparisonInput;

/// One comparison replayed: where the procedure stopped and what it said.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SequentialRow {
    pub name: String,
    pub available: usize,
    pub stopped_at: usize,
    pub looks: usize,
    pub state: ReplayState,
    pub verdict: Verdict,
    pub magnitude: Option<Magnitude>,
    pub delta: Option<f64>,
    pub delta_ci_low: Option<f64>,
    pub delta_ci_high: Option<f64>,
    pub confidence: Option<f64>,
    pub procedure: String,
    /// Out of data: runs per arm by which the design ends at the latest
    /// (its cap, or where the information-based design reaches its target
    /// at the precision seen so far), and that end's range over the
    /// spread's uncertainty (information-based design only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs_to_end: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs_to_end_range: Option<(usize, usize)>,
}

/// `verdict compare --sequential --format json` (`verdict.compare/v1`,
/// mode `sequential`). Its keys print in alphabetical order (see
/// [`crate::schema::sorted`]).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SequentialCompareReport {
    pub schema: &'static str,
    /// `sequential`.
    pub mode: &'static str,
    pub alpha: f64,
    pub comparisons: Vec<SequentialRow>,
    pub sources: Vec<crate::sources::Source>,
}

/// Replay every input; with `adjust`, each at alpha / k (Bonferroni over
/// the k comparisons). `max`: the cap on runs per arm (at least 2).
pub fn sequential_rows(
    inputs: &[ComparisonInput],
    max: Option<usize>,
    alpha: f64,
    adjust: bool,
) -> Result<Vec<SequentialRow>, SequentialError> {
    let family = if adjust { inputs.len().max(1) } else { 1 };
    let mut rows = Vec::new();
    for input in inputs {
        let available = input.baseline.len().min(input.candidate.len());
        // With a cap, the planned-cap design; without one, the design ends
        // at the information the threshold needs (docs/statistics.md).
        let outcome = match max {
            Some(max) => {
                let max = max.max(2);
                let mut settings = SequentialSettings::new(max, input.threshold, input.better);
                settings.alpha = alpha / family as f64;
                settings.min = settings.min.min(max);
                let design = SequentialDesign::new(settings)?;
                replay(&design, &input.baseline, &input.candidate)
            }
            None => {
                let mut settings = InformationSettings::new(input.threshold, input.better);
                settings.alpha = alpha / family as f64;
                let design = InformationDesign::new(settings)?;
                replay_information(&design, &input.baseline, &input.candidate)
            }
        };
        rows.push(SequentialRow {
            name: input.name.clone(),
            available,
            stopped_at: outcome.stopped_at,
            looks: outcome.looks,
            state: outcome.state,
            verdict: outcome
                .decision
                .map_or(Verdict::Inconclusive, Verdict::from),
            magnitude: outcome.magnitude,
            delta: outcome.estimate,
            delta_ci_low: outcome.interval.map(|interval| interval.low),
            delta_ci_high: outcome.interval.map(|interval| interval.high),
            confidence: outcome.nominal_confidence,
            procedure: outcome.procedure,
            runs_to_end: outcome.runs_to_end,
            runs_to_end_range: outcome.runs_to_end_range,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_stats::verdict::Better;

    #[test]
    fn a_large_slowdown_stops_early_as_a_regression() {
        let baseline: Vec<f64> = (0..40).map(|index| 100.0 + f64::from(index % 5)).collect();
        let input = ComparisonInput {
            name: "wall".to_string(),
            unit: "s".to_string(),
            better: Better::Lower,
            threshold: 0.02,
            power: verdict_stats::plan::DEFAULT_POWER,
            candidate: baseline.iter().map(|value| value * 1.5).collect(),
            baseline,
        };
        let rows = sequential_rows(&[input], Some(40), 0.05, true).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].verdict, Verdict::Regression);
        assert!(rows[0].stopped_at < 40, "{:?}", rows[0]);
    }
}
