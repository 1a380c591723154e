//! Runs whose unit is the boot (a VM target, kernels as a factor): per cell
//! the number of boots and the boot-to-boot spread of the primary metric
//! (the range of the per-boot medians, the between-boot CV next to the
//! within-boot CV), the boots that failed with their console tails, the
//! accelerator that ran, and the comparisons of boot levels redone with
//! the boot as the unit (verdict-stats' `boot_spread::boot_medians`), and
//! per boot level the booted machine's environment, facts on which boots
//! of one level disagree marked `DIFFERS`, and the kernels the run built
//! from source (built, found in the cache, or failed with its log's end).
//! The section is built in verdict-analysis (re-exported here), its
//! figures by verdict-stats; this module renders it.
use crate::escape;
use crate::format;
use crate::table::Table;
use std::ops::Deref;
pub use verdict_analysis::boots::*;

/// The boots section as the renderer sees it.
pub(crate) struct View<'a>(pub(crate) &'a BootsSection);

impl Deref for View<'_> {
    type Target = BootsSection;
    fn deref(&self) -> &BootsSection {
        self.0
    }
}

impl View<'_> {
    /// The section in a text or markdown report.
    pub(crate) fn text(
        &self,
        markdown: bool,
        metric: &str,
        unit: &str,
        width: Option<usize>,
    ) -> String {
        let mut output = String::new();
        let escape_line = |line: &str| {
            if markdown {
                escape::markdown(line)
            } else {
                escape::text(line)
            }
        };
        output.push_str(&format!(
            "\n{}\n",
            escape_line(&format!("boots: {}:", summary(self, metric)))
        ));
        let mut table = Table::new(SPREAD_COLUMNS.map(String::from).to_vec());
        for row in &self.spread {
            table.push(spread_cells(row, unit).to_vec());
        }
        output.push_str(&if markdown {
            table.markdown()
        } else {
            table.text_width(width)
        });
        output.push_str(&self.builds_text(markdown));
        output.push_str(&self.environments_text(markdown));
        if !self.failed.is_empty() {
            output.push_str(&format!(
                "\n{} failed boot(s), never data:\n",
                self.failed.len()
            ));
            for boot in &self.failed {
                let line = format!("boot {} {}: {}", boot.id, boot.level_key, boot.message);
                output.push_str(&if markdown {
                    format!("- {}\n", escape::markdown(&line))
                } else {
                    format!("  {}\n", escape::text(&line))
                });
                let lines: Vec<&str> = boot
                    .console_tail
                    .lines()
                    .filter(|line| !line.trim().is_empty())
                    .collect();
                // The last lines, led by the kernel's panic line when it
                // came earlier (the stack trace after it says less).
                let start = lines.len().saturating_sub(8);
                let mut tail: Vec<&str> = lines
                    .iter()
                    .take(start)
                    .find(|line| line.contains("Kernel panic"))
                    .into_iter()
                    .copied()
                    .collect();
                if !tail.is_empty() {
                    tail.push("...");
                }
                tail.extend(&lines[start..]);
                for line in &tail {
                    output.push_str(&if markdown {
                        format!("  - console: {}\n", escape::markdown(line))
                    } else {
                        format!("    console: {}\n", escape::text(line))
                    });
                }
            }
        }
        output
    }
}

impl View<'_> {
    /// The kernels the run built: one line each, then a failure's log end.
    fn builds_text(&self, markdown: bool) -> String {
        if self.kernel_builds.is_empty() {
            return String::new();
        }
        let mut output = heading(markdown, BUILDS_HEADING);
        for record in &self.kernel_builds {
            output.push_str(&item(markdown, 0, &build_line(record)));
            for text in build_log_tail(record) {
                output.push_str(&item(markdown, 1, &format!("log: {text}")));
            }
        }
        output
    }

    /// Per boot level, the booted machine's environment: one line per
    /// fact, the boots' values where they disagree, then a warning naming
    /// every level whose boots disagree.
    fn environments_text(&self, markdown: bool) -> String {
        if self.environments.is_empty() {
            return String::new();
        }
        let line = |indent: usize, text: &str| item(markdown, indent, text);
        let mut output = heading(markdown, ENVIRONMENT_HEADING);
        let mut differing = Vec::new();
        for level in &self.environments {
            output.push_str(&line(
                0,
                &format!("{} ({}):", level.level_key, boot_list(&level.boots)),
            ));
            for fact in &level.facts {
                output.push_str(&line(1, &format!("{}: {}", fact.name, fact_text(fact))));
            }
            let names: Vec<&str> = level
                .facts
                .iter()
                .filter(|fact| fact.differs)
                .map(|fact| fact.name.as_str())
                .collect();
            if !names.is_empty() {
                differing.push(format!("{} ({})", level.level_key, names.join(", ")));
            }
        }
        if !differing.is_empty() {
            let warning = format!(
                "warning: boots of the same level differ in what should not change between them: {}",
                differing.join("; ")
            );
            output.push_str(&if markdown {
                format!("\n{}\n", escape::markdown(&warning))
            } else {
                format!("{}\n", escape::text(&warning))
            });
        }
        output
    }
}

