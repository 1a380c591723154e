//! `verdict bisect` end to end with the real binary on a generated git
//! repository: the culprit's hash and subject, a build that exits 125
//! handled as a skip, SIGKILL mid-bisection then `--resume` with no sample
//! lost or duplicated, and `bisect log --format json`.
//!
//! The workload is `sleep` (3x longer from the culprit on): sleeping does
//! not compete for the CPU, so the test stays fast and its effect stays
//! large when other tests load the machine. Must not: depend on timing
//! beyond that 3x step.

mod common;

use verdict_testkit::git;

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

const COMMITS: usize = 8;
const CULPRIT: usize = 6;
const SKIPPED: usize = 4;

/// Commits 0..=COMMITS; from CULPRIT on the workload sleeps 3x longer;
/// commit SKIPPED carries a file that makes the build hook fail.
fn make_repo(repo: &Path) -> Vec<String> {
    verdict_testkit::sleep_repository(repo, COMMITS, CULPRIT, Some(SKIPPED), ["0.02", "0.06"])
}

fn verdict(directory: &Path) -> Command {
    let mut command = Command::cargo_bin("verdict").unwrap();
    command
        .current_dir(directory)
        .env("VERDICT_DB", directory.join("v.db"));
    command
}

fn json(directory: &Path, args: &[&str]) -> Value {
    let output = verdict(directory).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The runs of kind `bisect`: (name, samples done).
fn bisect_runs(directory: &Path) -> Vec<(String, u64)> {
    json(directory, &["runs", "--format", "json"])["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|run| run["kind"] == "bisect")
        .map(|run| {
            (
                run["name"].as_str().unwrap().to_string(),
                run["done"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Writes the experiment (`sh work.sh`) and returns the arguments of a
/// bisection of the whole repository with this build hook. Step error 0.05
/// (default 0.005) and blocks of 1 run keep the tests short: the first look
/// then needs 10 blocks instead of 13 blocks of 2.
fn bisect_arguments(directory: &Path, repo: &Path, hashes: &[String], build: &str) -> Vec<String> {
    std::fs::write(
        directory.join("exp.toml"),
        "name = \"sleepy\"\ncommand = [\"sh\", \"work.sh\"]\n",
    )
    .unwrap();
    [
        "bisect",
        "--repo",
        repo.to_str().unwrap(),
        "--good",
        &hashes[0],
        "--bad",
        &hashes[COMMITS],
        "--experiment",
        "exp.toml",
        "--build",
        build,
        "--batch",
        "1",
        "--step-error",
        "0.05",
    ]
    .map(str::to_string)
    .to_vec()
}

/// A successful bisection's stdout, which names commit CULPRIT.
fn assert_names_the_culprit(output: &std::process::Output, hashes: &[String]) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains(&format!(
            "first bad commit: {} change number {CULPRIT}",
            hashes[CULPRIT]
        )),
        "{stdout}"
    );
    stdout
}

#[test]
fn bisect_finds_the_culprit_skips_a_broken_build_and_resumes_after_sigkill() {
    kill_and_resume(&[]);
}

/// The same with `--worktrees`: the measurement cut off by the kill resumes
/// in the same (rebuilt) worktree.
#[test]
fn a_worktree_bisection_resumes_after_sigkill() {
    kill_and_resume(&["--worktrees"]);
}

fn kill_and_resume(extra: &[&str]) {
    let started = Instant::now();
    let directory = tempfile::tempdir().unwrap();
    let repo = directory.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let hashes = make_repo(&repo);
    let arguments = bisect_arguments(
        directory.path(),
        &repo,
        &hashes,
        "test ! -e broken || exit 125",
    );
    let binary = assert_cmd::cargo::cargo_bin("verdict");
    let mut child = std::process::Command::new(&binary)
        .args(arguments)
        .args(extra)
        .current_dir(directory.path())
        .env("VERDICT_DB", directory.path().join("v.db"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it in the search phase: after the endpoints (about 40 runs)
    // and some runs of the first candidates.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let runs = bisect_runs(directory.path());
        if runs.len() >= 55 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the bisection ended before it could be killed ({} runs)",
            runs.len()
        );
        assert!(Instant::now() < deadline, "too slow: {} runs", runs.len());
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = bisect_runs(directory.path());

    let resumed = verdict(directory.path())
        .args(["bisect", "--resume"])
        .output()
        .unwrap();
    let stdout = assert_names_the_culprit(&resumed, &hashes);
    assert!(stdout.contains("git bisect log replay:"), "{stdout}");
    // What the commits were measured on: the last measurement's machine
    // with its build command, and no single measurement's commit.
    let measured = stdout
        .split_once("\nmeasured on (the last measurement's machines):\n  host ")
        .map(|(_, tail)| tail)
        .unwrap_or_else(|| panic!("no measured-on lines:\n{stdout}"));
    assert!(measured.contains("cpu "), "{stdout}");
    assert!(measured.contains("; kernel "), "{stdout}");
    assert!(
        measured.contains("; build test ! -e broken || exit 125"),
        "{stdout}"
    );
    assert!(!measured.contains("; built "), "{stdout}");
    assert!(
        stdout.contains(&format!("git bisect skip {}", hashes[SKIPPED])),
        "{stdout}"
    );
    explain_pointer(directory.path(), &resumed.stderr, &hashes);

    // The store: every run started before the kill is still there, with at
    // least the samples it had; the bisection counts exactly the samples
    // of its runs, commit by commit (none lost, none counted twice).
    let after = bisect_runs(directory.path());
    assert!(after.len() > before.len());
    for (index, (name, done)) in before.iter().enumerate() {
        assert_eq!(&after[index].0, name);
        assert!(after[index].1 >= *done);
    }
    let log = json(directory.path(), &["bisect", "log", "--format", "json"]);
    assert_eq!(log["schema"], "verdict.bisect-log/v1");
    assert_eq!(log["status"], "complete");
    let stored: u64 = after.iter().map(|(_, done)| done).sum();
    assert_eq!(log["total_runs"].as_u64(), Some(stored));
    let commits = log["commits"].as_array().unwrap();
    for commit in commits {
        let hash = commit["commit"].as_str().unwrap();
        let name = format!("bisect 1 {}", &hash[..12]);
        let samples: u64 = after
            .iter()
            .filter(|(run, _)| *run == name)
            .map(|(_, done)| done)
            .sum();
        assert_eq!(commit["n"].as_u64(), Some(samples), "{commit}");
    }
    let class_of = |index: usize| {
        commits
            .iter()
            .find(|commit| commit["commit"] == hashes[index].as_str())
            .map(|commit| commit["class"].clone())
    };
    assert_eq!(class_of(SKIPPED), Some(Value::from("skipped")));
    assert_eq!(class_of(CULPRIT), Some(Value::from("bad")));
    assert_eq!(class_of(CULPRIT - 1), Some(Value::from("good")));
    assert_eq!(
        log["result"]["culprit"]["commits"],
        Value::from(hashes[CULPRIT].as_str())
    );
    eprintln!("bisect CLI test took {:?}", started.elapsed());
}

/// The line a finished bisection prints on standard error (monitors are
/// on by default): `verdict explain BAD --baseline GOOD`, the last runs of
/// the first bad commit and of the last good commit before it; the
/// suggested command works and compares those two runs.
fn explain_pointer(directory: &Path, stderr: &[u8], hashes: &[String]) {
    let stderr = String::from_utf8_lossy(stderr);
    let suggested: Vec<&str> = stderr
        .lines()
        .find_map(|line| {
            line.strip_prefix(
                "verdict: where the time went (system counters, profiles): verdict explain ",
            )
        })
        .unwrap_or_else(|| panic!("no pointer to verdict explain: {stderr}"))
        .split(' ')
        .collect();
    let [bad, "--baseline", good] = suggested[..] else {
        panic!("{suggested:?}");
    };
    let runs = json(directory, &["runs", "--format", "json"]);
    let name_of = |id: &str| {
        runs["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|run| run["id"].as_u64().map(|run| run.to_string()).as_deref() == Some(id))
            .map(|run| run["name"].as_str().unwrap().to_string())
    };
    assert_eq!(
        name_of(bad),
        Some(format!("bisect 1 {}", &hashes[CULPRIT][..12]))
    );
    assert_eq!(
        name_of(good),
        Some(format!("bisect 1 {}", &hashes[CULPRIT - 1][..12]))
    );
    let explained = json(
        directory,
        &["explain", bad, "--baseline", good, "--format", "json"],
    );
    assert_eq!(
        explained["comparisons"][0]["name"],
        format!("run={bad} vs {good}")
    );
}

/// `--worktrees`: each commit is checked out and built once, in its own
/// worktree, and measured there; the repository's own checkout is never
/// touched, and the worktrees are gone afterwards.
#[test]
fn worktrees_build_each_commit_once_and_leave_the_repository_alone() {
    let directory = tempfile::tempdir().unwrap();
    let repo = directory.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let hashes = make_repo(&repo);
    let head_before = git(&repo, &["rev-parse", "HEAD"]);
    let builds = directory.path().join("builds.log");
    let build = format!(
        "test ! -e broken || exit 125; git rev-parse HEAD >> '{}'",
        builds.display()
    );
    let output = verdict(directory.path())
        .args(bisect_arguments(directory.path(), &repo, &hashes, &build))
        .arg("--worktrees")
        .output()
        .unwrap();
    assert_names_the_culprit(&output, &hashes);
    // Every build ran in a worktree of the commit it was for, once each,
    // although the endpoints were measured in dozens of separate batches.
    let built: Vec<String> = std::fs::read_to_string(&builds)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let mut unique = built.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        built.len(),
        "a commit was built twice: {built:?}"
    );
    assert!(built.contains(&hashes[0]) && built.contains(&hashes[COMMITS]));
    assert!(built.contains(&hashes[CULPRIT]));
    // The repository's checkout never moved and no worktree is left.
    assert_eq!(git(&repo, &["rev-parse", "HEAD"]), head_before);
    assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 1);
    let leftovers: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| {
            entry.path().join(&hashes[0][..12]).exists()
                && entry
                    .file_name()
                    .to_string_lossy()
                    .starts_with("verdict-bisect-")
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
