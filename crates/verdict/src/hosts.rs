//! `--host HOST` (repeatable) and `--ssh-config FILE` for `run` and `ab`:
//! the experiment runs on other machines over ssh, the host as a blocking
//! factor. Every host runs its own complete randomized blocks as its own run
//! (its name, its environment and its seed recorded with it), all hosts at
//! once; each host's report is printed, then one combined line per
//! comparison ("regression on 2 of 2 hosts") with a weighted Z-method
//! p-value over the per-host tests (verdict-stats `combine`), never pooled
//! samples. `verdict run --resume RUN` of any run of such a group reconnects
//! to the hosts of the group's unfinished runs and continues them.
//!
//! Must not: measure anything on this machine, or start before every host is
//! reachable and has a usable agent.

use crate::common::{DbArgs, ReportFormat, TargetArgs};
use crate::error::CliError;
use crate::run_report::{ReportOptionsArgs, build_report, print_run_report};
use std::process::ExitCode;
use verdict_engine::{HostPart, HostWork, Observer, RunOutcome, StartOptions};
use verdict_exec::{Cancel, SshTarget, Target};
use verdict_model::{
    Cell, Experiment, HostGroupSettings, ReconnectTimeout, RunId, RunStatus, Sample, SshSettings,
};
use verdict_report::hosts::{combined_lines, comparison_rows_of, host_comparisons};
use verdict_store::{Database, Store};

/// Prints one host's progress to stderr, a line per note and one every
/// tenth of the run, each prefixed with the host.
struct HostProgress {
    host: String,
    last_tenth: usize,
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

/// Starts `options` on every host of `targets`.
pub(crate) fn start_on_hosts(
    targets: &TargetArgs,
    mut options: StartOptions,
    db: &DbArgs,
    report: &ReportOptionsArgs,
    cancel: Cancel,
) -> Result<ExitCode, CliError> {
    let connected = crate::target::connect_hosts(
        &targets.hosts,
        targets.ssh_config.as_deref(),
        targets.reconnect_timeout,
    )?;
    warn_of_shared_machines(&connected);
    // A workdir on this machine means nothing on another one: the agent
    // runs in the remote login directory unless the experiment names an
    // absolute one.
    if options.kind == verdict_model::RunKind::Ab {
        options.experiment.workdir = None;
    }
    let group = HostGroupSettings {
        hosts: targets.hosts.clone(),
        ssh: SshSettings {
            ssh_config: targets.ssh_config.clone(),
            reconnect: ReconnectTimeout::of(targets.reconnect_timeout),
        },
        group: format!("{}-{}", options.seed, std::process::id()),
        host: String::new(),
    };
    let work = connected
        .iter()
        .enumerate()
        .map(|(index, target)| {
            let mut host_options = options.clone();
            // Each host its own randomized order, derived from the recorded seed.
            host_options.seed = options.seed.wrapping_add(index as u64);
            let mut settings = group.clone();
            settings.host = target.host().to_string();
            let annotation = serde_json::to_value(&settings).map_err(CliError::internal)?;
            Ok(HostWork::Start {
                options: Box::new(host_options),
                annotations: vec![("target".to_string(), annotation)],
            })
        })
        .collect::<Result<_, CliError>>()?;
    execute(&connected, work, db, report, cancel)
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
        .map(shared_machine_message)
        .collect())
}

/// `hosts a and b are one machine (same machine id ...): ...`.
fn shared_machine_message(shared: &verdict_doctor::environment::SharedMachine) -> String {
    format!(
        "hosts {} and {} are one machine ({}): their runs compete for its CPUs and are not independent evidence",
        shared.first,
        shared.second,
        shared.reasons.join(", ")
    )
}

/// Before measuring: a warning for every two hosts that are one machine
/// (the same machine id, boot id or address), naming why. Their runs
/// would compete for one machine's CPUs, and their results would count
/// as two machines' evidence.
fn warn_of_shared_machines(connected: &[SshTarget]) {
    let identities: Vec<(String, verdict_model::Environment)> = connected
        .iter()
        .map(|target| {
            (
                target.host().to_string(),
                verdict_doctor::environment::capture_identity(&crate::target::TargetFiles {
                    target,
                }),
            )
        })
        .collect();
    for shared in verdict_doctor::environment::shared_machines(&identities) {
        eprintln!("verdict: warning: {}", shared_machine_message(&shared));
    }
}

