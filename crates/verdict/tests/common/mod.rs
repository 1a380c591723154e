//! Helpers shared by the `verdict` binary's CLI tests (`mod common;`): the
//! command with its store in a test's temporary directory, and running a
//! command that must succeed. They only build and run commands: no
//! assertion about a command's output lives here (git with a fixed author
//! is `verdict_testkit::git`).

// Each test file is its own crate and uses only some of these helpers; an
// `#[expect(dead_code)]` would fail in the files that use them all.
#![allow(dead_code, reason = "each test crate uses a subset of the helpers")]

pub mod planted;
pub mod vm;

use assert_cmd::Command;
use std::path::Path;

/// `verdict bisect` of `repo` from `good` to `bad`, measuring the
/// experiment file `exp.toml` of the current directory, short: blocks of
/// one run and a step error of 0.05.
pub fn quick_bisect(repo: &Path, good: &str, bad: &str) -> Vec<String> {
    let repo = repo.display().to_string();
    ["bisect", "--repo", &repo, "--good", good, "--bad", bad]
        .into_iter()
        .chain([
            "--experiment",
            "exp.toml",
            "--batch",
            "1",
            "--step-error",
            "0.05",
        ])
        .map(str::to_string)
        .collect()
}

/// `verdict` run in `directory`, its store `directory/v.db`, no colour.
pub fn verdict(directory: &Path) -> Command {
    let mut command = Command::cargo_bin("verdict").unwrap();
    command
        .current_dir(directory)
        .env("VERDICT_DB", directory.join("v.db"))
        .env("NO_COLOR", "1");
    command
}

/// `verdict` for commands that read files only: its store path does not
/// exist, so a command that touched the store would fail.
pub fn verdict_without_store() -> Command {
    let mut command = Command::cargo_bin("verdict").unwrap();
    command
        .env("NO_COLOR", "1")
        .env("VERDICT_DB", "/nonexistent/verdict.db");
    command
}

/// [`verdict_without_store`] run in `directory` (whose files the command
/// reads by relative paths).
pub fn verdict_without_store_in(directory: &Path) -> Command {
    let mut command = verdict_without_store();
    command.current_dir(directory);
    command
}

/// Runs `command`, which must exit 0 (else the test fails with its
/// standard error); returns its standard output.
pub fn succeed(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// `verdict report --format email` of the latest run in `directory`'s
/// store, which must succeed.
pub fn email_report(directory: &Path) -> String {
    succeed(verdict(directory).args(["report", "--format", "email"]))
}

/// The first line of `text` over `width` columns (characters), if any:
/// what a test of a form that claims a width asserts is `None`.
pub fn line_over(text: &str, width: usize) -> Option<&str> {
    text.lines().find(|line| line.chars().count() > width)
}

/// A repository in `directory/repo` whose `work.sh` prints 100 before
/// commit 3 and 300 from it on (commits 0..=4, hashes returned), and
/// `directory/exp.toml` reading that value (`value`, unit `ops`, lower is
/// better): a bisection whose every figure is the same on every machine.
pub fn steps_repository(directory: &Path) -> Vec<String> {
    let repo = directory.join("repo");
    std::fs::create_dir(&repo).unwrap();
    // `sleep 0; echo VALUE` as each commit's work.sh.
    let hashes =
        verdict_testkit::sleep_repository(&repo, 4, 3, None, ["0; echo 100", "0; echo 300"]);
    std::fs::write(
        directory.join("exp.toml"),
        "name = \"steps\"\ncommand = [\"sh\", \"work.sh\"]\n\n[[metrics]]\nname = \"value\"\n\
         source = \"regex\"\npattern = '(\\d+)'\nunit = \"ops\"\ndirection = \"lower\"\n",
    )
    .unwrap();
    hashes
}
