//! `verdict history SELECTION` and `verdict history --file F --column C`:
//! the series of one median per stored run (per host) or per CSV row, its
//! change points (ranks by default, or Otava's E-divisive means with its
//! t-test, `--method`) with verdict's
//! shift interval, and with `--bisect N` the `verdict bisect` command for
//! change point N. Parses arguments, calls verdict-engine `history`
//! (`file_history`, `selection_history`, `bisect_command`) and renders.
//!
//! Must not: compute statistics here, or start a bisection itself.

use crate::common::DbArgs;
use crate::error::CliError;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use verdict_analysis::history::{
    ChangeAt, ChangeFigures, HISTORY_SCHEMA, HistoryChange, HistoryDocument, HistoryPoint,
    HistorySeries, HistorySettings, HistorySource,
};
use verdict_analysis::schema::sorted;
use verdict_engine::history::{
    BisectCommand, Change, FileHistory, HostSeries, Order, Point, SelectionHistory, bisect_command,
    file_history, selection_history,
};
use verdict_engine::history_source::parse_history_selection;
use verdict_report::escape::{shell_word, text as plain_text};
use verdict_report::format::{percent, value};
use verdict_report::time::format_time;
use verdict_stats::changepoint::{Method, Settings};
use verdict_stats::shift::Interval;

#[derive(Debug, clap::Args)]
pub(crate) struct HistoryArgs {
    /// Stored runs: EXPERIMENT, EXPERIMENT:factor=level,..., or factor=level,...
    #[arg(required_unless_present = "file", conflicts_with = "file")]
    pub(crate) selection: Option<String>,
    /// Metric of stored runs (default: the experiment's primary metric).
    #[arg(long)]
    pub(crate) metric: Option<String>,
    /// Order (and label) points by run start time, by commit (consecutive
    /// runs of one commit pooled), or by run id.
    #[arg(long, default_value = "time", value_parser = ["time", "commit", "run"])]
    pub(crate) by: String,
    /// A CSV file holding a series from elsewhere (one value per row).
    #[arg(long, value_name = "F", requires = "column")]
    pub(crate) file: Option<PathBuf>,
    /// CSV column holding the values.
    #[arg(long, value_name = "C")]
    pub(crate) column: Option<String>,
    /// CSV column labelling each row (a time, a commit).
    #[arg(long, value_name = "T", requires = "file")]
    pub(crate) time_column: Option<String>,
    /// How change points are found: `ranks` (binary segmentation on ranks,
    /// every point tested between its neighbouring segments; robust to
    /// heavy tails) or `otava` (Apache Otava's E-divisive means with its
    /// t-test, as Otava computes it).
    #[arg(long, default_value = "ranks", value_parser = ["ranks", "otava"])]
    pub(crate) method: String,
    /// Sliding window length in points (windows step by half a window;
    /// `--method otava` only).
    #[arg(long, default_value_t = 50)]
    pub(crate) window: usize,
    /// Significance threshold of the change points (default: 0.05 for
    /// ranks, whose p-values count every split examined, so this is the
    /// chance that a series without a change reports one; 0.001 for
    /// otava, whose p-values are its t-test's).
    #[arg(short = 'P', long = "pvalue")]
    pub(crate) p_value: Option<f64>,
    /// Minimum relative magnitude of a change point (0.05 = 5%).
    #[arg(long, default_value_t = 0.0)]
    pub(crate) magnitude: f64,
    /// Print the `verdict bisect` command for change point N (1-based, as listed).
    #[arg(long, value_name = "N", conflicts_with = "file")]
    pub(crate) bisect: Option<usize>,
    /// Host whose series --bisect means (default: the only one).
    #[arg(long, requires = "bisect")]
    pub(crate) host: Option<String>,
    /// Compute from scratch, ignoring (and not storing) the per-series state.
    #[arg(long)]
    pub(crate) from_scratch: bool,
    /// text (a list), json (`verdict.history/v1`) or email (the list with
    /// every line at most 80 columns).
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: crate::common::TextJsonOrEmail,
    #[command(flatten)]
    pub(crate) db: DbArgs,
}

pub(crate) fn run(args: &HistoryArgs) -> Result<ExitCode, CliError> {
    let defaults = if args.method == "otava" {
        Settings::otava()
    } else {
        Settings::default()
    };
    let settings = Settings {
        window: args.window,
        max_p_value: args.p_value.unwrap_or(defaults.max_p_value),
        min_magnitude: args.magnitude,
        method: defaults.method,
    };
    match &args.file {
        Some(path) => file(args, path, &settings),
        None => stored(
            args,
            args.selection.as_deref().expect("clap requires SELECTION"),
            &settings,
        ),
    }
}

