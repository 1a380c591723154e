//! `verdict compare A B`: compare two stored selections or files with the
//! report's statistics (one comparison per benchmark name and unit), or
//! replay them through the adaptive procedure with `--sequential`.
//!
//! A side is a file (Go benchmark format, hyperfine JSON, stress-ng YAML,
//! CSV with `--column`, or plain numbers one per line) or a stored
//! selection: `RUN` (a run with one cell), `RUN:factor=level,...` (a cell of
//! a run), or `factor=level,...` (matching cells across the runs that have
//! them and the metric). The output names the runs each stored side came
//! from and warns when the sides come from different runs or from runs that
//! overlapped in time on a host.

use crate::common::{DbArgs, ReportFormat, emit, parse_fraction};
use crate::error::CliError;
use crate::fail_on::{FailOn, exit_code};
use crate::warnings::{SideSpan, Warning, different_runs, overlaps_of, print_with_warnings};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::ExitCode;
use verdict_model::{Direction, Experiment, RunId};
use verdict_report::Format;
use verdict_report::compare::{ComparisonInput, comparison_rows};
use verdict_report::table::Table;
use verdict_stats::sequential::{
    InformationDesign, InformationSettings, SequentialDesign, SequentialSettings, replay,
    replay_information,
};
use verdict_stats::verdict::{Better, Magnitude, Verdict};
use verdict_store::{Database, RunRecord, Selection, Store};

#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    /// Baseline: a file or a stored selection (RUN, RUN:factor=level, factor=level,...).
    pub(crate) baseline: String,
    /// Candidate: a file or a stored selection.
    pub(crate) candidate: String,
    /// Replay both sides in order through the adaptive procedure and report where it stops.
    #[arg(long)]
    pub(crate) sequential: bool,
    /// Cap on runs per arm for --sequential (default: no cap; the design
    /// ends at the information the threshold needs, estimated from the data).
    #[arg(long)]
    pub(crate) max: Option<usize>,
    /// CSV column holding the values.
    #[arg(long)]
    pub(crate) column: Option<String>,
    /// Metric of stored selections (default: the run's primary metric).
    #[arg(long)]
    pub(crate) metric: Option<String>,
    /// Which way is better for files without units that say so (CSV, plain numbers).
    #[arg(long, value_enum)]
    pub(crate) better: Option<BetterArgument>,
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
    /// text, markdown, csv, json (`verdict.compare/v1`) or html (one self-contained page with plots).
    #[arg(long, value_enum, default_value = "text", hide_possible_values = true)]
    pub(crate) format: ReportFormat,
    /// Write the report to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub(crate) output: Option<std::path::PathBuf>,
    /// Exit 1 when a comparison is a regression (`regression`) or any change (`change`).
    #[arg(long, value_name = "WHAT", value_enum)]
    pub(crate) fail_on: Option<FailOn>,
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
    /// Where a stored selection's values came from (`None` for files).
    source: Option<StoredSource>,
}

/// The runs and cells a stored selection's values came from.
#[derive(Debug, Clone)]
struct StoredSource {
    span: SideSpan,
    cells: usize,
}

