//! Which stored runs measured at the same time on the same host, and so
//! disturbed each other, from the times the store recorded (`RunTimes`).
//! Pure: no SQL, no clock, no printing.

use std::collections::BTreeSet;

use verdict_model::RunId;

use crate::store::RunTimes;

/// A pause longer than this between two iterations of a run (an
/// interruption before `--resume`, say) splits the run into separate active
/// periods; shorter pauses (setup, teardown, cooldown) count as the run
/// being busy.
pub const IDLE_GAP_MS: i64 = 60_000;

/// Two runs on one host that were active at the same time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlap {
    /// The lower run id.
    pub first: RunId,
    pub second: RunId,
    pub host: String,
    /// Start of the first and end of the last moment both were active
    /// (milliseconds since the epoch).
    pub from_ms: i64,
    pub to_ms: i64,
    /// How long both were active at once, in milliseconds.
    pub overlap_ms: i64,
}

/// The periods a run was busy: its recorded start, every iteration and its
/// recorded end, merged wherever less than `idle_gap_ms` separates them.
pub fn active_periods(times: &RunTimes, idle_gap_ms: i64) -> Vec<(i64, i64)> {
    let mut events: Vec<(i64, i64)> = times.iterations.clone();
    events.push((times.started_at_ms, times.started_at_ms));
    if let Some(finished) = times.finished_at_ms {
        events.push((finished, finished));
    }
    events.sort_unstable();
    let mut periods: Vec<(i64, i64)> = Vec::new();
    for (start, end) in events {
        match periods.last_mut() {
            Some(last) if start <= last.1.saturating_add(idle_gap_ms) => last.1 = last.1.max(end),
            _ => periods.push((start, end)),
        }
    }
    periods
}

/// Every pair of runs on the same host whose active periods intersect
/// (touching ends do not count), by run ids.
pub fn overlaps(runs: &[RunTimes], idle_gap_ms: i64) -> Vec<Overlap> {
    let periods: Vec<Vec<(i64, i64)>> = runs
        .iter()
        .map(|run| active_periods(run, idle_gap_ms))
        .collect();
    let mut found = Vec::new();
    for (left, left_run) in runs.iter().enumerate() {
        for (right, right_run) in runs.iter().enumerate().skip(left + 1) {
            if left_run.host != right_run.host {
                continue;
            }
            let mut span: Option<(i64, i64)> = None;
            let mut total = 0_i64;
            for &(left_start, left_end) in &periods[left] {
                for &(right_start, right_end) in &periods[right] {
                    let (start, end) = (left_start.max(right_start), left_end.min(right_end));
                    if start < end {
                        total += end - start;
                        span = Some(match span {
                            Some((from, to)) => (from.min(start), to.max(end)),
                            None => (start, end),
                        });
                    }
                }
            }
            if let Some((from_ms, to_ms)) = span {
                let (first, second) = if left_run.run <= right_run.run {
                    (left_run.run, right_run.run)
                } else {
                    (right_run.run, left_run.run)
                };
                found.push(Overlap {
                    first,
                    second,
                    host: left_run.host.clone(),
                    from_ms,
                    to_ms,
                    overlap_ms: total,
                });
            }
        }
    }
    found.sort_by_key(|overlap| (overlap.first, overlap.second));
    found
}

/// The overlaps that involve any of `runs`.
pub fn overlaps_involving(overlaps: &[Overlap], runs: &BTreeSet<RunId>) -> Vec<Overlap> {
    overlaps
        .iter()
        .filter(|overlap| runs.contains(&overlap.first) || runs.contains(&overlap.second))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(run: i64, host: &str, iterations: &[(i64, i64)], finished: Option<i64>) -> RunTimes {
        RunTimes {
            run: RunId(run),
            host: host.to_string(),
            started_at_ms: iterations.first().map_or(0, |first| first.0),
            finished_at_ms: finished,
            iterations: iterations.to_vec(),
        }
    }

    #[test]
    fn a_long_pause_splits_a_run_and_a_short_one_does_not() {
        let run = times(1, "h", &[(0, 10), (20, 30), (200_000, 200_010)], None);
        assert_eq!(
            active_periods(&run, 60_000),
            vec![(0, 30), (200_000, 200_010)]
        );
    }

    #[test]
    fn runs_that_interleave_on_one_host_overlap() {
        let one = times(1, "h", &[(0, 10), (20, 30), (40, 50)], Some(50));
        let two = times(2, "h", &[(25, 35), (45, 60)], Some(60));
        let found = overlaps(&[one, two], 60_000);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].first, found[0].second), (RunId(1), RunId(2)));
        assert_eq!(
            (found[0].from_ms, found[0].to_ms, found[0].overlap_ms),
            (25, 50, 25)
        );
    }

    #[test]
    fn back_to_back_runs_other_hosts_and_a_run_resumed_later_do_not_overlap() {
        let one = times(1, "h", &[(0, 100)], Some(100));
        let two = times(2, "h", &[(100, 200)], Some(200));
        let elsewhere = times(3, "other", &[(0, 200)], Some(200));
        // Interrupted at 10 s, resumed 10 minutes later, after run 5 ran.
        let resumed = times(4, "h", &[(300, 10_000), (700_000, 710_000)], Some(710_000));
        let between = times(5, "h", &[(100_000, 200_000)], Some(200_000));
        assert!(overlaps(&[one, two, elsewhere, resumed, between], 60_000).is_empty());
    }
}
