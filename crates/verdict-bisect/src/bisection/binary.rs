//! The binary search of the `bonferroni` and `group-sequential` designs and
//! of the fixed-runs mode: the commit to measure next (the one in progress,
//! else the middle of the open range, else an undecided commit due for a
//! retest, else a monotonicity probe) and the retest rounds, each with a
//! new window of concurrent endpoint runs.
//! Must not: do I/O, or use randomness.

use super::{Class, Core};

/// A commit's retest round in the binary-search designs.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Round {
    /// Retest round (0 = first).
    pub(crate) round: usize,
    /// Index in `samples` where the current measurement round began.
    pub(crate) round_start: usize,
    /// Clock value at which the current round's window began: endpoint
    /// samples at or after it are concurrent with this commit's round.
    pub(crate) window_start: usize,
    /// The commit's completed blocks when the current round began (the
    /// blocked designs; 0 otherwise).
    pub(crate) round_block_start: usize,
}

/// A design that classifies commits one at a time along the binary
/// search (`bonferroni`, fixed-runs).
pub(crate) trait Stepwise {
    /// The commit in progress, if any.
    fn target(&self, core: &Core) -> Option<usize>;
    /// Classifies `position` if its evidence is complete.
    fn evaluate(&mut self, core: &mut Core, position: usize);
}

/// Runs of `position` were added: a candidate's own runs may classify it,
/// and endpoint runs (or the candidate's) may complete the concurrent
/// evidence of the commit in progress.
pub(crate) fn samples_added(design: &mut impl Stepwise, core: &mut Core, position: usize) {
    if position != 0 && position != core.last() {
        design.evaluate(core, position);
    }
    if let Some(target) = design.target(core)
        && target != position
    {
        design.evaluate(core, target);
    }
}

/// Before runs of `position` are added: a commit first measured once the
/// search range excludes it is a monotonicity probe; an undecided
/// candidate measured again starts a retest round (true is returned), and
/// a candidate's first runs start its window. `blocks`: its completed
/// blocks, if the design counts them.
pub(crate) fn before_samples(
    core: &mut Core,
    rounds: &mut [Round],
    position: usize,
    (low, high): (usize, usize),
    blocks: usize,
) -> bool {
    let is_endpoint = position == 0 || position == core.last();
    let (retests, settled_at) = (core.config.retests, core.settled_at);
    let state = &mut core.commits[position];
    let round = &mut rounds[position];
    if state.samples.is_empty()
        && core.comparison.is_some()
        && (position <= low || position >= high)
    {
        state.probe = true;
    }
    if is_endpoint {
        return false;
    }
    if state.class == Some(Class::Undecided) && round.round < retests {
        // A retest: a new round with a new window.
        round.round += 1;
        state.class = None;
        round.round_start = state.samples.len();
        round.round_block_start = blocks;
        round.window_start = settled_at;
        return true;
    }
    if state.samples.is_empty() {
        round.window_start = settled_at;
    }
    false
}

/// The commit to measure next within `(low, high)`, the bounds, if any.
pub(crate) fn target(core: &Core, rounds: &[Round], (low, high): (usize, usize)) -> Option<usize> {
    let middle = (low + high) / 2;
    let nearest = |predicate: &dyn Fn(usize) -> bool, range: std::ops::Range<usize>| {
        range
            .filter(|&position| predicate(position))
            .min_by_key(|&position| (position.abs_diff(middle), position))
    };
    let class = |position: usize| core.commits[position].class;
    let inside = low + 1..high;
    // A commit already being measured is finished first (its runs would
    // otherwise be wasted, and a resumed bisection continues it).
    nearest(
        &|position| class(position).is_none() && !core.commits[position].samples.is_empty(),
        inside.clone(),
    )
    .or_else(|| nearest(&|position| class(position).is_none(), inside.clone()))
    .or_else(|| {
        nearest(
            &|position| {
                class(position) == Some(Class::Undecided)
                    && rounds[position].round < core.config.retests
            },
            inside.clone(),
        )
    })
    .or_else(|| probe_target(core, low, high))
}

/// Monotonicity probes: the middle of the widest unmeasured gap on each
/// settled side, until `probes` commits were probed on that side.
fn probe_target(core: &Core, low: usize, high: usize) -> Option<usize> {
    if core.config.probes == 0 {
        return None;
    }
    let in_progress = (0..core.order.len())
        .find(|&position| core.commits[position].probe && core.commits[position].class.is_none());
    if in_progress.is_some() {
        return in_progress;
    }
    for side in [0..low + 1, high..core.order.len()] {
        let probed = side
            .clone()
            .filter(|&position| core.commits[position].probe)
            .count();
        if probed >= core.config.probes {
            continue;
        }
        let settled: Vec<usize> = side
            .clone()
            .filter(|&position| {
                position == side.start
                    || position == side.end - 1
                    || core.commits[position].class.is_some()
            })
            .collect();
        let widest = settled
            .windows(2)
            .filter(|pair| pair[1] - pair[0] >= 2)
            .max_by_key(|pair| (pair[1] - pair[0], std::cmp::Reverse(pair[0])));
        if let Some(pair) = widest {
            return Some((pair[0] + pair[1]) / 2);
        }
    }
    None
}
