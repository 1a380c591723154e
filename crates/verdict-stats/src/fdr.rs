//! False-discovery-rate control over many tests shown together (`verdict
//! explain`'s hundreds of counters and symbols): the Benjamini–Hochberg
//! step-up procedure, and Benjamini–Yekutieli's version for arbitrary
//! dependence between the tests; with the false-coverage-rate level of the
//! intervals of the rows selected.
//!
//! Sources: Benjamini & Hochberg (1995), "Controlling the false discovery
//! rate", J. R. Statist. Soc. B 57:289 (FDR ≤ q for independent tests, and
//! for positively regression-dependent ones: Benjamini & Yekutieli 2001);
//! Benjamini & Yekutieli (2001), "The control of the false discovery rate
//! in multiple testing under dependency", Ann. Statist. 29:1165 (FDR ≤ q
//! under any dependence, at the cost of the factor Σ 1/i); Benjamini &
//! Yekutieli (2005), "False discovery rate-adjusted multiple confidence
//! intervals for selected parameters", JASA 100:71 (marginal intervals at
//! 1 − R·q/m for the R of m parameters selected keep the false coverage
//! rate ≤ q). The adjusted p-values are R's `p.adjust(p, "BH")` and
//! `p.adjust(p, "BY")`. Pure; must not do I/O.

use serde::{Deserialize, Serialize};

/// Which false-discovery procedure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FdrMethod {
    /// Benjamini–Hochberg (1995): independent or positively dependent tests.
    #[default]
    BenjaminiHochberg,
    /// Benjamini–Yekutieli (2001): any dependence.
    BenjaminiYekutieli,
}

impl FdrMethod {
    /// The procedure, for people.
    pub fn describe(self) -> &'static str {
        match self {
            Self::BenjaminiHochberg => "Benjamini-Hochberg (1995)",
            Self::BenjaminiYekutieli => "Benjamini-Yekutieli (2001, any dependence)",
        }
    }
}

/// The adjusted p-values ("q-values" in the loose sense R uses) of
/// `p_values`, in the order given: a test is a discovery at level q exactly
/// when its adjusted value is ≤ q. For BH the adjusted value of the i-th
/// smallest of m p-values is min over j ≥ i of m·p(j)/j, capped at 1; BY
/// multiplies by c(m) = Σ_{i=1..m} 1/i. A NaN p-value is treated as 1.
/// O(m log m).
pub fn adjust(p_values: &[f64], method: FdrMethod) -> Vec<f64> {
    let m = p_values.len();
    if m == 0 {
        return Vec::new();
    }
    let factor = match method {
        FdrMethod::BenjaminiHochberg => 1.0,
        FdrMethod::BenjaminiYekutieli => (1..=m).map(|i| 1.0 / i as f64).sum(),
    };
    let clean = |p: f64| if p.is_nan() { 1.0 } else { p.clamp(0.0, 1.0) };
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| clean(p_values[a]).total_cmp(&clean(p_values[b])));
    let mut adjusted = vec![1.0; m];
    let mut running = f64::INFINITY;
    for rank in (1..=m).rev() {
        let index = order[rank - 1];
        let value = factor * m as f64 * clean(p_values[index]) / rank as f64;
        running = running.min(value);
        adjusted[index] = running.min(1.0);
    }
    adjusted
}

/// The step-up decisions at level `q`: which tests are discoveries (in the
/// order given), by [`adjust`]. O(m log m).
pub fn discoveries(p_values: &[f64], q: f64, method: FdrMethod) -> Vec<bool> {
    adjust(p_values, method)
        .into_iter()
        .map(|adjusted| adjusted <= q)
        .collect()
}

