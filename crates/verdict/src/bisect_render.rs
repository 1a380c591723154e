//! What `verdict bisect` prints: the summary at the end of a bisection
//! (text, or email with the metric, what ran and how to reproduce it),
//! why one was aborted, and `verdict bisect log` as text, email, JSON and
//! the HTML page's model. Must not: read the store, run git, or compute
//! statistics (verdict-engine's `bisect` module hands over typed results).

use verdict_analysis::bisect_log::{BISECT_LOG_SCHEMA, BisectLogCommit, BisectLogDocument};
use verdict_bisect::{Bisection, Class, CommitId, Culprit};
use verdict_engine::bisect::{BisectLog, Settings};
use verdict_engine::bisect_boots::BootCosts;
use verdict_report::table::Table;
use verdict_report::time::format_time;

pub(crate) fn abort_text(reason: &verdict_bisect::AbortReason) -> String {
    match reason {
        verdict_bisect::AbortReason::EndpointsIndistinguishable {
            shift,
            good_runs,
            bad_runs,
        } => {
            let interval = shift
                .and_then(|shift| {
                    shift.interval.map(|interval| {
                        format!(
                            "{:+.1}% [{:+.1}%, {:+.1}%]",
                            shift.estimate * 100.0,
                            interval.low * 100.0,
                            interval.high * 100.0
                        )
                    })
                })
                .unwrap_or_else(|| "no interval".to_string());
            format!(
                "the good and bad endpoints do not differ detectably after {good_runs} and {bad_runs} runs: bad vs good {interval}"
            )
        }
        verdict_bisect::AbortReason::EndpointSkipped { commit, reason } => format!(
            "endpoint {} could not be measured: {reason}",
            commit.short()
        ),
    }
}

