//! The schema as an on-disk format: a database written by each older schema
//! version (committed fixtures) opens and migrates forward with its data
//! intact; a newer one, or a SQLite file that is not verdict's, is refused
//! and left untouched. Must not modify the committed fixtures (copies only).

use std::path::{Path, PathBuf};

use serde_json::json;
use verdict_model::{RunId, RunStatus};
use verdict_store::{BisectId, NewBisect, Selection, SqliteStore, Store, StoreError};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A bisection with placeholder settings.
fn new_bisect() -> NewBisect {
    NewBisect {
        repo: ".".to_string(),
        good: "a".to_string(),
        bad: "b".to_string(),
        experiment_text: String::new(),
        config: json!({}),
        started_at_ms: 0,
    }
}

fn user_version(path: &Path) -> i64 {
    rusqlite::Connection::open(path)
        .unwrap()
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap()
}

#[test]
fn a_schema_v1_database_opens_and_migrates_with_its_data() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("old.db");
    std::fs::copy(fixture("schema-v1.db"), &path).unwrap();
    assert_eq!(user_version(&path), 1);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(user_version(&path), SqliteStore::schema_version());
    assert_eq!(SqliteStore::schema_version(), 15);

    let runs = store.list_runs().unwrap();
    let summary: Vec<_> = runs
        .iter()
        .map(|run| {
            (
                run.id,
                run.kind.as_str(),
                run.status,
                run.planned,
                run.done,
                run.failed,
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (RunId(1), "run", RunStatus::Complete, 4, 4, 1),
            (RunId(2), "ab", RunStatus::Running, 10, 1, 0),
        ]
    );
    let record = store.run(RunId(1)).unwrap();
    assert_eq!(record.seed, u64::MAX, "seed stored bit-cast as -1");
    assert_eq!(
        record.environment_start.kernel_release.as_deref(),
        Some("6.1.0-13-amd64")
    );
    assert_eq!(record.environment_start.cpu_count, Some(8));
    assert_eq!(
        record.environment_start.selinux, None,
        "absent stays absent"
    );
    assert_eq!(
        record.environment_end.unwrap().load_average,
        Some([0.7, 0.5, 0.3])
    );
    assert_eq!(record.command_line, vec!["verdict", "run", "fixture.toml"]);
    assert!(record.experiment_text.contains("mode = [\"a\", \"b\"]"));

    let samples = store.samples(RunId(1)).unwrap();
    assert_eq!(samples.len(), 4);
    assert!(samples[0].warmup);
    assert_eq!(samples[1].metrics["bogo-ops/s"], 1000.5);
    let failure = samples[3].failure.as_ref().unwrap();
    assert_eq!(failure.reason, "timed out after 1s");
    assert_eq!((samples[3].signal, samples[3].timed_out), (Some(9), true));

    let values: Vec<f64> = store
        .select_samples(&Selection {
            run: None,
            levels: vec![("mode".to_string(), "b".to_string())],
            metric: "wall".to_string(),
        })
        .unwrap()
        .iter()
        .map(|value| value.value)
        .collect();
    assert_eq!(values, vec![0.5], "warmup and failed samples are not data");

    // What version 2 added works on the migrated database.
    store
        .put_annotation(RunId(1), "doctor", &json!({"ok": true}))
        .unwrap();
    assert_eq!(
        store.annotations(RunId(1)).unwrap()["doctor"],
        json!({"ok": true})
    );
    let bisect = store.create_bisect(&new_bisect()).unwrap();
    store
        .append_bisect_event(bisect, 0, &json!("start"))
        .unwrap();
    // New runs continue after the old ids.
    drop(store);
    let reopened = SqliteStore::open(&path).unwrap();
    assert_eq!(reopened.list_runs().unwrap().len(), 2);
    let integrity: String = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
}

