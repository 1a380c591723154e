//! Hodges–Lehmann relative shift on log values with its distribution-free
//! (Moses / Bauer 1972) interval. Being written by the stats-core engineer;
//! the signatures below are the agreed contract.

/// A two-sided interval with the confidence it actually achieves
/// (order-statistic intervals have discrete coverage).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    /// Achieved coverage, e.g. 0.9785 for the n=10 median interval.
    pub confidence: f64,
}

/// Relative shift of candidate against baseline: `C/B - 1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shift {
    /// Hodges–Lehmann point estimate, as a relative change (e.g. -0.186).
    pub estimate: f64,
    /// Distribution-free interval at the requested confidence, relative;
    /// `None` when the samples are too small for that confidence.
    pub interval: Option<Interval>,
}

/// Hodges–Lehmann estimate of `C/B - 1` from `exp(median(log c_j - log b_i))`
/// with the interval whose ends are order statistics of the pairwise log
/// differences, dual to the two-sided Mann–Whitney test at `1 - confidence`.
/// Returns `None` when either side is empty or holds a value <= 0.
pub fn relative_shift(baseline: &[f64], candidate: &[f64], confidence: f64) -> Option<Shift> {
    let _ = (baseline, candidate, confidence);
    unimplemented!("being written by the stats-core engineer")
}
