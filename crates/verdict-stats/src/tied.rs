//! The shift interval for small samples with ties, by inverting the same
//! exact tie-conditional Mann–Whitney test whose p-value is reported, so
//! that the test and the interval cannot disagree.
//!
//! What it does: for two sorted, transformed samples (logs, or the values
//! themselves on the absolute scale) the interval is the set of shifts δ
//! for which the exact conditional test of `baseline` against
//! `candidate − δ` (`crate::rank::mann_whitney`, Klotz 1966) does not
//! reject at level 1 − confidence: the confidence set of a test is the
//! set of parameter values it accepts (Lehmann & Romano, *Testing
//! Statistical Hypotheses*, 3rd ed., §3.5; for the two-sample shift with
//! ties, Hollander & Wolfe, *Nonparametric Statistical Methods*, 2nd ed.,
//! §4.3, comment on ties). The test's p-value at δ = 0 is returned with it,
//! so "p < α" holds exactly when 0 lies outside the 1 − α interval.
//!
//! Method: the test statistic and its tie pattern change only where δ
//! equals a pairwise difference c_j − b_i, so the acceptance set is decided
//! by evaluating the test at each distinct difference and at one point in
//! each gap between them. The ends are found by walking from the ends of
//! the untied Moses/Bauer interval (Bauer 1972), which they are usually a
//! few differences away from. An end whose own difference is rejected but
//! whose neighbouring gap is accepted is open; it is reported as the next
//! floating-point number inside, so it excludes the rejected shift (which
//! matters when that shift is 0).
//!
//! Must not: be used beyond the exact limit with ties (25 per side, where
//! `mann_whitney` switches to its normal approximation), or do I/O.
//! Complexity: O(m·n·log(m·n)) to list the differences plus, per test
//! evaluated, that of the exact tied distribution (O(G·m·(m+n)²));
//! typically a few dozen evaluations.

use crate::rank::mann_whitney;
use crate::shift::Interval;

/// Largest per-side size this module handles: `mann_whitney`'s exact limit
/// with ties.
pub(crate) const LIMIT: usize = crate::rank::EXACT_LIMIT_WITH_TIES;

/// The 1 − `level` interval (on the transformed scale, mapped by `back`)
/// and the p-value at δ = 0, for sorted transformed samples of at most
/// [`LIMIT`] values each: shifts whose p-value is not below `level` (the
/// test rejects when p < level, as the report reads it). The interval is
/// `None` when the test accepts every shift (samples too small).
pub(crate) fn tied_interval(
    baseline: &[f64],
    candidate: &[f64],
    level: f64,
    back: fn(f64) -> f64,
) -> (Option<Interval>, f64) {
    let confidence = 1.0 - level;
    let mut differences: Vec<f64> = baseline
        .iter()
        .flat_map(|&base| candidate.iter().map(move |&value| value - base))
        .collect();
    differences.sort_unstable_by(f64::total_cmp);
    let with_multiplicity = differences.clone();
    differences.dedup();
    let count = differences.len();
    // Points 0..=2·count: even 2i is the gap below differences[i] (2·count
    // the gap above the last), odd 2i+1 is differences[i] itself.
    // The point holding δ = 0: the difference 0 itself, or its gap (whose
    // representative is then 0 itself, so the p-value there is the test's).
    let below_zero = differences.partition_point(|value| *value < 0.0);
    let zero = if below_zero < count && differences[below_zero] == 0.0 {
        2 * below_zero + 1
    } else {
        2 * below_zero
    };
    let shift_at = |point: usize| -> f64 {
        let index = point / 2;
        if point == zero {
            0.0
        } else if point % 2 == 1 {
            differences[index]
        } else if index == 0 {
            differences[0] - 1.0 - differences[0].abs()
        } else if index == count {
            differences[count - 1] + 1.0 + differences[count - 1].abs()
        } else {
            differences[index - 1] + (differences[index] - differences[index - 1]) / 2.0
        }
    };
    let p_value_at = |point: usize| -> f64 {
        let shift = shift_at(point);
        let shifted: Vec<f64> = candidate
            .iter()
            .map(|&value| {
                if point % 2 == 1 && point != zero {
                    // Land exactly on the baseline value this difference
                    // came from, so the tie the shift creates is a tie.
                    if let Some(&base) = baseline.iter().find(|&&base| value - base == shift) {
                        return base;
                    }
                }
                value - shift
            })
            .collect();
        mann_whitney(baseline, &shifted).p_value
    };
    let accepted = |point: usize| !(p_value_at(point) < level);
    let p_value = p_value_at(zero);
    let last = 2 * count;
    if count == 0 || accepted(0) || accepted(last) {
        return (None, p_value);
    }
    // Starting points: the untied interval's ends, else the extremes.
    let (start_low, start_high) =
        match crate::shift::interval_rank(baseline.len(), candidate.len(), confidence) {
            Some((rank, _)) => {
                let point_of = |value: f64| {
                    let index = differences
                        .binary_search_by(|probe| probe.total_cmp(&value))
                        .unwrap_or_else(|index| index.min(count - 1));
                    2 * index + 1
                };
                let pairs = with_multiplicity.len();
                (
                    point_of(with_multiplicity[rank as usize - 1]),
                    point_of(with_multiplicity[pairs - rank as usize]),
                )
            }
            None => (1, last - 1),
        };
    // Lowest accepted point: walk down while accepted, else up until accepted.
    let low_point = if accepted(start_low) {
        let mut point = start_low;
        while point > 0 && accepted(point - 1) {
            point -= 1;
        }
        point
    } else {
        let mut point = start_low;
        while point < last && !accepted(point) {
            point += 1;
        }
        point
    };
    let high_point = if accepted(start_high) {
        let mut point = start_high;
        while point < last && accepted(point + 1) {
            point += 1;
        }
        point
    } else {
        let mut point = start_high;
        while point > 0 && !accepted(point) {
            point -= 1;
        }
        point
    };
    if high_point < low_point || !accepted(low_point) {
        return (None, p_value);
    }
    // An accepted gap's end is the difference below (above) it, excluded.
    let low = if low_point % 2 == 1 {
        differences[low_point / 2]
    } else {
        next_up(differences[low_point / 2 - 1])
    };
    let high = if high_point % 2 == 1 {
        differences[high_point / 2]
    } else {
        next_down(differences[high_point / 2])
    };
    (
        Some(Interval {
            low: back(low),
            high: back(high),
            confidence,
        }),
        p_value,
    )
}

/// Whether the pooled transformed samples hold equal values.
pub(crate) fn has_ties(baseline: &[f64], candidate: &[f64]) -> bool {
    let mut pooled: Vec<f64> = baseline.iter().chain(candidate).copied().collect();
    pooled.sort_unstable_by(f64::total_cmp);
    pooled.windows(2).any(|pair| pair[0] == pair[1])
}

/// The smallest f64 above a finite `value`.
fn next_up(value: f64) -> f64 {
    if value == 0.0 {
        f64::from_bits(1)
    } else if value > 0.0 {
        f64::from_bits(value.to_bits() + 1)
    } else {
        f64::from_bits(value.to_bits() - 1)
    }
}

/// The largest f64 below a finite `value`.
fn next_down(value: f64) -> f64 {
    -next_up(-value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_float_steps() {
        assert!(next_up(0.0) > 0.0);
        assert!(next_down(0.0) < 0.0);
        assert!(next_up(1.0) > 1.0 && next_up(1.0) - 1.0 < 1e-15);
        assert!(next_up(-1.0) > -1.0);
        assert!(next_down(2.0) < 2.0);
    }
}
