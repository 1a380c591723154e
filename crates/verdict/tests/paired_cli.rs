//! `[sampling] analysis = "paired"` end to end: a real `verdict run` of
//! real child processes into a real SQLite file in a temp dir, then
//! `verdict report`: the comparison is block-paired (the header names the
//! procedure, `n` counts complete blocks, an incomplete block is dropped
//! and counted), and the default analysis stays two independent samples.

use assert_cmd::Command;
use std::path::Path;

fn verdict(directory: &Path) -> Command {
    let mut command = Command::cargo_bin("verdict").unwrap();
    command
        .current_dir(directory)
        .env("VERDICT_DB", directory.join("v.db"))
        .env("NO_COLOR", "1");
    command
}

fn stdout_of(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// A 10 ms sleep against a 300 ms one (30 times as long, so a loaded
/// machine's scheduling delays of tens of ms cannot reverse a block), 10
/// interleaved blocks; the first 300 ms run fails (a marker file in the work directory), so its block is
/// incomplete.
fn experiment(analysis: &str) -> String {
    format!(
        "name = \"sleeps\"\nshell = true\n\
         command = \"if [ \\\"$VERDICT_DURATION\\\" = 0.3 ] && [ ! -e failed-once ]; then touch failed-once; exit 1; fi; sleep \\\"$VERDICT_DURATION\\\"\"\n\
         [factors]\nduration = [\"0.01\", \"0.3\"]\n\
         [sampling]\niterations = 10\n{analysis}"
    )
}

fn run_and_report(directory: &Path, analysis: &str) -> (serde_json::Value, String) {
    std::fs::write(directory.join("sleeps.toml"), experiment(analysis)).unwrap();
    // The failed iteration is recorded; the run itself goes on.
    let output = verdict(directory)
        .args(["run", "sleeps.toml", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        directory.join("failed-once").exists(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = serde_json::from_str(&stdout_of(
        verdict(directory).args(["report", "--format", "json"]),
    ))
    .unwrap();
    let text = stdout_of(verdict(directory).args(["report"]));
    (json, text)
}

#[test]
fn paired_analysis_compares_complete_blocks_and_names_the_procedure() {
    let directory = tempfile::tempdir().unwrap();
    let (report, text) = run_and_report(directory.path(), "analysis = \"paired\"\n");
    let comparisons = &report["comparisons"];
    assert_eq!(
        comparisons["paired"]["dropped_blocks"],
        serde_json::json!([1]),
        "{comparisons}"
    );
    let row = &comparisons["comparisons"][0];
    // 10 blocks, one without its 300 ms run: 9 complete blocks per side.
    assert_eq!(row["baseline"]["n"], 9, "{row}");
    assert_eq!(row["candidate"]["n"], 9, "{row}");
    // Thirty times as long in every block: a regression by the paired rule.
    assert_eq!(row["verdict"], "regression", "{row}");
    assert!(row["delta"].as_f64().unwrap() > 1.0, "{row}");
    assert!(
        text.contains("analysis: block-paired (Wilcoxon signed-rank on within-block log ratios"),
        "{text}"
    );
    assert!(text.contains("1 incomplete block dropped"), "{text}");
    assert!(text.contains("p: Wilcoxon signed-rank"), "{text}");
}

#[test]
fn default_analysis_stays_two_independent_samples() {
    let directory = tempfile::tempdir().unwrap();
    let (report, text) = run_and_report(directory.path(), "");
    let comparisons = &report["comparisons"];
    assert!(comparisons.get("paired").is_none(), "{comparisons}");
    let row = &comparisons["comparisons"][0];
    // Every successful run counts: 10 baseline runs, 9 candidate runs.
    assert_eq!(row["baseline"]["n"], 10, "{row}");
    assert_eq!(row["candidate"]["n"], 9, "{row}");
    assert!(text.contains("p: Mann-Whitney U"), "{text}");
    assert!(!text.contains("block-paired"), "{text}");
}