/// A heading line of the section, after a blank line.
fn heading(markdown: bool, text: &str) -> String {
    format!(
        "\n{}\n",
        if markdown {
            escape::markdown(text)
        } else {
            escape::text(text)
        }
    )
}

/// A line of a list, `indent` levels deep (a markdown list item).
fn item(markdown: bool, indent: usize, text: &str) -> String {
    if markdown {
        format!("{}- {}\n", "  ".repeat(indent), escape::markdown(text))
    } else {
        format!("{}{}\n", "  ".repeat(indent + 1), escape::text(text))
    }
}

/// The spread table's columns.
pub(crate) const SPREAD_COLUMNS: [&str; 7] = [
    "cell",
    "boots",
    "per-boot medians",
    "between-boot CV",
    "within-boot CV",
    "boot effect CV",
    "boot effect p",
];

/// `N proven (tcg), M failed; boot levels compared with ...; METRIC boot
/// to boot (each boot summarised by its median)`.
pub(crate) fn summary(section: &BootsSection, metric: &str) -> String {
    format!(
        "{} proven ({}), {} failed; boot levels compared with {}; {metric} boot to boot (each boot summarised by its median)",
        section.proven,
        if section.accelerators.is_empty() {
            "no accelerator recorded".to_string()
        } else {
            section.accelerators.join(", ")
        },
        section.failed.len(),
        boot_method()
    )
}

/// One cell's row of the spread table, as [`SPREAD_COLUMNS`].
pub(crate) fn spread_cells(row: &BootSpreadRow, unit: &str) -> [String; 7] {
    let percent = |value: Option<f64>| {
        value.map_or("-".to_string(), |value| format!("{:.1}%", value * 100.0))
    };
    [
        row.cell.clone(),
        row.boots.to_string(),
        match (row.median_low, row.median_high) {
            (Some(low), Some(high)) => {
                format!(
                    "{} .. {}",
                    format::value(low, unit),
                    format::value(high, unit)
                )
            }
            _ => "-".to_string(),
        },
        percent(row.between_boot_cv),
        percent(row.within_boot_cv),
        percent(row.boot_effect_cv),
        row.boot_effect_p_value
            .map_or("-".to_string(), format::p_value),
    ]
}

/// The heading of the kernel builds.
pub(crate) const BUILDS_HEADING: &str =
    "kernels built from source (before the first boot; a failed build is never data):";

/// `patch=with: built in 3 min 52 s: commit 1a2b3c + 1 patch (…) of TREE;
/// config … (sha256 …); gcc …; make -j2; release 6.1.192+; key 0123…`, or
/// `… failed at its patch step: …`.
pub(crate) fn build_line(record: &verdict_model::KernelBuildRecord) -> String {
    let levels = record.levels.join(", ");
    let seconds = |seconds: f64| crate::time::format_duration((seconds * 1000.0) as i64);
    match (&record.build, &record.failure) {
        (Some(build), _) => format!(
            "{levels}: {}: {} of {}; config {} (sha256 {}); {}; make {}; release {}; key {}",
            match record.status {
                verdict_model::KernelBuildStatus::Cached => format!(
                    "found in the cache (built {} in {})",
                    crate::time::format_time(build.built_at_ms),
                    seconds(build.build_seconds)
                ),
                _ => format!("built in {}", seconds(build.build_seconds)),
            },
            build.summary(),
            build.source,
            build.config_recipe.join(" + "),
            &build.config_sha256[..build.config_sha256.len().min(16)],
            build.compiler,
            build.make.join(" "),
            build.release,
            &build.key[..build.key.len().min(20)],
        ),
        (None, Some(failure)) => format!(
            "{levels}: failed at its {} step after {}: {}",
            failure.step.as_str(),
            seconds(record.seconds),
            failure.message
        ),
        (None, None) => format!("{levels}: {}", record.status.as_str()),
    }
}

