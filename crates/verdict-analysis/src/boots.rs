//! Runs whose unit is the boot (a VM target, kernels as a factor): per cell
//! the number of boots and the boot-to-boot spread of the primary metric
//! (the range of the per-boot medians, the between-boot CV next to the
//! within-boot CV), the boots that failed with their console tails, the
//! accelerator that ran, and the comparisons of boot levels redone with
//! the boot as the unit (verdict-stats' `boot_spread::boot_medians`).
//! The figures come from verdict-stats (`boot_spread`, `compare_boots`).
//! Pure: stored boots and samples in, the section's model out; must not
//! read files or the store. verdict-report renders it.
use crate::compare::{ComparisonInput, better_of, comparisons_if_any};
use crate::run::{RunReport, RunReportOptions, available_metrics, comparison_label};
use serde::Serialize;
use std::collections::BTreeMap;
use verdict_model::{Builtin, Experiment, Sample};
use verdict_stats::boot_spread::{boot_medians, boot_spread};
use verdict_stats::boots::{BootMethod, BootOptions, compare_boots};

/// One level's values, one `Vec` per boot.
type BootGroups = Vec<Vec<f64>>;

/// A stored boot as the report needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportBoot {
    pub id: u32,
    pub level_key: String,
    /// `complete`, `proven`, `failed`, `interrupted`, `booting`.
    pub status: String,
    pub accelerator: Option<String>,
    pub kernel_release: Option<String>,
    pub message: Option<String>,
    pub console_tail: Option<String>,
}

/// The boots section of a run report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootsSection {
    /// Accelerators of the proven boots (`tcg`, `kvm`).
    pub accelerators: Vec<String>,
    pub proven: usize,
    pub spread: Vec<BootSpreadRow>,
    pub failed: Vec<FailedBoot>,
}

/// Boot-to-boot variation of one cell's primary metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootSpreadRow {
    pub cell: String,
    /// Boots with data in this cell.
    pub boots: usize,
    pub median_low: Option<f64>,
    pub median_high: Option<f64>,
    /// CV of the per-boot medians.
    pub between_boot_cv: Option<f64>,
    /// Median over boots of the CV within each boot.
    pub within_boot_cv: Option<f64>,
}

/// A boot that did not prove itself (never data).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailedBoot {
    pub id: u32,
    pub level_key: String,
    pub message: String,
    pub console_tail: String,
}

