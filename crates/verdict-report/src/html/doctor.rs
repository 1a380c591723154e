//! The HTML page of `verdict doctor`: the summary line, the environment,
//! every check with its status (colour and word), finding, evidence and
//! fix, the recommendation, and the probe's samples against time (run
//! order, with a moving median) and as a distribution.
//! Must not: measure or judge anything (verdict-doctor does) or emit
//! unescaped text (environment strings and evidence come from the machine).

use super::CellSeries;
use super::page::{self, Cell, EnvironmentColumn, Page, VerdictClass};
use super::run::{Pictures, cell_pictures};

/// One check as the doctor reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct DoctorCheck {
    pub id: String,
    /// `ok`, `warn` or `info`.
    pub status: String,
    pub finding: String,
    pub evidence: Vec<String>,
    pub fix: Option<String>,
}

/// What the doctor page shows.
#[derive(Debug, Clone, PartialEq)]
pub struct DoctorPage {
    /// The one-line summary (`noise: probe CV ...`).
    pub summary: String,
    pub facts: Vec<(String, String)>,
    pub environment: Vec<EnvironmentColumn>,
    pub checks: Vec<DoctorCheck>,
    pub recommendation: Vec<(String, String)>,
    /// What the probe is (for the pictures' titles).
    pub probe: String,
    /// The probe's iteration times in seconds, in the order they ran.
    pub probe_seconds: Vec<f64>,
}

fn status_class(status: &str) -> VerdictClass {
    match status {
        "ok" => VerdictClass::Improvement,
        "warn" => VerdictClass::Regression,
        _ => VerdictClass::Inconclusive,
    }
}

/// Render the doctor page.
pub fn render_doctor(doctor: &DoctorPage) -> String {
    let mut page = Page::new("verdict doctor");
    page.push(&format!(
        "<p><strong>{}</strong></p>\n",
        super::escape::text(&doctor.summary)
    ));
    page.push(&page::facts(&doctor.facts));
    page.heading("Checks", "checks");
    let rows: Vec<(Vec<Cell>, Option<&str>)> = doctor
        .checks
        .iter()
        .map(|check| {
            (
                vec![
                    Cell::Text(check.id.clone()),
                    Cell::Verdict {
                        class: status_class(&check.status),
                        text: check.status.clone(),
                    },
                    Cell::Text(check.finding.clone()),
                    Cell::Pre(check.evidence.join("\n")),
                    Cell::Pre(check.fix.clone().unwrap_or_default()),
                ],
                None,
            )
        })
        .collect();
    page.push(&page::table(
        &["check", "status", "finding", "evidence", "fix"],
        &rows,
        "checks",
    ));
    page.heading("Recommendation", "recommendation");
    page.push(&page::facts(&doctor.recommendation));
    page.heading("Environment", "environment");
    page.push(&page::environment(&doctor.environment));
    if !doctor.probe_seconds.is_empty() {
        let series = [CellSeries {
            label: doctor.probe.clone(),
            values: doctor
                .probe_seconds
                .iter()
                .enumerate()
                .map(|(index, seconds)| (index as u32, *seconds))
                .collect(),
            failed: Vec::new(),
        }];
        cell_pictures(
            &mut page,
            &series,
            "the probe's iteration time",
            "s",
            &|_| None,
            &Pictures {
                level: 2,
                suffix: "",
                order: "their iteration number (time order: the probe runs back to back)",
            },
        );
    }
    page.finish()
}
