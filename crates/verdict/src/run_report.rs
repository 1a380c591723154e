//! The report a run ends with, and `verdict report RUN`'s: the options
//! `report`, `run` and `ab` share (`--format`, `--metric`, `--fail-on`,
//! ...), building it from the store (with a VM run's boots) and printing
//! it in the requested format; the exit code follows `--fail-on`. Shared
//! by the commands and the host and VM launchers, so none of them imports
//! another command.

use crate::common::{ReportFormat, emit, parse_fraction};
use crate::error::CliError;
use crate::fail_on::{FailOn, exit_code};
use crate::stored_run::{loaded, run_info};
use crate::warnings::{overlaps_of, print_with_warnings};
use std::process::ExitCode;
use verdict_model::{Environment, RunId};
use verdict_report::RunReport;
use verdict_report::run::RunReportOptions;
use verdict_report::samples::SampleTable;
use verdict_store::{BootRow, Store};

/// Options shared by `report` and by `run`/`ab` (which print a report at
/// the end).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ReportOptionsArgs {
    /// text, markdown, csv, json (`verdict.report/v1`), html (one self-contained page with plots)
    /// or email (plain text, every line at most 80 columns, with what ran and how to reproduce it).
    #[arg(long, value_enum, default_value = "text", hide_possible_values = true)]
    pub(crate) format: ReportFormat,
    #[command(flatten)]
    pub(crate) width: crate::common::WidthArgs,
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

impl ReportOptionsArgs {
    /// The report's options for a run of `experiment` (its `alpha` unless
    /// `--alpha` is given).
    pub(crate) fn resolve(&self, experiment: &verdict_model::Experiment) -> RunReportOptions {
        RunReportOptions {
            metric: self.metric.clone(),
            metrics: self.metrics.clone(),
            threshold: self.threshold,
            alpha: self.alpha.unwrap_or(experiment.sampling.alpha),
            adjust: !self.no_adjust,
        }
    }
}

/// A stored run's report as every command builds it: the run's figures,
/// its boots (a booted run) and its provenance; with the record, the
/// experiment and the samples it came from.
pub(crate) struct BuiltReport {
    pub(crate) report: RunReport,
    pub(crate) record: verdict_store::RunRecord,
    pub(crate) experiment: verdict_model::Experiment,
    pub(crate) table: SampleTable,
}

/// Builds run `run`'s report (see [`BuiltReport`]).
pub(crate) fn build_report(
    store: &dyn Store,
    run: RunId,
    options: &ReportOptionsArgs,
) -> Result<BuiltReport, CliError> {
    let (record, experiment, table) = loaded(store, run)?;
    let info = run_info(store, &record, &experiment)?;
    let report_options = options.resolve(&experiment);
    let environment: &Environment = &record.environment_start;
    let report = RunReport::build_from(info, &experiment, &table, environment, &report_options)
        .map_err(CliError::input)?;
    let builds =
        verdict_engine::boot_builds::stored_records(store, run).map_err(CliError::internal)?;
    let report = report.with_kernel_builds(builds);
    let boots = report_boots(store, run)?;
    let report = with_boots(report, &boots, &experiment, &table, &report_options);
    let report = with_work(store, run, report, &record)?;
    let provenance = provenance_of(store, &record, &boots.1)?;
    Ok(BuiltReport {
        report: report.with_provenance(provenance),
        record,
        experiment,
        table,
    })
}

/// What exactly ran in the stored run `record` (its commit, machines,
/// boots and the command that reproduces it); `boots` are its boots as
/// the report reads them.
pub(crate) fn provenance_of(
    store: &dyn Store,
    record: &verdict_store::RunRecord,
    boots: &[verdict_report::boots::ReportBoot],
) -> Result<verdict_report::provenance::Provenance, CliError> {
    let commit = match store
        .measured_commit(record.id)
        .map_err(CliError::internal)?
    {
        Some(commit) => Some(commit),
        None => store
            .annotations(record.id)
            .map_err(CliError::internal)?
            .get("bisect")
            .and_then(|bisect| bisect["commit"].as_str())
            .map(str::to_string),
    };
    Ok(verdict_report::provenance::Provenance::build(
        verdict_report::provenance::ProvenanceInput {
            commit: commit.as_deref(),
            command_line: &record.command_line,
            experiment_sha256: &record.experiment_sha256,
            seed: record.seed,
            environment: &record.environment_start,
            boots,
        },
    ))
}

