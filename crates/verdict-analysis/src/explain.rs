//! `verdict explain` (schema `verdict.explain/v1`): where the time went.
//! For each of the experiment's comparisons, every monitor (the system's
//! counters over an iteration, per iteration) and every symbol's self and
//! inclusive share of its profiles, compared between the two cells with the
//! machinery and unit of analysis of the main metric (`explain_rows`),
//! false discoveries controlled over all rows of the comparison at once
//! (Benjamini–Hochberg at q, `verdict_stats::fdr`), the intervals at the
//! false-coverage level 1 − R·q/m of Benjamini & Yekutieli (2005), and the
//! rows ranked by how much of the change each explains. Monitors and
//! profiles are never a comparison's own verdict. Pure: stored samples and
//! details in, the model out; verdict-report renders it.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::Serialize;
use verdict_model::profile::counter_unit;
use verdict_model::{Experiment, Sample, SampleDetails};
use verdict_stats::boots::rank_smallest_p_value;
pub use verdict_stats::fdr::FdrMethod;
use verdict_stats::fdr::{adjust, selected_confidence};
use verdict_stats::verdict::Scale;

use crate::error::AnalysisError;
use crate::explain_rows::{AnalysisUnit, HostTest, HostValues, SideValues, combine, test_host};
use crate::flame::{FlameNode, flame_graph};
use crate::run::{available_metrics, comparison_label};

pub const EXPLAIN_SCHEMA: &str = "verdict.explain/v1";

/// Symbols whose mean share over both sides' profiles is below this are
/// not tested (0.1%): independent filtering on a statistic that does not
/// depend on the labels (Bourgon, Gentleman & Huber 2010, PNAS 107:9546),
/// so the rows that could matter keep their power.
pub const SHARE_FLOOR: f64 = 0.001;

/// One host's stored run, as explain needs it.
#[derive(Debug, Clone)]
pub struct ExplainHost<'a> {
    pub host: String,
    pub run: i64,
    pub samples: &'a [Sample],
    pub details: &'a BTreeMap<u32, SampleDetails>,
    /// The boot each sample ran in, by sequence (runs on a booted target).
    pub boot_of: BTreeMap<u32, u32>,
}

/// What to explain, and how.
#[derive(Debug, Clone)]
pub struct ExplainOptions {
    /// The false discovery rate controlled over each comparison's rows.
    pub q: f64,
    /// Show every row, not only the discoveries.
    pub all: bool,
    /// Only the comparison with this name (as the report prints it).
    pub comparison: Option<String>,
    pub method: FdrMethod,
}

impl Default for ExplainOptions {
    fn default() -> Self {
        Self {
            q: 0.05,
            all: false,
            comparison: None,
            method: FdrMethod::BenjaminiHochberg,
        }
    }
}

/// A run explained.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ExplainReport {
    pub schema: &'static str,
    pub experiment: String,
    /// The runs explained: one, or one per host of a host group.
    pub runs: Vec<RunRef>,
    /// The main metric, whose change the rows explain.
    pub metric: String,
    pub metric_unit: String,
    pub q: f64,
    pub method: FdrMethod,
    pub procedure: &'static str,
    /// Whether the rows are every row tested, or the discoveries only.
    pub all: bool,
    pub comparisons: Vec<ExplainComparison>,
}

/// A run and the host it measured.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RunRef {
    pub run: i64,
    pub host: String,
}

/// The main metric's change in a comparison (unadjusted, on the unit of
/// analysis of the rows).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MainChange {
    pub baseline: f64,
    pub candidate: f64,
    pub shift: f64,
    pub scale: Scale,
    pub interval: Option<[f64; 2]>,
    pub confidence: f64,
    pub p: f64,
}

/// What one side of a comparison captured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Captured {
    /// Data iterations.
    pub iterations: usize,
    /// Of those, with monitors.
    pub monitored: usize,
    /// Profiles, and of those the ones without samples.
    pub profiles: usize,
    pub empty_profiles: usize,
}

