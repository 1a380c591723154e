//! The shift interval for samples with ties, by inverting the same
//! Mann–Whitney test whose p-value is reported (exact and tie-conditional
//! up to 25 per side, else the tie-corrected normal approximation), so
//! that the test and the interval cannot disagree; and the walk over the
//! points where a rank test can change ([`invert`]), shared with the
//! signed-rank inversion of `signed_rank.rs`.
//!
//! What it does: for two sorted, transformed samples (logs, or the values
//! themselves on the absolute scale) the interval is the set of shifts δ
//! for which the test of `baseline` against `candidate − δ`
//! (`crate::rank::mann_whitney`: Klotz 1966's exact conditional
//! distribution, or the normal approximation with the tie correction of
//! Hollander & Wolfe 1999, §4.1) does not
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
//! Must not: list more than [`PAIR_LIMIT`] differences or evaluate the
//! test more than [`EVALUATION_LIMIT`] times (it gives up instead and the
//! caller keeps the untied interval), or do I/O.
//! Complexity: O(m·n·log(m·n)) to list the differences plus, per test
//! evaluated, O(m·n) to shift and that of `mann_whitney` (the exact tied
//! distribution, O(G·m·(m+n)²), up to 25 per side); typically a few dozen
//! evaluations.

use crate::rank::mann_whitney;
use crate::shift::Interval;

/// Most pairs m·n whose differences this module lists (500 × 500).
pub(crate) const PAIR_LIMIT: usize = 250_000;

/// Most test evaluations before giving up.
pub(crate) const EVALUATION_LIMIT: usize = 2_000;

/// The points at which a rank test of a shift can change, over `values`
/// (the distinct candidate shifts, sorted): point 2i + 1 is `values[i]`
/// itself, point 2i the gap below it (2·count the gap above the last).
/// The point holding δ = 0 is evaluated at 0 itself, so the p-value there
/// is the reported test's.
pub(crate) struct Points<'a> {
    values: &'a [f64],
    /// The point holding δ = 0: the value 0 itself, or its gap.
    pub(crate) zero: usize,
}

impl<'a> Points<'a> {
    pub(crate) fn new(values: &'a [f64]) -> Self {
        let count = values.len();
        let below_zero = values.partition_point(|value| *value < 0.0);
        let zero = if below_zero < count && values[below_zero] == 0.0 {
            2 * below_zero + 1
        } else {
            2 * below_zero
        };
        Self { values, zero }
    }

    /// The last point (the gap above the largest value).
    pub(crate) fn last(&self) -> usize {
        2 * self.values.len()
    }

    /// Whether `point` is a value (not a gap).
    pub(crate) fn is_value(&self, point: usize) -> bool {
        point % 2 == 1
    }

    /// The odd point of the value nearest `value` at or above it.
    pub(crate) fn point_of(&self, value: f64) -> usize {
        let count = self.values.len();
        let index = self
            .values
            .binary_search_by(|probe| probe.total_cmp(&value))
            .unwrap_or_else(|index| index.min(count - 1));
        2 * index + 1
    }

    /// The shift a point is evaluated at: the value, a gap's midpoint, a
    /// point beyond the ends, or 0 at the zero point.
    pub(crate) fn shift(&self, point: usize) -> f64 {
        let (values, count, index) = (self.values, self.values.len(), point / 2);
        if point == self.zero {
            0.0
        } else if point % 2 == 1 {
            values[index]
        } else if index == 0 {
            values[0] - 1.0 - values[0].abs()
        } else if index == count {
            values[count - 1] + 1.0 + values[count - 1].abs()
        } else {
            values[index - 1] + (values[index] - values[index - 1]) / 2.0
        }
    }
}

