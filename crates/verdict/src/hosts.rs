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

use crate::common::{DbArgs, TargetArgs};
use crate::error::CliError;
use crate::run_report::{ReportOptionsArgs, print_run_report};
use std::path::PathBuf;
use std::process::ExitCode;
use verdict_engine::{HostPart, HostWork, Observer, RunSummary, StartOptions};
use verdict_exec::{Cancel, SshTarget, Target};
use verdict_model::{Cell, Experiment, RunId, RunStatus, Sample};
use verdict_stats::combine::{Stratum, one_sided, weighted_z};
use verdict_stats::verdict::{Better, Verdict};
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
    // A workdir on this machine means nothing on another one: the agent
    // runs in the remote login directory unless the experiment names an
    // absolute one.
    if options.kind == "ab" {
        options.experiment.workdir = None;
    }
    let group = serde_json::json!({
        "hosts": targets.hosts,
        "ssh_config": targets.ssh_config.as_ref().map(|path| path.display().to_string()),
        "reconnect_timeout_s": targets.reconnect_timeout.as_secs_f64(),
        "group": format!("{}-{}", options.seed, std::process::id()),
    });
    let work = connected
        .iter()
        .enumerate()
        .map(|(index, target)| {
            let mut host_options = options.clone();
            // Each host its own randomized order, derived from the recorded seed.
            host_options.seed = options.seed.wrapping_add(index as u64);
            let mut annotation = group.clone();
            annotation["host"] = serde_json::Value::String(target.host().to_string());
            HostWork::Start {
                options: Box::new(host_options),
                annotations: vec![("target".to_string(), annotation)],
            }
        })
        .collect();
    execute(&connected, work, db, report, cancel)
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
    let group = annotation["group"].clone();
    let mut members = Vec::new();
    for summary in store.list_runs().map_err(CliError::internal)? {
        let annotations = store.annotations(summary.id).map_err(CliError::internal)?;
        if let Some(target) = annotations.get("target")
            && target["group"] == group
        {
            members.push((summary, target["host"].as_str().unwrap_or("").to_string()));
        }
    }
    members.sort_by_key(|(summary, _)| summary.id);
    let unfinished: Vec<_> = members
        .iter()
        .filter(|(summary, _)| summary.status != RunStatus::Complete)
        .collect();
    for (summary, _) in &unfinished {
        if summary.status == RunStatus::Running
            && let Some(pid) = store
                .annotations(summary.id)
                .map_err(CliError::internal)?
                .get("process")
                .and_then(|process| process["pid"].as_u64())
            && crate::common::is_live_verdict(pid)
        {
            return Err(CliError::input(format!(
                "run {} is still being executed by verdict process {pid}; stop it first (kill -INT {pid}) or let it finish",
                summary.id
            )));
        }
    }
    if unfinished.is_empty() {
        return Err(CliError::input(format!(
            "run {run} and the other runs of its host group are complete; nothing to resume"
        )));
    }
    let hosts: Vec<String> = unfinished.iter().map(|(_, host)| host.clone()).collect();
    let ssh_config = annotation["ssh_config"].as_str().map(PathBuf::from);
    eprintln!(
        "verdict: resuming {} on {}",
        unfinished
            .iter()
            .map(|(summary, _)| format!("run {}", summary.id))
            .collect::<Vec<_>>()
            .join(", "),
        hosts.join(", ")
    );
    let reconnect_timeout = annotation["reconnect_timeout_s"].as_f64().map_or(
        std::time::Duration::from_secs(60),
        std::time::Duration::from_secs_f64,
    );
    let connected = crate::target::connect_hosts(&hosts, ssh_config.as_deref(), reconnect_timeout)?;
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
    results: &[Result<RunSummary, verdict_engine::EngineError>],
    report: &ReportOptionsArgs,
) -> Result<ExitCode, CliError> {
    let mut code = ExitCode::SUCCESS;
    let mut per_host = Vec::new();
    let mut interrupted = Vec::new();
    let mut failed = Vec::new();
    for (target, result) in connected.iter().zip(results) {
        match result {
            Ok(summary) => {
                println!("== host {} (run {}) ==", target.host(), summary.run);
                if print_run_report(store, summary.run, report)? != ExitCode::SUCCESS {
                    code = ExitCode::from(1);
                }
                println!();
                if summary.status == RunStatus::Interrupted {
                    interrupted.push(summary.run);
                }
                per_host.push((
                    target.host().to_string(),
                    host_rows(store, summary.run, report)?,
                ));
            }
            Err(error) => {
                eprintln!("verdict: [{}] stopped: {error}", target.host());
                failed.push(target.host().to_string());
            }
        }
    }
    if matches!(
        report.format,
        crate::common::ReportFormat::Text | crate::common::ReportFormat::Markdown
    ) {
        print!("{}", combined_lines(&per_host, connected.len(), report));
    }
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

/// One host's comparison rows, as its report computes them.
fn host_rows(
    store: &dyn Store,
    run: RunId,
    options: &ReportOptionsArgs,
) -> Result<Vec<verdict_report::compare::ComparisonRow>, CliError> {
    Ok(host_report(store, run, options)?
        .comparisons
        .map(|comparisons| comparisons.comparisons)
        .unwrap_or_default())
}

/// One host's report, built as `verdict report RUN` builds it.
fn host_report(
    store: &dyn Store,
    run: RunId,
    options: &ReportOptionsArgs,
) -> Result<verdict_report::RunReport, CliError> {
    let (record, experiment, samples) = crate::stored_run::loaded(store, run)?;
    let info = crate::stored_run::run_info(store, &record, &experiment)?;
    let report_options = options.resolve(&experiment);
    verdict_report::RunReport::build(
        info,
        &experiment,
        &samples,
        &record.environment_start,
        &report_options,
    )
    .map_err(CliError::input)
}

/// `Across hosts` lines: per comparison, the verdict counts and the
/// weighted Z-method p-values for "worse" and "better".
fn combined_lines(
    per_host: &[(String, Vec<verdict_report::compare::ComparisonRow>)],
    hosts: usize,
    options: &ReportOptionsArgs,
) -> String {
    let alpha = options.alpha.unwrap_or(0.05);
    let mut names: Vec<String> = Vec::new();
    for (_, rows) in per_host {
        for row in rows {
            if !names.contains(&row.name) {
                names.push(row.name.clone());
            }
        }
    }
    let mut text = format!(
        "Across {hosts} hosts (each host compared within itself; combined with the weighted Z-method, Stouffer/Lipták, over per-host Mann–Whitney tests; samples never pooled):\n"
    );
    for name in names {
        let mut counts: Vec<(Verdict, usize)> = Vec::new();
        let mut worse = Vec::new();
        let mut better = Vec::new();
        for (_, rows) in per_host {
            let Some(row) = rows.iter().find(|row| row.name == name) else {
                continue;
            };
            match counts
                .iter_mut()
                .find(|(verdict, _)| *verdict == row.verdict)
            {
                Some((_, count)) => *count += 1,
                None => counts.push((row.verdict, 1)),
            }
            let looks_worse = if row.better == Better::Higher {
                row.delta < 0.0
            } else {
                row.delta > 0.0
            };
            let weight = ((row.baseline.n + row.candidate.n) as f64).sqrt();
            worse.push(Stratum {
                one_sided_p: one_sided(row.p_value, looks_worse),
                weight,
            });
            better.push(Stratum {
                one_sided_p: one_sided(row.p_value, !looks_worse),
                weight,
            });
        }
        counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.as_str().cmp(b.0.as_str())));
        let summary = counts
            .iter()
            .map(|(verdict, count)| format!("{verdict} on {count} of {hosts} hosts"))
            .collect::<Vec<_>>()
            .join(", ");
        let p_worse = weighted_z(&worse);
        let p_better = weighted_z(&better);
        // Two one-sided tests, each at alpha/2.
        let combined = if p_worse < alpha / 2.0 {
            "worse across hosts"
        } else if p_better < alpha / 2.0 {
            "better across hosts"
        } else {
            "no consistent change across hosts"
        };
        text.push_str(&format!(
            "  {name}: {summary}; combined: {combined} (p worse = {}, p better = {})\n",
            format_p(p_worse),
            format_p(p_better)
        ));
    }
    // Labels come from commands: no control character reaches the terminal.
    text.lines()
        .map(|line| format!("{}\n", verdict_report::escape::text(line)))
        .collect()
}

