//! `verdict bisect --host` and `verdict check --host` end to end: the real
//! binary builds a generated git repository's commits here, copies the
//! build output to a real loopback sshd host (`support/sshd.rs`) and
//! measures there. The program records its working directory and the
//! commit its build stamped into it, so the test proves that every
//! measurement ran the locally built copy of the measured commit from the
//! host's verdict cache, and that the bisection still names the culprit.
//!
//! The workload sleeps (3x longer from the culprit on), so the effect stays
//! large on a loaded machine. Must not: depend on timing beyond that step.

mod common;

use verdict_testkit::git;

mod support;

use std::path::Path;
use support::sshd::SshFixture;

const VERDICT: &str = env!("CARGO_BIN_EXE_verdict");
const COMMITS: usize = 6;
const CULPRIT: usize = 4;

/// Commits 0..=COMMITS of `prog.in`, a shell program that sleeps (3x longer
/// from CULPRIT on) and appends "WORKING-DIRECTORY STAMP" to `$CWD_LOG`,
/// STAMP being replaced by the build with the commit it built.
fn make_repo(repo: &Path) -> Vec<String> {
    git(repo, &["init", "-q"]);
    std::fs::write(repo.join(".gitignore"), "prog\n").unwrap();
    let mut hashes = Vec::new();
    for index in 0..=COMMITS {
        let seconds = if index >= CULPRIT { "0.06" } else { "0.02" };
        std::fs::write(
            repo.join("prog.in"),
            format!(
                "#!/bin/sh\n# revision {index}\nsleep {seconds}\nprintf '%s %s\\n' \"$(pwd)\" @STAMP@ >> \"$CWD_LOG\"\n"
            ),
        )
        .unwrap();
        git(repo, &["add", "-A"]);
        git(repo, &["commit", "-qm", &format!("change number {index}")]);
        hashes.push(git(repo, &["rev-parse", "HEAD"]));
    }
    hashes
}

/// The build: `prog` from `prog.in`, stamped with the checked-out commit.
const BUILD: &str = "sed \"s/@STAMP@/$(git rev-parse HEAD)/\" prog.in > prog && chmod 755 prog";

fn verdict(directory: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(VERDICT)
        .args(args)
        .current_dir(directory)
        .env("VERDICT_DB", directory.join("v.db"))
        .output()
        .unwrap()
}

/// The lines of the program's log: (working directory, built commit).
fn log_lines(path: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| {
            let (directory, stamp) = line.rsplit_once(' ').expect("two fields");
            (directory.to_string(), stamp.to_string())
        })
        .collect()
}

