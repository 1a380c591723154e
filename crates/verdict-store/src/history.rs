//! Store queries of `verdict history`: every stored run's values of one
//! metric for an experiment and cell (one row per run, in run order), the
//! commit a run measured, and the per-series change point state that makes
//! a repeated question incremental, for SQLite and PostgreSQL
//! (`HistoryStore`). Must not: compute statistics (the
//! engine does), or write anything but a run's commit and the cache.

use verdict_model::{RunId, RunStatus};

use crate::sql::{Backend, Param, params};
use crate::{Store, StoreError};

/// Which runs and values a history is made of: runs named `experiment`
/// (any when `None`), data samples (not warmups, not failures) whose cell
/// has every listed level, metric `metric`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HistorySelection {
    pub experiment: Option<String>,
    pub levels: Vec<(String, String)>,
    pub metric: String,
}

/// One stored run's values of the selected metric, in sequence order.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryRun {
    pub run: RunId,
    pub name: String,
    pub host: String,
    pub status: RunStatus,
    pub started_at_ms: i64,
    pub commit: Option<String>,
    pub values: Vec<f64>,
}

/// Change point state kept for one series (key chosen by the caller):
/// computed from its first `points` points, whose fingerprint is
/// `fingerprint`; `state` is opaque JSON (the weak change points).
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryCache {
    pub points: usize,
    pub fingerprint: String,
    pub state: serde_json::Value,
}

/// The history queries, whichever store holds the runs (SQLite, PostgreSQL
/// or a `Database` naming either): what `verdict history` needs besides
/// the `Store` trait.
pub trait HistoryStore: Store {
    fn history_runs(&self, selection: &HistorySelection) -> Result<Vec<HistoryRun>, StoreError>;
    fn newest_run_named(&self, experiment: Option<&str>) -> Result<Option<RunId>, StoreError>;
    fn set_run_commit(&self, run: RunId, commit: &str) -> Result<(), StoreError>;
    fn run_commit(&self, run: RunId) -> Result<Option<String>, StoreError>;
    fn history_cache(&self, key: &str) -> Result<Option<HistoryCache>, StoreError>;
    fn put_history_cache(&self, key: &str, cache: &HistoryCache) -> Result<(), StoreError>;
}

impl<B: Backend> HistoryStore for B {
    /// Every run with at least one selected value, oldest run first.
    /// Two queries: the runs' few columns once per run (a run row also
    /// holds kilobytes of experiment and environment text, which a join
    /// per sample would read again for every sample), then the values.
    /// O(values) rows.
    fn history_runs(&self, selection: &HistorySelection) -> Result<Vec<HistoryRun>, StoreError> {
        let operation = format!("select the history of metric `{}`", selection.metric);
        let (run_filter, run_parameters) = match &selection.experiment {
            Some(experiment) => (" WHERE name = $1", vec![Param::from(experiment)]),
            None => ("", Vec::new()),
        };
        let mut runs: Vec<HistoryRun> = Vec::new();
        let mut position_of = std::collections::HashMap::new();
        let rows = self.rows(
            &operation,
            &format!(
                "SELECT id, name, host, status, started_at_ms, git_commit FROM runs{run_filter} \
                 ORDER BY id"
            ),
            &run_parameters,
            |row| {
                Ok((
                    row.integer(0)?,
                    row.text(1)?,
                    row.text(2)?,
                    row.text(3)?,
                    row.integer(4)?,
                    row.optional_text(5)?,
                ))
            },
        )?;
        for (run, name, host, status, started_at_ms, commit) in rows {
            let status = RunStatus::parse(&status).ok_or_else(|| {
                self.corrupt(&format!("status of run {run}"), format!("`{status}`"))
            })?;
            position_of.insert(run, runs.len());
            runs.push(HistoryRun {
                run: RunId(run),
                name,
                host,
                status,
                started_at_ms,
                commit,
                values: Vec::new(),
            });
        }
        let value = crate::builtin::value_sql(&selection.metric);
        let mut sql = format!(
            "SELECT s.run_id, {value} \
             FROM samples s \
             LEFT JOIN sample_metrics m \
                ON m.run_id = s.run_id AND m.sequence = s.sequence AND m.name = $1 \
             WHERE NOT s.warmup AND NOT s.failed AND ({value}) IS NOT NULL",
        );
        let mut parameters = vec![Param::from(&selection.metric)];
        if let Some(experiment) = &selection.experiment {
            parameters.push(Param::from(experiment));
            sql.push_str(" AND s.run_id IN (SELECT id FROM runs WHERE name = $2)");
        }
        for (factor, level) in &selection.levels {
            let next = parameters.len() + 1;
            sql.push_str(&format!(
                " AND EXISTS (SELECT 1 FROM cell_levels l WHERE l.run_id = s.run_id \
                   AND l.cell = s.cell AND l.factor = ${next} AND l.level = ${})",
                next + 1
            ));
            parameters.push(Param::from(factor));
            parameters.push(Param::from(level));
        }
        sql.push_str(" ORDER BY s.run_id, s.sequence");
        self.each_row(&operation, &sql, &parameters, &mut |row| {
            let (run, value) =
                (|| Ok::<_, crate::sql::RawError>((row.integer(0)?, row.real(1)?)))()
                    .map_err(|error| error.into_store(self.name(), &operation))?;
            if let Some(&position) = position_of.get(&run) {
                runs[position].values.push(value);
            }
            Ok(std::ops::ControlFlow::Continue(()))
        })?;
        runs.retain(|run| !run.values.is_empty());
        Ok(runs)
    }

