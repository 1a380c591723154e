//! `verdict explain [RUN]`: where the time went. For each comparison of a
//! stored run, the monitors (system counters per iteration) and the
//! profiles' symbols that changed, with intervals, false discoveries
//! controlled over all rows (verdict-engine reads, verdict-analysis
//! computes, verdict-report renders). Parses, calls, prints; never re-runs
//! anything, never decides `--fail-on` (monitors are not verdicts).

use std::path::PathBuf;
use std::process::ExitCode;

use verdict_engine::explain::{explain, explain_against};
use verdict_report::Format;
use verdict_report::explain::{ExplainOptions, FdrMethod};
use verdict_store::Store;

use crate::common::{DbArgs, emit, parse_fraction};
use crate::error::CliError;

/// `--format` of `explain`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ExplainFormat {
    Text,
    #[value(alias = "md")]
    Markdown,
    Json,
    /// A self-contained page with a differential flame graph.
    Html,
    /// Plain text within 80 columns for a mailing list, with what ran.
    Email,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ExplainArgs {
    /// Run id (default: the latest run).
    pub(crate) run: Option<i64>,
    /// Compare RUN with this run instead of RUN's own comparisons (two runs of one cell each, e.g. a bisection's first bad commit and the last good commit before it).
    #[arg(long, value_name = "RUN")]
    pub(crate) baseline: Option<i64>,
    /// Only this comparison, named as `verdict report` prints it (e.g. `level=more vs base`).
    #[arg(long, value_name = "NAME")]
    pub(crate) comparison: Option<String>,
    /// The false discovery rate controlled over each comparison's rows (Benjamini-Hochberg).
    #[arg(long, value_name = "RATE", default_value = "0.05", value_parser = parse_fraction)]
    pub(crate) q: f64,
    /// Benjamini-Yekutieli instead of Benjamini-Hochberg: valid under any dependence between rows, less power.
    #[arg(long)]
    pub(crate) any_dependence: bool,
    /// Show every tested row, not only the discoveries.
    #[arg(long)]
    pub(crate) all: bool,
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: ExplainFormat,
    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) db: DbArgs,
}

pub(crate) fn run(args: &ExplainArgs) -> Result<ExitCode, CliError> {
    let store = args.db.open_read_only()?;
    let run = args.db.run_or_latest(&store, args.run)?;
    let options = ExplainOptions {
        q: args.q,
        all: args.all,
        comparison: args.comparison.clone(),
        method: if args.any_dependence {
            FdrMethod::BenjaminiYekutieli
        } else {
            FdrMethod::BenjaminiHochberg
        },
    };
    let report = match args.baseline {
        None => explain(&store, run, &options),
        Some(baseline) => explain_against(&store, run, verdict_model::RunId(baseline), &options),
    }?;
    let rendered = match args.format {
        ExplainFormat::Text => verdict_report::explain::render(&report, Format::Text),
        ExplainFormat::Markdown => verdict_report::explain::render(&report, Format::Markdown),
        ExplainFormat::Json => verdict_report::explain::render(&report, Format::Json),
        ExplainFormat::Html => verdict_report::html::render_explain(&report),
        ExplainFormat::Email => {
            let record = store.run(run).map_err(CliError::input)?;
            let provenance = crate::run_report::stored_provenance(&store, &record)?;
            verdict_report::email::explain(&report, Some(&provenance))
        }
    };
    emit(&rendered, args.output.as_deref())?;
    Ok(ExitCode::SUCCESS)
}
