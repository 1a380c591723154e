//! Parses the output of the tools installed on this machine, to catch a
//! format change in a newer stress-ng, perf, GNU time or hyperfine. A missing
//! tool fails naming its Debian package (verdict-testkit; scripts/test
//! installs them; VERDICT_TEST_ALLOW_MISSING=1 skips).
//! Starts real processes; does nothing else.

use std::process::Command;

use verdict_parse::{
    Extractor, extract, hyperfine_times, perf_event_value, perf_stat, perf_stat_csv,
    stress_ng_text, stress_ng_value, stress_ng_yaml, time_posix, time_verbose_value,
};

fn run(program: &str, arguments: &[&str]) -> std::process::Output {
    let output = Command::new(program)
        .args(arguments)
        .output()
        .unwrap_or_else(|error| panic!("start {program}: {error}"));
    assert!(
        output.status.success(),
        "{program} {arguments:?} failed: {output:?}"
    );
    output
}

#[test]
fn live_stress_ng_text_and_yaml_agree() {
    let Some(_) = verdict_testkit::require_program("stress-ng", "stress-ng") else {
        return;
    };
    let directory = tempfile::tempdir().unwrap();
    let yaml_path = directory.path().join("metrics.yaml");
    let yaml_argument = yaml_path.to_str().unwrap();
    let output = run(
        "stress-ng",
        &[
            "--kill",
            "1",
            "--cpu",
            "1",
            "-t",
            "1",
            "--metrics",
            "--yaml",
            yaml_argument,
        ],
    );
    let text = stress_ng_text(&String::from_utf8_lossy(&output.stderr)).unwrap();
    let yaml = stress_ng_yaml(&std::fs::read_to_string(&yaml_path).unwrap()).unwrap();
    for stressor in ["kill", "cpu"] {
        for field in verdict_parse::STRESS_NG_FIELDS {
            let from_text = stress_ng_value(&text, Some(stressor), field).unwrap();
            let from_yaml = stress_ng_value(&yaml, Some(stressor), field).unwrap();
            // The text has two decimals; the YAML six.
            assert!(
                (from_text - from_yaml).abs() <= 0.005 + 1e-9 * from_yaml.abs(),
                "{stressor} {field}: text {from_text}, yaml {from_yaml}"
            );
        }
        assert!(stress_ng_value(&text, Some(stressor), "bogo-ops").unwrap() > 0.0);
    }
    let extractor = Extractor::StressNg {
        stressor: Some("kill".to_string()),
        field: "bogo-ops-per-second-real-time".to_string(),
    };
    assert!(extract(&extractor, &output.stdout, &output.stderr).unwrap() > 0.0);
}

#[test]
fn live_time_reports() {
    let Some(_) = verdict_testkit::require_path(
        std::path::Path::new("/usr/bin/time"),
        "apt-get install time",
    ) else {
        return;
    };
    let output = run("/usr/bin/time", &["-v", "sleep", "0.2"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let elapsed = time_verbose_value(&stderr, "elapsed").unwrap();
    assert!((0.15..5.0).contains(&elapsed), "elapsed {elapsed}");
    assert!(time_verbose_value(&stderr, "max-rss").unwrap() > 0.0);

    let output = run("/usr/bin/time", &["-p", "sleep", "0.2"]);
    let report = time_posix(&String::from_utf8_lossy(&output.stderr)).unwrap();
    assert!((0.15..5.0).contains(&report.real), "real {}", report.real);

    let output = run("bash", &["-c", "time sleep 0.2"]);
    let report = time_posix(&String::from_utf8_lossy(&output.stderr)).unwrap();
    assert!((0.15..5.0).contains(&report.real), "real {}", report.real);
}

#[test]
fn live_perf_stat_software_counter() {
    let Some(_) = verdict_testkit::require_program("perf", "linux-perf") else {
        return;
    };
    let output = run("perf", &["stat", "-x,", "-e", "task-clock,cycles", "true"]);
    let rows = perf_stat_csv(&String::from_utf8_lossy(&output.stderr)).unwrap();
    assert!(perf_event_value(&rows, "task-clock").unwrap() > 0.0);
    // cycles is either counted (real PMU) or missing, never a silent zero.
    match perf_event_value(&rows, "cycles") {
        Ok(cycles) => assert!(cycles > 0.0),
        Err(error) => assert!(error.to_string().contains("value is missing"), "{error}"),
    }
    for arguments in [
        &["stat", "-e", "task-clock", "true"][..],
        &["stat", "-j", "-e", "task-clock", "true"][..],
    ] {
        let output = run("perf", arguments);
        let rows = perf_stat(&String::from_utf8_lossy(&output.stderr)).unwrap();
        assert!(
            perf_event_value(&rows, "task-clock").unwrap() > 0.0,
            "{arguments:?}"
        );
    }
}

#[test]
fn live_hyperfine_export() {
    let Some(_) = verdict_testkit::require_program("hyperfine", "hyperfine") else {
        return;
    };
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("export.json");
    run(
        "hyperfine",
        &[
            "-N",
            "-r",
            "3",
            "--style",
            "none",
            "true",
            "--export-json",
            path.to_str().unwrap(),
        ],
    );
    let times = hyperfine_times(&std::fs::read_to_string(&path).unwrap(), Some("true")).unwrap();
    assert_eq!(times.len(), 3);
    assert!(times.iter().all(|time| *time > 0.0));
}