    fn newest_run_named(&self, experiment: Option<&str>) -> Result<Option<RunId>, StoreError> {
        Ok(self
            .first_row(
                "find the newest run of an experiment",
                "SELECT id FROM runs WHERE CAST($1 AS TEXT) IS NULL OR name = $1 \
                 ORDER BY id DESC LIMIT 1",
                params![experiment],
                |row| row.integer(0),
            )?
            .map(RunId))
    }

    fn set_run_commit(&self, run: RunId, commit: &str) -> Result<(), StoreError> {
        self.run_exists(run)?;
        self.execute(
            &format!("store the commit of run {run}"),
            "UPDATE runs SET git_commit = $1 WHERE id = $2",
            params![commit, run.0],
        )?;
        Ok(())
    }

    fn run_commit(&self, run: RunId) -> Result<Option<String>, StoreError> {
        self.run_exists(run)?;
        Ok(self
            .first_row(
                &format!("read the commit of run {run}"),
                "SELECT git_commit FROM runs WHERE id = $1",
                params![run.0],
                |row| row.optional_text(0),
            )?
            .flatten())
    }

    fn history_cache(&self, key: &str) -> Result<Option<HistoryCache>, StoreError> {
        let operation = format!("read the history state of `{key}`");
        let row = self.first_row(
            &operation,
            "SELECT points, fingerprint, state_json FROM history_cache WHERE series_key = $1",
            params![key],
            |row| Ok((row.integer(0)?, row.text(1)?, row.text(2)?)),
        )?;
        row.map(|(points, fingerprint, state)| {
            let state = serde_json::from_str(&state)
                .map_err(|error| self.corrupt(&format!("history state of `{key}`"), error))?;
            Ok(HistoryCache {
                points: usize::try_from(points).unwrap_or(0),
                fingerprint,
                state,
            })
        })
        .transpose()
    }

    fn put_history_cache(&self, key: &str, cache: &HistoryCache) -> Result<(), StoreError> {
        self.execute(
            &format!("store the history state of `{key}`"),
            "INSERT INTO history_cache (series_key, points, fingerprint, state_json) \
             VALUES ($1, $2, $3, $4) \
             ON CONFLICT (series_key) DO UPDATE SET points = excluded.points, \
             fingerprint = excluded.fingerprint, state_json = excluded.state_json",
            params![
                key,
                cache.points as i64,
                &cache.fingerprint,
                &cache.state.to_string()
            ],
        )?;
        Ok(())
    }
}
