//! The HTML report, tested as rendered text: the page's structure and the
//! forest plot as snapshots, escaping of everything the workload or user
//! controls, the pivot page, and the size of a 10^5-sample page (the
//! subsample keeps it light). Data is deterministic so snapshots are stable.
//! Well-formedness and the browser are tested in the `verdict` crate.

use std::collections::BTreeMap;
use verdict_model::{Environment, Experiment, Failure, Sample};
use verdict_report::html::{self, EnvironmentColumn};
use verdict_report::pivot::{PivotOptions, PivotReport};
use verdict_report::run::{RunInfo, RunReport, RunReportOptions, environment_lines};

fn info(name: &str, recorded: u64) -> RunInfo {
    RunInfo {
        id: 7,
        name: name.to_string(),
        status: "complete".to_string(),
        started: "2026-11-30 12:00 UTC".to_string(),
        finished: Some("2026-11-30 14:00 UTC".to_string()),
        seed: 42,
        host: "lpar1".to_string(),
        planned: recorded,
        recorded: recorded as usize,
        tool_version: "verdict 0.1.0".to_string(),
        order: "interleaved (randomized blocks)".to_string(),
        procedure: None,
        noise: None,
        decisions: Vec::new(),
    }
}

/// `count` blocks over every cell; the value is the cell's median scaled by
/// a deterministic spread (a triangle wave over the sequence number).
fn samples_for(experiment: &Experiment, medians: &[f64], count: usize) -> Vec<Sample> {
    let cells = experiment.cells();
    let mut samples = Vec::new();
    let mut sequence = 0u32;
    for block in 0..count {
        for (cell, median) in medians.iter().enumerate().take(cells.len()) {
            let wave = ((sequence * 37 % 101) as f64 - 50.0) / 50.0;
            let mut metrics = BTreeMap::new();
            metrics.insert(
                experiment.primary_metric().name.clone(),
                median * (1.0 + 0.08 * wave),
            );
            samples.push(Sample {
                cell,
                block: block as u32,
                sequence,
                warmup: false,
                started_at_ms: 0,
                wall_seconds: 1.0,
                user_seconds: 0.5,
                sys_seconds: 0.1,
                max_rss_kib: 4000,
                exit_code: Some(0),
                signal: None,
                timed_out: false,
                metrics,
                failure: None,
                missing: Default::default(),
                leftovers: Vec::new(),
            });
            sequence += 1;
        }
    }
    samples
}

fn environments(hostname: &str) -> Vec<EnvironmentColumn> {
    let start = Environment {
        hostname: Some(hostname.to_string()),
        kernel_release: Some("6.1.0".to_string()),
        cpu_count: Some(8),
        load_average: Some([0.5, 0.4, 0.3]),
        ..Environment::default()
    };
    let end = Environment {
        load_average: Some([1.5, 0.9, 0.4]),
        ..start.clone()
    };
    vec![
        EnvironmentColumn {
            title: "run 7 start".to_string(),
            lines: environment_lines(&start),
        },
        EnvironmentColumn {
            title: "run 7 end".to_string(),
            lines: environment_lines(&end),
        },
    ]
}

/// The page's element structure: one line per element, `tag.class`, runs
/// of identical siblings (the dots) collapsed to `tag.class x N`.
fn outline(page: &str) -> String {
    let mut elements: Vec<String> = Vec::new();
    let mut rest = page;
    while let Some(start) = rest.find('<') {
        rest = &rest[start + 1..];
        let name: String = rest
            .chars()
            .take_while(|character| character.is_ascii_alphanumeric())
            .collect();
        if name.is_empty() {
            continue;
        }
        let end = rest.find('>').unwrap_or(rest.len());
        let tag = &rest[..end];
        let class = tag
            .find("class=\"")
            .map(|at| {
                let value = &tag[at + 7..];
                format!(
                    ".{}",
                    &value[..value.find('"').unwrap_or(0)].replace(' ', ".")
                )
            })
            .unwrap_or_default();
        elements.push(format!("{name}{class}"));
    }
    let mut lines: Vec<(String, usize)> = Vec::new();
    for element in elements {
        match lines.last_mut() {
            Some((last, count)) if *last == element => *count += 1,
            _ => lines.push((element, 1)),
        }
    }
    lines
        .into_iter()
        .map(|(element, count)| {
            if count > 1 {
                format!("{element} x {count}\n")
            } else {
                format!("{element}\n")
            }
        })
        .collect()
}

const GZIP: &str = "name = \"gzip\"\ncommand = [\"gzip\", \"-{level}\"]\n[factors]\nlevel = [\"1\", \"9\"]\n[sampling]\nthreshold = 0.05\n";

