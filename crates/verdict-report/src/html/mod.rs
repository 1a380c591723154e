//! The HTML report (`--format html`): one publishable, self-contained file
//! per run, pivot, comparison, bisection log or doctor result, with
//! hand-written inline SVG (a forest plot of deltas, per-cell distribution
//! strips over quartile boxes, run-order plots with a moving median).
//! A model in, a `String` out.
//! Must not: read files, run processes, fetch anything, or emit a byte of
//! user or workload text unescaped (see `escape`).

mod bisect;
mod boots;
mod compare;
mod doctor;
pub mod escape;
mod explain;
mod hosts;
mod page;
mod run;
pub mod svg;

pub use bisect::{BisectCommit, BisectLog, Change, render_bisect_log};
pub use compare::{ComparedValues, render_compare};
pub use doctor::{DoctorCheck, DoctorPage, render_doctor};
pub use explain::{flame_svg, render_explain};
pub use hosts::render_hosts;
pub use page::{CONTENT_SECURITY_POLICY, EnvironmentColumn};
pub use run::{render_pivot, render_run};

use verdict_analysis::samples::SampleTable;
use verdict_model::{Experiment, Sample};

/// One cell's values of the report's metric in run order, and its failed
/// iterations: what the pictures need beyond the report model.
#[derive(Debug, Clone, PartialEq)]
pub struct CellSeries {
    pub label: String,
    /// `(sequence, value)` of the data iterations, in run order.
    pub values: Vec<(u32, f64)>,
    /// Sequence numbers of the failed measured iterations.
    pub failed: Vec<u32>,
}

/// Per cell (in `Experiment::cells()` order) the values of `metric` in run
/// order and the failed iterations; warmups are left out, as in every
/// statistic.
pub fn cell_series(experiment: &Experiment, samples: &[Sample], metric: &str) -> Vec<CellSeries> {
    cell_series_of(experiment, &SampleTable::of(experiment, samples), metric)
}

/// `cell_series` from a run's samples as columns.
pub fn cell_series_of(
    experiment: &Experiment,
    table: &SampleTable,
    metric: &str,
) -> Vec<CellSeries> {
    experiment
        .cells()
        .iter()
        .enumerate()
        .map(|(index, cell)| CellSeries {
            label: cell.label(),
            values: table
                .data(index, metric)
                .map(|(sequence, _, value)| (sequence, value))
                .collect(),
            failed: table
                .cells()
                .get(index)
                .map(|samples| samples.failed.clone())
                .unwrap_or_default(),
        })
        .collect()
}

/// The sentence every page with a subsampled picture carries.
pub fn subsample_note() -> String {
    format!(
        "Some cells have more than {limit} values: their strip shows {limit} values at evenly spaced ranks plus every value outside the Tukey fences (1.5 IQR), and their run-order plot every k-th iteration (k = ceil(n / {limit})) plus those values. Boxes, medians, moving medians and every statistic use all values.",
        limit = svg::SUBSAMPLE_LIMIT
    )
}