/// The last lines of a failed build's log (its errors), and where the
/// whole log is.
pub(crate) fn build_log_tail(record: &verdict_model::KernelBuildRecord) -> Vec<String> {
    let Some(tail) = record.log_tail.as_deref() else {
        return Vec::new();
    };
    let lines: Vec<&str> = tail
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    let mut shown: Vec<String> = lines[lines.len().saturating_sub(10)..]
        .iter()
        .map(|line| line.to_string())
        .collect();
    if let Some(path) = &record.log_path {
        shown.push(format!("(the whole log: {path})"));
    }
    shown
}

/// The heading of the booted environments.
pub(crate) const ENVIRONMENT_HEADING: &str = "booted environment per boot level (read in each proven boot after its proof; the command line without verdict.boot=NONCE):";

/// `boot 3` or `boots 1, 4`.
pub(crate) fn boot_list(boots: &[u32]) -> String {
    format!(
        "boot{} {}",
        if boots.len() == 1 { "" } else { "s" },
        boots
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// A fact's value when the boots agree (CPU flags as their count); every
/// value with its boots after `DIFFERS:` when they do not.
pub(crate) fn fact_text(fact: &BootFact) -> String {
    match fact.values.as_slice() {
        [only] if fact.name == "cpu flags" => {
            format!("{} flags", only.value.split_whitespace().count())
        }
        [only] => only.value.clone(),
        values => format!(
            "DIFFERS: {}",
            values
                .iter()
                .map(|value| format!("`{}` ({})", value.value, boot_list(&value.boots)))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_builds_are_listed_with_a_failures_log_escaped() {
        use verdict_model::{
            AppliedPatch, BuildFailure, BuildStep, KernelBuild, KernelBuildRecord,
            KernelBuildStatus,
        };
        let build = KernelBuild {
            source: "/usr/src/linux-source-6.1.tar.xz".into(),
            commit: "3b848fc7cb40aaaa".into(),
            tree_id: "t".into(),
            tarball_sha256: None,
            patches: vec![AppliedPatch {
                name: "rcu.patch".into(),
                sha256: "0123456789abcdef0123".into(),
            }],
            config_recipe: vec!["tinyconfig".into(), "verdict:vm-guest".into()],
            config_sha256: "c".repeat(64),
            compiler: "gcc (Debian 12.2.0-14+deb12u1) 12.2.0".into(),
            make: vec!["-j2".into()],
            release: "6.1.192+".into(),
            version: None,
            key: "k".repeat(64),
            built_at_ms: 0,
            build_seconds: 248.0,
        };
        let section = BootsSection {
            accelerators: Vec::new(),
            proven: 0,
            spread: Vec::new(),
            failed: Vec::new(),
            environments: Vec::new(),
            kernel_builds: vec![
                KernelBuildRecord {
                    levels: vec!["patch=without".into()],
                    status: KernelBuildStatus::Built,
                    build: Some(build),
                    failure: None,
                    log_tail: None,
                    log_path: None,
                    seconds: 250.0,
                },
                KernelBuildRecord {
                    levels: vec!["patch=with".into()],
                    status: KernelBuildStatus::Failed,
                    build: None,
                    failure: Some(BuildFailure {
                        step: BuildStep::Make,
                        message: "make: exit status 2".into(),
                    }),
                    log_tail: Some("kernel/cpu.c:2318: error: `x` undeclared\x1b[0m\n".into()),
                    log_path: Some("/cache/logs/1.log".into()),
                    seconds: 61.0,
                },
            ],
        };
        let text = View(&section).text(false, "wall", "s", None);
        for line in [
            "kernels built from source (before the first boot; a failed build is never data):",
            "  patch=without: built in 4 min 8 s: commit 3b848fc7cb40 + 1 patch (rcu.patch 0123456789ab) of /usr/src/linux-source-6.1.tar.xz; config tinyconfig + verdict:vm-guest (sha256 cccccccccccccccc); gcc (Debian 12.2.0-14+deb12u1) 12.2.0; make -j2; release 6.1.192+; key kkkkkkkkkkkkkkkkkkkk",
            "  patch=with: failed at its make step after 1 min 1 s: make: exit status 2",
            "    log: (the whole log: /cache/logs/1.log)",
        ] {
            assert!(text.contains(line), "{line}\n{text}");
        }
        // The log's control characters never reach the terminal.
        assert!(!text.contains('\x1b'), "{text}");
        let markdown = View(&section).text(true, "wall", "s", None);
        assert!(markdown.contains("\\`x\\`"), "{markdown}");
    }

    #[test]
    fn a_failed_boot_shows_its_panic_line_and_escaped_console() {
        let mut console =
            String::from("[ 0.1] Kernel panic - not syncing: No working init found\n");
        for line in 0..12 {
            console.push_str(&format!("[ 0.2] trace {line}\n"));
        }
        console.push_str("\u{1b}[31mred | `x`\n");
        let section = BootsSection {
            accelerators: vec!["tcg".into()],
            proven: 0,
            environments: Vec::new(),
            spread: Vec::new(),
            failed: vec![FailedBoot {
                id: 3,
                level_key: "init=missing".into(),
                message: "QEMU exited".into(),
                console_tail: console,
            }],
            kernel_builds: Vec::new(),
        };
        let text = View(&section).text(false, "wall", "s", None);
        assert!(text.contains("boot 3 init=missing: QEMU exited"), "{text}");
        assert!(text.contains("console: [ 0.1] Kernel panic"), "{text}");
        assert!(!text.contains("trace 3\n"), "{text}");
        assert!(text.contains("trace 11"), "{text}");
        assert!(!text.contains('\u{1b}'), "{text}");
        let markdown = View(&section).text(true, "wall", "s", None);
        assert!(markdown.contains("red \\| \\`x\\`"), "{markdown}");
    }

    #[test]
    fn the_spread_table_shows_the_boot_effect_and_its_f_test() {
        // Issue 29, finding 8: the ANOVA's boot effect and F test, which
        // docs/statistics.md says are reported, are columns of the table.
        let section = BootsSection {
            accelerators: vec!["tcg".into()],
            proven: 4,
            environments: Vec::new(),
            failed: Vec::new(),
            spread: vec![BootSpreadRow {
                cell: "kernel=a".into(),
                boots: 3,
                median_low: Some(1.0),
                median_high: Some(1.1),
                between_boot_cv: Some(0.05),
                within_boot_cv: Some(0.02),
                boot_effect_cv: Some(0.0417),
                boot_effect_p_value: Some(0.0004),
            }],
            kernel_builds: Vec::new(),
        };
        let text = View(&section).text(false, "wall", "s", None);
        let header = text.lines().find(|line| line.starts_with("cell")).unwrap();
        assert!(
            header.contains("boot effect CV") && header.contains("boot effect p"),
            "{text}"
        );
        let row = text
            .lines()
            .find(|line| line.starts_with("kernel=a"))
            .unwrap();
        assert!(row.contains("4.2%") && row.contains("<0.001"), "{text}");
        let markdown = View(&section).text(true, "wall", "s", None);
        assert!(
            markdown.contains("| boot effect CV | boot effect p |"),
            "{markdown}"
        );
    }

    #[test]
    fn each_levels_environment_is_listed_and_a_difference_warned_escaped() {
        let fact = |name: &str, values: &[(&str, &[u32])]| BootFact {
            name: name.into(),
            differs: values.len() > 1,
            values: values
                .iter()
                .map(|(value, boots)| FactValue {
                    value: value.to_string(),
                    boots: boots.to_vec(),
                })
                .collect(),
        };
        let section = BootsSection {
            accelerators: vec!["kexec".into()],
            proven: 3,
            spread: Vec::new(),
            failed: Vec::new(),
            environments: vec![
                LevelEnvironment {
                    level_key: "preempt=full".into(),
                    boots: vec![0, 3],
                    facts: vec![
                        fact("kernel release", &[("6.1.0-57-amd64", &[0, 3])]),
                        fact("cpu", &[("Skylake", &[0]), ("Ice|lake `x`", &[3])]),
                        fact("cpu flags", &[("fpu sse2 avx", &[0, 3])]),
                    ],
                },
                LevelEnvironment {
                    level_key: "preempt=none".into(),
                    boots: vec![1],
                    facts: vec![fact("command line", &[("preempt=none", &[1])])],
                },
            ],
            kernel_builds: Vec::new(),
        };
        let text = View(&section).text(false, "wall", "s", None);
        for line in [
            "  preempt=full (boots 0, 3):\n",
            "    kernel release: 6.1.0-57-amd64\n",
            "    cpu: DIFFERS: `Skylake` (boot 0); `Ice|lake `x`` (boot 3)\n",
            "    cpu flags: 3 flags\n",
            "  preempt=none (boot 1):\n",
            "    command line: preempt=none\n",
            "warning: boots of the same level differ in what should not change between them: preempt=full (cpu)\n",
        ] {
            assert!(text.contains(line), "{line}\n{text}");
        }
        let markdown = View(&section).text(true, "wall", "s", None);
        assert!(markdown.contains("Ice\\|lake"), "{markdown}");
        // Without recorded environments, nothing of this is shown.
        let bare = BootsSection {
            environments: Vec::new(),
            ..section
        };
        assert!(
            !View(&bare)
                .text(false, "wall", "s", None)
                .contains("booted environment")
        );
    }
}
