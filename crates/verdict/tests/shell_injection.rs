//! The shell-injection reports of issue 11, run for real: `verdict run` on
//! a temp experiment whose level would create a marker file if it reached a
//! shell. Each must be refused at load (exit 2) and the marker must never
//! appear; the safe form (the value as its own argument) must run and print
//! the level literally. Must not leave anything outside its temp directory.

mod common;

use common::verdict;
use std::path::Path;

/// Writes an experiment running `argv` with factor `v` whose second level
/// would `touch` `marker`, runs it, and returns (exit code, stderr).
fn run_with(directory: &Path, argv: &[&str], marker: &Path) -> (Option<i32>, String) {
    let level = format!("b; touch {}", marker.display());
    let text = format!(
        "name = \"inject\"\ncommand = {}\n[factors]\nv = [\"a\", {}]\n[sampling]\niterations = 2\n",
        serde_json::to_string(argv).unwrap(),
        serde_json::to_string(&level).unwrap()
    );
    std::fs::write(directory.join("inject.toml"), text).unwrap();
    let output = verdict(directory)
        .args(["run", "inject.toml"])
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_placeholder_in_a_shell_script_behind_a_wrapper_never_runs() {
    // Each case with the program whose real run would have executed the
    // level as shell code (so a missing program would make the test prove
    // nothing): it fails naming the package, or skips the case with
    // VERDICT_TEST_ALLOW_MISSING=1.
    let reported: &[(&str, &str, &[&str])] = &[
        (
            "taskset",
            "util-linux",
            &["taskset", "-c", "0", "sh", "-c", "echo {v}"],
        ),
        (
            "perf",
            "linux-perf",
            &["perf", "stat", "--", "sh", "-c", "echo {v}"],
        ),
        ("nice", "coreutils", &["nice", "sh", "-c", "echo {v}"]),
        (
            "timeout",
            "coreutils",
            &["timeout", "5", "sh", "-c", "echo {v}"],
        ),
        ("env", "coreutils", &["env", "sh", "-c", "echo {v}"]),
        (
            "env",
            "coreutils",
            &["env", "-i", "FOO=1", "sh", "-c", "echo {v}"],
        ),
        (
            "bash",
            "bash",
            &["nice", "-n", "1", "bash", "-lc", "echo {v}"],
        ),
        (
            "timeout",
            "coreutils",
            &["timeout", "5", "sh", "-ec", "echo {v}"],
        ),
        (
            "busybox",
            "busybox-static",
            &["busybox", "sh", "-c", "echo {v}"],
        ),
    ];
    for (program, package, argv) in reported {
        if verdict_testkit::require_program(program, package).is_none() {
            continue;
        }
        let directory = tempfile::tempdir().unwrap();
        let marker = directory.path().join("marker");
        let (code, stderr) = run_with(directory.path(), argv, &marker);
        assert_eq!(code, Some(2), "{argv:?}: {stderr}");
        assert!(
            stderr.contains("inject.toml:2:") && stderr.contains("never spliced into shell code"),
            "{argv:?}: {stderr}"
        );
        assert!(!marker.exists(), "{argv:?} created the marker");
    }
}

#[test]
fn the_value_as_its_own_argument_runs_and_stays_data() {
    let Some(_) = verdict_testkit::require_program("taskset", "util-linux") else {
        return;
    };
    let directory = tempfile::tempdir().unwrap();
    let marker = directory.path().join("marker");
    let echoed = directory.path().join("echoed");
    let script = format!("printf '%s\\n' \"$1\" >> {}", echoed.display());
    let argv = [
        "taskset",
        "-c",
        "0",
        "sh",
        "-c",
        script.as_str(),
        "sh",
        "{v}",
    ];
    let (code, stderr) = run_with(directory.path(), &argv, &marker);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!marker.exists(), "the level ran as code");
    let echoed = std::fs::read_to_string(&echoed).unwrap();
    assert!(
        echoed
            .lines()
            .any(|line| line == format!("b; touch {}", marker.display())),
        "{echoed}"
    );
}
