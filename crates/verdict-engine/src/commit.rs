//! The commit a new run measures (`verdict run --commit`, else `git
//! rev-parse HEAD` of the experiment file's repository) and recording it
//! with the run, for `verdict history --by commit` and `--bisect`. Git
//! runs through the given executor; must not print.

use serde_json::{Value, json};
use verdict_exec::{Cancel, Target};
use verdict_model::RunId;
use verdict_store::HistoryStore;

use crate::history::{HistoryError, repository_commit};

/// A run's commit and, when found by git, its repository (`path`: the
/// repository's top directory, `experiment`: the experiment file's
/// absolute path).
#[derive(Debug, Clone, PartialEq)]
pub struct RunCommit {
    pub commit: String,
    /// `Value::Null` when the commit was given rather than found.
    pub repository: Value,
}

/// The commit a new run of the experiment at `path` measures: `given`,
/// else `git rev-parse HEAD` in the file's directory, else none.
pub fn experiment_commit(
    executor: &dyn Target,
    path: &std::path::Path,
    given: Option<&str>,
) -> Result<Option<RunCommit>, HistoryError> {
    if let Some(commit) = given {
        return Ok(Some(RunCommit {
            commit: commit.to_string(),
            repository: Value::Null,
        }));
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let directory = absolute
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let found = repository_commit(executor, &Cancel::new(), &directory)?;
    Ok(found.map(|(commit, top)| RunCommit {
        commit,
        repository: json!({"path": top, "experiment": absolute.display().to_string()}),
    }))
}

/// Stores the commit (and repository) found by [`experiment_commit`].
pub fn record_commit(
    store: &dyn HistoryStore,
    run: RunId,
    commit: Option<RunCommit>,
) -> Result<(), HistoryError> {
    let Some(RunCommit { commit, repository }) = commit else {
        return Ok(());
    };
    store.set_run_commit(run, &commit)?;
    if !repository.is_null() {
        store.put_annotation(run, "repository", &repository)?;
    }
    Ok(())
}
