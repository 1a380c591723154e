//! Rendered reports, snapshot-tested: the run report in every format and
//! the story-1 pivot (kernel x SELinux mode, 15 runs per cell at ~30% CV)
//! with its SELinux-tax ratio row. Data is generated deterministically so
//! the snapshots are stable.

use std::collections::BTreeMap;
use verdict_model::{Environment, Experiment, Failure, Sample};
use verdict_report::Format;
use verdict_report::pivot::{PivotOptions, PivotReport};
use verdict_report::run::{RunInfo, RunReport, RunReportOptions};

/// A deterministic stand-in for lognormal noise: fixed standard-normal-like
/// quantiles visited in a strided order.
fn noisy(median: f64, cv: f64, count: usize, offset: usize) -> Vec<f64> {
    let quantiles = [
        -1.5, -1.0, -0.7, -0.4, -0.2, 0.0, 0.2, 0.4, 0.7, 1.0, 1.5, -0.1, 0.1, -0.55, 0.55,
    ];
    let sigma = (1.0 + cv * cv).ln().sqrt();
    (0..count)
        .map(|index| median * (sigma * quantiles[(index * 7 + offset) % quantiles.len()]).exp())
        .collect()
}

fn info(name: &str) -> RunInfo {
    RunInfo {
        id: 7,
        name: name.to_string(),
        status: "complete".to_string(),
        started: "2026-11-30 12:00 UTC".to_string(),
        finished: Some("2026-11-30 14:00 UTC".to_string()),
        seed: 42,
        host: "lpar1".to_string(),
        planned: 90,
        recorded: 90,
        tool_version: "verdict 0.1.0".to_string(),
        order: "interleaved (randomized blocks)".to_string(),
        procedure: None,
        noise: None,
        decisions: Vec::new(),
    }
}

fn samples_for(experiment: &Experiment, medians: &[f64], cv: f64, count: usize) -> Vec<Sample> {
    let cells = experiment.cells();
    let mut samples = Vec::new();
    let mut sequence = 0;
    for block in 0..count {
        for (cell, median) in medians.iter().enumerate().take(cells.len()) {
            let value = noisy(*median, cv, count, cell * 3)[block];
            let mut metrics = BTreeMap::new();
            metrics.insert(experiment.primary_metric().name.clone(), value);
            samples.push(Sample {
                cell,
                block: block as u32,
                sequence,
                warmup: false,
                started_at_ms: 0,
                wall_seconds: 23.0,
                user_seconds: 1.0,
                sys_seconds: 20.0,
                max_rss_kib: 4000,
                exit_code: Some(0),
                signal: None,
                timed_out: false,
                metrics,
                failure: None,
                missing: BTreeMap::new(),
                leftovers: Vec::new(),
            });
            sequence += 1;
        }
    }
    samples
}

const STORY_ONE: &str = r#"
name = "kill-selinux"
command = ["stress-ng", "--kill", "1", "-t", "23", "--metrics-brief"]
[factors]
kernel = ["7.1", "7.2-rc4"]
selinux = ["enforcing", "permissive", "disabled"]
[[metrics]]
name = "bogo-ops/s"
source = "stress-ng"
stressor = "kill"
[sampling]
iterations = 15
"#;

#[test]
fn story_one_pivot_with_the_selinux_tax() {
    let experiment = Experiment::parse(STORY_ONE, "kill.toml").unwrap();
    // The medians of the 15-runs-per-cell table of the mailing-list case, at ~30% CV.
    let medians = [68_275.0, 68_082.0, 99_654.0, 70_154.0, 67_166.0, 100_510.0];
    let samples = samples_for(&experiment, &medians, 0.30, 15);
    let options = PivotOptions {
        rows: Some("selinux".to_string()),
        cols: Some("kernel".to_string()),
        ratio: Some(verdict_report::pivot::RatioSpec {
            factor: "selinux".to_string(),
            numerator: "enforcing".to_string(),
            denominator: "disabled".to_string(),
        }),
        alpha: 0.05,
        adjust: true,
        bootstrap_seed: 1,
        ..PivotOptions::default()
    };
    let pivot = PivotReport::build(info("kill-selinux"), &experiment, &samples, &options).unwrap();
    let text = verdict_report::pivot::render(&pivot, Format::Text);
    // 30% noise, 15 runs: nothing here can be called a regression or "even within 3%".
    assert!(
        pivot
            .verdicts()
            .iter()
            .all(|verdict| *verdict == verdict_report::compare::Verdict::Inconclusive),
        "{text}"
    );
    insta::assert_snapshot!("story_one_pivot_text", text);
    insta::assert_snapshot!(
        "story_one_pivot_markdown",
        verdict_report::pivot::render(&pivot, Format::Markdown)
    );
    let json: serde_json::Value =
        serde_json::from_str(&verdict_report::pivot::render(&pivot, Format::Json)).unwrap();
    assert_eq!(json["schema"], "verdict.pivot/v1");
    assert_eq!(json["rows"].as_array().unwrap().len(), 3);
    let difference = &json["ratio"]["differences"][0];
    assert!(difference["ci_low"].as_f64().unwrap() < difference["estimate"].as_f64().unwrap());
    assert!(difference["ci_high"].as_f64().unwrap() > difference["estimate"].as_f64().unwrap());
}

