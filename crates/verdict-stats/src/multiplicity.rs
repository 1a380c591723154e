//! Multiple comparisons in one report: Holm–Bonferroni adjusted p-values and
//! the Bonferroni confidence level for intervals.
//!
//! Must not: decide which comparisons form a family (the report does), or
//! do I/O.

/// Holm–Bonferroni adjusted p-values, in the input order: sort ascending,
/// p̃₍ᵢ₎ = max_{j ≤ i} min(1, (k − j + 1)·p₍ⱼ₎). Rejecting p̃ < α controls the
/// family-wise error rate at α under any dependence. NaN inputs stay NaN
/// and count towards k.
///
/// Source: Holm (1979), Scand. J. Statist. 6:65; adjusted form per Wright
/// (1992), Biometrics 48:1005. Complexity O(k log k).
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let family = p_values.len();
    let mut order: Vec<usize> = (0..family).collect();
    order.sort_by(|&left, &right| p_values[left].total_cmp(&p_values[right]));
    let mut adjusted = vec![f64::NAN; family];
    let mut running_max = 0.0f64;
    for (position, &index) in order.iter().enumerate() {
        let p = p_values[index];
        if p.is_nan() {
            continue;
        }
        let scaled = ((family - position) as f64 * p).min(1.0);
        running_max = running_max.max(scaled);
        adjusted[index] = running_max;
    }
    adjusted
}

/// Confidence level 1 − α/k for each of k simultaneous intervals
/// (Bonferroni); 1 − α when k ≤ 1.
///
/// Source: Bonferroni inequality (e.g. Miller, *Simultaneous Statistical
/// Inference*, 1981, §1.5). Complexity O(1).
pub fn bonferroni_confidence(alpha: f64, family_size: usize) -> f64 {
    1.0 - alpha / family_size.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holm_matches_hand_computation() {
        // Sorted: 0.01·4 = 0.04, 0.02·3 = 0.06, 0.03·2 = 0.06, 0.5·1 = 0.5.
        let adjusted = holm(&[0.03, 0.5, 0.01, 0.02]);
        let expected = [0.06, 0.5, 0.04, 0.06];
        for (got, want) in adjusted.iter().zip(expected) {
            assert!((got - want).abs() < 1e-15, "{adjusted:?}");
        }
        assert_eq!(holm(&[0.7, 0.9]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn bonferroni_level() {
        assert_eq!(bonferroni_confidence(0.05, 1), 0.95);
        assert!((bonferroni_confidence(0.05, 5) - 0.99).abs() < 1e-15);
    }
}
