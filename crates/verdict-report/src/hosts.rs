//! A host group's results (`verdict run --host A --host B`, `verdict report
//! RUN --rows host`): the `Across N hosts` lines (per comparison, the
//! verdict counts and the weighted Z-method p-values over the per-host
//! tests, Stouffer 1949 / Lipták 1958, computed by verdict-analysis
//! `hosts`; samples are never pooled) and the table of one row per host.
//! Pure: the per-host reports are given.

pub use verdict_analysis::hosts::{AcrossHosts, HostCombination, HostComparisons, combine_hosts};

use crate::compare::{ComparisonRow, Verdict};
use crate::table::Table;
use crate::{Format, RunReport};
use verdict_analysis::hosts::{HOSTS_SCHEMA, HostsCell, HostsComparison, HostsDocument, HostsRow};

/// `Across hosts` lines: per comparison, the verdict counts, the
/// weighted Z-method p-values for "worse" and "better", each tested at
/// `alpha / 2`, and the change across hosts (the stratified
/// Hodges–Lehmann shift and its interval), computed by verdict-analysis
/// `hosts`.
pub fn combined_lines(per_host: &[HostComparisons], hosts: usize, alpha: f64) -> String {
    let mut text = format!(
        "Across {hosts} hosts (each host compared within itself; combined with the weighted Z-method, Stouffer/Lipták, over per-host Mann–Whitney tests; size: stratified Hodges–Lehmann shift, van Elteren weights; samples never pooled):\n"
    );
    for combination in combine_hosts(per_host, alpha) {
        text.push_str(&format!("  {}\n", combined_line(&combination, hosts)));
    }
    // Labels come from commands: no control character reaches the terminal.
    text.lines()
        .map(|line| format!("{}\n", crate::escape::text(line)))
        .collect()
}

