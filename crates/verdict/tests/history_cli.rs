//! `verdict history` end to end with the real binary: runs of an
//! experiment kept in a generated git repository record their commit; a
//! commit that makes the workload 3x slower shows as one change point, and
//! `--bisect 1` prints the `verdict bisect` command whose range holds that
//! commit; asking again reuses the stored weak change points; a CSV series
//! (Otava's reference case) changes between its 6th and 7th rows.
//!
//! The workload is `sleep` (3x longer from the culprit on), which stays
//! fast and clearly separated when other tests load the machine. Must not:
//! depend on timing beyond that 3x step.

mod common;

use common::verdict;
use serde_json::Value;
use std::path::Path;
use verdict_testkit::git;

const CULPRIT: usize = 3;

/// Commits 0..=5 of `work.sh` and `exp.toml`; from CULPRIT on the workload
/// sleeps 3x longer.
fn make_repo(repo: &Path) -> Vec<String> {
    git(repo, &["init", "-q"]);
    let script = repo.join("work.sh");
    std::fs::write(
        repo.join("exp.toml"),
        format!(
            "name = \"sleepy\"\ncommand = [\"sh\", \"{}\"]\n\n[sampling]\nwarmups = 0\n",
            script.display()
        ),
    )
    .unwrap();
    (0..=5)
        .map(|index| {
            let seconds = if index >= CULPRIT { "0.06" } else { "0.02" };
            std::fs::write(&script, format!("sleep {seconds}\n# revision {index}\n")).unwrap();
            git(repo, &["add", "-A"]);
            git(repo, &["commit", "-qm", &format!("change number {index}")]);
            git(repo, &["rev-parse", "HEAD"])
        })
        .collect()
}

