//! Runs whose unit is the boot (a VM target, kernels as a factor): per cell
//! the number of boots and the boot-to-boot spread of the primary metric
//! (the range of the per-boot medians, the between-boot CV next to the
//! within-boot CV), the boots that failed with their console tails, the
//! accelerator that ran, and the comparisons of boot levels redone with
//! the boot as the unit (verdict-stats' `boot_spread::boot_medians`), and
//! per boot level the booted machine's environment as its proven boots
//! showed it (kernel release and version, command line, CPU...), with
//! the facts on which boots of one level disagree flagged, and the kernels
//! the run built from source (built, found in the cache, or failed with
//! the end of its log) with each built kernel's provenance among its
//! boots' facts.
//! The figures come from verdict-stats (`boot_spread`, `compare_boots`).
//! Pure: stored boots and samples in, the section's model out; must not
//! read files or the store. verdict-report renders it.
use crate::compare::{ComparisonInput, SamplingUnit, comparisons_if_any};
use crate::run::{RunReport, RunReportOptions, comparison_label};
use crate::samples::SampleTable;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use verdict_model::{BootStatus, Environment, Experiment, KernelBuildRecord};
use verdict_stats::boot_spread::{boot_medians, boot_spread};
use verdict_stats::boots::{BootMethod, BootOptions, compare_boots, variance_components};

/// One level's values, one `Vec` per boot.
type BootGroups = Vec<Vec<f64>>;

/// A stored boot as the report needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportBoot {
    pub id: u32,
    pub level_key: String,
    pub status: BootStatus,
    pub accelerator: Option<String>,
    pub kernel_release: Option<String>,
    pub message: Option<String>,
    pub console_tail: Option<String>,
    /// The booted machine's environment, read after the proof.
    pub environment: Option<Environment>,
}

/// The boots section of a run report.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct BootsSection {
    /// Accelerators of the proven boots (`tcg`, `kvm`).
    pub accelerators: Vec<String>,
    pub proven: usize,
    pub spread: Vec<BootSpreadRow>,
    pub failed: Vec<FailedBoot>,
    /// Per boot level (in the order of its first boot), the booted
    /// machine's environment; empty when no boot's was recorded.
    pub environments: Vec<LevelEnvironment>,
    /// The kernels the run built from source, in the order it built them
    /// (the `kernel_builds` annotation); absent when it built none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel_builds: Vec<KernelBuildRecord>,
}

/// The environment the proven boots of one boot level showed.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LevelEnvironment {
    /// `preempt=full` (the boot factors' levels), `(all)` without any.
    pub level_key: String,
    /// The boots whose environment was read, by id.
    pub boots: Vec<u32>,
    pub facts: Vec<BootFact>,
}

/// One fact of a booted machine (`kernel release`, `command line`, `cpu`,
/// ...) over the boots of one level.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct BootFact {
    pub name: String,
    /// Each value seen, with the boots that showed it (first seen first);
    /// one entry when the boots agree. `(not read)` for a boot whose
    /// capture lacks the fact.
    pub values: Vec<FactValue>,
    /// The boots of this level disagree: every fact listed should be the
    /// same in each boot of a level (a different kernel release or CPU
    /// model means the level was not measured on one machine).
    pub differs: bool,
}

/// A fact's value and the boots that showed it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FactValue {
    pub value: String,
    pub boots: Vec<u32>,
}

