//! `verdict compare A B`: compare two stored selections or files with the
//! report's statistics (one comparison per benchmark name and unit), or
//! replay them through the adaptive procedure with `--sequential`.
//!
//! A side is a file (Go benchmark format, hyperfine JSON, stress-ng YAML,
//! CSV with `--column`, or plain numbers one per line) or a stored
//! selection: `RUN` (a run with one cell), `RUN:factor=level,...` (a cell of
//! a run), or `factor=level,...` (matching cells across all runs).

use crate::commands::report::fail_on;
use crate::common::{DbArgs, parse_format, parse_fraction};
use crate::error::CliError;
use serde::Serialize;
use std::path::Path;
use std::process::ExitCode;
use verdict_model::{Direction, Experiment, RunId};
use verdict_report::Format;
use verdict_report::compare::{ComparisonInput, comparison_rows};
use verdict_report::table::Table;
use verdict_stats::sequential::{SequentialDesign, SequentialSettings, replay};
use verdict_stats::verdict::Better;
use verdict_store::{Selection, Store};

#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    /// Baseline: a file or a stored selection (RUN, RUN:factor=level, factor=level,...).
    pub(crate) baseline: String,
    /// Candidate: a file or a stored selection.
    pub(crate) candidate: String,
    /// Replay both sides in order through the adaptive procedure and report where it stops.
    #[arg(long)]
    pub(crate) sequential: bool,
    /// Cap on runs per arm for --sequential (default: the longer side).
    #[arg(long)]
    pub(crate) max: Option<usize>,
    /// CSV column holding the values.
    #[arg(long)]
    pub(crate) column: Option<String>,
    /// Metric of stored selections (default: the run's primary metric).
    #[arg(long)]
    pub(crate) metric: Option<String>,
    /// Which way is better for files without units that say so (CSV, plain numbers).
    #[arg(long, value_parser = ["higher", "lower"])]
    pub(crate) better: Option<String>,
    /// Practical threshold (0.02 or 2%; default: the stored metric's or
    /// experiment's threshold, else 2%).
    #[arg(long, value_parser = parse_fraction)]
    pub(crate) threshold: Option<f64>,
    /// Family-wise error rate (0.05 or 5%).
    #[arg(long, default_value_t = 0.05, value_parser = parse_fraction)]
    pub(crate) alpha: f64,
    /// Do not adjust for multiple comparisons.
    #[arg(long)]
    pub(crate) no_adjust: bool,
    /// text, markdown, csv or json (`verdict.compare/v1`).
    #[arg(long, default_value = "text")]
    pub(crate) format: String,
    /// Exit 1 when a comparison is a regression (`regression`) or any change (`change`).
    #[arg(long, value_name = "WHAT", value_parser = ["regression", "change"])]
    pub(crate) fail_on: Option<String>,
    /// Show the kernel config difference between the two sides' runs,
    /// optionally only symbols matching REGEX (stored selections only).
    #[arg(long, value_name = "REGEX", num_args = 0..=1, default_missing_value = "")]
    pub(crate) config_diff: Option<String>,
    #[command(flatten)]
    pub(crate) db: DbArgs,
}

/// Values of one named series (a benchmark and unit, a stressor, a cell).
#[derive(Debug, Clone)]
pub(crate) struct Series {
    name: String,
    unit: String,
    better: Option<Better>,
    /// The stored metric's threshold (stored selections only).
    threshold: Option<f64>,
    pub(crate) values: Vec<f64>,
}

pub(crate) fn run(args: &CompareArgs) -> Result<ExitCode, CliError> {
    let format = parse_format(&args.format)?;
    // Large files parse on both cores at once.
    let (baseline, candidate) = rayon::join(
        || load_side(&args.baseline, args),
        || load_side(&args.candidate, args),
    );
    let (baseline, candidate) = (baseline?, candidate?);
    let pairs = pair(&baseline, &candidate, &args.baseline, &args.candidate)?;
    let default_better = match args.better.as_deref() {
        Some("higher") => Better::Higher,
        _ => Better::Lower,
    };
    let inputs: Vec<ComparisonInput> = pairs
        .iter()
        .map(|(name, base, cand)| ComparisonInput {
            name: name.clone(),
            unit: base.unit.clone(),
            better: base.better.or(cand.better).unwrap_or(default_better),
            threshold: args
                .threshold
                .or(base.threshold)
                .or(cand.threshold)
                .unwrap_or(0.02),
            baseline: base.values.clone(),
            candidate: cand.values.clone(),
        })
        .collect();
    if args.sequential {
        return sequential(&inputs, args, format);
    }
    let report = comparison_rows(&inputs, args.alpha, !args.no_adjust).map_err(CliError::input)?;
    let config_diff = match &args.config_diff {
        Some(pattern) => Some(config_difference(args, pattern)?),
        None => None,
    };
    match (format, config_diff) {
        (Format::Json, Some(diff)) => {
            let mut document = serde_json::to_value(&report).map_err(CliError::internal)?;
            document["config_diff"] = diff.1;
            println!(
                "{}",
                serde_json::to_string_pretty(&document).map_err(CliError::internal)?
            );
        }
        (_, Some(diff)) => print!("{}\n{}", report.render(format), diff.0),
        (_, None) => print!("{}", report.render(format)),
    }
    let verdicts: Vec<&str> = report
        .comparisons
        .iter()
        .map(|row| row.verdict.as_str())
        .collect();
    Ok(fail_on(args.fail_on.as_deref(), &verdicts))
}

