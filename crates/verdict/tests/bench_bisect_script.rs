//! One trial of the bisection benchmark (scripts/bench-bisect.sh) end to
//! end, small: a generated git repository of a C program whose run time
//! grows at one commit, `verdict bisect --worktrees` and the fixed-N
//! baseline on it, through the script itself, so CI proves the path the
//! benchmark takes works. The shift is larger than the benchmark's 10% to
//! keep this short on a loaded CI machine; the 20-trial result is in
//! docs/bisect.md. Needs git and gcc (.ci/run installs them).

use std::process::Command;

#[test]
fn the_benchmark_script_finds_the_culprit_in_one_small_trial() {
    let work = tempfile::tempdir().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/bench-bisect.sh");
    let output = Command::new("bash")
        .arg(script)
        .env("TRIALS", "1")
        .env("COMMITS", "24")
        .env("SHIFT_PERCENT", "25")
        .env("ITERATIONS", "3000000")
        .env("FIXED_RUNS", "15")
        .env("SEED", "7")
        .env("WORK", work.path())
        .env("VERDICT", assert_cmd::cargo::cargo_bin("verdict"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let sequential: Vec<&str> = stdout
        .lines()
        .find(|line| line.starts_with("sequential "))
        .unwrap_or_else(|| panic!("no sequential line:\n{stdout}\n{stderr}"))
        .split_whitespace()
        .collect();
    // mode trial found runs named seconds
    assert_eq!(sequential[2], "yes", "{stdout}\n{stderr}");
    let runs: u64 = sequential[3].parse().unwrap();
    assert!(runs > 0, "{stdout}");
    assert!(
        stdout.lines().any(|line| line.starts_with("fixed ")),
        "the fixed-N baseline ran too: {stdout}"
    );
    assert!(stdout.contains("summary: 1 trials, 24 commits"), "{stdout}");
}
