//! `verdict doctor` end to end: the real binary on this machine, JSON and
//! text output, time limits, and flag errors.

mod common;

use common::verdict_without_store;
use std::time::Instant;

#[test]
fn quick_json_names_schema_and_reports_this_machine() {
    let started = Instant::now();
    let output = verdict_without_store()
        .args(["doctor", "--quick", "--format", "json"])
        .output()
        .unwrap();
    let elapsed = started.elapsed().as_secs_f64();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // --quick calibrates for about 3 seconds; allow process start and a busy machine.
    assert!(elapsed < 6.0, "doctor --quick took {elapsed:.1} s");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["schema"], "verdict.doctor/v1");
    assert_eq!(json["options"]["length"], "quick");
    assert_eq!(json["options"]["threshold"], 0.05);

    // What this machine is must be said, whatever it is.
    let environment = &json["environment"];
    assert!(environment["virtualization"].is_string(), "{environment}");
    assert!(environment["kernel_release"].is_string());
    let checks = json["checks"].as_array().unwrap();
    for id in [
        "virtualization",
        "smt",
        "governor",
        "steal",
        "other-processes",
    ] {
        let check = checks
            .iter()
            .find(|check| check["id"] == id)
            .unwrap_or_else(|| panic!("no {id} check"));
        assert!(["ok", "warn", "info"].contains(&check["status"].as_str().unwrap()));
        assert!(!check["finding"].as_str().unwrap().is_empty());
    }
    assert!(json["window"]["steal_ticks"].is_u64(), "{}", json["window"]);
    assert!(json["window"]["seconds"].as_f64().unwrap() >= 2.0);

    let summary = &json["calibration"]["summary"];
    let cv = summary["cv"].as_f64().unwrap();
    assert!(cv > 0.0 && cv < 5.0, "cv {cv}");
    assert!(summary["iterations"].as_u64().unwrap() >= 10);
    assert!(json["calibration"]["elapsed_seconds"].as_f64().unwrap() <= 4.0);

    // The recommendation is verdict-stats' planner at the measured CV.
    let expected = verdict_stats_runs(cv);
    assert_eq!(
        json["recommendation"]["runs_per_cell"].as_u64(),
        Some(expected)
    );
    assert_eq!(json["recommendation"]["cv"].as_f64(), Some(cv));
    assert_eq!(
        json["workloads"],
        serde_json::json!([]),
        "no --experiment, no workloads"
    );
}

/// 2(z₀.₉₇₅ + z₀.₉)²(σ/ln 1.05)²/0.955 with σ = sqrt(ln(1+cv²)), rounded up,
/// at least 2: the documented planning formula, computed independently.
fn verdict_stats_runs(cv: f64) -> u64 {
    let z = 1.959_963_984_540_054 + 1.281_551_565_544_600_5;
    let sigma = (cv * cv).ln_1p().sqrt();
    let runs = 2.0 * z * z * (sigma / 1.05f64.ln()).powi(2) / 0.955;
    (runs.ceil() as u64).max(2)
}

#[test]
fn quick_text_fits_80_columns() {
    let output = verdict_without_store()
        .args(["doctor", "--quick"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with("verdict doctor (quick"), "{text}");
    for section in [
        "Machine",
        "Checks",
        "Noise (fixed CPU probe",
        "Recommendation (threshold 5.0%",
    ] {
        assert!(text.contains(section), "missing {section}:\n{text}");
    }
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "{line:?}");
    }
    let output = verdict_without_store()
        .args(["doctor", "--quick", "--format", "email"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let email = String::from_utf8(output.stdout).unwrap();
    assert!(email.starts_with("verdict doctor (quick"), "{email}");
    assert_eq!(common::line_over(&email, 80), None, "{email}");
}

#[test]
fn bad_threshold_is_a_usage_error() {
    verdict_without_store()
        .args(["doctor", "--quick", "--threshold", "5"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "`5` is out of range; expected a fraction between 0 and 1",
        ));
    verdict_without_store()
        .args(["doctor", "--quick", "--long"])
        .assert()
        .code(2);
}

#[test]
fn experiment_workload_is_calibrated_too() {
    let directory = tempfile::tempdir().unwrap();
    let experiment = directory.path().join("sleep.toml");
    std::fs::write(
        &experiment,
        "name = \"sleepy\"\ncommand = [\"sleep\", \"0.02\"]\n\
         [sampling]\nthreshold = 0.1\nalpha = 0.01\npower = 0.8\n",
    )
    .unwrap();
    let output = verdict_without_store()
        .args([
            "doctor",
            "--quick",
            "--format",
            "json",
            "--iterations",
            "4",
            "--experiment",
        ])
        .arg(&experiment)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let workload = &json["workloads"][0];
    assert!(workload["name"].as_str().unwrap().starts_with("sleepy"));
    assert_eq!(workload["summary"]["iterations"], 4);
    assert!(workload["summary"]["median_seconds"].as_f64().unwrap() >= 0.02);
    assert!(workload["runs_per_cell"].as_u64().is_some());
    // Issue 29, finding 7: the recommendation plans the run the experiment
    // will be, from the workload's noise with the experiment's threshold,
    // alpha and power (before: the probe's CV at 5%, alpha 0.05, power
    // 0.9, whatever the experiment said).
    let recommendation = &json["recommendation"];
    assert_eq!(recommendation["noise_source"], "workload", "{json}");
    assert_eq!(recommendation["threshold"], 0.1, "{json}");
    assert_eq!(recommendation["alpha"], 0.01, "{json}");
    assert_eq!(recommendation["power"], 0.8, "{json}");
    assert_eq!(recommendation["cv"], workload["summary"]["cv"], "{json}");
    assert_eq!(
        recommendation["runs_per_cell"], workload["runs_per_cell"],
        "{json}"
    );
}