#[test]
fn a_schema_v2_database_migrates_and_mixes_old_metric_rows_with_new_flags() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("v2.db");
    std::fs::copy(fixture("schema-v2.db"), &path).unwrap();
    assert_eq!(user_version(&path), 2);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(user_version(&path), SqliteStore::schema_version());
    assert_eq!(
        store.annotations(RunId(1)).unwrap()["doctor"],
        json!({"summary": "fixture v2"})
    );
    // Run 2 (`ab`, one cell) has an old sample whose wall is a metric row;
    // a new one stores it as a flag. Both read back and select alike.
    let old = store.samples(RunId(2)).unwrap();
    assert_eq!(old.len(), 1);
    assert_eq!(old[0].metrics["wall"], 0.001);
    let mut new = old[0].clone();
    new.sequence = 1;
    new.wall_seconds = 0.002;
    new.metrics.insert("wall".to_string(), 0.002);
    let cell = verdict_model::Cell {
        levels: vec![("command".to_string(), "true".to_string())],
    };
    store.append_sample(RunId(2), &new, &cell).unwrap();
    let samples = store.samples(RunId(2)).unwrap();
    assert_eq!(samples[1].metrics, new.metrics);
    let values: Vec<f64> = store
        .select_samples(&Selection {
            run: Some(RunId(2)),
            levels: Vec::new(),
            metric: "wall".to_string(),
        })
        .unwrap()
        .iter()
        .map(|value| value.value)
        .collect();
    assert_eq!(values, vec![0.001, 0.002]);
}

#[test]
fn a_schema_v3_database_migrates_and_stores_each_kernel_config_once() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("v3.db");
    std::fs::copy(fixture("schema-v3.db"), &path).unwrap();
    assert_eq!(user_version(&path), 3);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(user_version(&path), SqliteStore::schema_version());
    // The v3 sample with its wall flag reads back; the old annotation stays.
    let samples = store.samples(RunId(2)).unwrap();
    assert_eq!(samples[1].metrics["wall"], 0.002);
    assert_eq!(
        store.annotations(RunId(2)).unwrap()["kernel_config"]["text"],
        json!("CONFIG_PREEMPT=y\n")
    );
    // Version 4: one row per distinct config, whatever the number of runs.
    assert_eq!(store.kernel_config("abc").unwrap(), None);
    store
        .put_kernel_config("abc", "/proc/config.gz", "CONFIG_A=y\n")
        .unwrap();
    store
        .put_kernel_config("abc", "/boot/config-x", "CONFIG_A=y\n")
        .unwrap();
    assert_eq!(
        store.kernel_config("abc").unwrap(),
        Some(("/proc/config.gz".to_string(), "CONFIG_A=y\n".to_string()))
    );
    let rows: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM kernel_configs", [], |row| row.get(0))
        .unwrap();
    assert_eq!(rows, 1);
}

/// tests/fixtures/schema-v4.db is schema-v3.db migrated by migration 4
/// (its SQL, as written), plus one v4 sample (run 2, sequence 2, wall as a
/// flag) and one `kernel_configs` row, then VACUUMed.
#[test]
fn a_schema_v4_database_migrates_and_keeps_leftovers_and_missing_values() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("v4.db");
    std::fs::copy(fixture("schema-v4.db"), &path).unwrap();
    assert_eq!(user_version(&path), 4);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(user_version(&path), SqliteStore::schema_version());
    // Everything version 4 held reads back, with no notes.
    let samples = store.samples(RunId(2)).unwrap();
    assert_eq!(samples.len(), 3);
    assert_eq!(samples[2].metrics["wall"], 0.003);
    assert!(
        samples
            .iter()
            .all(|sample| sample.leftovers.is_empty() && sample.missing.is_empty())
    );
    assert_eq!(
        store.kernel_config("fixture-v4-sha256").unwrap(),
        Some((
            "/proc/config.gz".to_string(),
            "CONFIG_PREEMPT_DYNAMIC=y\n".to_string()
        ))
    );
    // Version 5: an iteration's leftovers and missing values are stored
    // with it and read back; a sample without them writes no note.
    let mut noted = samples[2].clone();
    noted.sequence = 3;
    noted.leftovers = vec!["sleep".to_string(), "sleep".to_string()];
    noted.missing.insert(
        "cycles".to_string(),
        "perf printed `<not supported>`".to_string(),
    );
    let mut plain = samples[2].clone();
    plain.sequence = 4;
    let cell = verdict_model::Cell {
        levels: vec![("command".to_string(), "true".to_string())],
    };
    store.append_sample(RunId(2), &noted, &cell).unwrap();
    store.append_sample(RunId(2), &plain, &cell).unwrap();
    drop(store);
    let store = SqliteStore::open(&path).unwrap();
    let samples = store.samples(RunId(2)).unwrap();
    assert_eq!(samples[3], noted);
    assert_eq!(samples[4], plain);
    let notes: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM sample_notes", [], |row| row.get(0))
        .unwrap();
    assert_eq!(notes, 1);
}

