//! `verdict simulate`'s results: each decision procedure's tally over a
//! scenario's trials with its rates (verdict-stats `simulate`), and the
//! naive and boot-unit analyses of a design with a boot effect
//! (verdict-stats `simulate::boots`). The output models' field names are
//! the `verdict.simulate/v1` and `verdict.simulate_boots/v1` schemas;
//! verdict-report renders them as text. Never renders.

use schemars::JsonSchema;
use serde::Serialize;
pub use verdict_stats::simulate::boots::{BootAnalysis, BootScenario, BootTally};
pub use verdict_stats::simulate::{Procedure, Scenario, Summary};
use verdict_stats::simulate::{boots::simulate_boots, simulate};

/// The `verdict.simulate/v1` document.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SimulateOutput<'a> {
    pub schema: &'static str,
    pub seed: u64,
    pub trials: usize,
    pub scenario: &'a Scenario,
    pub results: Vec<ProcedureResult>,
}

/// One procedure's tally over the trials, with its rates.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ProcedureResult {
    pub procedure: String,
    pub description: String,
    pub summary: Summary,
    /// Regression or improvement: the false-alarm rate when change = 0.
    pub change_rate: f64,
    pub regression_rate: f64,
    pub equivalent_rate: f64,
    pub coverage: Option<f64>,
}

/// `trials` trials of `scenario` under each procedure, from `seed`.
pub fn procedure_results(
    scenario: &Scenario,
    procedures: &[Procedure],
    trials: usize,
    seed: u64,
) -> Vec<ProcedureResult> {
    procedures
        .iter()
        .map(|procedure| {
            let summary = simulate(scenario, procedure, trials, seed);
            let coverage = summary.coverage();
            ProcedureResult {
                procedure: procedure.label(),
                description: match procedure {
                    Procedure::Adaptive(design) => design.describe(),
                    Procedure::Fixed { runs } => format!(
                        "{runs} runs per cell, two-sided Mann-Whitney U, change when p < {}",
                        scenario.alpha
                    ),
                    Procedure::Peeking { every, max } => format!(
                        "Mann-Whitney after every {every} runs per cell up to {max}, stop at first p < {}",
                        scenario.alpha
                    ),
                },
                change_rate: summary.change_rate(),
                regression_rate: summary.regression_rate(),
                equivalent_rate: summary.equivalent_rate(),
                coverage: coverage.is_finite().then_some(coverage),
                summary,
            }
        })
        .collect()
}

/// The `verdict.simulate_boots/v1` document.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BootOutput<'a> {
    pub schema: &'static str,
    pub seed: u64,
    pub trials: usize,
    pub scenario: &'a BootScenario,
    pub results: Vec<BootResult>,
}

/// One analysis's tally over the trials, with its rates.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BootResult {
    pub label: &'static str,
    pub description: &'static str,
    pub tally: BootTally,
    /// Regression or improvement: the false-alarm rate when change = 0.
    pub change_rate: f64,
    /// A change called in the true change's direction: the power.
    pub detection_rate: f64,
    pub coverage: Option<f64>,
}

/// `trials` trials of `scenario` under every boot analysis, from `seed`.
pub fn boot_results(scenario: &BootScenario, trials: usize, seed: u64) -> Vec<BootResult> {
    simulate_boots(scenario, &BootAnalysis::ALL, trials, seed)
        .into_iter()
        .map(|tally| {
            let coverage = tally.coverage();
            BootResult {
                label: tally.analysis.label(),
                description: tally.analysis.describe(),
                change_rate: tally.change_rate(),
                detection_rate: tally.detection_rate(scenario.change),
                coverage: coverage.is_finite().then_some(coverage),
                tally,
            }
        })
        .collect()
}
