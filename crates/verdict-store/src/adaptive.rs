//! A run's adaptive state (schema version 11): the procedure it stops with
//! and every comparison's state at its last look, one `adaptive_runs` row
//! per run, in both backends with the same SQL and one decoding. Runs
//! stored before version 11 kept them as the `procedure` and `decisions`
//! annotations; migration 11 moves those rows here. Must not decide
//! anything about stopping (the engine does).

use verdict_model::{AdaptiveRecord, ComparisonStatus, RunId};

use crate::StoreError;
use crate::sql::{Backend, params};

pub(crate) const PUT_PROCEDURE: &str = "INSERT INTO adaptive_runs (run_id, design) VALUES ($1, $2) \
     ON CONFLICT (run_id) DO UPDATE SET design = excluded.design";
pub(crate) const PUT_DECISIONS: &str = "INSERT INTO adaptive_runs (run_id, decisions_json) VALUES ($1, $2) \
     ON CONFLICT (run_id) DO UPDATE SET decisions_json = excluded.decisions_json";
const READ: &str = "SELECT design, decisions_json FROM adaptive_runs WHERE run_id = $1";

/// A stored row as the record: no row is a run that recorded nothing.
fn decode(
    run: RunId,
    row: Option<(Option<String>, Option<String>)>,
    corrupt: impl FnOnce(&str, serde_json::Error) -> StoreError,
) -> Result<AdaptiveRecord, StoreError> {
    let Some((procedure, decisions)) = row else {
        return Ok(AdaptiveRecord::default());
    };
    let decisions = match decisions {
        Some(text) => serde_json::from_str::<Vec<ComparisonStatus>>(&text)
            .map_err(|error| corrupt(&format!("the adaptive decisions of run {run}"), error))?,
        None => Vec::new(),
    };
    Ok(AdaptiveRecord {
        procedure,
        decisions,
    })
}

/// Stores `value` with `sql` (`PUT_PROCEDURE` or `PUT_DECISIONS`).
pub(crate) fn put(
    backend: &impl Backend,
    run: RunId,
    sql: &str,
    value: &str,
    what: &str,
) -> Result<(), StoreError> {
    backend.run_exists(run)?;
    let operation = format!("store the adaptive {what} of run {run}");
    backend.execute(&operation, sql, params![run.0, value])?;
    Ok(())
}

/// What the run recorded about adaptive stopping.
pub(crate) fn read(backend: &impl Backend, run: RunId) -> Result<AdaptiveRecord, StoreError> {
    backend.run_exists(run)?;
    let row = backend.first_row(
        &format!("read the adaptive state of run {run}"),
        READ,
        params![run.0],
        |row| Ok((row.optional_text(0)?, row.optional_text(1)?)),
    )?;
    decode(run, row, |what, error| backend.corrupt(what, error))
}
