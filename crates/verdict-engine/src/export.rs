//! `verdict export`'s reading: one stored run's record, cells and metric
//! names through the (read-only) store into verdict-analysis's
//! `RunExport` (`load`), then every raw sample as the store streams it,
//! with its iteration in its cell and the host it ran on (`each_sample`):
//! memory does not grow with the run. Must not print, render or change the
//! store.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use verdict_analysis::export::{ExportRun, Iterations, RunExport};
use verdict_model::{Experiment, RunId, Sample};
use verdict_store::Store;

use crate::error::CommandError;

/// Everything `verdict export` shows of `run` but its samples.
pub fn load(store: &dyn Store, run: RunId) -> Result<RunExport, CommandError> {
    let internal = |error: verdict_store::StoreError| CommandError::Internal(error.to_string());
    let record = store
        .run(run)
        .map_err(|error| CommandError::Input(error.to_string()))?;
    let experiment: Option<Experiment> = serde_json::from_str(&record.experiment_json).ok();
    let cells: BTreeMap<usize, Vec<(String, String)>> = store
        .cells(run)
        .map_err(internal)?
        .into_iter()
        .map(|(index, cell)| (index, cell.levels))
        .collect();
    let metric_names = store.metric_names(run).map_err(internal)?;
    let header = ExportRun {
        id: record.id.0,
        status: record.status.as_str().to_string(),
        name: record.name,
        kind: record.kind.as_str().to_string(),
        host: record.host,
        seed: record.seed,
        tool_version: record.tool_version,
        planned: record.planned,
        started_at_ms: record.started_at_ms,
        finished_at_ms: record.finished_at_ms,
        command_line: record.command_line,
        experiment_sha256: record.experiment_sha256,
        experiment_text: record.experiment_text,
    };
    Ok(RunExport::new(
        header,
        experiment.as_ref(),
        cells,
        metric_names,
        record.environment_start,
        record.environment_end,
    ))
}

/// Calls `each` with every sample of `run` in order, its 1-based
/// iteration in its cell and the host it ran on, until it breaks.
pub fn each_sample(
    store: &dyn Store,
    run: RunId,
    each: &mut dyn FnMut(&Sample, usize, &str) -> ControlFlow<()>,
) -> Result<(), CommandError> {
    let mut iterations = Iterations::default();
    store
        .each_sample(run, &mut |sample, host| {
            let iteration = iterations.next(sample.cell);
            each(&sample, iteration, host)
        })
        .map_err(|error| CommandError::Internal(error.to_string()))
}
