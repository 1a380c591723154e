//! The boots section of a run's HTML page (a run whose unit is the boot):
//! the boot-to-boot spread per cell, per boot level the booted machine's
//! environment (rows on which boots of the level disagree highlighted, with
//! each value's boots), the kernels built from source, and the failed
//! boots with their console or step log. Renders the verdict-analysis model only, as the text report does.

use super::page::{self, Cell, Page};
use crate::boots::{
    BUILDS_HEADING, BootsSection, ENVIRONMENT_HEADING, SPREAD_COLUMNS, boot_list, build_line,
    build_log_tail, fact_text, spread_cells, summary,
};

/// Appends the section.
pub(super) fn boots(page: &mut Page, section: &BootsSection, metric: &str, unit: &str) {
    page.heading("Boots", "boots");
    page.note(&format!("{}.", summary(section, metric)));
    let rows: Vec<(Vec<Cell>, Option<&str>)> = section
        .spread
        .iter()
        .map(|row| {
            let [cell, rest @ ..] = spread_cells(row, unit);
            let mut cells = vec![Cell::Text(cell)];
            cells.extend(rest.into_iter().map(Cell::Number));
            (cells, None)
        })
        .collect();
    page.push(&page::table(&SPREAD_COLUMNS, &rows, "boots"));
    if !section.kernel_builds.is_empty() {
        page.heading_at(3, "Kernels built from source", "kernel-builds");
        page.note(BUILDS_HEADING);
        let rows: Vec<(Vec<Cell>, Option<&str>)> = section
            .kernel_builds
            .iter()
            .map(|record| {
                let mut text = build_line(record);
                for line in build_log_tail(record) {
                    text.push_str(&format!("\nlog: {line}"));
                }
                (
                    vec![
                        Cell::Text(record.status.as_str().to_string()),
                        Cell::Text(text),
                    ],
                    record.failure.is_some().then_some("differs"),
                )
            })
            .collect();
        page.push(&page::table(&["status", "kernel"], &rows, "environment"));
    }
    if !section.environments.is_empty() {
        page.heading_at(3, "Booted environment per boot level", "boot-environments");
        page.note(ENVIRONMENT_HEADING);
        for level in &section.environments {
            page.heading_at(
                3,
                &format!("{} ({})", level.level_key, boot_list(&level.boots)),
                &format!(
                    "boot-environment-{}",
                    level.boots.first().copied().unwrap_or(0)
                ),
            );
            let rows: Vec<(Vec<Cell>, Option<&str>)> = level
                .facts
                .iter()
                .map(|fact| {
                    (
                        vec![Cell::Text(fact.name.clone()), Cell::Text(fact_text(fact))],
                        fact.differs.then_some("differs"),
                    )
                })
                .collect();
            page.push(&page::table(&["fact", "value"], &rows, "environment"));
        }
    }
    if !section.failed.is_empty() {
        page.heading_at(3, "Failed boots (never data)", "failed-boots");
        let rows: Vec<(Vec<Cell>, Option<&str>)> = section
            .failed
            .iter()
            .map(|boot| {
                (
                    vec![
                        Cell::Number(boot.id.to_string()),
                        Cell::Text(boot.level_key.clone()),
                        Cell::Text(boot.message.clone()),
                        Cell::Pre(boot.console_tail.clone()),
                    ],
                    None,
                )
            })
            .collect();
        page.push(&page::table(
            &[
                "boot",
                "level",
                "reason",
                "console or step log (last 4 KiB)",
            ],
            &rows,
            "failed-boots",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boots::{BootFact, FactValue, FailedBoot, LevelEnvironment};

    #[test]
    fn the_section_highlights_a_fact_that_differs_and_escapes_what_it_quotes() {
        let section = BootsSection {
            accelerators: vec!["kexec".into()],
            proven: 2,
            spread: Vec::new(),
            failed: vec![FailedBoot {
                id: 2,
                level_key: "mode=2".into(),
                message: "not proven".into(),
                console_tail: "150s: no new boot; power_cycle on the controller: <script>".into(),
            }],
            environments: vec![LevelEnvironment {
                level_key: "mode=<1>".into(),
                boots: vec![0, 3],
                facts: vec![
                    BootFact {
                        name: "kernel release".into(),
                        values: vec![FactValue {
                            value: "6.1.0-57-amd64".into(),
                            boots: vec![0, 3],
                        }],
                        differs: false,
                    },
                    BootFact {
                        name: "cpu".into(),
                        values: vec![
                            FactValue {
                                value: "Skylake".into(),
                                boots: vec![0],
                            },
                            FactValue {
                                value: "Icelake & co".into(),
                                boots: vec![3],
                            },
                        ],
                        differs: true,
                    },
                ],
            }],
            kernel_builds: vec![verdict_model::KernelBuildRecord {
                levels: vec!["mode=<2>".into()],
                status: verdict_model::KernelBuildStatus::Failed,
                build: None,
                failure: Some(verdict_model::BuildFailure {
                    step: verdict_model::BuildStep::Patch,
                    message: "the patch a.patch does not apply".into(),
                }),
                log_tail: Some("error: patch failed: kernel/cpu.c:2312 <&>".into()),
                log_path: None,
                seconds: 3.0,
            }],
        };
        let mut page = Page::new("t");
        boots(&mut page, &section, "wall", "s");
        let html = page.finish();
        assert!(html.contains("<h2 id=\"boots\">Boots</h2>"), "{html}");
        assert!(html.contains("Kernels built from source"), "{html}");
        assert!(
            html.contains("mode=&lt;2&gt;: failed at its patch step after 3 s: the patch a.patch does not apply"),
            "{html}"
        );
        assert!(html.contains("kernel/cpu.c:2312 &lt;&amp;&gt;"), "{html}");
        assert!(html.contains("mode=&lt;1&gt; (boots 0, 3)"), "{html}");
        assert!(
            html.contains("<tr class=\"differs\"><td class=\"text\">cpu</td><td class=\"text\">DIFFERS: `Skylake` (boot 0); `Icelake &amp; co` (boot 3)</td></tr>"),
            "{html}"
        );
        assert!(
            html.contains("<tr><td class=\"text\">kernel release</td>"),
            "{html}"
        );
        assert!(
            html.contains("power_cycle on the controller: &lt;script&gt;"),
            "{html}"
        );
        assert!(!html.contains("<script>"), "{html}");
    }
}
