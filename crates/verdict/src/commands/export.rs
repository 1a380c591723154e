//! `verdict export [RUN] [--format csv|json] [-o FILE]`: every raw sample of
//! a stored run (its cell with every factor's level, block, order, start
//! time, wall/user/sys/max RSS, exit status, failure, every metric) and the
//! run's environment, as RFC 4180 CSV or `verdict.export/v1` JSON, so
//! nobody needs sqlite3 to get at the data. Reads through the read-only
//! store; must not compute statistics or change what it exports (CSV only
//! spells control characters visibly, `\n` or `\x1b`, as every verdict CSV
//! does; JSON keeps them exactly).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::Serialize;
use serde_json::{Value, json};
use verdict_model::{Environment, Experiment, RunId, Sample};
use verdict_store::{RunRecord, Store};

use crate::common::DbArgs;
use crate::error::CliError;
use verdict_report::time::format_timestamp;

/// `--format` of `export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ExportFormat {
    Csv,
    Json,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ExportArgs {
    /// Run id (default: the latest run).
    pub(crate) run: Option<i64>,
    /// csv (one row per sample) or json (`verdict.export/v1`).
    #[arg(long, value_enum, default_value = "csv")]
    pub(crate) format: ExportFormat,
    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) db: DbArgs,
}

pub(crate) fn run(args: &ExportArgs) -> Result<ExitCode, CliError> {
    let store = args.db.open_read_only()?;
    let run = args.db.run_or_latest(&store, args.run)?;
    let export = Export::load(&store, run)?;
    let text = if args.format == ExportFormat::Json {
        serde_json::to_string_pretty(&export.json()).map_err(CliError::internal)? + "\n"
    } else {
        export.csv()
    };
    match &args.output {
        Some(path) => write_output(path, &args.db.db, &text)?,
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the export to `path` through a temporary file beside it renamed
/// into place, so a failed write leaves an existing file as it was; refuses
/// the database itself (and its `-wal`/`-shm`).
fn write_output(path: &Path, database: &Path, text: &str) -> Result<(), CliError> {
    let same = |candidate: &Path| match (
        std::fs::canonicalize(path),
        std::fs::canonicalize(candidate),
    ) {
        (Ok(output), Ok(existing)) => output == existing,
        _ => false,
    };
    let mut sidecars = Vec::new();
    for suffix in ["-wal", "-shm"] {
        let mut name = database.as_os_str().to_owned();
        name.push(suffix);
        sidecars.push(PathBuf::from(name));
    }
    if same(database) || sidecars.iter().any(|sidecar| same(sidecar)) {
        return Err(CliError::input(format!(
            "-o {}: that is the database (or its log); choose another file",
            path.display()
        )));
    }
    let error = |error: std::io::Error| {
        CliError::input(format!("write the export to {}: {error}", path.display()))
    };
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".tmp-{}", std::process::id()));
    let temporary = PathBuf::from(temporary);
    std::fs::write(&temporary, text)
        .and_then(|()| std::fs::rename(&temporary, path))
        .map_err(|failure| {
            let _ = std::fs::remove_file(&temporary);
            error(failure)
        })
}

/// The `verdict.export/v1` document, fields in documented order.
#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    run: RunHeader<'a>,
    factors: &'a [String],
    metrics: Vec<Value>,
    environment_start: &'a Environment,
    environment_end: Option<&'a Environment>,
    samples: Vec<SampleRow<'a>>,
}

#[derive(Serialize)]
struct RunHeader<'a> {
    id: i64,
    name: &'a str,
    kind: &'a str,
    status: &'a str,
    host: &'a str,
    seed: u64,
    tool_version: &'a str,
    planned: u64,
    started_at_ms: i64,
    finished_at_ms: Option<i64>,
    command_line: &'a [String],
    experiment_sha256: &'a str,
    experiment_text: &'a str,
}

#[derive(Serialize)]
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

/// One run with everything the export shows.
struct Export {
    record: RunRecord,
    experiment: Option<Experiment>,
    /// Factor names in experiment order (from the stored cells when the
    /// experiment does not load).
    factors: Vec<String>,
    cells: BTreeMap<usize, Vec<(String, String)>>,
    samples: Vec<Sample>,
    /// Every metric name any sample has, sorted.
    metrics: Vec<String>,
}

