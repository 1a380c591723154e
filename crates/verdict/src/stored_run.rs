//! A stored run as the reports see it: its record, experiment and samples
//! read from the store (streamed into columns: memory does not grow with
//! the samples' rows), and the header facts (`RunInfo`) every run report
//! shows, built once for `verdict report` and the per-host reports.
//!
//! Must not: render or decide anything.

use std::ops::ControlFlow;

use crate::error::CliError;
use verdict_model::{ComparisonState, ComparisonStatus, Experiment, RunId};
use verdict_report::run::RunInfo;
use verdict_report::samples::SampleTable;
use verdict_report::time::format_time;
use verdict_store::Store;

/// The record, the experiment and the samples (as columns) of run `run`.
pub(crate) fn loaded(
    store: &dyn Store,
    run: RunId,
) -> Result<(verdict_store::RunRecord, Experiment, SampleTable), CliError> {
    let record = store.run(run).map_err(CliError::input)?;
    let experiment: Experiment =
        serde_json::from_str(&record.experiment_json).map_err(|error| {
            CliError::internal(format!(
                "run {run}: stored experiment does not load: {error}"
            ))
        })?;
    let mut table = SampleTable::new(&experiment);
    store
        .each_sample(run, &mut |sample, _| {
            table.push(&sample);
            ControlFlow::Continue(())
        })
        .map_err(CliError::internal)?;
    Ok((record, experiment, table))
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

/// The report's section of a detached run's shared work, as stored.
pub(crate) fn work_section(
    work: &verdict_store::WorkRecord,
    detached_on: &str,
) -> verdict_report::work::WorkSection {
    verdict_report::work::WorkSection {
        detached_on: detached_on.to_string(),
        hosts: work.hosts(),
        takeovers: work
            .takeovers
            .iter()
            .map(|takeover| verdict_report::work::TakeoverRow {
                block: takeover.block,
                taken_at_ms: takeover.taken_at_ms,
                from_worker: takeover.from_worker.clone(),
                from_host: takeover.from_host.clone(),
                to_worker: takeover.to_worker.clone(),
                to_host: takeover.to_host.clone(),
                resumed_after: takeover.resumed_after,
            })
            .collect(),
    }
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
