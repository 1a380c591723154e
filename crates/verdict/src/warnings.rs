//! Warnings about where measurements came from, shared by `runs`, `report`
//! and `compare`: runs that overlapped in time on one host (they disturbed
//! each other) and comparisons whose sides come from different runs. Builds
//! them from what the store recorded and renders them as text lines or JSON
//! objects; must not decide verdicts or change any number it reports on.

use std::collections::BTreeSet;

use serde::Serialize;
use verdict_engine::compare::SideSpan;
use verdict_model::RunId;
use verdict_report::Format;
use verdict_store::Store;
use verdict_store::overlap::{IDLE_GAP_MS, Overlap, overlaps, overlaps_involving};

use crate::error::CliError;
use verdict_report::time::{format_duration, format_span};

/// One warning, as it appears in a JSON document's `warnings` array.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Warning {
    /// Two runs measured at the same time on the same host.
    OverlappingRuns {
        runs: [i64; 2],
        host: String,
        from_ms: i64,
        to_ms: i64,
        overlap_ms: i64,
        message: String,
    },
    /// The two sides of a comparison come from different runs.
    DifferentRuns {
        baseline_runs: Vec<i64>,
        candidate_runs: Vec<i64>,
        /// Time between the end of the earlier side's measurements and the
        /// start of the later side's (0 when they interleave).
        apart_ms: i64,
        message: String,
    },
}

impl Warning {
    pub(crate) fn message(&self) -> &str {
        match self {
            Warning::OverlappingRuns { message, .. } | Warning::DifferentRuns { message, .. } => {
                message
            }
        }
    }
}

fn overlap_warning(overlap: &Overlap) -> Warning {
    Warning::OverlappingRuns {
        runs: [overlap.first.0, overlap.second.0],
        host: overlap.host.clone(),
        from_ms: overlap.from_ms,
        to_ms: overlap.to_ms,
        overlap_ms: overlap.overlap_ms,
        message: format!(
            "runs {} and {} measured at the same time on host {} for {} ({}); \
             each disturbed the other's measurements",
            overlap.first,
            overlap.second,
            overlap.host,
            format_duration(overlap.overlap_ms),
            format_span(overlap.from_ms, overlap.to_ms),
        ),
    }
}

fn overlaps_in(store: &dyn Store) -> Result<Vec<Overlap>, CliError> {
    let times = store.run_times().map_err(CliError::internal)?;
    overlaps(&times, IDLE_GAP_MS, |run| store.iteration_spans(run)).map_err(CliError::internal)
}

/// Every pair of stored runs that overlapped on a host.
pub(crate) fn all_overlaps(store: &dyn Store) -> Result<Vec<Warning>, CliError> {
    Ok(overlaps_in(store)?.iter().map(overlap_warning).collect())
}

/// The overlaps that involve any of `runs`.
pub(crate) fn overlaps_of(
    store: &dyn Store,
    runs: &BTreeSet<RunId>,
) -> Result<Vec<Warning>, CliError> {
    Ok(overlaps_involving(&overlaps_in(store)?, runs)
        .iter()
        .map(overlap_warning)
        .collect())
}

/// The warnings about a comparison's sides (`None` for a file): runs that
/// overlapped others on a host (looked up in `store`), and sides from
/// different runs.
pub(crate) fn side_warnings(
    store: Option<&dyn Store>,
    sides: [Option<&SideSpan>; 2],
) -> Result<Vec<Warning>, CliError> {
    let mut warnings = Vec::new();
    if let Some(store) = store {
        let runs: BTreeSet<RunId> = sides
            .iter()
            .flatten()
            .flat_map(|span| span.runs.iter().copied())
            .collect();
        warnings.extend(overlaps_of(store, &runs)?);
    }
    if let [Some(base), Some(cand)] = sides
        && let Some(warning) = different_runs(base, cand)
    {
        warnings.push(warning);
    }
    Ok(warnings)
}

fn run_list(runs: &[RunId]) -> String {
    let ids: Vec<String> = runs.iter().map(RunId::to_string).collect();
    match ids.len() {
        1 => format!("run {}", ids[0]),
        _ => format!("runs {}", ids.join(", ")),
    }
}

