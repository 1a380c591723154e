//! Benchmark of the HTML report on a large run: 10^5 samples (two cells of
//! 50,000, a few wild values), rendered ROUNDS times. Prints the page size
//! and the median time to render the HTML page, beside the time to build
//! the report model (statistics) and to render its JSON from the same model
//! in the same process, so the figure is a ratio against peers measured in
//! the same run. Numbers go to docs/performance.md.
//!
//! `cargo run --release -p verdict-report --example html_large [ROUNDS] [OUT.html]`
//!
//! Must not: assert on time (it reports; docs/performance.md keeps the figure).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use verdict_model::{Environment, Experiment, Sample};
use verdict_report::Format;
use verdict_report::html::{self, EnvironmentColumn};
use verdict_report::run::{RunInfo, RunReport, RunReportOptions, environment_lines};

fn samples(per_cell: usize) -> Vec<Sample> {
    let mut samples = Vec::with_capacity(per_cell * 2);
    let mut sequence = 0u32;
    for block in 0..per_cell {
        for (cell, median) in [0.120, 0.126].iter().enumerate() {
            // Deterministic spread: a scrambled triangle wave, a slow drift
            // and one wild value in ten thousand.
            let wave = f64::from(sequence.wrapping_mul(2_654_435_761) % 1001) / 500.0 - 1.0;
            let mut value = median * (1.0 + 0.05 * wave + 0.02 * block as f64 / per_cell as f64);
            if sequence % 10_007 == 3 {
                value *= 4.0;
            }
            let mut metrics = BTreeMap::new();
            metrics.insert("wall".to_string(), value);
            samples.push(Sample {
                cell,
                block: block as u32,
                sequence,
                warmup: false,
                started_at_ms: 0,
                wall_seconds: value,
                user_seconds: 0.0,
                sys_seconds: 0.0,
                max_rss_kib: 0,
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

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let mut arguments = std::env::args().skip(1);
    let rounds: usize = arguments
        .next()
        .and_then(|text| text.parse().ok())
        .unwrap_or(9);
    let output = arguments.next();
    let experiment = Experiment::parse(
        "name = \"large\"\ncommand = [\"gzip\", \"-{level}\"]\n[factors]\nlevel = [\"1\", \"9\"]\n",
        "large.toml",
    )
    .expect("the benchmark's experiment parses");
    let samples = samples(50_000);
    let info = RunInfo {
        id: 1,
        name: "large".to_string(),
        status: "complete".to_string(),
        started: "2026-12-01 12:00 UTC".to_string(),
        finished: None,
        seed: 1,
        host: "bench".to_string(),
        planned: samples.len() as u64,
        recorded: samples.len(),
        tool_version: "verdict".to_string(),
        order: "interleaved (randomized blocks)".to_string(),
        procedure: None,
        noise: None,
        decisions: Vec::new(),
    };
    let environment = Environment {
        hostname: Some("bench".to_string()),
        ..Environment::default()
    };
    let columns = vec![EnvironmentColumn {
        title: "run 1 start".to_string(),
        lines: environment_lines(&environment),
    }];
    let (mut build, mut json, mut page) = (Vec::new(), Vec::new(), Vec::new());
    let mut size = (0, 0);
    let mut last = String::new();
    for _ in 0..rounds {
        let start = Instant::now();
        let report = RunReport::build(
            info.clone(),
            &experiment,
            &samples,
            &environment,
            &RunReportOptions::default(),
        )
        .expect("the report builds");
        build.push(start.elapsed());
        let start = Instant::now();
        let text = verdict_report::run::render(&report, Format::Json);
        json.push(start.elapsed());
        let start = Instant::now();
        let series = html::cell_series(&experiment, &samples, &report.metric.name);
        let rendered = html::render_run(&report, &series, &columns);
        page.push(start.elapsed());
        size = (rendered.len(), text.len());
        last = rendered;
    }
    let (build, json, page) = (median(build), median(json), median(page));
    println!(
        "samples {}  rounds {rounds}\nhtml page: {} bytes ({:.2} MB), median render {:.1} ms (series + page)\nreport model (statistics): median {:.1} ms\njson of the same model: {} bytes, median {:.2} ms\nratio html render / model build: {:.3}",
        samples.len(),
        size.0,
        size.0 as f64 / 1e6,
        page.as_secs_f64() * 1e3,
        build.as_secs_f64() * 1e3,
        size.1,
        json.as_secs_f64() * 1e3,
        page.as_secs_f64() / build.as_secs_f64()
    );
    if let Some(path) = output {
        std::fs::write(&path, last).expect("the page is written");
        println!("written to {path}");
    }
}