#[test]
fn run_report_in_every_format_escapes_what_it_quotes() {
    let text =
        "name = \"gzip\"\ncommand = [\"gzip\", \"-{level}\"]\n[factors]\nlevel = [\"1\", \"9\"]\n";
    let experiment = Experiment::parse(text, "gzip.toml").unwrap();
    let mut samples = samples_for(&experiment, &[0.120, 0.480], 0.05, 10);
    samples[3].failure = Some(Failure {
        reason: "exit status 1".to_string(),
        output_tail: "gzip: data.bin: No such file\n\u{1b}[31mred|pipe,comma\n".to_string(),
    });
    let environment = Environment {
        hostname: Some("box".to_string()),
        kernel_release: Some("6.1.0".to_string()),
        cpu_count: Some(8),
        ..Environment::default()
    };
    let mut run = info("gzip");
    run.planned = 20;
    run.recorded = 20;
    let report = RunReport::build(
        run,
        &experiment,
        &samples,
        &environment,
        &RunReportOptions::default(),
    )
    .unwrap();
    let text = verdict_report::run::render(&report, Format::Text);
    assert!(
        !text.contains('\u{1b}'),
        "terminal escapes from workload output are neutralised"
    );
    insta::assert_snapshot!("run_report_text", text);
    insta::assert_snapshot!(
        "run_report_markdown",
        verdict_report::run::render(&report, Format::Markdown)
    );
    insta::assert_snapshot!(
        "run_report_csv",
        verdict_report::run::render(&report, Format::Csv)
    );
    let json: serde_json::Value =
        serde_json::from_str(&verdict_report::run::render(&report, Format::Json)).unwrap();
    assert_eq!(json["schema"], "verdict.report/v1");
    assert_eq!(json["cells"][0]["levels"]["level"], "1");
    assert_eq!(json["cells"][0]["n"], 10);
    assert_eq!(json["cells"][1]["n"], 9, "the failed iteration is not data");
    assert_eq!(json["failures"][0]["reason"], "exit status 1");
    let cells_failed: u64 = json["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cell| cell["failed"].as_u64().unwrap())
        .sum();
    assert_eq!(cells_failed, 1);
    assert_eq!(
        json["comparisons"]["comparisons"][0]["verdict"],
        "regression"
    );
}

/// Leftover process names come from /proc (any bytes a process chose) and
/// missing-value reasons quote tool output: both are escaped like failures.
#[test]
fn leftovers_and_missing_values_are_listed_and_escaped() {
    let text = "name = \"perf\"\ncommand = [\"work\"]\n[factors]\nmode = [\"a\", \"b\"]\n\n[[metrics]]\nname = \"wall\"\n\n[[metrics]]\nname = \"cycles\"\nsource = \"perf-stat\"\nevent = \"cycles\"\n";
    let experiment = Experiment::parse(text, "perf.toml").unwrap();
    let mut samples = samples_for(&experiment, &[0.120, 0.121], 0.05, 6);
    for sample in &mut samples {
        sample.missing.insert(
            "cycles".to_string(),
            "perf printed `<not supported>` | \u{1b}[2J".to_string(),
        );
    }
    samples[2].leftovers = vec!["sle|ep\u{1b}[31m".to_string(), "cat".to_string()];
    let report = RunReport::build(
        info("perf"),
        &experiment,
        &samples,
        &Environment::default(),
        &RunReportOptions::default(),
    )
    .unwrap();
    assert_eq!(report.missing.len(), 1);
    assert_eq!(report.missing[0].count, 12);
    assert_eq!(report.leftovers.len(), 1);
    assert!(report.leftovers[0].killed, "the default kills them");
    let text = verdict_report::run::render(&report, Format::Text);
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(
        text.contains("cycles: 12 missing value(s): perf printed `<not supported>` | \\x1b[2J"),
        "{text}"
    );
    assert!(
        text.contains("#2 mode=a: 2 process(es): sle|ep\\x1b[31m, cat (killed)"),
        "{text}"
    );
    let markdown = verdict_report::run::render(&report, Format::Markdown);
    assert!(!markdown.contains('\u{1b}'), "{markdown}");
    assert!(
        markdown.contains(r"- \#2 mode=a: 2 process(es): sle\|ep\\x1b\[31m, cat (killed)"),
        "{markdown}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&verdict_report::run::render(&report, Format::Json)).unwrap();
    assert_eq!(json["missing"][0]["metric"], "cycles");
    assert_eq!(
        json["leftovers"][0]["processes"],
        serde_json::json!(["sle|ep\u{1b}[31m", "cat"]),
        "JSON keeps the names exactly (its own escaping)"
    );
}
