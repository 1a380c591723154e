//! The parts every email report is made of: one block of lines per
//! comparison (its name; per metric its verdict, delta with interval and
//! p; both medians with n), the method in prose, the "What ran" block of a
//! run's provenance with the command that reproduces it, and the email
//! forms of `compare` and of a pivot built from them.
//!
//! Must not: compute anything: words and figures are the text form's
//! (`verdict_text`, `delta_with_interval`, `median_with_spread`).

use super::Lines;
use crate::compare::{
    CompareReport, ComparisonRow, SamplingUnit, delta_with_interval, median_with_spread,
    verdict_text,
};
use crate::format;
use crate::pivot::PivotReport;
use crate::sources::{Source, SourceKind};
use verdict_analysis::provenance::{MachineProvenance, MachineRole, Provenance};

/// One family of comparisons and the metric it is of (`wall [s]`).
pub type Family<'a> = (String, &'a CompareReport);

/// One block per comparison name (in first-seen order over the
/// families): the name, then for each family that has it the verdict,
/// the delta with its interval and p, and both medians with n.
pub fn comparison_blocks(lines: &mut Lines, families: &[Family<'_>]) {
    let mut names: Vec<&str> = Vec::new();
    for (_, report) in families {
        for row in &report.comparisons {
            if !names.contains(&row.name.as_str()) {
                names.push(&row.name);
            }
        }
    }
    for name in names {
        lines.blank();
        lines.line(0, name);
        for (metric, report) in families {
            if let Some(row) = report.comparisons.iter().find(|row| row.name == name) {
                comparison_lines(lines, metric, row, report.alpha);
            }
        }
    }
}

/// One comparison of one metric, under its name.
fn comparison_lines(lines: &mut Lines, metric: &str, row: &ComparisonRow, alpha: f64) {
    let label = if metric.is_empty() {
        String::new()
    } else {
        format!("{metric}: ")
    };
    lines.line(2, &format!("{label}{}", verdict_text(row)));
    let p = if row.p_value >= alpha {
        format!(
            "p {} (not below alpha {alpha})",
            format::p_value(row.p_value)
        )
    } else {
        format!("p {}", format::p_value(row.p_value))
    };
    lines.line(
        4,
        &format!(
            "delta {} ({:.1}% interval), {p}",
            delta_with_interval(row),
            row.delta_confidence * 100.0
        ),
    );
    let unit = if row.sampling_unit == SamplingUnit::Boot {
        " boots"
    } else {
        ""
    };
    for (side, summary) in [("baseline ", &row.baseline), ("candidate", &row.candidate)] {
        // `baseline ` is padded to line up with `candidate`.
        lines.line(
            4,
            &format!(
                "{side}  {}  n={}{unit}",
                median_with_spread(summary, &row.unit),
                summary.n
            ),
        );
    }
}

/// The method of a family, in prose: what delta, interval and p are.
pub fn method(lines: &mut Lines, report: &CompareReport) {
    lines.blank();
    let header = crate::compare::header(report).replace('\n', "; ");
    lines.prose(0, &format!("Method: {header}."));
}

/// The "What ran" block: the commit, each machine the workload ran on
/// (for a booted run each guest's boot level first, then the controller,
/// labelled), `data` lines (how many runs and boots), and the command
/// that reproduces the run with the experiment file's hash.
pub fn provenance_block(lines: &mut Lines, provenance: &Provenance, data: &[(String, String)]) {
    lines.heading("What ran");
    if let Some(commit) = &provenance.commit {
        lines.fact(2, "commit", commit);
    }
    for (key, value) in data {
        lines.fact(2, key, value);
    }
    for machine in &provenance.machines {
        machine_lines(lines, machine);
    }
    if let Some(controller) = &provenance.controller {
        machine_lines(lines, controller);
    }
    reproduce(lines, provenance, "");
}

/// The Reproduce section: the command as given, the seed (`whose`
/// qualifies it, e.g. ` on the first host`) and the experiment's hash.
pub(crate) fn reproduce(lines: &mut Lines, provenance: &Provenance, whose: &str) {
    lines.heading("Reproduce");
    lines.line(2, &provenance.reproduce.command);
    lines.line(
        2,
        &format!(
            "(seed {}{whose}; experiment sha256 below)",
            provenance.reproduce.seed
        ),
    );
    lines.line(4, &provenance.reproduce.experiment_sha256);
}

/// One machine's facts under its title.
pub(crate) fn machine_lines(lines: &mut Lines, machine: &MachineProvenance) {
    lines.blank();
    let role = match machine.role {
        MachineRole::Host => "the workload ran here",
        MachineRole::Guest => "the workload ran in this guest",
        MachineRole::Controller => "ran verdict and booted the guests; not measured",
    };
    lines.line(2, &format!("{} ({role})", machine.title()));
    for (key, value) in crate::provenance::facts(machine) {
        lines.fact(4, &key, &value);
    }
}

/// What a stored side of `compare` ran on: the side (`baseline
/// \`3:kernel=a\``) and its last run's provenance.
pub type SideProvenance = (String, Provenance);

/// `verdict compare` by email: the comparisons, the method, where each
/// side came from, (`--config-diff`) the kernel config difference, and
/// what each stored side ran on.
pub fn compare(
    report: &CompareReport,
    sources: &[Source],
    config_diff: Option<&str>,
    sides: &[SideProvenance],
) -> String {
    let mut lines = Lines::new();
    let count = report.comparisons.len();
    lines.prose(
        0,
        &format!(
            "verdict compare: {count} comparison{} ({})",
            if count == 1 { "" } else { "s" },
            summary_counts(&report.comparisons)
        ),
    );
    comparison_blocks(&mut lines, &[(String::new(), report)]);
    method(&mut lines, report);
    source_lines(&mut lines, sources);
    if let Some(difference) = config_diff {
        lines.heading("Kernel config difference");
        for line in difference.lines() {
            if line.trim().is_empty() {
                lines.blank();
            } else {
                lines.exact(line);
            }
        }
    }
    if !sides.is_empty() {
        lines.heading("What ran");
    }
    for (side, provenance) in sides {
        lines.blank();
        lines.line(0, side);
        if let Some(commit) = &provenance.commit {
            lines.fact(2, "commit", commit);
        }
        for machine in provenance.machines.iter().chain(&provenance.controller) {
            machine_lines(&mut lines, machine);
        }
        lines.fact(2, "run by", &provenance.reproduce.command);
    }
    lines.finish()
}

/// `2 regressions, 1 equivalent`: the verdicts counted, in a fixed order.
pub fn summary_counts(rows: &[ComparisonRow]) -> String {
    use crate::compare::Verdict;
    let parts: Vec<String> = [
        (Verdict::Regression, "regression", "regressions"),
        (Verdict::Improvement, "improvement", "improvements"),
        (Verdict::Equivalent, "equivalent", "equivalent"),
        (Verdict::Inconclusive, "inconclusive", "inconclusive"),
    ]
    .into_iter()
    .filter_map(|(verdict, one, many)| {
        let count = rows.iter().filter(|row| row.verdict == verdict).count();
        (count > 0).then(|| format!("{count} {}", if count == 1 { one } else { many }))
    })
    .collect();
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(", ")
    }
}