fn file(
    args: &HistoryArgs,
    path: &std::path::Path,
    settings: &Settings,
) -> Result<ExitCode, CliError> {
    let column = args.column.as_deref().expect("clap requires --column");
    let FileHistory {
        values,
        labels,
        changes,
    } = file_history(path, column, args.time_column.as_deref(), settings)?;
    let label = |index: usize| labels.get(index).cloned().unwrap_or_default();
    if args.format == crate::common::TextJsonOrEmail::Json {
        let document = HistoryDocument {
            schema: HISTORY_SCHEMA,
            source: HistorySource::File {
                file: path.display().to_string(),
                column: column.to_string(),
            },
            metric: column.to_string(),
            unit: None,
            by: if args.time_column.is_some() {
                "time"
            } else {
                "row"
            }
            .to_string(),
            settings: settings_document(settings),
            runs_without_commit: 0,
            series: vec![HistorySeries {
                host: None,
                points: values
                    .iter()
                    .enumerate()
                    .map(|(index, &median)| HistoryPoint::Row {
                        index,
                        label: label(index),
                        n: 1,
                        median,
                    })
                    .collect(),
                change_points: changes
                    .iter()
                    .map(|change| HistoryChange {
                        figures: change_figures(change),
                        at: ChangeAt::Row {
                            label: label(change.index),
                            label_before: label(change.index - 1),
                        },
                    })
                    .collect(),
                reused_points: 0,
                windows_examined: None,
            }],
        };
        let document = sorted(&document).map_err(CliError::internal)?;
        outln!(
            "{}",
            serde_json::to_string_pretty(&document).map_err(CliError::internal)?
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    let _ = writeln!(
        text,
        "history of {} column `{}`: {} points, {} ({})",
        plain_text(&path.display().to_string()),
        plain_text(column),
        values.len(),
        count(changes.len(), "change point", "change points"),
        settings_text(settings)
    );
    for (number, change) in changes.iter().enumerate() {
        let _ = writeln!(
            text,
            "  {}. between {} and {} (index {}): {}",
            number + 1,
            plain_text(&label(change.index - 1)),
            plain_text(&label(change.index)),
            change.index,
            change_text(change, "")
        );
    }
    print_list(&text, args.format);
    Ok(ExitCode::SUCCESS)
}

fn stored(args: &HistoryArgs, spec: &str, settings: &Settings) -> Result<ExitCode, CliError> {
    let selection = parse_history_selection(spec)?;
    let store = args.db.open_existing()?;
    let order = match args.by.as_str() {
        "commit" => Order::Commit,
        "run" => Order::Run,
        _ => Order::Time,
    };
    let SelectionHistory {
        experiment,
        metric,
        unit,
        history,
    } = selection_history(
        &store,
        spec,
        selection,
        args.metric.as_deref(),
        order,
        *settings,
        !args.from_scratch,
    )?;
    if let Some(reason) = &history.state_not_kept {
        eprintln!(
            "verdict: note: the change point state was not kept in {} ({}); the answer is \
             complete, the next `verdict history` computes it again (a role or file that may \
             write keeps it)",
            args.db.display(),
            verdict_report::escape::text(reason)
        );
    }
    if let Some(number) = args.bisect {
        let command = bisect_command(&store, &history.series, args.host.as_deref(), number)?;
        return bisect(&command, number);
    }
    if args.format == crate::common::TextJsonOrEmail::Json {
        let document = HistoryDocument {
            schema: HISTORY_SCHEMA,
            source: HistorySource::Selection {
                selection: spec.to_string(),
                experiment,
            },
            metric,
            unit: Some(unit),
            by: order.as_str().to_string(),
            settings: settings_document(settings),
            runs_without_commit: history.runs_without_commit,
            series: history.series.iter().map(series_document).collect(),
        };
        let document = sorted(&document).map_err(CliError::internal)?;
        outln!(
            "{}",
            serde_json::to_string_pretty(&document).map_err(CliError::internal)?
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    let _ = writeln!(
        text,
        "history of `{}` metric `{}` by {} ({})",
        plain_text(spec),
        plain_text(&metric),
        order.as_str(),
        settings_text(settings)
    );
    if history.runs_without_commit > 0 {
        let _ = writeln!(
            text,
            "  ({} runs without a recorded commit left out)",
            history.runs_without_commit
        );
    }
    for series in &history.series {
        let runs: usize = series.points.iter().map(|point| point.runs.len()).sum();
        let _ = writeln!(
            text,
            "host {}: {} points from {}, {}",
            plain_text(&series.host),
            series.points.len(),
            count(runs, "run", "runs"),
            count(series.changes.len(), "change point", "change points"),
        );
        for (number, change) in series.changes.iter().enumerate() {
            let before = &series.points[change.index - 1];
            let after = &series.points[change.index];
            let _ = writeln!(
                text,
                "  {}. {} (index {}, after {}): {}",
                number + 1,
                point_label(after),
                change.index,
                point_label(before),
                change_text(change, &unit)
            );
        }
    }
    print_list(&text, args.format);
    Ok(ExitCode::SUCCESS)
}

/// The list as text, or within 80 columns for an email (a long line
/// continues indented under itself).
fn print_list(text: &str, format: crate::common::TextJsonOrEmail) {
    if format == crate::common::TextJsonOrEmail::Email {
        out!("{}", verdict_report::email::fit(text));
    } else {
        out!("{text}");
    }
}

/// Prints the `verdict bisect` command, after a note when the change
/// point lies between two runs of one commit.
fn bisect(command: &BisectCommand, number: usize) -> Result<ExitCode, CliError> {
    let BisectCommand {
        repository,
        experiment,
        range,
    } = command;
    if range.widened > 0 {
        eprintln!(
            "verdict: note: change point {number} lies between two runs of one commit (a change \
             point locates a change only to within a few points); using the nearest commit \
             boundary, {} away",
            count(range.widened, "point", "points")
        );
    }
    let (good, bad) = (&range.good, &range.bad);
    if let Some(word) = [repository, good, bad, experiment]
        .into_iter()
        .find(|word| word.chars().any(char::is_control))
    {
        return Err(CliError::input(format!(
            "--bisect {number}: a recorded value holds control characters: {}",
            plain_text(word)
        )));
    }
    outln!(
        "verdict bisect --repo {} --good {} --bad {} --experiment {}",
        shell_word(repository),
        shell_word(good),
        shell_word(bad),
        shell_word(experiment)
    );
    Ok(ExitCode::SUCCESS)
}

fn count(number: usize, one: &str, many: &str) -> String {
    format!("{number} {}", if number == 1 { one } else { many })
}

fn settings_text(settings: &Settings) -> String {
    match settings.method {
        Method::Ranks => format!(
            "ranks, p <= {}, magnitude > {}",
            settings.max_p_value, settings.min_magnitude
        ),
        Method::Otava => format!(
            "otava, window {}, p <= {}, magnitude > {}",
            settings.window, settings.max_p_value, settings.min_magnitude
        ),
    }
}

fn settings_document(settings: &Settings) -> HistorySettings {
    HistorySettings {
        window: settings.window,
        pvalue: settings.max_p_value,
        magnitude: settings.min_magnitude,
        method: settings.method.describe().to_string(),
        method_name: settings.method.as_str().to_string(),
    }
}

fn p_text(p: f64) -> String {
    if p >= 0.001 {
        format!("p = {p:.3}")
    } else if p > 0.0 {
        format!("p = {p:.1e}")
    } else {
        "p < 1e-300".to_string()
    }
}

fn interval_text(interval: Option<Interval>) -> String {
    match interval {
        Some(interval) => format!(" [{}, {}]", percent(interval.low), percent(interval.high)),
        None => String::new(),
    }
}

fn change_text(change: &Change, unit: &str) -> String {
    format!(
        "median {} -> {}, {}{} (means {}, over {} and {} points), {}",
        value(change.median_before, unit),
        value(change.median_after, unit),
        change.change.map_or("n/a".to_string(), percent),
        interval_text(change.interval),
        percent(mean_change(change)),
        change.index - change.segment_start,
        change.segment_end - change.index,
        p_text(change.p_value)
    )
}

/// Otava's forward change: mean after / mean before - 1 (0 for a zero mean).
fn mean_change(change: &Change) -> f64 {
    if change.mean_before == 0.0 {
        0.0
    } else {
        change.mean_after / change.mean_before - 1.0
    }
}

fn point_label(point: &Point) -> String {
    let runs: Vec<String> = point.runs.iter().map(|run| run.to_string()).collect();
    let mut label = format!(
        "{} {}, {}",
        if runs.len() == 1 { "run" } else { "runs" },
        runs.join("+"),
        format_time(point.started_at_ms)
    );
    if let Some(commit) = &point.commit {
        label.push_str(&format!(", commit {}", plain_text(short(commit))));
    }
    label
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

fn change_figures(change: &Change) -> ChangeFigures {
    ChangeFigures {
        index: change.index,
        median_before: change.median_before,
        median_after: change.median_after,
        change: change.change,
        interval: change.interval,
        pvalue: change.p_value,
        mean_before: change.mean_before,
        mean_after: change.mean_after,
        mean_change: mean_change(change),
        segment_start: change.segment_start,
        segment_end: change.segment_end,
    }
}

fn point_document(index: usize, point: &Point) -> HistoryPoint {
    HistoryPoint::Runs {
        index,
        runs: point.runs.iter().map(|run| run.0).collect(),
        started_at_ms: point.started_at_ms,
        commit: point.commit.clone(),
        n: point.n,
        median: point.median,
        interval: point.interval,
    }
}

fn series_document(series: &HostSeries) -> HistorySeries {
    HistorySeries {
        host: Some(series.host.clone()),
        points: series
            .points
            .iter()
            .enumerate()
            .map(|(index, point)| point_document(index, point))
            .collect(),
        change_points: series
            .changes
            .iter()
            .map(|change| {
                let before = &series.points[change.index - 1];
                let after = &series.points[change.index];
                HistoryChange {
                    figures: change_figures(change),
                    at: ChangeAt::Runs {
                        run: after.runs.first().map(|run| run.0),
                        run_before: before.runs.last().map(|run| run.0),
                        started_at_ms: after.started_at_ms,
                        commit: after.commit.clone(),
                        commit_before: before.commit.clone(),
                    },
                }
            })
            .collect(),
        reused_points: series.reused_points,
        windows_examined: Some(series.windows_examined),
    }
}
