//! `verdict doctor`: measure this machine's noise, name its sources, and say
//! how many runs a given threshold needs here. Resolves the flags into
//! `DoctorOptions`, runs verdict-doctor, prints text or JSON.
//!
//! Must not: compute anything itself (verdict-doctor does) or change the
//! machine.

use crate::error::CliError;
use std::process::ExitCode;
use verdict_doctor::{DoctorOptions, ProbeLength};
use verdict_model::ExitClass;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DoctorFormat {
    Text,
    Json,
    /// One self-contained page: checks, recommendation, the probe's samples against time.
    Html,
    /// The text report with every line at most 80 columns (long lines continue indented).
    Email,
}

#[derive(Debug, clap::Args)]
pub(crate) struct DoctorArgs {
    /// Calibrate for about 3 seconds instead of 10.
    #[arg(long, conflicts_with = "long")]
    quick: bool,
    /// Calibrate for about a minute (drift, rare interference).
    #[arg(long)]
    long: bool,
    /// Smallest relative change to detect (0.05 or 5%; default: the
    /// experiment's with --experiment, else 5%).
    #[arg(long, value_parser = crate::common::parse_fraction)]
    threshold: Option<f64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DoctorFormat::Text)]
    format: DoctorFormat,
    /// Write the report to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<std::path::PathBuf>,
    /// Also calibrate on your workload: the first cell of this experiment.
    #[arg(long, value_name = "FILE")]
    experiment: Option<std::path::PathBuf>,
    /// Iterations of the workload for --experiment.
    #[arg(long, default_value_t = 10)]
    iterations: usize,
    #[command(flatten)]
    target: crate::common::TargetArgs,
}

/// The options from the flags; with an experiment, its threshold (unless
/// `--threshold`), α and power, so doctor plans the run the experiment
/// will be (the same settings its report plans with).
fn resolve(
    args: &DoctorArgs,
    experiment: Option<&verdict_model::Experiment>,
) -> Result<DoctorOptions, CliError> {
    let defaults = DoctorOptions::default();
    let threshold = args.threshold.unwrap_or_else(|| {
        experiment.map_or(defaults.threshold, |experiment| {
            experiment
                .primary_metric()
                .threshold
                .unwrap_or(experiment.sampling.threshold)
        })
    });
    if !(threshold.is_finite() && threshold > 0.0 && threshold < 1.0) {
        return Err(CliError::input(format!(
            "--threshold must be a fraction between 0 and 1 (0.05 = 5%), got {threshold}"
        )));
    }
    let length = if args.quick {
        ProbeLength::Quick
    } else if args.long {
        ProbeLength::Long
    } else {
        ProbeLength::Default
    };
    Ok(DoctorOptions {
        length,
        threshold,
        alpha: experiment.map_or(defaults.alpha, |experiment| experiment.sampling.alpha),
        power: experiment.map_or(defaults.power, |experiment| experiment.sampling.power),
    })
}

