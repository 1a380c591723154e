//! `verdict export`'s output: every raw sample of a stored run (its cell
//! with every factor's level, the host it ran on, block, order, start time,
//! wall/user/sys/max RSS, exit status, failure, every metric) and the
//! run's environment, as RFC 4180 CSV or the `verdict.export/v1` JSON
//! document, from verdict-analysis's `RunExport`, one sample at a time
//! (`Csv`, `Json`: a header, a piece per sample, an end), so an export of
//! any size is written as it is read. Renders only: CSV spells control
//! characters visibly (`\n`, `\x1b`) as every verdict CSV does; JSON
//! keeps them exactly.

use serde_json::Value;
use std::collections::BTreeMap;
use verdict_model::Environment;

pub use verdict_analysis::export::{
    ExportDocument, ExportMetric, ExportRun, ExportSample, Iterations, RunExport,
};
use verdict_model::Sample;

use crate::time::format_timestamp;

/// `verdict.export/v1` JSON, written as it goes: `head`, then `sample`
/// for each sample in order, then `end`. The pieces make the same bytes as
/// the whole document pretty-printed at once.
#[derive(Debug)]
pub struct Json<'a> {
    export: &'a RunExport,
    samples: usize,
}

impl<'a> Json<'a> {
    pub fn new(export: &'a RunExport) -> Json<'a> {
        Json { export, samples: 0 }
    }

    /// Everything before the first sample.
    pub fn head(&self) -> String {
        let text =
            serde_json::to_string_pretty(&self.export.document(Vec::new())).unwrap_or_default();
        // `  "samples": []\n}` is where the samples go.
        text.strip_suffix("[]\n}").unwrap_or(&text).to_string()
    }

    /// One sample (its 1-based `iteration` in its cell, the `host` it ran
    /// on), with the separator before it.
    pub fn sample(&mut self, sample: &Sample, iteration: usize, host: &str) -> String {
        let text =
            serde_json::to_string_pretty(&self.row(sample, iteration, host)).unwrap_or_default();
        let mut piece = String::with_capacity(text.len() + text.len() / 8 + 8);
        piece.push_str(if self.samples == 0 { "[\n" } else { ",\n" });
        for (index, line) in text.lines().enumerate() {
            if index > 0 {
                piece.push('\n');
            }
            piece.push_str("    ");
            piece.push_str(line);
        }
        self.samples += 1;
        piece
    }

    fn row<'r>(&self, sample: &'r Sample, iteration: usize, host: &'r str) -> ExportSample<'r> {
        let export = self.export;
        let levels: BTreeMap<String, String> = export
            .factors
            .iter()
            .filter_map(|factor| {
                export
                    .level(sample, factor)
                    .map(|level| (factor.clone(), level.to_string()))
            })
            .collect();
        ExportSample {
            sequence: sample.sequence,
            iteration,
            block: sample.block,
            cell: sample.cell,
            host,
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
    }

    /// Everything after the last sample.
    pub fn end(&self) -> &'static str {
        if self.samples == 0 {
            "[]\n}\n"
        } else {
            "\n  ]\n}\n"
        }
    }
}

/// RFC 4180 CSV, written as it goes: `header`, then `row` for each sample
/// in order. One row per sample: run, order, cell, the host it ran on, one
/// `factor:` column per factor, the sample's measurements, one `metric:`
/// column per metric and one `env:` column per field of the run's
/// starting environment.
#[derive(Debug)]
pub struct Csv<'a> {
    export: &'a RunExport,
    environment: Vec<(String, String)>,
}

impl<'a> Csv<'a> {
    pub fn new(export: &'a RunExport) -> Csv<'a> {
        Csv {
            export,
            environment: environment_fields(&export.environment_start),
        }
    }

    pub fn header(&self) -> String {
        let export = self.export;
        let mut header: Vec<String> = ["run", "sequence", "iteration", "block", "cell", "host"]
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
        header.extend(self.environment.iter().map(|(key, _)| format!("env:{key}")));
        csv_row(&header)
    }

    /// One sample's record (its 1-based `iteration` in its cell, the
    /// `host` it ran on).
    pub fn row(&self, sample: &Sample, iteration: usize, host: &str) -> String {
        let export = self.export;
        let optional =
            |value: Option<i32>| value.map(|value| value.to_string()).unwrap_or_default();
        let mut row = vec![
            export.run.id.to_string(),
            sample.sequence.to_string(),
            iteration.to_string(),
            sample.block.to_string(),
            sample.cell.to_string(),
            host.to_string(),
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
        row.extend(self.environment.iter().map(|(_, value)| value.clone()));
        csv_row(&row)
    }
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

    fn export() -> RunExport {
        RunExport::new(
            ExportRun {
                id: 1,
                name: "e".into(),
                kind: "run".into(),
                status: "complete".into(),
                host: "h".into(),
                seed: 7,
                tool_version: "verdict 0".into(),
                planned: 2,
                started_at_ms: 0,
                finished_at_ms: Some(5),
                command_line: vec!["verdict".into()],
                experiment_sha256: "00".into(),
                experiment_text: "name = \"e\"".into(),
            },
            None,
            [(0, vec![("mode".to_string(), "a".to_string())])].into(),
            vec!["ops".to_string()],
            Environment::default(),
            None,
        )
    }

    fn sample(sequence: u32) -> Sample {
        let mut sample: Sample = serde_json::from_str(
            r#"{"cell": 0, "block": 0, "sequence": 0, "warmup": false, "started_at_ms": 0,
                "wall_seconds": 0.5, "user_seconds": 0.25, "sys_seconds": 0.0,
                "max_rss_kib": 64, "exit_code": 0, "signal": null, "timed_out": false,
                "metrics": {"ops": 7.0}, "failure": null}"#,
        )
        .unwrap();
        sample.sequence = sequence;
        sample
    }

    /// The pieces make exactly the document pretty-printed whole, with no
    /// sample and with two.
    #[test]
    fn streamed_json_is_the_whole_document_pretty_printed() {
        let export = export();
        for count in [0, 2] {
            let mut json = Json::new(&export);
            let mut text = json.head();
            let mut iterations = Iterations::default();
            let samples: Vec<Sample> = (0..count).map(sample).collect();
            for sample in &samples {
                text.push_str(&json.sample(sample, iterations.next(sample.cell), "h"));
            }
            text.push_str(json.end());
            let mut iterations = Iterations::default();
            let rows = samples
                .iter()
                .map(|sample| json.row(sample, iterations.next(sample.cell), "h"))
                .collect();
            let whole = serde_json::to_string_pretty(&export.document(rows)).unwrap() + "\n";
            assert_eq!(text, whole, "{count} samples");
            let value: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(value["samples"].as_array().unwrap().len(), count as usize);
            if count > 0 {
                assert_eq!(value["samples"][1]["iteration"], 2);
                assert_eq!(value["samples"][1]["host"], "h");
            }
        }
    }

    #[test]
    fn a_csv_row_has_a_field_per_header_column() {
        let export = export();
        let csv = Csv::new(&export);
        let header = csv.header();
        let row = csv.row(&sample(0), 1, "lpar1");
        assert!(header.starts_with("run,sequence,iteration,block,cell,host,factor:mode,"));
        assert!(row.starts_with("1,0,1,0,0,lpar1,a,"));
        assert_eq!(header.matches(',').count(), row.matches(',').count());
    }

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