impl RunReport {
    /// Adds the boots section (the spread from verdict-stats'
    /// [`boot_spread`]), and redoes the comparisons of boot factors on
    /// per-boot values ([`boot_medians`]); `sample_boot` maps a sample's
    /// sequence to its boot.
    pub fn with_boots(
        mut self,
        experiment: &Experiment,
        samples: &[Sample],
        boots: &[ReportBoot],
        sample_boot: &BTreeMap<u32, u32>,
        options: &RunReportOptions,
    ) -> RunReport {
        let cells = experiment.cells();
        let available = available_metrics(experiment);
        let Some(metric) = available
            .iter()
            .find(|metric| metric.name == self.metric.name)
        else {
            return self;
        };
        let value_of = |sample: &Sample| match metric.builtin {
            Some(Builtin::Wall) => Some(sample.wall_seconds),
            Some(Builtin::User) => Some(sample.user_seconds),
            Some(Builtin::Sys) => Some(sample.sys_seconds),
            Some(Builtin::MaxRss) => Some(sample.max_rss_kib as f64),
            None => sample.metrics.get(&metric.name).copied(),
        };
        // Per cell, per boot (in boot order), the data values.
        let mut per_cell: Vec<BTreeMap<u32, Vec<f64>>> = vec![BTreeMap::new(); cells.len()];
        for sample in samples.iter().filter(|sample| sample.is_data()) {
            if let (Some(value), Some(boot), Some(cell)) = (
                value_of(sample),
                sample_boot.get(&sample.sequence),
                per_cell.get_mut(sample.cell),
            ) {
                cell.entry(*boot).or_default().push(value);
            }
        }
        let spread = cells
            .iter()
            .zip(&per_cell)
            .map(|(cell, by_boot)| {
                let spread = boot_spread(&by_boot.values().cloned().collect::<Vec<_>>());
                BootSpreadRow {
                    cell: cell.label(),
                    boots: spread.boots,
                    median_low: spread.median_low,
                    median_high: spread.median_high,
                    between_boot_cv: spread.between_boot_cv,
                    within_boot_cv: spread.within_boot_cv,
                }
            })
            .collect();
        let mut accelerators: Vec<String> = boots
            .iter()
            .filter(|boot| boot.status != "failed")
            .filter_map(|boot| boot.accelerator.clone())
            .collect();
        accelerators.sort();
        accelerators.dedup();
        // The environment recorded with the run is the controller's; the
        // guest's kernel is each boot's.
        self.environment.retain(|(key, _)| {
            matches!(
                key.as_str(),
                "host" | "cpu" | "cpus" | "virtualization" | "load"
            )
        });
        for (key, _) in &mut self.environment {
            *key = format!("controller {key}");
        }
        let mut releases: Vec<String> = boots
            .iter()
            .filter_map(|boot| boot.kernel_release.clone())
            .collect();
        releases.sort();
        releases.dedup();
        if !releases.is_empty() {
            self.environment
                .insert(0, ("guest kernel".to_string(), releases.join(", ")));
        }
        self.environment.insert(
            0,
            (
                "accelerator".to_string(),
                if accelerators.is_empty() {
                    "none (no boot proven)".to_string()
                } else {
                    accelerators.join(", ")
                },
            ),
        );
        let failed = boots
            .iter()
            .filter(|boot| boot.status == "failed")
            .map(|boot| FailedBoot {
                id: boot.id,
                level_key: boot.level_key.clone(),
                message: boot.message.clone().unwrap_or_default(),
                console_tail: boot.console_tail.clone().unwrap_or_default(),
            })
            .collect();
        // The comparisons again: a boot factor's on per-boot values, the
        // others (levels switched within a boot) on every iteration.
        let boot_factors: Vec<String> = experiment
            .boot_factors()
            .into_iter()
            .map(|index| experiment.factors[index].name.clone())
            .collect();
        let threshold = options.threshold.unwrap_or_else(|| {
            experiment
                .metrics
                .iter()
                .find(|declared| declared.name == metric.name)
                .and_then(|declared| declared.threshold)
                .unwrap_or(experiment.sampling.threshold)
        });
        let pooled =
            |cell: usize| -> Vec<f64> { per_cell[cell].values().flatten().copied().collect() };
        // Per boot-level comparison (by its row name), each side's values
        // grouped by boot, for the decision over boots.
        let mut boot_groups: BTreeMap<String, (BootGroups, BootGroups)> = BTreeMap::new();
        let inputs: Vec<ComparisonInput> = experiment
            .comparisons()
            .iter()
            .filter_map(|comparison| {
                let by_boot = boot_factors.contains(&comparison.factor);
                let values = |cell: usize| {
                    if by_boot {
                        boot_medians(&per_cell[cell].values().cloned().collect::<Vec<_>>())
                    } else {
                        pooled(cell)
                    }
                };
                let (baseline, candidate) = (
                    values(comparison.baseline_cell),
                    values(comparison.candidate_cell),
                );
                let name = format!(
                    "{} vs {}{}",
                    comparison_label(&cells[comparison.candidate_cell].levels, &comparison.factor),
                    cells[comparison.baseline_cell]
                        .level(&comparison.factor)
                        .unwrap_or(""),
                    if by_boot {
                        crate::compare::BOOT_ROW_MARK
                    } else {
                        ""
                    }
                );
                if by_boot {
                    let groups = |cell: usize| per_cell[cell].values().cloned().collect::<Vec<_>>();
                    boot_groups.insert(
                        name.clone(),
                        (
                            groups(comparison.baseline_cell),
                            groups(comparison.candidate_cell),
                        ),
                    );
                }
                (baseline.len() >= 2 && candidate.len() >= 2).then(|| ComparisonInput {
                    name,
                    unit: metric.unit.clone(),
                    better: better_of(metric.direction),
                    threshold,
                    baseline,
                    candidate,
                })
            })
            .collect();
        match comparisons_if_any(&inputs, options.alpha, options.adjust) {
            Ok(mut comparisons) => {
                // A boot factor's comparisons are decided over boots by
                // verdict-stats' boot-unit method (the rows above only
                // supply the per-boot medians' summaries), at the
                // Bonferroni level α/k of the k comparisons shown.
                if let Some(report) = comparisons.as_mut() {
                    let family_size = report.comparisons.len();
                    for row in &mut report.comparisons {
                        if let Some((baseline, candidate)) = boot_groups.get(&row.name) {
                            decide_over_boots(row, baseline, candidate, options.alpha, family_size);
                        }
                    }
                }
                self.comparisons = comparisons;
                self.comparisons_error = None;
            }
            Err(error) => {
                self.comparisons = None;
                self.comparisons_error = Some(error);
            }
        }
        self.boots = Some(BootsSection {
            proven: boots.iter().filter(|boot| boot.status != "failed").count(),
            accelerators,
            spread,
            failed,
        });
        self
    }
}

