//! `verdict check --baseline SELECTION --experiment FILE`: run the
//! experiment on the current tree and compare its primary metric with a
//! stored baseline. Exit codes follow `git bisect run`: 0 like the baseline
//! (equivalent, or a change whose interval lies entirely within the
//! threshold), 1 changed (a regression or improvement of at least the
//! threshold), 125 could not decide (size unclear, inconclusive) or could
//! not run. A building block for plain `git bisect run`. With `--host`,
//! the current tree's build output is measured on that host
//! (`remote_build`).

use crate::common::{DbArgs, cancel_on_interrupt, parse_fraction, tool_version};
use crate::common::{load_experiment, random_seed};
use crate::error::CliError;
use crate::remote_build::RemoteBuildArgs;
use std::path::PathBuf;
use std::process::ExitCode;
use verdict_engine::StartOptions;
use verdict_engine::compare::{load_selection, parse_selection};
use verdict_engine::machine::EnvironmentSource;
use verdict_model::{ExitClass, RunStatus};
use verdict_report::Format;
use verdict_report::compare::{ComparisonInput, comparison_rows};
use verdict_stats::verdict::{Magnitude, Verdict};
use verdict_store::Store;

#[derive(Debug, clap::Args)]
pub(crate) struct CheckArgs {
    /// Stored baseline: RUN, RUN:factor=level,..., or factor=level,...
    #[arg(long)]
    pub(crate) baseline: String,
    /// Experiment to run on the current tree (one cell).
    #[arg(long, value_name = "FILE")]
    pub(crate) experiment: PathBuf,
    /// Iterations (overrides the file).
    #[arg(short = 'n', long = "iterations")]
    pub(crate) iterations: Option<u32>,
    /// Sample adaptively until decided.
    #[arg(long)]
    pub(crate) until_decided: bool,
    /// Practical threshold (0.02 or 2%; default: the experiment's).
    #[arg(long, value_parser = parse_fraction)]
    pub(crate) threshold: Option<f64>,
    /// Two-sided error rate (0.05 or 5%).
    #[arg(long, default_value_t = 0.05, value_parser = parse_fraction)]
    pub(crate) alpha: f64,
    #[command(flatten)]
    pub(crate) remote: RemoteBuildArgs,
    #[command(flatten)]
    pub(crate) db: DbArgs,
}

pub(crate) fn run(args: &CheckArgs) -> Result<ExitCode, CliError> {
    match check(args) {
        Ok(code) => Ok(code),
        // For `git bisect run`, "could not run" must be 125, never 2.
        Err(CliError::Input(message) | CliError::Internal(message)) => {
            eprintln!("verdict: check could not decide: {message}");
            Ok(ExitCode::from(ExitClass::Skip))
        }
        Err(error) => Err(error),
    }
}

fn check(args: &CheckArgs) -> Result<ExitCode, CliError> {
    let store = args.db.open()?;
    let baseline = baseline_values(&store, &args.baseline)?;
    let crate::common::LoadedExperiment {
        experiment, text, ..
    } = load_experiment(&args.experiment, args.iterations, args.until_decided)?;
    if experiment.cells().len() != 1 {
        return Err(CliError::input(
            "verdict check runs one cell; remove the experiment's factors",
        ));
    }
    // With --host: the current tree's build output is copied to the host
    // and measured there (see remote_build).
    let tree = std::env::current_dir().map_err(CliError::internal)?;
    let mut machine = match crate::remote_build::from_args(&args.remote, &experiment, &tree)? {
        Some(remote) => Some(crate::remote_build::connect(
            &remote,
            &format!(
                "verdict-check-{}-{}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |elapsed| elapsed.as_millis())
            ),
        )?),
        None => None,
    };
    let experiment = match machine.as_mut() {
        Some(machine) => machine.stage(&experiment, &tree, "tree")?,
        None => experiment,
    };
    let result = measure_and_compare(args, &store, baseline, experiment, text, machine.as_ref());
    if let Some(machine) = &machine {
        machine.remove_all();
    }
    result
}