/// The facts of a booted machine that a kernel A/B compares, each of which
/// should be the same in every boot of one level (the load, steal time and
/// host name are left out: they change without the machine changing). The
/// command line leaves out `verdict.boot=NONCE`, new on every boot by
/// design.
fn boot_facts(environment: &Environment) -> Vec<(&'static str, Option<String>)> {
    let cpus = crate::provenance::cpus_line(environment);
    vec![
        ("kernel release", environment.kernel_release.clone()),
        ("kernel version", environment.kernel_version.clone()),
        ("kernel compiler", environment.kernel_compiler.clone()),
        (
            "command line",
            environment.kernel_cmdline.as_deref().map(|line| {
                line.split_whitespace()
                    .filter(|word| !word.starts_with("verdict.boot="))
                    .collect::<Vec<_>>()
                    .join(" ")
            }),
        ),
        ("architecture", environment.architecture.clone()),
        ("cpu", environment.cpu_model.clone()),
        (
            "cpu id",
            environment
                .cpu_identity
                .as_ref()
                .map(verdict_model::CpuIdentity::line),
        ),
        ("cpus", cpus),
        ("cpu flags", environment.cpu_flags.clone()),
        ("smt", environment.smt.clone()),
        ("governor", environment.cpufreq_governor.clone()),
        ("preempt", environment.preempt.clone()),
        ("clocksource", environment.clocksource.clone()),
        ("selinux", environment.selinux.clone()),
        ("virtualization", environment.virtualization.clone()),
        ("config sha256", environment.kernel_config_sha256.clone()),
        ("config source", environment.kernel_config_source.clone()),
        (
            "kernel build",
            environment.kernel_build.as_ref().map(|build| {
                format!(
                    "{} of {}; config {} (sha256 {}); {}; make {}",
                    build.summary(),
                    build.source,
                    build.config_recipe.join(" + "),
                    &build.config_sha256[..build.config_sha256.len().min(16)],
                    build.compiler,
                    build.make.join(" ")
                )
            }),
        ),
    ]
}

