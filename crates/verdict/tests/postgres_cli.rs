//! The built binary on a real PostgreSQL store (a throwaway cluster each
//! test starts, Unix socket only): `--db URL` and `VERDICT_DB=URL` for
//! run, runs and report; `push`/`pull` copying a run between a SQLite file
//! and PostgreSQL, twice, with byte-identical reports (text and JSON) from
//! all three stores and no sample stored twice; passwords redacted from
//! every message. Must not share a cluster between tests.

use std::path::Path;
use std::process::{Command, Output};

use verdict_testkit::postgres::PostgresServer;

const VERDICT: &str = env!("CARGO_BIN_EXE_verdict");

fn verdict(arguments: &[&str]) -> Command {
    let mut command = Command::new(VERDICT);
    command
        .args(arguments)
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

fn write_experiment(directory: &Path) -> String {
    let path = directory.join("small.toml");
    std::fs::write(
        &path,
        "name = \"small\"\ncommand = [\"sh\", \"-c\", \"echo score: $((7 + $$ % 3))\"]\n\n\
         [factors]\nmode = [\"a\", \"b\"]\n\n[[metrics]]\nname = \"score\"\nsource = \"regex\"\n\
         pattern = 'score: (\\d+)'\ndirection = \"higher\"\n\n[sampling]\niterations = 6\nwarmups = 1\n",
    )
    .unwrap();
    path.display().to_string()
}

fn password_url(server: &PostgresServer, database: &str) -> String {
    format!(
        "postgresql://postgres:hunter2-secret@/{database}?host={}",
        server.socket_directory().display()
    )
}

#[test]
fn push_and_pull_round_trip_with_identical_reports_and_nothing_twice() {
    let Some(server) = PostgresServer::start() else {
        return;
    };
    server.create_database("lab");
    let url = password_url(&server, "lab");
    let directory = tempfile::tempdir().unwrap();
    let experiment = write_experiment(directory.path());
    let local = directory.path().join("local.db").display().to_string();
    let pulled = directory.path().join("pulled.db").display().to_string();
    succeed(&mut verdict(&["run", &experiment, "--db", &local]));

    for attempt in 0..2 {
        let output = succeed(&mut verdict(&["push", "1", "--db", &local, "--to", &url]));
        let text = String::from_utf8(output.stdout).unwrap();
        let expected = if attempt == 0 {
            "new (14 samples copied, 0 already there)"
        } else {
            "known (0 samples copied, 14 already there)"
        };
        assert!(text.contains(expected), "{text}");
        assert!(
            text.contains("postgres:***@") && !text.contains("hunter2"),
            "{text}"
        );
    }
    assert_eq!(server.psql("lab", "SELECT COUNT(*) FROM runs").trim(), "1");
    assert_eq!(
        server
            .psql(
                "lab",
                "SELECT COUNT(*), COUNT(DISTINCT sequence) FROM samples"
            )
            .trim(),
        "14|14"
    );
    let origin = server.psql("lab", "SELECT origin FROM runs");
    assert!(origin.trim().ends_with("local.db run 1"), "{origin}");
    for _ in 0..2 {
        succeed(&mut verdict(&[
            "pull", "1", "--from", &url, "--db", &pulled,
        ]));
    }

    for format in ["text", "json", "csv"] {
        let report = |db: &str| {
            succeed(&mut verdict(&[
                "report", "1", "--format", format, "--db", db,
            ]))
            .stdout
        };
        let from_sqlite = report(&local);
        assert!(!from_sqlite.is_empty());
        assert_eq!(
            String::from_utf8_lossy(&report(&url)),
            String::from_utf8_lossy(&from_sqlite),
            "{format} report from PostgreSQL"
        );
        assert_eq!(
            String::from_utf8_lossy(&report(&pulled)),
            String::from_utf8_lossy(&from_sqlite),
            "{format} report from the pulled copy"
        );
    }
    // VERDICT_DB names the store as --db does.
    let runs = succeed(
        Command::new(VERDICT)
            .args(["runs", "--format", "json"])
            .env("VERDICT_DB", &url),
    );
    let runs: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(runs["runs"][0]["done"], 14);
}

#[test]
fn a_run_measured_into_postgres_reports_and_errors_hide_the_password() {
    let Some(server) = PostgresServer::start() else {
        return;
    };
    server.create_database("lab");
    let url = password_url(&server, "lab");
    let directory = tempfile::tempdir().unwrap();
    let experiment = write_experiment(directory.path());
    succeed(&mut verdict(&["run", &experiment, "--db", &url]));
    let report = succeed(&mut verdict(&["report", "--db", &url]));
    assert!(String::from_utf8_lossy(&report.stdout).contains("mode=a"));
    // The run's stored command line names the store without the password.
    let stored = server.psql("lab", "SELECT command_line FROM runs");
    assert!(stored.contains("postgres:***@"), "{stored}");
    let everything = server.psql("lab", "SELECT r::text FROM runs r");
    assert!(!everything.contains("hunter2"), "{everything}");

    let missing = password_url(&server, "no_such_database");
    for arguments in [
        vec!["runs", "--db", &missing],
        vec!["report", "--db", &missing],
        vec!["report", "7", "--db", &url],
        vec!["push", "7", "--db", &url, "--to", &missing],
    ] {
        let output = verdict(&arguments).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{arguments:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("postgres:***@"), "{arguments:?}: {stderr}");
        assert!(!stderr.contains("hunter2"), "{arguments:?}: {stderr}");
    }

    // libpq's keyword form is a PostgreSQL store too (not a SQLite file of
    // that name), and its password is masked in the same places.
    let socket = server.socket_directory().display().to_string();
    let keywords = format!("host={socket} dbname=lab user=postgres password='hunter2 kw'");
    let listed = succeed(
        verdict(&["runs", "--format", "json", "--db", &keywords]).current_dir(directory.path()),
    );
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed["runs"][0]["done"], 14);
    let missing =
        format!("host={socket} dbname=no_such_database user=postgres password=hunter2-kw");
    let output = verdict(&["runs", "--db", &missing])
        .current_dir(directory.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("password=***"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
    assert!(
        std::fs::read_dir(directory.path())
            .unwrap()
            .all(|entry| !entry
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains("host=")),
        "no SQLite file was made of a keyword string"
    );

    // A role that may only read answers `history`, and says once that the
    // change point state could not be kept (Otava's method keeps state;
    // the default rank method computes from scratch and keeps none).
    server.psql(
        "lab",
        "CREATE ROLE reader LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader",
    );
    succeed(&mut verdict(&["run", &experiment, "--db", &url]));
    let reader = server.url_as("reader", "lab");
    let history = succeed(&mut verdict(&[
        "history", "small", "--method", "otava", "--db", &reader,
    ]));
    let stderr = String::from_utf8_lossy(&history.stderr);
    assert_eq!(
        stderr
            .matches("the change point state was not kept")
            .count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("permission denied"), "{stderr}");
    assert!(String::from_utf8_lossy(&history.stdout).contains("history of `small`"));
}