pub(crate) fn run(args: &CompareArgs) -> Result<ExitCode, CliError> {
    let html = args.format == ReportFormat::Html;
    let format = args.format.table().unwrap_or(Format::Text);
    if html && (args.sequential || args.config_diff.is_some()) {
        return Err(CliError::input(
            "--format html does not show --sequential or --config-diff yet; use text or json for those",
        ));
    }
    let is_file = |spec: &str| Path::new(spec).is_file();
    let mut needs_store = false;
    for spec in [&args.baseline, &args.candidate] {
        needs_store |= !is_file(spec) && parse_selection(spec)?.is_some();
    }
    let (baseline, candidate, store) = if needs_store {
        let store = args.db.open_read_only()?;
        let baseline = load_side(&args.baseline, args, Some(&store))?;
        let candidate = load_side(&args.candidate, args, Some(&store))?;
        (baseline, candidate, Some(store))
    } else {
        // Large files parse on both cores at once.
        let (baseline, candidate) = rayon::join(
            || load_side(&args.baseline, args, None),
            || load_side(&args.candidate, args, None),
        );
        (baseline?, candidate?, None)
    };
    let (sources, warnings) = provenance(store.as_ref(), &baseline, &candidate, args)?;
    let pairs = pair(&baseline, &candidate, &args.baseline, &args.candidate)?;
    let default_better = match args.better {
        Some(BetterArgument::Higher) => Better::Higher,
        Some(BetterArgument::Lower) | None => Better::Lower,
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
        return sequential(&inputs, args, format, sources, &warnings);
    }
    let report = comparison_rows(&inputs, args.alpha, !args.no_adjust).map_err(CliError::input)?;
    if html {
        let page = verdict_report::html::render_compare(
            &report,
            &[
                ("baseline".to_string(), args.baseline.clone()),
                ("candidate".to_string(), args.candidate.clone()),
            ],
            &pairs
                .iter()
                .map(|(name, base, cand)| verdict_report::html::ComparedValues {
                    name: name.clone(),
                    baseline: base.values.clone(),
                    candidate: cand.values.clone(),
                })
                .collect::<Vec<_>>(),
            &side_environments(args, store.as_ref())?,
        );
        emit(&page, args.output.as_deref())?;
    } else {
        let config_diff = match (&args.config_diff, &store) {
            (Some(pattern), Some(store)) => Some(config_difference(
                store,
                args,
                pattern,
                [&baseline, &candidate],
            )?),
            (Some(_), None) => {
                return Err(CliError::input(
                    "--config-diff needs stored selections; both sides are files",
                ));
            }
            (None, _) => None,
        };
        let mut extra = serde_json::Map::new();
        let mut rendered = if format == Format::Json {
            String::new()
        } else {
            report.render(format)
        };
        if let Some((text, document)) = config_diff {
            extra.insert("config_diff".to_string(), document);
            rendered = format!("{rendered}\n{text}");
        }
        rendered.push_str(&render_sources(&sources, format));
        extra.insert("sources".to_string(), sources);
        print_with_warnings(
            &rendered,
            &report,
            format,
            &warnings,
            extra,
            args.output.as_deref(),
        )?;
    }
    Ok(exit_code(
        args.fail_on,
        report.comparisons.iter().map(|row| row.verdict),
    ))
}