/// A boot's id and its facts ([`boot_facts`]).
type BootFacts = (u32, Vec<(&'static str, Option<String>)>);

/// Per boot level, the environments of its boots that recorded one.
fn level_environments(boots: &[ReportBoot]) -> Vec<LevelEnvironment> {
    let mut levels: Vec<(String, Vec<BootFacts>)> = Vec::new();
    for boot in boots.iter().filter(|boot| boot.status.booted()) {
        let Some(environment) = &boot.environment else {
            continue;
        };
        let facts = boot_facts(environment);
        match levels.iter_mut().find(|(key, _)| *key == boot.level_key) {
            Some((_, seen)) => seen.push((boot.id, facts)),
            None => levels.push((boot.level_key.clone(), vec![(boot.id, facts)])),
        }
    }
    levels
        .into_iter()
        .map(|(level_key, seen)| {
            let names: Vec<&'static str> = seen[0].1.iter().map(|(name, _)| *name).collect();
            let facts = names
                .iter()
                .enumerate()
                .filter(|(index, _)| seen.iter().any(|(_, facts)| facts[*index].1.is_some()))
                .map(|(index, name)| {
                    let mut values: Vec<FactValue> = Vec::new();
                    for (boot, facts) in &seen {
                        let value = facts[index]
                            .1
                            .clone()
                            .unwrap_or_else(|| "(not read)".to_string());
                        match values.iter_mut().find(|known| known.value == value) {
                            Some(known) => known.boots.push(*boot),
                            None => values.push(FactValue {
                                value,
                                boots: vec![*boot],
                            }),
                        }
                    }
                    BootFact {
                        name: name.to_string(),
                        differs: values.len() > 1,
                        values,
                    }
                })
                .collect();
            LevelEnvironment {
                level_key,
                boots: seen.iter().map(|(boot, _)| *boot).collect(),
                facts,
            }
        })
        .collect()
}

/// Boot-to-boot variation of one cell's primary metric.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
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
    /// The boot effect as a CV: the spread between boots with the
    /// within-boot noise taken out (one-way random-effects ANOVA, method
    /// of moments, `verdict_stats::boots::variance_components`); `None`
    /// below 2 boots or without a boot of 2 values, or on the absolute
    /// scale (a value 0 or below).
    pub boot_effect_cv: Option<f64>,
    /// The ANOVA's F test of "no boot effect" (σ_b = 0): a small p says
    /// the boots differ beyond their iterations' noise, so more boots,
    /// not more iterations, sharpen a comparison of this level.
    pub boot_effect_p_value: Option<f64>,
}

/// A boot that did not prove itself (never data).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
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
        table: &SampleTable,
        boots: &[ReportBoot],
        sample_boot: &BTreeMap<u32, u32>,
        options: &RunReportOptions,
    ) -> RunReport {
        let cells = experiment.cells();
        let Some(metric) = table
            .metrics()
            .iter()
            .find(|metric| metric.name == self.metric.name)
        else {
            return self;
        };
        let per_cell = values_by_boot(table, cells.len(), sample_boot, metric);
        let spread = cells
            .iter()
            .zip(&per_cell)
            .map(|(cell, by_boot)| {
                let per_boot: Vec<Vec<f64>> = by_boot.values().cloned().collect();
                let spread = boot_spread(&per_boot);
                let components = variance_components(&per_boot).ok();
                BootSpreadRow {
                    cell: cell.label(),
                    boots: spread.boots,
                    median_low: spread.median_low,
                    median_high: spread.median_high,
                    between_boot_cv: spread.between_boot_cv,
                    within_boot_cv: spread.within_boot_cv,
                    boot_effect_cv: components.and_then(|components| components.between_cv),
                    boot_effect_p_value: components
                        .and_then(|components| components.boot_effect_p_value),
                }
            })
            .collect();
        let mut accelerators: Vec<String> = boots
            .iter()
            .filter(|boot| boot.status.booted())
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
            .filter(|boot| !boot.status.booted())
            .map(|boot| FailedBoot {
                id: boot.id,
                level_key: boot.level_key.clone(),
                message: boot.message.clone().unwrap_or_default(),
                console_tail: boot.console_tail.clone().unwrap_or_default(),
            })
            .collect();
        // The comparisons again: a boot factor's on per-boot values, the
        // others (levels switched within a boot) on every iteration; the
        // other declared metrics' likewise.
        match boot_comparisons(experiment, &per_cell, metric, options) {
            Ok(comparisons) => {
                self.comparisons = comparisons;
                self.comparisons_error = None;
            }
            Err(error) => {
                self.comparisons = None;
                self.comparisons_error = Some(error.to_string());
            }
        }
        for verdicts in &mut self.metric_verdicts {
            let Some(other) = table
                .metrics()
                .iter()
                .find(|available| available.name == verdicts.metric)
            else {
                continue;
            };
            let values = values_by_boot(table, cells.len(), sample_boot, other);
            (verdicts.comparisons, verdicts.error) =
                match boot_comparisons(experiment, &values, other, options) {
                    Ok(comparisons) => (comparisons, None),
                    Err(error) => (None, Some(error.to_string())),
                };
        }
        let kernel_builds = self
            .boots
            .take()
            .map(|section| section.kernel_builds)
            .unwrap_or_default();
        self.boots = Some(BootsSection {
            proven: boots.iter().filter(|boot| boot.status.booted()).count(),
            accelerators,
            spread,
            failed,
            environments: level_environments(boots),
            kernel_builds,
        });
        self
    }

    /// Adds the kernels the run built (its `kernel_builds` annotation) to
    /// the boots section, making one when the run never booted (its build
    /// failed before the first boot).
    pub fn with_kernel_builds(mut self, records: Vec<KernelBuildRecord>) -> RunReport {
        if records.is_empty() {
            return self;
        }
        let section = self.boots.get_or_insert_with(|| BootsSection {
            accelerators: Vec::new(),
            proven: 0,
            spread: Vec::new(),
            failed: Vec::new(),
            environments: Vec::new(),
            kernel_builds: Vec::new(),
        });
        section.kernel_builds = records;
        self
    }
}

/// Per cell, per boot (in boot order), the data values of `metric`.
fn values_by_boot(
    table: &SampleTable,
    cells: usize,
    sample_boot: &BTreeMap<u32, u32>,
    metric: &crate::run::Available,
) -> Vec<BTreeMap<u32, Vec<f64>>> {
    let mut per_cell: Vec<BTreeMap<u32, Vec<f64>>> = vec![BTreeMap::new(); cells];
    for (index, cell) in per_cell.iter_mut().enumerate() {
        for (sequence, _, value) in table.data(index, &metric.name) {
            if let Some(boot) = sample_boot.get(&sequence) {
                cell.entry(*boot).or_default().push(value);
            }
        }
    }
    per_cell
}

