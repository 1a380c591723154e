//! `verdict export`'s output: every raw sample of a stored run (its cell
//! with every factor's level, block, order, start time, wall/user/sys/max
//! RSS, exit status, failure, every metric) and the run's environment, as
//! RFC 4180 CSV or the `verdict.export/v1` JSON document, from
//! verdict-analysis's `RunExport`. Renders only: CSV spells control
//! characters visibly (`\n`, `\x1b`) as every verdict CSV does; JSON keeps
//! them exactly.

use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use verdict_model::Environment;

pub use verdict_analysis::export::{ExportMetric, ExportRun, RunExport};

use crate::time::format_timestamp;

/// The `verdict.export/v1` document, fields in documented order.
#[derive(Debug, Serialize)]
pub struct Document<'a> {
    schema: &'static str,
    run: &'a ExportRun,
    factors: &'a [String],
    metrics: Vec<Value>,
    environment_start: &'a Environment,
    environment_end: Option<&'a Environment>,
    samples: Vec<SampleRow<'a>>,
}

#[derive(Debug, Serialize)]
struct SampleRow<'a> {
    sequence: u32,
    iteration: usize,
    block: u32,
    cell: usize,
    levels: serde_json::Map<String, Value>,
    warmup: bool,
    failed: bool,
    started_at_ms: i64,
    started_at: String,
    wall_seconds: f64,
    user_seconds: f64,
    sys_seconds: f64,
    max_rss_kib: u64,
    exit_code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    failure_reason: Option<&'a str>,
    failure_output_tail: Option<&'a str>,
    metrics: &'a BTreeMap<String, f64>,
}

/// The `verdict.export/v1` document of `export`.
pub fn json(export: &RunExport) -> Document<'_> {
    let iterations = export.iterations();
    let samples: Vec<SampleRow> = export
        .samples
        .iter()
        .zip(&iterations)
        .map(|(sample, iteration)| {
            let levels: serde_json::Map<String, Value> = export
                .factors
                .iter()
                .filter_map(|factor| {
                    export
                        .level(sample, factor)
                        .map(|level| (factor.clone(), Value::from(level)))
                })
                .collect();
            SampleRow {
                sequence: sample.sequence,
                iteration: *iteration,
                block: sample.block,
                cell: sample.cell,
                levels,
                warmup: sample.warmup,
                failed: sample.failure.is_some(),
                started_at_ms: sample.started_at_ms,
                started_at: format_timestamp(sample.started_at_ms),
                wall_seconds: sample.wall_seconds,
                user_seconds: sample.user_seconds,
                sys_seconds: sample.sys_seconds,
                max_rss_kib: sample.max_rss_kib,
                exit_code: sample.exit_code,
                signal: sample.signal,
                timed_out: sample.timed_out,
                failure_reason: sample
                    .failure
                    .as_ref()
                    .map(|failure| failure.reason.as_str()),
                failure_output_tail: sample
                    .failure
                    .as_ref()
                    .map(|failure| failure.output_tail.as_str()),
                metrics: &sample.metrics,
            }
        })
        .collect();
    let metrics: Vec<Value> = export
        .metrics
        .iter()
        .map(|metric| {
            json!({
                "name": metric.name,
                "unit": metric.unit,
                "better": metric.better.map(|better| better.as_str()),
            })
        })
        .collect();
    Document {
        schema: "verdict.export/v1",
        run: &export.run,
        factors: &export.factors,
        metrics,
        environment_start: &export.environment_start,
        environment_end: export.environment_end.as_ref(),
        samples,
    }
}

/// One row per sample: run, order, cell, one `factor:` column per factor,
/// the sample's measurements, one `metric:` column per metric and one
/// `env:` column per field of the run's starting environment.
pub fn csv(export: &RunExport) -> String {
    let environment = environment_fields(&export.environment_start);
    let mut header: Vec<String> = ["run", "sequence", "iteration", "block", "cell"]
        .map(String::from)
        .to_vec();
    header.extend(
        export
            .factors
            .iter()
            .map(|factor| format!("factor:{factor}")),
    );
    header.extend(
        [
            "warmup",
            "failed",
            "started_at_ms",
            "started_at",
            "wall_seconds",
            "user_seconds",
            "sys_seconds",
            "max_rss_kib",
            "exit_code",
            "signal",
            "timed_out",
            "failure_reason",
            "failure_output_tail",
        ]
        .map(String::from),
    );
    header.extend(
        export
            .metrics
            .iter()
            .map(|metric| format!("metric:{}", metric.name)),
    );
    header.extend(environment.iter().map(|(key, _)| format!("env:{key}")));
    let mut output = csv_row(&header);
    let optional = |value: Option<i32>| value.map(|value| value.to_string()).unwrap_or_default();
    for (sample, iteration) in export.samples.iter().zip(export.iterations()) {
        let mut row = vec![
            export.run.id.to_string(),
            sample.sequence.to_string(),
            iteration.to_string(),
            sample.block.to_string(),
            sample.cell.to_string(),
        ];
        row.extend(
            export
                .factors
                .iter()
                .map(|factor| export.level(sample, factor).unwrap_or_default().to_string()),
        );
        row.extend([
            sample.warmup.to_string(),
            sample.failure.is_some().to_string(),
            sample.started_at_ms.to_string(),
            format_timestamp(sample.started_at_ms),
            sample.wall_seconds.to_string(),
            sample.user_seconds.to_string(),
            sample.sys_seconds.to_string(),
            sample.max_rss_kib.to_string(),
            optional(sample.exit_code),
            optional(sample.signal),
            sample.timed_out.to_string(),
            sample
                .failure
                .as_ref()
                .map(|failure| failure.reason.clone())
                .unwrap_or_default(),
            sample
                .failure
                .as_ref()
                .map(|failure| failure.output_tail.clone())
                .unwrap_or_default(),
        ]);
        row.extend(export.metrics.iter().map(|metric| {
            sample
                .metrics
                .get(&metric.name)
                .map(f64::to_string)
                .unwrap_or_default()
        }));
        row.extend(environment.iter().map(|(_, value)| value.clone()));
        output.push_str(&csv_row(&row));
    }
    output
}

/// The run's environment as (key, text) pairs for CSV columns: lists joined
/// by spaces, absent values empty.
fn environment_fields(environment: &Environment) -> Vec<(String, String)> {
    let Ok(Value::Object(fields)) = serde_json::to_value(environment) else {
        return Vec::new();
    };
    fields
        .into_iter()
        .map(|(key, value)| {
            let text = match value {
                Value::Null => String::new(),
                Value::String(text) => text,
                Value::Array(items) => items
                    .iter()
                    .map(|item| match item {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
                other => other.to_string(),
            };
            (key, text)
        })
        .collect()
}

/// One CSV record per RFC 4180: fields escaped as every CSV verdict
/// writes them (`escape::csv`: control characters spelled visibly, so a
/// record is one line), joined by commas, ended by CRLF.
fn csv_row(fields: &[String]) -> String {
    let mut row = fields
        .iter()
        .map(|field| crate::escape::csv(field))
        .collect::<Vec<_>>()
        .join(",");
    row.push_str("\r\n");
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_records_quote_and_spell_control_characters() {
        assert_eq!(
            csv_row(&[
                "1".to_string(),
                "x,y".to_string(),
                "say \"hi\"".to_string(),
                "line\nnext".to_string(),
                "\u{1b}[31mred\r".to_string(),
            ]),
            "1,\"x,y\",\"say \"\"hi\"\"\",\"line\\nnext\",\"\\x1b[31mred\\r\"\r\n"
        );
    }
}
