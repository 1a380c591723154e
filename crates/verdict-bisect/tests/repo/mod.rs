//! Builds real git repositories in temporary directories for the tests:
//! `git init` and commits with a fixed identity, so the tests do not depend
//! on the user's git configuration.
//! Must not: touch any repository outside its temporary directory.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

static COMMITS: AtomicU64 = AtomicU64::new(0);

/// Runs git in `dir` with a fixed identity; panics with stderr on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = git_output(dir, args);
    assert!(
        output.status.success(),
        "git {args:?} failed ({}): {}{}",
        output.status,
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    String::from_utf8(output.stdout).expect("utf-8")
}

/// Runs git in `dir` with a fixed identity, whatever its exit status.
pub fn git_output(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args([
            "-c",
            "user.name=Verdict Test",
            "-c",
            "user.email=test@verdict.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("LC_ALL", "C")
        .env(
            "GIT_COMMITTER_DATE",
            format!(
                "@{} +0000",
                1_700_000_000 + 60 * COMMITS.load(Ordering::Relaxed)
            ),
        )
        .output()
        .expect("git runs")
}

/// Writes `file` with `contents` and commits it with `subject`; returns the
/// new commit's full hash.
pub fn commit_file(dir: &Path, file: &str, contents: &str, subject: &str) -> String {
    std::fs::write(dir.join(file), contents).expect("write file");
    git(dir, &["add", file]);
    // Distinct, increasing dates: git orders equal-date commits arbitrarily.
    let date = format!(
        "@{} +0000",
        1_700_000_000 + 60 * COMMITS.fetch_add(1, Ordering::Relaxed)
    );
    git(dir, &["commit", "--quiet", "--date", &date, "-m", subject]);
    git(dir, &["rev-parse", "HEAD"]).trim().to_owned()
}

pub fn init(dir: &Path) {
    git(dir, &["init", "--quiet"]);
}