/// The experiment's comparisons of `metric` in a booted run: a boot
/// factor's decided over boots (per-boot values, [`decide_over_boots`]),
/// the others (levels switched within a boot) on every iteration.
fn boot_comparisons(
    experiment: &Experiment,
    per_cell: &[BTreeMap<u32, Vec<f64>>],
    metric: &crate::run::Available,
    options: &RunReportOptions,
) -> Result<Option<crate::compare::CompareReport>, verdict_stats::StatsError> {
    let cells = experiment.cells();
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
    let pooled = |cell: usize| -> Vec<f64> { per_cell[cell].values().flatten().copied().collect() };
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
            // Every comparison gets a row, one boot (or run) a side too:
            // the row says why it cannot be decided.
            (!baseline.is_empty() && !candidate.is_empty()).then(|| ComparisonInput {
                name,
                unit: metric.unit.clone(),
                better: metric.direction,
                threshold,
                power: experiment.sampling.power,
                baseline,
                candidate,
            })
        })
        .collect();
    let mut comparisons = comparisons_if_any(&inputs, options.alpha, options.adjust)?;
    // A boot factor's comparisons are decided over boots by verdict-stats'
    // boot-unit method (the rows above only supply the per-boot medians'
    // summaries), at the Bonferroni level α/k of the k comparisons shown.
    if let Some(report) = comparisons.as_mut() {
        let family_size = if options.adjust {
            report.comparisons.len()
        } else {
            1
        };
        let mut raw = report.raw_p_values().to_vec();
        for (row, raw) in report.comparisons.iter_mut().zip(&mut raw) {
            if let Some((baseline, candidate)) = boot_groups.get(&row.name) {
                *raw = decide_over_boots(
                    row,
                    (baseline, candidate),
                    options.alpha,
                    family_size,
                    experiment.sampling.power,
                );
            }
        }
        // The rows decided over boots are adjusted with the others, over
        // the same family.
        report.adjust_p_values(raw);
    }
    Ok(comparisons)
}

/// Replaces a boot-level row's decision (shift, interval, verdict,
/// magnitude, boots needed with their range, why it cannot be decided)
/// with verdict-stats' comparison over boots ([`compare_boots`]: the
/// median of each boot's logs, Welch's t over boots, validated by
/// simulation in docs/validation.md), at the Bonferroni level α/k, and
/// returns its unadjusted p-value (the caller adjusts it with the family).
/// The row's side summaries stay those of the per-boot medians; its `n`
/// and `runs_needed` count boots per level.
fn decide_over_boots(
    row: &mut crate::compare::ComparisonRow,
    (baseline, candidate): (&[Vec<f64>], &[Vec<f64>]),
    alpha: f64,
    family_size: usize,
    power: f64,
) -> f64 {
    let mut boot_options = BootOptions::new(row.better);
    boot_options.settings.threshold = row.threshold;
    boot_options.settings.alpha = alpha;
    boot_options.settings.family_size = family_size.max(1);
    boot_options.settings.power = power;
    row.sampling_unit = SamplingUnit::Boot;
    let Ok(decided) = compare_boots(baseline, candidate, &boot_options) else {
        return row.p_value;
    };
    row.delta = decided.shift.estimate;
    row.delta_ci_low = decided.shift.interval.map(|interval| interval.low);
    row.delta_ci_high = decided.shift.interval.map(|interval| interval.high);
    row.delta_confidence = boot_options.settings.interval_confidence();
    row.verdict = decided.verdict;
    row.magnitude = decided.magnitude;
    row.runs_needed = decided.boots_needed;
    row.runs_needed_range = decided.boots_needed_range;
    row.undecided = decided.undecided;
    row.scale = decided.scale;
    row.absolute_threshold = decided.absolute_threshold;
    decided.p_value
}