/// tests/fixtures/schema-v6.db is schema-v5.db migrated by migration 6
/// (its SQL, as written), plus bisection 1 and four runs named like
/// bisection runs: `bisect 1 aaaaaaa` and `bisect 1 ccccccc` (kind
/// `bisect`), `bisect 1 look-alike` (kind `run`, a user's name) and
/// `bisect 7 ddddddd` (kind `bisect`, a bisection that is not stored), then
/// VACUUMed. Migration 7 links by the typed column what version 6 linked by
/// name, and only that.
#[test]
fn a_schema_v6_database_links_bisection_runs_by_their_old_names() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("v6.db");
    std::fs::copy(fixture("schema-v6.db"), &path).unwrap();
    assert_eq!(user_version(&path), 6);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(user_version(&path), SqliteStore::schema_version());
    let linked: Vec<(RunId, String)> = store
        .bisect_runs(BisectId(1))
        .unwrap()
        .into_iter()
        .map(|run| (run.id, run.name))
        .collect();
    assert_eq!(
        linked,
        vec![
            (RunId(3), "bisect 1 aaaaaaa".to_string()),
            (RunId(4), "bisect 1 ccccccc".to_string()),
        ]
    );
    let unlinked: Option<i64> = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT bisect_id FROM runs WHERE id = 6", [], |row| {
            row.get(0)
        })
        .unwrap();
    assert_eq!(unlinked, None, "no stored bisection 7: not linked");

    // A new run links by the column, whatever its name.
    let bisect = store.create_bisect(&new_bisect()).unwrap();
    let mut new_run = store.run(RunId(3)).unwrap();
    new_run.name = "any name".to_string();
    let run = store
        .create_run(&verdict_store::NewRun {
            name: new_run.name,
            kind: new_run.kind,
            placement: new_run.placement,
            experiment_text: new_run.experiment_text,
            experiment_sha256: new_run.experiment_sha256,
            experiment_json: new_run.experiment_json,
            tool_version: new_run.tool_version,
            seed: new_run.seed,
            host: new_run.host,
            planned: new_run.planned,
            started_at_ms: new_run.started_at_ms,
            environment_start: new_run.environment_start,
            command_line: new_run.command_line,
            bisect: Some(bisect),
        })
        .unwrap();
    let linked: Vec<RunId> = store
        .bisect_runs(bisect)
        .unwrap()
        .iter()
        .map(|run| run.id)
        .collect();
    assert_eq!(linked, vec![run]);
    assert_eq!(store.bisect_runs(BisectId(1)).unwrap().len(), 2);
    assert!(
        store.bisect_runs(BisectId(99)).is_err(),
        "unknown bisection"
    );
}

