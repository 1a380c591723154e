//! A host group's comparisons combined (`verdict run --host A --host B`):
//! per comparison, the verdict counts over the hosts, the weighted
//! Z-method p-values over the per-host tests (Stouffer 1949 / Lipták 1958,
//! through verdict-stats `combine`; weights √(n₁ + n₂)), and the size of
//! the change across hosts: the stratified Hodges–Lehmann shift with its
//! interval (Hodges & Lehmann 1963, van Elteren 1960; verdict-stats
//! `combine::stratified_shift`). Samples are never pooled: each host is
//! compared within itself first.

use schemars::JsonSchema;
use serde::Serialize;
use verdict_stats::combine::{Stratum, one_sided, stratified_shift, weighted_z};
pub use verdict_stats::shift::Shift as CombinedShift;
use verdict_stats::verdict::{Better, Verdict};

use crate::compare::ComparisonRow;
use crate::run::ComparedValues;

/// One host's comparisons and the values behind them.
#[derive(Debug, Clone)]
pub struct HostComparisons {
    pub host: String,
    pub rows: Vec<ComparisonRow>,
    /// Empty when the values are not at hand (no combined size then).
    pub values: Vec<ComparedValues>,
}

/// What the combined one-sided tests say, each at `alpha / 2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AcrossHosts {
    Worse,
    Better,
    NoConsistentChange,
}

impl AcrossHosts {
    /// The words the reports print.
    pub fn as_str(self) -> &'static str {
        match self {
            AcrossHosts::Worse => "worse across hosts",
            AcrossHosts::Better => "better across hosts",
            AcrossHosts::NoConsistentChange => "no consistent change across hosts",
        }
    }
}

/// One comparison combined over the hosts that have it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HostCombination {
    pub name: String,
    /// Each verdict with the number of hosts that gave it, most frequent
    /// first (ties by the verdict's name).
    pub counts: Vec<(Verdict, usize)>,
    /// Weighted Z-method p-value for "worse than the baseline".
    pub p_worse: f64,
    /// Weighted Z-method p-value for "better than the baseline".
    pub p_better: f64,
    pub combined: AcrossHosts,
    /// The change across hosts, `C/B − 1`: the stratified Hodges–Lehmann
    /// shift with its interval at `1 − alpha`; `None` without values (or
    /// beyond `STRATIFIED_PAIRS_LIMIT`).
    pub shift: Option<CombinedShift>,
}

/// Combines each comparison (by name, in first-seen order) over the
/// per-host rows.
pub fn combine_hosts(per_host: &[HostComparisons], alpha: f64) -> Vec<HostCombination> {
    let mut names: Vec<String> = Vec::new();
    for HostComparisons { rows, .. } in per_host {
        for row in rows {
            if !names.contains(&row.name) {
                names.push(row.name.clone());
            }
        }
    }
    let mut combinations = Vec::new();
    for name in names {
        let mut counts: Vec<(Verdict, usize)> = Vec::new();
        let mut worse = Vec::new();
        let mut better = Vec::new();
        for HostComparisons { rows, .. } in per_host {
            let Some(row) = rows.iter().find(|row| row.name == name) else {
                continue;
            };
            match counts
                .iter_mut()
                .find(|(verdict, _)| *verdict == row.verdict)
            {
                Some((_, count)) => *count += 1,
                None => counts.push((row.verdict, 1)),
            }
            // The side the host's own test fell on: its verdict's when it
            // called a change (the interval then lies on that side), else
            // the estimate's (with many ties the estimate can sit at the
            // interval's open end, on 0).
            let looks_worse = match row.verdict {
                Verdict::Regression => true,
                Verdict::Improvement => false,
                Verdict::Equivalent | Verdict::Inconclusive => {
                    if row.better == Better::Higher {
                        row.delta < 0.0
                    } else {
                        row.delta > 0.0
                    }
                }
            };
            let weight = ((row.baseline.n + row.candidate.n) as f64).sqrt();
            worse.push(Stratum {
                one_sided_p: one_sided(row.p_value, looks_worse),
                weight,
            });
            better.push(Stratum {
                one_sided_p: one_sided(row.p_value, !looks_worse),
                weight,
            });
        }
        counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.as_str().cmp(b.0.as_str())));
        let p_worse = weighted_z(&worse);
        let p_better = weighted_z(&better);
        // Two one-sided tests, each at alpha/2.
        let combined = if p_worse < alpha / 2.0 {
            AcrossHosts::Worse
        } else if p_better < alpha / 2.0 {
            AcrossHosts::Better
        } else {
            AcrossHosts::NoConsistentChange
        };
        let strata: Vec<(&[f64], &[f64])> = per_host
            .iter()
            .filter_map(|host| host.values.iter().find(|values| values.name == name))
            .map(|values| (values.baseline.as_slice(), values.candidate.as_slice()))
            .collect();
        let shift = stratified_shift(&strata, 1.0 - alpha);
        combinations.push(HostCombination {
            name,
            counts,
            p_worse,
            p_better,
            combined,
            shift,
        });
    }
    combinations
}

