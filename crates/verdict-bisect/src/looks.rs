//! Look schedules for the sequential decisions: the cumulative run counts at
//! which a commit (or the endpoint pair) is evaluated.
//!
//! The error budget of a decision is split equally over every look it could
//! ever make (Bonferroni over looks), so the schedule is fixed before any
//! data is seen and the error rate holds at whichever look stops. Looks are
//! spaced geometrically (ratio 1.25) so that the number of looks, and with
//! it the per-look penalty, grows only logarithmically with the run cap.
//! Must not: depend on sample values (that would void the error bound).

/// Geometric spacing of looks: each look is ≥ 25% more runs than the last.
const GROWTH: f64 = 1.25;

/// Looks from `first` up to `last` inclusive, spaced by `GROWTH`, always
/// including every value in `required` (round limits) and `last` itself.
/// O(k log k) for k looks.
pub(crate) fn schedule(first: usize, last: usize, required: &[usize]) -> Vec<usize> {
    let first = first.max(1);
    let mut looks = Vec::new();
    let mut current = first;
    while current < last {
        looks.push(current);
        current = ((current as f64 * GROWTH).ceil() as usize).max(current + 1);
    }
    looks.push(last.max(first));
    looks.extend(
        required
            .iter()
            .copied()
            .filter(|&value| value >= first && value <= last),
    );
    looks.sort_unstable();
    looks.dedup();
    looks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_is_increasing_and_contains_round_limits() {
        let looks = schedule(4, 80, &[40, 80]);
        assert_eq!(looks.first(), Some(&4));
        assert_eq!(looks.last(), Some(&80));
        assert!(looks.contains(&40));
        assert!(looks.windows(2).all(|pair| pair[0] < pair[1]));
        // Geometric: about log(80/4)/log(1.25) ≈ 13.4 looks plus limits.
        assert!(looks.len() <= 17, "{looks:?}");
        assert_eq!(schedule(20, 20, &[]), vec![20]);
    }
}
