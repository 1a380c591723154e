//! The HTML page of a host group (`verdict report --format html` after
//! `verdict run --host A --host B`): the comparisons combined across every
//! host (verdict counts, the combined one-sided tests, the change across
//! hosts with its interval, as a table and a forest plot), then every
//! host's comparisons and cells, and the hosts' environments side by side.
//!
//! Must not: compute verdicts of its own (the combinations come from
//! verdict-analysis), or emit a quoted value unescaped.

use super::page::{self, Cell, EnvironmentColumn, Page, VerdictClass};
use super::svg::{self, ForestRow};
use crate::hosts::{AcrossHosts, HostComparisons, HostRun, combine_hosts, host_comparisons};

/// The page of `hosts` (not empty); `alpha` tests the combined p-values.
pub fn render_hosts(hosts: &[HostRun], alpha: f64, environments: &[EnvironmentColumn]) -> String {
    let first = &hosts[0].report;
    let mut page = Page::new(&format!("{} on {} hosts", first.run.name, hosts.len()));
    let facts: Vec<(String, String)> = hosts
        .iter()
        .map(|host| {
            (
                format!("host {}", host.host),
                format!(
                    "run {} ({}), {} of {} iterations recorded",
                    host.run,
                    host.report.run.status,
                    host.report.run.recorded,
                    host.report.run.planned
                ),
            )
        })
        .chain(std::iter::once((
            "metric".to_string(),
            format!("{} ({} is better)", first.metric.name, first.metric.better),
        )))
        .collect();
    page.push(&page::facts(&facts));
    let per_host: Vec<HostComparisons> = hosts
        .iter()
        .map(|host| host_comparisons(&host.host, &host.report))
        .collect();
    combined(&mut page, &per_host, hosts.len(), alpha, first);
    for host in hosts {
        page.heading(
            &format!("Host {} (run {})", host.host, host.run),
            &format!("host-{}", host.run),
        );
        match &host.report.comparisons {
            Some(comparisons) => page.push(&page::comparison_table(comparisons)),
            None => page.note("No comparisons."),
        }
    }
    page.heading("Environment", "environment");
    page.push(&page::environment(environments));
    page.finish()
}

/// The across-hosts table and its forest plot.
fn combined(
    page: &mut Page,
    per_host: &[HostComparisons],
    hosts: usize,
    alpha: f64,
    first: &crate::RunReport,
) {
    page.heading(&format!("Across {hosts} hosts"), "across-hosts");
    page.note("Each host is compared within itself. The verdicts are counted; the per-host Mann-Whitney tests are combined with the weighted Z-method (Stouffer/Lipták, weights the square root of each host's n), each direction tested at alpha/2; the change across hosts is the stratified Hodges-Lehmann shift (van Elteren weights 1/(n+m+1)) with the interval from inverting that stratified test. Samples are never pooled.");
    let combinations = combine_hosts(per_host, alpha);
    let change = |combination: &crate::hosts::HostCombination| {
        combination
            .shift
            .map_or("-".to_string(), |shift| crate::hosts::shift_text(&shift))
    };
    let rows: Vec<(Vec<Cell>, Option<&str>)> = combinations
        .iter()
        .map(|combination| {
            (
                vec![
                    Cell::Text(combination.name.clone()),
                    Cell::Text(
                        combination
                            .counts
                            .iter()
                            .map(|(verdict, count)| format!("{verdict} on {count} of {hosts}"))
                            .collect::<Vec<_>>()
                            .join(", "),
                    ),
                    Cell::Verdict {
                        class: class_of(combination.combined),
                        text: combination.combined.as_str().to_string(),
                    },
                    Cell::Number(change(combination)),
                    Cell::Number(format!("{:.4}", combination.p_worse)),
                    Cell::Number(format!("{:.4}", combination.p_better)),
                ],
                None,
            )
        })
        .collect();
    page.push(&page::table(
        &[
            "comparison",
            "per host",
            "combined",
            "change across hosts",
            "p worse",
            "p better",
        ],
        &rows,
        "comparisons",
    ));
    let threshold = |name: &str| {
        first
            .comparisons
            .as_ref()
            .and_then(|report| report.comparisons.iter().find(|row| row.name == name))
            .map_or(0.0, |row| row.threshold)
    };
    let forest: Vec<ForestRow> = combinations
        .iter()
        .filter_map(|combination| {
            let shift = combination.shift?;
            Some(ForestRow {
                label: combination.name.clone(),
                delta: shift.estimate,
                low: shift.interval.map(|interval| interval.low),
                high: shift.interval.map(|interval| interval.high),
                threshold: threshold(&combination.name),
                verdict: class_of(combination.combined).css().to_string(),
                class: class_of(combination.combined),
                note: Some(combination.combined.as_str().to_string()),
            })
        })
        .collect();
    if !forest.is_empty() {
        page.push(&svg::forest_with_axis(
            &forest,
            "change across hosts",
            "change across hosts = stratified Hodges-Lehmann shift with its interval; shaded: within the threshold",
        ));
        page.push("\n");
        page.push(&page::forest_legend());
    }
}

/// The colour of a combined result: worse as a regression, better as an
/// improvement, no consistent change as inconclusive.
fn class_of(combined: AcrossHosts) -> VerdictClass {
    match combined {
        AcrossHosts::Worse => VerdictClass::Regression,
        AcrossHosts::Better => VerdictClass::Improvement,
        AcrossHosts::NoConsistentChange => VerdictClass::Inconclusive,
    }
}
