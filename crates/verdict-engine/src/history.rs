//! `verdict history` orchestration: stored runs → one robust value per run
//! (median with n and its interval) per host → change points
//! (verdict-stats `changepoint`: ranks by default, or Otava's E-divisive
//! means with a t-test) described
//! with verdict's own shift interval; with Otava's method the per-series
//! weak change points are kept in the store so a series with new runs is
//! re-examined only at its tail. Also the commit a run measured (`git rev-parse HEAD` through
//! verdict-exec) and the `verdict bisect` command for a change point.
//!
//! Must not: print, mix hosts in one series, or change stored runs other
//! than their commit (and the history cache).

use serde::Serialize;
use std::path::Path;
use verdict_exec::{Cancel, Invocation, Status, Target};
use verdict_model::RunId;
use verdict_stats::changepoint::{self, ChangePoint, Described, Detection, Method, Settings};
use verdict_stats::shift::Interval;
use verdict_stats::summary::median_interval;
use verdict_store::{HistoryCache, HistoryRun, HistorySelection, HistoryStore, StoreError};

use crate::error::CommandError;
use crate::history_source::{HistorySpec, file_series, metric_of};

/// Confidence of the per-run median intervals and of the shift intervals.
pub const CONFIDENCE: f64 = 0.95;

/// Why a history could not be made. Messages read after "failed to".
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    ChangePoint(#[from] changepoint::ChangePointError),
    #[error("find the commit of {directory}: `git rev-parse HEAD` {reason}")]
    Git { directory: String, reason: String },
}

/// How points are ordered and labelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// By run start time; one point per run.
    Time,
    /// By run start time; consecutive runs of one commit pooled into one
    /// point; runs without a recorded commit left out.
    Commit,
    /// By run id; one point per run.
    Run,
}

impl Order {
    pub fn as_str(self) -> &'static str {
        match self {
            Order::Time => "time",
            Order::Commit => "commit",
            Order::Run => "run",
        }
    }
}

/// One point of a series: one run (or, by commit, the runs of one commit).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    pub runs: Vec<RunId>,
    pub started_at_ms: i64,
    pub commit: Option<String>,
    pub n: usize,
    pub median: f64,
    /// 95% distribution-free interval of the median; `None` below 6 values.
    pub interval: Option<Interval>,
}

/// A change point as verdict reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// 0-based position in the series of the first point of the new regime.
    pub index: usize,
    pub median_before: f64,
    pub median_after: f64,
    /// Hodges–Lehmann relative shift of the after segment's points against
    /// the before segment's (`after/before − 1`); `None` for values ≤ 0.
    pub change: Option<f64>,
    /// Its distribution-free interval (`None` when the segments are too
    /// small for 95%).
    pub interval: Option<Interval>,
    /// The method's p-value of the two segments: the rank method's
    /// Bonferroni-adjusted Mann–Whitney p, or Otava's t-test p.
    pub p_value: f64,
    pub mean_before: f64,
    pub mean_after: f64,
    /// Points the segments span: [segment_start, index) and [index, segment_end).
    pub segment_start: usize,
    pub segment_end: usize,
}

/// One host's series and its change points.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostSeries {
    pub host: String,
    pub points: Vec<Point>,
    pub changes: Vec<Change>,
    /// Points whose weak change points were reused from the store (0 when
    /// computed from scratch).
    pub reused_points: usize,
    /// Sliding windows examined by this answer.
    pub windows_examined: usize,
}

/// A whole answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct History {
    pub metric: String,
    pub order: Order,
    pub settings: Settings,
    pub series: Vec<HostSeries>,
    /// Runs left out (by commit: runs with no recorded commit).
    pub runs_without_commit: usize,
    /// Why the change point state could not be kept in the store (a
    /// read-only store or role): the answer is right, the next one
    /// computes it again. Not part of the document.
    #[serde(skip)]
    pub state_not_kept: Option<String>,
}

/// What to compute from the store.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryRequest {
    pub selection: HistorySelection,
    pub order: Order,
    pub settings: Settings,
    /// Read and write the per-series state (off: always from scratch).
    pub incremental: bool,
}