fn format_p(p: f64) -> String {
    if p < 0.0001 {
        "<0.0001".to_string()
    } else {
        format!("{p:.4}")
    }
}

/// The runs of the host group `run` belongs to, in run order, with their
/// host names; empty when `run` is not part of one.
fn group_members(store: &dyn Store, run: RunId) -> Result<Vec<(RunId, String)>, CliError> {
    let annotations = store.annotations(run).map_err(CliError::input)?;
    let Some(target) = annotations.get("target") else {
        return Ok(Vec::new());
    };
    let mut members = Vec::new();
    for summary in store.list_runs().map_err(CliError::internal)? {
        let annotations = store.annotations(summary.id).map_err(CliError::internal)?;
        if let Some(other) = annotations.get("target")
            && other["group"] == target["group"]
        {
            members.push((summary.id, other["host"].as_str().unwrap_or("").to_string()));
        }
    }
    members.sort_by_key(|(id, _)| *id);
    Ok(members)
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
    let members = group_members(store, run)?;
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
    let mut reports = Vec::new();
    for (id, host) in &members {
        reports.push((host.clone(), *id, host_report(store, *id, options)?));
    }
    let cells: Vec<String> = reports[0]
        .2
        .cells
        .iter()
        .map(|cell| cell.label.clone())
        .collect();
    let comparisons: Vec<String> = reports[0]
        .2
        .comparisons
        .as_ref()
        .map(|report| {
            report
                .comparisons
                .iter()
                .map(|row| row.name.clone())
                .collect()
        })
        .unwrap_or_default();
    let unit = reports[0].2.metric.unit.clone();
    let mut header = vec!["host".to_string(), "run".to_string()];
    header.extend(cells.iter().map(|label| format!("{label} median")));
    header.extend(comparisons.iter().cloned());
    let mut table = verdict_report::table::Table::new(header);
    let mut verdicts = Vec::new();
    let mut json_rows = Vec::new();
    for (host, id, report) in &reports {
        let mut row = vec![host.clone(), id.to_string()];
        for label in &cells {
            let median = report
                .cells
                .iter()
                .find(|cell| &cell.label == label)
                .and_then(|cell| cell.median);
            row.push(median.map_or("-".to_string(), |value| {
                verdict_report::format::value(value, &unit)
            }));
        }
        let rows = report
            .comparisons
            .as_ref()
            .map(|report| report.comparisons.clone())
            .unwrap_or_default();
        for name in &comparisons {
            row.push(match rows.iter().find(|row| &row.name == name) {
                Some(found) => {
                    verdicts.push(found.verdict);
                    format!(
                        "{} {}",
                        verdict_report::format::percent(found.delta),
                        found.verdict
                    )
                }
                None => "-".to_string(),
            });
        }
        json_rows.push(serde_json::json!({
            "host": host,
            "run": id.0,
            "cells": report.cells.iter().map(|cell| serde_json::json!({"label": cell.label, "median": cell.median})).collect::<Vec<_>>(),
            "comparisons": rows.iter().map(|row| serde_json::json!({"name": row.name, "delta": row.delta, "p_value": row.p_value, "verdict": row.verdict})).collect::<Vec<_>>(),
        }));
        table.push(row);
    }
    let per_host: Vec<_> = reports
        .iter()
        .map(|(host, _, report)| {
            (
                host.clone(),
                report
                    .comparisons
                    .as_ref()
                    .map(|report| report.comparisons.clone())
                    .unwrap_or_default(),
            )
        })
        .collect();
    match format {
        verdict_report::Format::Text => {
            print!("{}", table.text());
            println!();
            print!("{}", combined_lines(&per_host, reports.len(), options));
        }
        verdict_report::Format::Markdown => {
            print!("{}", table.markdown());
            println!();
            print!("{}", combined_lines(&per_host, reports.len(), options));
        }
        verdict_report::Format::Csv => print!("{}", table.csv()),
        verdict_report::Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "schema": "verdict.hosts/v1",
                "metric": reports[0].2.metric.name,
                "hosts": json_rows,
            }))
            .map_err(CliError::internal)?
        ),
    }
    Ok(Some(crate::fail_on::exit_code(options.fail_on, verdicts)))
}