/// tests/fixtures/schema-v10.db was written by verdict at schema version
/// 10 (`verdict run`, then VACUUMed): run 1 adaptive with a cap (two
/// comparisons decided), run 2 `--until-decided` without a cap (decided,
/// with a projection), run 3 adaptive stopped at its cap, run 4 fixed. The
/// adaptive state was the `procedure` and `decisions` annotations;
/// migration 11 moves each into `adaptive_runs`, value for value.
#[test]
fn a_schema_v10_database_moves_its_adaptive_annotations_into_the_typed_table() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("v10.db");
    std::fs::copy(fixture("schema-v10.db"), &path).unwrap();
    assert_eq!(user_version(&path), 10);
    let annotation = |run: i64, key: &str| -> Option<String> {
        rusqlite::Connection::open(&path)
            .unwrap()
            .query_row(
                "SELECT value_json FROM run_annotations WHERE run_id = ?1 AND key = ?2",
                rusqlite::params![run, key],
                |row| row.get(0),
            )
            .ok()
    };
    let before: Vec<(Option<String>, Option<String>)> = (1..=4)
        .map(|run| (annotation(run, "procedure"), annotation(run, "decisions")))
        .collect();
    assert!(
        before[..3]
            .iter()
            .all(|(procedure, decisions)| procedure.is_some() && decisions.is_some())
    );
    assert_eq!(before[3], (None, None), "run 4 is fixed");

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(user_version(&path), SqliteStore::schema_version());
    for (index, (procedure, decisions)) in before.iter().enumerate() {
        let run = RunId(index as i64 + 1);
        let adaptive = store.adaptive(run).unwrap();
        let procedure: Option<String> = procedure
            .as_deref()
            .map(|text| serde_json::from_str(text).unwrap());
        assert_eq!(adaptive.procedure, procedure, "run {run}");
        let decisions: Vec<serde_json::Value> = decisions
            .as_deref()
            .map(|text| serde_json::from_str(text).unwrap())
            .unwrap_or_default();
        let migrated: Vec<serde_json::Value> = adaptive
            .decisions
            .iter()
            .map(|status| serde_json::to_value(status).unwrap())
            .collect();
        assert_eq!(migrated, decisions, "run {run}");
        assert_eq!(
            store.annotations(run).unwrap().keys().collect::<Vec<_>>(),
            ["process"],
            "run {run}: the other annotations stay"
        );
    }
    let outcomes = |run: i64| -> Vec<&'static str> {
        store
            .adaptive(RunId(run))
            .unwrap()
            .decisions
            .iter()
            .map(|status| status.outcome())
            .collect()
    };
    assert_eq!(outcomes(1), ["regression", "equivalent"]);
    assert_eq!(outcomes(2), ["regression"]);
    assert_eq!(outcomes(3), ["cap", "cap"]);
    assert_eq!(
        store.adaptive(RunId(2)).unwrap().decisions[0].projected_runs,
        Some(10)
    );
    assert!(
        store
            .adaptive(RunId(1))
            .unwrap()
            .procedure
            .unwrap()
            .contains("Hwang–Shih–DeCani")
    );
}

/// tests/fixtures/schema-v11.db was written by verdict at schema version
/// 11 (`verdict run` of a VM experiment under TCG, Debian's kernel, then
/// VACUUMed): run 1 with three boot levels, one boot each, the `wrong`
/// level's boot proven, then refused by its verify (failed, skipped).
/// Each proven boot's environment was the annotation
/// `boot_environment.ID`; migration 12 moves each into its boot's row,
/// value for value.
#[test]
fn a_schema_v11_database_moves_its_boot_environments_into_the_boot_rows() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("v11.db");
    std::fs::copy(fixture("schema-v11.db"), &path).unwrap();
    assert_eq!(user_version(&path), 11);
    let before: Vec<(u32, String)> = {
        let connection = rusqlite::Connection::open(&path).unwrap();
        let mut statement = connection
            .prepare(
                "SELECT key, value_json FROM run_annotations \
                 WHERE run_id = 1 AND key LIKE 'boot_environment.%' ORDER BY key",
            )
            .unwrap();
        statement
            .query_map([], |row| Ok((row.get::<_, String>(0)?, row.get(1)?)))
            .unwrap()
            .map(|row| {
                let (key, value) = row.unwrap();
                (key["boot_environment.".len()..].parse().unwrap(), value)
            })
            .collect()
    };
    assert_eq!(before.len(), 3, "three proven boots: {before:?}");

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(user_version(&path), SqliteStore::schema_version());
    let boots = store.boots(RunId(1)).unwrap();
    assert_eq!(boots.len(), 3, "{boots:?}");
    for boot in &boots {
        let expected: Option<verdict_model::Environment> = before
            .iter()
            .find(|(id, _)| *id == boot.id)
            .map(|(_, text)| serde_json::from_str(text).unwrap());
        assert_eq!(boot.environment, expected, "boot {}", boot.id);
        let environment = boot.environment.as_ref().unwrap();
        let cmdline = environment.kernel_cmdline.as_deref().unwrap();
        assert!(cmdline.contains(&boot.command_line), "{cmdline}");
        assert!(
            cmdline.contains(&format!("verdict.boot={}", boot.nonce.as_deref().unwrap())),
            "{cmdline}"
        );
        assert_eq!(environment.kernel_release, boot.kernel_release);
    }
    assert_eq!(boots[1].status, verdict_model::BootStatus::Failed);
    let keys: Vec<String> = store.annotations(RunId(1)).unwrap().into_keys().collect();
    assert!(
        keys.iter().all(|key| !key.starts_with("boot_environment.")),
        "{keys:?}"
    );
    assert!(keys.contains(&"boot_schedule".to_string()), "{keys:?}");
}

