//! The one dispatch point the engine calls: an [`Extractor`] describes how to
//! read one metric, [`extract`] applies it to a finished process's output.
//! Pure: bytes in, one `f64` out. Must not choose which file to read; a caller
//! that extracts from a file (stress-ng `--yaml`) passes the file's bytes.

use serde::{Deserialize, Serialize};
use verdict_stats::verdict::Better;

use crate::error::ParseError;
use crate::json_path::{json_path_value, parse_json_path};
use crate::number::plain_numbers;
use crate::pattern::{compile_pattern, regex_value};
use crate::perf::{perf_event_value, perf_stat};
use crate::samples::go_benchmark_values;
use crate::stress_ng::{stress_ng_text, stress_ng_value, stress_ng_yaml};
use crate::time::{
    check_time_posix_field, check_time_verbose_field, time_posix_value, time_verbose_value,
};

/// How to read one metric from a run's output: the registry of metric
/// parsers. Its serde form is the experiment file's schema: a `[[metric]]`
/// table's `source` is the tag (`kind` here) and its other keys are the
/// variant's fields, so a new parser is one variant (and its file); the
/// experiment file, the defaults below and `verdict_parse::import` need
/// nothing else. Older spellings stay accepted as aliases (`time-v`,
/// `time-p`, `json`).
///
/// Deserializes from an internally tagged map, e.g. in TOML
/// `{ kind = "stress-ng", stressor = "kill", field = "bogo-ops-per-second-real-time" }`
/// or `{ kind = "regex", pattern = 'ops: (?P<value>\d+)' }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Extractor {
    /// stress-ng `--metrics-brief`/`--metrics` text. `stressor` may be left
    /// out when the run has one stressor. `field`: see
    /// [`STRESS_NG_FIELDS`](crate::STRESS_NG_FIELDS), `cpu-usage-per-instance`,
    /// `max-rss`, or a miscellaneous metric such as `kill-calls-per-sec`.
    StressNg {
        #[serde(default)]
        stressor: Option<String>,
        #[serde(default = "default_stress_ng_field")]
        field: String,
    },
    /// The `metrics:` section of a stress-ng `--yaml` file; the caller passes
    /// the file's contents as the stream. Fields as for `StressNg`, plus any
    /// other key of the YAML map.
    StressNgYaml {
        #[serde(default)]
        stressor: Option<String>,
        #[serde(default = "default_stress_ng_field")]
        field: String,
    },
    /// `perf stat` output (`-x,`, `-j` or the plain report); the counter
    /// value of `event`, exactly as perf prints it: `cycles`, `cycles:u`,
    /// `cpu_core/cycles/`. Per-CPU rows are summed; `<not supported>` and
    /// `<not counted>` are errors, never zero.
    PerfStat { event: String },
    /// GNU `time -v`, or GNU time's default format: see
    /// [`TIME_VERBOSE_FIELDS`](crate::TIME_VERBOSE_FIELDS).
    #[serde(alias = "time-v")]
    TimeVerbose { field: String },
    /// `time -p` or bash `time`: `real`, `user` or `sys`, in seconds.
    #[serde(alias = "time-p")]
    TimePosix { field: String },
    /// A regular expression; the number in group `value`, group 1, or the match.
    Regex { pattern: String },
    /// A path into a JSON document (see [`crate::json_path`] for the syntax).
    #[serde(alias = "json")]
    JsonPath { path: String },
    /// The output is exactly one number (blank lines and `#` comments aside).
    Number,
    /// Go benchmark format output of one run: the single value of `benchmark`
    /// in `unit` (`ns/op`, `B/op`...).
    GoBenchmark { benchmark: String, unit: String },
}

/// The stress-ng field read when a metric names none.
fn default_stress_ng_field() -> String {
    "bogo-ops-per-second-real-time".to_string()
}

/// Where a metric's text is read from: the stream an extractor reads by
/// default (`Extractor::default_stream`: stdout, stderr or both), and the
/// `stream`/`file` a metric declares (verdict-model's `MetricSpec::stream`,
/// stored with every run's experiment under these serde names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Stream {
    Stdout,
    Stderr,
    /// stdout, then stderr, as one text.
    Both,
    /// The extractor's usual stream (stderr for perf and `time`, both for
    /// stress-ng, stdout otherwise); if the metric is not found there,
    /// stdout and stderr together.
    Output,
    /// A file the workload writes (path relative to the working directory;
    /// placeholders substituted). Its caller reads it and hands the text
    /// to `Extractor::extract_text`: verdict-parse does no I/O.
    File(String),
}

