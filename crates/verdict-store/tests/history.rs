//! The store side of `verdict history` on both backends (a real SQLite
//! file, a real PostgreSQL cluster): one row per run with its values in
//! sequence order, filtered by experiment and cell, the commit a run
//! measured, the change point state cache; and a SQLite schema v4 database
//! migrating with its runs' commits unknown. Must not depend on another
//! test's database.

mod support;

use std::collections::BTreeMap;

use serde_json::json;
use verdict_model::{Cell, Environment, RunId, RunStatus, Sample};
use verdict_store::{HistoryCache, HistorySelection, HistoryStore, NewRun, SqliteStore, Store};

fn new_run(name: &str, host: &str, started_at_ms: i64) -> NewRun {
    NewRun {
        name: name.to_string(),
        kind: verdict_model::RunKind::Run,
        placement: verdict_model::Placement::Local,
        experiment_text: format!("name = \"{name}\"\n"),
        experiment_sha256: "cd".repeat(32),
        experiment_json: "{}".to_string(),
        tool_version: "0.1.0".to_string(),
        seed: 7,
        host: host.to_string(),
        planned: 4,
        started_at_ms,
        environment_start: Environment::default(),
        command_line: vec!["verdict".into(), "run".into()],
        bisect: None,
    }
}

fn sample(sequence: u32, cell: usize, wall: f64, warmup: bool) -> Sample {
    let mut metrics = BTreeMap::new();
    metrics.insert("wall".to_string(), wall);
    metrics.insert("ops".to_string(), 100.0 / wall);
    Sample {
        cell,
        block: 0,
        sequence,
        warmup,
        started_at_ms: 1_000 + i64::from(sequence),
        wall_seconds: wall,
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
    }
}

fn cell(mode: &str) -> Cell {
    Cell {
        levels: vec![("mode".to_string(), mode.to_string())],
    }
}

on_both_backends! {
    fn history_has_one_row_per_run_with_values_in_sequence_order(backend) {
        let store = backend.open();
        let first = store.create_run(&new_run("kill", "alpha", 10)).unwrap();
        store
            .append_sample(first, &sample(0, 0, 9.0, true), &cell("a"))
            .unwrap();
        store
            .append_sample(first, &sample(1, 0, 1.0, false), &cell("a"))
            .unwrap();
        store
            .append_sample(first, &sample(2, 1, 5.0, false), &cell("b"))
            .unwrap();
        store
            .append_sample(first, &sample(3, 0, 2.0, false), &cell("a"))
            .unwrap();
        store
            .finish_run(first, RunStatus::Complete, 20, None)
            .unwrap();
        let other = store.create_run(&new_run("other", "alpha", 30)).unwrap();
        store
            .append_sample(other, &sample(0, 0, 7.0, false), &cell("a"))
            .unwrap();
        let second = store.create_run(&new_run("kill", "beta", 40)).unwrap();
        store
            .append_sample(second, &sample(0, 0, 3.0, false), &cell("a"))
            .unwrap();
        store.set_run_commit(second, "0123abcd").unwrap();

        let runs = store
            .history_runs(&HistorySelection {
                experiment: Some("kill".to_string()),
                levels: vec![("mode".to_string(), "a".to_string())],
                metric: "wall".to_string(),
            })
            .unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].run, first);
        assert_eq!(runs[0].values, [1.0, 2.0]);
        assert_eq!(runs[0].host, "alpha");
        assert_eq!(runs[0].status, RunStatus::Complete);
        assert_eq!(runs[0].commit, None);
        assert_eq!(runs[1].run, second);
        assert_eq!(runs[1].values, [3.0]);
        assert_eq!(runs[1].commit.as_deref(), Some("0123abcd"));
        assert_eq!(
            store.run_commit(second).unwrap().as_deref(),
            Some("0123abcd")
        );

        // A metric stored in sample_metrics, every experiment, every cell.
        let all = store
            .history_runs(&HistorySelection {
                experiment: None,
                levels: vec![],
                metric: "ops".to_string(),
            })
            .unwrap();
        let counts: Vec<(RunId, usize)> = all.iter().map(|run| (run.run, run.values.len())).collect();
        assert_eq!(counts, [(first, 3), (other, 1), (second, 1)]);
        assert!(store.set_run_commit(RunId(99), "x").is_err());
    }

    fn history_state_is_stored_and_replaced_per_series(backend) {
        let store = backend.open();
        assert_eq!(store.history_cache("kill|wall|alpha").unwrap(), None);
        let cache = HistoryCache {
            points: 12,
            fingerprint: "f00d".to_string(),
            state: json!({"weak": [3, 9]}),
        };
        store.put_history_cache("kill|wall|alpha", &cache).unwrap();
        let replaced = HistoryCache {
            points: 13,
            ..cache.clone()
        };
        store
            .put_history_cache("kill|wall|alpha", &replaced)
            .unwrap();
        drop(store);
        let store = backend.open();
        assert_eq!(
            store.history_cache("kill|wall|alpha").unwrap(),
            Some(replaced)
        );
    }
}

#[test]
fn a_schema_v4_database_migrates_with_commits_unknown() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("verdict.db");
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schema-v4.db"),
        &path,
    )
    .unwrap();
    let store = SqliteStore::open(&path).unwrap();
    let runs = store.list_runs().unwrap();
    assert!(!runs.is_empty());
    for run in &runs {
        assert_eq!(store.run_commit(run.id).unwrap(), None);
    }
    store.set_run_commit(runs[0].id, "feedbeef").unwrap();
    assert_eq!(
        store.run_commit(runs[0].id).unwrap().as_deref(),
        Some("feedbeef")
    );
    assert_eq!(
        store
            .kernel_config("fixture-v4-sha256")
            .unwrap()
            .map(|(source, _)| source),
        Some("/proc/config.gz".to_string())
    );
}
