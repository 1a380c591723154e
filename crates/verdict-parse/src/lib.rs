//! verdict-parse: pure metric extractors, bytes in and metrics out.
//!
//! Formats: stress-ng text (`--metrics-brief`, `--metrics`; `info:` and
//! `metrc:` prefixes) and `--yaml`; `perf stat -x,`, `--json` and its plain
//! report; GNU
//! `time -v`, `time -p` and bash `time`; regular expressions; a small JSON
//! path; plain numbers; CSV columns; hyperfine `--export-json`; the Go
//! benchmark format; /proc counter files (`proc`: /proc/stat,
//! /proc/interrupts, /proc/softirqs, /proc/vmstat, and the monitors'
//! deltas over an iteration); `perf script` output folded to stacks with
//! each symbol's self and inclusive weight. The engine calls [`extract`] with an [`Extractor`] (the
//! registry of metric parsers: its serde form is the experiment file's
//! `[[metric]]` schema, its defaults live with it); `verdict compare`
//! calls [`import`] for a results file.
//!
//! This crate must not do I/O, read the clock, or depend on other verdict
//! crates but verdict-stats (whose `Better` says which way a metric is
//! better, a word the reports share); tests alone read fixture files.

mod error;
mod extractor;
mod import;
pub mod json_path;
mod number;
mod pattern;
mod perf;
mod perf_script;
pub mod proc;
mod samples;
mod stress_ng;
mod time;

pub use error::ParseError;
pub use extractor::{Extractor, Stream, extract, extract_from, go_unit_direction};
pub use import::{ImportedSeries, import};
pub use json_path::{JsonPathStep, json_path_value, parse_json_path};
pub use number::{parse_number, plain_numbers};
pub use pattern::{compile_pattern, regex_value};
pub use perf::{
    CounterValue, PerfRow, perf_event_value, perf_stat, perf_stat_csv,
    perf_stat_csv_with_separator, perf_stat_json, perf_stat_text,
};
pub use perf_script::{FoldedProfile, Stack, SymbolWeight, fold_perf_script, symbol_weights};
pub use samples::{
    GoBenchResult, GoBenchSeries, HyperfineResult, csv_column, csv_text_column,
    go_benchmark_series, go_benchmark_values, go_benchmarks, hyperfine_json, hyperfine_times,
};
pub use stress_ng::{
    STRESS_NG_FIELDS, StressNgRow, select_row, stress_ng_text, stress_ng_value, stress_ng_yaml,
};
pub use time::{
    TIME_VERBOSE_FIELDS, TimePick, TimeReport, check_time_posix_field, check_time_verbose_field,
    time_posix, time_posix_value, time_verbose, time_verbose_value,
};
