//! A host group's progress and reports (`--host HOST`, repeatable, for
//! `run` and `ab`): every host runs its own complete randomized blocks as
//! its own run, all hosts at once (verdict-engine's `launch` connects to
//! them and measures). Here each host's progress lines are printed, and
//! when the group ends each host's report, then one combined line per
//! comparison ("regression on 2 of 2 hosts") with a weighted Z-method
//! p-value over the per-host tests (verdict-stats `combine`), never pooled
//! samples; also `verdict report RUN --rows host`.
//!
//! Must not: connect to a host or measure anything.

use crate::common::ReportFormat;
use crate::error::CliError;
use crate::run_report::{ReportOptionsArgs, build_report, print_run_report};
use std::process::ExitCode;
use verdict_engine::Observer;
use verdict_engine::launch::HostEnd;
use verdict_model::{Cell, Experiment, RunId, RunStatus, Sample};
use verdict_report::hosts::{combined_lines, comparison_rows_of, host_comparisons};
use verdict_store::Store;

/// Prints one host's progress to stderr, a line per note and one every
/// tenth of the run, each prefixed with the host.
pub(crate) struct HostProgress {
    host: String,
    last_tenth: usize,
}

impl HostProgress {
    pub(crate) fn new(host: &str) -> Self {
        Self {
            host: host.to_string(),
            last_tenth: 0,
        }
    }
}

impl Observer for HostProgress {
    fn started(&mut self, run: RunId, planned: usize, done: usize, _: &[Cell]) {
        eprintln!(
            "verdict: [{}] run {run}: {done} of {planned} iterations done",
            self.host
        );
    }

    fn sample(&mut self, sample: &Sample, _: &[Cell], done: usize, planned: usize) {
        if let Some(failure) = &sample.failure {
            eprintln!(
                "verdict: [{}] iteration {} failed: {}",
                self.host, sample.sequence, failure.reason
            );
        }
        let tenth = done * 10 / planned.max(1);
        if tenth > self.last_tenth {
            self.last_tenth = tenth;
            eprintln!("verdict: [{}] {done}/{planned}", self.host);
        }
    }

    fn decisions(&mut self, _: &[verdict_engine::ComparisonStatus]) {}

    fn note(&mut self, message: &str) {
        eprintln!("verdict: [{}] {message}", self.host);
    }
}

/// The one-machine warnings of a stored group, from each run's recorded
/// environment (what `warn_of_shared_machines` said before measuring).
fn shared_machine_warnings(
    store: &dyn Store,
    members: &[(RunId, String)],
) -> Result<Vec<String>, CliError> {
    let mut identities = Vec::new();
    for (run, host) in members {
        let record = store.run(*run).map_err(CliError::input)?;
        identities.push((host.clone(), record.environment_start));
    }
    Ok(verdict_doctor::environment::shared_machines(&identities)
        .iter()
        .map(verdict_engine::launch::shared_machine_message)
        .collect())
}

/// Each host's report, then the combined lines; the exit code follows
/// `--fail-on` over every host, 3 when interrupted, 2 when a host failed.
pub(crate) fn render(
    store: &dyn Store,
    hosts: &[HostEnd],
    report: &ReportOptionsArgs,
) -> Result<ExitCode, CliError> {
    let mut members = Vec::new();
    let mut interrupted = Vec::new();
    let mut failed = Vec::new();
    for HostEnd { host, result } in hosts {
        match result {
            Ok(summary) => {
                members.push((summary.run, host.clone()));
                if summary.status == RunStatus::Interrupted {
                    interrupted.push(summary.run);
                }
            }
            Err(error) => {
                eprintln!("verdict: [{host}] stopped: {error}");
                failed.push(host.clone());
            }
        }
    }
    let code = print_group(store, &members, hosts.len(), report)?;
    if !interrupted.is_empty() {
        return Err(CliError::Interrupted(format!(
            "interrupted; resume with: verdict run --resume {}",
            interrupted[0]
        )));
    }
    if !failed.is_empty() {
        return Err(CliError::input(format!(
            "the run stopped on {} (see above); the other hosts finished",
            failed.join(", ")
        )));
    }
    Ok(code)
}