/// tests/fixtures/schema-v12.db was written by verdict at schema version
/// 12, built from commit 1185f46 (`verdict run fixture.toml --seed 12`:
/// levels `mode=a` and `mode=b`, a regex metric `ops`, one warmup each,
/// the fourth iteration failing with exit status 1; then `verdict ab true
/// 'sleep 0.001' -n 3 --seed 3`; VACUUMed). Migration 13 gives samples a
/// host column (NULL: the run's host), adds the takeovers of shared work
/// and the index of open blocks; every sample reads back as it was, on its
/// run's host.
#[test]
fn a_schema_v12_database_keeps_its_samples_on_their_runs_host() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("v12.db");
    std::fs::copy(fixture("schema-v12.db"), &path).unwrap();
    assert_eq!(user_version(&path), 12);
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(user_version(&path), SqliteStore::schema_version());
    let runs = store.list_runs().unwrap();
    assert_eq!(
        runs.iter()
            .map(|run| (run.id.0, run.kind.as_str(), run.done, run.failed))
            .collect::<Vec<_>>(),
        [(1, "run", 10, 1), (2, "ab", 6, 0)]
    );
    let host = runs[0].host.clone();
    let mut hosts = Vec::new();
    let mut samples = Vec::new();
    store
        .each_sample(RunId(1), &mut |sample, sample_host| {
            hosts.push(sample_host.to_string());
            samples.push(sample);
            std::ops::ControlFlow::Continue(())
        })
        .unwrap();
    assert_eq!(samples, store.samples(RunId(1)).unwrap());
    assert!(
        hosts.iter().all(|sample_host| *sample_host == host),
        "{hosts:?}"
    );
    assert_eq!(
        samples
            .iter()
            .map(|sample| sample.sequence)
            .collect::<Vec<_>>(),
        (0..10).collect::<Vec<_>>()
    );
    assert_eq!(samples.iter().filter(|sample| sample.warmup).count(), 2);
    let failed = &samples[3];
    assert_eq!(
        failed
            .failure
            .as_ref()
            .map(|failure| failure.reason.as_str()),
        Some("exit status 1")
    );
    let ops: Vec<f64> = samples
        .iter()
        .filter_map(|sample| sample.metrics.get("ops").copied())
        .collect();
    assert_eq!(
        ops,
        [
            100.0, 101.0, 102.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0
        ]
    );
    assert_eq!(
        store.sample_sequences(RunId(2)).unwrap(),
        [0, 1, 2, 3, 4, 5]
    );
    assert!(store.work_record(RunId(1)).unwrap().blocks.is_empty());
    let on_host = store.list_runs_on_hosts(&[host]).unwrap();
    assert_eq!(on_host.len(), 2);
    let connection = rusqlite::Connection::open(&path).unwrap();
    let named: i64 = connection
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('work_takeovers', 'work_blocks_open')",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(named, 2);
    let with_host: i64 = connection
        .query_row(
            "SELECT COUNT(*) FROM samples WHERE host IS NOT NULL",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(with_host, 0);
    drop(connection);
    // Migration 14 adds the tables of what iterations capture besides
    // their metrics.
    gains_empty_details(&store, &[RunId(1), RunId(2)], 0);
}

/// After migration 14 the old `runs` have no details, and an old sample
/// (`sequence` of the first run) can be given some (a copied run).
fn gains_empty_details(store: &SqliteStore, runs: &[RunId], sequence: u32) {
    for &run in runs {
        assert!(store.sample_details(run).unwrap().is_empty());
        assert!(!store.detail_counts(run).unwrap().any());
    }
    let mut details = verdict_model::SampleDetails::default();
    details
        .monitors
        .insert("context_switches".to_string(), 12.0);
    store.append_details(runs[0], sequence, &details).unwrap();
    assert_eq!(store.sample_details(runs[0]).unwrap()[&sequence], details);
}

