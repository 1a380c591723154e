//! `verdict export`'s reading: one stored run's record, cells and every
//! raw sample, through the (read-only) store, into verdict-analysis's
//! `RunExport`. Must not print, render or change the store.

use std::collections::BTreeMap;

use verdict_analysis::export::{ExportRun, RunExport};
use verdict_model::{Experiment, RunId};
use verdict_store::Store;

/// Why a run could not be exported. The messages name the run.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// No such run.
    #[error("{0}")]
    Input(String),
    /// The store failed.
    #[error("{0}")]
    Internal(String),
}

/// Everything `verdict export` shows of `run`.
pub fn load(store: &dyn Store, run: RunId) -> Result<RunExport, ExportError> {
    let internal = |error: verdict_store::StoreError| ExportError::Internal(error.to_string());
    let record = store
        .run(run)
        .map_err(|error| ExportError::Input(error.to_string()))?;
    let experiment: Option<Experiment> = serde_json::from_str(&record.experiment_json).ok();
    let cells: BTreeMap<usize, Vec<(String, String)>> = store
        .cells(run)
        .map_err(internal)?
        .into_iter()
        .map(|(index, cell)| (index, cell.levels))
        .collect();
    let samples = store.samples(run).map_err(internal)?;
    let header = ExportRun {
        id: record.id.0,
        status: record.status.as_str().to_string(),
        name: record.name,
        kind: record.kind,
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
        samples,
        record.environment_start,
        record.environment_end,
    ))
}