/// The schema of `verdict report RUN --rows host --format json`.
pub const HOSTS_SCHEMA: &str = "verdict.hosts/v1";

/// One row per host: each cell's median and each comparison's delta and
/// verdict. Its keys print in alphabetical order (see
/// [`crate::schema::sorted`]).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HostsDocument {
    pub schema: &'static str,
    pub metric: String,
    pub hosts: Vec<HostsRow>,
}

/// One host's row of a [`HostsDocument`].
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HostsRow {
    pub host: String,
    pub run: i64,
    pub cells: Vec<HostsCell>,
    pub comparisons: Vec<HostsComparison>,
}

/// A cell's median on one host.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HostsCell {
    pub label: String,
    pub median: Option<f64>,
}

/// A comparison's result on one host.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HostsComparison {
    pub name: String,
    pub delta: f64,
    pub p_value: f64,
    pub verdict: Verdict,
}

/// The schema of a host group's report document.
pub const GROUP_SCHEMA: &str = "verdict.group/v1";

/// A host group's report (`verdict report --format json` of a run made on
/// several hosts): each host's `verdict.report/v1` document, then the
/// comparisons combined across them.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GroupReport<'a> {
    pub schema: &'static str,
    pub hosts: Vec<GroupHost<'a>>,
    pub combined: Vec<HostCombination>,
}

/// One host of a [`GroupReport`].
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GroupHost<'a> {
    pub host: &'a str,
    pub run: i64,
    pub report: &'a crate::run::RunReport,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{ComparisonInput, DEFAULT_POWER, comparison_rows};
    use rand::{Rng, SeedableRng};

    /// The combined words agree with the combined p-values, and every
    /// host's evidence is counted on the side its own test fell on, on
    /// tied integer data whose estimate can sit on 0.
    #[test]
    fn combined_words_agree_with_their_p_values_on_tied_data() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(30);
        let mut worse_seen = 0;
        for _ in 0..300 {
            let hosts = rng.random_range(2..=4);
            let shift = rng.random_range(0..=2);
            let per_host: Vec<HostComparisons> = (0..hosts)
                .map(|host| {
                    let mut values = |level: i64| -> Vec<f64> {
                        (0..rng.random_range(4..=20))
                            .map(|_| (level + rng.random_range(-1..=1)) as f64)
                            .collect()
                    };
                    let input = ComparisonInput {
                        name: "b vs a".to_string(),
                        unit: "allocs/op".to_string(),
                        better: Better::Lower,
                        threshold: 0.02,
                        power: DEFAULT_POWER,
                        baseline: values(100),
                        candidate: values(100 + shift),
                    };
                    let values = vec![ComparedValues {
                        name: input.name.clone(),
                        baseline: input.baseline.clone(),
                        candidate: input.candidate.clone(),
                    }];
                    let rows = comparison_rows(&[input], 0.05, true).unwrap().comparisons;
                    HostComparisons {
                        host: format!("host{host}"),
                        rows,
                        values,
                    }
                })
                .collect();
            let combined = &combine_hosts(&per_host, 0.05)[0];
            assert_eq!(
                combined.combined == AcrossHosts::Worse,
                combined.p_worse < 0.025,
                "{combined:?}"
            );
            if combined.combined == AcrossHosts::Better {
                assert!(combined.p_better < 0.025, "{combined:?}");
            }
            worse_seen += usize::from(combined.combined == AcrossHosts::Worse);
            // A host that called a regression counts as evidence of worse.
            for host in &per_host {
                if host.rows[0].verdict == Verdict::Regression {
                    let alone = combine_hosts(std::slice::from_ref(host), 0.05);
                    assert!(alone[0].p_worse < 0.5, "{:?}", host.rows[0]);
                }
            }
        }
        assert!(worse_seen > 30, "{worse_seen}");
    }
}
