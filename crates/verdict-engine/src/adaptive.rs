//! Adaptive sampling for a run: after each block, every comparison the
//! experiment defines is looked at with the group-sequential design from
//! verdict-stats; a cell stays scheduled while any undecided comparison
//! needs it. Pure: samples in, decisions out. With k comparisons each uses
//! α/k (Bonferroni), so the run's family-wise false-alarm rate stays ≤ α.

use serde::Serialize;
use verdict_model::{ComparisonSpec, Direction, Experiment, Sample, SamplingMode};
use verdict_stats::sequential::{
    Better, LookOutcome, LookState, SequentialDesign, SequentialError, SequentialSettings,
};

/// The state of one comparison after a look.
#[derive(Debug, Clone, Serialize)]
pub struct ComparisonStatus {
    pub factor: String,
    pub baseline_cell: usize,
    pub candidate_cell: usize,
    pub baseline_label: String,
    pub candidate_label: String,
    /// `continue`, `decided` or `cap`.
    pub state: String,
    /// `regression`, `improvement` or `equivalent` when decided.
    pub verdict: Option<String>,
    pub runs: usize,
    pub estimate: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub confidence: Option<f64>,
}

/// The adaptive plan of a run: its design and comparisons.
#[derive(Debug)]
pub struct AdaptivePlan {
    design: SequentialDesign,
    comparisons: Vec<ComparisonSpec>,
    labels: Vec<String>,
    primary: String,
}

impl AdaptivePlan {
    /// `None` when the experiment samples a fixed number of iterations.
    pub fn for_experiment(
        experiment: &Experiment,
    ) -> Result<Option<AdaptivePlan>, SequentialError> {
        let SamplingMode::Adaptive { min, max } = experiment.sampling.mode else {
            return Ok(None);
        };
        let comparisons = experiment.comparisons();
        let primary = experiment.primary_metric();
        let better = match primary.direction {
            Direction::HigherIsBetter => Better::Higher,
            Direction::LowerIsBetter => Better::Lower,
        };
        let threshold = primary.threshold.unwrap_or(experiment.sampling.threshold);
        let mut settings = SequentialSettings::new(max as usize, threshold, better);
        settings.min = (min as usize).min(max as usize);
        settings.alpha = experiment.sampling.alpha / comparisons.len().max(1) as f64;
        let design = SequentialDesign::new(settings)?;
        Ok(Some(AdaptivePlan {
            design,
            comparisons,
            labels: experiment.cells().iter().map(|cell| cell.label()).collect(),
            primary: primary.name.clone(),
        }))
    }

    pub fn describe(&self) -> String {
        let family = if self.comparisons.len() > 1 {
            format!(
                " (each of {} comparisons at alpha/{})",
                self.comparisons.len(),
                self.comparisons.len()
            )
        } else {
            String::new()
        };
        format!("{}{family}", self.design.describe())
    }

    pub fn max_runs(&self) -> usize {
        self.design.settings().max
    }

    /// Looks at every comparison with the data samples of blocks before
    /// `before_block` (all when `None`).
    pub fn statuses(&self, samples: &[Sample], before_block: Option<u32>) -> Vec<ComparisonStatus> {
        let values = |cell: usize| -> Vec<f64> {
            samples
                .iter()
                .filter(|sample| {
                    sample.cell == cell
                        && sample.is_data()
                        && before_block.is_none_or(|block| sample.block < block)
                })
                .filter_map(|sample| sample.metrics.get(&self.primary).copied())
                .collect()
        };
        self.comparisons
            .iter()
            .map(|comparison| {
                let outcome = self.design.look(
                    &values(comparison.baseline_cell),
                    &values(comparison.candidate_cell),
                );
                status(comparison, &outcome, &self.labels)
            })
            .collect()
    }

    /// Cells still needed by an undecided comparison.
    pub fn active_cells(&self, statuses: &[ComparisonStatus]) -> Vec<usize> {
        let mut active: Vec<usize> = statuses
            .iter()
            .filter(|status| status.state == "continue")
            .flat_map(|status| [status.baseline_cell, status.candidate_cell])
            .collect();
        active.sort_unstable();
        active.dedup();
        active
    }
}

fn status(
    comparison: &ComparisonSpec,
    outcome: &LookOutcome,
    labels: &[String],
) -> ComparisonStatus {
    let (state, verdict) = match outcome.state {
        LookState::Continue => ("continue", None),
        LookState::Cap => ("cap", None),
        LookState::Decided { decision, .. } => (
            "decided",
            Some(
                serde_json::to_value(decision)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
            ),
        ),
    };
    let interval = outcome.shift.and_then(|shift| shift.interval);
    ComparisonStatus {
        factor: comparison.factor.clone(),
        baseline_cell: comparison.baseline_cell,
        candidate_cell: comparison.candidate_cell,
        baseline_label: labels[comparison.baseline_cell].clone(),
        candidate_label: labels[comparison.candidate_cell].clone(),
        state: state.to_string(),
        verdict,
        runs: outcome.runs,
        estimate: outcome.shift.map(|shift| shift.estimate),
        low: interval.map(|interval| interval.low),
        high: interval.map(|interval| interval.high),
        confidence: interval.map(|interval| interval.confidence),
    }
}
