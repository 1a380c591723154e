//! `verdict plan` end to end: the fixed design comes first, the adaptive
//! figures come from the analytic estimate (no simulation unless
//! `--trials`), at caps in the thousands (issue 11: `--cv 42% --threshold
//! 5%` used to print nothing for minutes), and `--alpha`/`--power` take
//! percentages like `--threshold`.

use assert_cmd::Command;

fn plan(arguments: &[&str]) -> String {
    verdict(&[&["plan"], arguments].concat())
}

/// Runs verdict (no database), asserts success, returns its stdout.
fn verdict(arguments: &[&str]) -> String {
    let output = Command::cargo_bin("verdict")
        .unwrap()
        .env("VERDICT_DB", "/nonexistent/verdict.db")
        .args(arguments)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn large_cap_is_planned_analytically_with_the_fixed_design_first() {
    let text = plan(&["--cv", "42%", "--threshold", "5%"]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("noise: CV 42.0%"), "{text}");
    // 2·(1.95996 + 1.28155)²·(0.40324/0.04879)²/0.955 = 1501.4 -> 1502.
    assert_eq!(lines[1], "fixed design:    1502 runs per cell", "{text}");
    assert!(
        lines[2].starts_with("adaptive design: cap 1803 per cell"),
        "{text}"
    );
    assert!(
        text.contains("normal-theory numerical integration"),
        "{text}"
    );
    assert!(!text.contains("Monte-Carlo"), "{text}");
}

#[test]
fn json_carries_the_method_and_rates() {
    let json = plan(&["--cv", "13%", "--threshold", "5%", "--format", "json"]);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["schema"], "verdict.plan/v1");
    assert_eq!(value["fixed"]["runs_per_cell"], 155);
    let adaptive = &value["adaptive"];
    assert_eq!(adaptive["cap_per_cell"], 186);
    assert_eq!(adaptive["trials"], 0);
    assert!(adaptive["monte_carlo"].is_null());
    let power = adaptive["if_change_is_threshold"]["power"]
        .as_f64()
        .unwrap();
    assert!((0.88..0.96).contains(&power), "{power}");
    let false_alarms = adaptive["if_no_change"]["false_alarms"].as_f64().unwrap();
    assert!(false_alarms <= 0.05, "{false_alarms}");
}

#[test]
fn trials_adds_a_monte_carlo_check() {
    let text = plan(&["--cv", "13%", "--threshold", "10%", "--trials", "200"]);
    assert!(
        text.contains("Monte-Carlo check (200 trials per line)"),
        "{text}"
    );
}

#[test]
fn alpha_and_power_take_percentages() {
    let percent = plan(&[
        "--cv",
        "13%",
        "--threshold",
        "5%",
        "--alpha",
        "1%",
        "--power",
        "80%",
    ]);
    let fraction = plan(&[
        "--cv",
        "0.13",
        "--threshold",
        "0.05",
        "--alpha",
        "0.01",
        "--power",
        "0.8",
    ]);
    assert_eq!(percent, fraction);
    assert!(
        percent.contains("at alpha 0.01 with power 0.8"),
        "{percent}"
    );
}

