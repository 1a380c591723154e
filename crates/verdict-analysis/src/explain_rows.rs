//! One row of `verdict explain` (a monitor, or a symbol's self or inclusive
//! share): its values on each side gathered with the unit of analysis the
//! main metric uses for the same comparison, and tested with the same
//! machinery. Iterations compared by the Mann–Whitney test and the
//! Hodges–Lehmann interval (`verdict_stats::verdict::compare`, which moves
//! to the additive shift C − B when a value is 0 or negative: a counter that
//! is 0 in some iterations, a share); block pairs by the signed-rank test
//! (`compare_paired`) when the experiment chose the paired analysis; per-boot
//! summaries over boots (`compare_boots`) when the comparison is of a boot
//! factor; several hosts each within itself, combined by the weighted
//! Z-method (hosts are blocks, never replicates). Pure; must not render.

use schemars::JsonSchema;
use serde::Serialize;
use verdict_stats::boots::{BootOptions, compare_boots};
use verdict_stats::combine::{Stratum, one_sided, weighted_z};
use verdict_stats::paired::{block_pairs, compare_paired};
use verdict_stats::shift::Shift;
use verdict_stats::summary::summarize;
use verdict_stats::verdict::{Better, CompareSettings, Scale, compare};

/// What one side of a row is, per unit of analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnalysisUnit {
    /// Every iteration (the independent analysis).
    Iterations,
    /// Per-block values paired across the two cells (`analysis = "paired"`).
    Blocks,
    /// One summary per boot (a boot factor's comparison).
    Boots,
}

impl AnalysisUnit {
    /// For people.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Iterations => "iterations (Mann-Whitney, Hodges-Lehmann interval)",
            Self::Blocks => "blocks (signed-rank on within-block pairs)",
            Self::Boots => "boots (per-boot medians, Welch over boots)",
        }
    }
}

/// A row's values on one side of one host: (block, boot, value) per
/// iteration that has it.
pub(crate) type SideValues = Vec<(u64, u32, f64)>;

/// One host's values of a row.
#[derive(Debug, Clone)]
pub(crate) struct HostValues {
    pub(crate) host: String,
    pub(crate) baseline: SideValues,
    pub(crate) candidate: SideValues,
}

/// A row tested on one host.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HostTest {
    pub host: String,
    /// Medians of the row's values (of the boot summaries over boots).
    pub baseline: f64,
    pub candidate: f64,
    /// On `scale`: C/B − 1, or C − B in the row's unit.
    pub shift: f64,
    pub scale: Scale,
    pub interval: Option<[f64; 2]>,
    /// Two-sided, unadjusted.
    pub p: f64,
    /// Iterations (blocks, boots) on each side.
    pub n: [usize; 2],
}

fn median(values: &[f64]) -> f64 {
    summarize(values).map_or(f64::NAN, |summary| summary.median)
}

fn group_by_boot(values: &SideValues) -> Vec<Vec<f64>> {
    let mut boots: std::collections::BTreeMap<u32, Vec<f64>> = std::collections::BTreeMap::new();
    for &(_, boot, value) in values {
        boots.entry(boot).or_default().push(value);
    }
    boots.into_values().collect()
}

/// A host's test from a comparison's parts (whichever test made them).
fn host_test(
    host: &str,
    medians: [f64; 2],
    shift: &Shift,
    scale: Scale,
    p: f64,
    n: [usize; 2],
) -> HostTest {
    HostTest {
        host: host.to_string(),
        baseline: medians[0],
        candidate: medians[1],
        shift: shift.estimate,
        scale,
        interval: shift.interval.map(|interval| [interval.low, interval.high]),
        p,
        n,
    }
}

