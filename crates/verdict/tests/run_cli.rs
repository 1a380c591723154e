//! `verdict run`, `ab`, `runs` and `report` as a user runs them: real
//! processes, real SQLite files, a real SIGKILL.

mod common;

use common::{succeed, verdict};
use std::path::Path;
use std::time::{Duration, Instant};

fn write(directory: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = directory.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn report_json(directory: &Path, run: Option<&str>) -> serde_json::Value {
    let mut command = verdict(directory);
    command.arg("report").arg("--format").arg("json");
    if let Some(run) = run {
        command.arg(run);
    }
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn malformed_experiment_is_exit_2_with_file_line_column_and_nothing_stored() {
    let directory = tempfile::tempdir().unwrap();
    write(
        directory.path(),
        "bad.toml",
        "name = \"x\"\ncommand = [\"true\"]\n\n[sampling]\niterations = 3\nitertions = 4\n",
    );
    let output = verdict(directory.path())
        .args(["run", "bad.toml"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("bad.toml:6:1: unknown field `itertions`"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let output = verdict(directory.path())
        .args(["run", "missing.toml"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("missing.toml"));
}

#[test]
fn failures_are_recorded_shown_and_never_counted() {
    let directory = tempfile::tempdir().unwrap();
    // Level `ok` prints a number; `fails` exits 1; `junk` prints no number;
    // `slow` outlives the timeout.
    write(
        directory.path(),
        "failing.toml",
        r#"
name = "failing"
command = ["sh", "-c", "case \"$0\" in ok) echo 'value: 42';; fails) echo 'cannot open device' >&2; exit 1;; junk) echo 'value: n/a';; slow) sleep 5;; esac", "{case}"]

[factors]
case = ["ok", "fails", "junk", "slow"]

[[metrics]]
name = "value"
source = "regex"
pattern = 'value: (?P<value>\d+)'
direction = "higher"

[sampling]
iterations = 2
timeout = "300ms"
"#,
    );
    let started = Instant::now();
    let output = verdict(directory.path())
        .args(["run", "failing.toml"])
        .output()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "timeouts must cut the slow level short"
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("6 failed iteration(s), not used as data"),
        "{stdout}"
    );
    assert!(
        stdout.contains("exit status 1") && stdout.contains("cannot open device"),
        "{stdout}"
    );
    assert!(stdout.contains("metric `value`"), "{stdout}");
    assert!(stdout.contains("timed out"), "{stdout}");
    let report = report_json(directory.path(), None);
    assert_eq!(report["schema"], "verdict.report/v1");
    let cells = report["cells"].as_array().unwrap();
    let by_case = |case: &str| {
        cells
            .iter()
            .find(|cell| cell["levels"]["case"] == case)
            .unwrap()
            .clone()
    };
    assert_eq!(by_case("ok")["n"], 2);
    assert_eq!(by_case("ok")["median"], 42.0);
    for case in ["fails", "junk", "slow"] {
        assert_eq!(by_case(case)["n"], 0, "{case}");
        assert_eq!(by_case(case)["failed"], 2, "{case}");
    }
}

#[test]
fn sigkill_mid_run_then_resume_ends_with_exactly_the_planned_samples() {
    let directory = tempfile::tempdir().unwrap();
    write(
        directory.path(),
        "slowish.toml",
        "name = \"slowish\"\ncommand = [\"sleep\", \"{t}\"]\n[factors]\nt = [\"0.05\", \"0.06\"]\n[sampling]\niterations = 15\n",
    );
    let binary = assert_cmd::cargo::cargo_bin("verdict");
    let mut child = std::process::Command::new(&binary)
        .current_dir(directory.path())
        .env("VERDICT_DB", directory.path().join("v.db"))
        .args(["run", "slowish.toml"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until some samples are committed, then SIGKILL (no chance to clean up).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let output = verdict(directory.path())
            .args(["runs", "--format", "json"])
            .output()
            .unwrap();
        if output.status.success() {
            let runs: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
            if runs["runs"][0]["done"].as_u64().unwrap_or(0) >= 8 {
                break;
            }
        }
        assert!(Instant::now() < deadline, "no progress");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let runs: serde_json::Value = serde_json::from_slice(
        &verdict(directory.path())
            .args(["runs", "--format", "json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let run = &runs["runs"][0];
    assert_eq!(
        run["status"], "running",
        "a killed run stays marked running"
    );
    let done = run["done"].as_u64().unwrap();
    assert!(done < 30, "killed before the end ({done})");
    let output = verdict(directory.path())
        .args(["run", "--resume", &run["id"].to_string()])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = report_json(directory.path(), Some(&run["id"].to_string()));
    assert_eq!(report["run"]["status"], "complete");
    assert_eq!(report["run"]["recorded"], 30);
    for cell in report["cells"].as_array().unwrap() {
        assert_eq!(cell["n"], 15);
    }
}

#[test]
fn ab_compares_commands_interleaved_and_reports_a_verdict() {
    let directory = tempfile::tempdir().unwrap();
    let output = verdict(directory.path())
        .args([
            "ab",
            "-n",
            "8",
            "sleep 0.01",
            "sleep 0.08",
            "--format",
            "json",
            "--fail-on",
            "regression",
        ])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "a clear slowdown with --fail-on regression exits 1: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let comparison = &report["comparisons"]["comparisons"][0];
    assert_eq!(comparison["verdict"], "regression");
    assert!(comparison["delta"].as_f64().unwrap() > 2.0);
    let runs = verdict(directory.path()).args(["runs"]).output().unwrap();
    assert!(String::from_utf8_lossy(&runs.stdout).contains("ab"));
}

#[test]
fn one_run_per_cell_still_gets_a_comparison_row_that_says_why() {
    // Before: no comparison at all and JSON `comparisons: null`; `-n 3`
    // said "~2/cell", fewer runs than it had.
    let directory = tempfile::tempdir().unwrap();
    let text =
        succeed(verdict(directory.path()).args(["ab", "-n", "1", "sleep 0.01", "sleep 0.02"]));
    let row = text
        .lines()
        .find(|line| line.starts_with("command=sleep 0.02 vs sleep 0.01"))
        .unwrap_or_else(|| panic!("no comparison row: {text}"));
    assert!(
        row.contains("inconclusive (1 run per cell: no spread; run >= 4/cell)"),
        "{row}"
    );
    let json = succeed(verdict(directory.path()).args(["report", "--format", "json"]));
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let comparison = &report["comparisons"]["comparisons"][0];
    assert_eq!(comparison["verdict"], "inconclusive", "{json}");
    assert_eq!(comparison["undecided"]["reason"], "one_run", "{json}");
    let html = succeed(verdict(directory.path()).args(["report", "--format", "html"]));
    assert!(html.contains("1 run per cell: no spread"), "{html}");
    // `compare` of one value a side: a row that says why, in CSV too.
    std::fs::write(directory.path().join("a.txt"), "10\n").unwrap();
    std::fs::write(directory.path().join("b.txt"), "12\n").unwrap();
    let csv =
        succeed(verdict(directory.path()).args(["compare", "a.txt", "b.txt", "--format", "csv"]));
    assert!(
        csv.lines().nth(1).unwrap().contains(",one_run,run"),
        "{csv}"
    );
    let markdown = succeed(
        verdict(directory.path()).args(["compare", "a.txt", "b.txt", "--format", "markdown"]),
    );
    assert!(markdown.contains("1 run per cell: no spread"), "{markdown}");

    let three = tempfile::tempdir().unwrap();
    let json = succeed(verdict(three.path()).args([
        "ab",
        "-n",
        "3",
        "sleep 0.01",
        "sleep 0.012",
        "--format",
        "json",
    ]));
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let comparison = &report["comparisons"]["comparisons"][0];
    let needed = comparison["runs_needed"].as_u64().unwrap();
    assert!(needed >= 4, "never fewer than the runs at hand: {json}");
    let range = comparison["runs_needed_range"].as_array().unwrap();
    assert!(range[0].as_u64().unwrap() >= 4, "{json}");
}

#[test]
fn stress_ng_example_records_bogo_ops_per_cell() {
    let Some(_) = verdict_testkit::require_program("stress-ng", "stress-ng") else {
        return;
    };
    let directory = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/stress-ng-kill.toml");
    let text = std::fs::read_to_string(example)
        .unwrap()
        .replace("\"-t\", \"5\"", "\"-t\", \"1\"");
    write(directory.path(), "kill.toml", &text);
    let output = verdict(directory.path())
        .args(["run", "kill.toml", "-n", "2"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = report_json(directory.path(), None);
    assert_eq!(report["metric"]["name"], "bogo-ops/s");
    for cell in report["cells"].as_array().unwrap() {
        assert_eq!(cell["n"], 2, "{cell}");
        assert!(cell["median"].as_f64().unwrap() > 100.0, "{cell}");
    }
    // By email: every line within 80 columns, both metrics decided.
    let email = common::email_report(directory.path());
    assert_eq!(common::line_over(&email, 80), None, "{email}");
    assert!(email.contains("\n  bogo-ops/s: "), "{email}");
    assert!(email.contains("\n  sys [s]: "), "{email}");
    assert!(email.contains("\nWhat ran\n"), "{email}");
}

#[test]
fn ctrl_c_stops_after_what_finished_exit_3_and_says_how_to_resume() {
    let directory = tempfile::tempdir().unwrap();
    write(
        directory.path(),
        "long.toml",
        "name = \"long\"\ncommand = [\"sleep\", \"0.2\"]\n[factors]\nx = [\"a\", \"b\"]\n[sampling]\niterations = 50\n",
    );
    let binary = assert_cmd::cargo::cargo_bin("verdict");
    let child = std::process::Command::new(&binary)
        .current_dir(directory.path())
        .env("VERDICT_DB", directory.path().join("v.db"))
        .args(["run", "long.toml"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SIGINT, as a terminal's Ctrl-C would send.
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let started = Instant::now();
    let output = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the iteration in flight is cut short"
    );
    assert_eq!(output.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("verdict run --resume 1"), "{stderr}");
    let report = report_json(directory.path(), Some("1"));
    assert_eq!(report["run"]["status"], "interrupted");
    let recorded = report["run"]["recorded"].as_u64().unwrap();
    assert!((2..100).contains(&recorded), "{recorded}");
}