/// One comparison explained.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ExplainComparison {
    /// As `verdict report` prints it.
    pub name: String,
    pub unit_of_analysis: AnalysisUnit,
    pub main: Option<MainChange>,
    pub baseline: Captured,
    pub candidate: Captured,
    /// Rows tested (m), discoveries among them (R).
    pub tested: usize,
    pub discoveries: usize,
    /// Rows left untested: no variation at all, too few values, or (symbols)
    /// below the share floor.
    pub untested: usize,
    /// Confidence of every row's interval: 1 − R·q/m.
    pub interval_confidence: f64,
    /// What perf said about empty or partial profiles, each once.
    pub notes: Vec<String>,
    pub monitors: Vec<ExplainRow>,
    pub symbols: Vec<ExplainRow>,
    /// The candidate's profile as a tree, for the HTML flame graph (not in
    /// the JSON document).
    #[serde(skip)]
    pub flame: Option<FlameNode>,
}

/// Which share of a symbol a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShareKind {
    /// Samples in the symbol itself.
    #[serde(rename = "self")]
    Own,
    /// Samples in it or what it called.
    Inclusive,
}

impl ShareKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Own => "self",
            Self::Inclusive => "inclusive",
        }
    }
}

/// Which way a discovery moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Increase,
    Decrease,
    /// Not a discovery at q.
    None,
}

/// One row: a monitor, or a symbol's self or inclusive share.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ExplainRow {
    /// The monitor, or the symbol (raw: renderers escape it).
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<ShareKind>,
    /// `s`, `count`, or `share` (a fraction of the profile).
    pub unit: &'static str,
    /// Medians per iteration (per block, per boot).
    pub baseline: f64,
    pub candidate: f64,
    /// Relative change C/B − 1: the Hodges–Lehmann estimate on the
    /// relative scale; on the absolute scale the shift over |baseline|
    /// (absent when the baseline is 0).
    pub delta: Option<f64>,
    /// `relative` (every value above 0: shift and interval are C/B − 1) or
    /// `absolute` (a value is 0: shift and interval are C − B in `unit`).
    pub scale: Scale,
    pub shift: f64,
    pub interval: Option<[f64; 2]>,
    /// Two-sided p-value, unadjusted.
    pub p: f64,
    /// Benjamini–Hochberg adjusted: a discovery when ≤ the report's q.
    pub q: f64,
    pub change: Change,
    /// The row's mean change over the mean change of its total (the
    /// profile's weight for symbols, busy CPU time for `cpu.*`): which part
    /// of the change it is. Absent where there is no common total.
    pub explains: Option<f64>,
    /// Per host, when the run is one of a host group.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostTest>,
}

/// A row before testing: its key and each host's values.
struct RowValues {
    name: String,
    share: Option<ShareKind>,
    unit: &'static str,
    hosts: Vec<HostValues>,
    /// Mean change of the row and of its total, for `explains`.
    explained: Option<Explained>,
}

/// A row's mean change against its total's.
#[derive(Debug, Clone, Copy)]
struct Explained {
    change: f64,
    total_change: f64,
    /// The total's mean on the baseline side.
    total_baseline: f64,
}

/// The share of the total's change that a row is, when the total moved
/// by at least 1% of itself (a ratio over a change lost in the noise would
/// say nothing, however large).
const TOTAL_CHANGE_FLOOR: f64 = 0.01;

impl Explained {
    fn share(self) -> Option<f64> {
        (self.total_change.abs() >= TOTAL_CHANGE_FLOOR * self.total_baseline.abs()
            && self.total_change.abs() > f64::EPSILON)
            .then(|| self.change / self.total_change)
    }
}

/// The busy CPU modes (what the CPUs did, as opposed to waiting).
const BUSY_MODES: [&str; 6] = [
    "cpu.user",
    "cpu.nice",
    "cpu.system",
    "cpu.irq",
    "cpu.softirq",
    "cpu.steal",
];