/// Tests one host's values, the interval at `confidence`; `None` when a
/// side has too few values (fewer than 2 iterations, blocks or boots).
pub(crate) fn test_host(
    values: &HostValues,
    unit: AnalysisUnit,
    confidence: f64,
) -> Option<HostTest> {
    let alpha = (1.0 - confidence).clamp(1e-12, 0.999_999);
    let settings = CompareSettings {
        threshold: 0.02,
        better: Better::Lower,
        alpha,
        family_size: 1,
        // Explain reads the test and its interval, never "N runs would tell".
        power: verdict_stats::plan::DEFAULT_POWER,
    };
    let plain = |side: &SideValues| side.iter().map(|&(_, _, value)| value).collect::<Vec<_>>();
    match unit {
        AnalysisUnit::Iterations => {
            let (baseline, candidate) = (plain(&values.baseline), plain(&values.candidate));
            if baseline.len() < 2 || candidate.len() < 2 {
                return None;
            }
            let compared = compare(&baseline, &candidate, &settings).ok()?;
            Some(host_test(
                &values.host,
                [compared.baseline.median, compared.candidate.median],
                &compared.shift,
                compared.scale,
                compared.p_value,
                [baseline.len(), candidate.len()],
            ))
        }
        AnalysisUnit::Blocks => {
            let blocked = |side: &SideValues| {
                side.iter()
                    .map(|&(block, _, value)| (block, value))
                    .collect::<Vec<_>>()
            };
            let pairs = block_pairs(&blocked(&values.baseline), &blocked(&values.candidate));
            if pairs.baseline.len() < 2 {
                return None;
            }
            let compared = compare_paired(&pairs.baseline, &pairs.candidate, &settings).ok()?;
            Some(host_test(
                &values.host,
                [median(&pairs.baseline), median(&pairs.candidate)],
                &compared.shift,
                compared.scale,
                compared.p_value,
                [pairs.baseline.len(), pairs.candidate.len()],
            ))
        }
        AnalysisUnit::Boots => {
            let (baseline, candidate) = (
                group_by_boot(&values.baseline),
                group_by_boot(&values.candidate),
            );
            if baseline.len() < 2 || candidate.len() < 2 {
                return None;
            }
            let mut options = BootOptions::new(Better::Lower);
            options.settings = settings;
            let compared = compare_boots(&baseline, &candidate, &options).ok()?;
            Some(host_test(
                &values.host,
                [
                    median(&compared.baseline_boots),
                    median(&compared.candidate_boots),
                ],
                &compared.shift,
                compared.scale,
                compared.p_value,
                [baseline.len(), candidate.len()],
            ))
        }
    }
}

/// A row over every host: one host's test as it is, several combined.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Combined {
    pub(crate) baseline: f64,
    pub(crate) candidate: f64,
    pub(crate) shift: f64,
    pub(crate) scale: Scale,
    /// Only with one host: hosts are never pooled into one interval.
    pub(crate) interval: Option<[f64; 2]>,
    pub(crate) p: f64,
    pub(crate) hosts: Vec<HostTest>,
}