/// Pair series by name; two single series pair whatever their names.
fn pair(
    baseline: &[Series],
    candidate: &[Series],
    base_spec: &str,
    cand_spec: &str,
) -> Result<Vec<(String, Series, Series)>, CliError> {
    let mut pairs = Vec::new();
    if baseline.len() == 1 && candidate.len() == 1 {
        let (base, cand) = (&baseline[0], &candidate[0]);
        let name = if base.name == cand.name {
            base.name.clone()
        } else {
            format!("{} vs {}", cand.name, base.name)
        };
        pairs.push((name, base.clone(), cand.clone()));
    } else {
        for base in baseline {
            if let Some(cand) = candidate.iter().find(|cand| cand.name == base.name) {
                pairs.push((base.name.clone(), base.clone(), cand.clone()));
            } else {
                eprintln!("verdict: note: `{}` is only in {base_spec}", base.name);
            }
        }
        for cand in candidate
            .iter()
            .filter(|cand| !baseline.iter().any(|base| base.name == cand.name))
        {
            eprintln!("verdict: note: `{}` is only in {cand_spec}", cand.name);
        }
    }
    if pairs.is_empty() {
        return Err(CliError::input(format!(
            "{base_spec} and {cand_spec} have nothing in common to compare"
        )));
    }
    for (name, base, cand) in &pairs {
        if base.unit != cand.unit {
            return Err(CliError::input(format!(
                "`{name}`: units differ ({} vs {}); compare like with like",
                base.unit, cand.unit
            )));
        }
        for (series, spec) in [(base, base_spec), (cand, cand_spec)] {
            if series.values.len() < 2 {
                return Err(CliError::input(format!(
                    "`{name}` in {spec} has {} value(s); a comparison needs at least 2 per side",
                    series.values.len()
                )));
            }
        }
    }
    Ok(pairs)
}

fn load_side(spec: &str, args: &CompareArgs) -> Result<Vec<Series>, CliError> {
    let path = Path::new(spec);
    if path.is_file() {
        return load_file(path, args);
    }
    if let Some(selection) = parse_selection(spec)? {
        let store = args.db.open_existing()?;
        return Ok(vec![load_selection(
            &store,
            spec,
            selection,
            args.metric.as_deref(),
        )?]);
    }
    Err(CliError::input(format!(
        "`{spec}` is neither a file nor a stored selection (RUN, RUN:factor=level,..., or factor=level,...)"
    )))
}

/// `RUN`, `RUN:f=l,...` or `f=l,...`; `None` when `spec` has neither form.
/// A stored selection: an optional run and (factor, level) filters.
pub(crate) type StoredSelection = (Option<RunId>, Vec<(String, String)>);

pub(crate) fn parse_selection(spec: &str) -> Result<Option<StoredSelection>, CliError> {
    let (run, filters) = match spec.split_once(':') {
        Some((run, filters)) => (Some(run), filters),
        None if spec.chars().all(|c| c.is_ascii_digit()) && !spec.is_empty() => (Some(spec), ""),
        None => (None, spec),
    };
    let run = match run {
        Some(text) => match text.parse::<i64>() {
            Ok(id) => Some(RunId(id)),
            Err(_) => return Ok(None),
        },
        None => None,
    };
    let mut levels = Vec::new();
    for filter in filters.split(',').filter(|filter| !filter.is_empty()) {
        match filter.split_once('=') {
            Some((factor, level)) if !factor.is_empty() => {
                levels.push((factor.trim().to_string(), level.trim().to_string()))
            }
            _ => return Ok(None),
        }
    }
    if run.is_none() && levels.is_empty() {
        return Ok(None);
    }
    Ok(Some((run, levels)))
}

