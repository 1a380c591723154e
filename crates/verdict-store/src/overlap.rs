//! Which stored runs measured at the same time on the same host, and so
//! disturbed each other, from the times the store recorded (`RunTimes`).
//! Pure: no SQL, no clock, no printing.

use std::collections::{BTreeSet, HashMap};

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
pub fn active_periods(
    times: &RunTimes,
    iterations: &[(i64, i64)],
    idle_gap_ms: i64,
) -> Vec<(i64, i64)> {
    let mut events: Vec<(i64, i64)> = iterations.to_vec();
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

/// From the first to the last moment a run could have been busy.
fn outer_span(times: &RunTimes) -> (i64, i64) {
    let start = times
        .first_iteration_ms
        .map_or(times.started_at_ms, |first| first.min(times.started_at_ms));
    let end = [times.finished_at_ms, times.last_iteration_end_ms]
        .into_iter()
        .flatten()
        .fold(times.started_at_ms, i64::max);
    (start, end)
}

/// Every pair of runs on the same host whose active periods intersect
/// (touching ends do not count), by run ids. `iterations` gives a run's
/// iteration spans (`Store::iteration_spans`); it is asked only for runs
/// whose outer spans (`RunTimes`) intersect another run's on its host, so
/// a large database costs one aggregate query plus the few runs that may
/// overlap.
pub fn overlaps<E>(
    runs: &[RunTimes],
    idle_gap_ms: i64,
    mut iterations: impl FnMut(RunId) -> Result<Vec<(i64, i64)>, E>,
) -> Result<Vec<Overlap>, E> {
    let spans: Vec<(i64, i64)> = runs.iter().map(outer_span).collect();
    let mut periods: HashMap<RunId, Vec<(i64, i64)>> = HashMap::new();
    let mut found = Vec::new();
    for (left, left_run) in runs.iter().enumerate() {
        for (right, right_run) in runs.iter().enumerate().skip(left + 1) {
            let (left_span, right_span) = (spans[left], spans[right]);
            if left_run.host != right_run.host
                || left_span.0.max(right_span.0) >= left_span.1.min(right_span.1)
            {
                continue;
            }
            for run in [left_run, right_run] {
                if let std::collections::hash_map::Entry::Vacant(entry) = periods.entry(run.run) {
                    let spans = iterations(run.run)?;
                    entry.insert(active_periods(run, &spans, idle_gap_ms));
                }
            }
            let mut span: Option<(i64, i64)> = None;
            let mut total = 0_i64;
            for &(left_start, left_end) in &periods[&left_run.run] {
                for &(right_start, right_end) in &periods[&right_run.run] {
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
    Ok(found)
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
    use std::collections::BTreeMap;

    /// Runs with their iterations, as the store would give them.
    struct Fixture {
        times: Vec<RunTimes>,
        iterations: BTreeMap<RunId, Vec<(i64, i64)>>,
    }

    impl Fixture {
        fn new() -> Fixture {
            Fixture {
                times: Vec::new(),
                iterations: BTreeMap::new(),
            }
        }

        fn run(
            mut self,
            run: i64,
            host: &str,
            iterations: &[(i64, i64)],
            finished: Option<i64>,
        ) -> Self {
            self.times.push(RunTimes {
                run: RunId(run),
                host: host.to_string(),
                started_at_ms: iterations.first().map_or(0, |first| first.0),
                finished_at_ms: finished,
                first_iteration_ms: iterations.iter().map(|span| span.0).min(),
                last_iteration_end_ms: iterations.iter().map(|span| span.1).max(),
            });
            self.iterations.insert(RunId(run), iterations.to_vec());
            self
        }

        /// The overlaps, and which runs' iterations were asked for.
        fn overlaps(&self) -> (Vec<Overlap>, Vec<RunId>) {
            let mut asked = Vec::new();
            let found = overlaps(&self.times, IDLE_GAP_MS, |run| {
                asked.push(run);
                Ok::<_, ()>(self.iterations[&run].clone())
            })
            .unwrap();
            asked.sort();
            (found, asked)
        }
    }

    #[test]
    fn a_long_pause_splits_a_run_and_a_short_one_does_not() {
        let fixture = Fixture::new().run(1, "h", &[(0, 10), (20, 30), (200_000, 200_010)], None);
        assert_eq!(
            active_periods(&fixture.times[0], &fixture.iterations[&RunId(1)], 60_000),
            vec![(0, 30), (200_000, 200_010)]
        );
    }

    #[test]
    fn runs_that_interleave_on_one_host_overlap() {
        let fixture = Fixture::new()
            .run(1, "h", &[(0, 10), (20, 30), (40, 50)], Some(50))
            .run(2, "h", &[(25, 35), (45, 60)], Some(60));
        let (found, _) = fixture.overlaps();
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].first, found[0].second), (RunId(1), RunId(2)));
        assert_eq!(
            (found[0].from_ms, found[0].to_ms, found[0].overlap_ms),
            (25, 50, 25)
        );
    }

    #[test]
    fn back_to_back_runs_other_hosts_and_a_run_resumed_later_do_not_overlap() {
        let fixture = Fixture::new()
            .run(1, "h", &[(0, 100)], Some(100))
            .run(2, "h", &[(100, 200)], Some(200))
            .run(3, "other", &[(0, 200)], Some(200))
            // Interrupted at 10 s, resumed 10 minutes later, after run 5 ran.
            .run(4, "h", &[(300, 10_000), (700_000, 710_000)], Some(710_000))
            .run(5, "h", &[(100_000, 200_000)], Some(200_000));
        let (found, asked) = fixture.overlaps();
        assert!(found.is_empty(), "{found:?}");
        // Only runs 4 and 5 have intersecting outer spans on one host.
        assert_eq!(asked, [RunId(4), RunId(5)]);
    }
}
