//! The runs of a host group (`verdict run --host A --host B`): each host's
//! run carries a `target` annotation naming the group and its host; these
//! find a group's runs again, for `verdict run --resume` and `verdict
//! report RUN --rows host`. Reads the store only; must not print.

use serde_json::Value;
use verdict_model::RunId;
use verdict_store::{RunSummary, Store, StoreError};

/// The runs whose `target` annotation names `group`, with their host
/// names, in the order the hosts were given (`--host A --host B`, as the
/// annotation lists them; the runs are created concurrently, so their ids
/// may be in either order), then in run order.
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
            let host = target["host"].as_str().unwrap_or("").to_string();
            let given = target["hosts"]
                .as_array()
                .and_then(|hosts| hosts.iter().position(|name| name.as_str() == Some(&host)))
                .unwrap_or(usize::MAX);
            members.push((given, summary, host));
        }
    }
    members.sort_by_key(|(given, summary, _)| (*given, summary.id));
    Ok(members
        .into_iter()
        .map(|(_, summary, host)| (summary, host))
        .collect())
}

/// The runs of the host group `run` belongs to, in the order the hosts
/// were given, with their host names; empty when `run` is not part of one.
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
