//! `verdict report [RUN_ID]`: rebuild a run's report from the store alone
//! (nothing is re-run): per-cell summary, comparisons with verdicts, and the
//! failed iterations; or a pivot with `--rows/--cols`.

use crate::common::{DbArgs, ReportFormat, emit};
use crate::error::CliError;
use crate::fail_on::exit_code;
use crate::run_report::{ReportOptionsArgs, environment_columns, print_run_report};
use crate::stored_run::{loaded, run_info};
use crate::warnings::{overlaps_of, print_with_warnings};
use std::process::ExitCode;
use verdict_model::RunId;
use verdict_report::pivot::{PivotOptions, PivotReport, RatioSpec};
use verdict_store::Store;

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
    // The latest run of a run made on several hosts: the whole group.
    if args.run.is_none() && args.rows.is_none() && args.cols.is_none() && args.ratio.is_none() {
        let members =
            verdict_engine::host_group::group_members(&store, run).map_err(CliError::internal)?;
        if members.len() > 1 {
            return crate::hosts::print_group(&store, &members, members.len(), &args.options);
        }
    }
    if args.rows.as_deref() == Some("host")
        && args.cols.is_none()
        && args.ratio.is_none()
        && let Some(code) = crate::hosts::print_host_rows(&store, run, &args.options)?
    {
        return Ok(code);
    }
    if args.rows.is_some() || args.cols.is_some() || args.ratio.is_some() {
        return print_pivot(&store, run, args);
    }
    print_run_report(&store, run, &args.options)
}

/// `--ratio FACTOR=A/B` as the pivot takes it.
fn ratio_spec(text: &str) -> Result<RatioSpec, CliError> {
    let expected = || CliError::input(format!("--ratio `{text}`: expected FACTOR=A/B"));
    let (factor, levels) = text.split_once('=').ok_or_else(expected)?;
    let (numerator, denominator) = levels.split_once('/').ok_or_else(expected)?;
    Ok(RatioSpec {
        factor: factor.to_string(),
        numerator: numerator.to_string(),
        denominator: denominator.to_string(),
    })
}

fn print_pivot(store: &dyn Store, run: RunId, args: &ReportArgs) -> Result<ExitCode, CliError> {
    let html = args.options.format == ReportFormat::Html;
    let format = args
        .options
        .format
        .table()
        .unwrap_or(verdict_report::Format::Text);
    let (record, experiment, table) = loaded(store, run)?;
    let info = run_info(store, &record, &experiment)?;
    let options = PivotOptions {
        rows: args.rows.clone(),
        cols: args.cols.clone(),
        baseline: args.baseline.clone(),
        ratio: args.ratio.as_deref().map(ratio_spec).transpose()?,
        metric: args.options.metric.clone(),
        threshold: args.options.threshold,
        alpha: args.options.alpha.unwrap_or(experiment.sampling.alpha),
        adjust: !args.options.no_adjust,
        bootstrap_seed: args.bootstrap_seed,
    };
    let pivot =
        PivotReport::build_from(info, &experiment, &table, &options).map_err(CliError::input)?;
    let provenance = crate::run_report::stored_provenance(store, &record)?;
    if html {
        let page = verdict_report::html::render_pivot(
            &pivot,
            &verdict_report::html::cell_series_of(&experiment, &table, &pivot.metric),
            &environment_columns(&record, Some(&provenance)),
        );
        emit(&page, args.options.output.as_deref())?;
    } else {
        let warnings = overlaps_of(store, &[run].into())?;
        let rendered = match format {
            verdict_report::Format::Json => String::new(),
            verdict_report::Format::Email => {
                verdict_report::email::pivot(&pivot, Some(&provenance))
            }
            _ => verdict_report::pivot::render_within(&pivot, format, args.options.width.columns()),
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