fn gzip_report() -> (RunReport, Vec<html::CellSeries>) {
    let experiment = Experiment::parse(GZIP, "gzip.toml").unwrap();
    let mut samples = samples_for(&experiment, &[0.120, 0.480], 12);
    samples[5].failure = Some(Failure {
        reason: "exit status 1".to_string(),
        output_tail: "gzip: data.bin: No such file\n".to_string(),
    });
    samples[5].metrics.clear();
    let report = RunReport::build(
        info("gzip", 24),
        &experiment,
        &samples,
        &Environment::default(),
        &RunReportOptions::default(),
    )
    .unwrap();
    let series = html::cell_series(&experiment, &samples, &report.metric.name);
    (report, series)
}

#[test]
fn run_page_structure_and_forest_plot() {
    let (report, series) = gzip_report();
    assert_eq!(
        series[1].failed,
        vec![5],
        "the failed iteration is marked apart"
    );
    assert_eq!(series[1].values.len(), 11);
    let page = html::render_run(&report, &series, &environments("box"));
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains(&format!("content=\"{}\"", html::CONTENT_SECURITY_POLICY)));
    assert!(page.contains("<tr class=\"differs\"><td class=\"text\">load</td>"));
    // One forest plot, one distribution picture, one run-order plot per cell.
    assert_eq!(page.matches("<svg ").count(), 1 + 1 + 2);
    insta::assert_snapshot!("html_run_outline", outline(&page));
    let forest_start = page.find("<svg class=\"plot forest\"").unwrap();
    let forest_end = forest_start + page[forest_start..].find("</svg>").unwrap() + 6;
    insta::assert_snapshot!(
        "html_forest_svg",
        page[forest_start..forest_end].replace("><", ">\n<")
    );
    assert_eq!(
        page,
        html::render_run(&report, &series, &environments("box")),
        "rendering is deterministic (jitter included)"
    );
}

#[test]
fn everything_quoted_is_escaped() {
    let text = "name = \"x & <b>y</b>\"\ncommand = [\"true\", \"{level}\"]\n[factors]\nlevel = [\"plain\", \"<script>alert(1)</script>\"]\n";
    let experiment = Experiment::parse(text, "x.toml").unwrap();
    let mut samples = samples_for(&experiment, &[1.0, 1.1], 8);
    samples[3].failure = Some(Failure {
        reason: "exit status 1 \"quoted\" 'single'".to_string(),
        output_tail: "</pre><script>alert(2)</script>\u{1b}[31mred\u{0}\n".to_string(),
    });
    samples[3].metrics.clear();
    let report = RunReport::build(
        info("x & <b>y</b>", 16),
        &experiment,
        &samples,
        &Environment::default(),
        &RunReportOptions::default(),
    )
    .unwrap();
    let series = html::cell_series(&experiment, &samples, &report.metric.name);
    let page = html::render_run(
        &report,
        &series,
        &environments("<img src=x onerror=alert(3)>"),
    );
    let lower = page.to_lowercase();
    assert!(!lower.contains("<script"), "no script element at all");
    assert!(
        !lower.contains("<img"),
        "no image element from the host name"
    );
    assert!(!lower.contains("<b>"), "the experiment name is text");
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.contains("&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;"));
    assert!(page.contains("x &amp; &lt;b&gt;y&lt;/b&gt;"));
    assert!(page.contains("&lt;img src=x onerror=alert(3)&gt;"));
    assert!(!page.contains('\u{1b}') && !page.contains('\u{0}'));
    assert!(
        page.contains("\u{241b}[31mred"),
        "escape shown as a control picture"
    );
}

#[test]
fn pivot_page_has_the_ratio_row_and_a_forest_plot() {
    let text = "name = \"kill\"\ncommand = [\"true\"]\n[factors]\nkernel = [\"7.1\", \"7.2\"]\nselinux = [\"enforcing\", \"disabled\"]\n";
    let experiment = Experiment::parse(text, "kill.toml").unwrap();
    let samples = samples_for(&experiment, &[100.0, 120.0, 95.0, 140.0], 15);
    let pivot = PivotReport::build(
        info("kill", 60),
        &experiment,
        &samples,
        &PivotOptions {
            rows: Some("selinux".to_string()),
            cols: Some("kernel".to_string()),
            ratio: Some(verdict_report::pivot::RatioSpec {
                factor: "selinux".to_string(),
                numerator: "disabled".to_string(),
                denominator: "enforcing".to_string(),
            }),
            alpha: 0.05,
            adjust: true,
            bootstrap_seed: 1,
            ..PivotOptions::default()
        },
    )
    .unwrap();
    let series = html::cell_series(&experiment, &samples, &pivot.metric);
    let page = html::render_pivot(&pivot, &series, &environments("box"));
    assert!(page.contains("<tr class=\"ratio\"><td class=\"text\">disabled/enforcing</td>"));
    assert!(
        page.contains("pts ["),
        "the difference of ratios with its interval"
    );
    // Forest plot rows: two deltas and two ratios.
    assert_eq!(page.matches("<g class=\"row ").count(), 4);
    insta::assert_snapshot!("html_pivot_outline", outline(&page));
}