#[test]
fn bisect_builds_here_measures_on_the_host_and_names_the_culprit() {
    let directory = tempfile::tempdir().unwrap();
    let Some(mut fixture) = SshFixture::new(directory.path()) else {
        return;
    };
    let server = fixture.server("bench");
    let repo = directory.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let hashes = make_repo(&repo);
    let log = directory.path().join("cwd.log");
    std::fs::write(
        directory.path().join("exp.toml"),
        format!(
            "name = \"sleepy\"\ncommand = [\"./prog\"]\nenv = {{ CWD_LOG = \"{}\" }}\n",
            log.display()
        ),
    )
    .unwrap();
    let output = verdict(
        directory.path(),
        &[
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
            BUILD,
            "--batch",
            "1",
            "--step-error",
            "0.05",
            "--host",
            "bench",
            "--ssh-config",
            fixture.config_file.to_str().unwrap(),
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
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

    // Every measurement ran on the host, in its cache, in the directory of
    // the commit whose local build it ran.
    let host_cache = server.cache_directory.join("verdict");
    let lines = log_lines(&log);
    assert!(lines.len() >= 20, "{lines:?}");
    for (working_directory, stamp) in &lines {
        assert!(
            Path::new(working_directory).starts_with(&host_cache),
            "{working_directory} is not in the host's cache {}",
            host_cache.display()
        );
        assert!(
            working_directory.ends_with(&format!("/{stamp}")),
            "{working_directory} ran the build of {stamp}"
        );
        assert!(hashes.contains(stamp), "{stamp}");
    }
    assert!(lines.iter().any(|(_, stamp)| stamp == &hashes[0]));
    assert!(lines.iter().any(|(_, stamp)| stamp == &hashes[COMMITS]));
    // The copies are removed at the end; only the agent stays.
    let left: Vec<String> = std::fs::read_dir(&host_cache)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with("agent-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // Every measurement run is stored under the host's name.
    let listing = verdict(directory.path(), &["runs", "--format", "json"]);
    let runs: serde_json::Value = serde_json::from_slice(&listing.stdout).unwrap();
    let bisect_runs: Vec<&serde_json::Value> = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|run| run["kind"] == "bisect")
        .collect();
    assert!(!bisect_runs.is_empty());
    // Back-to-back runs on the host do not overlap in time (the host's
    // clock offset excludes the agent's start-up).
    let overlaps: Vec<&serde_json::Value> = runs["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|warning| warning["kind"] == "overlapping_runs")
        .collect();
    assert!(overlaps.is_empty(), "{overlaps:?}");
    assert!(
        bisect_runs.iter().all(|run| run["host"] == "bench"),
        "{bisect_runs:?}"
    );
}

#[test]
fn bisect_host_refuses_a_copy_outside_the_tree_and_a_missing_output() {
    let directory = tempfile::tempdir().unwrap();
    let repo = directory.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let hashes = make_repo(&repo);
    std::fs::write(
        directory.path().join("exp.toml"),
        "name = \"plain\"\ncommand = [\"sh\", \"prog.in\"]\n",
    )
    .unwrap();
    let base = |extra: &[&str]| {
        let mut args = vec![
            "bisect",
            "--repo",
            repo.to_str().unwrap(),
            "--good",
            &hashes[0],
            "--bad",
            &hashes[COMMITS],
            "--experiment",
            "exp.toml",
            "--host",
            "nowhere",
        ];
        args.extend_from_slice(extra);
        verdict(directory.path(), &args)
    };
    let output = base(&["--copy", "../secret"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--copy ../secret"), "{stderr}");
    // The program is `sh`, not a path in the tree: --copy must say what to copy.
    let output = base(&[]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("nothing to copy"), "{stderr}");
}

/// Writes `tree/prog`, a built program that sleeps `seconds` and logs its
/// working directory.
fn build_program(tree: &Path, seconds: &str) {
    use std::os::unix::fs::PermissionsExt;
    let program = tree.join("prog");
    std::fs::write(
        &program,
        format!(
            "#!/bin/sh\nsleep {seconds}\nprintf '%s %s\\n' \"$(pwd)\" {seconds} >> \"$CWD_LOG\"\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn check_measures_the_current_tree_on_the_host() {
    let directory = tempfile::tempdir().unwrap();
    let Some(mut fixture) = SshFixture::new(directory.path()) else {
        return;
    };
    let server = fixture.server("bench");
    fixture.unreachable_host("down");
    let tree = directory.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    let log = directory.path().join("cwd.log");
    std::fs::write(
        tree.join("exp.toml"),
        format!(
            "name = \"sleepy\"\ncommand = [\"./prog\"]\nenv = {{ CWD_LOG = \"{}\" }}\n[sampling]\niterations = 12\nthreshold = 0.5\n",
            log.display()
        ),
    )
    .unwrap();
    let check = |host: &str| {
        let config = fixture.config_file.to_str().unwrap().to_string();
        let output = std::process::Command::new(VERDICT)
            .args(["check", "--baseline", "1", "--experiment", "exp.toml"])
            .args(["--host", host, "--ssh-config", &config])
            .current_dir(&tree)
            .env("VERDICT_DB", directory.path().join("v.db"))
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output.status.code(), text)
    };
    build_program(&tree, "0.05");
    let baseline = std::process::Command::new(VERDICT)
        .args(["run", "exp.toml"])
        .current_dir(&tree)
        .env("VERDICT_DB", directory.path().join("v.db"))
        .output()
        .unwrap();
    assert!(
        baseline.status.success(),
        "{}",
        String::from_utf8_lossy(&baseline.stderr)
    );
    let local_lines = log_lines(&log).len();
    assert_eq!(local_lines, 12);

    // The same build on the host: like the baseline (threshold 50%).
    let (code, text) = check("bench");
    assert_eq!(code, Some(0), "{text}");
    // Five times slower: changed.
    build_program(&tree, "0.25");
    let (code, text) = check("bench");
    assert_eq!(code, Some(1), "{text}");
    let host_cache = server.cache_directory.join("verdict");
    let lines = log_lines(&log);
    assert_eq!(lines.len(), local_lines + 24);
    for (working_directory, _) in &lines[local_lines..] {
        assert!(
            Path::new(working_directory).starts_with(&host_cache),
            "{working_directory} is not in the host's cache {}",
            host_cache.display()
        );
    }
    assert!(
        lines[local_lines + 12..]
            .iter()
            .all(|(_, seconds)| seconds == "0.25")
    );

    // A host that cannot be reached: could not decide (125), naming it.
    let (code, text) = check("down");
    assert_eq!(code, Some(125), "{text}");
    assert!(text.contains("target down"), "{text}");
}
