//! `verdict runs`: list stored runs with the host each ran on, a
//! bisection's measurement runs as one entry (`--all` lists each), and
//! warn about runs that measured at the same time on one host.

use crate::common::{DbArgs, TableFormat};
use crate::error::CliError;
use crate::warnings::{all_overlaps, print_with_warnings};
use std::process::ExitCode;
use verdict_analysis::runs::{RUNS_SCHEMA, RunEntry, RunsDocument};
use verdict_analysis::schema::sorted;
use verdict_report::Format;
use verdict_report::table::Table;
use verdict_report::time::format_time;
use verdict_store::Store;

#[derive(Debug, clap::Args)]
pub(crate) struct RunsArgs {
    /// text, markdown, csv or json (`verdict.runs/v1`).
    #[arg(long, value_enum, default_value = "text", hide_possible_values = true)]
    pub(crate) format: TableFormat,
    /// Only the runs measured on this host (repeatable); the store filters.
    #[arg(long = "host", value_name = "HOST")]
    pub(crate) hosts: Vec<String>,
    /// List every run: a bisection's measurement runs one by one instead
    /// of one line per bisection (text and markdown; CSV and JSON always
    /// list every run).
    #[arg(long)]
    pub(crate) all: bool,
    #[command(flatten)]
    pub(crate) width: crate::common::WidthArgs,
    #[command(flatten)]
    pub(crate) db: DbArgs,
}