/// The confidence of the intervals shown for the rows of a family of `m`
/// tested at level `q` of which `selected` are discoveries: 1 − R·q/m
/// (Benjamini & Yekutieli 2005), R = max(selected, 1) so that with no
/// discovery the intervals are Bonferroni's 1 − q/m (none is selected, any
/// level keeps the false coverage rate). With BY's correction the level is
/// divided by c(m) as the tests are. A discovery's interval at this level
/// excludes 0 when the interval is dual to its test.
pub fn selected_confidence(q: f64, tested: usize, selected: usize, method: FdrMethod) -> f64 {
    if tested == 0 {
        return 1.0 - q;
    }
    let factor = match method {
        FdrMethod::BenjaminiHochberg => 1.0,
        FdrMethod::BenjaminiYekutieli => (1..=tested).map(|i| 1.0 / i as f64).sum(),
    };
    1.0 - selected.max(1) as f64 * q / (tested as f64 * factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 15 p-values of Benjamini & Hochberg (1995), §4.2 (a study of
    /// myocardial infarction treatments): at q = 0.05 the step-up procedure
    /// rejects the four smallest, where Bonferroni rejects three.
    const PAPER: [f64; 15] = [
        0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262,
        0.5719, 0.6528, 0.7590, 1.000,
    ];

    fn close(found: &[f64], expected: &[f64]) {
        assert_eq!(found.len(), expected.len());
        for (found, expected) in found.iter().zip(expected) {
            assert!((found - expected).abs() < 1e-12, "{found} vs {expected}");
        }
    }

    /// Reference: R's p.adjust(p, "BH") and p.adjust(p, "BY"), as computed
    /// by scipy 1.17.1's `stats.false_discovery_control(p, method=...)`
    /// (the same definitions), committed as numbers.
    #[test]
    fn matches_the_reference_adjusted_p_values() {
        close(
            &adjust(&PAPER, FdrMethod::BenjaminiHochberg),
            &[
                0.0015,
                0.003,
                0.0095,
                0.035625,
                0.0603,
                0.06385714285714286,
                0.06385714285714286,
                0.0645,
                0.07650000000000001,
                0.486,
                0.5811818181818181,
                0.7148749999999999,
                0.7532307692307693,
                0.8132142857142857,
                1.0,
            ],
        );
        close(
            &adjust(&PAPER, FdrMethod::BenjaminiYekutieli),
            &[
                0.004977343489843491,
                0.009954686979686982,
                0.03152317543567544,
                0.11821190788378289,
                0.20008920829170831,
                0.21189262285333718,
                0.21189262285333718,
                0.2140257700632701,
                0.25384451798201807,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
            ],
        );
        // Unsorted, with ties: the order given is kept.
        let unsorted = [0.04, 0.01, 0.03, 0.04, 0.2, 0.01, 0.5];
        close(
            &adjust(&unsorted, FdrMethod::BenjaminiHochberg),
            &[0.056, 0.035, 0.056, 0.056, 0.23333333333333336, 0.035, 0.5],
        );
        close(
            &adjust(&unsorted, FdrMethod::BenjaminiYekutieli),
            &[0.1452, 0.09075, 0.1452, 0.1452, 0.605, 0.09075, 1.0],
        );
    }

    #[test]
    fn the_papers_example_rejects_four_by_hand() {
        // By hand: the largest i with p(i) <= i·q/m is i = 4
        // (0.0095 <= 4·0.05/15 = 0.01333; 0.0201 > 5·0.05/15 = 0.01667).
        let decided = discoveries(&PAPER, 0.05, FdrMethod::BenjaminiHochberg);
        assert_eq!(decided.iter().filter(|&&found| found).count(), 4);
        assert!(decided[..4].iter().all(|&found| found));
        // 15/4 · 0.0095 = 0.035625: the fourth adjusted value.
        assert_eq!(
            adjust(&PAPER, FdrMethod::BenjaminiHochberg)[3],
            15.0 / 4.0 * 0.0095
        );
        // BY at 0.05: c(15) = 3.318...; only the three smallest.
        let strict = discoveries(&PAPER, 0.05, FdrMethod::BenjaminiYekutieli);
        assert_eq!(strict.iter().filter(|&&found| found).count(), 3);
    }

    #[test]
    fn edge_cases() {
        assert!(adjust(&[], FdrMethod::BenjaminiHochberg).is_empty());
        assert_eq!(adjust(&[0.3], FdrMethod::BenjaminiYekutieli), [0.3]);
        assert_eq!(
            adjust(&[f64::NAN, 0.01], FdrMethod::BenjaminiHochberg),
            [1.0, 0.02]
        );
        assert!(
            (selected_confidence(0.05, 200, 4, FdrMethod::BenjaminiHochberg) - 0.999).abs() < 1e-12
        );
        assert!(
            (selected_confidence(0.05, 200, 0, FdrMethod::BenjaminiHochberg) - 0.99975).abs()
                < 1e-12
        );
        assert_eq!(
            selected_confidence(0.05, 0, 0, FdrMethod::BenjaminiHochberg),
            0.95
        );
    }
}