impl ExplainReport {
    /// Explains `experiment`'s comparisons over `hosts` (one host: a run).
    pub fn build(
        experiment: &Experiment,
        hosts: &[ExplainHost<'_>],
        options: &ExplainOptions,
    ) -> Result<ExplainReport, AnalysisError> {
        if !(options.q > 0.0 && options.q < 1.0) {
            return Err(AnalysisError::FalseDiscoveryRate { q: options.q });
        }
        let metric = experiment.primary_metric();
        let unit = available_metrics(experiment)
            .into_iter()
            .find(|available| available.name == metric.name)
            .map_or_else(|| metric.unit.clone(), |available| available.unit);
        let cells = experiment.cells();
        let boot_factors: Vec<String> = experiment
            .boot_factors()
            .into_iter()
            .map(|index| experiment.factors[index].name.clone())
            .collect();
        let mut comparisons = Vec::new();
        for spec in experiment.comparisons() {
            let by_boot = boot_factors.contains(&spec.factor);
            let name = format!(
                "{} vs {}{}",
                comparison_label(&cells[spec.candidate_cell].levels, &spec.factor),
                cells[spec.baseline_cell].level(&spec.factor).unwrap_or(""),
                if by_boot {
                    crate::compare::BOOT_ROW_MARK
                } else {
                    ""
                }
            );
            if options
                .comparison
                .as_ref()
                .is_some_and(|wanted| *wanted != name)
            {
                continue;
            }
            let unit_of_analysis = if by_boot {
                AnalysisUnit::Boots
            } else if experiment.sampling.analysis == verdict_model::Analysis::Paired {
                AnalysisUnit::Blocks
            } else {
                AnalysisUnit::Iterations
            };
            let sides = Sides {
                baseline: spec.baseline_cell,
                candidate: spec.candidate_cell,
            };
            comparisons.push(explain_comparison(
                name,
                unit_of_analysis,
                &metric.name,
                hosts,
                sides,
                options,
            ));
        }
        if let Some(wanted) = &options.comparison
            && comparisons.is_empty()
        {
            return Err(AnalysisError::UnknownComparison {
                wanted: wanted.clone(),
                comparisons: experiment_comparison_names(experiment, &boot_factors),
            });
        }
        Ok(ExplainReport {
            schema: EXPLAIN_SCHEMA,
            experiment: experiment.name.clone(),
            runs: hosts
                .iter()
                .map(|host| RunRef {
                    run: host.run,
                    host: host.host.clone(),
                })
                .collect(),
            metric: metric.name.clone(),
            metric_unit: unit,
            q: options.q,
            method: options.method,
            procedure: options.method.describe(),
            all: options.all,
            comparisons,
        })
    }
}

fn experiment_comparison_names(experiment: &Experiment, boot_factors: &[String]) -> Vec<String> {
    let cells = experiment.cells();
    experiment
        .comparisons()
        .iter()
        .map(|spec| {
            format!(
                "{} vs {}{}",
                comparison_label(&cells[spec.candidate_cell].levels, &spec.factor),
                cells[spec.baseline_cell].level(&spec.factor).unwrap_or(""),
                if boot_factors.contains(&spec.factor) {
                    crate::compare::BOOT_ROW_MARK
                } else {
                    ""
                }
            )
        })
        .collect()
}

/// The two cells of a comparison.
#[derive(Debug, Clone, Copy)]
struct Sides {
    baseline: usize,
    candidate: usize,
}

/// The data samples of a cell on a host with what they captured.
fn captured<'a>(
    host: &'a ExplainHost<'_>,
    cell: usize,
) -> Vec<(&'a Sample, Option<&'a SampleDetails>)> {
    host.samples
        .iter()
        .filter(|sample| sample.cell == cell && sample.is_data())
        .map(|sample| (sample, host.details.get(&sample.sequence)))
        .collect()
}

