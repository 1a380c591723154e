//! A run's samples as the analyses read them, column by column
//! (`SampleTable`): per cell, the data iterations (not warmups, not
//! failures) in run order — their sequences, blocks and the value of every
//! metric the run has (declared, and the built-in wall, user, sys and
//! maxrss) — and the failures, missing values and leftovers a report
//! lists. Built one sample at a time (`push`, as the store streams them),
//! so a report of a million samples holds a few numbers per sample and
//! metric, not the samples. Must not compute statistics or do I/O.

use verdict_model::{Experiment, Sample};

use crate::run::{Available, available_metrics};

/// One cell's data iterations, column by column.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CellSamples {
    /// Sequences of the data iterations, in run order.
    pub sequences: Vec<u32>,
    /// Their blocks.
    pub blocks: Vec<u32>,
    /// Per metric (in `SampleTable::metric_names` order), one value per
    /// data iteration; NaN where the iteration has none (a stored value is
    /// never NaN).
    values: Vec<Vec<f64>>,
    /// Sequences of the failed measured (not warmup) iterations.
    pub failed: Vec<u32>,
    /// Warmup iterations, failed or not.
    pub warmups: usize,
}

/// A failed iteration (warmups included), in run order.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedSample {
    pub sequence: u32,
    pub cell: usize,
    pub reason: String,
    pub output_tail: String,
}

/// An iteration that left processes behind.
#[derive(Debug, Clone, PartialEq)]
pub struct LeftoverSample {
    pub sequence: u32,
    pub cell: usize,
    pub processes: Vec<String>,
}

/// A declared metric some data iterations could not measure.
#[derive(Debug, Clone, PartialEq)]
pub struct MissingValues {
    pub metric: String,
    pub count: usize,
    /// Distinct reasons, in the order first seen.
    pub reasons: Vec<String>,
}

/// See the module comment.
#[derive(Debug, Clone)]
pub struct SampleTable {
    metrics: Vec<Available>,
    cells: Vec<CellSamples>,
    failures: Vec<FailedSample>,
    leftovers: Vec<LeftoverSample>,
    /// One per declared metric, in declaration order.
    missing: Vec<MissingValues>,
}

impl SampleTable {
    /// An empty table for a run of `experiment`.
    pub fn new(experiment: &Experiment) -> SampleTable {
        let metrics = available_metrics(experiment);
        let cells = experiment.cells().len();
        SampleTable {
            cells: vec![
                CellSamples {
                    values: vec![Vec::new(); metrics.len()],
                    ..CellSamples::default()
                };
                cells
            ],
            metrics,
            failures: Vec::new(),
            leftovers: Vec::new(),
            missing: experiment
                .metrics
                .iter()
                .map(|metric| MissingValues {
                    metric: metric.name.clone(),
                    count: 0,
                    reasons: Vec::new(),
                })
                .collect(),
        }
    }

    /// The table of samples held in memory, in run order (sorted by
    /// sequence).
    pub fn of(experiment: &Experiment, samples: &[Sample]) -> SampleTable {
        let mut ordered: Vec<&Sample> = samples.iter().collect();
        ordered.sort_by_key(|sample| sample.sequence);
        let mut table = SampleTable::new(experiment);
        for sample in ordered {
            table.push(sample);
        }
        table
    }

    /// Adds the next sample in run order. A sample of a cell the
    /// experiment does not have is left out of the cells (its failure and
    /// leftovers are still listed).
    pub fn push(&mut self, sample: &Sample) {
        if let Some(failure) = &sample.failure {
            self.failures.push(FailedSample {
                sequence: sample.sequence,
                cell: sample.cell,
                reason: failure.reason.clone(),
                output_tail: failure.output_tail.clone(),
            });
        }
        if !sample.leftovers.is_empty() {
            self.leftovers.push(LeftoverSample {
                sequence: sample.sequence,
                cell: sample.cell,
                processes: sample.leftovers.clone(),
            });
        }
        let Some(cell) = self.cells.get_mut(sample.cell) else {
            return;
        };
        if sample.warmup {
            cell.warmups += 1;
            return;
        }
        if sample.failure.is_some() {
            cell.failed.push(sample.sequence);
            return;
        }
        cell.sequences.push(sample.sequence);
        cell.blocks.push(sample.block);
        for (metric, values) in self.metrics.iter().zip(&mut cell.values) {
            values.push(metric.value(sample).unwrap_or(f64::NAN));
        }
        for missing in &mut self.missing {
            if let Some(reason) = sample.missing.get(&missing.metric) {
                missing.count += 1;
                if !missing.reasons.contains(reason) {
                    missing.reasons.push(reason.clone());
                }
            }
        }
    }

