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
use crate::warnings::{Warning, print_with_warnings, side_warnings};
use std::process::ExitCode;
use verdict_analysis::compare::{COMPARE_SCHEMA, CompareDocument};
use verdict_analysis::schema::sorted;
use verdict_analysis::sequential::SequentialCompareReport;
use verdict_engine::compare::{
    is_stored, load_side, named_run, source, stored_configs, stored_source,
};
use verdict_model::Better;
use verdict_report::Format;
use verdict_report::compare::{ComparisonInput, comparison_rows};
use verdict_report::sources::Source;
use verdict_store::{Database, Store};

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
    /// text, markdown, csv, json (`verdict.compare/v1`), html (one self-contained page with plots)
    /// or email (every line at most 80 columns, with what each stored side ran on).
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
    pub(crate) width: crate::common::WidthArgs,
    #[command(flatten)]
    pub(crate) db: DbArgs,
}

pub(crate) fn run(args: &CompareArgs) -> Result<ExitCode, CliError> {
    let html = args.format == ReportFormat::Html;
    let format = args.format.table().unwrap_or(Format::Text);
    if html && (args.sequential || args.config_diff.is_some()) {
        return Err(CliError::input(
            "--format html does not show --sequential or --config-diff yet; use text or json for those",
        ));
    }
    let (column, metric) = (args.column.as_deref(), args.metric.as_deref());
    let (baseline, candidate, store) = if is_stored(&args.baseline) || is_stored(&args.candidate) {
        let store = args.db.open_read_only()?;
        let baseline = load_side(&args.baseline, column, metric, Some(&store))?;
        let candidate = load_side(&args.candidate, column, metric, Some(&store))?;
        (baseline, candidate, Some(store))
    } else {
        // Large files parse on both cores at once.
        let (baseline, candidate) = rayon::join(
            || load_side(&args.baseline, column, None, None),
            || load_side(&args.candidate, column, None, None),
        );
        (baseline?, candidate?, None)
    };
    let sources = [
        source("baseline", &args.baseline, &baseline),
        source("candidate", &args.candidate, &candidate),
    ];
    let spans = [&baseline, &candidate].map(|series| stored_source(series).map(|s| &s.span));
    let warnings = side_warnings(store.as_ref().map(|store| store as &dyn Store), spans)?;
    let default_direction = match args.better {
        Some(BetterArgument::Higher) => Better::Higher,
        Some(BetterArgument::Lower) | None => Better::Lower,
    };
    let pairing = verdict_engine::compare::pair(
        [&baseline, &candidate],
        [&args.baseline, &args.candidate],
        default_direction,
        args.threshold,
    )?;
    for note in &pairing.notes {
        eprintln!("verdict: note: {note}");
    }
    let inputs: Vec<ComparisonInput> = pairing.pairs.iter().map(|pair| pair.input()).collect();
    if args.sequential {
        return sequential(&inputs, args, format, &sources, &warnings);
    }
    let report = comparison_rows(&inputs, args.alpha, !args.no_adjust).map_err(CliError::input)?;
    if html {
        let page = verdict_report::html::render_compare(
            &report,
            &[
                ("baseline".to_string(), args.baseline.clone()),
                ("candidate".to_string(), args.candidate.clone()),
            ],
            &pairing
                .pairs
                .iter()
                .map(|pair| verdict_report::html::ComparedValues {
                    name: pair.name.clone(),
                    baseline: pair.baseline.values.clone(),
                    candidate: pair.candidate.values.clone(),
                })
                .collect::<Vec<_>>(),
            &side_environments(args, store.as_ref())?,
        );
        emit(&page, args.output.as_deref())?;
    } else {
        let config_diff = match &args.config_diff {
            Some(pattern) => {
                let [old, new] = stored_configs(
                    store.as_ref().map(|store| store as &dyn Store),
                    [&args.baseline, &args.candidate],
                    [&baseline, &candidate],
                )?;
                let (old, new) = ((&*old.0, &*old.1), (&*new.0, &*new.1));
                Some(
                    verdict_kconfig::named_difference(old, new, pattern)
                        .map_err(CliError::input)?,
                )
            }
            None => None,
        };
        let mut rendered = match format {
            Format::Json => String::new(),
            Format::Email => verdict_report::email::compare(
                &report,
                &sources,
                config_diff
                    .as_ref()
                    .map(|difference| difference.text.as_str()),
                &side_provenance(store.as_ref(), &sources)?,
            ),
            _ => verdict_report::compare::render_within(&report, format, args.width.columns()),
        };
        let config_diff = config_diff.map(|difference| {
            if format != Format::Email {
                rendered = format!("{rendered}\n{}", difference.text);
            }
            difference.document
        });
        if format != Format::Email {
            rendered.push_str(&verdict_report::sources::render(&sources, format));
        }
        let document = CompareDocument {
            report: &report,
            config_diff,
            sources: &sources,
        };
        print_with_warnings(
            &rendered,
            &document,
            format,
            &warnings,
            serde_json::Map::new(),
            args.output.as_deref(),
        )?;
    }
    Ok(exit_code(
        args.fail_on,
        report.comparisons.iter().map(|row| row.verdict),
    ))
}

