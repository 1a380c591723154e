//! Store queries of `verdict history`: every stored run's values of one
//! metric for an experiment and cell (one row per run, in run order), the
//! commit a run measured, and the per-series change point state that makes
//! a repeated question incremental, for SQLite and PostgreSQL
//! (`HistoryStore`). Must not: compute statistics (the
//! engine does), or write anything but a run's commit and the cache.

use rusqlite::OptionalExtension;
use rusqlite::types::Value as SqlValue;
use verdict_model::{RunId, RunStatus};

use crate::postgres::PostgresStore;
use crate::{SqliteStore, Store, StoreError};

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

impl SqliteStore {
    /// Every run with at least one selected value, oldest run first.
    /// Two queries: the runs' few columns once per run (a run row also
    /// holds kilobytes of experiment and environment text, which a join
    /// per sample would read again for every sample), then the values.
    /// O(values) rows.
    pub fn history_runs(
        &self,
        selection: &HistorySelection,
    ) -> Result<Vec<HistoryRun>, StoreError> {
        let operation = format!("select the history of metric `{}`", selection.metric);
        let (run_filter, run_parameters) = match &selection.experiment {
            Some(experiment) => (" WHERE name = ?", vec![SqlValue::Text(experiment.clone())]),
            None => ("", Vec::new()),
        };
        let mut runs: Vec<HistoryRun> = Vec::new();
        let mut position_of = std::collections::HashMap::new();
        {
            let mut statement = self
                .connection
                .prepare(&format!(
                    "SELECT id, name, host, status, started_at_ms, git_commit FROM runs{run_filter} \
                     ORDER BY id"
                ))
                .map_err(self.sql_error(&operation))?;
            let mut rows = statement
                .query(rusqlite::params_from_iter(run_parameters.clone()))
                .map_err(self.sql_error(&operation))?;
            while let Some(row) = rows.next().map_err(self.sql_error(&operation))? {
                let read = || -> rusqlite::Result<_> {
                    Ok((
                        row.get::<_, i64>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                        row.get::<_, String>(3)?,
                        row.get::<_, i64>(4)?,
                        row.get::<_, Option<String>>(5)?,
                    ))
                };
                let (run, name, host, status, started_at_ms, commit) =
                    read().map_err(self.sql_error(&operation))?;
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
        }
        let value = crate::builtin::value_sql(&selection.metric);
        let mut sql = format!(
            "SELECT s.run_id, {value} \
             FROM samples s \
             LEFT JOIN sample_metrics m \
                ON m.run_id = s.run_id AND m.sequence = s.sequence AND m.name = ? \
             WHERE s.warmup = 0 AND s.failed = 0 AND ({value}) IS NOT NULL",
        );
        let mut parameters = vec![SqlValue::Text(selection.metric.clone())];
        if selection.experiment.is_some() {
            sql.push_str(&format!(
                " AND s.run_id IN (SELECT id FROM runs{run_filter})"
            ));
            parameters.extend(run_parameters);
        }
        for (factor, level) in &selection.levels {
            sql.push_str(
                " AND EXISTS (SELECT 1 FROM cell_levels l WHERE l.run_id = s.run_id \
                   AND l.cell = s.cell AND l.factor = ? AND l.level = ?)",
            );
            parameters.push(SqlValue::Text(factor.clone()));
            parameters.push(SqlValue::Text(level.clone()));
        }
        sql.push_str(" ORDER BY s.run_id, s.sequence");
        let mut statement = self
            .connection
            .prepare(&sql)
            .map_err(self.sql_error(&operation))?;
        let mut rows = statement
            .query(rusqlite::params_from_iter(parameters))
            .map_err(self.sql_error(&operation))?;
        while let Some(row) = rows.next().map_err(self.sql_error(&operation))? {
            let (run, value) =
                (|| -> rusqlite::Result<(i64, f64)> { Ok((row.get(0)?, row.get(1)?)) })()
                    .map_err(self.sql_error(&operation))?;
            if let Some(&position) = position_of.get(&run) {
                runs[position].values.push(value);
            }
        }
        runs.retain(|run| !run.values.is_empty());
        Ok(runs)
    }

    /// The newest run named `experiment` (of any name when `None`).
    pub fn newest_run_named(&self, experiment: Option<&str>) -> Result<Option<RunId>, StoreError> {
        self.connection
            .query_row(
                "SELECT id FROM runs WHERE ?1 IS NULL OR name = ?1 ORDER BY id DESC LIMIT 1",
                [experiment],
                |row| row.get(0),
            )
            .optional()
            .map(|id| id.map(RunId))
            .map_err(self.sql_error("find the newest run of an experiment"))
    }

    /// Records the commit a run measured (replacing any earlier one).
    pub fn set_run_commit(&self, run: RunId, commit: &str) -> Result<(), StoreError> {
        self.run_exists(run)?;
        let operation = format!("store the commit of run {run}");
        self.connection
            .execute(
                "UPDATE runs SET git_commit = ?1 WHERE id = ?2",
                rusqlite::params![commit, run.0],
            )
            .map_err(self.sql_error(&operation))?;
        Ok(())
    }

    /// The commit recorded for a run, if any.
    pub fn run_commit(&self, run: RunId) -> Result<Option<String>, StoreError> {
        self.run_exists(run)?;
        let operation = format!("read the commit of run {run}");
        self.connection
            .query_row(
                "SELECT git_commit FROM runs WHERE id = ?1",
                [run.0],
                |row| row.get(0),
            )
            .map_err(self.sql_error(&operation))
    }

    /// The change point state stored for `key`, if any.
    pub fn history_cache(&self, key: &str) -> Result<Option<HistoryCache>, StoreError> {
        let operation = format!("read the history state of `{key}`");
        let row: Option<(i64, String, String)> = self
            .connection
            .query_row(
                "SELECT points, fingerprint, state_json FROM history_cache WHERE series_key = ?1",
                [key],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .optional()
            .map_err(self.sql_error(&operation))?;
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

    /// Stores (or replaces) the change point state of `key`.
    pub fn put_history_cache(&self, key: &str, cache: &HistoryCache) -> Result<(), StoreError> {
        let operation = format!("store the history state of `{key}`");
        self.connection
            .execute(
                "INSERT INTO history_cache (series_key, points, fingerprint, state_json) \
                 VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (series_key) DO UPDATE SET points = excluded.points, \
                 fingerprint = excluded.fingerprint, state_json = excluded.state_json",
                rusqlite::params![
                    key,
                    cache.points as i64,
                    cache.fingerprint,
                    cache.state.to_string()
                ],
            )
            .map_err(self.sql_error(&operation))?;
        Ok(())
    }
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

impl HistoryStore for SqliteStore {
    fn history_runs(&self, selection: &HistorySelection) -> Result<Vec<HistoryRun>, StoreError> {
        SqliteStore::history_runs(self, selection)
    }
    fn newest_run_named(&self, experiment: Option<&str>) -> Result<Option<RunId>, StoreError> {
        SqliteStore::newest_run_named(self, experiment)
    }
    fn set_run_commit(&self, run: RunId, commit: &str) -> Result<(), StoreError> {
        SqliteStore::set_run_commit(self, run, commit)
    }
    fn run_commit(&self, run: RunId) -> Result<Option<String>, StoreError> {
        SqliteStore::run_commit(self, run)
    }
    fn history_cache(&self, key: &str) -> Result<Option<HistoryCache>, StoreError> {
        SqliteStore::history_cache(self, key)
    }
    fn put_history_cache(&self, key: &str, cache: &HistoryCache) -> Result<(), StoreError> {
        SqliteStore::put_history_cache(self, key, cache)
    }
}

impl HistoryStore for PostgresStore {
    fn history_runs(&self, selection: &HistorySelection) -> Result<Vec<HistoryRun>, StoreError> {
        use postgres::types::ToSql;
        let operation = format!("select the history of metric `{}`", selection.metric);
        let rows = match &selection.experiment {
            Some(experiment) => self.query(
                &operation,
                "SELECT id, name, host, status, started_at_ms, git_commit FROM runs \
                 WHERE name = $1 ORDER BY id",
                &[experiment],
            )?,
            None => self.query(
                &operation,
                "SELECT id, name, host, status, started_at_ms, git_commit FROM runs ORDER BY id",
                &[],
            )?,
        };
        let mut runs: Vec<HistoryRun> = Vec::with_capacity(rows.len());
        let mut position_of = std::collections::HashMap::new();
        for row in &rows {
            let run: i64 = row.get(0);
            let status: String = row.get(3);
            let status = RunStatus::parse(&status).ok_or_else(|| {
                self.corrupt(&format!("status of run {run}"), format!("`{status}`"))
            })?;
            position_of.insert(run, runs.len());
            runs.push(HistoryRun {
                run: RunId(run),
                name: row.get(1),
                host: row.get(2),
                status,
                started_at_ms: row.get(4),
                commit: row.get(5),
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
        let mut parameters: Vec<Box<dyn ToSql + Sync>> = vec![Box::new(selection.metric.clone())];
        if let Some(experiment) = &selection.experiment {
            parameters.push(Box::new(experiment.clone()));
            sql.push_str(&format!(
                " AND s.run_id IN (SELECT id FROM runs WHERE name = ${})",
                parameters.len()
            ));
        }
        crate::postgres::push_level_filters(&mut sql, &mut parameters, &selection.levels);
        sql.push_str(" ORDER BY s.run_id, s.sequence");
        let references: Vec<&(dyn ToSql + Sync)> = parameters
            .iter()
            .map(|parameter| parameter.as_ref())
            .collect();
        for row in self.query(&operation, &sql, &references)? {
            let run: i64 = row.get(0);
            if let Some(&position) = position_of.get(&run) {
                runs[position].values.push(row.get(1));
            }
        }
        runs.retain(|run| !run.values.is_empty());
        Ok(runs)
    }

    fn newest_run_named(&self, experiment: Option<&str>) -> Result<Option<RunId>, StoreError> {
        Ok(self
            .query(
                "find the newest run of an experiment",
                "SELECT id FROM runs WHERE $1::TEXT IS NULL OR name = $1 ORDER BY id DESC LIMIT 1",
                &[&experiment],
            )?
            .first()
            .map(|row| RunId(row.get(0))))
    }

    fn set_run_commit(&self, run: RunId, commit: &str) -> Result<(), StoreError> {
        self.run_exists(run)?;
        self.execute(
            &format!("store the commit of run {run}"),
            "UPDATE runs SET git_commit = $1 WHERE id = $2",
            &[&commit, &run.0],
        )?;
        Ok(())
    }

    fn run_commit(&self, run: RunId) -> Result<Option<String>, StoreError> {
        self.run_exists(run)?;
        Ok(self
            .query(
                &format!("read the commit of run {run}"),
                "SELECT git_commit FROM runs WHERE id = $1",
                &[&run.0],
            )?
            .first()
            .and_then(|row| row.get(0)))
    }

    fn history_cache(&self, key: &str) -> Result<Option<HistoryCache>, StoreError> {
        let operation = format!("read the history state of `{key}`");
        let rows = self.query(
            &operation,
            "SELECT points, fingerprint, state_json FROM history_cache WHERE series_key = $1",
            &[&key],
        )?;
        rows.first()
            .map(|row| {
                let points: i64 = row.get(0);
                let state: String = row.get(2);
                let state = serde_json::from_str(&state)
                    .map_err(|error| self.corrupt(&format!("history state of `{key}`"), error))?;
                Ok(HistoryCache {
                    points: usize::try_from(points).unwrap_or(0),
                    fingerprint: row.get(1),
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
            &[
                &key,
                &(cache.points as i64),
                &cache.fingerprint,
                &cache.state.to_string(),
            ],
        )?;
        Ok(())
    }
}
