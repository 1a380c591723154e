//! One iteration's record: from a finished process (an exec `Outcome`) and
//! the experiment's metric declarations to a `Sample`. A non-success exit, a
//! timeout or a metric that cannot be read makes a failed sample with the
//! reason and the tail of the output; it is recorded and shown, never data.
//! A metric the tool reports it could not measure (perf's `<not
//! supported>`) is a missing value of that metric only, recorded with the
//! sample; the iteration and its other metrics count. Processes the
//! workload left behind are recorded with the sample.
//! Reads a metric file (stress-ng --yaml) when a metric names one, on the
//! target the iteration ran on (through its `Target`); starts no process.

use std::collections::BTreeMap;
use std::path::Path;
use verdict_exec::{Outcome, Status, Target};
use verdict_model::experiment::substitute_placeholders;
use verdict_model::{Builtin, Cell, Experiment, Failure, MetricSource, Sample, Stream};

/// Bytes of output kept with a failed iteration.
pub const FAILURE_TAIL_BYTES: usize = 2048;

/// Where an iteration sits in the run.
#[derive(Debug, Clone, Copy)]
pub struct Position {
    pub cell: usize,
    pub block: u32,
    pub sequence: u32,
    pub warmup: bool,
    pub started_at_ms: i64,
}

/// Build the sample for a finished iteration.
pub fn record(
    experiment: &Experiment,
    cell: &Cell,
    position: Position,
    outcome: &Outcome,
    workdir: Option<&Path>,
    target: &dyn Target,
) -> Sample {
    let mut metrics = BTreeMap::new();
    let mut missing = BTreeMap::new();
    let mut failure = None;
    let success = match outcome.status {
        Status::Exited(code) => experiment.success_codes.contains(&code),
        Status::Signaled(_) | Status::TimedOut => false,
    };
    if !success {
        let expected = if experiment.success_codes == [0] {
            String::new()
        } else {
            format!(
                " (success is {})",
                experiment
                    .success_codes
                    .iter()
                    .map(i32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let status = match (outcome.status, experiment.sampling.timeout) {
            (Status::TimedOut, Some(limit)) => format!(
                "timed out after {}s (the whole process group was killed)",
                limit.as_secs_f64()
            ),
            (status, _) => status.to_string(),
        };
        failure = Some(Failure {
            reason: format!("{status}{expected}"),
            output_tail: outcome.output_tail(FAILURE_TAIL_BYTES),
        });
    }
    for metric in &experiment.metrics {
        let value = match &metric.source {
            MetricSource::Builtin(builtin) => Ok(builtin_value(*builtin, outcome)),
            MetricSource::Parsed(extractor) if success => match &metric.stream {
                Stream::File(template) => {
                    let name = substitute_placeholders(template, &cell.levels);
                    let path = match workdir {
                        Some(directory) => directory.join(&name),
                        None => Path::new(&name).to_path_buf(),
                    };
                    match target.read_file(&path) {
                        Ok(bytes) => extractor
                            .extract_text(&String::from_utf8_lossy(&bytes))
                            .map_err(Unread::from),
                        Err(error) => Err(Unread::Broken(format!(
                            "read metric file {}: {error}",
                            path.display()
                        ))),
                    }
                }
                stream => verdict_parse::extract_from(
                    extractor,
                    stream.clone(),
                    &outcome.stdout,
                    &outcome.stderr,
                )
                .map_err(Unread::from),
            },
            MetricSource::Parsed(_) => continue,
        };
        match value {
            Ok(value) if value.is_finite() => {
                metrics.insert(metric.name.clone(), value);
            }
            Err(Unread::Missing(message)) => {
                missing.insert(metric.name.clone(), message);
            }
            Ok(value) => {
                failure.get_or_insert_with(|| Failure {
                    reason: format!("metric `{}` is {value}, not a finite number", metric.name),
                    output_tail: outcome.output_tail(FAILURE_TAIL_BYTES),
                });
            }
            Err(Unread::Broken(message)) => {
                failure.get_or_insert_with(|| Failure {
                    reason: format!("metric `{}`: {message}", metric.name),
                    output_tail: outcome.output_tail(FAILURE_TAIL_BYTES),
                });
            }
        }
    }
    let (exit_code, signal) = match outcome.status {
        Status::Exited(code) => (Some(code), None),
        Status::Signaled(signal) => (None, Some(signal)),
        Status::TimedOut => (None, None),
    };
    Sample {
        cell: position.cell,
        block: position.block,
        sequence: position.sequence,
        warmup: position.warmup,
        started_at_ms: position.started_at_ms,
        wall_seconds: outcome.wall.as_secs_f64(),
        user_seconds: outcome.user.as_secs_f64(),
        sys_seconds: outcome.sys.as_secs_f64(),
        max_rss_kib: outcome.max_rss_kib,
        exit_code,
        signal,
        timed_out: matches!(outcome.status, Status::TimedOut),
        metrics,
        // A failed iteration is no data at all: nothing is "missing" from it.
        missing: if failure.is_some() {
            BTreeMap::new()
        } else {
            missing
        },
        failure,
        leftovers: outcome.leftovers.clone(),
    }
}

/// Why a metric has no value in an iteration.
enum Unread {
    /// The tool ran and said it could not measure it (perf's `<not
    /// supported>`): a missing value of that metric; the iteration counts.
    Missing(String),
    /// The output is not what the experiment expects: the iteration fails.
    Broken(String),
}

impl From<verdict_parse::ParseError> for Unread {
    fn from(error: verdict_parse::ParseError) -> Self {
        if error.is_missing_value() {
            Unread::Missing(error.to_string())
        } else {
            Unread::Broken(error.to_string())
        }
    }
}

fn builtin_value(builtin: Builtin, outcome: &Outcome) -> f64 {
    match builtin {
        Builtin::Wall => outcome.wall.as_secs_f64(),
        Builtin::User => outcome.user.as_secs_f64(),
        Builtin::Sys => outcome.sys.as_secs_f64(),
        Builtin::MaxRss => outcome.max_rss_kib as f64,
    }
}

/// The failed sample of an iteration whose connection to its target was
/// lost: no measurement, reason "connection lost".
pub fn connection_lost(position: Position, host: &str, detail: &str) -> Sample {
    Sample {
        cell: position.cell,
        block: position.block,
        sequence: position.sequence,
        warmup: position.warmup,
        started_at_ms: position.started_at_ms,
        wall_seconds: 0.0,
        user_seconds: 0.0,
        sys_seconds: 0.0,
        max_rss_kib: 0,
        exit_code: None,
        signal: None,
        timed_out: false,
        metrics: BTreeMap::new(),
        failure: Some(Failure {
            reason: "connection lost".to_string(),
            output_tail: if detail.is_empty() {
                format!("the connection to {host} went away during the iteration")
            } else {
                format!("the connection to {host} went away during the iteration: {detail}")
            },
        }),
        missing: BTreeMap::new(),
        leftovers: Vec::new(),
    }
}