pub(crate) fn summary(
    bisection: &Bisection,
    outcome: &verdict_bisect::Outcome,
    settings: &Settings,
    boots: Option<&BootCosts>,
    subject: &dyn Fn(&CommitId) -> String,
) -> String {
    let mut text = String::new();
    match &outcome.culprit {
        Culprit::Single(commit) => {
            text.push_str(&format!(
                "first bad commit: {} {}\n",
                commit,
                subject(commit)
            ));
            // The culprit's own decision: its runs against the good
            // endpoint's runs measured in turns with it (blocks). Pooled
            // samples of the parent and the culprit were taken at other
            // times and would mix machine load into the effect.
            let decision = bisection
                .steps()
                .iter()
                .rev()
                .find(|step| &step.commit == commit)
                .map(|step| &step.decision);
            if let Some(decision) = decision
                && let Some(shift) = decision.versus_good
            {
                let interval = shift.interval.map_or(String::new(), |interval| {
                    format!(
                        " [{:+.1}%, {:+.1}%] ({:.2}%)",
                        interval.low * 100.0,
                        interval.high * 100.0,
                        interval.confidence * 100.0
                    )
                });
                text.push_str(&format!(
                    "effect vs the good endpoint {} (measured in turns with it, {} runs each): {:+.1}%{interval}\n",
                    settings.good.short(),
                    decision.runs,
                    shift.estimate * 100.0
                ));
            }
        }
        Culprit::Range(commits) => {
            text.push_str("the first bad commit is one of (skipped or undecided commits prevent a single answer):\n");
            for commit in commits {
                text.push_str(&format!("  {} {}\n", commit, subject(commit)));
            }
        }
    }
    if !outcome.conflicts.is_empty() {
        text.push_str("non-monotonic evidence (a like-bad commit before a like-good one):\n");
        for conflict in &outcome.conflicts {
            text.push_str(&format!(
                "  bad {} before good {}\n",
                conflict.bad.short(),
                conflict.good.short()
            ));
        }
    }
    if !outcome.partial.is_empty() {
        text.push_str(&format!(
            "partial changes (between good and bad): {}\n",
            outcome
                .partial
                .iter()
                .map(|commit| commit.short().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    text.push_str(&format!(
        "{} steps, {} runs in total{}\n",
        outcome.steps,
        outcome.total_runs,
        boots.map_or(String::new(), |boots| format!(
            ", {} ({} failed)",
            boots_word(boots.total),
            boots.failed
        ))
    ));
    let mut previous = 0;
    let mut previous_boots = 0;
    for (index, step) in bisection.steps().iter().enumerate() {
        // A kernel bisection's cost is its boots: each measurement is one.
        let step_boots =
            boots
                .and_then(|boots| boots.per_step.get(index))
                .map_or(String::new(), |&total| {
                    let cost = total.saturating_sub(previous_boots);
                    previous_boots = total;
                    format!(", {}", boots_word(cost))
                });
        // A search call of the search-confirm design only steered the
        // search; the answer rests on the others.
        let provisional = if step.provisional {
            ", provisional"
        } else {
            ""
        };
        text.push_str(&format!(
            "  {} {:<9} {:>4} runs (step cost {}{step_boots}{provisional})\n",
            step.commit.short(),
            class_word(step.decision.class),
            step.decision.runs,
            step.total_runs.saturating_sub(previous)
        ));
        previous = step.total_runs;
    }
    text.push_str("\ngit bisect log replay:\n");
    text.push_str(&bisection.bisect_log(settings.first_parent, |commit| subject(commit)));
    text
}

/// `1 boot`, `3 boots`.
fn boots_word(count: usize) -> String {
    if count == 1 {
        "1 boot".to_string()
    } else {
        format!("{count} boots")
    }
}

pub(crate) fn class_word(class: Class) -> &'static str {
    match class {
        Class::Good => "good",
        Class::Bad => "bad",
        Class::Undecided => "undecided",
        Class::Skipped => "skipped",
    }
}

/// The HTML page's model: every commit of the range in order (measured or
/// not), its evidence, and the culprit from the stored result.
pub(crate) fn log_page(log: &BisectLog) -> verdict_report::html::BisectLog {
    let record = &log.record;
    let outcome: Option<verdict_bisect::Outcome> = record
        .result
        .clone()
        .and_then(|result| serde_json::from_value(result).ok());
    let culprits: Vec<CommitId> = match outcome.as_ref().map(|outcome| &outcome.culprit) {
        Some(Culprit::Single(commit)) => vec![commit.clone()],
        Some(Culprit::Range(commits)) => commits.clone(),
        None => Vec::new(),
    };
    let change = |shift: &Option<verdict_stats::shift::Shift>| {
        shift.map(|shift| verdict_report::html::Change {
            estimate: shift.estimate,
            low: shift.interval.map(|interval| interval.low),
            high: shift.interval.map(|interval| interval.high),
        })
    };
    let subject = |commit: &CommitId| {
        log.commits
            .iter()
            .find(|logged| &logged.evidence.commit == commit)
            .map(|logged| logged.subject.clone())
            .unwrap_or_default()
    };
    let commits = log
        .commits
        .iter()
        .map(|logged| {
            let evidence = &logged.evidence;
            verdict_report::html::BisectCommit {
                commit: evidence.commit.0.clone(),
                subject: logged.subject.clone(),
                runs: evidence.samples.len(),
                median: logged.median.filter(|_| logged.is_measured()),
                ci_low: logged.ci_low.filter(|_| logged.is_measured()),
                ci_high: logged.ci_high.filter(|_| logged.is_measured()),
                class: evidence.class.map(|class| class_word(class).to_string()),
                versus_good: evidence
                    .decision
                    .as_ref()
                    .and_then(|decision| change(&decision.versus_good)),
                versus_bad: evidence
                    .decision
                    .as_ref()
                    .and_then(|decision| change(&decision.versus_bad)),
                reason: evidence
                    .decision
                    .as_ref()
                    .and_then(|decision| decision.reason.clone()),
                culprit: culprits.contains(&evidence.commit),
            }
        })
        .collect();
    let result = match culprits.as_slice() {
        [] => None,
        [single] => Some(format!(
            "first bad commit: {} {}",
            single.0,
            subject(single)
        )),
        range => Some(format!(
            "the change is in one of {} commits (marked): {}",
            range.len(),
            range
                .iter()
                .map(|commit| commit.short().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    };
    verdict_report::html::BisectLog {
        facts: vec![
            ("bisection".to_string(), record.id.0.to_string()),
            ("repository".to_string(), record.repo.clone()),
            ("good".to_string(), record.good.clone()),
            ("bad".to_string(), record.bad.clone()),
            ("status".to_string(), record.status.as_str().to_string()),
            ("started".to_string(), format_time(record.started_at_ms)),
            ("runs".to_string(), log.bisection.total_runs().to_string()),
        ]
        .into_iter()
        .chain(log.boots.as_ref().map(|boots| {
            (
                "boots".to_string(),
                format!("{} ({} failed)", boots.total, boots.failed),
            )
        }))
        .collect(),
        commits,
        result,
    }
}

/// `verdict bisect log --format json` (`verdict.bisect-log/v1`), keys in
/// alphabetical order as it has always printed them.
pub(crate) fn log_json(
    log: &BisectLog,
    measured_on: Option<verdict_report::provenance::Provenance>,
) -> Result<serde_json::Value, serde_json::Error> {
    let record = &log.record;
    let boots_of = |commit| log.boots.as_ref().map(|boots| boots.of(commit));
    let commits = log
        .commits
        .iter()
        .filter(|logged| logged.is_measured())
        .map(|logged| {
            let evidence = &logged.evidence;
            BisectLogCommit {
                commit: evidence.commit.to_string(),
                subject: logged.subject.clone(),
                position: evidence.position,
                n: evidence.samples.len(),
                median: logged.median,
                ci_low: logged.ci_low,
                ci_high: logged.ci_high,
                class: evidence.class.map(|class| class_word(class).to_string()),
                decision: evidence.decision.clone(),
                boots: boots_of(&evidence.commit).map(|(boots, _)| boots),
                failed_boots: boots_of(&evidence.commit).map(|(_, failed)| failed),
            }
        })
        .collect();
    verdict_analysis::schema::sorted(&BisectLogDocument {
        schema: BISECT_LOG_SCHEMA,
        id: record.id.0,
        repo: record.repo.clone(),
        good: record.good.clone(),
        bad: record.bad.clone(),
        status: record.status.as_str().to_string(),
        started: format_time(record.started_at_ms),
        total_runs: log.bisection.total_runs(),
        total_boots: log.boots.as_ref().map(|boots| boots.total),
        failed_boots: log.boots.as_ref().map(|boots| boots.failed),
        commits,
        result: record.result.clone(),
        measured_on,
    })
}

/// `wall [s] (lower is better)`: the metric a bisection decides on.
pub(crate) fn metric_words(metric: &verdict_model::MetricSpec) -> String {
    let better = metric.direction.as_str();
    if metric.unit.is_empty() || metric.unit == metric.name {
        format!("{} ({better} is better)", metric.name)
    } else {
        format!("{} [{}] ({better} is better)", metric.name, metric.unit)
    }
}

/// The unit of the metric a bisection log's values are in.
fn log_unit(log: &BisectLog) -> &str {
    log.metric
        .as_ref()
        .map_or("", |metric| metric.unit.as_str())
}

/// The heading line of `verdict bisect log`.
fn log_heading(log: &BisectLog) -> String {
    format!(
        "bisection {} of {} ({}), {} runs so far{}{}",
        log.record.id.0,
        log.record.repo,
        log.record.status.as_str(),
        log.bisection.total_runs(),
        log.boots.as_ref().map_or(String::new(), |boots| format!(
            " in {} ({} failed)",
            boots_word(boots.total),
            boots.failed
        )),
        log.metric.as_ref().map_or(String::new(), |metric| format!(
            "; metric {}",
            metric_words(metric)
        ))
    )
}

/// `verdict bisect log` as text: a heading line naming the metric and
/// one row per measured or classified commit, values in the metric's
/// unit.
pub(crate) fn log_text(log: &BisectLog) -> String {
    let mut text = format!("{}\n", log_heading(log));
    let mut headers: Vec<String> = [
        "commit",
        "subject",
        "n",
        "median [95% CI]",
        "class",
        "decision",
    ]
    .map(String::from)
    .to_vec();
    if log.boots.is_some() {
        headers.insert(3, "boots".to_string());
    }
    let mut table = Table::new(headers);
    table.left = if log.boots.is_some() {
        vec![1, 5, 6]
    } else {
        vec![1, 4, 5]
    };
    let unit = log_unit(log);
    for logged in log.commits.iter().filter(|logged| logged.is_measured()) {
        let evidence = &logged.evidence;
        let median = median_text(logged, unit);
        let decision = decision_text(logged);
        let mut row = vec![
            evidence.commit.short().to_string(),
            logged.subject.chars().take(40).collect(),
            evidence.samples.len().to_string(),
            median,
            evidence.class.map_or("measuring", class_word).to_string(),
            decision,
        ];
        if let Some(boots) = &log.boots {
            let (total, failed) = boots.of(&evidence.commit);
            row.insert(
                3,
                if failed > 0 {
                    format!("{total} ({failed} failed)")
                } else {
                    total.to_string()
                },
            );
        }
        table.push(row);
    }
    text.push_str(&table.text());
    text
}

/// `100.0 [100.0, 100.0]`: a commit's median and its interval, in `unit`.
fn median_text(logged: &verdict_engine::bisect::LoggedCommit, unit: &str) -> String {
    let value = |value: f64| verdict_report::format::value(value, unit);
    match (logged.median, logged.ci_low, logged.ci_high) {
        (Some(median), Some(low), Some(high)) => {
            format!("{} [{}, {}]", value(median), value(low), value(high))
        }
        (Some(median), _, _) => value(median),
        _ => "-".to_string(),
    }
}

/// `vs good +200.0% [+200.0, +200.0]; vs bad ...; reason`: what decided a
/// commit.
fn decision_text(logged: &verdict_engine::bisect::LoggedCommit) -> String {
    logged
        .evidence
        .decision
        .as_ref()
        .map_or(String::new(), |decision| {
            let part = |shift: &Option<verdict_stats::shift::Shift>, side: &str| {
                shift.and_then(|shift| {
                    shift.interval.map(|interval| {
                        format!(
                            "vs {side} {:+.1}% [{:+.1}, {:+.1}]",
                            shift.estimate * 100.0,
                            interval.low * 100.0,
                            interval.high * 100.0
                        )
                    })
                })
            };
            [
                part(&decision.versus_good, "good"),
                part(&decision.versus_bad, "bad"),
                decision.reason.clone(),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("; ")
        })
}

/// `verdict bisect log --format email`: the heading and the metric, the
/// result, then one block per measured commit (its subject; n, median and
/// interval, class; what decided it), and what the commits were measured
/// on (`provenance`: the last measurement's), every line at most 80
/// columns.
pub(crate) fn log_email(
    log: &BisectLog,
    provenance: Option<&verdict_report::provenance::Provenance>,
) -> String {
    let mut lines = verdict_report::email::Lines::new();
    lines.prose(0, &log_heading(log));
    if let Some(result) = log_page(log).result {
        lines.blank();
        lines.line(0, &result);
    }
    let unit = log_unit(log);
    for logged in log.commits.iter().filter(|logged| logged.is_measured()) {
        let evidence = &logged.evidence;
        lines.blank();
        lines.line(
            0,
            &format!("{} {}", evidence.commit.short(), logged.subject),
        );
        let boots = log.boots.as_ref().map_or(String::new(), |boots| {
            let (total, failed) = boots.of(&evidence.commit);
            format!(", {} ({failed} failed)", boots_word(total))
        });
        lines.line(
            2,
            &format!(
                "{}: n={}{boots}, median {}",
                evidence.class.map_or("measuring", class_word),
                evidence.samples.len(),
                median_text(logged, unit)
            ),
        );
        let decision = decision_text(logged);
        if !decision.is_empty() {
            lines.line(2, &decision);
        }
    }
    if let Some(provenance) = provenance {
        verdict_report::email::provenance_block(&mut lines, provenance, &[]);
    }
    lines.finish()
}

/// What the commits were measured on, for the text summary: per machine
/// of the last measurement its title and facts (command line left out),
/// one line each.
pub(crate) fn measured_on_text(provenance: &verdict_report::provenance::Provenance) -> String {
    let mut text = String::from("\nmeasured on (the last measurement's machines):\n");
    for machine in provenance.machines.iter().chain(&provenance.controller) {
        let facts: Vec<String> = verdict_report::provenance::facts(machine)
            .into_iter()
            .filter(|(key, _)| key != "cmdline")
            .map(|(key, value)| format!("{key} {value}"))
            .collect();
        text.push_str(&format!(
            "  {}: {}\n",
            machine.title(),
            verdict_report::escape::text(&facts.join("; "))
        ));
    }
    text
}

/// The HTML log page's facts about what the commits were measured on:
/// per machine of the last measurement, its facts under its title.
pub(crate) fn measured_on_facts(
    provenance: &verdict_report::provenance::Provenance,
) -> Vec<(String, String)> {
    provenance
        .machines
        .iter()
        .chain(&provenance.controller)
        .flat_map(|machine| {
            let title = machine.title();
            verdict_report::provenance::facts(machine)
                .into_iter()
                .map(move |(key, value)| (format!("{title}: {key}"), value))
        })
        .collect()
}

/// The last measurement's provenance as what every commit was measured
/// on: without its own commit (the bisection measured many; its result
/// names the one that matters).
pub(crate) fn without_commits(
    provenance: &verdict_report::provenance::Provenance,
) -> verdict_report::provenance::Provenance {
    let mut provenance = provenance.clone();
    provenance.commit = None;
    for machine in provenance
        .machines
        .iter_mut()
        .chain(provenance.controller.as_mut())
    {
        if let Some(build) = machine.build.as_mut() {
            build.commit = None;
        }
    }
    provenance
}

/// The summary at the end of a bisection by email: the metric, the
/// summary's lines within 80 columns, then what the last measurement ran
/// on (CPU, kernel, config, the build's command and compiler) and the
/// command that reproduces the bisection.
pub(crate) fn summary_email(
    summary_text: &str,
    metric: &verdict_model::MetricSpec,
    provenance: Option<&verdict_report::provenance::Provenance>,
) -> String {
    let mut lines = verdict_report::email::Lines::new();
    lines.prose(
        0,
        &format!("verdict bisect: metric {}", metric_words(metric)),
    );
    lines.blank();
    for line in summary_text.lines() {
        if line.trim().is_empty() {
            lines.blank();
        } else {
            lines.exact(line);
        }
    }
    if let Some(provenance) = provenance {
        verdict_report::email::provenance_block(&mut lines, provenance, &[]);
    }
    lines.finish()
}
