//! The commands that only read the store (`runs`, `report`, `compare`,
//! `export`), run by the built binary on databases made by real `verdict
//! run`s: read as an unprivileged user from a database and directory it may
//! not write (no `-wal`/`-shm` left behind, the file unchanged), while a
//! writer is running, and from an older schema; pooled selections that
//! ignore unrelated runs and name the runs they pooled; warnings about runs
//! that overlapped in time and sides from different runs; and the export
//! of every raw sample as RFC 4180 CSV and `verdict.export/v1` JSON.
//! Must not depend on another test's database (each test has its own
//! temporary directory).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const VERDICT: &str = env!("CARGO_BIN_EXE_verdict");

fn verdict(arguments: &[&str], db: &Path) -> Command {
    let mut command = Command::new(VERDICT);
    command
        .args(arguments)
        .arg("--db")
        .arg(db)
        .env("NO_COLOR", "1")
        .env_remove("VERDICT_DB");
    command
}

fn succeed(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?} exited {:?}: {}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn stdout(command: &mut Command) -> String {
    String::from_utf8(succeed(command).stdout).unwrap()
}

fn json(command: &mut Command) -> Value {
    serde_json::from_str(&stdout(command)).unwrap()
}

fn is_root() -> bool {
    let output = Command::new("id").arg("-u").output().unwrap();
    String::from_utf8_lossy(&output.stdout).trim() == "0"
}

/// `verdict ARGS --db DB` as a user who may not write the database: as root
/// (which ignores file permissions) through `setpriv` as nobody, otherwise
/// as this user (the test then removes its own write permission).
/// `scratch` is the test's directory, for a copy of the binary if nobody
/// cannot reach the built one.
fn as_reader(arguments: &[&str], db: &Path, scratch: &Path) -> Option<Command> {
    if !is_root() {
        return Some(verdict(arguments, db));
    }
    let setpriv = verdict_testkit::require_program("setpriv", "util-linux")?;
    let mut command = Command::new(setpriv);
    command
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(binary_for_others(scratch))
        .args(arguments)
        .arg("--db")
        .arg(db)
        .env("NO_COLOR", "1")
        .env_remove("VERDICT_DB")
        .current_dir("/");
    Some(command)
}