/// Replaces a boot-level row's decision (shift, interval, p-value,
/// verdict, magnitude, boots needed) with verdict-stats' comparison over
/// boots ([`compare_boots`]: the median of each boot's logs, Welch's t
/// over boots, validated by simulation in docs/validation.md), at the
/// Bonferroni level α/k. The row's side summaries stay those of the
/// per-boot medians; its `runs_needed` counts boots per level.
fn decide_over_boots(
    row: &mut crate::compare::ComparisonRow,
    baseline: &[Vec<f64>],
    candidate: &[Vec<f64>],
    alpha: f64,
    family_size: usize,
) {
    let mut boot_options = BootOptions::new(row.better);
    boot_options.settings.threshold = row.threshold;
    boot_options.settings.alpha = alpha;
    boot_options.settings.family_size = family_size.max(1);
    let Ok(decided) = compare_boots(baseline, candidate, &boot_options) else {
        return;
    };
    row.delta = decided.shift.estimate;
    row.delta_ci_low = decided.shift.interval.map(|interval| interval.low);
    row.delta_ci_high = decided.shift.interval.map(|interval| interval.high);
    row.delta_confidence = boot_options.settings.interval_confidence();
    row.p_value = decided.p_value;
    row.verdict = decided.verdict;
    row.magnitude = decided.magnitude;
    row.runs_needed = decided.boots_needed;
    row.scale = decided.scale;
    row.absolute_threshold = decided.absolute_threshold;
    row.adjusted = if family_size > 1 {
        format!("bonferroni over boots (k={family_size})")
    } else {
        "none (one comparison)".to_string()
    };
}

/// How boot levels are compared (verdict-stats' default [`BootMethod`]), in words.
pub fn boot_method() -> &'static str {
    BootMethod::default().describe()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Boots of `iterations` values: each boot's level times a small
    /// deterministic within-boot wiggle.
    fn boots_of(levels: &[f64], iterations: usize) -> Vec<Vec<f64>> {
        levels
            .iter()
            .map(|level| {
                (0..iterations)
                    .map(|index| level * (1.0 + 0.002 * ((index % 5) as f64 - 2.0)))
                    .collect()
            })
            .collect()
    }

    fn decided(baseline: &[Vec<f64>], candidate: &[Vec<f64>]) -> crate::compare::ComparisonRow {
        let input = ComparisonInput {
            name: "k=b vs a (per-boot medians)".into(),
            unit: "s".into(),
            better: verdict_stats::verdict::Better::Lower,
            threshold: 0.02,
            baseline: boot_medians(baseline),
            candidate: boot_medians(candidate),
        };
        let mut report = comparisons_if_any(&[input], 0.05, true).unwrap().unwrap();
        let mut row = report.comparisons.remove(0);
        decide_over_boots(&mut row, baseline, candidate, 0.05, 1);
        row
    }

    #[test]
    fn boot_levels_are_decided_over_boots_not_iterations() {
        // The same kernel, boots 4% apart: every iteration pooled would
        // call a change; over boots it is not one.
        let row = decided(
            &boots_of(&[1.00, 1.04, 0.98], 30),
            &boots_of(&[1.03, 0.99, 1.05], 30),
        );
        assert_ne!(
            row.verdict,
            verdict_stats::verdict::Verdict::Regression,
            "{row:?}"
        );
        assert_ne!(
            row.verdict,
            verdict_stats::verdict::Verdict::Improvement,
            "{row:?}"
        );
        // A kernel 30% slower on every boot is a regression over boots too,
        // with its shift and interval from the boot-unit method.
        let row = decided(
            &boots_of(&[1.00, 1.02, 0.99], 30),
            &boots_of(&[1.31, 1.30, 1.29], 30),
        );
        assert_eq!(
            row.verdict,
            verdict_stats::verdict::Verdict::Regression,
            "{row:?}"
        );
        assert!((row.delta - 0.30).abs() < 0.03, "{row:?}");
        assert!(row.delta_ci_low.is_some_and(|low| low > 0.2), "{row:?}");
    }
}
