//! A stored run as the reports see it: its record, experiment and samples
//! read from the store, and the header facts (`RunInfo`) every run report
//! shows, built once for `verdict report` and the per-host reports.
//!
//! Must not: render or decide anything.

use crate::error::CliError;
use verdict_model::{ComparisonState, ComparisonStatus, Experiment, RunId};
use verdict_report::run::RunInfo;
use verdict_report::time::format_time;
use verdict_store::Store;

/// The record, the experiment and the samples of run `run`.
pub(crate) fn loaded(
    store: &dyn Store,
    run: RunId,
) -> Result<
    (
        verdict_store::RunRecord,
        Experiment,
        Vec<verdict_model::Sample>,
    ),
    CliError,
> {
    let record = store.run(run).map_err(CliError::input)?;
    let experiment: Experiment =
        serde_json::from_str(&record.experiment_json).map_err(|error| {
            CliError::internal(format!(
                "run {run}: stored experiment does not load: {error}"
            ))
        })?;
    let samples = store.samples(run).map_err(CliError::internal)?;
    Ok((record, experiment, samples))
}

pub(crate) fn run_info(
    store: &dyn Store,
    record: &verdict_store::RunRecord,
    experiment: &Experiment,
) -> Result<RunInfo, CliError> {
    let annotations = store.annotations(record.id).map_err(CliError::internal)?;
    let adaptive = store.adaptive(record.id).map_err(CliError::internal)?;
    Ok(RunInfo {
        id: record.id.0,
        name: record.name.clone(),
        status: record.status.as_str().to_string(),
        started: format_time(record.started_at_ms),
        finished: record.finished_at_ms.map(format_time),
        seed: record.seed,
        host: record.host.clone(),
        planned: record.planned,
        recorded: record.done as usize,
        tool_version: record.tool_version.clone(),
        order: match experiment.sampling.order {
            verdict_model::Order::Interleaved => "interleaved (randomized blocks)".to_string(),
            verdict_model::Order::Sequential => "sequential".to_string(),
        },
        procedure: adaptive.procedure,
        decisions: adaptive.decisions.iter().map(decision_line).collect(),
        noise: annotations
            .get("doctor")
            .and_then(|value| value.get("summary"))
            .and_then(|value| value.as_str())
            .map(str::to_string),
    })
}

/// `variant=b vs variant=a: equivalent [-4.1%, +6.0%] at 24 runs per cell`.
fn decision_line(status: &ComparisonStatus) -> String {
    let state = match (status.verdict, status.state) {
        (Some(verdict), _) => verdict.as_str().to_string(),
        (None, ComparisonState::Cap) => "undecided at the cap".to_string(),
        (None, other) => format!("undecided ({})", other.as_str()),
    };
    let interval = match (status.low, status.high) {
        (Some(low), Some(high)) => format!(" [{:+.1}%, {:+.1}%]", low * 100.0, high * 100.0),
        _ => String::new(),
    };
    format!(
        "{} vs {}: {state}{interval} at {} runs per cell",
        status.candidate_label, status.baseline_label, status.runs
    )
}
