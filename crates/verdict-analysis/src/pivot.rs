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
use verdict_model::{Cell, Experiment, Factor, MetricSpec, Sample};
use verdict_stats::verdict::Better;

use crate::error::AnalysisError;
use crate::samples::SampleTable;
use verdict_stats::bootstrap::{FourCells, ratio_difference};
use verdict_stats::summary::summarize;
use verdict_stats::verdict::Verdict;

pub const PIVOT_SCHEMA: &str = "verdict.pivot/v1";
const BOOTSTRAP_RESAMPLES: usize = 10_000;

/// `--ratio FACTOR=A/B`: the ratio of level A to level B of a row factor
/// in each column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RatioSpec {
    pub factor: String,
    /// A: the ratio's numerator (the candidate side of its comparisons).
    pub numerator: String,
    /// B: the denominator (the baseline side).
    pub denominator: String,
}

/// What to pivot.
#[derive(Debug, Clone, Default)]
pub struct PivotOptions {
    pub rows: Option<String>,
    pub cols: Option<String>,
    /// `FACTOR=LEVEL`: the column factor's baseline.
    pub baseline: Option<String>,
    /// `--ratio FACTOR=A/B`.
    pub ratio: Option<RatioSpec>,
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
    ) -> Result<PivotReport, AnalysisError> {
        Self::build_from(
            run,
            experiment,
            &SampleTable::of(experiment, samples),
            options,
        )
    }

    /// Build from a run's samples as columns: resolve the factors the
    /// options name (`Axes::of`), compare every delta and ratio at once
    /// (so multiplicity covers the whole table), then lay the rows out.
    pub fn build_from(
        run: RunInfo,
        experiment: &Experiment,
        table: &SampleTable,
        options: &PivotOptions,
    ) -> Result<PivotReport, AnalysisError> {
        let axes = Axes::of(experiment, options)?;
        let grid = Grid::new(experiment, &axes, table.cell_values(&axes.metric.name));
        let (mut inputs, owners) = grid.delta_inputs(experiment, &axes);
        let ratio_keys = grid.ratio_keys(experiment, &axes)?;
        let ratio_start = inputs.len();
        if let Some((_, spec)) = axes.ratio {
            for (column, a, b) in &ratio_keys {
                let name = format!(
                    "{}/{} in {}",
                    spec.numerator, spec.denominator, grid.columns[*column]
                );
                inputs.push(grid.input(experiment, &axes, name, *b, *a));
            }
        }
        let compared = comparisons_if_any(&inputs, options.alpha, options.adjust)?;
        let compared_rows = compared
            .as_ref()
            .map(|report| report.comparisons.clone())
            .unwrap_or_default();
        let adjustment = compared
            .as_ref()
            .map_or_else(|| "none".to_string(), |report| report.adjustment.clone());
        // Each delta goes to the row its input came from: paired once.
        let mut deltas: Vec<Vec<ComparisonRow>> = vec![Vec::new(); grid.row_keys.len()];
        for (row, owner) in compared_rows.iter().zip(&owners) {
            deltas[*owner].push(row.clone());
        }
        let rows = grid
            .row_keys
            .iter()
            .zip(deltas)
            .map(|(key, deltas)| PivotRow {
                label: grid.row_label(&axes, key),
                cells: (0..grid.columns.len())
                    .map(|column| {
                        grid.cell_of(&axes, key, column)
                            .and_then(|cell| summarize(&grid.values[cell]))
                            .map(|summary| SideSummary {
                                n: summary.n,
                                median: summary.median,
                                ci_low: summary.median_ci.map(|interval| interval.low),
                                ci_high: summary.median_ci.map(|interval| interval.high),
                                cv: summary.cv,
                            })
                    })
                    .collect(),
                deltas,
            })
            .collect();
        let ratio = axes.ratio.map(|(_, spec)| {
            let ratios: Vec<ComparisonRow> = compared_rows
                .get(ratio_start..)
                .map(<[ComparisonRow]>::to_vec)
                .unwrap_or_default();
            let confidence = ratios.first().map_or(0.95, |row| row.delta_confidence);
            RatioRow {
                label: format!("{}/{}", spec.numerator, spec.denominator),
                ratios,
                differences: grid.ratio_differences(
                    experiment,
                    &axes,
                    &ratio_keys,
                    confidence,
                    options.bootstrap_seed,
                ),
            }
        });
        let column_factor = &experiment.factors[axes.column];
        Ok(PivotReport {
            schema: PIVOT_SCHEMA,
            run,
            metric: axes.metric.name.clone(),
            unit: axes.metric.unit.clone(),
            better: axes.better.as_str().to_string(),
            row_factors: axes
                .row_factors
                .iter()
                .map(|index| axes.factor_names[*index].to_string())
                .collect(),
            column_factor: column_factor.name.clone(),
            baseline_column: grid.columns[axes.baseline_level].clone(),
            compared: column_factor.compare,
            columns: grid.columns,
            threshold: axes.threshold,
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

/// The factors and metric a pivot's options name, checked against the
/// experiment.
struct Axes<'e> {
    factor_names: Vec<&'e str>,
    /// The ratio's row factor (its index) and levels.
    ratio: Option<(usize, &'e RatioSpec)>,
    column: usize,
    /// The column factor's baseline level.
    baseline_level: usize,
    /// Row factors in order: `--rows` first, then the others.
    row_factors: Vec<usize>,
    metric: &'e MetricSpec,
    better: Better,
    threshold: f64,
}

impl<'e> Axes<'e> {
    fn of(
        experiment: &'e Experiment,
        options: &'e PivotOptions,
    ) -> Result<Axes<'e>, AnalysisError> {
        let factor_names: Vec<&str> = experiment
            .factors
            .iter()
            .map(|factor| factor.name.as_str())
            .collect();
        let known = |name: &str| factor_index(&factor_names, name);
        let ratio = match &options.ratio {
            None => None,
            Some(spec) => Some((ratio_factor(experiment, &factor_names, spec)?, spec)),
        };
        let ratio_index = ratio.map(|(index, _)| index);
        let column = match &options.cols {
            Some(name) => known(name)?,
            None => {
                // Default: the last factor that is not the row or ratio factor.
                let row = options.rows.as_deref().map(known).transpose()?;
                (0..factor_names.len())
                    .rev()
                    .find(|index| Some(*index) != row && Some(*index) != ratio_index)
                    .ok_or(AnalysisError::NoColumnFactor)?
            }
        };
        if ratio_index == Some(column) {
            return Err(AnalysisError::RatioOnColumns);
        }
        let baseline_level = baseline_level(&experiment.factors[column], options)?;
        let mut row_factors: Vec<usize> = (0..factor_names.len())
            .filter(|index| *index != column)
            .collect();
        if let Some(rows) = &options.rows {
            let first = known(rows)?;
            if first == column {
                return Err(AnalysisError::SameRowsAndColumns);
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
                .ok_or_else(|| AnalysisError::UndeclaredMetric { name: name.clone() })?,
        };
        Ok(Axes {
            factor_names,
            ratio,
            column,
            baseline_level,
            row_factors,
            metric,
            better: metric.direction,
            threshold: options
                .threshold
                .or(metric.threshold)
                .unwrap_or(experiment.sampling.threshold),
        })
    }
}

fn factor_index(factor_names: &[&str], name: &str) -> Result<usize, AnalysisError> {
    factor_names
        .iter()
        .position(|factor| *factor == name)
        .ok_or_else(|| AnalysisError::UnknownFactor {
            name: name.to_string(),
            factors: factor_names
                .iter()
                .map(|factor| factor.to_string())
                .collect(),
        })
}

/// The index of the ratio's factor, which must be compared and have both
/// levels.
fn ratio_factor(
    experiment: &Experiment,
    factor_names: &[&str],
    spec: &RatioSpec,
) -> Result<usize, AnalysisError> {
    let factor = &spec.factor;
    let index = factor_index(factor_names, factor)?;
    if !experiment.factors[index].compare {
        return Err(AnalysisError::RatioNotCompared {
            factor: factor.clone(),
        });
    }
    for level in [&spec.numerator, &spec.denominator] {
        if !experiment.factors[index]
            .levels
            .iter()
            .any(|candidate| &candidate.value == level)
        {
            return Err(AnalysisError::RatioLevel {
                factor: factor.clone(),
                level: level.clone(),
            });
        }
    }
    Ok(index)
}

/// The column factor's baseline level: `--baseline FACTOR=LEVEL`, else
/// the experiment's.
fn baseline_level(column_factor: &Factor, options: &PivotOptions) -> Result<usize, AnalysisError> {
    let Some(text) = &options.baseline else {
        return Ok(column_factor.baseline);
    };
    let (factor, level) = text
        .split_once('=')
        .ok_or_else(|| AnalysisError::BaselineSyntax { text: text.clone() })?;
    if factor != column_factor.name {
        return Err(AnalysisError::BaselineFactor {
            factor: factor.to_string(),
            columns: column_factor.name.clone(),
        });
    }
    column_factor
        .levels
        .iter()
        .position(|candidate| candidate.value == level)
        .ok_or_else(|| AnalysisError::BaselineLevel {
            factor: factor.to_string(),
            level: level.to_string(),
        })
}

/// The table's rows (every combination of the row factors' levels) and
/// columns, with the metric's values per cell.
struct Grid {
    cells: Vec<Cell>,
    values: Vec<Vec<f64>>,
    row_keys: Vec<Vec<(usize, String)>>,
    columns: Vec<String>,
    /// The columns compared with the baseline column.
    candidate_columns: Vec<usize>,
}

impl Grid {
    fn new(experiment: &Experiment, axes: &Axes, values: Vec<Vec<f64>>) -> Grid {
        let column_factor = &experiment.factors[axes.column];
        let mut row_keys: Vec<Vec<(usize, String)>> = vec![Vec::new()];
        for factor in &axes.row_factors {
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
        let candidate_columns = (0..columns.len())
            .filter(|index| column_factor.compare && *index != axes.baseline_level)
            .collect();
        Grid {
            cells: experiment.cells(),
            values,
            row_keys,
            columns,
            candidate_columns,
        }
    }

    /// The cell whose levels include every one of `fixed`.
    fn find_cell(&self, fixed: &[(usize, String)]) -> Option<usize> {
        self.cells.iter().position(|cell| {
            fixed
                .iter()
                .all(|(factor, level)| &cell.levels[*factor].1 == level)
        })
    }

    fn cell_of(&self, axes: &Axes, key: &[(usize, String)], column: usize) -> Option<usize> {
        let mut fixed = key.to_vec();
        fixed.push((axes.column, self.columns[column].clone()));
        self.find_cell(&fixed)
    }

    fn row_label(&self, axes: &Axes, key: &[(usize, String)]) -> String {
        if key.is_empty() {
            axes.metric.name.clone()
        } else if key.len() == 1 {
            key[0].1.clone()
        } else {
            key.iter()
                .map(|(factor, level)| format!("{}={level}", axes.factor_names[*factor]))
                .collect::<Vec<_>>()
                .join(",")
        }
    }

    fn input(
        &self,
        experiment: &Experiment,
        axes: &Axes,
        name: String,
        baseline: usize,
        candidate: usize,
    ) -> ComparisonInput {
        ComparisonInput {
            name,
            unit: axes.metric.unit.clone(),
            better: axes.better,
            threshold: axes.threshold,
            power: experiment.sampling.power,
            baseline: self.values[baseline].clone(),
            candidate: self.values[candidate].clone(),
        }
    }

    /// Each row's deltas against the baseline column where both cells
    /// have values, with the index of the row each belongs to.
    fn delta_inputs(
        &self,
        experiment: &Experiment,
        axes: &Axes,
    ) -> (Vec<ComparisonInput>, Vec<usize>) {
        let mut inputs = Vec::new();
        let mut owners = Vec::new();
        for (row, key) in self.row_keys.iter().enumerate() {
            for column in &self.candidate_columns {
                if let (Some(base), Some(candidate)) = (
                    self.cell_of(axes, key, axes.baseline_level),
                    self.cell_of(axes, key, *column),
                ) && !self.values[base].is_empty()
                    && !self.values[candidate].is_empty()
                {
                    let name = format!(
                        "{} {} vs {}",
                        self.row_label(axes, key),
                        self.columns[*column],
                        self.columns[axes.baseline_level]
                    );
                    inputs.push(self.input(experiment, axes, name, base, candidate));
                    owners.push(row);
                }
            }
        }
        (inputs, owners)
    }

    /// Per column, the cells of the ratio's two levels: (column, A's
    /// cell, B's cell). The other row factors must have one level each.
    fn ratio_keys(
        &self,
        experiment: &Experiment,
        axes: &Axes,
    ) -> Result<Vec<(usize, usize, usize)>, AnalysisError> {
        let Some((factor, spec)) = axes.ratio else {
            return Ok(Vec::new());
        };
        let others: Vec<usize> = axes
            .row_factors
            .iter()
            .copied()
            .filter(|index| *index != factor)
            .collect();
        if others
            .iter()
            .any(|index| experiment.factors[*index].levels.len() > 1)
        {
            return Err(AnalysisError::RatioRowLevels);
        }
        let fixed_others: Vec<(usize, String)> = others
            .iter()
            .map(|index| (*index, experiment.factors[*index].levels[0].value.clone()))
            .collect();
        let cell = |level: &str, column: usize| {
            let mut fixed = fixed_others.clone();
            fixed.push((factor, level.to_string()));
            fixed.push((axes.column, self.columns[column].clone()));
            self.find_cell(&fixed)
        };
        Ok((0..self.columns.len())
            .filter_map(|column| {
                Some((
                    column,
                    cell(&spec.numerator, column)?,
                    cell(&spec.denominator, column)?,
                ))
            })
            .collect())
    }

    /// Each compared column's ratio against the baseline column's: the
    /// difference of the two ratios of medians, by bootstrap.
    fn ratio_differences(
        &self,
        experiment: &Experiment,
        axes: &Axes,
        ratio_keys: &[(usize, usize, usize)],
        confidence: f64,
        seed: u64,
    ) -> Vec<RatioDifferenceRow> {
        let compare = experiment.factors[axes.column].compare;
        let base = ratio_keys
            .iter()
            .find(|(column, _, _)| *column == axes.baseline_level);
        ratio_keys
            .iter()
            .filter(|(column, _, _)| compare && *column != axes.baseline_level)
            .filter_map(|(column, a, b)| {
                let (_, base_a, base_b) = base?;
                let result = ratio_difference(
                    FourCells {
                        first_baseline: &self.values[*b],
                        first_candidate: &self.values[*a],
                        second_baseline: &self.values[*base_b],
                        second_candidate: &self.values[*base_a],
                    },
                    confidence,
                    BOOTSTRAP_RESAMPLES,
                    seed,
                )
                .ok()?;
                Some(RatioDifferenceRow {
                    column: self.columns[*column].clone(),
                    estimate: result.estimate,
                    ci_low: result.interval.low,
                    ci_high: result.interval.high,
                    confidence: result.interval.confidence,
                    method: "percentile bootstrap of ratio of medians".to_string(),
                    seed: result.seed,
                    resamples: result.resamples,
                })
            })
            .collect()
    }
}