/// Where each stored side came from.
fn source_lines(lines: &mut Lines, sources: &[Source]) {
    let mut first = true;
    for source in sources {
        let text = match &source.kind {
            SourceKind::Selection {
                runs,
                cells,
                values,
                ..
            } => format!(
                "{values} values from {} {}{}",
                if runs.len() == 1 { "run" } else { "runs" },
                runs.iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                if *cells > 1 {
                    format!(" ({cells} cells pooled)")
                } else {
                    String::new()
                }
            ),
            _ => "a file".to_string(),
        };
        if first {
            lines.heading("Sources");
            first = false;
        }
        lines.fact(2, &format!("{} `{}`", source.side, source.spec), &text);
    }
}

/// A pivot by email: its header in prose, the table (aligned when it
/// fits, else one block per row), the ratio notes, what ran.
pub fn pivot(report: &PivotReport, provenance: Option<&Provenance>) -> String {
    let mut lines = Lines::new();
    let (header, table, notes) = crate::pivot::parts(report);
    for line in header {
        lines.prose(0, &line);
    }
    lines.blank();
    lines.table(0, &table);
    for note in notes {
        lines.blank();
        lines.prose(0, &note);
    }
    if let Some(provenance) = provenance {
        let counts: Vec<usize> = report
            .rows
            .iter()
            .flat_map(|row| row.cells.iter().flatten().map(|cell| cell.n))
            .collect();
        let per_cell = super::per_cell(&counts).unwrap_or_else(|| "no data".to_string());
        let data = [(
            "runs".to_string(),
            format!(
                "{per_cell}; {} of {} iterations recorded",
                report.run.recorded, report.run.planned
            ),
        )];
        provenance_block(&mut lines, provenance, &data);
    }
    lines.finish()
}