/// What each stored side ran on: its last run's provenance.
fn side_provenance(
    store: Option<&Database>,
    sources: &[Source],
) -> Result<Vec<verdict_report::email::SideProvenance>, CliError> {
    let Some(store) = store else {
        return Ok(Vec::new());
    };
    let mut sides = Vec::new();
    for source in sources {
        let verdict_report::sources::SourceKind::Selection { runs, .. } = &source.kind else {
            continue;
        };
        let Some(&last) = runs.last() else {
            continue;
        };
        let record = store
            .run(verdict_model::RunId(last))
            .map_err(CliError::internal)?;
        let mut provenance = crate::run_report::stored_provenance(store, &record)?;
        // A booted run: only the guests of the boot levels the side selects.
        let levels = verdict_engine::compare::parse_selection(&source.spec)
            .map(|selection| selection.levels)
            .unwrap_or_default();
        provenance.machines.retain(|machine| {
            machine.level.as_deref().is_none_or(|key| {
                key.split(',').all(|pair| {
                    pair.split_once('=').is_none_or(|(factor, level)| {
                        levels
                            .iter()
                            .all(|(wanted, value)| wanted != factor || value == level)
                    })
                })
            })
        });
        sides.push((
            format!("{} `{}` (run {last})", source.side, source.spec),
            provenance,
        ));
    }
    Ok(sides)
}

/// The recorded environments of the sides that name a stored run
/// (`RUN` or `RUN:factor=level`), for the HTML page's side-by-side table.
fn side_environments(
    args: &CompareArgs,
    store: Option<&Database>,
) -> Result<Vec<verdict_report::html::EnvironmentColumn>, CliError> {
    let sides = [("baseline", &args.baseline), ("candidate", &args.candidate)];
    let named = sides
        .into_iter()
        .filter_map(|(side, spec)| Some((side, store?, named_run(spec)?)));
    named
        .map(|(side, store, run)| {
            let record = store.run(run).map_err(CliError::input)?;
            Ok(verdict_report::html::EnvironmentColumn {
                title: format!("{side}: run {run} ({})", record.host),
                lines: verdict_report::run::environment_lines(&record.environment_start),
            })
        })
        .collect()
}

/// `--better`: the command-line spelling of a metric's direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum BetterArgument {
    Higher,
    Lower,
}

fn sequential(
    inputs: &[ComparisonInput],
    args: &CompareArgs,
    format: Format,
    sources: &[Source],
    warnings: &[Warning],
) -> Result<ExitCode, CliError> {
    let rows =
        verdict_report::sequential::sequential_rows(inputs, args.max, args.alpha, !args.no_adjust)
            .map_err(CliError::input)?;
    let (rendered, document) = if format == Format::Json {
        let document = SequentialCompareReport {
            schema: COMPARE_SCHEMA,
            mode: "sequential",
            alpha: args.alpha,
            comparisons: rows.clone(),
            sources: sources.to_vec(),
        };
        (
            String::new(),
            sorted(&document).map_err(CliError::internal)?,
        )
    } else {
        let heading = rows.first().map_or(String::new(), |first| {
            format!("sequential replay: {}\n\n", first.procedure)
        });
        let table = verdict_report::sequential::render(&rows, format);
        let lines = verdict_report::sources::render(sources, format);
        let text = format!("{heading}{table}{lines}");
        if format == Format::Email {
            (verdict_report::email::fit(&text), serde_json::Value::Null)
        } else {
            (text, serde_json::Value::Null)
        }
    };
    print_with_warnings(
        &rendered,
        &document,
        format,
        warnings,
        serde_json::Map::new(),
        args.output.as_deref(),
    )?;
    Ok(exit_code(args.fail_on, rows.iter().map(|row| row.verdict)))
}
