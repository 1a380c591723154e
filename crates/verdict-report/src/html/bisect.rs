//! The HTML page of `verdict bisect log`: the bisection's facts, every
//! commit of the range in order with its runs, median and interval, its
//! class and decision (change against the good and the bad endpoint with
//! intervals), the culprit marked; and a forest plot of each measured
//! commit's change against the good endpoint.
//! Must not: decide anything (classes, decisions and the culprit come from
//! the stored bisection) or emit unescaped user text (subjects are).

use super::page::{self, Cell, Page, VerdictClass};
use super::svg::{self, ForestRow};
use crate::format;

/// A relative change with its interval (fractions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    pub estimate: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// One commit of the range, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct BisectCommit {
    pub commit: String,
    pub subject: String,
    pub runs: usize,
    pub median: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// `good`, `bad`, `undecided`, `skipped`; `None` while unmeasured.
    pub class: Option<String>,
    /// Change against the good endpoint (X/G - 1).
    pub versus_good: Option<Change>,
    /// Change against the bad endpoint (X/B - 1).
    pub versus_bad: Option<Change>,
    pub reason: Option<String>,
    /// The culprit, or one of the culprit range.
    pub culprit: bool,
}

/// What the page shows.
#[derive(Debug, Clone, PartialEq)]
pub struct BisectLog {
    pub facts: Vec<(String, String)>,
    pub commits: Vec<BisectCommit>,
    /// One sentence naming the result (`first bad commit: ...`), if done.
    pub result: Option<String>,
}

fn class_verdict(class: Option<&str>) -> VerdictClass {
    match class {
        Some("bad") => VerdictClass::Regression,
        Some("good") => VerdictClass::Equivalent,
        _ => VerdictClass::Inconclusive,
    }
}

fn change_text(change: Option<&Change>) -> String {
    match change {
        Some(Change {
            estimate,
            low: Some(low),
            high: Some(high),
        }) => format!(
            "{} [{}, {}]",
            format::percent(*estimate),
            format::percent(*low),
            format::percent(*high)
        ),
        Some(change) => format::percent(change.estimate),
        None => "-".to_string(),
    }
}

/// Render the bisection log page.
pub fn render_bisect_log(log: &BisectLog) -> String {
    let mut page = Page::new("verdict bisect log");
    page.push(&page::facts(&log.facts));
    if let Some(result) = &log.result {
        page.push(&format!(
            "<p><strong>{}</strong></p>\n",
            super::escape::text(result)
        ));
    }
    page.heading("Commits in order", "commits");
    page.note("Oldest first. Change = this commit's runs against the good (G) or bad (B) endpoint's runs it was compared with: X/G - 1 and X/B - 1 (Hodges-Lehmann) with their intervals. The culprit row is highlighted and marked.");
    let rows: Vec<(Vec<Cell>, Option<&str>)> = log
        .commits
        .iter()
        .map(|commit| {
            let median = match (commit.median, commit.ci_low, commit.ci_high) {
                (Some(median), Some(low), Some(high)) => format!(
                    "{} [{}, {}]",
                    format::value(median, ""),
                    format::value(low, ""),
                    format::value(high, "")
                ),
                (Some(median), _, _) => format::value(median, ""),
                _ => "-".to_string(),
            };
            let class = commit.class.clone().unwrap_or_else(|| {
                if commit.runs == 0 {
                    "not measured".to_string()
                } else {
                    "measuring".to_string()
                }
            });
            (
                vec![
                    Cell::Text(commit.commit.chars().take(12).collect()),
                    Cell::Text(commit.subject.clone()),
                    Cell::Number(commit.runs.to_string()),
                    Cell::Number(median),
                    Cell::Number(change_text(commit.versus_good.as_ref())),
                    Cell::Number(change_text(commit.versus_bad.as_ref())),
                    Cell::Verdict {
                        class: class_verdict(commit.class.as_deref()),
                        text: class,
                    },
                    Cell::Text(if commit.culprit {
                        "culprit".to_string()
                    } else {
                        String::new()
                    }),
                    Cell::Text(commit.reason.clone().unwrap_or_default()),
                ],
                commit.culprit.then_some("differs"),
            )
        })
        .collect();
    page.push(&page::table(
        &[
            "commit",
            "subject",
            "runs",
            "median [95% CI]",
            "vs good",
            "vs bad",
            "class",
            "",
            "decision",
        ],
        &rows,
        "bisect",
    ));
    let forest: Vec<ForestRow> = log
        .commits
        .iter()
        .filter_map(|commit| {
            let change = commit.versus_good?;
            Some(ForestRow {
                label: format!(
                    "{} {}",
                    commit.commit.chars().take(10).collect::<String>(),
                    commit.subject
                ),
                delta: change.estimate,
                low: change.low,
                high: change.high,
                threshold: 0.0,
                verdict: commit
                    .class
                    .clone()
                    .unwrap_or_else(|| "measuring".to_string()),
                class: class_verdict(commit.class.as_deref()),
                note: commit.culprit.then(|| "culprit".to_string()),
            })
        })
        .collect();
    if !forest.is_empty() {
        page.heading("Change against the good endpoint", "forest");
        page.note("One row per measured commit, oldest first: the square is X/G - 1, the bar its interval; red = classified bad, blue = good, grey = undecided or skipped; the culprit says so.");
        page.push(&svg::forest_with_axis(
            &forest,
            "change of each commit against the good endpoint",
            "X/G - 1: change against the good endpoint (Hodges-Lehmann) with its interval",
        ));
        page.push("\n");
    }
    page.finish()
}