impl Extractor {
    /// Checks everything that can be checked before any run: the regex
    /// compiles, the JSON path parses, names are not empty, fixed-format field
    /// names exist.
    pub fn validate(&self) -> Result<(), ParseError> {
        let require = |format: &'static str, what: &str, value: &str| {
            if value.trim().is_empty() {
                Err(ParseError::InvalidExtractor {
                    format,
                    message: format!("`{what}` is empty"),
                })
            } else {
                Ok(())
            }
        };
        match self {
            Extractor::StressNg { stressor, field }
            | Extractor::StressNgYaml { stressor, field } => {
                if let Some(stressor) = stressor {
                    require("stress-ng", "stressor", stressor)?;
                }
                require("stress-ng", "field", field)
            }
            Extractor::PerfStat { event } => require("perf stat", "event", event),
            Extractor::TimeVerbose { field } => check_time_verbose_field(field).map(|_| ()),
            Extractor::TimePosix { field } => check_time_posix_field(field).map(|_| ()),
            Extractor::Regex { pattern } => compile_pattern(pattern).map(|_| ()),
            Extractor::JsonPath { path } => parse_json_path(path).map(|_| ()),
            Extractor::Number => Ok(()),
            Extractor::GoBenchmark { benchmark, unit } => {
                require("Go benchmark", "benchmark", benchmark)?;
                require("Go benchmark", "unit", unit)
            }
        }
    }

    /// The stream this extractor reads in [`extract`]: stderr for perf and
    /// `time` (where they write), both for stress-ng (stderr, or stdout with
    /// `--stdout`), stdout for everything else.
    pub fn default_stream(&self) -> Stream {
        match self {
            Extractor::StressNg { .. } => Stream::Both,
            Extractor::PerfStat { .. }
            | Extractor::TimeVerbose { .. }
            | Extractor::TimePosix { .. } => Stream::Stderr,
            Extractor::StressNgYaml { .. }
            | Extractor::Regex { .. }
            | Extractor::JsonPath { .. }
            | Extractor::Number
            | Extractor::GoBenchmark { .. } => Stream::Stdout,
        }
    }

    /// Which way is better when the metric does not say: lower for times
    /// and counters, higher for stress-ng rates (lower for its `*-time`
    /// fields); `None` where only the user knows (regex, JSON, numbers).
    pub fn default_direction(&self) -> Option<Better> {
        match self {
            Extractor::TimeVerbose { .. }
            | Extractor::TimePosix { .. }
            | Extractor::PerfStat { .. } => Some(Better::Lower),
            Extractor::StressNg { field, .. } | Extractor::StressNgYaml { field, .. } => {
                Some(if field.contains("time") && !field.contains("per-second") {
                    Better::Lower
                } else {
                    Better::Higher
                })
            }
            Extractor::GoBenchmark { unit, .. } => Some(go_unit_direction(unit)),
            Extractor::Regex { .. } | Extractor::JsonPath { .. } | Extractor::Number => None,
        }
    }

    /// The unit shown when the metric does not say.
    pub fn default_unit(&self) -> &str {
        match self {
            Extractor::StressNg { field, .. } | Extractor::StressNgYaml { field, .. } => {
                if field.contains("per-second") {
                    "bogo-ops/s"
                } else if field.contains("time") {
                    "s"
                } else {
                    ""
                }
            }
            Extractor::TimePosix { .. } => "s",
            Extractor::GoBenchmark { unit, .. } => unit,
            _ => "",
        }
    }

    /// Applies the extractor to one text.
    pub fn extract_text(&self, text: &str) -> Result<f64, ParseError> {
        match self {
            Extractor::StressNg { stressor, field } => {
                stress_ng_value(&stress_ng_text(text)?, stressor.as_deref(), field)
            }
            Extractor::StressNgYaml { stressor, field } => {
                stress_ng_value(&stress_ng_yaml(text)?, stressor.as_deref(), field)
            }
            Extractor::PerfStat { event } => perf_event_value(&perf_stat(text)?, event),
            Extractor::TimeVerbose { field } => time_verbose_value(text, field),
            Extractor::TimePosix { field } => time_posix_value(text, field),
            Extractor::Regex { pattern } => regex_value(&compile_pattern(pattern)?, text),
            Extractor::JsonPath { path } => json_path_value(text, path),
            Extractor::Number => single("plain number", plain_numbers(text)?),
            Extractor::GoBenchmark { benchmark, unit } => {
                single("Go benchmark", go_benchmark_values(text, benchmark, unit)?)
            }
        }
    }
}

fn single(format: &'static str, values: Vec<f64>) -> Result<f64, ParseError> {
    match values.as_slice() {
        [only] => Ok(*only),
        _ => Err(ParseError::TooManyValues {
            format,
            count: values.len(),
        }),
    }
}

/// Reads one metric from a finished run's captured output, from the
/// extractor's [`default_stream`](Extractor::default_stream). Invalid UTF-8 is
/// replaced, not rejected: a workload's stray bytes must not lose a metric
/// printed elsewhere in the stream.
pub fn extract(extractor: &Extractor, stdout: &[u8], stderr: &[u8]) -> Result<f64, ParseError> {
    extract_from(extractor, extractor.default_stream(), stdout, stderr)
}

/// [`extract`] from an explicitly chosen stream.
pub fn extract_from(
    extractor: &Extractor,
    stream: Stream,
    stdout: &[u8],
    stderr: &[u8],
) -> Result<f64, ParseError> {
    let text = match stream {
        Stream::Output => {
            // A workload may print where the extractor does not usually
            // look; try both streams before failing, and report the usual
            // stream's error if that fails too.
            return extract(extractor, stdout, stderr).or_else(|first| {
                extract_from(extractor, Stream::Both, stdout, stderr).map_err(|_| first)
            });
        }
        Stream::File(path) => return Err(ParseError::FileNotRead { path }),
        Stream::Stdout => String::from_utf8_lossy(stdout),
        Stream::Stderr => String::from_utf8_lossy(stderr),
        Stream::Both => {
            let mut both = String::from_utf8_lossy(stdout).into_owned();
            if !both.is_empty() && !both.ends_with('\n') {
                both.push('\n');
            }
            both.push_str(&String::from_utf8_lossy(stderr));
            both.into()
        }
    };
    extractor.extract_text(&text)
}

/// benchstat's convention for a Go benchmark unit: rates (`/s`, `MB/s`)
/// are better higher, everything else (`ns/op`, `B/op`, `allocs/op`,
/// `sec/op`) lower.
pub fn go_unit_direction(unit: &str) -> Better {
    if unit.ends_with("/s") {
        Better::Higher
    } else {
        Better::Lower
    }
}