/// The verdict binary at a path every user may execute: the built one when
/// each directory above it lets others through, else a copy in `scratch`
/// (a target directory under a private home, say).
fn binary_for_others(scratch: &Path) -> PathBuf {
    let reachable = Path::new(VERDICT).ancestors().all(|path| {
        path.as_os_str().is_empty()
            || std::fs::metadata(path)
                .is_ok_and(|metadata| metadata.permissions().mode() & 0o001 != 0)
    });
    if reachable {
        return PathBuf::from(VERDICT);
    }
    let copy = scratch.join("verdict-for-others");
    if !copy.exists() {
        std::fs::copy(VERDICT, &copy).unwrap();
        chmod(&copy, 0o755);
    }
    copy
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A temporary directory others may enter (tempfile makes it 0700).
fn directory() -> tempfile::TempDir {
    let directory = tempfile::tempdir().unwrap();
    chmod(directory.path(), 0o755);
    directory
}

fn sidecars(db: &Path) -> Vec<PathBuf> {
    ["-wal", "-shm", "-journal"]
        .iter()
        .map(|suffix| {
            let mut name = db.as_os_str().to_owned();
            name.push(suffix);
            PathBuf::from(name)
        })
        .filter(|path| path.exists())
        .collect()
}

fn write_experiment(directory: &Path, name: &str, text: &str) -> PathBuf {
    let path = directory.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

fn run_experiment(db: &Path, experiment: &Path) {
    succeed(&mut verdict(&["run", experiment.to_str().unwrap()], db));
}

/// Two levels of `mode`, `true` six times each.
fn small_experiment(directory: &Path) -> PathBuf {
    write_experiment(
        directory,
        "small",
        "name = \"small\"\ncommand = [\"true\"]\n\n[factors]\nmode = [\"a\", \"b\"]\n\n\
         [sampling]\niterations = 6\n",
    )
}

/// `kill-copies`: copy=a/b, metric `kill bogo-ops/s` (higher is better).
fn kill_experiment(directory: &Path) -> PathBuf {
    write_experiment(
        directory,
        "kill",
        r#"name = "kill-copies"
command = ["sh", "-c", "echo \"kill bogo-ops/s: $((1000 + $$ % 7))\"", "{copy}"]

[factors]
copy = ["a", "b"]

[[metrics]]
name = "kill bogo-ops/s"
source = "regex"
pattern = 'bogo-ops/s: (\d+)'
direction = "higher"
unit = "bogo-ops/s"

[sampling]
iterations = 6
"#,
    )
}

fn sleep_experiment(directory: &Path, name: &str, seconds: &str, iterations: u32) -> PathBuf {
    write_experiment(
        directory,
        name,
        &format!(
            "name = \"{name}\"\ncommand = [\"sleep\", \"{seconds}\"]\n\n[factors]\n\
             variant = [\"a\", \"b\"]\n\n[sampling]\niterations = {iterations}\nwarmups = 0\n"
        ),
    )
}

fn every_read_command_succeeds(db: &Path, scratch: &Path) -> bool {
    let commands: [&[&str]; 8] = [
        &["runs"],
        &["runs", "--format", "json"],
        &["report", "1"],
        &["report", "1", "--format", "json"],
        &["report", "1", "--cols", "mode"],
        &["compare", "1:mode=a", "1:mode=b"],
        &["export", "1"],
        &["export", "1", "--format", "json"],
    ];
    for arguments in commands {
        let Some(mut command) = as_reader(arguments, db, scratch) else {
            return false;
        };
        succeed(&mut command);
    }
    true
}

#[test]
fn readers_read_a_database_they_may_not_write_and_leave_nothing_behind() {
    let directory = directory();
    let data = directory.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let db = data.join("verdict.db");
    run_experiment(&db, &small_experiment(directory.path()));
    assert!(sidecars(&db).is_empty(), "{:?}", sidecars(&db));
    let before = std::fs::read(&db).unwrap();

    // Neither the file nor its directory writable.
    chmod(&db, 0o444);
    chmod(&data, 0o555);
    if !every_read_command_succeeds(&db, directory.path()) {
        return;
    }
    assert!(sidecars(&db).is_empty(), "{:?}", sidecars(&db));

    // A directory anyone may write (like /tmp): a read-only SQLite open
    // would create -wal and -shm there, owned by the reader, and leave them.
    chmod(&data, 0o1777);
    every_read_command_succeeds(&db, directory.path());
    assert!(sidecars(&db).is_empty(), "{:?}", sidecars(&db));
    assert_eq!(std::fs::read(&db).unwrap(), before, "the file is unchanged");
    chmod(&data, 0o755);
    chmod(&db, 0o644);
}

/// Kills and reaps the writer if the test fails before it finishes.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_run(db: &Path, experiment: &Path) -> Running {
    Running(
        verdict(&["run", experiment.to_str().unwrap()], db)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// Polls (as the writer's user) until run `run` has stored `done` iterations.
fn wait_for_samples(db: &Path, run: i64, done: u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if db.exists() {
            let output = verdict(&["runs", "--format", "json"], db).output().unwrap();
            if let Ok(document) = serde_json::from_slice::<Value>(&output.stdout)
                && document["runs"]
                    .as_array()
                    .and_then(|runs| runs.iter().find(|entry| entry["id"] == run))
                    .is_some_and(|entry| entry["done"].as_u64() >= Some(done))
            {
                return;
            }
        }
        assert!(Instant::now() < deadline, "run {run} stored no samples");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_reader_sees_what_a_running_writer_committed() {
    let directory = directory();
    let db = directory.path().join("verdict.db");
    let experiment = sleep_experiment(directory.path(), "long", "0.1", 40);
    let _writer = spawn_run(&db, &experiment);
    wait_for_samples(&db, 1, 2);
    assert!(!sidecars(&db).is_empty(), "the writer has its log open");
    chmod(&db, 0o644);
    let Some(mut runs) = as_reader(&["runs", "--format", "json"], &db, directory.path()) else {
        return;
    };
    let document = json(&mut runs);
    assert_eq!(document["runs"][0]["status"], "running");
    assert!(
        document["runs"][0]["done"].as_u64() >= Some(2),
        "{document}"
    );
}

#[test]
fn an_older_schema_is_read_without_migrating_the_file() {
    let directory = directory();
    let data = directory.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let db = data.join("old.db");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../verdict-store/tests/fixtures/schema-v1.db"),
        &db,
    )
    .unwrap();
    let before = std::fs::read(&db).unwrap();
    chmod(&db, 0o444);
    chmod(&data, 0o555);
    let Some(mut runs) = as_reader(&["runs"], &db, directory.path()) else {
        return;
    };
    let output = succeed(&mut runs);
    let listing = String::from_utf8(output.stdout).unwrap();
    assert!(listing.contains("fixture-v1"), "{listing}");
    let note = String::from_utf8(output.stderr).unwrap();
    assert!(
        note.contains("has schema version 1") && note.contains("the file is left as it is"),
        "{note}"
    );
    assert_eq!(std::fs::read(&db).unwrap(), before);
    assert!(sidecars(&db).is_empty(), "{:?}", sidecars(&db));
    chmod(&data, 0o755);
}

#[test]
fn pooled_selections_skip_unrelated_runs_and_name_the_runs_they_pool() {
    let directory = directory();
    let db = directory.path().join("verdict.db");
    let kill = kill_experiment(directory.path());
    run_experiment(&db, &kill);
    run_experiment(&db, &kill);
    // The newest run is an unrelated experiment without the metric or the
    // factor: it used to make the selection fail ("run 3 has no metric").
    run_experiment(&db, &small_experiment(directory.path()));

    let document = json(&mut verdict(
        &[
            "compare",
            "copy=a",
            "copy=b",
            "--metric",
            "kill bogo-ops/s",
            "--format",
            "json",
        ],
        &db,
    ));
    assert_eq!(document["schema"], "verdict.compare/v1");
    assert_eq!(document["comparisons"][0]["unit"], "bogo-ops/s");
    assert_eq!(document["comparisons"][0]["better"], "higher");
    assert_eq!(document["comparisons"][0]["baseline"]["n"], 12);
    for (index, side) in ["baseline", "candidate"].iter().enumerate() {
        let source = &document["sources"][index];
        assert_eq!(source["side"], *side);
        assert_eq!(source["kind"], "selection");
        assert_eq!(source["runs"], serde_json::json!([1, 2]));
        assert_eq!(source["values"], 12);
    }
    // Same runs on both sides, run one after the other: nothing to warn.
    assert_eq!(document["warnings"], serde_json::json!([]));

    // Without --metric: the primary metric of the newest run with the cell.
    let text = stdout(&mut verdict(&["compare", "copy=a", "copy=b"], &db));
    assert!(
        text.contains("baseline `copy=a`: 12 values from runs 1, 2"),
        "{text}"
    );
    assert!(
        text.contains("candidate `copy=b`: 12 values from runs 1, 2"),
        "{text}"
    );
    assert!(!text.contains("warning"), "{text}");
    let runs = json(&mut verdict(&["runs", "--format", "json"], &db));
    assert_eq!(runs["warnings"], serde_json::json!([]));

    // A pooled run that defines the metric with another unit is an error
    // naming both runs, not a silent mix.
    let other_unit = std::fs::read_to_string(&kill)
        .unwrap()
        .replace("unit = \"bogo-ops/s\"", "unit = \"kops/s\"");
    run_experiment(
        &db,
        &write_experiment(directory.path(), "kill-kops", &other_unit),
    );
    let output = verdict(
        &["compare", "copy=a", "copy=b", "--metric", "kill bogo-ops/s"],
        &db,
    )
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("define metric `kill bogo-ops/s` differently")
            && stderr.contains("run 4: unit `kops/s`")
            && stderr.contains("run 2: unit `bogo-ops/s`"),
        "{stderr}"
    );
    // Naming one run still works.
    succeed(&mut verdict(
        &[
            "compare",
            "4:copy=a",
            "4:copy=b",
            "--metric",
            "kill bogo-ops/s",
        ],
        &db,
    ));

    let output = verdict(&["compare", "copy=a", "copy=b", "--metric", "nosuch"], &db)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("selects no stored samples"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn overlapping_runs_and_sides_from_different_runs_are_warned_about() {
    let directory = directory();
    let db = directory.path().join("verdict.db");
    let long = sleep_experiment(directory.path(), "long", "0.1", 40);
    let short = sleep_experiment(directory.path(), "short", "0.05", 4);
    let mut writer = spawn_run(&db, &long);
    wait_for_samples(&db, 1, 2);
    run_experiment(&db, &short);
    assert!(writer.0.wait().unwrap().success());
    // Run 3 after both have finished.
    run_experiment(&db, &short);

    let text = stdout(&mut verdict(&["runs"], &db));
    assert!(
        text.contains("warning: runs 1 and 2 measured at the same time on host"),
        "{text}"
    );
    let runs = json(&mut verdict(&["runs", "--format", "json"], &db));
    let warnings = runs["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{runs}");
    assert_eq!(warnings[0]["kind"], "overlapping_runs");
    assert_eq!(warnings[0]["runs"], serde_json::json!([1, 2]));
    assert!(warnings[0]["overlap_ms"].as_i64() > Some(0));

    for run in ["1", "2"] {
        let report = stdout(&mut verdict(&["report", run], &db));
        assert!(report.contains("warning: runs 1 and 2"), "{report}");
    }
    let report = json(&mut verdict(&["report", "3", "--format", "json"], &db));
    assert_eq!(report["schema"], "verdict.report/v1");
    assert_eq!(report["warnings"], serde_json::json!([]));

    // Sides from runs measured at the same time.
    let compare = json(&mut verdict(
        &["compare", "1:variant=a", "2:variant=a", "--format", "json"],
        &db,
    ));
    let kinds: Vec<&str> = compare["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|warning| warning["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["overlapping_runs", "different_runs"], "{compare}");
    assert_eq!(compare["warnings"][1]["apart_ms"], 0);

    // Sides from runs measured one after the other: how far apart.
    let compare = json(&mut verdict(
        &["compare", "2:variant=a", "3:variant=a", "--format", "json"],
        &db,
    ));
    let different = compare["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|warning| warning["kind"] == "different_runs")
        .unwrap_or_else(|| panic!("{compare}"));
    assert_eq!(different["baseline_runs"], serde_json::json!([2]));
    assert_eq!(different["candidate_runs"], serde_json::json!([3]));
    assert!(different["apart_ms"].as_i64() > Some(0), "{different}");
    assert!(
        different["message"].as_str().unwrap().contains(" apart: "),
        "{different}"
    );
    let text = stdout(&mut verdict(
        &["compare", "2:variant=a", "3:variant=a"],
        &db,
    ));
    assert!(
        text.contains("warning: the baseline comes from run 2"),
        "{text}"
    );
}

/// RFC 4180 records: quoted fields may hold commas, quotes (doubled) and
/// line breaks; records end with CRLF.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut characters = text.chars().peekable();
    while let Some(character) = characters.next() {
        match (quoted, character) {
            (true, '"') if characters.peek() == Some(&'"') => {
                characters.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, other) => field.push(other),
            (false, '"') => {
                assert!(field.is_empty(), "a quote inside an unquoted field");
                quoted = true;
            }
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') => {
                assert_eq!(characters.next(), Some('\n'), "CR without LF");
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, '\n') => panic!("a bare LF ends a record"),
            (false, other) => field.push(other),
        }
    }
    assert!(
        !quoted && field.is_empty() && record.is_empty(),
        "unterminated"
    );
    records
}

#[test]
fn export_writes_every_raw_sample_as_csv_and_json() {
    let directory = directory();
    let db = directory.path().join("verdict.db");
    let experiment = write_experiment(
        directory.path(),
        "mixed",
        r#"name = "mixed"
command = ["sh", "-c", "echo 'score: 7'"]

[factors]
kind = [
  "ok",
  { value = "bad, \"really\"", command = ["sh", "-c", "printf 'x\\033[31m, \"quoted\"\\r\\n'; exit 3"] },
]

[[metrics]]
name = "wall"
source = "wall"

[[metrics]]
name = "score"
source = "regex"
pattern = 'score: (\d+)'
direction = "higher"

[sampling]
iterations = 3
warmups = 1
"#,
    );
    let _ = verdict(&["run", experiment.to_str().unwrap()], &db)
        .output()
        .unwrap();
    let runs = json(&mut verdict(&["runs", "--format", "json"], &db));
    let done = runs["runs"][0]["done"].as_u64().unwrap();
    let failed = runs["runs"][0]["failed"].as_u64().unwrap();
    assert!(failed >= 3, "{runs}");

    let document = json(&mut verdict(&["export", "1", "--format", "json"], &db));
    assert_eq!(document["schema"], "verdict.export/v1");
    assert_eq!(document["run"]["id"], 1);
    assert_eq!(document["factors"], serde_json::json!(["kind"]));
    assert!(document["environment_start"]["hostname"].is_string());
    let samples = document["samples"].as_array().unwrap();
    assert_eq!(samples.len() as u64, done);
    let bad: Vec<&Value> = samples
        .iter()
        .filter(|sample| sample["levels"]["kind"] == "bad, \"really\"")
        .collect();
    assert_eq!(bad.len() as u64, failed);
    for sample in &bad {
        assert_eq!(sample["failed"], true);
        assert_eq!(sample["exit_code"], 3);
        assert!(
            sample["failure_reason"]
                .as_str()
                .is_some_and(|reason| !reason.is_empty())
        );
        // JSON keeps the output exactly, escape character included.
        assert!(
            sample["failure_output_tail"]
                .as_str()
                .unwrap()
                .contains("x\u{1b}[31m, \"quoted\"\r\n"),
            "{sample}"
        );
    }
    let good = samples
        .iter()
        .find(|sample| sample["levels"]["kind"] == "ok" && sample["warmup"] == false)
        .unwrap();
    assert_eq!(good["metrics"]["score"], 7.0);
    assert!(good["metrics"]["wall"].as_f64() > Some(0.0));
    assert!(good["started_at"].as_str().unwrap().ends_with('Z'));
    let iterations: Vec<u64> = samples
        .iter()
        .filter(|sample| sample["cell"] == good["cell"])
        .map(|sample| sample["iteration"].as_u64().unwrap())
        .collect();
    assert_eq!(iterations, [1, 2, 3, 4], "a warmup and three iterations");

    let csv = stdout(&mut verdict(&["export", "1"], &db));
    assert!(!csv.contains('\u{1b}'), "control characters are spelled");
    let records = parse_csv(&csv);
    assert_eq!(
        records.len() as u64,
        done + 1,
        "a header and one row per sample"
    );
    assert_eq!(csv.lines().count(), records.len(), "one record a line");
    let header = &records[0];
    for record in &records {
        assert_eq!(record.len(), header.len(), "{record:?}");
    }
    let column = |name: &str| {
        header
            .iter()
            .position(|column| column == name)
            .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
    };
    let (kind, score, reason, tail, host, sequence) = (
        column("factor:kind"),
        column("metric:score"),
        column("failure_reason"),
        column("failure_output_tail"),
        column("env:hostname"),
        column("sequence"),
    );
    for (record, sample) in records[1..].iter().zip(samples) {
        assert_eq!(record[sequence], sample["sequence"].to_string());
        assert_eq!(record[kind], sample["levels"]["kind"].as_str().unwrap());
        assert!(!record[host].is_empty());
        if sample["failed"] == true {
            assert_eq!(record[reason], sample["failure_reason"].as_str().unwrap());
            assert!(
                record[tail].contains("x\\x1b[31m, \"quoted\"\\r\\n"),
                "{:?}",
                record[tail]
            );
        } else {
            assert_eq!(record[score], "7");
        }
    }

    let file = directory.path().join("out.csv");
    succeed(&mut verdict(
        &["export", "1", "-o", file.to_str().unwrap()],
        &db,
    ));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), csv);
    // The database itself is not an output file.
    let before = std::fs::read(&db).unwrap();
    let output = verdict(&["export", "1", "-o", db.to_str().unwrap()], &db)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("that is the database"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(std::fs::read(&db).unwrap(), before);
}
