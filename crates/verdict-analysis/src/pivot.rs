//! Pivot tables (`verdict report --rows F --cols G`): one column per level
//! of G with the median and its interval, a delta column per non-baseline
//! level of G with interval and verdict, and optionally (`--ratio F=a/b`)
//! the ratio between two levels of F in each column with the difference of
//! those ratios between columns (bootstrap). The table a maintainer pastes
//! into an email: the model, pure; verdict-report renders it.

use crate::compare::{ComparisonInput, ComparisonRow, SideSummary, comparisons_if_any};
use crate::run::RunInfo;
use schemars::JsonSchema;
use serde::Serialize;
use verdict_model::{Experiment, Sample};

use crate::samples::SampleTable;
use verdict_stats::bootstrap::{FourCells, ratio_difference};
use verdict_stats::summary::summarize;
use verdict_stats::verdict::Verdict;

pub const PIVOT_SCHEMA: &str = "verdict.pivot/v1";
const BOOTSTRAP_RESAMPLES: usize = 10_000;

/// What to pivot.
#[derive(Debug, Clone, Default)]
pub struct PivotOptions {
    pub rows: Option<String>,
    pub cols: Option<String>,
    /// `FACTOR=LEVEL`: the column factor's baseline.
    pub baseline: Option<String>,
    /// `FACTOR=A/B`.
    pub ratio: Option<String>,
    pub metric: Option<String>,
    pub threshold: Option<f64>,
    pub alpha: f64,
    pub adjust: bool,
    pub bootstrap_seed: u64,
}

/// One row: a combination of the non-column factors.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PivotRow {
    pub label: String,
    /// One per column level; `None` for an empty cell.
    pub cells: Vec<Option<SideSummary>>,
    /// One per non-baseline column level.
    pub deltas: Vec<ComparisonRow>,
}

