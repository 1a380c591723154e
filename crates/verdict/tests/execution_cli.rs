//! What actually runs when `verdict run` executes an experiment, checked
//! from the outside with real processes and a real SQLite file: hooks per
//! level in the sequential order (and the refusal of adaptive stopping
//! with it), processes a workload leaves behind (killed, or left running
//! when the experiment opts out, then killed by the test), and perf
//! counters a machine cannot count. Starts only the processes the
//! experiments name.

mod common;

use common::verdict;
use std::path::Path;

fn report_json(directory: &Path) -> serde_json::Value {
    let output = verdict(directory)
        .args(["report", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Two levels whose setup and teardown append a line to hooks.log.
const SEQUENTIAL: &str = r#"
name = "sequential-hooks"
command = ["sh", "-c", "echo work $VERDICT_MODE >> hooks.log"]

[factors.mode]
levels = ["a", "b"]
setup = ["sh", "-c", "echo setup $VERDICT_MODE >> hooks.log"]
teardown = ["sh", "-c", "echo teardown $VERDICT_MODE >> hooks.log"]

[sampling]
order = "sequential"
iterations = 4
"#;

#[test]
fn sequential_order_enters_each_level_once_and_the_report_says_so() {
    let directory = tempfile::tempdir().unwrap();
    std::fs::write(directory.path().join("seq.toml"), SEQUENTIAL).unwrap();
    let output = verdict(directory.path())
        .args(["run", "seq.toml", "--seed", "5"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let log = std::fs::read_to_string(directory.path().join("hooks.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    let mut expected = vec!["setup a"];
    expected.extend(["work a"; 4]);
    expected.extend(["teardown a", "setup b"]);
    expected.extend(["work b"; 4]);
    expected.push("teardown b");
    assert_eq!(lines, expected);
    let report = report_json(directory.path());
    assert_eq!(report["run"]["order"], "sequential");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("order sequential;"), "{stdout}");
}

#[test]
fn until_decided_with_the_sequential_order_is_refused_before_any_setup() {
    let directory = tempfile::tempdir().unwrap();
    std::fs::write(directory.path().join("seq.toml"), SEQUENTIAL).unwrap();
    let output = verdict(directory.path())
        .args(["run", "seq.toml", "--until-decided", "-n", "13"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    for expected in [
        "seq.toml",
        "--until-decided",
        "order = \"sequential\"",
        "order = \"interleaved\"",
        "fixed number of iterations",
    ] {
        assert!(stderr.contains(expected), "{expected}: {stderr}");
    }
    assert!(
        !directory.path().join("hooks.log").exists(),
        "a setup or the workload ran"
    );
    let runs = verdict(directory.path())
        .args(["runs", "--format", "json"])
        .output()
        .unwrap();
    let runs: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap_or_default();
    assert_eq!(
        runs["runs"].as_array().map_or(0, Vec::len),
        0,
        "nothing may be stored: {runs}"
    );
}

/// The state letter of `pid` in /proc, `None` when it is gone.
fn state(pid: i32) -> Option<char> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    text[text.rfind(')')? + 1..].trim_start().chars().next()
}

fn alive(pid: i32) -> bool {
    state(pid).is_some_and(|state| state != 'Z')
}

/// SIGKILL to a sleep this test started (through a workload).
fn kill(pid: i32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status();
}

fn pids(directory: &Path) -> Vec<i32> {
    std::fs::read_to_string(directory.join("pids"))
        .unwrap()
        .lines()
        .map(|line| line.trim().parse().unwrap())
        .collect()
}

/// Each iteration starts `sleep 31` in the background, waits until it runs
/// `sleep` (a forked shell is named `sh` until it execs), notes its pid and
/// exits.
const LEAVES_A_SLEEP: &str = r#"
name = "leftovers"
command = ["sh", "-c", "sleep 31 & until [ \"$(cat /proc/$!/comm 2>/dev/null)\" != sh ]; do :; done; echo $! >> pids; echo started"]

[sampling]
iterations = 2
"#;

#[test]
fn a_leftover_sleep_is_killed_and_recorded_on_its_iteration() {
    let directory = tempfile::tempdir().unwrap();
    std::fs::write(directory.path().join("left.toml"), LEAVES_A_SLEEP).unwrap();
    let output = verdict(directory.path())
        .args(["run", "left.toml"])
        .output()
        .unwrap();
    let pids = pids(directory.path());
    let survivors: Vec<i32> = pids.iter().copied().filter(|pid| alive(*pid)).collect();
    for pid in &survivors {
        kill(*pid);
    }
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(pids.len(), 2);
    assert!(survivors.is_empty(), "still running: {survivors:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("iteration #0, cell (all): 1 process(es) left running: sleep; killed"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("2 iteration(s) left processes running after the command exited:")
            && stdout.contains("#0 (all): 1 process(es): sleep (killed)"),
        "{stdout}"
    );
    let report = report_json(directory.path());
    let leftovers = report["leftovers"].as_array().unwrap();
    assert_eq!(leftovers.len(), 2);
    assert_eq!(leftovers[0]["processes"], serde_json::json!(["sleep"]));
    assert_eq!(leftovers[0]["killed"], true);
}

#[test]
fn with_kill_leftovers_false_the_sleep_survives_and_is_still_recorded() {
    let directory = tempfile::tempdir().unwrap();
    std::fs::write(
        directory.path().join("keep.toml"),
        LEAVES_A_SLEEP.replace("iterations = 2", "iterations = 1\nkill_leftovers = false"),
    )
    .unwrap();
    let output = verdict(directory.path())
        .args(["run", "keep.toml"])
        .output()
        .unwrap();
    let pids = pids(directory.path());
    let survivors: Vec<i32> = pids.iter().copied().filter(|pid| alive(*pid)).collect();
    for pid in &pids {
        kill(*pid);
    }
    assert!(output.status.success());
    assert_eq!(survivors, pids, "the opt-out must leave the sleep running");
    let report = report_json(directory.path());
    assert_eq!(
        report["leftovers"][0]["processes"],
        serde_json::json!(["sleep"])
    );
    assert_eq!(report["leftovers"][0]["killed"], false);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("sleep (left running)"), "{stdout}");
}

#[test]
fn an_unsupported_perf_counter_is_missing_and_every_iteration_counts() {
    let directory = tempfile::tempdir().unwrap();
    // What `perf stat -x, ...` prints on a VM without a PMU, printed to
    // stderr by the workload itself (perf does not run here).
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../verdict-parse/tests/fixtures/perf-6.1-x-vm-workload.csv");
    std::fs::copy(&fixture, directory.path().join("perf.csv")).unwrap();
    std::fs::write(
        directory.path().join("perf.toml"),
        r#"
name = "no-pmu"
command = ["sh", "-c", "cat perf.csv >&2", "{mode}"]

[factors]
mode = ["a", "b"]

[[metrics]]
name = "task-clock"
source = "perf-stat"
event = "task-clock"

[[metrics]]
name = "cycles"
source = "perf-stat"
event = "cycles"

[[metrics]]
name = "wall"

[sampling]
iterations = 3
"#,
    )
    .unwrap();
    let output = verdict(directory.path())
        .args(["run", "perf.toml"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("cycles: 6 missing value(s): read perf stat event `cycles`: perf printed `<not supported>`"),
        "{stdout}"
    );
    let report = report_json(directory.path());
    for cell in report["cells"].as_array().unwrap() {
        assert_eq!(cell["n"], 3, "{cell}");
        assert_eq!(cell["failed"], 0, "{cell}");
        assert_eq!(cell["median"], 0.71, "{cell}");
    }
    assert_eq!(report["missing"][0]["metric"], "cycles");
    assert_eq!(report["missing"][0]["count"], 6);
    assert!(report["failures"].as_array().unwrap().is_empty());
    // The wall time of every iteration is kept too.
    let wall = verdict(directory.path())
        .args(["report", "--metric", "wall", "--format", "json"])
        .output()
        .unwrap();
    let wall: serde_json::Value = serde_json::from_slice(&wall.stdout).unwrap();
    assert_eq!(wall["cells"][0]["n"], 3, "{wall}");
}

/// The same counter in a bisection: the measurement of an endpoint fails
/// with what `run` says (perf's `<not supported>`), not a bare "no
/// successful iteration".
#[test]
fn a_bisection_whose_counter_is_unsupported_says_why_like_run() {
    let directory = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../verdict-parse/tests/fixtures/perf-6.1-x-vm-workload.csv");
    let perf = directory.path().join("perf.csv");
    std::fs::copy(&fixture, &perf).unwrap();
    let repo = directory.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let command = format!("0; cat {} >&2", perf.display());
    let hashes = verdict_testkit::sleep_repository(&repo, 2, 1, None, [&command, &command]);
    std::fs::write(
        directory.path().join("cycles.toml"),
        "name = \"cycles\"\ncommand = [\"sh\", \"work.sh\"]\n\n[[metrics]]\nname = \"cycles\"\n\
         source = \"perf-stat\"\nevent = \"cycles\"\n",
    )
    .unwrap();
    let repo = repo.display().to_string();
    let output = verdict(directory.path())
        .args([
            "bisect",
            "--repo",
            &repo,
            "--good",
            &hashes[0],
            "--bad",
            &hashes[2],
            "--experiment",
            "cycles.toml",
            "--batch",
            "1",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("could not be measured: workload: cycles: ")
            && stderr.contains(
                "missing value(s): read perf stat event `cycles`: perf printed `<not supported>`"
            ),
        "{stderr}"
    );
}