/// Combines the hosts' tests of a row: with one host, its test; with
/// several, the two-sided p-value 2·min(p↑, p↓) of the weighted Z-method
/// over the hosts' one-sided p-values (weights √(n₁ + n₂)), the medians and
/// shift as the median over hosts (on the absolute scale when any host's
/// is), and no interval (each host's is in `hosts`).
pub(crate) fn combine(tests: Vec<HostTest>) -> Option<Combined> {
    match tests.len() {
        0 => None,
        1 => {
            let test = &tests[0];
            Some(Combined {
                baseline: test.baseline,
                candidate: test.candidate,
                shift: test.shift,
                scale: test.scale,
                interval: test.interval,
                p: test.p,
                hosts: tests,
            })
        }
        _ => {
            let strata = |increase: bool| -> Vec<Stratum> {
                tests
                    .iter()
                    .map(|test| Stratum {
                        one_sided_p: one_sided(test.p, (test.shift > 0.0) == increase),
                        weight: ((test.n[0] + test.n[1]) as f64).sqrt(),
                    })
                    .collect()
            };
            let p = (2.0 * weighted_z(&strata(true)).min(weighted_z(&strata(false)))).min(1.0);
            let scale = if tests.iter().any(|test| test.scale == Scale::Absolute) {
                Scale::Absolute
            } else {
                Scale::Relative
            };
            let of =
                |value: fn(&HostTest) -> f64| median(&tests.iter().map(value).collect::<Vec<_>>());
            Some(Combined {
                baseline: of(|test| test.baseline),
                candidate: of(|test| test.candidate),
                shift: if scale == Scale::Absolute {
                    of(|test| test.candidate - test.baseline)
                } else {
                    of(|test| test.shift)
                },
                scale,
                interval: None,
                p,
                hosts: tests,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(values: &[f64]) -> SideValues {
        values
            .iter()
            .enumerate()
            .map(|(index, value)| (index as u64, (index / 3) as u32, *value))
            .collect()
    }

    fn host(baseline: &[f64], candidate: &[f64]) -> HostValues {
        HostValues {
            host: "h".into(),
            baseline: side(baseline),
            candidate: side(candidate),
        }
    }

    #[test]
    fn zeros_move_the_row_to_the_additive_shift() {
        let values = host(
            &[0.0, 1.0, 0.0, 2.0, 1.0, 0.0],
            &[5.0, 6.0, 4.0, 7.0, 5.0, 6.0],
        );
        let tested = test_host(&values, AnalysisUnit::Iterations, 0.95).unwrap();
        assert_eq!(tested.scale, Scale::Absolute);
        assert!((tested.shift - 5.0).abs() < 1.01, "{tested:?}");
        let interval = tested.interval.unwrap();
        assert!(interval[0] > 0.0, "{tested:?}");
        assert!(tested.p < 0.01);
        let positive = host(
            &[1.0, 1.1, 0.9, 1.05, 0.95, 1.0],
            &[2.0, 2.1, 1.9, 2.05, 1.95, 2.0],
        );
        let tested = test_host(&positive, AnalysisUnit::Iterations, 0.95).unwrap();
        assert_eq!(tested.scale, Scale::Relative);
        assert!((tested.shift - 1.0).abs() < 0.1, "{tested:?}");
    }

    #[test]
    fn boots_and_blocks_and_too_few() {
        let values = host(
            &[1.0, 1.0, 1.1, 2.0, 2.1, 2.0, 1.5, 1.4, 1.6],
            &[1.2, 1.3, 1.2, 2.2, 2.1, 2.3, 1.7, 1.6, 1.8],
        );
        let boots = test_host(&values, AnalysisUnit::Boots, 0.95).unwrap();
        assert_eq!(boots.n, [3, 3]);
        let blocks = test_host(&values, AnalysisUnit::Blocks, 0.95).unwrap();
        assert_eq!(blocks.n, [9, 9]);
        // Paired, every block higher: a change; over boots, too few boots.
        assert!(blocks.p < boots.p, "{blocks:?} {boots:?}");
        assert!(test_host(&host(&[1.0], &[2.0, 3.0]), AnalysisUnit::Iterations, 0.95).is_none());
    }

    #[test]
    fn hosts_combine_without_pooling() {
        let one = test_host(
            &host(
                &[1.0, 1.1, 0.9, 1.0, 1.05, 0.95],
                &[1.5, 1.6, 1.4, 1.5, 1.55, 1.45],
            ),
            AnalysisUnit::Iterations,
            0.95,
        )
        .unwrap();
        let mut two = one.clone();
        two.host = "other".into();
        two.baseline = 10.0;
        two.candidate = 15.0;
        let combined = combine(vec![one.clone(), two]).unwrap();
        assert!(
            combined.p < one.p,
            "two hosts agreeing say more: {combined:?}"
        );
        assert_eq!(combined.interval, None);
        assert_eq!(combined.hosts.len(), 2);
        assert_eq!(combine(vec![one.clone()]).unwrap().interval, one.interval);
    }
}
