//! The runs of a host group (`verdict run --host A --host B`): each host's
//! run carries a `target` annotation naming the group and its host; these
//! find a group's runs again, for `verdict run --resume` and `verdict
//! report RUN --rows host`. Reads the store only; must not print.

use serde_json::Value;
use verdict_model::RunId;
use verdict_store::{RunSummary, Store, StoreError};

/// The runs whose `target` annotation names `group`, in run order, with
/// their host names.
pub fn group_runs(
    store: &dyn Store,
    group: &Value,
) -> Result<Vec<(RunSummary, String)>, StoreError> {
    let mut members = Vec::new();
    for summary in store.list_runs()? {
        let annotations = store.annotations(summary.id)?;
        if let Some(target) = annotations.get("target")
            && &target["group"] == group
        {
            members.push((summary, target["host"].as_str().unwrap_or("").to_string()));
        }
    }
    members.sort_by_key(|(summary, _)| summary.id);
    Ok(members)
}

/// The runs of the host group `run` belongs to, in run order, with their
/// host names; empty when `run` is not part of one.
pub fn group_members(store: &dyn Store, run: RunId) -> Result<Vec<(RunId, String)>, StoreError> {
    let annotations = store.annotations(run)?;
    let Some(target) = annotations.get("target") else {
        return Ok(Vec::new());
    };
    Ok(group_runs(store, &target["group"])?
        .into_iter()
        .map(|(summary, host)| (summary.id, host))
        .collect())
}