fn measure_and_compare(
    args: &CheckArgs,
    store: &verdict_store::Database,
    baseline: Vec<f64>,
    experiment: verdict_model::Experiment,
    text: String,
    machine: Option<&crate::remote_build::RemoteMachine>,
) -> Result<ExitCode, CliError> {
    // The host's environment, read on the host at the run's start and end.
    let capture_remote = move || {
        machine
            .map(|machine| machine.environment())
            .unwrap_or_default()
    };
    let engine = match machine {
        Some(machine) => verdict_engine::Engine {
            executor: machine.target(),
            store,
            cancel: cancel_on_interrupt(),
            environment: &capture_remote,
        },
        None => crate::common::system_engine(store, cancel_on_interrupt()),
    };
    let metric = experiment.primary_metric().clone();
    let threshold = args
        .threshold
        .or(metric.threshold)
        .unwrap_or(experiment.sampling.threshold);
    let hosts: Vec<String> = machine
        .map(|machine| machine.target().host().to_string())
        .into_iter()
        .collect();
    let placement = experiment.target.placement(&hosts);
    let options = StartOptions {
        seed: experiment.sampling.seed.unwrap_or_else(random_seed),
        experiment,
        experiment_text: text,
        kind: verdict_model::RunKind::Check,
        command_line: std::env::args().collect(),
        tool_version: tool_version(),
        bisect: None,
        placement,
    };
    // The one start path of every run on one machine (`launch`).
    let remote_source = machine.map(|machine| EnvironmentSource::new(machine.target()));
    let source = remote_source
        .as_ref()
        .unwrap_or_else(|| verdict_engine::machine::local());
    let summary =
        verdict_engine::launch::start_on(&engine, &options, source, None, &crate::launch::Printed)?;
    if summary.status != RunStatus::Complete {
        return Err(CliError::Interrupted(format!(
            "check run {} interrupted",
            summary.run
        )));
    }
    let candidate: Vec<f64> = store
        .samples(summary.run)
        .map_err(CliError::internal)?
        .iter()
        .filter(|sample| sample.is_data())
        .filter_map(|sample| sample.metrics.get(&metric.name).copied())
        .collect();
    if candidate.len() < 2 {
        return Err(CliError::input(format!(
            "run {} has {} successful iterations; need at least 2",
            summary.run,
            candidate.len()
        )));
    }
    let input = ComparisonInput {
        name: format!("{} vs {}", metric.name, args.baseline),
        unit: metric.unit.clone(),
        better: metric.direction,
        threshold,
        power: verdict_stats::plan::DEFAULT_POWER,
        baseline,
        candidate,
    };
    let report = comparison_rows(&[input], args.alpha, true).map_err(CliError::input)?;
    out!("{}", verdict_report::compare::render(&report, Format::Text));
    // "Like the baseline" is practical, not statistical: a real but tiny
    // shift whose whole interval lies inside the threshold is like it.
    let row = &report.comparisons[0];
    Ok(match (row.verdict, row.magnitude) {
        (Verdict::Equivalent, _)
        | (Verdict::Regression | Verdict::Improvement, Some(Magnitude::BelowThreshold)) => {
            ExitCode::from(ExitClass::Success)
        }
        (Verdict::Regression | Verdict::Improvement, Some(Magnitude::AboveThreshold)) => {
            ExitCode::from(ExitClass::Finding)
        }
        _ => ExitCode::from(ExitClass::Skip),
    })
}

fn baseline_values(store: &dyn Store, spec: &str) -> Result<Vec<f64>, CliError> {
    let selection = parse_selection(spec).ok_or_else(|| {
        CliError::input(format!(
            "`{spec}`: expected RUN, RUN:factor=level or factor=level"
        ))
    })?;
    let values = load_selection(store, spec, selection, None)?.values;
    if values.len() < 2 {
        return Err(CliError::input(format!(
            "baseline `{spec}` has {} stored values; need at least 2",
            values.len()
        )));
    }
    Ok(values)
}
