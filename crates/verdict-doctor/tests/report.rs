//! The report built from fixtures and a fixed set of probe iterations: its
//! text (snapshot, 80 columns), its JSON (schema and fields), its one-line
//! summary, and the agreement of its recommendation with the planner.

use std::path::PathBuf;
use verdict_doctor::checks::Window;
use verdict_doctor::noise::Iteration;
use verdict_doctor::parse::kconfig;
use verdict_doctor::probe::ProbeRun;
use verdict_doctor::report::{self, DoctorOptions, DoctorReport, ProbeLength};
use verdict_doctor::snapshot::Snapshot;
use verdict_doctor::{FixtureFiles, SystemFiles, capture_environment, environment};

fn fixture(name: &str) -> FixtureFiles {
    let directory = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    FixtureFiles::load(&directory).unwrap()
}

/// 40 iterations around 20 ms with a 3% wobble; every eighth iteration is
/// 15% slower and saw steal.
fn iterations() -> Vec<Iteration> {
    (0..40)
        .map(|index| {
            let stolen = index % 8 == 3;
            let wobble = 1.0 + 0.03 * ((index * 7 % 11) as f64 - 5.0) / 5.0;
            Iteration {
                seconds: 0.020 * wobble * if stolen { 1.15 } else { 1.0 },
                steal_ticks: if stolen { 2 } else { 0 },
                involuntary_switches: u64::from(stolen),
            }
        })
        .collect()
}

fn build(name: &str, after_steal: u64) -> DoctorReport {
    let files = fixture(name);
    let mut after = files.clone();
    let text = files.read("/proc/stat").text().unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut fields: Vec<String> = lines[0].split_whitespace().map(str::to_string).collect();
    let busy: u64 = fields[1].parse().unwrap();
    let idle: u64 = fields[4].parse().unwrap();
    let steal: u64 = fields[8].parse().unwrap();
    fields[1] = (busy + 100).to_string();
    fields[4] = (idle + 100).to_string();
    fields[8] = (steal + after_steal).to_string();
    lines[0] = fields.join(" ");
    after.insert("/proc/stat", lines.join("\n") + "\n");
    let before_snapshot = Snapshot::full(&files);
    let after_snapshot = Snapshot::counters(&after);
    let window = Window {
        before: &before_snapshot,
        after: &after_snapshot,
        seconds: 1.0,
        ticks_per_second: 100.0,
        own_pid: None,
    };
    let environment_now = capture_environment(&files);
    let config = environment::read_kernel_config(&files, environment_now.kernel_release.as_deref())
        .map(|config| kconfig::parse_options(&config.text));
    let options = DoctorOptions {
        length: ProbeLength::Quick,
        ..DoctorOptions::default()
    };
    report::assemble(
        &options,
        environment_now,
        &window,
        config.as_ref(),
        ProbeRun {
            iterations: iterations(),
            elapsed_seconds: 0.85,
            rounds_per_iteration: 12_000_000,
        },
    )
}

#[test]
fn text_fits_80_columns_and_is_stable() {
    for (name, steal) in [("powervm-lpar-shared", 8), ("bare-metal-x86", 0)] {
        let report = build(name, steal);
        let text = report.render_text();
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "{name}: {line:?}");
        }
        insta::assert_snapshot!(name, text);
    }
}

#[test]
fn recommendation_uses_the_planner_at_the_measured_cv() {
    let report = build("powervm-lpar-shared", 8);
    let summary = report.calibration.summary.as_ref().unwrap();
    let expected = verdict_stats::plan::runs_per_cell(
        verdict_stats::plan::log_sd_from_cv(summary.cv),
        0.05,
        0.05,
        verdict_stats::plan::DEFAULT_POWER,
    );
    assert_eq!(report.recommendation.runs_per_cell, expected);
    assert_eq!(report.recommendation.cv, Some(summary.cv));
    assert!(summary.steal_correlation.unwrap() > 0.5);
    // Steal is implicated (correlated with slow iterations), so its fix is first.
    assert!(
        report.recommendation.changes[0].starts_with("steal:"),
        "{:?}",
        report.recommendation.changes
    );
}

#[test]
fn json_names_its_schema_and_carries_the_fields() {
    let report = build("powervm-lpar-shared", 8);
    let json: serde_json::Value = serde_json::to_value(&report).unwrap();
    assert_eq!(json["schema"], "verdict.doctor/v1");
    assert_eq!(json["environment"]["virtualization"], "powervm");
    assert_eq!(json["lpar"]["shared"], true);
    assert_eq!(json["lpar"]["entitled_capacity"], 2.0);
    assert_eq!(json["window"]["steal_ticks"], 8);
    assert_eq!(json["options"]["length"], "quick");
    assert_eq!(
        json["calibration"]["iterations"].as_array().unwrap().len(),
        40
    );
    assert!(json["calibration"]["summary"]["cv"].as_f64().unwrap() > 0.0);
    assert!(json["recommendation"]["runs_per_cell"].as_u64().unwrap() >= 2);
    assert_eq!(json["workloads"], serde_json::json!([]));
    let checks = json["checks"].as_array().unwrap();
    assert!(
        checks
            .iter()
            .any(|check| check["id"] == "lpar" && check["status"] == "warn")
    );
}

#[test]
fn summary_line_is_one_short_line() {
    let report = build("powervm-lpar-shared", 8);
    let line = report.summary_line();
    assert!(!line.contains('\n'));
    assert!(line.chars().count() <= 80, "{line}");
    assert!(line.starts_with("noise: probe CV "), "{line}");
    assert!(line.contains("powervm"), "{line}");
    let runs = report.recommendation.runs_per_cell.unwrap();
    assert!(
        line.ends_with(&format!("5% needs >= {runs} runs/cell")),
        "{line}"
    );
}

#[test]
fn summary_line_stays_short_with_a_long_label() {
    let mut report = build("docker-container", 0);
    report.options.threshold = 0.025;
    let line = report.summary_line();
    assert!(line.chars().count() <= 80, "{line}");
    assert!(line.contains("2.5% needs"), "{line}");
    report.virtualization.as_mut().unwrap().container = Some("kubernetes-with-a-long-name".into());
    let line = report.summary_line();
    assert!(line.chars().count() <= 80, "{line}");
    assert!(!line.contains("kubernetes"), "{line}");
}

#[test]
fn real_doctor_run_on_this_machine() {
    // The probe runs on the real CPU; fixture files keep the checks stable.
    let files = fixture("firecracker-vm");
    let options = DoctorOptions {
        length: ProbeLength::Quick,
        ..DoctorOptions::default()
    };
    let started = std::time::Instant::now();
    let report = report::run_doctor_with(&files, &options, None, 100.0, 20_000);
    let elapsed = started.elapsed().as_secs_f64();
    assert!(elapsed < 4.0, "quick doctor took {elapsed} s");
    assert!(report.calibration.iterations.len() >= 10);
    assert!(report.calibration.summary.is_some());
    assert_eq!(report.environment.virtualization.as_deref(), Some("kvm"));
}
