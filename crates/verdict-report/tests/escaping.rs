//! Every format the report crate renders escapes what it quotes: a level
//! named `a\nb\x1b[31mc|d,"e` (a newline, a terminal escape, a pipe, a
//! comma, a double quote) reaches no output raw, and every table keeps its
//! shape (same lines, same columns) as with a harmless name. Run report,
//! pivot and comparisons; text, markdown, CSV and JSON. Pure: renders
//! strings from generated samples.

use std::collections::BTreeMap;
use verdict_model::{Environment, Experiment, Failure, Sample};
use verdict_report::Format;
use verdict_report::escape::has_raw_control;
use verdict_report::pivot::{PivotOptions, PivotReport};
use verdict_report::run::{RunInfo, RunReport, RunReportOptions};

const NASTY: &str = "a\nb\u{1b}[31mc|d,\"e";

fn experiment(level: &str) -> Experiment {
    let text = format!(
        "name = \"escape\"\ncommand = [\"true\"]\n[factors]\nkernel = [\"1\", \"2\"]\nworkload = [\"plain\", {}]\n",
        serde_json::to_string(level).unwrap()
    );
    Experiment::parse(&text, "escape.toml").unwrap()
}

fn samples(experiment: &Experiment) -> Vec<Sample> {
    let cells = experiment.cells().len();
    let mut samples = Vec::new();
    for block in 0..8u32 {
        for cell in 0..cells {
            let value = 0.1 * (1.0 + cell as f64) * (1.0 + 0.01 * f64::from(block % 5));
            let mut metrics = BTreeMap::new();
            metrics.insert("wall".to_string(), value);
            samples.push(Sample {
                cell,
                block,
                sequence: block * cells as u32 + cell as u32,
                warmup: false,
                started_at_ms: 0,
                wall_seconds: value,
                user_seconds: value / 2.0,
                sys_seconds: value / 4.0,
                max_rss_kib: 2048,
                exit_code: Some(0),
                signal: None,
                timed_out: false,
                metrics,
                failure: None,
                missing: BTreeMap::new(),
                leftovers: Vec::new(),
            });
        }
    }
    samples[3].failure = Some(Failure {
        reason: format!("exit status 1 in {NASTY}"),
        output_tail: format!("{NASTY}\n\u{1b}]0;title\u{7}"),
    });
    samples
}

fn info(name: &str) -> RunInfo {
    RunInfo {
        id: 1,
        name: name.to_string(),
        status: "complete".to_string(),
        started: "2026-12-01 12:00 UTC".to_string(),
        finished: None,
        seed: 1,
        host: "box".to_string(),
        planned: 32,
        recorded: 32,
        tool_version: "verdict 0.1.0".to_string(),
        order: "interleaved (randomized blocks)".to_string(),
        procedure: None,
        noise: None,
        decisions: Vec::new(),
    }
}

/// Every rendering of one report, for a level (and run name, environment
/// value) equal to `quoted`.
fn renderings(quoted: &str) -> Vec<(String, Format, String)> {
    let experiment = experiment(quoted);
    let samples = samples(&experiment);
    let environment = Environment {
        hostname: Some(quoted.to_string()),
        kernel_cmdline: Some(format!("root=/dev/sda {quoted}")),
        ..Environment::default()
    };
    let report = RunReport::build(
        info(quoted),
        &experiment,
        &samples,
        &environment,
        &RunReportOptions::default(),
    )
    .unwrap();
    let detailed = RunReport::build(
        info(quoted),
        &experiment,
        &samples,
        &environment,
        &RunReportOptions {
            metric: Some("wall".to_string()),
            ..RunReportOptions::default()
        },
    )
    .unwrap();
    let pivot = PivotReport::build(
        info(quoted),
        &experiment,
        &samples,
        &PivotOptions {
            rows: Some("workload".to_string()),
            cols: Some("kernel".to_string()),
            alpha: 0.05,
            adjust: true,
            ..PivotOptions::default()
        },
    )
    .unwrap();
    let comparisons = report.comparisons.clone().unwrap();
    let mut all = Vec::new();
    for format in [
        Format::Text,
        Format::Markdown,
        Format::Csv,
        Format::Json,
        Format::Email,
    ] {
        for (name, text) in [
            ("report", verdict_report::run::render(&report, format)),
            ("detailed", verdict_report::run::render(&detailed, format)),
            ("pivot", verdict_report::pivot::render(&pivot, format)),
            (
                "compare",
                verdict_report::compare::render(&comparisons, format),
            ),
        ] {
            all.push((name.to_string(), format, text));
        }
    }
    all
}