/// The ratio row: A vs B of the ratio factor in each column, and the
/// difference of ratios between each column and the baseline column.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RatioRow {
    pub label: String,
    /// Per column: A vs B (relative, with interval and verdict).
    pub ratios: Vec<ComparisonRow>,
    /// Per non-baseline column: (A/B in column) - (A/B in baseline column).
    pub differences: Vec<RatioDifferenceRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RatioDifferenceRow {
    pub column: String,
    pub estimate: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub confidence: f64,
    pub method: String,
    pub seed: u64,
    pub resamples: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PivotReport {
    pub schema: &'static str,
    pub run: RunInfo,
    pub metric: String,
    pub unit: String,
    pub better: String,
    pub row_factors: Vec<String>,
    pub column_factor: String,
    pub columns: Vec<String>,
    pub baseline_column: String,
    /// False when the column factor has `compare = false`: no deltas.
    pub compared: bool,
    pub threshold: f64,
    pub alpha: f64,
    pub adjustment: String,
    pub rows: Vec<PivotRow>,
    pub ratio: Option<RatioRow>,
}

impl PivotReport {
    /// Build from samples held in memory.
    pub fn build(
        run: RunInfo,
        experiment: &Experiment,
        samples: &[Sample],
        options: &PivotOptions,
    ) -> Result<PivotReport, String> {
        Self::build_from(
            run,
            experiment,
            &SampleTable::of(experiment, samples),
            options,
        )
    }

    /// Build from a run's samples as columns.
    pub fn build_from(
        run: RunInfo,
        experiment: &Experiment,
        table: &SampleTable,
        options: &PivotOptions,
    ) -> Result<PivotReport, String> {
        let factor_names: Vec<&str> = experiment
            .factors
            .iter()
            .map(|factor| factor.name.as_str())
            .collect();
        let known = |name: &str| -> Result<usize, String> {
            factor_names
                .iter()
                .position(|factor| *factor == name)
                .ok_or_else(|| {
                    format!(
                        "the run has no factor `{name}`; it has: {}",
                        factor_names.join(", ")
                    )
                })
        };
        let (ratio_factor, ratio_a, ratio_b) = match &options.ratio {
            None => (None, String::new(), String::new()),
            Some(text) => {
                let (factor, levels) = text
                    .split_once('=')
                    .ok_or_else(|| format!("--ratio `{text}`: expected FACTOR=A/B"))?;
                let (a, b) = levels
                    .split_once('/')
                    .ok_or_else(|| format!("--ratio `{text}`: expected FACTOR=A/B"))?;
                let index = known(factor)?;
                if !experiment.factors[index].compare {
                    return Err(format!(
                        "--ratio: factor `{factor}` has compare = false in the experiment; its levels are not compared"
                    ));
                }
                for level in [a, b] {
                    if !experiment.factors[index]
                        .levels
                        .iter()
                        .any(|candidate| candidate.value == level)
                    {
                        return Err(format!("--ratio: factor `{factor}` has no level `{level}`"));
                    }
                }
                (Some(index), a.to_string(), b.to_string())
            }
        };
        let column_index = match &options.cols {
            Some(name) => known(name)?,
            None => {
                // Default: the last factor that is not the row or ratio factor.
                let row = options.rows.as_deref().map(known).transpose()?;
                (0..factor_names.len())
                    .rev()
                    .find(|index| Some(*index) != row && Some(*index) != ratio_factor)
                    .ok_or("a pivot needs a column factor (--cols); the run has too few factors")?
            }
        };
        if ratio_factor == Some(column_index) {
            return Err("--ratio must name a row factor, not the column factor".to_string());
        }
        let column_factor = &experiment.factors[column_index];
        let baseline_level = match &options.baseline {
            None => column_factor.baseline,
            Some(text) => {
                let (factor, level) = text
                    .split_once('=')
                    .ok_or_else(|| format!("--baseline `{text}`: expected FACTOR=LEVEL"))?;
                if factor != column_factor.name {
                    return Err(format!(
                        "--baseline names `{factor}` but the columns are `{}`",
                        column_factor.name
                    ));
                }
                column_factor
                    .levels
                    .iter()
                    .position(|candidate| candidate.value == level)
                    .ok_or_else(|| {
                        format!("--baseline: factor `{factor}` has no level `{level}`")
                    })?
            }
        };
        let mut row_factors: Vec<usize> = (0..factor_names.len())
            .filter(|index| *index != column_index)
            .collect();
        if let Some(rows) = &options.rows {
            let first = known(rows)?;
            if first == column_index {
                return Err("--rows and --cols name the same factor".to_string());
            }
            row_factors.retain(|index| *index != first);
            row_factors.insert(0, first);
        }
        let metric = match &options.metric {
            None => experiment.primary_metric(),
            Some(name) => experiment
                .metrics
                .iter()
                .find(|metric| &metric.name == name)
                .ok_or_else(|| format!("the run has no metric `{name}`"))?,
        };
        let better = crate::compare::better_of(metric.direction);
        let threshold = options
            .threshold
            .or(metric.threshold)
            .unwrap_or(experiment.sampling.threshold);
        let cells = experiment.cells();
        let values = table.cell_values(&metric.name);
        let find_cell = |fixed: &[(usize, String)]| -> Option<usize> {
            cells.iter().position(|cell| {
                fixed
                    .iter()
                    .all(|(factor, level)| &cell.levels[*factor].1 == level)
            })
        };
        // Row keys: every combination of the row factors' levels, in order.
        let mut row_keys: Vec<Vec<(usize, String)>> = vec![Vec::new()];
        for factor in &row_factors {
            row_keys = row_keys
                .into_iter()
                .flat_map(|key| {
                    experiment.factors[*factor].levels.iter().map(move |level| {
                        let mut next = key.clone();
                        next.push((*factor, level.value.clone()));
                        next
                    })
                })
                .collect();
        }
        let columns: Vec<String> = column_factor
            .levels
            .iter()
            .map(|level| level.value.clone())
            .collect();
        let candidate_columns: Vec<usize> = (0..columns.len())
            .filter(|index| column_factor.compare && *index != baseline_level)
            .collect();
        let cell_of = |key: &[(usize, String)], column: usize| -> Option<usize> {
            let mut fixed = key.to_vec();
            fixed.push((column_index, columns[column].clone()));
            find_cell(&fixed)
        };
        let row_label = |key: &[(usize, String)]| -> String {
            if key.is_empty() {
                metric.name.clone()
            } else if key.len() == 1 {
                key[0].1.clone()
            } else {
                key.iter()
                    .map(|(factor, level)| format!("{}={level}", factor_names[*factor]))
                    .collect::<Vec<_>>()
                    .join(",")
            }
        };
        // All comparisons together, so multiplicity covers the whole table.
        let mut inputs = Vec::new();
        for key in &row_keys {
            for column in &candidate_columns {
                if let (Some(base), Some(candidate)) =
                    (cell_of(key, baseline_level), cell_of(key, *column))
                    && !values[base].is_empty()
                    && !values[candidate].is_empty()
                {
                    inputs.push(ComparisonInput {
                        name: format!(
                            "{} {} vs {}",
                            row_label(key),
                            columns[*column],
                            columns[baseline_level]
                        ),
                        unit: metric.unit.clone(),
                        better,
                        threshold,
                        power: experiment.sampling.power,
                        baseline: values[base].clone(),
                        candidate: values[candidate].clone(),
                    });
                }
            }
        }
        let ratio_keys: Vec<(usize, usize, usize)> = match ratio_factor {
            None => Vec::new(),
            Some(factor) => {
                let others: Vec<usize> = row_factors
                    .iter()
                    .copied()
                    .filter(|index| *index != factor)
                    .collect();
                if others
                    .iter()
                    .any(|index| experiment.factors[*index].levels.len() > 1)
                {
                    return Err("--ratio needs the row factors other than the ratio factor to have one level each".to_string());
                }
                let fixed_others: Vec<(usize, String)> = others
                    .iter()
                    .map(|index| (*index, experiment.factors[*index].levels[0].value.clone()))
                    .collect();
                (0..columns.len())
                    .filter_map(|column| {
                        let mut a = fixed_others.clone();
                        a.push((factor, ratio_a.clone()));
                        a.push((column_index, columns[column].clone()));
                        let mut b = fixed_others.clone();
                        b.push((factor, ratio_b.clone()));
                        b.push((column_index, columns[column].clone()));
                        Some((column, find_cell(&a)?, find_cell(&b)?))
                    })
                    .collect()
            }
        };
        let ratio_start = inputs.len();
        for (column, a, b) in &ratio_keys {
            inputs.push(ComparisonInput {
                name: format!("{ratio_a}/{ratio_b} in {}", columns[*column]),
                unit: metric.unit.clone(),
                better,
                threshold,
                power: experiment.sampling.power,
                baseline: values[*b].clone(),
                candidate: values[*a].clone(),
            });
        }
        let compared = comparisons_if_any(&inputs, options.alpha, options.adjust)?;
        let compared_rows = compared
            .as_ref()
            .map(|report| report.comparisons.clone())
            .unwrap_or_default();
        let adjustment = compared
            .as_ref()
            .map_or_else(|| "none".to_string(), |report| report.adjustment.clone());
        let mut used = compared_rows[..ratio_start.min(compared_rows.len())].iter();
        let rows = row_keys
            .iter()
            .map(|key| {
                let cells_in_row = (0..columns.len())
                    .map(|column| {
                        cell_of(key, column).and_then(|cell| {
                            summarize(&values[cell]).map(|summary| SideSummary {
                                n: summary.n,
                                median: summary.median,
                                ci_low: summary.median_ci.map(|interval| interval.low),
                                ci_high: summary.median_ci.map(|interval| interval.high),
                                cv: summary.cv,
                            })
                        })
                    })
                    .collect();
                let deltas = candidate_columns
                    .iter()
                    .filter(|column| {
                        matches!((cell_of(key, baseline_level), cell_of(key, **column)), (Some(base), Some(candidate)) if values[base].len() >= 2 && values[candidate].len() >= 2)
                    })
                    .filter_map(|_| used.next().cloned())
                    .collect();
                PivotRow {
                    label: row_label(key),
                    cells: cells_in_row,
                    deltas,
                }
            })
            .collect();
        let ratio = ratio_factor.map(|_| {
            let ratios: Vec<ComparisonRow> = compared_rows
                .get(ratio_start..)
                .map(<[ComparisonRow]>::to_vec)
                .unwrap_or_default();
            let base = ratio_keys
                .iter()
                .find(|(column, _, _)| *column == baseline_level);
            let confidence = ratios.first().map_or(0.95, |row| row.delta_confidence);
            let differences = ratio_keys
                .iter()
                .filter(|(column, _, _)| column_factor.compare && *column != baseline_level)
                .filter_map(|(column, a, b)| {
                    let (_, base_a, base_b) = base?;
                    let result = ratio_difference(
                        FourCells {
                            first_baseline: &values[*b],
                            first_candidate: &values[*a],
                            second_baseline: &values[*base_b],
                            second_candidate: &values[*base_a],
                        },
                        confidence,
                        BOOTSTRAP_RESAMPLES,
                        options.bootstrap_seed,
                    )
                    .ok()?;
                    Some(RatioDifferenceRow {
                        column: columns[*column].clone(),
                        estimate: result.estimate,
                        ci_low: result.interval.low,
                        ci_high: result.interval.high,
                        confidence: result.interval.confidence,
                        method: "percentile bootstrap of ratio of medians".to_string(),
                        seed: result.seed,
                        resamples: result.resamples,
                    })
                })
                .collect();
            RatioRow {
                label: format!("{ratio_a}/{ratio_b}"),
                ratios,
                differences,
            }
        });
        Ok(PivotReport {
            schema: PIVOT_SCHEMA,
            run,
            metric: metric.name.clone(),
            unit: metric.unit.clone(),
            better: better.as_str().to_string(),
            row_factors: row_factors
                .iter()
                .map(|index| factor_names[*index].to_string())
                .collect(),
            column_factor: column_factor.name.clone(),
            baseline_column: columns[baseline_level].clone(),
            compared: column_factor.compare,
            columns,
            threshold,
            alpha: options.alpha,
            adjustment,
            rows,
            ratio,
        })
    }

    /// Every verdict in the table (for `--fail-on`).
    pub fn verdicts(&self) -> Vec<Verdict> {
        self.rows
            .iter()
            .flat_map(|row| row.deltas.iter().map(|delta| delta.verdict))
            .collect()
    }
}