/// The history of a stored selection: one series per host (hosts in order
/// of first appearance), change points per series.
pub fn stored_history(
    store: &dyn HistoryStore,
    request: &HistoryRequest,
) -> Result<History, HistoryError> {
    let runs = store.history_runs(&request.selection)?;
    let mut hosts: Vec<(String, Vec<HistoryRun>)> = Vec::new();
    for run in runs {
        match hosts.iter_mut().find(|(host, _)| *host == run.host) {
            Some((_, list)) => list.push(run),
            None => hosts.push((run.host.clone(), vec![run])),
        }
    }
    let mut runs_without_commit = 0;
    let mut series = Vec::new();
    let mut state_not_kept = None;
    for (host, mut runs) in hosts {
        match request.order {
            Order::Run => runs.sort_by_key(|run| run.run),
            Order::Time | Order::Commit => runs.sort_by_key(|run| (run.started_at_ms, run.run)),
        }
        if request.order == Order::Commit {
            let before = runs.len();
            runs.retain(|run| run.commit.is_some());
            runs_without_commit += before - runs.len();
        }
        let points = points_of(&runs, request.order);
        if points.is_empty() {
            continue;
        }
        let key = cache_key(request, &host);
        series.push(analyse(
            store,
            request.incremental.then_some(key.as_str()),
            host,
            points,
            &request.settings,
            &mut state_not_kept,
        )?);
    }
    Ok(History {
        metric: request.selection.metric.clone(),
        order: request.order,
        settings: request.settings,
        series,
        runs_without_commit,
        state_not_kept,
    })
}

/// A series from elsewhere (a CSV column): one point per value, labelled
/// by `times` when given.
pub fn values_history(
    values: &[f64],
    settings: &Settings,
) -> Result<(Vec<Change>, Detection), HistoryError> {
    let detection = changepoint::detect(values, settings)?;
    let changes = changes_of(changepoint::describe(
        values,
        &detection.change_points,
        CONFIDENCE,
    ));
    Ok((changes, detection))
}

fn points_of(runs: &[HistoryRun], order: Order) -> Vec<Point> {
    let mut groups: Vec<Vec<&HistoryRun>> = Vec::new();
    for run in runs {
        match groups.last_mut() {
            Some(group) if order == Order::Commit && group[0].commit == run.commit => {
                group.push(run)
            }
            _ => groups.push(vec![run]),
        }
    }
    groups
        .into_iter()
        .map(|group| {
            let mut values: Vec<f64> = group
                .iter()
                .flat_map(|run| run.values.iter().copied())
                .collect();
            values.sort_by(f64::total_cmp);
            Point {
                runs: group.iter().map(|run| run.run).collect(),
                started_at_ms: group[0].started_at_ms,
                commit: group[0].commit.clone(),
                n: values.len(),
                median: changepoint::median(&values),
                interval: median_interval(&values, CONFIDENCE),
            }
        })
        .collect()
}

fn cache_key(request: &HistoryRequest, host: &str) -> String {
    let levels: Vec<String> = request
        .selection
        .levels
        .iter()
        .map(|(factor, level)| format!("{factor}={level}"))
        .collect();
    serde_json::json!([
        request.selection.experiment,
        levels,
        request.selection.metric,
        host,
        request.order.as_str(),
        request.settings.window,
        request.settings.first_pass_p_value(),
    ])
    .to_string()
}