fn explain_comparison(
    name: String,
    unit_of_analysis: AnalysisUnit,
    metric: &str,
    hosts: &[ExplainHost<'_>],
    sides: Sides,
    options: &ExplainOptions,
) -> ExplainComparison {
    let mut rows = monitor_rows(hosts, sides);
    rows.extend(symbol_rows(hosts, sides));
    let main = main_change(metric, hosts, sides, unit_of_analysis);
    // First pass: the p-values, to know R; then the intervals at 1 − R·q/m.
    let mut untested = 0;
    let mut tested: Vec<(RowValues, f64)> = Vec::new();
    for row in rows {
        let p = combine(
            row.hosts
                .iter()
                .filter_map(|values| test_host(values, unit_of_analysis, 0.95))
                .collect(),
        )
        .map(|combined| combined.p);
        match p {
            Some(p) if !constant(&row) => tested.push((row, p)),
            _ => untested += 1,
        }
    }
    let p_values: Vec<f64> = tested.iter().map(|(_, p)| *p).collect();
    let adjusted = adjust(&p_values, options.method);
    let discoveries = adjusted.iter().filter(|value| **value <= options.q).count();
    let confidence = selected_confidence(options.q, tested.len(), discoveries, options.method);
    let mut monitors = Vec::new();
    let mut symbols = Vec::new();
    for ((row, _), q) in tested.into_iter().zip(adjusted) {
        let Some(combined) = combine(
            row.hosts
                .iter()
                .filter_map(|values| test_host(values, unit_of_analysis, confidence))
                .collect(),
        ) else {
            continue;
        };
        let discovery = q <= options.q;
        if !discovery && !options.all {
            continue;
        }
        let delta = match combined.scale {
            Scale::Relative => Some(combined.shift),
            Scale::Absolute => {
                (combined.baseline != 0.0).then(|| combined.shift / combined.baseline.abs())
            }
        };
        let explained = ExplainRow {
            name: row.name,
            share: row.share,
            unit: row.unit,
            baseline: combined.baseline,
            candidate: combined.candidate,
            delta,
            scale: combined.scale,
            shift: combined.shift,
            interval: combined.interval,
            p: combined.p,
            q,
            change: match (discovery, combined.shift > 0.0) {
                (false, _) => Change::None,
                (true, true) => Change::Increase,
                (true, false) => Change::Decrease,
            },
            explains: row.explained.and_then(Explained::share),
            hosts: if combined.hosts.len() > 1 {
                combined.hosts
            } else {
                Vec::new()
            },
        };
        if row.share.is_some() {
            symbols.push(explained);
        } else {
            monitors.push(explained);
        }
    }
    rank(&mut monitors);
    rank(&mut symbols);
    let (baseline, candidate, mut notes) = captured_counts(hosts, sides);
    notes.extend(too_few_notes(
        unit_of_analysis,
        &baseline,
        &candidate,
        p_values.len(),
        options.q,
    ));
    ExplainComparison {
        name,
        unit_of_analysis,
        main,
        baseline,
        candidate,
        tested: p_values.len(),
        discoveries,
        untested,
        interval_confidence: confidence,
        notes,
        flame: flame_graph(hosts.first(), sides.candidate, &symbols),
        monitors,
        symbols,
    }
}

/// The smallest two-sided p-value the rows' test can give with `m` and `n`
/// values a side: the rank test's complete separation 2/C(m+n, m), the
/// signed-rank test's 2/2^pairs for block pairs; `None` over boots
/// (Welch's t has no such floor).
fn smallest_p(unit: AnalysisUnit, m: usize, n: usize) -> Option<f64> {
    match unit {
        AnalysisUnit::Iterations => Some(rank_smallest_p_value(m, n)),
        AnalysisUnit::Blocks => Some((2.0 / 2f64.powi(m.min(n) as i32)).min(1.0)),
        AnalysisUnit::Boots => None,
    }
}

/// Notes for sides too small for any row to be a discovery among `tested`
/// at `q`: even the first row of the step-up needs p ≤ q/m, and with few
/// profiles (or iterations) the rank test's smallest p-value is above it.
fn too_few_notes(
    unit: AnalysisUnit,
    baseline: &Captured,
    candidate: &Captured,
    tested: usize,
    q: f64,
) -> Vec<String> {
    let bar = q / tested.max(1) as f64;
    let mut notes = Vec::new();
    for (what, sides, advice) in [
        (
            "profiles",
            (
                baseline.profiles - baseline.empty_profiles,
                candidate.profiles - candidate.empty_profiles,
            ),
            "profile in more blocks (`every = 1`) or run more iterations",
        ),
        (
            "monitored iterations",
            (baseline.monitored, candidate.monitored),
            "run more iterations",
        ),
    ] {
        let (m, n) = sides;
        if m == 0 || n == 0 {
            continue;
        }
        let Some(smallest) = smallest_p(unit, m, n) else {
            continue;
        };
        if smallest > bar {
            let needed = (2..=64)
                .find(|&count| smallest_p(unit, count, count).is_some_and(|p| p <= bar))
                .unwrap_or(64);
            notes.push(format!(
                "with {m} and {n} {what} no such row can be a discovery among {tested} rows: the test's smallest p-value, {smallest:.2e}, is above q/m = {bar:.2e}; {advice} ({needed} per side would do)"
            ));
        }
    }
    notes
}

/// A row whose values are all the same on both sides of every host: no
/// test can see anything.
fn constant(row: &RowValues) -> bool {
    let mut values = row
        .hosts
        .iter()
        .flat_map(|host| host.baseline.iter().chain(&host.candidate))
        .map(|&(_, _, value)| value);
    let Some(first) = values.next() else {
        return true;
    };
    values.all(|value| value == first)
}

/// Discoveries first; symbols' self shares before their inclusive ones
/// (a caller's inclusive share carries every change below it, the root's
/// all of them: `perf report` sorts by self for the same reason); then by
/// how much of the change the row is (rows without a common total after),
/// then by p.
fn rank(rows: &mut [ExplainRow]) {
    rows.sort_by(|a, b| {
        let found = |row: &ExplainRow| row.change != Change::None;
        let inclusive = |row: &ExplainRow| row.share == Some(ShareKind::Inclusive);
        found(b)
            .cmp(&found(a))
            .then_with(|| inclusive(a).cmp(&inclusive(b)))
            .then_with(|| {
                let size = |row: &ExplainRow| row.explains.map_or(-1.0, f64::abs);
                size(b).total_cmp(&size(a))
            })
            .then_with(|| a.p.total_cmp(&b.p))
            .then_with(|| a.name.cmp(&b.name))
    });
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, count) = values.fold((0.0, 0usize), |(sum, count), value| {
        (sum + value, count + 1)
    });
    if count == 0 { 0.0 } else { sum / count as f64 }
}