/// Unescaped `|` in a markdown line.
fn markdown_pipes(line: &str) -> usize {
    let mut count = 0;
    let mut characters = line.chars();
    while let Some(character) = characters.next() {
        match character {
            '\\' => {
                characters.next();
            }
            '|' => count += 1,
            _ => {}
        }
    }
    count
}

/// RFC 4180 records (fields per record), with LF line ends.
fn csv_records(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut characters = text.chars().peekable();
    while let Some(character) = characters.next() {
        match (quoted, character) {
            (true, '"') if characters.peek() == Some(&'"') => {
                characters.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, other) => field.push(other),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, other) => field.push(other),
        }
    }
    assert!(!quoted, "unterminated quoted field");
    records
}

#[test]
fn a_hostile_level_reaches_no_format_raw_and_breaks_no_table() {
    let nasty = renderings(NASTY);
    let benign = renderings("plain2");
    for ((what, format, text), (_, _, reference)) in nasty.iter().zip(&benign) {
        assert!(
            !has_raw_control(text),
            "{what} {format:?} has a raw control character:\n{text:?}"
        );
        // The email form wraps a longer name onto more lines.
        if *format != Format::Email {
            assert_eq!(
                text.lines().count(),
                reference.lines().count(),
                "{what} {format:?} changed shape:\n{text}\n--- with a harmless name ---\n{reference}"
            );
        }
        match format {
            Format::Email => {
                assert!(
                    text.contains("a\\nb\\x1b[31mc|d,\"e"),
                    "{what}: the name is shown, spelled visibly:\n{text}"
                );
                for line in text.lines() {
                    assert!(
                        verdict_report::table::display_width(line) <= 80,
                        "{what}: a line over 80 columns: {line}"
                    );
                }
            }
            Format::Text => {
                assert!(
                    text.contains("a\\nb\\x1b[31mc|d,\"e"),
                    "{what}: the name is shown, spelled visibly:\n{text}"
                );
                // Tables: the lines of a table block are equally wide
                // unless their last column is left-aligned text.
                for (line, reference_line) in text.lines().zip(reference.lines()) {
                    if reference_line.contains("plain2") {
                        assert!(line.contains("\\x1b"), "{line}");
                    }
                }
            }
            Format::Markdown => {
                for (line, reference_line) in text.lines().zip(reference.lines()) {
                    if reference_line.starts_with('|') {
                        assert_eq!(
                            markdown_pipes(line),
                            markdown_pipes(reference_line),
                            "{what}: markdown row lost its shape: {line}"
                        );
                    }
                }
            }
            Format::Csv => {
                let records = csv_records(text);
                let columns = records[0].len();
                assert!(
                    records.iter().all(|record| record.len() == columns),
                    "{what}: ragged CSV:\n{text}"
                );
                assert_eq!(records.len(), csv_records(reference).len());
                if what != "compare" {
                    assert!(
                        records.iter().any(|record| record
                            .iter()
                            .any(|field| field == "a\\nb\\x1b[31mc|d,\"e")),
                        "{what}: the level round-trips as one escaped field:\n{text}"
                    );
                }
            }
            Format::Json => {
                let document: serde_json::Value = serde_json::from_str(text).unwrap();
                assert!(
                    text.contains("\\u001b"),
                    "{what}: JSON escapes the control character"
                );
                let _ = document;
            }
        }
    }
}

#[test]
fn the_text_report_tables_stay_aligned_with_a_hostile_level() {
    let nasty = renderings(NASTY);
    let (_, _, text) = &nasty[0];
    // The side-by-side table: from its header to the blank line after it.
    let table: Vec<&str> = text
        .lines()
        .skip_while(|line| !line.starts_with("cell "))
        .take_while(|line| !line.is_empty())
        .collect();
    assert_eq!(table.len(), 5, "header and four cells:\n{text}");
    let widths: Vec<usize> = table.iter().map(|line| line.chars().count()).collect();
    assert!(
        widths.iter().all(|width| *width == widths[0]),
        "{widths:?}\n{}",
        table.join("\n")
    );
}