/// The acceptance set of a rank test of a shift, walked over `points`
/// from `starts` (usually the untied interval's ends): `tested(point)`
/// gives (accepted, whether a larger shift is needed to reach
/// acceptance). Returns `None` when [`EVALUATION_LIMIT`] evaluations were
/// not enough, `Some(None)` when the set is empty or reaches either end
/// (the test accepts every shift beyond the data: too few values), else
/// the ends on the transformed scale, an accepted gap's end excluded by
/// the next floating-point number inside. Also `None` when no accepted
/// point lies near a start (the set is empty there: the test rejects every
/// shift, which a shift model that does not fit the data can do).
pub(crate) fn invert(
    points: &Points,
    starts: (usize, usize),
    tested: impl Fn(usize) -> (bool, bool),
) -> Option<Option<(f64, f64)>> {
    let last = points.last();
    // Each point is tested once; the walks stop at the limit.
    let verdicts: std::cell::RefCell<Vec<Option<(bool, bool)>>> =
        std::cell::RefCell::new(vec![None; last + 1]);
    let evaluations = std::cell::Cell::new(0usize);
    let tested = |point: usize| -> (bool, bool) {
        if let Some(known) = verdicts.borrow()[point] {
            return known;
        }
        evaluations.set(evaluations.get() + 1);
        let verdict = tested(point);
        verdicts.borrow_mut()[point] = Some(verdict);
        verdict
    };
    let accepted = |point: usize| tested(point).0;
    let exhausted = || evaluations.get() > EVALUATION_LIMIT;
    if points.values.is_empty() || accepted(0) || accepted(last) {
        return Some(None);
    }
    // An accepted point near `start`: walk towards acceptance (up while a
    // larger shift is needed, down otherwise); `None` when the direction
    // turns or the ends are reached without one.
    let find_accepted = |start: usize| -> Option<usize> {
        let mut point = start;
        let (_, first_up) = tested(point);
        loop {
            let (accept, up) = tested(point);
            if accept {
                return Some(point);
            }
            if up != first_up || exhausted() {
                return None;
            }
            point = if up {
                (point < last).then(|| point + 1)?
            } else {
                point.checked_sub(1)?
            };
        }
    };
    let (Some(low_seed), Some(high_seed)) = (find_accepted(starts.0), find_accepted(starts.1))
    else {
        return None;
    };
    let mut low_point = low_seed.min(high_seed);
    while low_point > 0 && !exhausted() && accepted(low_point - 1) {
        low_point -= 1;
    }
    let mut high_point = low_seed.max(high_seed);
    while high_point < last && !exhausted() && accepted(high_point + 1) {
        high_point += 1;
    }
    if exhausted() {
        return None;
    }
    if high_point < low_point || !accepted(low_point) {
        return Some(None);
    }
    let values = points.values;
    // An accepted gap's end is the value below (above) it, excluded.
    let low = if points.is_value(low_point) {
        values[low_point / 2]
    } else {
        next_up(values[low_point / 2 - 1])
    };
    let high = if points.is_value(high_point) {
        values[high_point / 2]
    } else {
        next_down(values[high_point / 2])
    };
    Some(Some((low, high)))
}

/// The 1 − `level` interval (on the transformed scale, mapped by `back`)
/// and the p-value at δ = 0, for sorted transformed samples with at most
/// [`PAIR_LIMIT`] pairs: shifts whose p-value is not below `level` (the
/// test rejects when p < level, as the report reads it). The interval is
/// `None` when the test accepts every shift (samples too small). Returns
/// `None` (gives up) beyond [`PAIR_LIMIT`] pairs or [`EVALUATION_LIMIT`]
/// evaluations.
pub(crate) fn tied_interval(
    baseline: &[f64],
    candidate: &[f64],
    level: f64,
    back: fn(f64) -> f64,
) -> Option<(Option<Interval>, f64)> {
    if baseline.len().saturating_mul(candidate.len()) > PAIR_LIMIT {
        return None;
    }
    let confidence = 1.0 - level;
    let mut differences: Vec<f64> = baseline
        .iter()
        .flat_map(|&base| candidate.iter().map(move |&value| value - base))
        .collect();
    differences.sort_unstable_by(f64::total_cmp);
    let with_multiplicity = differences.clone();
    differences.dedup();
    let points = Points::new(&differences);
    let test_at = |point: usize| -> crate::rank::RankTest {
        let shift = points.shift(point);
        let shifted: Vec<f64> = candidate
            .iter()
            .map(|&value| {
                if points.is_value(point) && point != points.zero {
                    // Land exactly on the baseline value this difference
                    // came from, so the tie the shift creates is a tie.
                    if let Some(&base) = baseline.iter().find(|&&base| value - base == shift) {
                        return base;
                    }
                }
                value - shift
            })
            .collect();
        mann_whitney(baseline, &shifted)
    };
    let half = (baseline.len() * candidate.len()) as f64 / 2.0;
    let p_value = test_at(points.zero).p_value;
    // Starting points: the untied interval's ends, else the extremes.
    let starts = match crate::shift::interval_rank(baseline.len(), candidate.len(), confidence) {
        Some((rank, _)) => {
            let pairs = with_multiplicity.len();
            (
                points.point_of(with_multiplicity[rank as usize - 1]),
                points.point_of(with_multiplicity[pairs - rank as usize]),
            )
        }
        None => (1, points.last().saturating_sub(1)),
    };
    // p-values are never NaN here; p ≥ level (not rejected) is acceptance;
    // a larger shift is needed while the shifted candidate is still above
    // the baseline.
    let ends = invert(&points, starts, |point| {
        let test = test_at(point);
        (test.p_value >= level, test.u < half)
    })?;
    Some((
        ends.map(|(low, high)| Interval {
            low: back(low),
            high: back(high),
            confidence,
        }),
        p_value,
    ))
}

/// Whether the pooled transformed samples hold equal values.
pub(crate) fn has_ties(baseline: &[f64], candidate: &[f64]) -> bool {
    let mut pooled: Vec<f64> = baseline.iter().chain(candidate).copied().collect();
    pooled.sort_unstable_by(f64::total_cmp);
    pooled.windows(2).any(|pair| pair[0] == pair[1])
}

/// The smallest f64 above a finite `value`.
pub(crate) fn next_up(value: f64) -> f64 {
    if value == 0.0 {
        f64::from_bits(1)
    } else if value > 0.0 {
        f64::from_bits(value.to_bits() + 1)
    } else {
        f64::from_bits(value.to_bits() - 1)
    }
}

/// The largest f64 below a finite `value`.
pub(crate) fn next_down(value: f64) -> f64 {
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