impl Export {
    fn load(store: &dyn Store, run: RunId) -> Result<Export, CliError> {
        let record = store.run(run).map_err(CliError::input)?;
        let experiment: Option<Experiment> = serde_json::from_str(&record.experiment_json).ok();
        let cells: BTreeMap<usize, Vec<(String, String)>> = store
            .cells(run)
            .map_err(CliError::internal)?
            .into_iter()
            .map(|(index, cell)| (index, cell.levels))
            .collect();
        let samples = store.samples(run).map_err(CliError::internal)?;
        let mut factors: Vec<String> = match &experiment {
            Some(experiment) => experiment
                .factors
                .iter()
                .map(|factor| factor.name.clone())
                .collect(),
            None => Vec::new(),
        };
        for levels in cells.values() {
            for (factor, _) in levels {
                if !factors.contains(factor) {
                    factors.push(factor.clone());
                }
            }
        }
        let metrics: BTreeSet<String> = samples
            .iter()
            .flat_map(|sample| sample.metrics.keys().cloned())
            .collect();
        Ok(Export {
            record,
            experiment,
            factors,
            cells,
            samples,
            metrics: metrics.into_iter().collect(),
        })
    }

    /// Each sample's 1-based position among its cell's samples in execution
    /// order (warmups and failures included).
    fn iterations(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.samples.len()).collect();
        order.sort_by_key(|&index| self.samples[index].sequence);
        let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
        let mut iterations = vec![0; self.samples.len()];
        for index in order {
            let count = seen.entry(self.samples[index].cell).or_default();
            *count += 1;
            iterations[index] = *count;
        }
        iterations
    }

    fn level<'a>(&'a self, sample: &Sample, factor: &str) -> Option<&'a str> {
        self.cells.get(&sample.cell).and_then(|levels| {
            levels
                .iter()
                .find(|(name, _)| name == factor)
                .map(|(_, level)| level.as_str())
        })
    }

    fn json(&self) -> Document<'_> {
        let record = &self.record;
        let iterations = self.iterations();
        let samples: Vec<SampleRow> = self
            .samples
            .iter()
            .zip(&iterations)
            .map(|(sample, iteration)| {
                let levels: serde_json::Map<String, Value> = self
                    .factors
                    .iter()
                    .filter_map(|factor| {
                        self.level(sample, factor)
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
        let metrics: Vec<Value> = self
            .metrics
            .iter()
            .map(|name| {
                let declared = self.experiment.as_ref().and_then(|experiment| {
                    experiment
                        .metrics
                        .iter()
                        .find(|metric| &metric.name == name)
                });
                json!({
                    "name": name,
                    "unit": declared.map(|metric| metric.unit.clone()),
                    "better": declared.map(|metric| {
                        verdict_report::compare::better_of(metric.direction).as_str()
                    }),
                })
            })
            .collect();
        Document {
            schema: "verdict.export/v1",
            run: RunHeader {
                id: record.id.0,
                name: &record.name,
                kind: &record.kind,
                status: record.status.as_str(),
                host: &record.host,
                seed: record.seed,
                tool_version: &record.tool_version,
                planned: record.planned,
                started_at_ms: record.started_at_ms,
                finished_at_ms: record.finished_at_ms,
                command_line: &record.command_line,
                experiment_sha256: &record.experiment_sha256,
                experiment_text: &record.experiment_text,
            },
            factors: &self.factors,
            metrics,
            environment_start: &record.environment_start,
            environment_end: record.environment_end.as_ref(),
            samples,
        }
    }

    fn csv(&self) -> String {
        let environment = environment_fields(&self.record.environment_start);
        let mut header: Vec<String> = ["run", "sequence", "iteration", "block", "cell"]
            .map(String::from)
            .to_vec();
        header.extend(self.factors.iter().map(|factor| format!("factor:{factor}")));
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
        header.extend(self.metrics.iter().map(|metric| format!("metric:{metric}")));
        header.extend(environment.iter().map(|(key, _)| format!("env:{key}")));
        let mut output = csv_row(&header);
        let optional =
            |value: Option<i32>| value.map(|value| value.to_string()).unwrap_or_default();
        for (sample, iteration) in self.samples.iter().zip(self.iterations()) {
            let mut row = vec![
                self.record.id.0.to_string(),
                sample.sequence.to_string(),
                iteration.to_string(),
                sample.block.to_string(),
                sample.cell.to_string(),
            ];
            row.extend(
                self.factors
                    .iter()
                    .map(|factor| self.level(sample, factor).unwrap_or_default().to_string()),
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
            row.extend(self.metrics.iter().map(|metric| {
                sample
                    .metrics
                    .get(metric)
                    .map(f64::to_string)
                    .unwrap_or_default()
            }));
            row.extend(environment.iter().map(|(_, value)| value.clone()));
            output.push_str(&csv_row(&row));
        }
        output
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
/// writes them (`verdict_report::escape::csv`: control characters spelled
/// visibly, so a record is one line), joined by commas, ended by CRLF.
fn csv_row(fields: &[String]) -> String {
    let mut row = fields
        .iter()
        .map(|field| verdict_report::escape::csv(field))
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