/// Every monitor's values per host (a monitored iteration that lacks a
/// counter, one registered later, counts 0 for it).
fn monitor_rows(hosts: &[ExplainHost<'_>], sides: Sides) -> Vec<RowValues> {
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for host in hosts {
        for cell in [sides.baseline, sides.candidate] {
            for (_, details) in captured(host, cell) {
                if let Some(details) = details {
                    names.extend(details.monitors.keys().map(String::as_str));
                }
            }
        }
    }
    let side = |host: &ExplainHost<'_>,
                cell: usize,
                value: &dyn Fn(&SampleDetails) -> f64|
     -> SideValues {
        captured(host, cell)
            .into_iter()
            .filter_map(|(sample, details)| {
                let details = details.filter(|details| !details.monitors.is_empty())?;
                let boot = host.boot_of.get(&sample.sequence).copied().unwrap_or(0);
                Some((u64::from(sample.block), boot, value(details)))
            })
            .collect()
    };
    let busy = |details: &SampleDetails| -> f64 {
        BUSY_MODES
            .iter()
            .filter_map(|mode| details.monitors.get(*mode))
            .sum()
    };
    names
        .into_iter()
        .map(|name| {
            let value =
                |details: &SampleDetails| details.monitors.get(name).copied().unwrap_or(0.0);
            let host_values: Vec<HostValues> = hosts
                .iter()
                .map(|host| HostValues {
                    host: host.host.clone(),
                    baseline: side(host, sides.baseline, &value),
                    candidate: side(host, sides.candidate, &value),
                })
                .collect();
            let explained = BUSY_MODES.contains(&name).then(|| {
                let mean_of = |of: &dyn Fn(&SampleDetails) -> f64, cell: usize| {
                    mean(hosts.iter().map(|host| {
                        mean(side(host, cell, of).into_iter().map(|(_, _, value)| value))
                    }))
                };
                let change = |of: &dyn Fn(&SampleDetails) -> f64| {
                    mean_of(of, sides.candidate) - mean_of(of, sides.baseline)
                };
                Explained {
                    change: change(&value),
                    total_change: change(&busy),
                    total_baseline: mean_of(&busy, sides.baseline),
                }
            });
            RowValues {
                name: name.to_string(),
                share: None,
                unit: counter_unit(name).as_str(),
                hosts: host_values,
                explained,
            }
        })
        .collect()
}

/// One profile with samples: where it ran, its weight, and each symbol's
/// (self, inclusive) weight.
struct ProfileValues {
    block: u64,
    boot: u32,
    weight: f64,
    symbols: BTreeMap<String, (f64, f64)>,
}

/// Every symbol's self and inclusive share per host, over the profiles
/// that have samples (a symbol absent from a profile has share 0 there).
fn symbol_rows(hosts: &[ExplainHost<'_>], sides: Sides) -> Vec<RowValues> {
    type Profiles = Vec<ProfileValues>;
    let profiles = |host: &ExplainHost<'_>, cell: usize| -> Profiles {
        captured(host, cell)
            .into_iter()
            .filter_map(|(sample, details)| {
                let profile = details?
                    .profile
                    .as_ref()
                    .filter(|profile| profile.weight > 0)?;
                let boot = host.boot_of.get(&sample.sequence).copied().unwrap_or(0);
                let symbols = profile
                    .symbols
                    .iter()
                    .map(|symbol| {
                        (
                            symbol.symbol.clone(),
                            (symbol.self_weight as f64, symbol.inclusive_weight as f64),
                        )
                    })
                    .collect();
                Some(ProfileValues {
                    block: u64::from(sample.block),
                    boot,
                    weight: profile.weight as f64,
                    symbols,
                })
            })
            .collect()
    };
    let per_host: Vec<(String, Profiles, Profiles)> = hosts
        .iter()
        .map(|host| {
            (
                host.host.clone(),
                profiles(host, sides.baseline),
                profiles(host, sides.candidate),
            )
        })
        .collect();
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for (_, baseline, candidate) in &per_host {
        for profile in baseline.iter().chain(candidate) {
            names.extend(profile.symbols.keys().map(String::as_str));
        }
    }
    let mut rows = Vec::new();
    for name in names {
        for share in [ShareKind::Own, ShareKind::Inclusive] {
            let pick = |symbols: &BTreeMap<String, (f64, f64)>| {
                symbols
                    .get(name)
                    .map_or(0.0, |(own, inclusive)| match share {
                        ShareKind::Own => *own,
                        ShareKind::Inclusive => *inclusive,
                    })
            };
            let shares = |side: &Profiles| -> SideValues {
                side.iter()
                    .map(|profile| {
                        (
                            profile.block,
                            profile.boot,
                            pick(&profile.symbols) / profile.weight,
                        )
                    })
                    .collect()
            };
            let pooled = mean(per_host.iter().flat_map(|(_, baseline, candidate)| {
                shares(baseline)
                    .into_iter()
                    .chain(shares(candidate))
                    .map(|(_, _, value)| value)
                    .collect::<Vec<_>>()
            }));
            if pooled < SHARE_FLOOR {
                continue;
            }
            let change = |of: &dyn Fn(&ProfileValues) -> f64| {
                mean(per_host.iter().map(|(_, baseline, candidate)| {
                    mean(candidate.iter().map(of)) - mean(baseline.iter().map(of))
                }))
            };
            let total_baseline = mean(
                per_host
                    .iter()
                    .map(|(_, baseline, _)| mean(baseline.iter().map(|profile| profile.weight))),
            );
            rows.push(RowValues {
                name: name.to_string(),
                share: Some(share),
                unit: "share",
                hosts: per_host
                    .iter()
                    .map(|(host, baseline, candidate)| HostValues {
                        host: host.clone(),
                        baseline: shares(baseline),
                        candidate: shares(candidate),
                    })
                    .collect(),
                explained: Some(Explained {
                    change: change(&|profile| pick(&profile.symbols)),
                    total_change: change(&|profile| profile.weight),
                    total_baseline,
                }),
            });
        }
    }
    rows
}

/// The main metric's change on the rows' unit of analysis, at 95%.
fn main_change(
    metric: &str,
    hosts: &[ExplainHost<'_>],
    sides: Sides,
    unit: AnalysisUnit,
) -> Option<MainChange> {
    let side = |host: &ExplainHost<'_>, cell: usize| -> SideValues {
        captured(host, cell)
            .into_iter()
            .filter_map(|(sample, _)| {
                let value = match metric {
                    "wall" => Some(sample.wall_seconds),
                    "user" => Some(sample.user_seconds),
                    "sys" => Some(sample.sys_seconds),
                    "maxrss" => Some(sample.max_rss_kib as f64),
                    _ => None,
                };
                let value = sample.metrics.get(metric).copied().or(value)?;
                let boot = host.boot_of.get(&sample.sequence).copied().unwrap_or(0);
                Some((u64::from(sample.block), boot, value))
            })
            .collect()
    };
    let combined = combine(
        hosts
            .iter()
            .filter_map(|host| {
                test_host(
                    &HostValues {
                        host: host.host.clone(),
                        baseline: side(host, sides.baseline),
                        candidate: side(host, sides.candidate),
                    },
                    unit,
                    0.95,
                )
            })
            .collect(),
    )?;
    Some(MainChange {
        baseline: combined.baseline,
        candidate: combined.candidate,
        shift: combined.shift,
        scale: combined.scale,
        interval: combined.interval,
        confidence: 0.95,
        p: combined.p,
    })
}

/// What each side captured, and the profiles' notes (each once).
fn captured_counts(hosts: &[ExplainHost<'_>], sides: Sides) -> (Captured, Captured, Vec<String>) {
    let mut notes: Vec<String> = Vec::new();
    let mut count = |cell: usize| {
        let mut counts = Captured::default();
        for host in hosts {
            for (_, details) in captured(host, cell) {
                counts.iterations += 1;
                let Some(details) = details else { continue };
                if !details.monitors.is_empty() {
                    counts.monitored += 1;
                }
                if let Some(profile) = &details.profile {
                    counts.profiles += 1;
                    if profile.weight == 0 {
                        counts.empty_profiles += 1;
                    }
                    if let Some(note) = &profile.note
                        && !notes.contains(note)
                    {
                        notes.push(note.clone());
                    }
                }
            }
        }
        counts
    };
    let baseline = count(sides.baseline);
    let candidate = count(sides.candidate);
    (baseline, candidate, notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_model::ProfileRecord;
    use verdict_model::profile::SymbolWeight;

    fn experiment() -> Experiment {
        Experiment::parse(
            "name = \"e\"\ncommand = [\"true\"]\n[factors]\nlevel = [\"base\", \"more\"]\n",
            "e.toml",
        )
        .unwrap()
    }

    /// `iterations` per cell, blocks interleaved; cell 1's `grows`
    /// monitor and `hot` symbol are 30% larger; the other rows equal in
    /// distribution (a deterministic wiggle).
    fn run(iterations: u32) -> (Vec<Sample>, BTreeMap<u32, SampleDetails>) {
        let mut samples = Vec::new();
        let mut details = BTreeMap::new();
        for sequence in 0..2 * iterations {
            let cell = (sequence % 2) as usize;
            let wiggle = 1.0 + 0.02 * f64::from((sequence * 7) % 5) - 0.04;
            let factor = if cell == 1 { 1.3 } else { 1.0 };
            samples.push(Sample {
                cell,
                block: sequence / 2,
                sequence,
                warmup: false,
                started_at_ms: 0,
                wall_seconds: 0.1 * factor * wiggle,
                user_seconds: 0.0,
                sys_seconds: 0.0,
                max_rss_kib: 0,
                exit_code: Some(0),
                signal: None,
                timed_out: false,
                metrics: BTreeMap::new(),
                failure: None,
                missing: BTreeMap::new(),
                leftovers: Vec::new(),
            });
            let hot = (1000.0 * factor * wiggle) as u64;
            let cold = (1000.0 * (2.0 - wiggle)) as u64;
            details.insert(
                sequence,
                SampleDetails {
                    monitors: BTreeMap::from([
                        ("grows".to_string(), 100.0 * factor * wiggle),
                        ("same".to_string(), 50.0 * (2.0 - wiggle)),
                        ("flat".to_string(), 7.0),
                    ]),
                    profile: Some(ProfileRecord {
                        event: "cpu-clock".into(),
                        samples: hot + cold,
                        weight: hot + cold,
                        note: None,
                        symbols: vec![
                            SymbolWeight {
                                symbol: "cold".into(),
                                self_weight: cold,
                                inclusive_weight: cold,
                            },
                            SymbolWeight {
                                symbol: "hot".into(),
                                self_weight: hot,
                                inclusive_weight: hot,
                            },
                        ],
                        stacks: Vec::new(),
                    }),
                },
            );
        }
        (samples, details)
    }

    fn explained(iterations: u32, options: &ExplainOptions) -> ExplainReport {
        let (samples, details) = run(iterations);
        let host = ExplainHost {
            host: "h".into(),
            run: 1,
            samples: &samples,
            details: &details,
            boot_of: BTreeMap::new(),
        };
        ExplainReport::build(&experiment(), &[host], options).unwrap()
    }

    #[test]
    fn the_planted_rows_are_found_first_and_the_constant_one_is_not_tested() {
        let report = explained(12, &ExplainOptions::default());
        let comparison = &report.comparisons[0];
        assert_eq!(comparison.name, "level=more vs base");
        assert_eq!(comparison.untested, 1, "`flat` has no variation");
        assert_eq!(comparison.tested, 6, "grows, same, hot and cold twice");
        assert_eq!(comparison.monitors[0].name, "grows");
        assert_eq!(comparison.monitors[0].change, Change::Increase);
        assert_eq!(comparison.symbols[0].name, "hot");
        assert_eq!(comparison.symbols[0].share, Some(ShareKind::Own));
        assert_eq!(comparison.symbols[0].change, Change::Increase);
        // All of the profile's growth is in `hot`'s own weight.
        let explains = comparison.symbols[0].explains.unwrap();
        assert!((explains - 1.0).abs() < 0.1, "{explains}");
        let interval = comparison.symbols[0].interval.unwrap();
        assert!(interval[0] > 0.0);
        assert!(
            comparison.monitors.iter().all(|row| row.name != "same"),
            "not a discovery, not shown: {:?}",
            comparison.monitors
        );
        let every = explained(
            12,
            &ExplainOptions {
                all: true,
                ..ExplainOptions::default()
            },
        );
        assert!(
            every.comparisons[0]
                .monitors
                .iter()
                .any(|row| row.name == "same")
        );
    }

    #[test]
    fn too_few_profiles_for_any_discovery_is_said() {
        let report = explained(4, &ExplainOptions::default());
        let notes = &report.comparisons[0].notes;
        assert!(
            notes.iter().any(
                |note| note.starts_with("with 4 and 4 profiles no such row can be a discovery")
            ),
            "{notes:?}"
        );
        assert!(
            explained(12, &ExplainOptions::default()).comparisons[0]
                .notes
                .is_empty()
        );
    }

    #[test]
    fn an_unknown_comparison_names_the_ones_there_are() {
        let (samples, details) = run(4);
        let host = ExplainHost {
            host: "h".into(),
            run: 1,
            samples: &samples,
            details: &details,
            boot_of: BTreeMap::new(),
        };
        let error = ExplainReport::build(
            &experiment(),
            &[host],
            &ExplainOptions {
                comparison: Some("level=less vs base".into()),
                ..ExplainOptions::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("its comparisons: level=more vs base"),
            "{error}"
        );
    }
}