/// [`provenance_of`] a stored run, its boots read from the store.
pub(crate) fn stored_provenance(
    store: &dyn Store,
    record: &verdict_store::RunRecord,
) -> Result<verdict_report::provenance::Provenance, CliError> {
    provenance_of(store, record, &report_boots(store, record.id)?.1)
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
    let BuiltReport {
        report,
        record,
        experiment,
        table,
    } = build_report(store, run, options)?;
    if html {
        let page = verdict_report::html::render_run(
            &report,
            &verdict_report::html::cell_series_of(&experiment, &table, &report.metric.name),
            &environment_columns(&record, report.provenance.as_ref()),
        );
        emit(&page, options.output.as_deref())?;
    } else {
        let warnings = overlaps_of(store, &[run].into())?;
        let rendered = if format == verdict_report::Format::Json {
            String::new()
        } else {
            verdict_report::run::render_within(&report, format, options.width.columns())
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
    explain_pointer(store, run, report.comparisons.is_some());
    let verdicts = report
        .comparisons
        .iter()
        .flat_map(|comparisons| comparisons.comparisons.iter().map(|row| row.verdict));
    Ok(exit_code(options.fail_on, verdicts))
}

/// One line on standard error, under a report whose run has comparisons
/// and captured monitors or profiles: where to see what changed beside
/// the metric. Standard output (the report document) is left alone.
pub(crate) fn explain_pointer(store: &dyn Store, run: RunId, comparisons: bool) {
    if comparisons && store.detail_counts(run).is_ok_and(|counts| counts.any()) {
        eprintln!(
            "verdict: where the time went (system counters, profiles): verdict explain {run}"
        );
    }
}

/// The environments the HTML page shows: for a booted run each boot
/// level's guest first (the workload ran there), then the controller's at
/// the run's start and end, labelled as the controller's; else the run's
/// environment at its start and, when recorded, its end (side by side
/// when they differ).
pub(crate) fn environment_columns(
    record: &verdict_store::RunRecord,
    provenance: Option<&verdict_report::provenance::Provenance>,
) -> Vec<verdict_report::html::EnvironmentColumn> {
    let controller = provenance.is_some_and(|provenance| provenance.controller.is_some());
    let prefix = if controller { "controller: " } else { "" };
    let mut columns: Vec<verdict_report::html::EnvironmentColumn> = provenance
        .filter(|_| controller)
        .map(|provenance| {
            provenance
                .machines
                .iter()
                .map(|machine| verdict_report::html::EnvironmentColumn {
                    title: machine.title(),
                    lines: verdict_report::provenance::facts(machine),
                })
                .collect()
        })
        .unwrap_or_default();
    columns.push(verdict_report::html::EnvironmentColumn {
        title: format!("{prefix}run {} start", record.id),
        lines: verdict_report::run::environment_lines(&record.environment_start),
    });
    if let Some(end) = &record.environment_end {
        columns.push(verdict_report::html::EnvironmentColumn {
            title: format!("{prefix}run {} end", record.id),
            lines: verdict_report::run::environment_lines(end),
        });
    }
    columns
}

/// A run's boots as stored and as the report reads them (none for a run
/// that booted nothing).
fn report_boots(
    store: &dyn Store,
    run: RunId,
) -> Result<(Vec<BootRow>, Vec<verdict_report::boots::ReportBoot>), CliError> {
    let rows = store.boots(run).map_err(CliError::internal)?;
    let boots = rows
        .iter()
        .cloned()
        .map(|row| verdict_report::boots::ReportBoot {
            id: row.id,
            level_key: row.level_key,
            status: row.status,
            accelerator: row.accelerator,
            kernel_release: row.kernel_release,
            message: row.message,
            console_tail: row.console_tail,
            environment: row.environment,
        })
        .collect();
    Ok((rows, boots))
}

/// A run on a VM target: its boots (spread, failures with their console
/// tails, the accelerator) and boot levels compared boot by boot.
fn with_boots(
    report: RunReport,
    (rows, boots): &(Vec<BootRow>, Vec<verdict_report::boots::ReportBoot>),
    experiment: &verdict_model::Experiment,
    table: &SampleTable,
    options: &RunReportOptions,
) -> RunReport {
    if rows.is_empty() {
        return report;
    }
    let sample_boot: std::collections::BTreeMap<u32, u32> = table
        .cells()
        .iter()
        .flat_map(|cell| &cell.sequences)
        .filter_map(|&sequence| BootRow::of_sample(rows, sequence).map(|boot| (sequence, boot)))
        .collect();
    report.with_boots(experiment, table, boots, &sample_boot, options)
}

/// A detached run measured by `verdict work`: the hosts its samples ran
/// on and the blocks taken over (the run's recorded host is where it was
/// detached).
fn with_work(
    store: &dyn Store,
    run: RunId,
    report: RunReport,
    record: &verdict_store::RunRecord,
) -> Result<RunReport, CliError> {
    let work = store.work_record(run).map_err(CliError::internal)?;
    if work.blocks.is_empty() {
        return Ok(report);
    }
    Ok(report.with_work(crate::stored_run::work_section(&work, &record.host)))
}
