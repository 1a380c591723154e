//! `verdict check`: git-bisect-run exit codes against a stored baseline.

use assert_cmd::Command;
use std::path::Path;

fn verdict(directory: &Path) -> Command {
    let mut command = Command::cargo_bin("verdict").unwrap();
    command
        .current_dir(directory)
        .env("VERDICT_DB", directory.join("v.db"));
    command
}

#[test]
fn check_exits_0_like_baseline_1_changed_125_cannot_tell() {
    let directory = tempfile::tempdir().unwrap();
    let write = |name: &str, seconds: &str| {
        std::fs::write(
            directory.path().join(name),
            format!("name = \"sleep\"\ncommand = [\"sleep\", \"{seconds}\"]\n[sampling]\niterations = 12\nthreshold = 0.5\n"),
        )
        .unwrap();
    };
    write("base.toml", "0.05");
    write("slow.toml", "0.25");
    let output = verdict(directory.path())
        .args(["run", "base.toml"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Same workload, a generous threshold: equivalent.
    let same = verdict(directory.path())
        .args(["check", "--baseline", "1", "--experiment", "base.toml"])
        .output()
        .unwrap();
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&same.stdout)
    );
    // Five times slower: changed.
    let slow = verdict(directory.path())
        .args(["check", "--baseline", "1", "--experiment", "slow.toml"])
        .output()
        .unwrap();
    assert_eq!(
        slow.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&slow.stdout)
    );
    // A workload that cannot run: skip (125), never 2, so git bisect run skips the commit.
    std::fs::write(
        directory.path().join("broken.toml"),
        "name = \"x\"\ncommand = [\"/nonexistent/program\"]\n",
    )
    .unwrap();
    let broken = verdict(directory.path())
        .args(["check", "--baseline", "1", "--experiment", "broken.toml"])
        .output()
        .unwrap();
    assert_eq!(
        broken.status.code(),
        Some(125),
        "{}",
        String::from_utf8_lossy(&broken.stderr)
    );
    // An unknown baseline is also "cannot tell".
    let unknown = verdict(directory.path())
        .args(["check", "--baseline", "99", "--experiment", "base.toml"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(125));
}
