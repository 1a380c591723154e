//! Whole-output snapshots (insta) of commands whose text other tests only
//! check in part: `verdict runs` on a store the test fills with a real
//! `verdict ab` run, `verdict plan`, `verdict simulate` with a fixed seed,
//! `verdict kconfig why-not` on the fixture tree, and `verdict bisect log`
//! of a real bisection whose workload prints fixed values. Filters replace what
//! changes between runs (dates, ids, temporary paths); everything else must
//! match the reviewed snapshot in tests/snapshots/.

mod common;

use common::{quick_bisect, steps_repository, succeed, verdict, verdict_without_store};
use std::path::Path;

#[test]
fn runs_lists_a_real_run() {
    let directory = tempfile::tempdir().unwrap();
    succeed(verdict(directory.path()).args(["ab", "-n", "3", "--seed", "1", "true", "sleep 0"]));
    let text = succeed(verdict(directory.path()).arg("runs"));
    let csv = succeed(verdict(directory.path()).args(["runs", "--format", "csv"]));
    // The host column names this machine.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let escaped: String = host
        .trim()
        .chars()
        .map(|character| {
            if character.is_ascii_alphanumeric() {
                character.to_string()
            } else {
                format!("\\{character}")
            }
        })
        .collect();
    let host = format!(r"\b{escaped}\b");
    insta::with_settings!({filters => vec![
        (r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC", "[date]"),
        (r"(?m)^\d+( |,)", "[id]$1"),
        (host.as_str(), "[host]"),
        // Column widths follow the host name's length: spaces collapsed.
        (r" {2,}", "  "),
    ]}, {
        insta::assert_snapshot!("runs_text", text);
        insta::assert_snapshot!("runs_csv", csv);
    });
}

#[test]
fn plan_for_a_cv_and_a_threshold() {
    let text = succeed(verdict_without_store().args(["plan", "--cv", "13%", "--threshold", "5%"]));
    insta::assert_snapshot!("plan_cv13_threshold5", text);
}

#[test]
fn simulate_with_a_fixed_seed() {
    let text = succeed(verdict_without_store().args([
        "simulate", "--trials", "50", "--seed", "7", "--max", "20", "--runs", "10",
    ]));
    insta::assert_snapshot!("simulate_seed7_trials50", text);
}

#[test]
fn kconfig_why_not_on_the_fixture_tree() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../verdict-kconfig/tests/fixtures");
    let text = succeed(verdict_without_store().current_dir(&fixtures).args([
        "kconfig",
        "why-not",
        "PREEMPT_DYNAMIC",
        "--tree",
        "preempt-tree",
        "--config",
        "configs/old.config",
    ]));
    // Paths in the output are relative to the tree: nothing to filter.
    insta::assert_snapshot!("kconfig_why_not_preempt_dynamic", text);
}

#[test]
fn an_invalid_format_is_clap_usage_error_2() {
    for command in ["runs", "report", "compare", "plan", "history", "export"] {
        let output = verdict_without_store()
            .args([command, "--format", "bogus"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{command}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("invalid value 'bogus' for '--format <FORMAT>'"),
            "{command}: {stderr}"
        );
    }
}

/// `verdict bisect log` of a bisection whose workload prints a fixed value
/// (100 before commit 3, 300 from it on): every commit's values, and so
/// its classification, its run counts and the log, are the same in every
/// run of the test whatever the machine's load or the drawn seed. Hashes,
/// dates and temporary paths are filtered.
#[test]
fn bisect_log_of_a_deterministic_bisection() {
    let directory = tempfile::tempdir().unwrap();
    let hashes = steps_repository(directory.path());
    let repo = directory.path().join("repo");
    succeed(verdict(directory.path()).args(quick_bisect(&repo, &hashes[0], &hashes[4])));
    let log = succeed(verdict(directory.path()).args(["bisect", "log"]));
    insta::with_settings!({filters => vec![
        (r"\b[0-9a-f]{40}\b", "[hash]"),
        (r"\b[0-9a-f]{12}\b", "[short]"),
        (r"\b[0-9a-f]{7}\b", "[short]"),
        (r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?( UTC)?", "[date]"),
        (r"/tmp/[^\s']+", "[path]"),
    ]}, {
        insta::assert_snapshot!("bisect_log_deterministic", log);
    });
}