/// The stored values a selection names (one cell, or cells pooled across
/// runs when no run is given), of `metric` or the run's primary metric.
pub(crate) fn load_selection(
    store: &dyn Store,
    spec: &str,
    (run, levels): StoredSelection,
    metric: Option<&str>,
) -> Result<Series, CliError> {
    // The metric and its direction come from the run (or the newest matching run).
    let record = match run {
        Some(run) => store.run(run).map_err(CliError::input)?,
        None => store
            .latest_run()
            .map_err(CliError::internal)?
            .ok_or_else(|| CliError::input(format!("`{spec}`: the database has no runs")))?,
    };
    let experiment: Experiment =
        serde_json::from_str(&record.experiment_json).map_err(CliError::internal)?;
    let metric = match metric {
        Some(name) => experiment
            .metrics
            .iter()
            .find(|metric| metric.name == name)
            .cloned()
            .ok_or_else(|| CliError::input(format!("run {} has no metric `{name}`", record.id)))?,
        None => experiment.primary_metric().clone(),
    };
    let selected = store
        .select_samples(&Selection {
            run,
            levels: levels.clone(),
            metric: metric.name.clone(),
        })
        .map_err(CliError::internal)?;
    if selected.is_empty() {
        return Err(CliError::input(format!(
            "`{spec}` selects no stored samples of metric `{}`",
            metric.name
        )));
    }
    // One series per distinct cell; a selection spanning cells is ambiguous.
    let mut cells: Vec<Vec<(String, String)>> =
        selected.iter().map(|value| value.levels.clone()).collect();
    cells.sort();
    cells.dedup();
    if cells.len() > 1 && run.is_some() {
        let labels: Vec<String> = cells
            .iter()
            .map(|cell| {
                cell.iter()
                    .map(|(f, l)| format!("{f}={l}"))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect();
        return Err(CliError::input(format!(
            "`{spec}` matches {} cells; name one, e.g. {}:{}",
            cells.len(),
            run.map_or(String::new(), |run| run.to_string()),
            labels[0]
        )));
    }
    let mut runs: Vec<i64> = selected.iter().map(|value| value.run.0).collect();
    runs.dedup();
    if run.is_none() && (runs.len() > 1 || cells.len() > 1) {
        eprintln!(
            "verdict: note: `{spec}` pools {} values from {} run(s) ({}) and {} cell(s); metric `{}` and its direction are taken from run {}",
            selected.len(),
            runs.len(),
            runs.iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            cells.len(),
            metric.name,
            record.id
        );
    }
    Ok(Series {
        name: if levels.is_empty() {
            metric.name.clone()
        } else {
            levels
                .iter()
                .map(|(f, l)| format!("{f}={l}"))
                .collect::<Vec<_>>()
                .join(",")
        },
        unit: metric.unit.clone(),
        better: Some(match metric.direction {
            Direction::HigherIsBetter => Better::Higher,
            Direction::LowerIsBetter => Better::Lower,
        }),
        threshold: Some(metric.threshold.unwrap_or(experiment.sampling.threshold)),
        values: selected.iter().map(|value| value.value).collect(),
    })
}

fn load_file(path: &Path, args: &CompareArgs) -> Result<Vec<Series>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| CliError::input(format!("read {}: {error}", path.display())))?;
    let shown = path.display().to_string();
    // Malformed lines as FILE:LINE (1-based), with the line quoted.
    let context = |error: verdict_parse::ParseError| match error {
        verdict_parse::ParseError::MalformedLine {
            format,
            line,
            message,
            text,
        } => CliError::input(format!(
            "{shown}:{line}: {message} ({format} line `{text}`)"
        )),
        other => CliError::input(format!("{shown}: {other}")),
    };
    let extension = path
        .extension()
        .and_then(|extension| extension.to_str())
        .unwrap_or("");
    let stem = path
        .file_stem()
        .and_then(|stem| stem.to_str())
        .unwrap_or("value")
        .to_string();
    if let Some(column) = &args.column {
        return Ok(vec![Series {
            name: column.clone(),
            unit: String::new(),
            better: None,
            threshold: None,
            values: verdict_parse::csv_column(&text, column).map_err(context)?,
        }]);
    }
    if extension == "csv" {
        return Err(CliError::input(format!(
            "{shown}: a CSV file needs --column NAME"
        )));
    }
    if extension == "json" || text.trim_start().starts_with('{') {
        let results = verdict_parse::hyperfine_json(&text).map_err(context)?;
        return Ok(results
            .into_iter()
            .map(|result| Series {
                name: if result.command.is_empty() {
                    stem.clone()
                } else {
                    result.command
                },
                unit: "s".to_string(),
                better: Some(Better::Lower),
                threshold: None,
                values: result.times,
            })
            .collect());
    }
    if extension == "yaml"
        || extension == "yml"
        || text
            .lines()
            .any(|line| line.trim_start().starts_with("metrics:"))
    {
        let mut series: Vec<Series> = Vec::new();
        for document in text
            .split("\n---")
            .filter(|document| document.contains("metrics:"))
        {
            for row in verdict_parse::stress_ng_yaml(document).map_err(context)? {
                let name = format!("{} bogo-ops/s", row.stressor);
                let value = row.bogo_ops_per_second_real_time;
                match series.iter_mut().find(|existing| existing.name == name) {
                    Some(existing) => existing.values.push(value),
                    None => series.push(Series {
                        name,
                        unit: "bogo-ops/s".to_string(),
                        better: Some(Better::Higher),
                        threshold: None,
                        values: vec![value],
                    }),
                }
            }
        }
        return Ok(series);
    }
    if text.lines().any(|line| line.starts_with("Benchmark")) {
        let results = verdict_parse::go_benchmarks(&text).map_err(context)?;
        return Ok(verdict_parse::go_benchmark_series(&results)
            .into_iter()
            .map(|series| Series {
                better: Some(go_unit_better(&series.unit)),
                threshold: None,
                name: format!("{} {}", series.name, series.unit),
                unit: series.unit,
                values: series.values,
            })
            .collect());
    }
    Ok(vec![Series {
        name: stem,
        unit: String::new(),
        better: None,
        threshold: None,
        values: verdict_parse::plain_numbers(&text).map_err(context)?,
    }])
}