/// FNV-1a (64 bit) over each point's runs, n and median bits: equal
/// prefixes of a series have equal fingerprints.
fn fingerprint(points: &[Point]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |value: u64| {
        for byte in value.to_le_bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for point in points {
        for run in &point.runs {
            feed(run.0 as u64);
        }
        feed(point.n as u64);
        feed(point.median.to_bits());
    }
    format!("{hash:016x}")
}

fn analyse(
    store: &dyn HistoryStore,
    cache_key: Option<&str>,
    host: String,
    points: Vec<Point>,
    settings: &Settings,
    state_not_kept: &mut Option<String>,
) -> Result<HostSeries, HistoryError> {
    let values: Vec<f64> = points.iter().map(|point| point.median).collect();
    // Only Otava's method keeps state (its weak change points); the rank
    // method is computed from scratch at any length.
    let cache_key = cache_key.filter(|_| settings.method == Method::Otava);
    let cached = match cache_key {
        Some(key) => store.history_cache(key)?,
        None => None,
    };
    let reusable = cached.and_then(|cache| {
        let weak: Vec<ChangePoint> = serde_json::from_value(cache.state).ok()?;
        (cache.points <= points.len()
            && cache.points > 0
            && fingerprint(&points[..cache.points]) == cache.fingerprint)
            .then_some((cache.points, weak))
    });
    let (detection, reused_points, stored_weak) = match reusable {
        Some((known, weak)) if known == points.len() => (
            changepoint::merge_weak(&values, settings, weak.clone())?,
            known,
            Some(weak),
        ),
        Some((known, weak)) => (
            changepoint::detect_incremental(&values, settings, points.len() - known, &weak)?,
            known,
            Some(weak),
        ),
        None => (changepoint::detect(&values, settings)?, 0, None),
    };
    // The stored state stays valid for a longer series (its fingerprint is
    // of a prefix), so it is rewritten only when the weak change points
    // changed or it lags half a window behind: most answers after one new
    // run then only read the database.
    let weak_indices =
        |weak: &[ChangePoint]| weak.iter().map(|point| point.index).collect::<Vec<_>>();
    let stale = match &stored_weak {
        None => true,
        Some(weak) => {
            weak_indices(weak) != weak_indices(&detection.weak_change_points)
                || points.len() - reused_points >= (settings.window / 2).max(1)
        }
    };
    if let Some(key) = cache_key
        && stale
    {
        let cache = HistoryCache {
            points: points.len(),
            fingerprint: fingerprint(&points),
            state: serde_json::to_value(&detection.weak_change_points)
                .unwrap_or(serde_json::Value::Null),
        };
        // A database opened read-only (or locked) still answers; the
        // caller says once that the state was not kept.
        if let Err(error) = store.put_history_cache(key, &cache) {
            state_not_kept.get_or_insert(error.to_string());
        }
    }
    let changes = changes_of(changepoint::describe(
        &values,
        &detection.change_points,
        CONFIDENCE,
    ));
    Ok(HostSeries {
        host,
        points,
        changes,
        reused_points,
        windows_examined: detection.windows_examined,
    })
}

fn changes_of(described: Vec<Described>) -> Vec<Change> {
    described
        .into_iter()
        .map(|change| Change {
            index: change.index,
            median_before: change.median_before,
            median_after: change.median_after,
            change: change.shift.map(|shift| shift.estimate),
            interval: change.interval(),
            p_value: change.p_value,
            mean_before: change.test.mean_before,
            mean_after: change.test.mean_after,
            segment_start: change.segment_start,
            segment_end: change.segment_end,
        })
        .collect()
}

/// `git rev-parse HEAD` in `directory` through `executor`: the commit, or
/// `None` when the directory is not in a git work tree (or git is missing).
pub fn repository_commit(
    executor: &dyn Target,
    cancel: &Cancel,
    directory: &std::path::Path,
) -> Result<Option<(String, String)>, HistoryError> {
    let git = |arguments: &[&str]| -> Result<Option<String>, HistoryError> {
        let mut argv = vec!["git"];
        argv.extend_from_slice(arguments);
        let invocation = Invocation::argv(argv)
            .with_cwd(directory)
            .with_env("LC_ALL", "C")
            .with_env("GIT_TERMINAL_PROMPT", "0");
        match executor.run(&invocation, cancel) {
            Ok(outcome) if outcome.status == Status::Exited(0) => Ok(Some(
                String::from_utf8_lossy(&outcome.stdout).trim().to_string(),
            )),
            Ok(_) => Ok(None),
            Err(error) => Err(HistoryError::Git {
                directory: directory.display().to_string(),
                reason: error.to_string(),
            }),
        }
    };
    let Some(commit) = git(&["rev-parse", "--verify", "--quiet", "HEAD"])? else {
        return Ok(None);
    };
    let top = git(&["rev-parse", "--show-toplevel"])?.unwrap_or_default();
    Ok(Some((commit, top)))
}

/// The good and bad commits around change `change` of `series`: the
/// commit of the last point before it and of the first point after it.
/// A change point locates a change only to within a few points: when both
/// measured the same commit, the nearest commit boundary (points whose
/// commits differ) is taken instead, and `widened` says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BisectRange {
    pub good: String,
    pub bad: String,
    /// Points between the change point and the boundary used (0: none).
    pub widened: usize,
}