/// Continues the unfinished runs of the host group `run` belongs to.
pub(crate) fn resume_group(
    store: &Database,
    run: RunId,
    annotation: &serde_json::Value,
    db: &DbArgs,
    report: &ReportOptionsArgs,
    cancel: Cancel,
) -> Result<ExitCode, CliError> {
    let settings: HostGroupSettings =
        serde_json::from_value(annotation.clone()).map_err(|error| {
            CliError::input(format!(
                "run {run}: the stored `target` settings of its host group do not load: {error}"
            ))
        })?;
    let members = verdict_engine::host_group::group_runs(store, &annotation["group"])
        .map_err(CliError::internal)?;
    let unfinished: Vec<_> = members
        .iter()
        .filter(|(summary, _)| summary.status != RunStatus::Complete)
        .collect();
    for (summary, _) in &unfinished {
        crate::common::refuse_if_still_running(store, summary.id, summary.status)?;
    }
    if unfinished.is_empty() {
        return Err(CliError::input(format!(
            "run {run} and the other runs of its host group are complete; nothing to resume"
        )));
    }
    let hosts: Vec<String> = unfinished.iter().map(|(_, host)| host.clone()).collect();
    eprintln!(
        "verdict: resuming {} on {}",
        unfinished
            .iter()
            .map(|(summary, _)| format!("run {}", summary.id))
            .collect::<Vec<_>>()
            .join(", "),
        hosts.join(", ")
    );
    let connected = crate::target::connect_hosts(
        &hosts,
        settings.ssh.ssh_config.as_deref(),
        settings.ssh.reconnect.duration(),
    )?;
    let work = unfinished
        .iter()
        .map(|(summary, _)| HostWork::Resume(summary.id))
        .collect();
    let code = execute(&connected, work, db, report, cancel)?;
    Ok(code)
}

fn execute(
    connected: &[SshTarget],
    work: Vec<HostWork>,
    db: &DbArgs,
    report: &ReportOptionsArgs,
    cancel: Cancel,
) -> Result<ExitCode, CliError> {
    let sources: Vec<_> = connected
        .iter()
        .map(|target| crate::target::EnvironmentSource::new(target))
        .collect();
    let captures: Vec<Box<dyn Fn() -> verdict_model::Environment + Sync + '_>> = sources
        .iter()
        .map(|source| {
            Box::new(move || source.capture()) as Box<dyn Fn() -> verdict_model::Environment + Sync>
        })
        .collect();
    let parts: Vec<(HostPart<'_>, HostWork)> = connected
        .iter()
        .zip(&captures)
        .zip(work)
        .map(|((target, capture), host_work)| {
            (
                HostPart {
                    target: target as &dyn Target,
                    environment: &**capture,
                },
                host_work,
            )
        })
        .collect();
    let location = db.location();
    let open = move || -> Result<Box<dyn Store>, verdict_store::StoreError> {
        Ok(Box::new(Database::open(&location)?))
    };
    let results = verdict_engine::run_on_hosts(parts, &open, &cancel, &|host| {
        Box::new(HostProgress {
            host: host.to_string(),
            last_tenth: 0,
        })
    });
    let store = db.open()?;
    for (source, result) in sources.iter().zip(&results) {
        if result.is_ok() {
            crate::common::store_kernel_config(&store, source);
        }
    }
    render(&store, connected, &results, report)
}

/// Each host's report, then the combined lines; the exit code follows
/// `--fail-on` over every host, 3 when interrupted, 2 when a host failed.
fn render(
    store: &Database,
    connected: &[SshTarget],
    results: &[Result<RunOutcome, verdict_engine::EngineError>],
    report: &ReportOptionsArgs,
) -> Result<ExitCode, CliError> {
    let mut members = Vec::new();
    let mut interrupted = Vec::new();
    let mut failed = Vec::new();
    for (target, result) in connected.iter().zip(results) {
        match result {
            Ok(summary) => {
                members.push((summary.run, target.host().to_string()));
                if summary.status == RunStatus::Interrupted {
                    interrupted.push(summary.run);
                }
            }
            Err(error) => {
                eprintln!("verdict: [{}] stopped: {error}", target.host());
                failed.push(target.host().to_string());
            }
        }
    }
    let code = print_group(store, &members, connected.len(), report)?;
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
