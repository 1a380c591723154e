//! `verdict report` and `verdict runs` as a user runs them, on runs the
//! engine really made (real child processes, a real SQLite file in a temp
//! dir): a factor with `compare = false` is never compared across its
//! levels and Holm's k counts only the real comparisons; hostile names
//! reach no output raw; `--metrics` puts several metrics side by side.

mod common;

use common::{succeed, verdict};
use std::path::Path;

/// Runs `experiment` (file text) and returns its report as JSON.
fn run_and_report(directory: &Path, file: &str, experiment: &str) -> serde_json::Value {
    std::fs::write(directory.join(file), experiment).unwrap();
    succeed(verdict(directory).args(["run", file, "--format", "json"]));
    serde_json::from_str(&succeed(
        verdict(directory).args(["report", "--format", "json"]),
    ))
    .unwrap()
}

fn experiment(benchmark_factor: &str) -> String {
    format!(
        "name = \"select\"\ncommand = [\"printf\", \"%s %s\", \"{{benchmark}}\", \"{{variant}}\"]\n\
         [factors]\n{benchmark_factor}\nvariant = [\"a\", \"b\", \"c\"]\n[sampling]\niterations = 3\n"
    )
}

#[test]
fn a_factor_with_compare_false_is_compared_within_its_levels_only() {
    let directory = tempfile::tempdir().unwrap();
    let selecting = run_and_report(
        directory.path(),
        "select.toml",
        &experiment("benchmark = { levels = [\"fork\", \"pipe\", \"exec\"], compare = false }"),
    );
    let comparisons = &selecting["comparisons"];
    // variant b and c against a, within each of the 3 benchmarks: k = 6.
    assert_eq!(comparisons["adjustment"], "holm-bonferroni (k=6)");
    let names: Vec<&str> = comparisons["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 6, "{names:?}");
    for benchmark in ["fork", "pipe", "exec"] {
        for variant in ["b", "c"] {
            let name = format!("[benchmark={benchmark}] variant={variant} vs a");
            assert!(names.contains(&name.as_str()), "{name} in {names:?}");
        }
    }
    assert!(
        names.iter().all(|name| !name.contains("] benchmark=")),
        "no comparison across benchmarks: {names:?}"
    );
    let run = selecting["run"]["id"].to_string();
    // A pivot with the benchmarks as columns shows them side by side, no deltas.
    let pivot = succeed(verdict(directory.path()).args([
        "report",
        &run,
        "--rows",
        "variant",
        "--cols",
        "benchmark",
        "--format",
        "json",
    ]));
    let pivot: serde_json::Value = serde_json::from_str(&pivot).unwrap();
    assert_eq!(pivot["compared"], false);
    assert!(
        pivot["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|row| row["deltas"].as_array().unwrap().is_empty())
    );
    let ratio = verdict(directory.path())
        .args(["report", &run, "--ratio", "benchmark=fork/pipe"])
        .output()
        .unwrap();
    assert_eq!(ratio.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&ratio.stderr).contains("compare = false"),
        "{}",
        String::from_utf8_lossy(&ratio.stderr)
    );

    // The same experiment with the factor compared: benchmark pipe and exec
    // against fork for each of the 3 variants join the family, k = 12.
    let comparing = run_and_report(
        directory.path(),
        "compare.toml",
        &experiment("benchmark = [\"fork\", \"pipe\", \"exec\"]"),
    );
    assert_eq!(
        comparing["comparisons"]["adjustment"],
        "holm-bonferroni (k=12)"
    );
}

const NASTY: &str = "a\nb\u{1b}[31mc|d,\"e";

#[test]
fn hostile_names_reach_no_output_raw() {
    let directory = tempfile::tempdir().unwrap();
    let quoted = serde_json::to_string(NASTY).unwrap();
    std::fs::write(
        directory.path().join("nasty.toml"),
        format!(
            "name = {quoted}\ncommand = [\"printf\", \"%s\", \"{{workload}}\"]\n[factors]\nworkload = [\"plain\", {quoted}]\n[sampling]\niterations = 3\n"
        ),
    )
    .unwrap();
    let printed = succeed(verdict(directory.path()).args(["run", "nasty.toml"]));
    assert!(!printed.contains('\u{1b}'), "{printed:?}");
    for format in ["text", "markdown", "csv"] {
        let runs = succeed(verdict(directory.path()).args(["runs", "--format", format]));
        assert!(
            !runs.chars().any(|c| c.is_control() && c != '\n'),
            "runs --format {format}: {runs:?}"
        );
        let expected_lines = if format == "markdown" { 3 } else { 2 };
        assert_eq!(
            runs.lines().count(),
            expected_lines,
            "runs --format {format} keeps one line per run:\n{runs}"
        );
        assert!(
            runs.contains("x1b"),
            "the escape is spelled visibly: {runs}"
        );
        let report = succeed(verdict(directory.path()).args(["report", "--format", format]));
        assert!(
            !report.chars().any(|c| c.is_control() && c != '\n'),
            "report --format {format}: {report:?}"
        );
    }
    let runs = succeed(verdict(directory.path()).args(["runs"]));
    let widths: Vec<usize> = runs.lines().map(|line| line.chars().count()).collect();
    assert_eq!(
        widths[0], widths[1],
        "the runs table keeps its columns:\n{runs}"
    );
}

#[test]
fn metrics_side_by_side_and_the_detailed_table() {
    let directory = tempfile::tempdir().unwrap();
    run_and_report(
        directory.path(),
        "select.toml",
        &experiment("benchmark = [\"fork\"]"),
    );
    let text = succeed(verdict(directory.path()).args(["report", "--metrics", "wall,user"]));
    let header = text
        .lines()
        .find(|line| line.starts_with("cell ") && line.contains("user"))
        .unwrap_or_else(|| panic!("no side-by-side table:\n{text}"));
    assert!(
        header.contains("wall") && !header.contains("maxrss"),
        "{header}"
    );
    assert!(
        text.contains("rCV"),
        "robust CV column in the text report:\n{text}"
    );
    let everything = succeed(verdict(directory.path()).args(["report"]));
    assert!(
        everything.contains("maxrss [KiB]") && everything.contains("sys"),
        "every metric by default:\n{everything}"
    );
    let detailed = succeed(verdict(directory.path()).args(["report", "--metric", "sys"]));
    assert!(
        detailed.contains("95% CI") && !detailed.contains("maxrss"),
        "--metric NAME: the detailed table alone:\n{detailed}"
    );
    let json: serde_json::Value = serde_json::from_str(&succeed(
        verdict(directory.path()).args(["report", "--format", "json"]),
    ))
    .unwrap();
    let names: Vec<&str> = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|metric| metric["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["wall", "user", "sys", "maxrss"]);
    let unknown = verdict(directory.path())
        .args(["report", "--metrics", "wall,nope"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&unknown.stderr)
            .contains("no metric `nope`; it has: wall, user, sys, maxrss"),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );
}