/// tests/fixtures/schema-v13.db was written by verdict at schema version
/// 13, built from commit 194734e: `verdict run fixture.toml --seed 13`
/// (the v12 fixture's experiment, named `fixture-v13`: levels `mode=a`
/// and `mode=b`, a regex metric `ops`, one warmup each, the fourth
/// iteration failing with exit status 1); `verdict ab true 'sleep 0.001'
/// -n 3 --seed 3`; then a run detached on a PostgreSQL store (two levels,
/// 4 iterations, 4 blocks), measured by `verdict work --host h0` (killed
/// after its block 1's first sample) and `verdict work --host h0 --host
/// h1` (which took block 1 over), and pulled into the file with `verdict
/// pull`; VACUUMed. Migration 14 adds the tables of what iterations
/// capture besides their metrics: every sample reads back as it was, with
/// the host it ran on, the shared work with its takeover, and the runs
/// have no details until some are stored.
#[test]
fn a_schema_v13_database_keeps_its_hosts_and_takeovers_and_gains_empty_details() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("v13.db");
    std::fs::copy(fixture("schema-v13.db"), &path).unwrap();
    assert_eq!(user_version(&path), 13);
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(user_version(&path), SqliteStore::schema_version());
    let runs = store.list_runs().unwrap();
    assert_eq!(
        runs.iter()
            .map(|run| (run.id.0, run.name.as_str(), run.done, run.failed))
            .collect::<Vec<_>>(),
        [
            (1, "fixture-v13", 10, 1),
            (2, "ab", 6, 0),
            (3, "fixture-v13-shared", 8, 0)
        ]
    );
    let ops: Vec<f64> = store
        .samples(RunId(1))
        .unwrap()
        .iter()
        .filter_map(|sample| sample.metrics.get("ops").copied())
        .collect();
    assert_eq!(
        ops,
        [
            100.0, 101.0, 102.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0
        ]
    );
    let mut hosts = Vec::new();
    store
        .each_sample(RunId(3), &mut |sample, host| {
            hosts.push((sample.sequence, host.to_string()));
            std::ops::ControlFlow::Continue(())
        })
        .unwrap();
    assert_eq!(
        hosts,
        [
            (0, "h0"),
            (1, "h0"),
            (2, "h0"),
            (3, "h0"),
            (4, "h1"),
            (5, "h1"),
            (6, "h1"),
            (7, "h1")
        ]
        .map(|(sequence, host)| (sequence, host.to_string()))
    );
    let work = store.work_record(RunId(3)).unwrap();
    assert_eq!(work.blocks.len(), 4);
    assert_eq!(work.hosts(), ["h0", "h1"]);
    assert_eq!(
        work.takeovers
            .iter()
            .map(|takeover| (
                takeover.block,
                takeover.from_worker.as_str(),
                takeover.to_worker.as_str(),
                takeover.resumed_after
            ))
            .collect::<Vec<_>>(),
        [(1, "w0", "w1", Some(2))]
    );
    gains_empty_details(&store, &[RunId(3), RunId(1), RunId(2)], 4);
}