/// See [`BisectRange`]; `None` when the points near the change record no
/// commit, or every point has the same one.
pub fn bisect_range(series: &HostSeries, change: &Change) -> Option<BisectRange> {
    let commit = |index: usize| series.points.get(index)?.commit.clone();
    let boundary = |index: usize| -> Option<(String, String)> {
        let good = commit(index.checked_sub(1)?)?;
        let bad = commit(index)?;
        (good != bad).then_some((good, bad))
    };
    for distance in 0..series.points.len() {
        for index in [
            change.index.checked_sub(distance),
            change.index.checked_add(distance),
        ]
        .into_iter()
        .flatten()
        {
            if let Some((good, bad)) = boundary(index) {
                return Some(BisectRange {
                    good,
                    bad,
                    widened: distance,
                });
            }
        }
    }
    None
}

/// A stored selection's history with what it followed: the experiment the
/// selection names, and the metric with its unit.
#[derive(Debug, Clone)]
pub struct SelectionHistory {
    pub experiment: Option<String>,
    pub metric: String,
    pub unit: String,
    pub history: History,
}

/// The history of the stored selection `spec`, parsed as `selection` (by
/// [`parse_history_selection`](crate::history_source::parse_history_selection)),
/// for `metric` (default: the experiment's primary metric); an error when
/// it selects no values.
pub fn selection_history(
    store: &dyn HistoryStore,
    spec: &str,
    selection: HistorySpec,
    metric: Option<&str>,
    order: Order,
    settings: Settings,
    incremental: bool,
) -> Result<SelectionHistory, CommandError> {
    let HistorySpec { experiment, levels } = selection;
    let (metric, unit) = metric_of(store, experiment.as_deref(), metric, spec)?;
    let request = HistoryRequest {
        selection: HistorySelection {
            experiment: experiment.clone(),
            levels,
            metric: metric.clone(),
        },
        order,
        settings,
        incremental,
    };
    let history =
        stored_history(store, &request).map_err(|error| CommandError::Input(error.to_string()))?;
    if history.series.is_empty() {
        return Err(CommandError::Input(format!(
            "`{spec}` selects no stored values of metric `{metric}`{}",
            if order == Order::Commit && history.runs_without_commit > 0 {
                format!(
                    " with a recorded commit ({} runs have none; `verdict run --commit`)",
                    history.runs_without_commit
                )
            } else {
                String::new()
            }
        )));
    }
    Ok(SelectionHistory {
        experiment,
        metric,
        unit,
        history,
    })
}

/// A CSV column's history: its values, the row labels, the change points.
#[derive(Debug, Clone)]
pub struct FileHistory {
    pub values: Vec<f64>,
    pub labels: Vec<String>,
    pub changes: Vec<Change>,
}

/// The history of `column` of the CSV file `path`, rows labelled by the
/// column `labels` when given.
pub fn file_history(
    path: &Path,
    column: &str,
    labels: Option<&str>,
    settings: &Settings,
) -> Result<FileHistory, CommandError> {
    let (values, labels) = file_series(path, column, labels)?;
    let (changes, _) = values_history(&values, settings)
        .map_err(|error| CommandError::Input(error.to_string()))?;
    Ok(FileHistory {
        values,
        labels,
        changes,
    })
}

