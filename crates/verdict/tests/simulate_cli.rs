//! `verdict simulate` as a user runs it: the real binary, its JSON schema,
//! determinism for a seed, and errors with exit code 2.

use assert_cmd::Command;
use predicates::prelude::*;

fn simulate(arguments: &[&str]) -> assert_cmd::assert::Assert {
    Command::cargo_bin("verdict")
        .unwrap()
        .arg("simulate")
        .args(arguments)
        .assert()
}

fn json(arguments: &[&str]) -> serde_json::Value {
    let output = simulate(arguments).success().get_output().stdout.clone();
    serde_json::from_slice(&output).unwrap()
}

#[test]
fn json_names_its_schema_and_is_deterministic_for_a_seed() {
    let arguments = [
        "--format", "json", "--trials", "400", "--seed", "9", "--max", "30", "--runs", "10",
    ];
    let first = json(&arguments);
    assert_eq!(first["schema"], "verdict.simulate/v1");
    assert_eq!(first["trials"], 400);
    assert_eq!(first["scenario"]["noise"]["shape"], "lognormal");
    let results = first["results"].as_array().unwrap();
    let names: Vec<&str> = results
        .iter()
        .map(|result| result["procedure"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["fixed N=10", "peeking every 5 to 30", "adaptive 6..30"]
    );
    for result in results {
        let summary = &result["summary"];
        let total: u64 = ["regression", "improvement", "equivalent", "undecided"]
            .iter()
            .map(|key| summary[key].as_u64().unwrap())
            .sum();
        assert_eq!(total, 400);
    }
    // Peeking at 6 looks false-alarms far more often than the fixed rule.
    let rate = |index: usize| results[index]["change_rate"].as_f64().unwrap();
    assert!(rate(1) > rate(0), "{results:?}");
    assert_eq!(json(&arguments), first);
    let other = json(&[
        "--format", "json", "--trials", "400", "--seed", "10", "--max", "30", "--runs", "10",
    ]);
    assert_ne!(other["results"], first["results"]);
}

#[test]
fn a_large_change_is_found_by_every_procedure() {
    let value = json(&[
        "--format", "json", "--trials", "200", "--change", "-0.3", "--cv", "0.05", "--max", "20",
        "--runs", "10",
    ]);
    for result in value["results"].as_array().unwrap() {
        assert!(
            result["regression_rate"].as_f64().unwrap() > 0.99,
            "{result}"
        );
    }
    let adaptive = &value["results"][2]["summary"];
    assert_eq!(adaptive["mean_runs"].as_f64().unwrap(), 6.0);
}

#[test]
fn text_output_has_a_row_per_procedure() {
    simulate(&[
        "--trials",
        "100",
        "--procedure",
        "fixed",
        "--shape",
        "bimodal",
        "--runs",
        "8",
    ])
    .success()
    .stdout(predicate::str::contains("bimodal 80/20"))
    .stdout(predicate::str::contains("fixed N=8"))
    .stdout(predicate::str::contains("false-alarm rate"))
    .stdout(predicate::str::contains("adaptive").not());
}

#[test]
fn bad_input_is_a_usage_error() {
    simulate(&["--shape", "gaussian"])
        .code(2)
        .stderr(predicate::str::contains("unknown --shape \"gaussian\""));
    simulate(&["--cv", "-1"])
        .code(2)
        .stderr(predicate::str::contains(
            "--cv -1 must be a positive number",
        ));
    simulate(&["--trials", "0"])
        .code(2)
        .stderr(predicate::str::contains("--trials must be at least 1"));
    simulate(&["--procedure", "adaptive", "--max", "4", "--every", "2"])
        .code(2)
        .stderr(predicate::str::contains(
            "failed to build a sequential design",
        ));
}

#[test]
fn boots_mode_shows_the_naive_analysis_inflated_and_the_boot_unit_one_at_alpha() {
    let arguments = [
        "--format",
        "json",
        "--trials",
        "300",
        "--seed",
        "4",
        "--boots",
        "5",
        "--iterations-per-boot",
        "20",
        "--boot-cv",
        "0.05",
        "--cv",
        "0.05",
    ];
    let value = json(&arguments);
    assert_eq!(value["schema"], "verdict.simulate_boots/v1");
    assert_eq!(value["scenario"]["boots"], 5);
    assert_eq!(value["scenario"]["iterations"], 20);
    let results = value["results"].as_array().unwrap();
    let labels: Vec<&str> = results
        .iter()
        .map(|result| result["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "naive pooled",
            "median+welch",
            "mean+welch",
            "median+rank",
            "mean+rank"
        ]
    );
    let rate = |index: usize| results[index]["change_rate"].as_f64().unwrap();
    // 3 standard errors of 5% over 300 trials: 3.8%.
    assert!(rate(0) > 0.4, "naive: {}", rate(0));
    for result in &results[1..] {
        let rate = result["change_rate"].as_f64().unwrap();
        assert!(rate <= 0.05 + 0.038, "{result}");
    }
    assert_eq!(json(&arguments), value);
}

#[test]
fn boots_mode_text_says_when_boots_are_too_few_and_rejects_bad_input() {
    simulate(&[
        "--trials",
        "50",
        "--boots",
        "2",
        "--iterations-per-boot",
        "5",
        "--change",
        "0.1",
    ])
    .success()
    .stdout(predicate::str::contains(
        "2 boot(s) per level x 5 iteration(s)",
    ))
    .stdout(predicate::str::contains(
        "needs at least 4 boots per level at alpha 0.05: with 2 it cannot call a change",
    ))
    .stdout(predicate::str::contains("median+welch"));
    simulate(&["--boots", "0"])
        .code(2)
        .stderr(predicate::str::contains("need --boots >= 1"));
    simulate(&["--boots", "3", "--boot-cv", "-0.1"])
        .code(2)
        .stderr(predicate::str::contains(
            "--boot-cv -0.1 must be 0 or a positive number",
        ));
}