#[test]
fn a_hundred_thousand_samples_stay_light() {
    let experiment = Experiment::parse(GZIP, "gzip.toml").unwrap();
    let mut samples = samples_for(&experiment, &[0.120, 0.130], 50_000);
    // A few wild values must survive the subsample.
    for index in [10, 40_001, 99_998] {
        samples[index]
            .metrics
            .insert("wall".to_string(), 9.0 + index as f64 * 1e-6);
    }
    let report = RunReport::build(
        info("big", 100_000),
        &experiment,
        &samples,
        &Environment::default(),
        &RunReportOptions::default(),
    )
    .unwrap();
    let series = html::cell_series(&experiment, &samples, &report.metric.name);
    let page = html::render_run(&report, &series, &environments("box"));
    assert!(
        page.len() < 2_000_000,
        "a 10^5-sample page is {} bytes",
        page.len()
    );
    assert!(page.contains("Some cells have more than 1000 values"));
    assert!(page.contains("subsample shown"));
    let outliers = page.matches("class=\"dot outlier\"").count();
    assert!(
        outliers >= 6,
        "the three wild values appear in the strip and the run-order plot ({outliers})"
    );
}

#[test]
fn bisect_log_page_structure() {
    let change = |estimate: f64| html::Change {
        estimate,
        low: Some(estimate - 0.05),
        high: Some(estimate + 0.05),
    };
    let commit =
        |index: usize, class: &str, versus_good: Option<f64>, culprit: bool| html::BisectCommit {
            commit: format!("{index:040x}"),
            subject: format!("change <i>{index}</i>"),
            runs: 10,
            median: Some(if class == "bad" { 0.04 } else { 0.01 }),
            ci_low: Some(0.009),
            ci_high: Some(0.011),
            class: Some(class.to_string()),
            versus_good: versus_good.map(change),
            versus_bad: versus_good.map(|delta| change(delta - 3.0)),
            reason: None,
            culprit,
        };
    let log = html::BisectLog {
        facts: vec![("repository".to_string(), "/tmp/<repo>".to_string())],
        commits: vec![
            commit(0, "good", None, false),
            commit(2, "good", Some(0.01), false),
            commit(3, "bad", Some(3.0), true),
            commit(4, "bad", None, false),
        ],
        result: Some("first bad commit: 3".to_string()),
    };
    let page = html::render_bisect_log(&log);
    assert!(!page.contains("<i>") && page.contains("change &lt;i&gt;3&lt;/i&gt;"));
    assert!(page.contains("/tmp/&lt;repo&gt;"));
    assert_eq!(page.matches("<tr class=\"differs\">").count(), 1);
    assert_eq!(
        page.matches("<g class=\"row ").count(),
        2,
        "measured commits only"
    );
    assert!(page.contains(">bad (culprit)</text>"));
    insta::assert_snapshot!("html_bisect_outline", outline(&page));
}

#[test]
fn doctor_page_structure() {
    let doctor = html::DoctorPage {
        summary: "noise: probe CV 3.1%".to_string(),
        facts: vec![("tool".to_string(), "verdict".to_string())],
        environment: environments("box"),
        checks: vec![
            html::DoctorCheck {
                id: "smt".to_string(),
                status: "warn".to_string(),
                finding: "SMT on".to_string(),
                evidence: vec!["/sys/devices/system/cpu/smt/control = on <&>".to_string()],
                fix: Some("echo off > /sys/devices/system/cpu/smt/control".to_string()),
            },
            html::DoctorCheck {
                id: "steal".to_string(),
                status: "ok".to_string(),
                finding: "no steal".to_string(),
                evidence: Vec::new(),
                fix: None,
            },
        ],
        recommendation: vec![("runs per cell".to_string(), "12".to_string())],
        probe: "fixed work".to_string(),
        probe_seconds: (0..40)
            .map(|index| 0.01 + f64::from(index % 7) * 1e-4)
            .collect(),
    };
    let page = html::render_doctor(&doctor);
    assert!(page.contains("on &lt;&amp;&gt;"));
    assert!(page.contains("echo off &gt; /sys"));
    assert!(page.contains("<span class=\"verdict regression\">warn</span>"));
    assert!(page.contains("<span class=\"verdict improvement\">ok</span>"));
    insta::assert_snapshot!("html_doctor_outline", outline(&page));
}
