//! Runs whose unit is the boot (a VM target, kernels as a factor): per cell
//! the number of boots and the boot-to-boot spread of the primary metric
//! (the range of the per-boot medians, the between-boot CV next to the
//! within-boot CV), the boots that failed with their console tails, the
//! accelerator that ran, and the comparisons of boot levels redone with
//! the boot as the unit (verdict-stats' `boot_spread::boot_medians`).
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
    pub(crate) fn text(&self, markdown: bool, metric: &str, unit: &str) -> String {
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
            escape_line(&format!(
                "boots: {} proven ({}), {} failed; boot levels compared with {}; {metric} boot to boot (each boot summarised by its median):",
                self.proven,
                if self.accelerators.is_empty() {
                    "no accelerator recorded".to_string()
                } else {
                    self.accelerators.join(", ")
                },
                self.failed.len(),
                boot_method()
            ))
        ));
        let mut table = Table::new(
            [
                "cell",
                "boots",
                "per-boot medians",
                "between-boot CV",
                "within-boot CV",
            ]
            .map(String::from)
            .to_vec(),
        );
        let number =
            |value: Option<f64>| value.map_or("-".to_string(), |value| format::value(value, unit));
        let percent = |value: Option<f64>| {
            value.map_or("-".to_string(), |value| format!("{:.1}%", value * 100.0))
        };
        for row in &self.spread {
            table.push(vec![
                row.cell.clone(),
                row.boots.to_string(),
                match (row.median_low, row.median_high) {
                    (Some(low), Some(high)) => {
                        format!("{} .. {}", number(Some(low)), number(Some(high)))
                    }
                    _ => "-".to_string(),
                },
                percent(row.between_boot_cv),
                percent(row.within_boot_cv),
            ]);
        }
        output.push_str(&if markdown {
            table.markdown()
        } else {
            table.text()
        });
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

#[cfg(test)]
mod tests {
    use super::*;

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
            spread: Vec::new(),
            failed: vec![FailedBoot {
                id: 3,
                level_key: "init=missing".into(),
                message: "QEMU exited".into(),
                console_tail: console,
            }],
        };
        let text = View(&section).text(false, "wall", "s");
        assert!(text.contains("boot 3 init=missing: QEMU exited"), "{text}");
        assert!(text.contains("console: [ 0.1] Kernel panic"), "{text}");
        assert!(!text.contains("trace 3\n"), "{text}");
        assert!(text.contains("trace 11"), "{text}");
        assert!(!text.contains('\u{1b}'), "{text}");
        let markdown = View(&section).text(true, "wall", "s");
        assert!(markdown.contains("red \\| \\`x\\`"), "{markdown}");
    }
}