/// tests/fixtures/schema-v14.db was written by verdict at schema version
/// 14, built from commit 69281b6: `verdict run fixture.toml --seed 14`
/// (`fixture-v14`: levels `mode=0` and `mode=1`, a regex metric `ops`, one
/// warmup and three iterations each); `verdict ab true 'sleep 0.001' -n 3
/// --seed 3`; the same experiment with `--host fixhost --ssh-config FILE
/// --seed 15` (an OpenSSH server on this machine, reached by the name
/// `fixhost`); and the experiment `fixture-v14-vm` (a `[target] vm` with
/// Debian's kernel under KVM, two iterations of `true`), whose two boots
/// failed (ssh never answered), so the run failed; VACUUMed. Migration 15 gives every run its placement from what it
/// recorded (the local runs `local`, the host group's run `hosts` from its
/// `target` annotation, the VM's run `vm` from its host `vm:…`), and the
/// stored words read back as their types; the database refuses a kind,
/// status or placement outside the sets.
#[test]
fn a_schema_v14_database_gets_placements_and_typed_words() {
    use verdict_model::{BootStatus, Placement, RunKind};
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("v14.db");
    std::fs::copy(fixture("schema-v14.db"), &path).unwrap();
    assert_eq!(user_version(&path), 14);
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(user_version(&path), SqliteStore::schema_version());
    let runs = store.list_runs().unwrap();
    assert_eq!(
        runs.iter()
            .map(|run| (
                run.id.0,
                run.name.as_str(),
                run.kind,
                run.status,
                run.placement,
                run.done
            ))
            .collect::<Vec<_>>(),
        [
            (
                1,
                "fixture-v14",
                RunKind::Run,
                RunStatus::Complete,
                Placement::Local,
                8
            ),
            (
                2,
                "ab",
                RunKind::Ab,
                RunStatus::Complete,
                Placement::Local,
                6
            ),
            (
                3,
                "fixture-v14",
                RunKind::Run,
                RunStatus::Complete,
                Placement::Hosts,
                8
            ),
            (
                4,
                "fixture-v14-vm",
                RunKind::Run,
                RunStatus::Failed,
                Placement::Vm,
                0
            ),
        ]
    );
    for run in &runs {
        let record = store.run(run.id).unwrap();
        assert_eq!(
            (record.kind, record.status, record.placement),
            (run.kind, run.status, run.placement)
        );
    }
    let vm = runs
        .iter()
        .find(|run| run.placement == Placement::Vm)
        .expect("the VM's run");
    let boots = store.boots(vm.id).unwrap();
    assert_eq!(
        boots.iter().map(|boot| boot.status).collect::<Vec<_>>(),
        [BootStatus::Failed, BootStatus::Failed]
    );
    assert_eq!(verdict_store::BootRow::of_sample(&boots, 0), None);
    assert!(runs.iter().all(|run| run.kind != RunKind::Bisect));
    // The words outside the sets are refused by the database itself.
    let connection = rusqlite::Connection::open(&path).unwrap();
    for statement in [
        "UPDATE runs SET kind = 'group' WHERE id = 1",
        "UPDATE runs SET status = 'done' WHERE id = 1",
        "UPDATE runs SET placement = 'cloud' WHERE id = 1",
        "UPDATE boots SET status = 'ok'",
    ] {
        let error = connection.execute(statement, []).unwrap_err();
        assert!(
            error.to_string().contains("CHECK constraint failed"),
            "{statement}: {error}"
        );
    }
    connection
        .execute("UPDATE runs SET placement = 'booted_host' WHERE id = 1", [])
        .unwrap();
}

#[test]
fn a_newer_database_is_refused_untouched() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("future.db");
    drop(SqliteStore::open(&path).unwrap());
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();

    let error = SqliteStore::open(&path).unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::NewerSchema {
                found: 99,
                known,
                ..
            } if known == SqliteStore::schema_version()
        ),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "open database {}: it has schema version 99, newer than this verdict (knows up \
             to {}); upgrade verdict",
            path.display(),
            SqliteStore::schema_version()
        )
    );
    assert_eq!(user_version(&path), 99);
}

#[test]
fn a_foreign_sqlite_file_is_refused_untouched() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("someone-else.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT);")
        .unwrap();
    let error = SqliteStore::open(&path).unwrap_err();
    assert!(matches!(error, StoreError::NotVerdict { .. }), "{error:?}");
    assert!(
        error.to_string().ends_with("it is not a verdict database"),
        "{error}"
    );
    let tables: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM sqlite_master", [], |row| row.get(0))
        .unwrap();
    assert_eq!(tables, 1);
}

#[test]
fn a_file_that_is_not_sqlite_names_its_path() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("notes.txt");
    std::fs::write(
        &path,
        "this is not a database, it is a text file of some length\n".repeat(20),
    )
    .unwrap();
    let error = SqliteStore::open(&path).unwrap_err();
    assert!(matches!(error, StoreError::Open { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.starts_with(&format!("open database {}: ", path.display())),
        "{message}"
    );
    assert!(message.contains("not a database"), "{message}");
}

#[test]
fn a_missing_directory_names_its_path() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("no/such/dir/verdict.db");
    let error = SqliteStore::open(&path).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with(&format!("open database {}: ", path.display())),
        "{error}"
    );
}

#[test]
fn open_existing_refuses_a_missing_file_and_creates_nothing() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("verdict.db");
    let error = SqliteStore::open_existing(&path).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "open database {}: there is no such file; `verdict run` creates it",
            path.display()
        )
    );
    assert!(!path.exists());
    drop(SqliteStore::open(&path).unwrap());
    let store = SqliteStore::open_existing(&path).unwrap();
    assert!(store.list_runs().unwrap().is_empty());
}
