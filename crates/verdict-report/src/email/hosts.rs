//! A host group's report by email (`verdict run --host A --host B`,
//! `verdict report` of such a run): the comparisons combined across the
//! hosts first (verdict counts, the weighted Z-method, the change across
//! hosts with its interval), then each host's comparison blocks, then
//! what ran on each host and how to reproduce the group.
//!
//! Must not: compute anything: the combinations are verdict-analysis's.

use super::Lines;
use super::blocks::{comparison_blocks, method, reproduce, summary_counts};
use crate::hosts::{
    HostComparisons, HostRun, combine_hosts, format_p, host_comparisons, shift_text,
};

/// The group's report as an email; `alpha` tests the combined p-values;
/// `warnings` (e.g. two hosts that are one machine) follow the combined
/// lines.
pub fn hosts(hosts: &[HostRun], alpha: f64, warnings: &[String]) -> String {
    let mut lines = Lines::new();
    let Some(first) = hosts.first() else {
        return lines.finish();
    };
    lines.line(
        0,
        &format!(
            "verdict: {} on {} hosts (runs {})",
            first.report.run.name,
            hosts.len(),
            hosts
                .iter()
                .map(|host| host.run.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    let per_host: Vec<HostComparisons> = hosts
        .iter()
        .map(|host| host_comparisons(&host.host, &host.report))
        .collect();
    lines.heading(&format!("Across {} hosts", hosts.len()));
    lines.prose(
        2,
        "Each host compared within itself; the per-host Mann-Whitney tests combined with the weighted Z-method (Stouffer/Liptak); the size is the stratified Hodges-Lehmann shift (van Elteren weights); samples are never pooled.",
    );
    for combination in combine_hosts(&per_host, alpha) {
        lines.blank();
        lines.line(2, &combination.name);
        let counts = combination
            .counts
            .iter()
            .map(|(verdict, count)| format!("{verdict} on {count} of {}", hosts.len()))
            .collect::<Vec<_>>()
            .join(", ");
        lines.line(
            4,
            &format!("{counts}; combined: {}", combination.combined.as_str()),
        );
        if let Some(shift) = &combination.shift {
            lines.line(4, &format!("change across hosts {}", shift_text(shift)));
        }
        lines.line(
            4,
            &format!(
                "p worse {}, p better {} (each tested at {})",
                format_p(combination.p_worse),
                format_p(combination.p_better),
                alpha / 2.0
            ),
        );
    }
    for warning in warnings {
        lines.blank();
        lines.line(2, &format!("warning: {warning}"));
    }
    for host in hosts {
        lines.heading(&format!("Host {} (run {})", host.host, host.run));
        if let Some(comparisons) = &host.report.comparisons {
            lines.prose(
                0,
                &format!(
                    "{} ({} is better): {}.",
                    host.report.metric.name,
                    host.report.metric.better,
                    summary_counts(&comparisons.comparisons)
                ),
            );
            comparison_blocks(
                &mut lines,
                &[(host.report.metric.name.clone(), comparisons)],
            );
        } else if let Some(error) = &host.report.comparisons_error {
            lines.prose(0, &format!("comparisons not computed: {error}"));
        }
    }
    if let Some(comparisons) = &first.report.comparisons {
        method(&mut lines, comparisons);
    }
    lines.heading("What ran");
    for host in hosts {
        lines.blank();
        let cells: Vec<usize> = host.report.cells.iter().map(|cell| cell.n).collect();
        let runs = super::per_cell(&cells).map_or(String::new(), |runs| format!(", {runs}"));
        lines.line(2, &format!("host {} (run {}{runs})", host.host, host.run));
        let Some(provenance) = &host.report.provenance else {
            continue;
        };
        for machine in &provenance.machines {
            if let Some(name) = &machine.hostname {
                lines.fact(4, "hostname", name);
            }
            for (key, value) in crate::provenance::facts(machine) {
                lines.fact(4, &key, &value);
            }
        }
    }
    if let Some(provenance) = &first.report.provenance {
        reproduce(&mut lines, provenance, " on the first host");
    }
    lines.finish()
}
