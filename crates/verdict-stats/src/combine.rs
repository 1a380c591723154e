//! Combining one comparison's evidence across independent strata (hosts):
//! the weighted Z-method.
//!
//! Each host gives a one-sided p-value for "the candidate is worse than the
//! baseline" from its own within-host test; the combined statistic is
//! Z = Σ wᵢ·Φ⁻¹(1 − pᵢ) / √(Σ wᵢ²) with wᵢ = √nᵢ, and the combined p is
//! 1 − Φ(Z). Samples are never pooled across hosts, so a host that is
//! faster overall cannot mask or fake a change on another.
//!
//! Sources: Stouffer, Suchman, DeVinney, Star & Williams (1949), *The
//! American Soldier* Vol. 1 (the unweighted Z-method); Lipták (1958), Publ.
//! Math. Inst. Hungar. Acad. Sci. 3:171 (weights); Whitlock (2005), J. Evol.
//! Biol. 18:1368 (weighted Z preferred to Fisher's method, √n weights);
//! Zaykin (2011), J. Evol. Biol. 24:1836 (√n as the optimal weights for
//! equal effect sizes). The one-sided p from a two-sided rank test halves it
//! on the observed side, valid because the Mann–Whitney null distribution is
//! symmetric (Hollander & Wolfe 1999, §4.1).
//!
//! Pure: no I/O.

use crate::plan::{normal_cdf, normal_quantile};

/// One host's evidence: its one-sided p-value and its weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stratum {
    /// P(at least this much worsening | no change), in (0, 1].
    pub one_sided_p: f64,
    /// Weight, usually √(n_baseline + n_candidate).
    pub weight: f64,
}

/// The one-sided p-value for "worse" from a two-sided p-value and the side
/// the estimate fell on (`worse` = the candidate looked worse).
pub fn one_sided(two_sided_p: f64, worse: bool) -> f64 {
    let half = (two_sided_p / 2.0).clamp(0.0, 0.5);
    if worse { half } else { 1.0 - half }
}

/// Weighted Z-method: the combined one-sided p-value; 1 when there is no
/// stratum with positive weight.
pub fn weighted_z(strata: &[Stratum]) -> f64 {
    // Keep p away from 0 and 1 so a degenerate stratum (p = 0) gives a large
    // finite Z rather than an infinity that swamps the others.
    const FLOOR: f64 = 1e-15;
    let mut numerator = 0.0;
    let mut squares = 0.0;
    for stratum in strata.iter().filter(|stratum| stratum.weight > 0.0) {
        let p = stratum.one_sided_p.clamp(FLOOR, 1.0 - FLOOR);
        numerator += stratum.weight * normal_quantile(1.0 - p);
        squares += stratum.weight * stratum.weight;
    }
    if squares == 0.0 {
        return 1.0;
    }
    1.0 - normal_cdf(numerator / squares.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn one_sided_halves_on_the_observed_side() {
        assert!(close(one_sided(0.04, true), 0.02));
        assert!(close(one_sided(0.04, false), 0.98));
        assert!(close(one_sided(1.0, true), 0.5));
    }

    #[test]
    fn equal_weights_match_stouffers_formula() {
        // Two strata at p = 0.05: Z = 2 · 1.6449 / √2 = 2.3262, p = 0.01.
        let strata = [
            Stratum {
                one_sided_p: 0.05,
                weight: 1.0,
            },
            Stratum {
                one_sided_p: 0.05,
                weight: 1.0,
            },
        ];
        assert!((weighted_z(&strata) - 0.010_003).abs() < 1e-5);
        // One stratum is itself.
        assert!(close(weighted_z(&strata[..1]), 0.05));
    }

    #[test]
    fn opposite_evidence_cancels_and_weights_count() {
        let even = [
            Stratum {
                one_sided_p: 0.01,
                weight: 1.0,
            },
            Stratum {
                one_sided_p: 0.99,
                weight: 1.0,
            },
        ];
        assert!(close(weighted_z(&even), 0.5));
        let heavy = [
            Stratum {
                one_sided_p: 0.01,
                weight: 3.0,
            },
            Stratum {
                one_sided_p: 0.99,
                weight: 1.0,
            },
        ];
        // Z = (3 − 1) · 2.3263 / √10 = 1.4713: p = 0.0706.
        assert!((weighted_z(&heavy) - 0.070_6).abs() < 1e-3);
        assert_eq!(weighted_z(&[]), 1.0);
        let certain = [Stratum {
            one_sided_p: 0.0,
            weight: 1.0,
        }];
        assert!(weighted_z(&certain) < 1e-10);
    }
}