/// How boot levels are compared (verdict-stats' default [`BootMethod`]), in words.
pub fn boot_method() -> &'static str {
    BootMethod::default().describe()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::RunReportOptions;
    use verdict_model::Sample;

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
            power: verdict_stats::plan::DEFAULT_POWER,
            baseline: boot_medians(baseline),
            candidate: boot_medians(candidate),
        };
        let mut report = comparisons_if_any(&[input], 0.05, true).unwrap().unwrap();
        let mut row = report.comparisons.remove(0);
        row.p_value = decide_over_boots(
            &mut row,
            (baseline, candidate),
            0.05,
            1,
            verdict_stats::plan::DEFAULT_POWER,
        );
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

    /// A run of an experiment with a boot factor `mode` (a, b) and a
    /// within-boot factor `size` (s, l): `boots` boots per boot level, 8
    /// iterations per cell in each, boot b's level `slower` times a's.
    fn boot_run(boots: u32, slower: f64) -> RunReport {
        boot_run_declaring(boots, slower, "")
    }

    /// [`boot_run`] with `metrics` (TOML) declared; every sample also has
    /// a `cycles` value, 1000 times its wall.
    fn boot_run_declaring(boots: u32, slower: f64, metrics: &str) -> RunReport {
        let experiment = Experiment::parse(
            &format!(
                "name = \"t\"\ncommand = [\"true\"]\n[factors]\n\
                 mode = [{{ value = \"a\", boot = {{ cmdline = \"quiet\" }} }}, {{ value = \"b\", boot = {{ cmdline = \"loud\" }} }}]\n\
                 size = [\"s\", \"l\"]\n[target]\nvm = {{ kernel = \"/vmlinuz\" }}\n{metrics}"
            ),
            "t.toml",
        )
        .unwrap();
        let cells = experiment.cells();
        let (mut samples, mut sample_boot) = (Vec::new(), BTreeMap::new());
        let mut sequence = 0u32;
        for boot in 0..2 * boots {
            let mode = if boot % 2 == 0 { "a" } else { "b" };
            for (cell, levels) in cells.iter().enumerate() {
                if levels.level("mode") != Some(mode) {
                    continue;
                }
                for iteration in 0..8u32 {
                    let mut value = 1.0 + 0.01 * f64::from(iteration % 4) + 0.003 * f64::from(boot);
                    if mode == "b" {
                        value *= slower;
                    }
                    let mut metrics = BTreeMap::new();
                    metrics.insert("wall".to_string(), value);
                    metrics.insert("cycles".to_string(), value * 1000.0);
                    samples.push(Sample {
                        cell,
                        block: boot,
                        sequence,
                        warmup: false,
                        started_at_ms: 0,
                        wall_seconds: value,
                        user_seconds: 0.0,
                        sys_seconds: 0.0,
                        max_rss_kib: 0,
                        exit_code: Some(0),
                        signal: None,
                        timed_out: false,
                        metrics,
                        failure: None,
                        missing: Default::default(),
                        leftovers: Vec::new(),
                    });
                    sample_boot.insert(sequence, boot);
                    sequence += 1;
                }
            }
        }
        let info = crate::run::RunInfo {
            id: 1,
            name: "t".into(),
            status: "complete".into(),
            started: String::new(),
            finished: None,
            seed: 1,
            host: "h".into(),
            planned: samples.len() as u64,
            recorded: samples.len(),
            tool_version: "verdict".into(),
            order: "interleaved".into(),
            procedure: None,
            noise: None,
            decisions: Vec::new(),
        };
        let options = RunReportOptions {
            metric: None,
            metrics: None,
            threshold: None,
            alpha: 0.05,
            adjust: true,
        };
        let report = RunReport::build(
            info,
            &experiment,
            &samples,
            &Environment::default(),
            &options,
        )
        .unwrap();
        let boots: Vec<ReportBoot> = (0..2 * boots)
            .map(|id| ReportBoot {
                id,
                level_key: format!("mode={}", if id % 2 == 0 { "a" } else { "b" }),
                status: BootStatus::Complete,
                accelerator: Some("tcg".into()),
                kernel_release: None,
                message: None,
                console_tail: None,
                environment: None,
            })
            .collect();
        let table = SampleTable::of(&experiment, &samples);
        report.with_boots(&experiment, &table, &boots, &sample_boot, &options)
    }

    #[test]
    fn one_boot_per_level_gets_a_row_that_says_why() {
        // `boots = 1`, the default: before, the boot-level comparisons
        // disappeared without a row.
        let report = boot_run(1, 1.3);
        let comparisons = report.comparisons.unwrap().comparisons;
        let over_boots: Vec<_> = comparisons
            .iter()
            .filter(|row| row.sampling_unit == SamplingUnit::Boot)
            .collect();
        assert_eq!(over_boots.len(), 2, "{comparisons:?}");
        for row in over_boots {
            assert_eq!(row.verdict, verdict_stats::verdict::Verdict::Inconclusive);
            assert_eq!(
                row.undecided,
                Some(verdict_stats::verdict::Undecided::OneBoot { minimum: 2 })
            );
            assert_eq!(row.runs_needed, None);
        }
    }

    #[test]
    fn boot_rows_are_adjusted_with_the_family() {
        // Three boots per level, a clear 30% slowdown: the two boot rows'
        // p-values are Holm-adjusted over the report's 4 comparisons, like
        // the within-boot rows, and the decision is at the Bonferroni level.
        let report = boot_run(3, 1.3);
        let compared = report.comparisons.unwrap();
        assert_eq!(compared.comparisons.len(), 4);
        let raw = compared.raw_p_values().to_vec();
        let adjusted = verdict_stats::multiplicity::holm(&raw);
        for (row, p_value) in compared.comparisons.iter().zip(adjusted) {
            assert_eq!(row.p_value, p_value, "{row:?}");
            assert!((row.delta_confidence - (1.0 - 0.05 / 4.0)).abs() < 1e-12);
        }
        let boot_row = compared
            .comparisons
            .iter()
            .find(|row| row.sampling_unit == SamplingUnit::Boot)
            .unwrap();
        assert_eq!(
            boot_row.verdict,
            verdict_stats::verdict::Verdict::Regression,
            "{boot_row:?}"
        );
    }

    #[test]
    fn every_declared_metric_is_decided_over_boots_by_the_same_rules() {
        // A booted run's other declared metrics (metric_verdicts) get
        // what the primary metric gets: a row for one boot a level that
        // says why, and boot rows Holm-adjusted with their family.
        let declared = "[[metrics]]\nname = \"wall\"\n\n[[metrics]]\nname = \"cycles\"\nsource = \"perf-stat\"\nevent = \"cycles\"\n";
        let report = boot_run_declaring(1, 1.3, declared);
        assert_eq!(report.metric_verdicts.len(), 1, "{report:?}");
        let cycles = report.metric_verdicts[0].comparisons.clone().unwrap();
        let over_boots: Vec<_> = cycles
            .comparisons
            .iter()
            .filter(|row| row.sampling_unit == SamplingUnit::Boot)
            .collect();
        assert_eq!(over_boots.len(), 2, "{cycles:?}");
        for row in over_boots {
            assert_eq!(
                row.undecided,
                Some(verdict_stats::verdict::Undecided::OneBoot { minimum: 2 }),
                "{row:?}"
            );
        }
        let report = boot_run_declaring(3, 1.3, declared);
        let cycles = report.metric_verdicts[0].comparisons.clone().unwrap();
        assert_eq!(cycles.comparisons.len(), 4);
        let adjusted = verdict_stats::multiplicity::holm(cycles.raw_p_values());
        for (row, p_value) in cycles.comparisons.iter().zip(adjusted) {
            assert_eq!(row.p_value, p_value, "{row:?}");
            if row.sampling_unit == SamplingUnit::Boot {
                assert_eq!(
                    row.verdict,
                    verdict_stats::verdict::Verdict::Regression,
                    "{row:?}"
                );
            }
        }
    }

    #[test]
    fn the_boots_section_carries_the_variance_components_and_f_test() {
        // Issue 29, finding 8: docs said the ANOVA's variance components
        // and F test were reported; no report had them. Level a's boots
        // 0, 2, 4 hold ln(1 + 0.01·(i mod 4) + 0.003·boot), i < 8: scipy's
        // f_oneway gives F = 2.01609 on (2, 21) df, p = 0.158148565103;
        // by hand (method of moments, n₀ = 8) the boot effect CV is
        // 0.00417250255043.
        let report = boot_run(3, 1.3);
        let section = report.boots.unwrap();
        let rows: Vec<_> = section
            .spread
            .iter()
            .filter(|row| row.cell.contains("mode=a"))
            .collect();
        assert_eq!(rows.len(), 2, "{:?}", section.spread);
        for row in rows {
            let cv = row.boot_effect_cv.unwrap();
            let p_value = row.boot_effect_p_value.unwrap();
            assert!((cv - 0.004_172_502_550_43).abs() < 1e-9, "{row:?}");
            assert!((p_value - 0.158_148_565_103).abs() < 1e-9, "{row:?}");
        }
    }

    fn booted(id: u32, level: &str, status: &str, cpu: &str, cmdline: &str) -> ReportBoot {
        let status = status.parse::<BootStatus>().unwrap();
        ReportBoot {
            id,
            level_key: level.into(),
            status,
            accelerator: Some("kexec".into()),
            kernel_release: Some("6.1.0-57-amd64".into()),
            message: None,
            console_tail: None,
            environment: status.booted().then(|| Environment {
                kernel_release: Some("6.1.0-57-amd64".into()),
                kernel_cmdline: Some(cmdline.into()),
                cpu_model: Some(cpu.into()),
                cpu_count: Some(4),
                cpus_online: Some("0-3".into()),
                load_average: Some([id as f64, 0.0, 0.0]),
                ..Environment::default()
            }),
        }
    }

    #[test]
    fn each_levels_environment_is_shown_and_disagreeing_boots_flagged() {
        let boots = [
            booted(
                0,
                "preempt=full",
                "complete",
                "Skylake",
                "preempt=full verdict.boot=aa",
            ),
            booted(
                1,
                "preempt=none",
                "complete",
                "Skylake",
                "preempt=none verdict.boot=bb",
            ),
            booted(2, "preempt=full", "failed", "Skylake", ""),
            booted(
                3,
                "preempt=full",
                "complete",
                "Icelake",
                "preempt=full verdict.boot=cc",
            ),
            booted(
                4,
                "preempt=none",
                "complete",
                "Skylake",
                "preempt=none verdict.boot=dd",
            ),
        ];
        let levels = level_environments(&boots);
        assert_eq!(
            levels
                .iter()
                .map(|level| (level.level_key.as_str(), level.boots.clone()))
                .collect::<Vec<_>>(),
            [("preempt=full", vec![0, 3]), ("preempt=none", vec![1, 4])]
        );
        let fact = |level: usize, name: &str| {
            levels[level]
                .facts
                .iter()
                .find(|fact| fact.name == name)
                .unwrap_or_else(|| panic!("no {name}: {levels:?}"))
                .clone()
        };
        // The nonce is new on every boot by design: not a difference.
        let cmdline = fact(0, "command line");
        assert!(!cmdline.differs, "{cmdline:?}");
        assert_eq!(cmdline.values[0].value, "preempt=full");
        assert_eq!(fact(0, "cpus").values[0].value, "4 (online 0-3)");
        // Another CPU model in one boot of a level is flagged, with each
        // value's boots; the load is not a fact (it changes freely).
        let cpu = fact(0, "cpu");
        assert!(cpu.differs, "{cpu:?}");
        assert_eq!(
            cpu.values,
            [
                FactValue {
                    value: "Skylake".into(),
                    boots: vec![0]
                },
                FactValue {
                    value: "Icelake".into(),
                    boots: vec![3]
                },
            ]
        );
        assert!(
            levels[1].facts.iter().all(|fact| !fact.differs),
            "{levels:?}"
        );
        assert!(
            levels[0].facts.iter().all(|fact| fact.name != "smt"),
            "never read"
        );
        assert!(
            level_environments(&boots[2..3]).is_empty(),
            "a failed boot has none"
        );
    }
}
