//! Adaptive sampling for a run: after each block, every comparison the
//! experiment defines is looked at with the group-sequential design from
//! verdict-stats; a cell stays scheduled while any undecided comparison
//! needs it. Pure: samples in, decisions out. With k comparisons each uses
//! α/k (Bonferroni), so the run's family-wise false-alarm rate stays ≤ α.
//! With a cap (`mode = "adaptive"`, `--until-decided -n N`) the planned-cap
//! design; without one (`--until-decided` alone) the information-based
//! design, which ends each comparison at the information its threshold
//! needs, estimated from the data (docs/statistics.md).

use verdict_model::{ComparisonSpec, Experiment, Sample, SamplingMode};
use verdict_stats::sequential::{
    InformationDesign, InformationSettings, LookOutcome, LookState, SequentialDesign,
    SequentialError, SequentialSettings,
};

pub use verdict_model::{ComparisonState, ComparisonStatus};

/// The design a run stops with.
#[derive(Debug)]
enum Design {
    Capped(SequentialDesign),
    Uncapped(InformationDesign),
}

/// The adaptive plan of a run: its design and comparisons.
#[derive(Debug)]
pub struct AdaptivePlan {
    design: Design,
    comparisons: Vec<ComparisonSpec>,
    labels: Vec<String>,
    primary: String,
}

impl AdaptivePlan {
    /// `None` when the experiment samples a fixed number of iterations.
    pub fn for_experiment(
        experiment: &Experiment,
    ) -> Result<Option<AdaptivePlan>, SequentialError> {
        let (min, max) = match experiment.sampling.mode {
            SamplingMode::Fixed => return Ok(None),
            SamplingMode::Adaptive { min, max } => (min, Some(max)),
            SamplingMode::Uncapped { min } => (min, None),
        };
        let comparisons = experiment.comparisons();
        let primary = experiment.primary_metric();
        let better = primary.direction;
        let threshold = primary.threshold.unwrap_or(experiment.sampling.threshold);
        let alpha = experiment.sampling.alpha / comparisons.len().max(1) as f64;
        let design = match max {
            Some(max) => {
                let mut settings = SequentialSettings::new(max as usize, threshold, better);
                settings.min = (min as usize).min(max as usize);
                settings.alpha = alpha;
                Design::Capped(SequentialDesign::new(settings)?)
            }
            None => {
                let mut settings = InformationSettings::new(threshold, better);
                settings.min = (min as usize).max(2);
                settings.alpha = alpha;
                settings.power = experiment.sampling.power;
                Design::Uncapped(InformationDesign::new(settings)?)
            }
        };
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
        let design = match &self.design {
            Design::Capped(design) => design.describe(),
            Design::Uncapped(design) => design.describe(),
        };
        format!("{design}{family}")
    }

    /// The cap on runs per cell (`usize::MAX` without one: the design
    /// itself says when each comparison ends).
    pub fn max_runs(&self) -> usize {
        match &self.design {
            Design::Capped(design) => design.settings().max,
            Design::Uncapped(_) => usize::MAX,
        }
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
                let (baseline, candidate) = (
                    values(comparison.baseline_cell),
                    values(comparison.candidate_cell),
                );
                match &self.design {
                    Design::Capped(design) => status(
                        comparison,
                        &design.look(&baseline, &candidate),
                        &self.labels,
                    ),
                    Design::Uncapped(design) => {
                        let result = design.look(&baseline, &candidate);
                        let mut status = status(comparison, &result.outcome, &self.labels);
                        status.projected_runs =
                            result.last_look.and_then(|look| look.projected_runs);
                        status
                    }
                }
            })
            .collect()
    }

    /// Cells still needed by an undecided comparison.
    pub fn active_cells(&self, statuses: &[ComparisonStatus]) -> Vec<usize> {
        let mut active: Vec<usize> = statuses
            .iter()
            .filter(|status| status.state == ComparisonState::Continue)
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
        LookState::Continue => (ComparisonState::Continue, None),
        LookState::Cap => (ComparisonState::Cap, None),
        LookState::Decided { decision, .. } => (ComparisonState::Decided, Some(decision.into())),
    };
    let interval = outcome.shift.and_then(|shift| shift.interval);
    ComparisonStatus {
        factor: comparison.factor.clone(),
        baseline_cell: comparison.baseline_cell,
        candidate_cell: comparison.candidate_cell,
        baseline_label: labels[comparison.baseline_cell].clone(),
        candidate_label: labels[comparison.candidate_cell].clone(),
        state,
        verdict,
        runs: outcome.runs,
        estimate: outcome.shift.map(|shift| shift.estimate),
        low: interval.map(|interval| interval.low),
        high: interval.map(|interval| interval.high),
        confidence: interval.map(|interval| interval.confidence),
        projected_runs: None,
    }
}