fn stdout(directory: &Path, args: &[&str]) -> String {
    let output = verdict(directory).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn json(directory: &Path, args: &[&str]) -> Value {
    serde_json::from_str(&stdout(directory, args)).unwrap()
}

fn run_at(directory: &Path, repo: &Path, commit: &str, runs: usize) {
    git(repo, &["checkout", "-q", commit]);
    let experiment = repo.join("exp.toml");
    for _ in 0..runs {
        stdout(
            directory,
            &[
                "run",
                experiment.to_str().unwrap(),
                "-n",
                "3",
                "--seed",
                "1",
            ],
        );
    }
}

#[test]
fn a_slower_commit_is_one_change_point_and_bisect_names_its_range() {
    let directory = tempfile::tempdir().unwrap();
    let repo = directory.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let hashes = make_repo(&repo);
    run_at(directory.path(), &repo, &hashes[1], 6);
    run_at(directory.path(), &repo, &hashes[5], 6);
    // Only changes of 20% or more: the 3x slowdown, not the few-percent
    // steps a busy machine adds between runs (Otava's test flags those too
    // when the runs are tight).

    let history = json(
        directory.path(),
        &[
            "history",
            "sleepy",
            "--method",
            "otava",
            "--magnitude",
            "0.2",
            "--format",
            "json",
        ],
    );
    assert_eq!(history["schema"], "verdict.history/v1");
    assert_eq!(history["metric"], "wall");
    let series = &history["series"].as_array().unwrap()[0];
    assert_eq!(series["points"].as_array().unwrap().len(), 12);
    assert_eq!(series["points"][0]["commit"], hashes[1].as_str());
    assert_eq!(series["points"][0]["n"], 3);
    let changes = series["change_points"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{series}");
    assert_eq!(changes[0]["index"], 6);
    assert_eq!(changes[0]["commit_before"], hashes[1].as_str());
    assert_eq!(changes[0]["commit"], hashes[5].as_str());
    let change = changes[0]["change"].as_f64().unwrap();
    assert!(change > 1.0, "3x slower: {change}");
    assert_eq!(series["reused_points"], 0);

    let text = stdout(
        directory.path(),
        &[
            "history",
            "sleepy",
            "--method",
            "otava",
            "--magnitude",
            "0.2",
        ],
    );
    assert!(text.contains("1 change point"), "{text}");
    assert!(text.contains("  1. run 7, "), "{text}");
    assert!(
        text.contains(&format!("commit {}", &hashes[5][..12])),
        "{text}"
    );

    let command = stdout(
        directory.path(),
        &[
            "history",
            "sleepy",
            "--method",
            "otava",
            "--magnitude",
            "0.2",
            "--bisect",
            "1",
        ],
    );
    let experiment = repo.join("exp.toml");
    assert_eq!(
        command.trim(),
        format!(
            "verdict bisect --repo {} --good {} --bad {} --experiment {}",
            repo.display(),
            hashes[1],
            hashes[5],
            experiment.display()
        )
    );
    let range = git(
        &repo,
        &["rev-list", &format!("{}..{}", hashes[1], hashes[5])],
    );
    assert!(range.lines().any(|line| line == hashes[CULPRIT]));

    // Asking again reuses the stored weak change points; so does a new run.
    let again = json(
        directory.path(),
        &[
            "history",
            "sleepy",
            "--method",
            "otava",
            "--magnitude",
            "0.2",
            "--format",
            "json",
        ],
    );
    assert_eq!(again["series"][0]["reused_points"], 12);
    assert_eq!(again["series"][0]["change_points"], series["change_points"]);
    run_at(directory.path(), &repo, &hashes[5], 1);
    let appended = json(
        directory.path(),
        &[
            "history",
            "sleepy",
            "--method",
            "otava",
            "--magnitude",
            "0.2",
            "--format",
            "json",
        ],
    );
    assert_eq!(appended["series"][0]["reused_points"], 12);
    assert_eq!(
        appended["series"][0]["points"].as_array().unwrap().len(),
        13
    );
    assert_eq!(appended["series"][0]["change_points"][0]["index"], 6);

    // A change point that does not exist is a usage error.
    verdict(directory.path())
        .args(["history", "sleepy", "--magnitude", "0.2", "--bisect", "2"])
        .assert()
        .code(2);
}

#[test]
fn runs_recorded_with_commit_option_and_by_commit_pool_runs_of_one_commit() {
    let directory = tempfile::tempdir().unwrap();
    let experiment = directory.path().join("exp.toml");
    std::fs::write(
        &experiment,
        "name = \"plain\"\ncommand = [\"true\"]\n\n[sampling]\nwarmups = 0\n",
    )
    .unwrap();
    for commit in ["aaa", "aaa", "bbb"] {
        stdout(
            directory.path(),
            &[
                "run",
                experiment.to_str().unwrap(),
                "-n",
                "2",
                "--commit",
                commit,
            ],
        );
    }
    let history = json(
        directory.path(),
        &["history", "plain", "--by", "commit", "--format", "json"],
    );
    let points = history["series"][0]["points"].as_array().unwrap();
    let summary: Vec<(Value, Value)> = points
        .iter()
        .map(|point| (point["commit"].clone(), point["n"].clone()))
        .collect();
    assert_eq!(
        summary,
        [("aaa".into(), 4.into()), ("bbb".into(), 2.into())]
    );
}

#[test]
fn csv_series_changes_between_the_sixth_and_seventh_rows() {
    let directory = tempfile::tempdir().unwrap();
    let values = [
        10.43, 10.23, 10.29, 10.91, 10.34, 10.69, 9.23, 9.11, 9.13, 9.03,
    ];
    let mut csv = "day,score\n".to_string();
    for (index, value) in values.iter().enumerate() {
        csv.push_str(&format!("2026-11-{:02},{value}\n", index + 1));
    }
    std::fs::write(directory.path().join("series.csv"), csv).unwrap();
    let history = json(
        directory.path(),
        &[
            "history",
            "--file",
            "series.csv",
            "--column",
            "score",
            "--time-column",
            "day",
            "--method",
            "otava",
            "--format",
            "json",
        ],
    );
    let changes = history["series"][0]["change_points"].as_array().unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0]["index"], 6);
    assert_eq!(changes[0]["label_before"], "2026-11-06");
    assert_eq!(changes[0]["label"], "2026-11-07");
    let mean_change = changes[0]["mean_change"].as_f64().unwrap();
    assert!((mean_change - -0.129_432).abs() < 1e-5, "{mean_change}");
    let text = stdout(
        directory.path(),
        &[
            "history",
            "--file",
            "series.csv",
            "--column",
            "score",
            "--method",
            "otava",
        ],
    );
    assert!(text.contains("between row 6 and row 7 (index 6)"), "{text}");
    assert!(text.contains("means -12.9%"), "{text}");
    // By email: the same list, every line at most 80 columns, a line too
    // long continuing indented under itself.
    let email = stdout(
        directory.path(),
        &[
            "history",
            "--file",
            "series.csv",
            "--column",
            "score",
            "--method",
            "otava",
            "--format",
            "email",
        ],
    );
    assert!(text.lines().any(|line| line.chars().count() > 80), "{text}");
    assert_eq!(common::line_over(&email, 80), None, "{email}");
    assert_eq!(
        email.split_whitespace().collect::<Vec<_>>(),
        text.split_whitespace().collect::<Vec<_>>(),
        "the same words"
    );
    // A missing column names the file and the columns there are.
    let output = verdict(directory.path())
        .args(["history", "--file", "series.csv", "--column", "nope"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("series.csv") && error.contains("nope"),
        "{error}"
    );
}

#[test]
fn ranks_find_the_step_that_an_outlier_hides_from_otava() {
    // 40 rows: a 10% step at row 21 (index 20), and one run ten times
    // slower at index 8. verdict's default method reports the step and
    // not the outlier; Otava's t-test on raw values has the outlier in its
    // variance and reports nothing.
    let directory = tempfile::tempdir().unwrap();
    let mut csv = "run,seconds\n".to_string();
    for index in 0..40 {
        let noise = ((index as f64 * 0.618_033_988_7).fract() - 0.5) * 0.02;
        let level = if index >= 20 { 1.1 } else { 1.0 };
        let value = if index == 8 {
            10.0
        } else {
            level * (1.0 + noise)
        };
        csv.push_str(&format!("{index},{value}\n"));
    }
    std::fs::write(directory.path().join("series.csv"), csv).unwrap();
    let history = json(
        directory.path(),
        &[
            "history",
            "--file",
            "series.csv",
            "--column",
            "seconds",
            "--format",
            "json",
        ],
    );
    assert_eq!(history["settings"]["method_name"], "ranks", "{history}");
    assert_eq!(history["settings"]["pvalue"], 0.05, "{history}");
    let changes = history["series"][0]["change_points"].as_array().unwrap();
    let indices: Vec<u64> = changes
        .iter()
        .map(|change| change["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indices, [20], "{history}");
    assert!(changes[0]["pvalue"].as_f64().unwrap() < 0.05);
    let text = stdout(
        directory.path(),
        &["history", "--file", "series.csv", "--column", "seconds"],
    );
    assert!(text.contains("ranks, p <= 0.05"), "{text}");
    let otava = json(
        directory.path(),
        &[
            "history",
            "--file",
            "series.csv",
            "--column",
            "seconds",
            "--method",
            "otava",
            "--window",
            "20",
            "-P",
            "0.01",
            "--format",
            "json",
        ],
    );
    let reported: Vec<u64> = otava["series"][0]["change_points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| change["index"].as_u64().unwrap())
        .collect();
    assert!(!reported.contains(&20), "{otava}");
}
