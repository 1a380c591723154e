//! `verdict report [RUN_ID]`: rebuild a run's report from the store alone
//! (nothing is re-run): per-cell summary, comparisons with verdicts, and the
//! failed iterations; or a pivot with `--rows/--cols`.

use crate::common::{DbArgs, ReportFormat, emit, parse_fraction};
use crate::error::CliError;
use crate::fail_on::{FailOn, exit_code};
use crate::stored_run::{loaded, run_info};
use crate::warnings::{overlaps_of, print_with_warnings};
use std::process::ExitCode;
use verdict_model::{Environment, RunId};
use verdict_report::RunReport;
use verdict_report::pivot::{PivotOptions, PivotReport};
use verdict_report::run::RunReportOptions;
use verdict_store::Store;

/// Options shared by `report` and by `run`/`ab` (which print a report at
/// the end).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ReportOptionsArgs {
    /// text, markdown, csv, json (`verdict.report/v1`) or html (one self-contained page with plots).
    #[arg(long, value_enum, default_value = "text", hide_possible_values = true)]
    pub(crate) format: ReportFormat,
    /// Write the report to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub(crate) output: Option<std::path::PathBuf>,
    /// Metric to report in detail: its per-cell table (CV, robust CV, min,
    /// max) and its comparisons (default: the primary metric, after every
    /// metric side by side).
    #[arg(long)]
    pub(crate) metric: Option<String>,
    /// Metrics side by side, one table, e.g. `bogo-ops/s,user,sys,wall`
    /// (default: every metric the run has).
    #[arg(long, value_name = "A,B,...", value_delimiter = ',')]
    pub(crate) metrics: Option<Vec<String>>,
    /// Practical threshold as a fraction or percentage (0.02 or 2%).
    #[arg(long, value_parser = parse_fraction)]
    pub(crate) threshold: Option<f64>,
    /// Family-wise error rate (0.05 or 5%; default: the experiment's `alpha`).
    #[arg(long, value_parser = parse_fraction)]
    pub(crate) alpha: Option<f64>,
    /// Do not adjust for multiple comparisons (the header says so).
    #[arg(long)]
    pub(crate) no_adjust: bool,
    /// Exit 1 when a comparison is a regression (`regression`) or any change (`change`).
    #[arg(long, value_name = "WHAT", value_enum)]
    pub(crate) fail_on: Option<FailOn>,
}

/// `0.02`, `2%`.
#[derive(Debug, clap::Args)]
pub(crate) struct ReportArgs {
    /// Run id (default: the latest run).
    pub(crate) run: Option<i64>,
    /// Pivot: factor whose levels are rows.
    #[arg(long, value_name = "FACTOR")]
    pub(crate) rows: Option<String>,
    /// Pivot: factor whose levels are columns (deltas against its baseline).
    #[arg(long, value_name = "FACTOR")]
    pub(crate) cols: Option<String>,
    /// Pivot: baseline level of the column factor, `FACTOR=LEVEL`.
    #[arg(long, value_name = "FACTOR=LEVEL")]
    pub(crate) baseline: Option<String>,
    /// Pivot: ratio between two levels of a row factor, `FACTOR=A/B` (e.g. selinux=disabled/enforcing).
    #[arg(long, value_name = "FACTOR=A/B")]
    pub(crate) ratio: Option<String>,
    /// Seed of the bootstrap for differences of ratios.
    #[arg(long, default_value_t = 1)]
    pub(crate) bootstrap_seed: u64,
    #[command(flatten)]
    pub(crate) options: ReportOptionsArgs,
    #[command(flatten)]
    pub(crate) db: DbArgs,
}

pub(crate) fn run(args: &ReportArgs) -> Result<ExitCode, CliError> {
    let store = args.db.open_read_only()?;
    let run = args.db.run_or_latest(&store, args.run)?;
    if args.rows.as_deref() == Some("host")
        && args.cols.is_none()
        && args.ratio.is_none()
        && let Some(code) = crate::commands::hosts::print_host_rows(&store, run, &args.options)?
    {
        return Ok(code);
    }
    if args.rows.is_some() || args.cols.is_some() || args.ratio.is_some() {
        return print_pivot(&store, run, args);
    }
    print_run_report(&store, run, &args.options)
}