/// The recorded environments of the sides that name a stored run
/// (`RUN` or `RUN:factor=level`), for the HTML page's side-by-side table.
fn side_environments(
    args: &CompareArgs,
    store: Option<&Database>,
) -> Result<Vec<verdict_report::html::EnvironmentColumn>, CliError> {
    let Some(store) = store else {
        return Ok(Vec::new());
    };
    let mut columns = Vec::new();
    for (side, spec) in [("baseline", &args.baseline), ("candidate", &args.candidate)] {
        if Path::new(spec).is_file() {
            continue;
        }
        if let Some((Some(run), _)) = parse_selection(spec)? {
            let record = store.run(run).map_err(CliError::input)?;
            columns.push(verdict_report::html::EnvironmentColumn {
                title: format!("{side}: run {run} ({})", record.host),
                lines: verdict_report::run::environment_lines(&record.environment_start),
            });
        }
    }
    Ok(columns)
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

fn load_side(
    spec: &str,
    args: &CompareArgs,
    store: Option<&Database>,
) -> Result<Vec<Series>, CliError> {
    let path = Path::new(spec);
    if path.is_file() {
        return load_file(path, args);
    }
    if let Some(selection) = parse_selection(spec)?
        && let Some(store) = store
    {
        return Ok(vec![load_selection(
            store,
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
///
/// Without a run, only runs that have a cell with every listed level and
/// stored values of the metric are considered: the metric (without
/// `--metric`, the primary metric of the newest run with such a cell), its
/// unit, direction and threshold come from the newest pooled run, and the
/// pooled runs must agree on its unit and direction.
pub(crate) fn load_selection(
    store: &dyn Store,
    spec: &str,
    (run, levels): StoredSelection,
    metric: Option<&str>,
) -> Result<Series, CliError> {
    let experiment_of = |record: &RunRecord| -> Result<Experiment, CliError> {
        serde_json::from_str(&record.experiment_json).map_err(|error| {
            CliError::internal(format!(
                "run {}: stored experiment does not load: {error}",
                record.id
            ))
        })
    };
    let metric_name = match (run, metric) {
        (_, Some(name)) => name.to_string(),
        (Some(run), None) => {
            let record = store.run(run).map_err(CliError::input)?;
            experiment_of(&record)?.primary_metric().name.clone()
        }
        (None, None) => {
            let record = newest_run_with_cell(store, &levels)?.ok_or_else(|| {
                CliError::input(format!(
                    "`{spec}`: no stored run has a cell with these levels"
                ))
            })?;
            experiment_of(&record)?.primary_metric().name.clone()
        }
    };
    if let Some(run) = run {
        // A named run must declare the metric.
        let record = store.run(run).map_err(CliError::input)?;
        if !experiment_of(&record)?
            .metrics
            .iter()
            .any(|declared| declared.name == metric_name)
        {
            return Err(CliError::input(format!(
                "run {run} has no metric `{metric_name}`"
            )));
        }
    }
    let selected = store
        .select_samples(&Selection {
            run,
            levels: levels.clone(),
            metric: metric_name.clone(),
        })
        .map_err(CliError::internal)?;
    if selected.is_empty() {
        return Err(CliError::input(format!(
            "`{spec}` selects no stored samples of metric `{metric_name}`{}",
            if run.is_none() {
                " (no run has both a cell with these levels and values of that metric)"
            } else {
                ""
            }
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
    let pooled: BTreeSet<RunId> = selected.iter().map(|value| value.run).collect();
    // The metric's definition, from the newest pooled run that declares it;
    // every pooled run that declares it must agree on unit and direction.
    let mut definition: Option<(RunId, verdict_model::MetricSpec, f64)> = None;
    for &pooled_run in pooled.iter().rev() {
        let record = store.run(pooled_run).map_err(CliError::internal)?;
        let experiment = experiment_of(&record)?;
        let Some(declared) = experiment
            .metrics
            .iter()
            .find(|declared| declared.name == metric_name)
        else {
            continue;
        };
        match &definition {
            None => {
                definition = Some((
                    pooled_run,
                    declared.clone(),
                    declared.threshold.unwrap_or(experiment.sampling.threshold),
                ));
            }
            Some((newest, spec_of_newest, _))
                if spec_of_newest.unit != declared.unit
                    || spec_of_newest.direction != declared.direction =>
            {
                return Err(CliError::input(format!(
                    "`{spec}` pools runs that define metric `{metric_name}` differently \
                     (run {newest}: unit `{}`, {}; run {pooled_run}: unit `{}`, {}); \
                     name one run, e.g. {newest}:{}",
                    spec_of_newest.unit,
                    direction_words(spec_of_newest.direction),
                    declared.unit,
                    direction_words(declared.direction),
                    levels
                        .iter()
                        .map(|(f, l)| format!("{f}={l}"))
                        .collect::<Vec<_>>()
                        .join(",")
                )));
            }
            Some(_) => {}
        }
    }
    let (_, metric, threshold) = definition.ok_or_else(|| {
        CliError::input(format!(
            "`{spec}`: no run it selects declares metric `{metric_name}`"
        ))
    })?;
    let first_ms = selected.iter().map(|value| value.started_at_ms).min();
    let last_ms = selected.iter().map(|value| value.started_at_ms).max();
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
        better: Some(verdict_report::compare::better_of(metric.direction)),
        threshold: Some(threshold),
        values: selected.iter().map(|value| value.value).collect(),
        source: Some(StoredSource {
            span: SideSpan {
                runs: pooled.into_iter().collect(),
                first_ms: first_ms.unwrap_or_default(),
                last_ms: last_ms.unwrap_or_default(),
            },
            cells: cells.len(),
        }),
    })
}

fn direction_words(direction: Direction) -> &'static str {
    match direction {
        Direction::HigherIsBetter => "higher is better",
        Direction::LowerIsBetter => "lower is better",
    }
}

/// The newest run with a cell that has every one of `levels`.
fn newest_run_with_cell(
    store: &dyn Store,
    levels: &[(String, String)],
) -> Result<Option<RunRecord>, CliError> {
    let runs = store.list_runs().map_err(CliError::internal)?;
    for summary in runs.iter().rev() {
        let cells = store.cells(summary.id).map_err(CliError::internal)?;
        if cells
            .iter()
            .any(|(_, cell)| levels.iter().all(|level| cell.levels.contains(level)))
        {
            return store.run(summary.id).map(Some).map_err(CliError::internal);
        }
    }
    Ok(None)
}

/// The `sources` of the JSON document (one entry per side: a file, or the
/// runs and cells a stored selection pooled) and the warnings about them:
/// sides from different runs, and runs that overlapped others on a host.
fn provenance(
    store: Option<&Database>,
    baseline: &[Series],
    candidate: &[Series],
    args: &CompareArgs,
) -> Result<(serde_json::Value, Vec<Warning>), CliError> {
    let source_of = |side: &str, spec: &str, series: &[Series]| match series
        .first()
        .and_then(|series| series.source.as_ref())
    {
        Some(source) => serde_json::json!({
            "side": side, "spec": spec, "kind": "selection",
            "runs": source.span.runs.iter().map(|run| run.0).collect::<Vec<_>>(),
            "cells": source.cells,
            "values": series[0].values.len(),
            "first_at_ms": source.span.first_ms, "last_at_ms": source.span.last_ms,
        }),
        None => serde_json::json!({ "side": side, "spec": spec, "kind": "file" }),
    };
    let sources = serde_json::json!([
        source_of("baseline", &args.baseline, baseline),
        source_of("candidate", &args.candidate, candidate),
    ]);
    let spans: Vec<&SideSpan> = [baseline, candidate]
        .iter()
        .filter_map(|series| series.first().and_then(|series| series.source.as_ref()))
        .map(|source| &source.span)
        .collect();
    let mut warnings = Vec::new();
    if let Some(store) = store {
        let runs: BTreeSet<RunId> = spans
            .iter()
            .flat_map(|span| span.runs.iter().copied())
            .collect();
        warnings.extend(overlaps_of(store, &runs)?);
    }
    if let [base, cand] = spans[..]
        && let Some(warning) = different_runs(base, cand)
    {
        warnings.push(warning);
    }
    Ok((sources, warnings))
}

/// Text or markdown lines naming where each stored side came from; empty
/// for CSV, JSON, and two files.
fn render_sources(sources: &serde_json::Value, format: Format) -> String {
    if !matches!(format, Format::Text | Format::Markdown) {
        return String::new();
    }
    let mut lines = String::new();
    for source in sources.as_array().into_iter().flatten() {
        if source["kind"] != "selection" {
            continue;
        }
        let runs: Vec<String> = source["runs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|run| run.to_string())
            .collect();
        let line = format!(
            "{} `{}`: {} values from {} {}{}",
            source["side"].as_str().unwrap_or_default(),
            source["spec"].as_str().unwrap_or_default(),
            source["values"],
            if runs.len() == 1 { "run" } else { "runs" },
            runs.join(", "),
            match source["cells"].as_u64() {
                Some(cells) if cells > 1 => format!(" ({cells} cells pooled)"),
                _ => String::new(),
            }
        );
        let line = verdict_report::escape::text(&line);
        if format == Format::Markdown {
            lines.push_str(&format!("- {line}\n"));
        } else {
            lines.push_str(&format!("{line}\n"));
        }
    }
    if lines.is_empty() {
        lines
    } else {
        format!("\n{lines}")
    }
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
    let series = verdict_parse::import(&shown, &text, args.column.as_deref()).map_err(context)?;
    Ok(series
        .into_iter()
        .map(|series| Series {
            name: series.name,
            unit: series.unit,
            better: series.direction.map(verdict_report::compare::better_of),
            threshold: None,
            values: series.values,
            source: None,
        })
        .collect())
}

/// `--better`: the command-line spelling of `verdict_stats` `Better`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum BetterArgument {
    Higher,
    Lower,
}

#[derive(Debug, Serialize)]
struct SequentialRow {
    name: String,
    available: usize,
    stopped_at: usize,
    looks: usize,
    state: String,
    verdict: Verdict,
    magnitude: Option<Magnitude>,
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
    sources: serde_json::Value,
    warnings: &[Warning],
) -> Result<ExitCode, CliError> {
    let family = if args.no_adjust {
        1
    } else {
        inputs.len().max(1)
    };
    let mut rows = Vec::new();
    for input in inputs {
        let available = input.baseline.len().min(input.candidate.len());
        // With a cap, the planned-cap design; without one, the design ends
        // at the information the threshold needs (docs/statistics.md).
        let outcome = match args.max {
            Some(max) => {
                let max = max.max(2);
                let mut settings = SequentialSettings::new(max, input.threshold, input.better);
                settings.alpha = args.alpha / family as f64;
                settings.min = settings.min.min(max);
                let design = SequentialDesign::new(settings).map_err(CliError::input)?;
                replay(&design, &input.baseline, &input.candidate)
            }
            None => {
                let mut settings = InformationSettings::new(input.threshold, input.better);
                settings.alpha = args.alpha / family as f64;
                let design = InformationDesign::new(settings).map_err(CliError::input)?;
                replay_information(&design, &input.baseline, &input.candidate)
            }
        };
        let word = |value: serde_json::Value| value.as_str().unwrap_or_default().replace('-', "_");
        rows.push(SequentialRow {
            name: input.name.clone(),
            available,
            stopped_at: outcome.stopped_at,
            looks: outcome.looks,
            state: word(serde_json::to_value(outcome.state).unwrap_or_default()),
            verdict: outcome
                .decision
                .map_or(Verdict::Inconclusive, Verdict::from),
            magnitude: outcome.magnitude,
            delta: outcome.estimate,
            delta_ci_low: outcome.interval.map(|interval| interval.low),
            delta_ci_high: outcome.interval.map(|interval| interval.high),
            confidence: outcome.nominal_confidence,
            procedure: outcome.procedure,
        });
    }
    match format {
        Format::Json => {
            let document = serde_json::json!({ "schema": "verdict.compare/v1", "mode": "sequential", "alpha": args.alpha, "comparisons": rows, "sources": sources });
            print_with_warnings(
                "",
                &document,
                format,
                warnings,
                serde_json::Map::new(),
                args.output.as_deref(),
            )?;
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
                    row.verdict.to_string(),
                    interval,
                ]);
            }
            let rendered = if format == Format::Markdown {
                table.markdown()
            } else if format == Format::Csv {
                table.csv()
            } else {
                table.text()
            };
            let rendered = format!("{rendered}{}", render_sources(&sources, format));
            print_with_warnings(
                &rendered,
                &(),
                format,
                warnings,
                serde_json::Map::new(),
                args.output.as_deref(),
            )?;
        }
    }
    Ok(exit_code(args.fail_on, rows.iter().map(|row| row.verdict)))
}

/// The kernel config stored with the run a side's values came from (the
/// newest, when pooled): (where it came from, its text).
fn stored_config(
    store: &dyn Store,
    spec: &str,
    series: &[Series],
) -> Result<(String, String), CliError> {
    let run = series
        .first()
        .and_then(|series| series.source.as_ref())
        .and_then(|source| source.span.runs.last().copied())
        .ok_or_else(|| {
            CliError::input(format!(
                "--config-diff needs stored selections; `{spec}` is a file"
            ))
        })?;
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
    store: &dyn Store,
    args: &CompareArgs,
    pattern: &str,
    [baseline, candidate]: [&[Series]; 2],
) -> Result<(String, serde_json::Value), CliError> {
    let (old_name, old_text) = stored_config(store, &args.baseline, baseline)?;
    let (new_name, new_text) = stored_config(store, &args.candidate, candidate)?;
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
