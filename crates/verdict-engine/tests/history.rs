//! `stored_history` on a real SQLite file: one series per host (never
//! mixed), a step on one host found there only with verdict's interval,
//! and a repeated question after appending runs that reuses the stored
//! weak change points yet answers as a computation from scratch does.
//! Must not: depend on another test's database.

use std::collections::BTreeMap;

use verdict_engine::history::{HistoryRequest, Order, stored_history};
use verdict_model::{Cell, Environment, RunStatus, Sample};
use verdict_stats::changepoint::{Method, Settings};
use verdict_store::{HistorySelection, NewRun, SqliteStore, Store};

fn store_run(store: &SqliteStore, host: &str, started_at_ms: i64, values: &[f64]) {
    let run = store
        .create_run(&NewRun {
            name: "kill".to_string(),
            kind: verdict_model::RunKind::Run,
            placement: verdict_model::Placement::Local,
            experiment_text: "name = \"kill\"\n".to_string(),
            experiment_sha256: "ef".repeat(32),
            experiment_json: "{}".to_string(),
            tool_version: "0.1.0".to_string(),
            seed: 1,
            host: host.to_string(),
            planned: values.len() as u64,
            started_at_ms,
            environment_start: Environment::default(),
            command_line: vec!["verdict".into()],
            bisect: None,
        })
        .unwrap();
    let cell = Cell {
        levels: vec![("mode".to_string(), "a".to_string())],
    };
    for (sequence, value) in values.iter().enumerate() {
        let mut metrics = BTreeMap::new();
        metrics.insert("ops".to_string(), *value);
        let sample = Sample {
            cell: 0,
            block: 0,
            sequence: sequence as u32,
            warmup: false,
            started_at_ms,
            wall_seconds: 0.1,
            user_seconds: 0.0,
            sys_seconds: 0.0,
            max_rss_kib: 1,
            exit_code: Some(0),
            signal: None,
            timed_out: false,
            metrics,
            failure: None,
            missing: Default::default(),
            leftovers: Vec::new(),
        };
        store.append_sample(run, &sample, &cell).unwrap();
    }
    store
        .finish_run(run, RunStatus::Complete, started_at_ms + 1, None)
        .unwrap();
}

/// Deterministic noise in [-1, 1) (golden-ratio sequence).
fn noise(index: usize) -> f64 {
    ((index as f64 * 0.618_033_988_7).fract() - 0.5) * 2.0
}

/// The selection's request by `method` (Otava's weak points are what the
/// store keeps for `incremental` answers).
fn request(incremental: bool, method: Method) -> HistoryRequest {
    HistoryRequest {
        selection: HistorySelection {
            experiment: Some("kill".to_string()),
            levels: vec![("mode".to_string(), "a".to_string())],
            metric: "ops".to_string(),
        },
        order: Order::Time,
        settings: match method {
            Method::Otava => Settings::otava(),
            Method::Ranks => Settings::default(),
        },
        incremental,
    }
}

/// Run `index` on alpha: 1000 ops/s, 850 from run 30 on; on beta: 1000.
fn fill(store: &SqliteStore, from: usize, to: usize) {
    for index in from..to {
        let alpha = if index >= 30 { 850.0 } else { 1000.0 };
        let values: Vec<f64> = (0..5)
            .map(|sample| alpha + 20.0 * noise(index * 5 + sample))
            .collect();
        store_run(store, "alpha", index as i64 * 1000, &values);
        let values: Vec<f64> = (0..5)
            .map(|sample| 1000.0 + 20.0 * noise(7 + index * 5 + sample))
            .collect();
        store_run(store, "beta", index as i64 * 1000 + 500, &values);
    }
}

#[test]
fn each_host_is_its_own_series_and_only_alpha_changes() {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("verdict.db")).unwrap();
    fill(&store, 0, 60);
    let history = stored_history(&store, &request(false, Method::Ranks)).unwrap();
    let hosts: Vec<&str> = history.series.iter().map(|s| s.host.as_str()).collect();
    assert_eq!(hosts, ["alpha", "beta"]);
    let alpha = &history.series[0];
    assert_eq!(alpha.points.len(), 60);
    assert_eq!(alpha.points[0].n, 5);
    let indices: Vec<usize> = alpha.changes.iter().map(|change| change.index).collect();
    assert_eq!(indices, [30]);
    let change = &alpha.changes[0];
    assert!((change.change.unwrap() - -0.15).abs() < 0.02, "{change:?}");
    let interval = change.interval.unwrap();
    assert!(interval.low < -0.14 && interval.high > -0.16 && interval.high < 0.0);
    assert!(history.series[1].changes.is_empty());
}

#[test]
fn appended_runs_reuse_stored_weak_points_and_match_a_fresh_answer() {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("verdict.db")).unwrap();
    fill(&store, 0, 400);
    let first = stored_history(&store, &request(true, Method::Otava)).unwrap();
    assert_eq!(first.series[0].reused_points, 0);
    // Otava re-examines from about (new / window + 4) windows before the end.
    fill(&store, 400, 410);
    let again = stored_history(&store, &request(true, Method::Otava)).unwrap();
    let fresh = stored_history(&store, &request(false, Method::Otava)).unwrap();
    assert_eq!(again.series[0].reused_points, 400);
    assert_eq!(again.series[1].reused_points, 400);
    assert!(again.series[0].windows_examined < fresh.series[0].windows_examined);
    for (incremental, scratch) in again.series.iter().zip(&fresh.series) {
        assert_eq!(
            incremental.changes, scratch.changes,
            "host {}",
            scratch.host
        );
    }
    assert_eq!(again.series[0].changes[0].index, 30);
}