/// benchstat's convention: rates (`/s`, `MB/s`) are better higher,
/// everything else (`ns/op`, `B/op`, `allocs/op`, `sec/op`) lower.
fn go_unit_better(unit: &str) -> Better {
    if unit.ends_with("/s") || unit == "MB/s" {
        Better::Higher
    } else {
        Better::Lower
    }
}

#[derive(Debug, Serialize)]
struct SequentialRow {
    name: String,
    available: usize,
    stopped_at: usize,
    looks: usize,
    state: String,
    verdict: String,
    magnitude: Option<String>,
    delta: Option<f64>,
    delta_ci_low: Option<f64>,
    delta_ci_high: Option<f64>,
    confidence: Option<f64>,
    procedure: String,
}

fn sequential(
    inputs: &[ComparisonInput],
    args: &CompareArgs,
    format: Format,
) -> Result<ExitCode, CliError> {
    let family = if args.no_adjust {
        1
    } else {
        inputs.len().max(1)
    };
    let mut rows = Vec::new();
    for input in inputs {
        let available = input.baseline.len().min(input.candidate.len());
        let max = args
            .max
            .unwrap_or(input.baseline.len().max(input.candidate.len()))
            .max(2);
        let mut settings = SequentialSettings::new(max, input.threshold, input.better);
        settings.alpha = args.alpha / family as f64;
        settings.min = settings.min.min(max);
        let design = SequentialDesign::new(settings).map_err(CliError::input)?;
        let outcome = replay(&design, &input.baseline, &input.candidate);
        let word = |value: serde_json::Value| value.as_str().unwrap_or_default().replace('-', "_");
        rows.push(SequentialRow {
            name: input.name.clone(),
            available,
            stopped_at: outcome.stopped_at,
            looks: outcome.looks,
            state: word(serde_json::to_value(outcome.state).unwrap_or_default()),
            verdict: outcome
                .decision
                .map_or("inconclusive".to_string(), |decision| {
                    word(serde_json::to_value(decision).unwrap_or_default())
                }),
            magnitude: outcome
                .magnitude
                .map(|magnitude| word(serde_json::to_value(magnitude).unwrap_or_default())),
            delta: outcome.estimate,
            delta_ci_low: outcome.interval.map(|interval| interval.low),
            delta_ci_high: outcome.interval.map(|interval| interval.high),
            confidence: outcome.nominal_confidence,
            procedure: outcome.procedure,
        });
    }
    match format {
        Format::Json => {
            let document = serde_json::json!({ "schema": "verdict.compare/v1", "mode": "sequential", "alpha": args.alpha, "comparisons": rows });
            println!(
                "{}",
                serde_json::to_string_pretty(&document).map_err(CliError::internal)?
            );
        }
        _ => {
            if let Some(first) = rows.first() {
                println!("sequential replay: {}\n", first.procedure);
            }
            let mut table = Table::new(
                ["name", "stopped at", "state", "verdict", "delta [interval]"]
                    .map(String::from)
                    .to_vec(),
            );
            table.left = vec![2, 3];
            for row in &rows {
                let interval = match (row.delta, row.delta_ci_low, row.delta_ci_high) {
                    (Some(delta), Some(low), Some(high)) => format!(
                        "{} [{}, {}]",
                        verdict_report::format::percent(delta),
                        verdict_report::format::percent(low),
                        verdict_report::format::percent(high)
                    ),
                    _ => "-".to_string(),
                };
                table.push(vec![
                    row.name.clone(),
                    format!("{}/{} per arm", row.stopped_at, row.available),
                    row.state.clone(),
                    row.verdict.clone(),
                    interval,
                ]);
            }
            print!(
                "{}",
                if format == Format::Markdown {
                    table.markdown()
                } else if format == Format::Csv {
                    table.csv()
                } else {
                    table.text()
                }
            );
        }
    }
    let verdicts: Vec<&str> = rows.iter().map(|row| row.verdict.as_str()).collect();
    Ok(fail_on(args.fail_on.as_deref(), &verdicts))
}