    /// The metrics the table has a column for.
    pub fn metric_names(&self) -> impl Iterator<Item = &str> {
        self.metrics.iter().map(|metric| metric.name.as_str())
    }

    pub(crate) fn metrics(&self) -> &[Available] {
        &self.metrics
    }

    pub fn cells(&self) -> &[CellSamples] {
        &self.cells
    }

    pub fn failures(&self) -> &[FailedSample] {
        &self.failures
    }

    pub fn leftovers(&self) -> &[LeftoverSample] {
        &self.leftovers
    }

    /// The declared metrics with missing values.
    pub fn missing(&self) -> impl Iterator<Item = &MissingValues> {
        self.missing.iter().filter(|missing| missing.count > 0)
    }

    fn column(&self, metric: &str) -> Option<usize> {
        self.metrics.iter().position(|column| column.name == metric)
    }

    /// `(sequence, block, value)` of the data iterations of `cell` that
    /// have a value of `metric`, in run order.
    pub fn data<'t>(
        &'t self,
        cell: usize,
        metric: &str,
    ) -> impl Iterator<Item = (u32, u32, f64)> + 't {
        let column = self.column(metric);
        let samples = self.cells.get(cell);
        samples
            .zip(column)
            .into_iter()
            .flat_map(|(samples, column)| {
                samples
                    .sequences
                    .iter()
                    .zip(&samples.blocks)
                    .zip(&samples.values[column])
                    .filter(|(_, value)| !value.is_nan())
                    .map(|((sequence, block), value)| (*sequence, *block, *value))
            })
    }

    /// Values of `metric` per cell, data iterations only, in run order.
    pub fn cell_values(&self, metric: &str) -> Vec<Vec<f64>> {
        (0..self.cells.len())
            .map(|cell| self.data(cell, metric).map(|(_, _, value)| value).collect())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_keeps_data_values_by_cell_and_lists_the_rest() {
        let experiment = Experiment::parse(
            "name = \"t\"\ncommand = [\"true\"]\n\n[factors]\nmode = [\"a\", \"b\"]\n\n\
             [[metrics]]\nname = \"ops\"\nsource = \"regex\"\npattern = 'ops (\\d+)'\ndirection = \"higher\"\n",
            "t.toml",
        )
        .unwrap();
        let sample = |sequence: u32, cell: usize| -> Sample {
            Sample {
                cell,
                block: sequence / 2,
                sequence,
                warmup: false,
                started_at_ms: 0,
                wall_seconds: 0.5,
                user_seconds: 0.25,
                sys_seconds: 0.0,
                max_rss_kib: 64,
                exit_code: Some(0),
                signal: None,
                timed_out: false,
                metrics: [("ops".to_string(), 7.0)].into(),
                failure: None,
                missing: Default::default(),
                leftovers: Vec::new(),
            }
        };
        let mut warmup = sample(0, 0);
        warmup.warmup = true;
        let mut failed = sample(1, 1);
        failed.failure = Some(verdict_model::Failure {
            reason: "exit 1".into(),
            output_tail: "no".into(),
        });
        let mut missing = sample(3, 1);
        missing.metrics.clear();
        missing
            .missing
            .insert("ops".into(), "<not supported>".into());
        let samples = [sample(2, 0), warmup, failed, missing, sample(4, 0)];
        let table = SampleTable::of(&experiment, &samples);
        assert_eq!(table.cells()[0].sequences, [2, 4]);
        assert_eq!(table.cells()[0].warmups, 1);
        assert_eq!(table.cells()[1].failed, [1]);
        assert_eq!(table.cell_values("ops"), [vec![7.0, 7.0], vec![]]);
        assert_eq!(table.cell_values("wall"), [vec![0.5, 0.5], vec![0.5]]);
        assert_eq!(
            table.data(0, "ops").collect::<Vec<_>>(),
            [(2, 1, 7.0), (4, 2, 7.0)]
        );
        assert_eq!(table.failures().len(), 1);
        let missing: Vec<_> = table.missing().collect();
        assert_eq!(missing.len(), 1);
        assert_eq!((missing[0].count, missing[0].reasons.len()), (1, 1));
        assert_eq!(table.data(9, "ops").count(), 0);
        assert_eq!(table.data(0, "nope").count(), 0);
    }
}