#[test]
fn plan_reports_the_three_designs() {
    // Issue 19: fixed, adaptive without a cap, and block-paired, for the
    // user's CV, threshold and within-block correlation.
    let json = plan(&[
        "--cv",
        "30%",
        "--threshold",
        "19%",
        "--correlation",
        "0.5",
        "--format",
        "json",
    ]);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let fixed = value["fixed"]["runs_per_cell"].as_u64().unwrap();
    // Paired: the within-block log ratio has half the variance at rho 0.5:
    // 2·(1.95996 + 1.28155)²·(0.29356²·0.5)/ln(1.19)²/0.955 = 31.4 -> 32.
    assert_eq!(value["paired"]["runs_per_cell"], 32, "{json}");
    assert!(fixed > 60, "{json}");
    let uncapped = &value["adaptive_without_cap"];
    // Target information 1.3·(z₀.₉₇₇₅ + z₀.₉)²/ln(1.19)² (boundaries for
    // 0.9·α) in runs at σ² = 0.29356²: 463.95·(2π/3)·0.08618 = 83.7 -> 84.
    assert_eq!(uncapped["planned_end_if_no_change"], 84, "{json}");
    let power = uncapped["if_change_is_threshold"]["power"]
        .as_f64()
        .unwrap();
    assert!(power >= 0.9, "{json}");
    let mean = uncapped["if_change_is_threshold"]["mean_runs"]
        .as_f64()
        .unwrap();
    assert!(mean < fixed as f64, "{json}");
    let text = plan(&["--cv", "30%", "--threshold", "19%", "--correlation", "0.5"]);
    assert!(
        text.contains("adaptive, no cap: ends by ~84 runs per cell"),
        "{text}"
    );
    assert!(text.contains("block-paired:    32 runs per cell"), "{text}");
    let output = Command::cargo_bin("verdict")
        .unwrap()
        .env("VERDICT_DB", "/nonexistent/verdict.db")
        .args(["plan", "--cv", "30%", "--correlation", "1.5"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn plan_reads_the_correlation_from_a_doctor_report_and_says_so() {
    // Issue 19: the block-paired design's within-block correlation from a
    // real `verdict doctor --format json` report (its probe iterations), and
    // the output names where the figure came from.
    let directory = tempfile::tempdir().unwrap();
    let report = directory.path().join("doctor.json");
    let path = report.to_str().unwrap();
    verdict(&["doctor", "--quick", "--format", "json", "-o", path]);
    let doctor: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let seconds: Vec<f64> = doctor["calibration"]["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|iteration| iteration["seconds"].as_f64().unwrap())
        .collect();
    let expected = verdict_stats::plan::neighbour_correlation(&seconds).unwrap();
    let json = plan(&[
        "--cv",
        "30%",
        "--threshold",
        "19%",
        "--doctor",
        path,
        "--format",
        "json",
    ]);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["paired"]["correlation"].as_f64().unwrap(), expected);
    let source = value["paired"]["correlation_source"].as_str().unwrap();
    assert!(source.starts_with("doctor report "), "{source}");
    assert!(
        source.ends_with(&format!("{} probe iterations' log times", seconds.len())),
        "{source}"
    );
    let text = plan(&["--cv", "30%", "--threshold", "19%", "--doctor", path]);
    assert!(
        text.contains(&format!(
            "at within-block correlation {expected:.2} (from doctor report "
        )),
        "{text}"
    );
    // --correlation wins and says so; without either, independent noise.
    let text = plan(&["--cv", "30%", "--doctor", path, "--correlation", "0.5"]);
    assert!(
        text.contains("correlation 0.50 (from --correlation;"),
        "{text}"
    );
    let text = plan(&["--cv", "30%"]);
    assert!(
        text.contains("correlation 0.00 (from default: independent noise;"),
        "{text}"
    );
    // Not a doctor report: an input error naming the file and position.
    let bad = directory.path().join("bad.json");
    std::fs::write(&bad, "{\n  \"calibration\": [\n").unwrap();
    let output = Command::cargo_bin("verdict")
        .unwrap()
        .env("VERDICT_DB", "/nonexistent/verdict.db")
        .args(["plan", "--cv", "30%", "--doctor"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("bad.json:3:"), "{stderr}");
}

/// Runs verdict in `directory` with its own store, asserts success.
fn verdict_in(directory: &std::path::Path, arguments: &[&str]) -> String {
    let output = Command::cargo_bin("verdict")
        .unwrap()
        .current_dir(directory)
        .env_remove("VERDICT_DB")
        .args(arguments)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{arguments:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn plan_run_agrees_with_the_runs_report() {
    // Issue 29: `plan --run` ignored the run's threshold and planned at
    // power 0.9 from the median CV over cells, the report at power 0.8
    // from the pooled spread: 158 against ~86 for the same run. Now both
    // use the run's threshold, alpha, power and comparisons and the log
    // spread pooled over its cells.
    let directory = tempfile::tempdir().unwrap();
    std::fs::write(
        directory.path().join("x.toml"),
        "name = \"x\"\ncommand = [\"sleep\", \"{t}\"]\n[factors]\nt = [\"0.01\", \"0.0101\"]\n\
         [sampling]\niterations = 8\nthreshold = 0.05\npower = 0.8\n",
    )
    .unwrap();
    verdict_in(directory.path(), &["run", "x.toml"]);
    let report: serde_json::Value = serde_json::from_str(&verdict_in(
        directory.path(),
        &["report", "--format", "json"],
    ))
    .unwrap();
    let row = &report["comparisons"]["comparisons"][0];
    let plan: serde_json::Value = serde_json::from_str(&verdict_in(
        directory.path(),
        &["plan", "--run", "1", "--format", "json"],
    ))
    .unwrap();
    assert_eq!(plan["threshold"], 0.05, "{plan}");
    assert_eq!(plan["power"], 0.8, "{plan}");
    if row["verdict"] == "inconclusive" {
        // The report never plans fewer runs than the 8 it has, plus one.
        let floored = |value: &serde_json::Value| value.as_u64().unwrap().max(9);
        assert_eq!(
            row["runs_needed"].as_u64().unwrap(),
            floored(&plan["fixed"]["runs_per_cell"]),
            "{row} {plan}"
        );
        assert_eq!(
            row["runs_needed_range"][1].as_u64().unwrap(),
            floored(&plan["fixed"]["range"][1]),
            "{row} {plan}"
        );
    } else {
        // Decided: the report plans nothing; the plan still has a range.
        assert!(
            plan["fixed"]["range"][0].as_u64().unwrap()
                <= plan["fixed"]["range"][1].as_u64().unwrap()
        );
    }
}