pub(crate) fn run(args: &DoctorArgs) -> Result<ExitCode, CliError> {
    let experiment = match &args.experiment {
        Some(path) => Some(crate::common::load_experiment(path, None, false)?.experiment),
        None => None,
    };
    let options = resolve(args, experiment.as_ref())?;
    if args.target.remote() {
        return on_hosts(args);
    }
    let mut report = verdict_doctor::run_doctor(&options);
    if let Some(experiment) = &experiment {
        let calibration = verdict_engine::calibrate::calibrate(
            &verdict_exec::SystemExecutor,
            experiment,
            args.iterations,
            &verdict_exec::Cancel::new(),
            &mut crate::progress::Progress::new(&experiment.primary_metric().name),
        )
        .map_err(CliError::input)?;
        report.add_workload(&calibration.name, &calibration.iterations, &options);
    }
    let rendered = match args.format {
        DoctorFormat::Text => report.render_text(),
        DoctorFormat::Json => {
            let json = serde_json::to_string_pretty(&report).map_err(|error| {
                CliError::internal(format!("failed to encode the report: {error}"))
            })?;
            format!("{json}\n")
        }
        DoctorFormat::Html => verdict_report::html::render_doctor(&doctor_page(&report)),
        DoctorFormat::Email => verdict_report::email::fit(&report.render_text()),
    };
    crate::common::emit(&rendered, args.output.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

/// The HTML page's model, from the doctor's report as it is.
fn doctor_page(report: &verdict_doctor::DoctorReport) -> verdict_report::html::DoctorPage {
    let calibration = &report.calibration;
    let recommendation = &report.recommendation;
    let percent = |fraction: f64| format!("{:.1}%", fraction * 100.0);
    let mut advice = vec![
        ("threshold".to_string(), percent(recommendation.threshold)),
        (
            "probe CV".to_string(),
            recommendation.cv.map_or("unknown".to_string(), percent),
        ),
        (
            "runs per cell".to_string(),
            recommendation
                .runs_per_cell
                .map_or("unknown".to_string(), |runs| runs.to_string()),
        ),
        (
            "adaptive".to_string(),
            format!(
                "{}: {}",
                if recommendation.adaptive_advisable {
                    "advisable"
                } else {
                    "not needed"
                },
                recommendation.adaptive_reason
            ),
        ),
    ];
    advice.extend(
        recommendation
            .changes
            .iter()
            .map(|change| ("change".to_string(), change.clone())),
    );
    for workload in &report.workloads {
        advice.push((
            format!("workload {}", workload.name),
            match (&workload.summary, workload.runs_per_cell) {
                (Some(summary), Some(runs)) => {
                    format!("CV {}, {runs} runs per cell", percent(summary.cv))
                }
                (Some(summary), None) => format!("CV {}", percent(summary.cv)),
                _ => "no summary".to_string(),
            },
        ));
    }
    verdict_report::html::DoctorPage {
        summary: report.summary_line(),
        facts: vec![
            ("tool".to_string(), report.tool_version.clone()),
            (
                "probe".to_string(),
                format!(
                    "{} ({} rounds per iteration, {:.1} s)",
                    calibration.probe,
                    calibration.rounds_per_iteration,
                    calibration.elapsed_seconds
                ),
            ),
            (
                "total".to_string(),
                format!("{:.1} s", report.total_seconds),
            ),
        ],
        environment: vec![verdict_report::html::EnvironmentColumn {
            title: "this machine".to_string(),
            lines: verdict_report::run::environment_lines(&report.environment),
        }],
        checks: report
            .checks
            .iter()
            .map(|check| verdict_report::html::DoctorCheck {
                id: check.id.clone(),
                status: check.status.word().to_string(),
                finding: check.finding.clone(),
                evidence: check.evidence.clone(),
                fix: check.fix.clone(),
            })
            .collect(),
        recommendation: advice,
        probe: calibration.probe.clone(),
        probe_seconds: calibration
            .iterations
            .iter()
            .map(|iteration| iteration.seconds)
            .collect(),
    }
}

/// `verdict doctor --host H`: the agent on each host runs doctor there (its
/// calibration loop times the host's own CPU), one host after the other so
/// the hosts' reports do not interleave.
fn on_hosts(args: &DoctorArgs) -> Result<ExitCode, CliError> {
    use verdict_engine::remote_doctor::{HostDoctor, run_on_host};
    use verdict_exec::{Status, Target};
    if args.experiment.is_some() {
        return Err(CliError::input(
            "--experiment with --host is not supported: the experiment file is on this machine; run `verdict doctor --experiment` on the host",
        ));
    }
    let targets = verdict_engine::machine::connect_hosts(
        &args.target.hosts,
        args.target.ssh_config.as_deref(),
        args.target.reconnect_timeout,
        &crate::target::own_identity()?,
    )?;
    let doctor = HostDoctor {
        quick: args.quick,
        long: args.long,
        threshold: args.threshold,
        format: match args.format {
            DoctorFormat::Text => "text",
            DoctorFormat::Json => "json",
            DoctorFormat::Email => "email",
            DoctorFormat::Html => {
                return Err(CliError::input(
                    "--format html does not combine hosts yet: use text or json with --host",
                ));
            }
        },
    };
    let mut code = ExitCode::SUCCESS;
    for target in &targets {
        let outcome = run_on_host(target, &doctor).map_err(CliError::input)?;
        if matches!(args.format, DoctorFormat::Text | DoctorFormat::Email) {
            outln!("== host {} ==", target.target_name());
        }
        out!("{}", String::from_utf8_lossy(&outcome.stdout));
        eprint!("{}", String::from_utf8_lossy(&outcome.stderr));
        if outcome.status != Status::Exited(0) {
            eprintln!(
                "verdict: [{}] doctor ended with {}",
                target.target_name(),
                outcome.status
            );
            code = ExitCode::from(ExitClass::Internal);
        }
    }
    Ok(code)
}