/// Print a run's report in the requested format; the exit code follows `--fail-on`.
pub(crate) fn print_run_report(
    store: &dyn Store,
    run: RunId,
    options: &ReportOptionsArgs,
) -> Result<ExitCode, CliError> {
    let html = options.format == ReportFormat::Html;
    let format = options
        .format
        .table()
        .unwrap_or(verdict_report::Format::Text);
    let (record, experiment, samples) = loaded(store, run)?;
    let info = run_info(store, &record, &experiment)?;
    let report_options = RunReportOptions {
        metric: options.metric.clone(),
        metrics: options.metrics.clone(),
        threshold: options.threshold,
        alpha: options.alpha.unwrap_or(experiment.sampling.alpha),
        adjust: !options.no_adjust,
    };
    let environment: &Environment = &record.environment_start;
    let report = RunReport::build(info, &experiment, &samples, environment, &report_options)
        .map_err(CliError::input)?;
    let report = with_boots(store, run, report, &experiment, &samples, &report_options)?;
    if html {
        let page = verdict_report::html::render_run(
            &report,
            &verdict_report::html::cell_series(&experiment, &samples, &report.metric.name),
            &environment_columns(&record),
        );
        emit(&page, options.output.as_deref())?;
    } else {
        let warnings = overlaps_of(store, &[run].into())?;
        let rendered = if format == verdict_report::Format::Json {
            String::new()
        } else {
            report.render(format)
        };
        print_with_warnings(
            &rendered,
            &report,
            format,
            &warnings,
            serde_json::Map::new(),
            options.output.as_deref(),
        )?;
    }
    let verdicts = report
        .comparisons
        .iter()
        .flat_map(|comparisons| comparisons.comparisons.iter().map(|row| row.verdict));
    Ok(exit_code(options.fail_on, verdicts))
}

/// The run's environment at its start and, when recorded, its end (the
/// HTML page shows them side by side when they differ).
fn environment_columns(
    record: &verdict_store::RunRecord,
) -> Vec<verdict_report::html::EnvironmentColumn> {
    let mut columns = vec![verdict_report::html::EnvironmentColumn {
        title: format!("run {} start", record.id),
        lines: verdict_report::run::environment_lines(&record.environment_start),
    }];
    if let Some(end) = &record.environment_end {
        columns.push(verdict_report::html::EnvironmentColumn {
            title: format!("run {} end", record.id),
            lines: verdict_report::run::environment_lines(end),
        });
    }
    columns
}

fn print_pivot(store: &dyn Store, run: RunId, args: &ReportArgs) -> Result<ExitCode, CliError> {
    let html = args.options.format == ReportFormat::Html;
    let format = args
        .options
        .format
        .table()
        .unwrap_or(verdict_report::Format::Text);
    let (record, experiment, samples) = loaded(store, run)?;
    let info = run_info(store, &record, &experiment)?;
    let options = PivotOptions {
        rows: args.rows.clone(),
        cols: args.cols.clone(),
        baseline: args.baseline.clone(),
        ratio: args.ratio.clone(),
        metric: args.options.metric.clone(),
        threshold: args.options.threshold,
        alpha: args.options.alpha.unwrap_or(experiment.sampling.alpha),
        adjust: !args.options.no_adjust,
        bootstrap_seed: args.bootstrap_seed,
    };
    let pivot =
        PivotReport::build(info, &experiment, &samples, &options).map_err(CliError::input)?;
    if html {
        let page = verdict_report::html::render_pivot(
            &pivot,
            &verdict_report::html::cell_series(&experiment, &samples, &pivot.metric),
            &environment_columns(&record),
        );
        emit(&page, args.options.output.as_deref())?;
    } else {
        let warnings = overlaps_of(store, &[run].into())?;
        let rendered = if format == verdict_report::Format::Json {
            String::new()
        } else {
            pivot.render(format)
        };
        print_with_warnings(
            &rendered,
            &pivot,
            format,
            &warnings,
            serde_json::Map::new(),
            args.options.output.as_deref(),
        )?;
    }
    Ok(exit_code(args.options.fail_on, pivot.verdicts()))
}

/// A run on a VM target: its boots (spread, failures with their console
/// tails, the accelerator) and boot levels compared boot by boot.
fn with_boots(
    store: &dyn Store,
    run: RunId,
    report: RunReport,
    experiment: &verdict_model::Experiment,
    samples: &[verdict_model::Sample],
    options: &RunReportOptions,
) -> Result<RunReport, CliError> {
    let rows = store.boots(run).map_err(CliError::internal)?;
    if rows.is_empty() {
        return Ok(report);
    }
    let sample_boot: std::collections::BTreeMap<u32, u32> = samples
        .iter()
        .filter_map(|sample| {
            verdict_store::BootRow::of_sample(&rows, sample.sequence)
                .map(|boot| (sample.sequence, boot))
        })
        .collect();
    let boots: Vec<verdict_report::boots::ReportBoot> = rows
        .into_iter()
        .map(|row| verdict_report::boots::ReportBoot {
            id: row.id,
            level_key: row.level_key,
            status: row.status,
            accelerator: row.accelerator,
            kernel_release: row.kernel_release,
            message: row.message,
            console_tail: row.console_tail,
        })
        .collect();
    Ok(report.with_boots(experiment, samples, &boots, &sample_boot, options))
}

#[cfg(test)]
mod tests {
    #[test]
    fn fractions_and_percentages() {
        use crate::common::parse_fraction;
        assert_eq!(parse_fraction("2%"), Ok(0.02));
        assert_eq!(parse_fraction("0.05"), Ok(0.05));
        assert_eq!(parse_fraction("5%"), parse_fraction("0.05"));
        assert!(parse_fraction("150%").is_err());
        assert!(parse_fraction("0").is_err());
        assert!(parse_fraction("abc").is_err());
    }
}