/// The `verdict bisect` arguments for one change point: the repository
/// and experiment file the run after the change recorded (`REPO` and
/// `EXPERIMENT.toml` when it recorded none) and the commits around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BisectCommand {
    pub repository: String,
    pub experiment: String,
    pub range: BisectRange,
}

/// The `verdict bisect` arguments for change point `number` (1-based, as
/// listed) of the series of `host` (default: the only one).
pub fn bisect_command(
    store: &dyn HistoryStore,
    series: &[HostSeries],
    host: Option<&str>,
    number: usize,
) -> Result<BisectCommand, CommandError> {
    let series = match host {
        Some(host) => series
            .iter()
            .find(|series| series.host == host)
            .ok_or_else(|| CommandError::Input(format!("no series for host `{host}`")))?,
        None if series.len() == 1 => &series[0],
        None => {
            let hosts: Vec<&str> = series.iter().map(|series| series.host.as_str()).collect();
            return Err(CommandError::Input(format!(
                "the selection has series on {} hosts ({}); pick one with --host",
                hosts.len(),
                hosts.join(", ")
            )));
        }
    };
    let change = number
        .checked_sub(1)
        .and_then(|index| series.changes.get(index))
        .ok_or_else(|| {
            let changes = series.changes.len();
            CommandError::Input(format!(
                "--bisect {number}: host {} has {changes} {}",
                series.host,
                if changes == 1 {
                    "change point"
                } else {
                    "change points"
                }
            ))
        })?;
    let range = bisect_range(series, change).ok_or_else(|| {
        CommandError::Input(format!(
            "--bisect {number}: the runs around change point {number} record no two different \
             commits (record them with `verdict run --commit REV` or run experiments kept in a \
             git repository)"
        ))
    })?;
    let after = &series.points[change.index];
    // The repository and experiment file the run after the change recorded.
    let repository = after
        .runs
        .first()
        .map(|run| store.annotations(*run))
        .transpose()
        .map_err(|error| CommandError::Internal(error.to_string()))?
        .and_then(|annotations| annotations.get("repository").cloned());
    let recorded = |key: &str, placeholder: &str| {
        repository
            .as_ref()
            .and_then(|value| value[key].as_str())
            .unwrap_or(placeholder)
            .to_string()
    };
    Ok(BisectCommand {
        repository: recorded("path", "REPO"),
        experiment: recorded("experiment", "EXPERIMENT.toml"),
        range,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(commits: &[&str]) -> HostSeries {
        HostSeries {
            host: "h".to_string(),
            points: commits
                .iter()
                .enumerate()
                .map(|(index, commit)| Point {
                    runs: vec![RunId(index as i64 + 1)],
                    started_at_ms: index as i64,
                    commit: (!commit.is_empty()).then(|| commit.to_string()),
                    n: 1,
                    median: 1.0,
                    interval: None,
                })
                .collect(),
            changes: Vec::new(),
            reused_points: 0,
            windows_examined: 0,
        }
    }

    fn change(index: usize) -> Change {
        Change {
            index,
            median_before: 1.0,
            median_after: 2.0,
            change: None,
            interval: None,
            p_value: 0.0,
            mean_before: 1.0,
            mean_after: 2.0,
            segment_start: 0,
            segment_end: 6,
        }
    }

    #[test]
    fn bisect_range_is_the_commits_around_the_change_or_the_nearest_boundary() {
        let exact = series(&["a", "a", "b", "c", "c", "c"]);
        let range = bisect_range(&exact, &change(3)).unwrap();
        assert_eq!(
            (range.good.as_str(), range.bad.as_str(), range.widened),
            ("b", "c", 0)
        );
        // Detected one point late: between two runs of c; the boundary b|c
        // is one point earlier.
        let range = bisect_range(&exact, &change(4)).unwrap();
        assert_eq!(
            (range.good.as_str(), range.bad.as_str(), range.widened),
            ("b", "c", 1)
        );
        assert_eq!(bisect_range(&series(&["a", "a", "a"]), &change(1)), None);
        assert_eq!(bisect_range(&series(&["", "", ""]), &change(1)), None);
    }
}