/// The kernel config stored with the run a side selects: (where it came from, its text).
fn stored_config(store: &dyn Store, spec: &str) -> Result<(String, String), CliError> {
    let run = match parse_selection(spec)? {
        Some((Some(run), _)) => run,
        Some((None, levels)) => {
            // The newest run's primary metric names what every matching run measured.
            let latest = store
                .latest_run()
                .map_err(CliError::internal)?
                .ok_or_else(|| CliError::input("the database has no runs"))?;
            let experiment: Experiment =
                serde_json::from_str(&latest.experiment_json).map_err(CliError::internal)?;
            let values = store
                .select_samples(&Selection {
                    run: None,
                    levels,
                    metric: experiment.primary_metric().name.clone(),
                })
                .map_err(CliError::internal)?;
            values.last().map(|value| value.run).ok_or_else(|| {
                CliError::input(format!("--config-diff: `{spec}` selects no stored run"))
            })?
        }
        None => {
            return Err(CliError::input(format!(
                "--config-diff needs stored selections; `{spec}` is a file"
            )));
        }
    };
    // Stored once per distinct config under the hash the run's environment
    // records (schema v4); runs from before that carry it as an annotation.
    let record = store.run(run).map_err(CliError::internal)?;
    if let Some(sha256) = &record.environment_start.kernel_config_sha256
        && let Some((source, text)) = store.kernel_config(sha256).map_err(CliError::internal)?
    {
        return Ok((format!("run {run} ({source})"), text));
    }
    let annotations = store.annotations(run).map_err(CliError::internal)?;
    let config = annotations.get("kernel_config").ok_or_else(|| {
        CliError::input(format!(
            "--config-diff: run {run} has no stored kernel config (none was readable when it ran)"
        ))
    })?;
    Ok((
        format!("run {run} ({})", config["source"].as_str().unwrap_or("?")),
        config["text"].as_str().unwrap_or_default().to_string(),
    ))
}

/// The diffconfig-style difference between the two sides' kernels.
fn config_difference(
    args: &CompareArgs,
    pattern: &str,
) -> Result<(String, serde_json::Value), CliError> {
    let store = args.db.open_existing()?;
    let (old_name, old_text) = stored_config(&store, &args.baseline)?;
    let (new_name, new_text) = stored_config(&store, &args.candidate)?;
    let old = verdict_kconfig::DotConfig::parse(&old_text, &old_name).map_err(CliError::input)?;
    let new = verdict_kconfig::DotConfig::parse(&new_text, &new_name).map_err(CliError::input)?;
    let mut diff = verdict_kconfig::ConfigDiff::between(&old, &new);
    if !pattern.is_empty() {
        diff.retain_matching(pattern).map_err(CliError::input)?;
    }
    let text = diff.render_text();
    let heading = format!(
        "kernel config: {old_name} -> {new_name}{}\n",
        if pattern.is_empty() {
            String::new()
        } else {
            format!(" (symbols matching {pattern})")
        }
    );
    let body = if text.trim().is_empty() {
        "  (no differences)\n".to_string()
    } else {
        text
    };
    let document =
        serde_json::to_value(diff.to_document(&old_name, &new_name)).map_err(CliError::internal)?;
    Ok((format!("{heading}{body}"), document))
}