/// A host group's report in the requested format: each host's report
/// then the lines combining them (text, markdown), one email with the
/// combination first (email), one document (`verdict.group/v1`, JSON),
/// one table with a host column (CSV), one page with every host and the
/// combination (HTML). `hosts` counts the group's hosts (a host that
/// failed has no run). The exit code follows `--fail-on` over every host.
pub(crate) fn print_group(
    store: &dyn Store,
    members: &[(RunId, String)],
    hosts: usize,
    options: &ReportOptionsArgs,
) -> Result<ExitCode, CliError> {
    let alpha = options.alpha.unwrap_or(0.05);
    let warnings = shared_machine_warnings(store, members)?;
    if matches!(options.format, ReportFormat::Text | ReportFormat::Markdown) {
        let mut code = ExitCode::SUCCESS;
        let mut per_host = Vec::new();
        for (run, host) in members {
            outln!("== host {host} (run {run}) ==");
            if print_run_report(store, *run, options)? != ExitCode::SUCCESS {
                code = ExitCode::from(verdict_model::ExitClass::Finding);
            }
            outln!();
            let built = build_report(store, *run, options)?;
            per_host.push(host_comparisons(host, &built.report));
        }
        out!("{}", combined_lines(&per_host, hosts, alpha));
        for warning in &warnings {
            outln!("warning: {}", verdict_report::escape::text(warning));
        }
        return Ok(code);
    }
    let mut runs = Vec::new();
    let mut environments = Vec::new();
    for (run, host) in members {
        let built = build_report(store, *run, options)?;
        environments.push(verdict_report::html::EnvironmentColumn {
            title: format!("{host} (run {run})"),
            lines: verdict_report::run::environment_lines(&built.record.environment_start),
        });
        runs.push(verdict_report::hosts::HostRun {
            host: host.clone(),
            run: run.0,
            report: built.report,
        });
    }
    let verdicts: Vec<verdict_report::compare::Verdict> = runs
        .iter()
        .flat_map(|host| comparison_rows_of(&host.report))
        .map(|row| row.verdict)
        .collect();
    let rendered = match options.format {
        ReportFormat::Html if !runs.is_empty() => {
            verdict_report::html::render_hosts(&runs, alpha, &environments)
        }
        ReportFormat::Email => verdict_report::email::hosts(&runs, alpha, &warnings),
        ReportFormat::Csv => verdict_report::hosts::group_csv(&runs),
        _ => verdict_report::hosts::group_json(&runs, alpha),
    };
    crate::common::emit(&rendered, options.output.as_deref())?;
    Ok(crate::fail_on::exit_code(options.fail_on, verdicts))
}

/// `verdict report RUN --rows host` for a run of a host group: one row per
/// host with each cell's median and each comparison's delta and verdict,
/// then the combined lines. `None` when the run is not part of a host group
/// or its experiment has a factor called `host` (the ordinary pivot then
/// applies).
pub(crate) fn print_host_rows(
    store: &dyn Store,
    run: RunId,
    options: &ReportOptionsArgs,
) -> Result<Option<ExitCode>, CliError> {
    let members = verdict_engine::host_group::group_members(store, run).map_err(CliError::input)?;
    if members.is_empty() {
        return Ok(None);
    }
    let record = store.run(run).map_err(CliError::input)?;
    let experiment: Experiment =
        serde_json::from_str(&record.experiment_json).map_err(CliError::internal)?;
    if experiment
        .factors
        .iter()
        .any(|factor| factor.name == "host")
    {
        return Ok(None);
    }
    // The multi-host table has no HTML page: the message `--format html`
    // always had here.
    let format = options.format.table().ok_or_else(|| {
        CliError::input(
            "unknown --format `html`; expected text, markdown, csv, json or html".to_string(),
        )
    })?;
    let mut hosts = Vec::new();
    for (id, host) in &members {
        hosts.push(verdict_report::hosts::HostRun {
            host: host.clone(),
            run: id.0,
            report: build_report(store, *id, options)?.report,
        });
    }
    let (text, verdicts) = verdict_report::hosts::host_rows(
        &hosts,
        format,
        options.alpha.unwrap_or(0.05),
        options.width.columns(),
    );
    out!("{text}");
    Ok(Some(crate::fail_on::exit_code(options.fail_on, verdicts)))
}