pub(crate) fn run(args: &RunsArgs) -> Result<ExitCode, CliError> {
    let format = Format::from(args.format);
    let store = args.db.open_read_only()?;
    let runs = if args.hosts.is_empty() {
        store.list_runs()
    } else {
        store.list_runs_on_hosts(&args.hosts)
    }
    .map_err(CliError::internal)?;
    let warnings = all_overlaps(&store)?;
    // Detached runs: where `verdict work` measured them.
    let mut work = Vec::with_capacity(runs.len());
    for run in &runs {
        let record = store.work_record(run.id).map_err(CliError::internal)?;
        work.push(
            (!record.blocks.is_empty())
                .then(|| crate::stored_run::work_section(&record, &run.host)),
        );
    }
    let bisections = bisections_of(&store)?;
    let bisection_of = |run: verdict_model::RunId| {
        bisections
            .iter()
            .find(|(_, runs)| runs.contains(&run))
            .map(|(summary, _)| summary.id.0)
    };
    if format == Format::Json {
        let document = runs_document(&runs, work, bisection_of);
        let document = sorted(&document).map_err(CliError::internal)?;
        print_with_warnings(
            "",
            &document,
            format,
            &warnings,
            serde_json::Map::new(),
            None,
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(
        [
            "id", "name", "kind", "status", "host", "planned", "done", "failed", "started",
        ]
        .map(String::from)
        .to_vec(),
    );
    table.left = vec![1, 2, 3, 4];
    let grouped = !args.all && matches!(format, Format::Text | Format::Markdown | Format::Email);
    let mut shown = Vec::new();
    for run in &runs {
        let bisection = bisections
            .iter()
            .find(|(_, members)| members.contains(&run.id));
        match bisection {
            Some((summary, members)) if grouped => {
                if !shown.contains(&summary.id) {
                    shown.push(summary.id);
                    table.push(bisection_row(summary, members, &runs));
                }
            }
            _ => table.push(vec![
                run.id.to_string(),
                run.name.clone(),
                run.kind.as_str().to_string(),
                run.status.as_str().to_string(),
                run.host.clone(),
                run.planned.to_string(),
                run.done.to_string(),
                run.failed.to_string(),
                format_time(run.started_at_ms),
            ]),
        }
    }
    let mut rendered = match format {
        Format::Markdown => table.markdown(),
        Format::Csv => table.csv(),
        Format::Email => table.text_within(verdict_report::email::WIDTH),
        _ => table.text_width(args.width.columns()),
    };
    // Runs on a VM: failed boots are not iterations; say where they are.
    // Detached runs: the hosts they were measured on, their takeovers.
    if format != Format::Csv {
        let table_end = rendered.len();
        for (run, work) in runs.iter().zip(&work) {
            if let Some(work) = work {
                let mut line = format!(
                    "run {}: measured on {} by `verdict work`",
                    run.id,
                    work.hosts.join(", ")
                );
                for takeover in &work.takeovers {
                    line.push_str(&format!(
                        "; block {} taken over from {} on {} by {} on {}",
                        takeover.block,
                        takeover.from_worker,
                        takeover.from_host,
                        takeover.to_worker,
                        takeover.to_host
                    ));
                }
                rendered.push('\n');
                rendered.push_str(&verdict_report::escape::text(&line));
            }
        }
        for run in &runs {
            // A database older than the boots table has none.
            let boots = store.boots(run.id).unwrap_or_default();
            let failed = boots.iter().filter(|boot| !boot.status.booted()).count();
            if failed > 0 {
                rendered.push_str(&format!(
                    "\nrun {}: {failed} of {} boot(s) failed, never data (`verdict report {}` shows their console tails)",
                    run.id,
                    boots.len(),
                    run.id
                ));
            }
        }
        if rendered.len() > table_end {
            rendered.push('\n');
        }
    }
    print_with_warnings(
        &rendered,
        &(),
        format,
        &warnings,
        serde_json::Map::new(),
        None,
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `verdict.runs/v1`: every run listed, with the bisection it measured
/// for and where a detached run's blocks ran.
fn runs_document(
    runs: &[verdict_store::RunSummary],
    work: Vec<Option<verdict_report::work::WorkSection>>,
    bisection_of: impl Fn(verdict_model::RunId) -> Option<i64>,
) -> RunsDocument {
    RunsDocument {
        schema: RUNS_SCHEMA,
        runs: runs
            .iter()
            .zip(work)
            .map(|(run, work)| RunEntry {
                id: run.id.0,
                name: run.name.clone(),
                kind: run.kind.as_str().to_string(),
                status: run.status.as_str().to_string(),
                placement: run.placement,
                planned: run.planned,
                done: run.done,
                failed: run.failed,
                started_at_ms: run.started_at_ms,
                finished_at_ms: run.finished_at_ms,
                host: run.host.clone(),
                bisect: bisection_of(run.id),
                work,
            })
            .collect(),
    }
}

/// Every bisection with the runs that measured for it.
fn bisections_of(
    store: &dyn Store,
) -> Result<Vec<(verdict_store::BisectSummary, Vec<verdict_model::RunId>)>, CliError> {
    // A database older than the bisections table has none.
    let bisections = store.list_bisects().unwrap_or_default();
    bisections
        .into_iter()
        .map(|summary| {
            let runs = store
                .bisect_runs(summary.id)
                .map_err(CliError::internal)?
                .into_iter()
                .map(|run| run.id)
                .collect();
            Ok((summary, runs))
        })
        .collect()
}

/// One line for a bisection's measurement runs (those listed): the range
/// of their ids, the bisection, its status, the hosts, their counts
/// summed, the first one's start.
fn bisection_row(
    summary: &verdict_store::BisectSummary,
    members: &[verdict_model::RunId],
    runs: &[verdict_store::RunSummary],
) -> Vec<String> {
    let listed: Vec<&verdict_store::RunSummary> = runs
        .iter()
        .filter(|run| members.contains(&run.id))
        .collect();
    let mut hosts: Vec<&str> = listed.iter().map(|run| run.host.as_str()).collect();
    hosts.dedup();
    let first = listed.first().map_or(0, |run| run.id.0);
    let last = listed.last().map_or(0, |run| run.id.0);
    vec![
        format!("{first}-{last}"),
        format!(
            "bisection {} ({} run{}; --all lists them)",
            summary.id.0,
            listed.len(),
            if listed.len() == 1 { "" } else { "s" }
        ),
        "bisect".to_string(),
        summary.status.as_str().to_string(),
        hosts.join(", "),
        listed
            .iter()
            .map(|run| run.planned)
            .sum::<u64>()
            .to_string(),
        listed.iter().map(|run| run.done).sum::<u64>().to_string(),
        listed.iter().map(|run| run.failed).sum::<u64>().to_string(),
        listed
            .first()
            .map_or(String::new(), |run| format_time(run.started_at_ms)),
    ]
}
