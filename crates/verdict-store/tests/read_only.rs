//! `SqliteStore::open_read_only` on real files: a closed database is read as
//! a snapshot without creating `-wal`/`-shm`; a database a writer holds
//! open is read live (committed rows seen); an older schema is read through
//! a migrated in-memory copy and the file stays byte for byte the same;
//! writes through a reader fail. Also `cells` and `run_times`, which the
//! overlap warnings read. (Reading as a user who may not write the file is
//! tested end to end in the `verdict` crate's `store_cli` tests.) Must not
//! modify the committed fixtures (copies only).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use verdict_model::{Cell, Environment, RunId, Sample};
use verdict_store::{NewRun, ReadOnly, SqliteStore, Store, StoreError};

fn new_run(name: &str, started_at_ms: i64) -> NewRun {
    NewRun {
        name: name.to_string(),
        kind: verdict_model::RunKind::Run,
        placement: verdict_model::Placement::Local,
        experiment_text: String::new(),
        experiment_sha256: "00".repeat(32),
        experiment_json: "{}".to_string(),
        tool_version: "test".to_string(),
        seed: 1,
        host: "testhost".to_string(),
        planned: 2,
        started_at_ms,
        environment_start: Environment::default(),
        command_line: vec!["verdict".to_string()],
        bisect: None,
    }
}

fn sample(sequence: u32, cell: usize, started_at_ms: i64, wall: f64) -> Sample {
    Sample {
        cell,
        block: 0,
        sequence,
        warmup: false,
        started_at_ms,
        wall_seconds: wall,
        user_seconds: 0.0,
        sys_seconds: 0.0,
        max_rss_kib: 1,
        exit_code: Some(0),
        signal: None,
        timed_out: false,
        metrics: BTreeMap::from([("wall".to_string(), wall)]),
        failure: None,
        missing: BTreeMap::new(),
        leftovers: Vec::new(),
    }
}

fn cell(level: &str) -> Cell {
    Cell {
        levels: vec![("mode".to_string(), level.to_string())],
    }
}

fn sidecars(path: &Path) -> Vec<PathBuf> {
    ["-wal", "-shm", "-journal"]
        .iter()
        .map(|suffix| {
            let mut name = path.as_os_str().to_owned();
            name.push(suffix);
            PathBuf::from(name)
        })
        .filter(|candidate| candidate.exists())
        .collect()
}

fn write_database(path: &Path) {
    let store = SqliteStore::open(path).unwrap();
    let run = store.create_run(&new_run("one", 1_000_000)).unwrap();
    store
        .append_sample(run, &sample(0, 0, 1_000_100, 0.5), &cell("a"))
        .unwrap();
    store
        .append_sample(run, &sample(1, 1, 1_000_700, 0.25), &cell("b"))
        .unwrap();
}

#[test]
fn a_closed_database_is_read_as_a_snapshot_without_files_beside_it() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("verdict.db");
    write_database(&path);
    assert!(sidecars(&path).is_empty(), "the writer cleaned up");
    let before = std::fs::read(&path).unwrap();

    let reader = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(reader.read_only(), Some(ReadOnly::Snapshot));
    assert_eq!(reader.list_runs().unwrap().len(), 1);
    assert_eq!(reader.samples(RunId(1)).unwrap().len(), 2);
    assert!(sidecars(&path).is_empty(), "{:?}", sidecars(&path));
    // Writes through a reader fail rather than vanish.
    let refused = reader.create_run(&new_run("two", 2_000_000));
    assert!(refused.is_err(), "{refused:?}");
    drop(reader);
    assert!(sidecars(&path).is_empty(), "{:?}", sidecars(&path));
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file is unchanged"
    );
}

#[test]
fn a_database_a_writer_holds_open_is_read_live() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("verdict.db");
    write_database(&path);
    let writer = SqliteStore::open(&path).unwrap();
    let run = writer.create_run(&new_run("live", 3_000_000)).unwrap();
    writer
        .append_sample(run, &sample(0, 0, 3_000_100, 1.0), &cell("a"))
        .unwrap();
    assert!(!sidecars(&path).is_empty(), "the writer has its log open");

    let reader = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(reader.read_only(), Some(ReadOnly::Live));
    // The committed rows are in the log, not yet in the file: a snapshot of
    // the file alone would miss them.
    assert_eq!(reader.list_runs().unwrap().len(), 2);
    assert_eq!(reader.samples(run).unwrap().len(), 1);
}

#[test]
fn an_older_schema_is_read_through_a_migrated_copy_and_the_file_is_untouched() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("old.db");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schema-v1.db"),
        &path,
    )
    .unwrap();
    let before = std::fs::read(&path).unwrap();

    let reader = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(
        reader.read_only(),
        Some(ReadOnly::MigratedCopy { from_version: 1 })
    );
    let runs = reader.list_runs().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(reader.samples(RunId(1)).unwrap().len(), 4);
    assert!(reader.annotations(RunId(1)).unwrap().is_empty(), "v2 table");
    assert_eq!(reader.kernel_config("00").unwrap(), None, "v4 table");
    assert!(
        reader.create_run(&new_run("two", 2_000_000)).is_err(),
        "the in-memory copy refuses writes"
    );
    drop(reader);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file is unchanged"
    );
    assert!(sidecars(&path).is_empty(), "{:?}", sidecars(&path));
}

#[test]
fn a_missing_file_or_a_foreign_file_is_refused() {
    let directory = tempfile::tempdir().unwrap();
    let missing = directory.path().join("nothing.db");
    assert!(matches!(
        SqliteStore::open_read_only(&missing),
        Err(StoreError::Missing { .. })
    ));
    assert!(!missing.exists());
    let foreign = directory.path().join("foreign.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    assert!(matches!(
        SqliteStore::open_read_only(&foreign),
        Err(StoreError::NotVerdict { .. })
    ));
}

#[test]
fn a_file_name_with_uri_characters_opens() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("odd ?name#%20.db");
    write_database(&path);
    let reader = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(reader.list_runs().unwrap().len(), 1);
    assert!(!directory.path().join("odd ").exists());
}

#[test]
fn cells_run_times_and_iteration_spans_come_back_as_stored() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("verdict.db");
    write_database(&path);
    let store = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(
        store.cells(RunId(1)).unwrap(),
        vec![(0, cell("a")), (1, cell("b"))]
    );
    let times = store.run_times().unwrap();
    assert_eq!(times.len(), 1);
    assert_eq!(times[0].host, "testhost");
    assert_eq!(times[0].started_at_ms, 1_000_000);
    assert_eq!(times[0].finished_at_ms, None);
    assert_eq!(times[0].first_iteration_ms, Some(1_000_100));
    assert_eq!(times[0].last_iteration_end_ms, Some(1_000_950));
    assert_eq!(
        store.iteration_spans(RunId(1)).unwrap(),
        vec![(1_000_100, 1_000_600), (1_000_700, 1_000_950)]
    );
    assert!(matches!(
        store.cells(RunId(9)),
        Err(StoreError::UnknownRun { .. })
    ));
}