/// A warning when the two sides do not come from the same runs, saying
/// how far apart they were measured.
fn different_runs(baseline: &SideSpan, candidate: &SideSpan) -> Option<Warning> {
    if baseline.runs == candidate.runs {
        return None;
    }
    let apart_ms = if baseline.last_ms < candidate.first_ms {
        candidate.first_ms - baseline.last_ms
    } else if candidate.last_ms < baseline.first_ms {
        baseline.first_ms - candidate.last_ms
    } else {
        0
    };
    let when = if apart_ms == 0 {
        "measured over overlapping periods, but not in the same runs: whatever differed \
         between the runs (what else ran, their order) is part of the difference"
            .to_string()
    } else {
        format!(
            "measured {} apart: whatever changed on the machine in between is part of the \
             difference",
            format_duration(apart_ms)
        )
    };
    Some(Warning::DifferentRuns {
        baseline_runs: baseline.runs.iter().map(|run| run.0).collect(),
        candidate_runs: candidate.runs.iter().map(|run| run.0).collect(),
        apart_ms,
        message: format!(
            "the baseline comes from {} ({}) and the candidate from {} ({}), {when}",
            run_list(&baseline.runs),
            format_span(baseline.first_ms, baseline.last_ms),
            run_list(&candidate.runs),
            format_span(candidate.first_ms, candidate.last_ms),
        ),
    })
}

/// The warnings as lines to print after a text or markdown document
/// (`warning: ...`); empty when there are none.
pub(crate) fn render_lines(warnings: &[Warning], format: Format) -> String {
    let mut output = String::new();
    for warning in warnings {
        let message = verdict_report::escape::text(warning.message());
        match format {
            Format::Markdown => output.push_str(&format!("- **warning:** {message}\n")),
            // Within the email's width, continuation lines indented.
            Format::Email => {
                for line in verdict_report::email::wrap(
                    &format!("warning: {message}"),
                    0,
                    4,
                    verdict_report::email::WIDTH,
                ) {
                    output.push_str(&line);
                    output.push('\n');
                }
            }
            _ => output.push_str(&format!("warning: {message}\n")),
        }
    }
    output
}

/// A JSON document with fields added after its own (`warnings` last), in
/// the order the document has them.
#[derive(Serialize)]
struct Extended<'a, T: Serialize> {
    #[serde(flatten)]
    document: &'a T,
    #[serde(flatten)]
    extra: serde_json::Map<String, serde_json::Value>,
    warnings: &'a [Warning],
}

/// Prints a document with the warnings: `document` serialized with
/// Written to stdout or `output`: `extra` fields and `warnings` added for JSON; `rendered` followed by
/// `warning:` lines for text and markdown; `rendered` with the warnings on
/// stderr for CSV (which stays one table).
pub(crate) fn print_with_warnings<T: Serialize>(
    rendered: &str,
    document: &T,
    format: Format,
    warnings: &[Warning],
    extra: serde_json::Map<String, serde_json::Value>,
    output: Option<&std::path::Path>,
) -> Result<(), CliError> {
    let text = match format {
        Format::Json => {
            let extended = Extended {
                document,
                extra,
                warnings,
            };
            format!(
                "{}\n",
                serde_json::to_string_pretty(&extended).map_err(CliError::internal)?
            )
        }
        Format::Csv => {
            for warning in warnings {
                eprintln!(
                    "verdict: warning: {}",
                    verdict_report::escape::text(warning.message())
                );
            }
            rendered.to_string()
        }
        _ if warnings.is_empty() => rendered.to_string(),
        _ => format!("{rendered}\n{}", render_lines(warnings, format)),
    };
    crate::common::emit(&text, output)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(runs: &[i64], first_ms: i64, last_ms: i64) -> SideSpan {
        SideSpan {
            runs: runs.iter().map(|&run| RunId(run)).collect(),
            first_ms,
            last_ms,
        }
    }

    #[test]
    fn sides_from_the_same_runs_need_no_warning() {
        assert_eq!(
            different_runs(&span(&[3, 5], 0, 10), &span(&[3, 5], 0, 10)),
            None
        );
    }

    #[test]
    fn sides_from_different_runs_say_how_far_apart() {
        let warning =
            different_runs(&span(&[3], 0, 60_000), &span(&[5], 7_560_000, 7_600_000)).unwrap();
        let Warning::DifferentRuns {
            apart_ms, message, ..
        } = &warning
        else {
            panic!("{warning:?}");
        };
        assert_eq!(*apart_ms, 7_500_000);
        assert!(
            message.contains("run 3") && message.contains("run 5"),
            "{message}"
        );
        assert!(message.contains("measured 2 h 5 min apart"), "{message}");
        let json = serde_json::to_value(&warning).unwrap();
        assert_eq!(json["kind"], "different_runs");
        assert_eq!(json["baseline_runs"], serde_json::json!([3]));
    }
}