/// `NAME: regression on 2 of 2 hosts; combined: worse across hosts (p
/// worse = ..., p better = ...); change +12.1% [+8.0%, +16.3%] (95%)`.
pub fn combined_line(combination: &HostCombination, hosts: usize) -> String {
    let summary = combination
        .counts
        .iter()
        .map(|(verdict, count)| format!("{verdict} on {count} of {hosts} hosts"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{}: {summary}; combined: {} (p worse = {}, p better = {}){}",
        combination.name,
        combination.combined.as_str(),
        format_p(combination.p_worse),
        format_p(combination.p_better),
        combination.shift.map_or(String::new(), |shift| format!(
            "; change {}",
            shift_text(&shift)
        ))
    )
}

/// `+12.1% [+8.0%, +16.3%] (95%)`, or the estimate alone.
pub fn shift_text(shift: &verdict_analysis::hosts::CombinedShift) -> String {
    match shift.interval {
        Some(interval) => format!(
            "{} [{}, {}] ({:.0}%)",
            crate::format::percent(shift.estimate),
            crate::format::percent(interval.low),
            crate::format::percent(interval.high),
            interval.confidence * 100.0
        ),
        None => format!(
            "{} (too few values for an interval)",
            crate::format::percent(shift.estimate)
        ),
    }
}

/// A combined p-value: four decimals, `<0.0001` below that.
pub fn format_p(p: f64) -> String {
    if p < 0.0001 {
        "<0.0001".to_string()
    } else {
        format!("{p:.4}")
    }
}

/// One host's run in a host group.
#[derive(Debug, Clone)]
pub struct HostRun {
    pub host: String,
    pub run: i64,
    pub report: RunReport,
}

/// A host's comparisons with the values behind them.
pub fn host_comparisons(host: &str, report: &RunReport) -> HostComparisons {
    HostComparisons {
        host: host.to_string(),
        rows: comparison_rows_of(report),
        values: report.compared_values.clone(),
    }
}

/// The comparison rows of a report (none when it has no comparisons).
pub fn comparison_rows_of(report: &RunReport) -> Vec<ComparisonRow> {
    report
        .comparisons
        .as_ref()
        .map(|report| report.comparisons.clone())
        .unwrap_or_default()
}

/// `verdict report RUN --rows host`: one row per host with each cell's
/// median and each comparison's delta and verdict (the first host's cells
/// and comparisons are the columns), then the combined lines for text and
/// markdown; `verdict.hosts/v1` for JSON. Also every verdict shown, for
/// the exit code. `hosts` must not be empty.
pub fn host_rows(
    hosts: &[HostRun],
    format: Format,
    alpha: f64,
    width: Option<usize>,
) -> (String, Vec<Verdict>) {
    let first = &hosts[0].report;
    let cells: Vec<String> = first.cells.iter().map(|cell| cell.label.clone()).collect();
    let comparisons: Vec<String> = comparison_rows_of(first)
        .into_iter()
        .map(|row| row.name)
        .collect();
    let unit = first.metric.unit.clone();
    let mut header = vec!["host".to_string(), "run".to_string()];
    header.extend(cells.iter().map(|label| format!("{label} median")));
    header.extend(comparisons.iter().cloned());
    let mut table = Table::new(header);
    let mut verdicts = Vec::new();
    let mut json_rows = Vec::new();
    let mut per_host = Vec::new();
    for HostRun { host, run, report } in hosts {
        let mut row = vec![host.clone(), run.to_string()];
        for label in &cells {
            let median = report
                .cells
                .iter()
                .find(|cell| &cell.label == label)
                .and_then(|cell| cell.median);
            row.push(median.map_or("-".to_string(), |value| crate::format::value(value, &unit)));
        }
        let rows = comparison_rows_of(report);
        for name in &comparisons {
            row.push(match rows.iter().find(|row| &row.name == name) {
                Some(found) => {
                    verdicts.push(found.verdict);
                    format!("{} {}", crate::format::percent(found.delta), found.verdict)
                }
                None => "-".to_string(),
            });
        }
        json_rows.push(HostsRow {
            host: host.clone(),
            run: *run,
            cells: report
                .cells
                .iter()
                .map(|cell| HostsCell {
                    label: cell.label.clone(),
                    median: cell.median,
                })
                .collect(),
            comparisons: rows
                .iter()
                .map(|row| HostsComparison {
                    name: row.name.clone(),
                    delta: row.delta,
                    p_value: row.p_value,
                    verdict: row.verdict,
                })
                .collect(),
        });
        table.push(row);
        per_host.push(HostComparisons {
            host: host.clone(),
            rows,
            values: report.compared_values.clone(),
        });
    }
    let combined = || combined_lines(&per_host, hosts.len(), alpha);
    let text = match format {
        Format::Text => format!("{}\n{}", table.text_width(width), combined()),
        Format::Email => crate::email::hosts(hosts, alpha, &[]),
        Format::Markdown => format!("{}\n{}", table.markdown(), combined()),
        Format::Csv => table.csv(),
        Format::Json => format!(
            "{}\n",
            // Keys in alphabetical order, as the document has always had them.
            verdict_analysis::schema::sorted(&HostsDocument {
                schema: HOSTS_SCHEMA,
                metric: first.metric.name.clone(),
                hosts: json_rows,
            })
            .and_then(|document| serde_json::to_string_pretty(&document))
            .unwrap_or_default()
        ),
    };
    (text, verdicts)
}

/// A host group's report as one JSON document (`verdict.group/v1`).
pub fn group_json(hosts: &[HostRun], alpha: f64) -> String {
    use verdict_analysis::hosts::{GROUP_SCHEMA, GroupHost, GroupReport};
    let per_host: Vec<HostComparisons> = hosts
        .iter()
        .map(|host| host_comparisons(&host.host, &host.report))
        .collect();
    let document = GroupReport {
        schema: GROUP_SCHEMA,
        hosts: hosts
            .iter()
            .map(|host| GroupHost {
                host: &host.host,
                run: host.run,
                report: &host.report,
            })
            .collect(),
        combined: combine_hosts(&per_host, alpha),
    };
    serde_json::to_string_pretty(&document).unwrap_or_default() + "\n"
}

/// A host group's report as one CSV table: each host's report table
/// (`verdict report --format csv`) under one header, with `host` and
/// `run` columns first.
pub fn group_csv(hosts: &[HostRun]) -> String {
    let mut output = String::new();
    for (index, host) in hosts.iter().enumerate() {
        let table = crate::run::render(&host.report, Format::Csv);
        let mut lines = table.lines();
        let header = lines.next().unwrap_or_default();
        if index == 0 {
            output.push_str(&format!("host,run,{header}\n"));
        }
        for line in lines {
            output.push_str(&format!(
                "{},{},{line}\n",
                crate::escape::csv(&host.host),
                host.run
            ));
        }
    }
    output
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{Better, ComparisonInput, comparison_rows};

    fn rows(shift: f64) -> Vec<ComparisonRow> {
        let baseline: Vec<f64> = (0..12).map(|index| 100.0 + f64::from(index % 4)).collect();
        let input = ComparisonInput {
            name: "cmd=b vs cmd=a".to_string(),
            unit: "s".to_string(),
            better: Better::Lower,
            threshold: 0.02,
            power: crate::compare::DEFAULT_POWER,
            candidate: baseline.iter().map(|value| value * shift).collect(),
            baseline,
        };
        comparison_rows(&[input], 0.05, true).unwrap().comparisons
    }

    #[test]
    fn a_slowdown_on_every_host_is_worse_across_hosts_and_none_is_no_change() {
        let host = |name: &str, shift: f64| HostComparisons {
            host: name.to_string(),
            rows: rows(shift),
            values: Vec::new(),
        };
        let slower = [host("a", 1.3), host("b", 1.3)];
        let text = combined_lines(&slower, 2, 0.05);
        assert!(text.starts_with("Across 2 hosts"), "{text}");
        assert!(
            text.contains(
                "cmd=b vs cmd=a: regression on 2 of 2 hosts; combined: worse across hosts"
            ),
            "{text}"
        );
        let same = [host("a", 1.0), host("b", 1.0)];
        assert!(
            combined_lines(&same, 2, 0.05).contains("no consistent change across hosts"),
            "{}",
            combined_lines(&same, 2, 0.05)
        );
    }

    #[test]
    fn p_values_below_one_in_ten_thousand_are_bounded() {
        assert_eq!(format_p(0.00001), "<0.0001");
        assert_eq!(format_p(0.25), "0.2500");
    }
}
