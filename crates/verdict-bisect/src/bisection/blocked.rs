//! The block machinery the `group-sequential` and `search-confirm` designs
//! share: a candidate's blocks (G, X, B; or X against one endpoint once its
//! side is clear), its block differences against each endpoint, and the
//! group-sequential looks of its two one-sided tests. Each design says,
//! through `BlockDesign`, which commit is measured, when a test is
//! exhausted and what else happens around a block.
//! Must not: do I/O, or use randomness.

use serde::{Deserialize, Serialize};
use verdict_stats::shift::Shift;

use crate::blocks::{BlockTest, block_differences, sign_shift};
use crate::design::{CandidateDesign, candidate_design};

use super::designs::{Design, EndpointTest};
use super::stored::StoredBisection;
use super::{
    Action, Class, Config, Core, Decision, Direction, INTERMEDIATE_HIGH, INTERMEDIATE_LOW, median,
};

/// Blocks against both endpoints before a candidate is measured against
/// one only.
const BOTH_BLOCKS: usize = 1;

/// Posterior log odds (`side_log_odds`) of a candidate's side beyond which
/// it is measured against the other endpoint only: ln 2, p = 2/3 (see
/// `against`).
const SIDE_LOG_ODDS: f64 = std::f64::consts::LN_2;

/// A block in progress: `max_batch` runs of each commit in `turns`, in
/// that order, back to back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct OpenBlock {
    pub(crate) candidate: usize,
    pub(crate) turns: Vec<usize>,
    pub(crate) values: Vec<Vec<f64>>,
}

/// One commit's blocks.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct BlockState {
    /// Block differences against G (ln X − ln G, block means), over every
    /// round.
    pub(crate) versus_good: Vec<f64>,
    /// Likewise against B.
    pub(crate) versus_bad: Vec<f64>,
    /// Looks of the strict design reached by each comparison.
    pub(crate) good_looks_done: usize,
    pub(crate) bad_looks_done: usize,
    /// Completed blocks of this commit, over every round.
    pub(crate) blocks: usize,
    /// One test rejected while X sat 25%–75% of the way between the
    /// endpoints; the other comparison is measured up to as many blocks
    /// before the call, to tell a partial change.
    pub(crate) holding: bool,
}

/// The blocked designs' shared state.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Blocked {
    /// The endpoints' looks and levels.
    pub(crate) endpoint_design: CandidateDesign,
    pub(crate) commits: Vec<BlockState>,
    /// The block being measured.
    pub(crate) open_block: Option<OpenBlock>,
    /// Share of the endpoints' block differences beyond half their shift
    /// (towards B) when they were told apart, clamped to [0.55, 0.95]
    /// (`side_log_odds`).
    pub(crate) side_agreement: Option<f64>,
    /// The test run on candidates' block differences, chosen from the
    /// endpoints' blocks when they were told apart (before any candidate
    /// is measured).
    pub(crate) block_test: Option<BlockTest>,
}

/// Both comparisons of a candidate at their latest looks (`look`).
pub(crate) struct Looked {
    pub(crate) good_done: usize,
    pub(crate) bad_done: usize,
    pub(crate) advanced: bool,
    pub(crate) like_good: bool,
    pub(crate) like_bad: bool,
    pub(crate) versus_good: Option<Shift>,
    pub(crate) good_confidence: f64,
    pub(crate) versus_bad: Option<Shift>,
    pub(crate) bad_confidence: f64,
}

/// Which endpoints a candidate's next block measures it against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Against {
    Both,
    Good,
    Bad,
}

/// What a blocked design decides around the shared block machinery.
pub(crate) trait BlockDesign: Design {
    fn blocked(&self) -> &Blocked;
    fn blocked_mut(&mut self) -> &mut Blocked;
    /// The commit to measure next, if any.
    fn candidate(&self, core: &Core) -> Option<usize>;
    /// The strict test's looks and levels.
    fn strict_design(&self) -> &CandidateDesign;
    /// Whether `candidate`'s strict test can look no more (it is then
    /// called undecided if it does not reject).
    fn exhausted(&self, design: &CandidateDesign, candidate: usize) -> bool;
    /// Prior log odds that `candidate` is like B, for choosing its
    /// block's endpoints.
    fn side_prior(&self, core: &Core, candidate: usize) -> f64;
    /// A block of `candidate` gets its first runs.
    fn block_opening(&mut self, _core: &mut Core, _candidate: usize) {}
    /// A block of `candidate` was closed and its strict test evaluated.
    fn block_closed(&mut self, _core: &mut Core, _candidate: usize) {}
}

impl Blocked {
    pub(crate) fn new(config: &Config, commits: usize) -> Self {
        Blocked {
            endpoint_design: endpoint_design(config),
            commits: vec![BlockState::default(); commits],
            open_block: None,
            side_agreement: None,
            block_test: None,
        }
    }

    pub(crate) fn load(config: &Config, stored: &StoredBisection) -> Self {
        Blocked {
            endpoint_design: stored
                .endpoint_design
                .clone()
                .unwrap_or_else(|| endpoint_design(config)),
            commits: stored
                .commits
                .iter()
                .map(|state| BlockState {
                    versus_good: state.versus_good.clone(),
                    versus_bad: state.versus_bad.clone(),
                    good_looks_done: state.good_looks_done,
                    bad_looks_done: state.bad_looks_done,
                    blocks: state.blocks,
                    holding: state.holding,
                })
                .collect(),
            open_block: stored.open_block.clone(),
            side_agreement: stored.side_agreement,
            block_test: stored.block_test,
        }
    }

    pub(crate) fn store(&self, stored: &mut StoredBisection) {
        for (state, block) in stored.commits.iter_mut().zip(&self.commits) {
            state.versus_good = block.versus_good.clone();
            state.versus_bad = block.versus_bad.clone();
            state.good_looks_done = block.good_looks_done;
            state.bad_looks_done = block.bad_looks_done;
            state.blocks = block.blocks;
            state.holding = block.holding;
        }
        stored.endpoint_design = Some(self.endpoint_design.clone());
        stored.open_block = self.open_block.clone();
        stored.side_agreement = self.side_agreement;
        stored.block_test = self.block_test;
    }

    /// A skipped candidate's open block is dropped.
    pub(crate) fn skipping(&mut self, position: usize) {
        if self
            .open_block
            .as_ref()
            .is_some_and(|block| block.candidate == position)
        {
            self.open_block = None;
        }
    }

    /// The endpoints were told apart: the candidates' block test and the
    /// endpoints' agreement with their own shift are fixed now.
    pub(crate) fn endpoints_told_apart(&mut self, core: &Core) {
        let Some(comparison) = &core.comparison else {
            return;
        };
        let differences = block_differences(
            &core.commits[0].samples,
            &core.commits[core.last()].samples,
            core.config.max_batch,
        );
        self.block_test = Some(BlockTest::choose(&differences));
        let half = comparison.shift.estimate.ln_1p() / 2.0;
        let beyond = differences
            .iter()
            .filter(|&&difference| (difference - half) * half > 0.0)
            .count();
        if !differences.is_empty() {
            self.side_agreement =
                Some((beyond as f64 / differences.len() as f64).clamp(0.55, 0.95));
        }
    }
}

/// The endpoints' two-sided tests (signed-rank and sign, the error split
/// between them) at level `endpoint_error` together over looks up to their
/// cap (one round).
pub(crate) fn endpoint_design(config: &Config) -> CandidateDesign {
    candidate_design(
        config.endpoint_error / 4.0,
        config.endpoint_min_runs.div_ceil(config.max_batch),
        (config.endpoint_max_runs / config.max_batch).max(2),
        1,
    )
}

/// The blocked designs' endpoint test: the group-sequential looks of
/// `endpoint_design`, and the sign test as the second test.
impl EndpointTest for Blocked {
    fn looks(&self, _config: &Config) -> Vec<usize> {
        self.endpoint_design.looks.clone()
    }

    /// That look's level of the group-sequential boundary.
    fn confidence(&self, core: &Core) -> f64 {
        self.endpoint_design.confidence[core.endpoint_looks_done - 1]
    }

    /// The sign test of the endpoints' block differences, each test at
    /// half the error (`endpoint_design`), so that blocks spoiled by load
    /// changes (large, of random sign) cannot hide the shift from both.
    fn second_test(&self, differences: &[f64], confidence: f64) -> Option<Shift> {
        sign_shift(differences, confidence)
    }
}

/// Each of a candidate's two one-sided tests at level `step_error` over
/// every round's looks.
pub(crate) fn strict_design(config: &Config) -> CandidateDesign {
    candidate_design(
        config.step_error,
        config.first_look.div_ceil(config.max_batch),
        (config.max_runs_per_step / config.max_batch).max(2),
        config.retests + 1,
    )
}

/// The next measurement of a blocked design, or the outcome.
pub(crate) fn next_action<D: BlockDesign>(design: &D, core: &Core) -> Action {
    match plan(design, core) {
        Some((turns, index, filled)) => Action::Measure {
            commit: core.order[turns[index]].clone(),
            runs: core.config.max_batch - filled,
        },
        None => Action::Done(core.outcome(design)),
    }
}

/// The block to measure next: its turns (positions, in order), the turn to
/// measure and the runs already in it; `None` when the search is over.
/// Continues the open block if it belongs to the commit to measure, else
/// plans a new one. O(c + n).
fn plan<D: BlockDesign>(design: &D, core: &Core) -> Option<(Vec<usize>, usize, usize)> {
    let candidate = design.candidate(core)?;
    let block = core.config.max_batch;
    if let Some(open) = &design.blocked().open_block
        && open.candidate == candidate
        && let Some(index) = open.values.iter().position(|values| values.len() < block)
    {
        return Some((open.turns.clone(), index, open.values[index].len()));
    }
    Some((turns(design, core, candidate), 0, 0))
}

/// The turns of a new block of `candidate`: G, X, B (then B, X, G, so
/// that a linear trend cancels over two blocks) for the first blocks
/// and whenever its position between the endpoints is unclear; once it
/// clearly resembles one endpoint, only X and the other endpoint
/// (E, X then X, E), the comparison that can classify it. The choice
/// depends on earlier blocks only, so each block difference is still
/// symmetric about 0 under the null given everything before it.
fn turns<D: BlockDesign>(design: &D, core: &Core, candidate: usize) -> Vec<usize> {
    let state = &design.blocked().commits[candidate];
    let (good, bad) = (0, core.last());
    let even = state.blocks % 2 == 0;
    match against(design, core, candidate) {
        Against::Both if even => vec![good, candidate, bad],
        Against::Both => vec![bad, candidate, good],
        Against::Good if even => vec![good, candidate],
        Against::Good => vec![candidate, good],
        Against::Bad if even => vec![bad, candidate],
        Against::Bad => vec![candidate, bad],
    }
}

fn against<D: BlockDesign>(design: &D, core: &Core, candidate: usize) -> Against {
    let state = &design.blocked().commits[candidate];
    if state.versus_good.len() < BOTH_BLOCKS || state.versus_bad.len() < BOTH_BLOCKS {
        return Against::Both;
    }
    if state.holding {
        return if state.versus_good.len() < state.versus_bad.len() {
            Against::Good
        } else {
            Against::Bad
        };
    }
    // A block against one endpoint costs 2 runs and helps the test
    // that can decide X with the posterior probability p of that side;
    // against both it costs 3 and always helps: one endpoint is the
    // better buy when p/2 > 1/3, that is p > 2/3.
    let odds = side_log_odds(design, core, candidate);
    if odds < -SIDE_LOG_ODDS {
        // Looks like G: only rejecting "X is like B" can classify it.
        Against::Bad
    } else if odds > SIDE_LOG_ODDS {
        Against::Good
    } else {
        Against::Both
    }
}

/// Log posterior odds that X is like B rather than like G, for choosing
/// the next block's endpoints only (never for a decision): the design's
/// prior (`BlockDesign::side_prior`) plus a likelihood from signs only, so
/// that a block spoiled by a load change (large, of random sign) counts
/// once: a block difference against G lies beyond Δ/2 (towards B's side)
/// with probability p if X is like B and 1 − p if like G, and one against
/// B beyond −Δ/2 the same way, with Δ the endpoints' log shift and p the
/// share of the endpoints' own block differences beyond Δ/2; each block
/// adds ±ln(p/(1 − p)). O(n + c).
fn side_log_odds<D: BlockDesign>(design: &D, core: &Core, candidate: usize) -> f64 {
    let state = &design.blocked().commits[candidate];
    let Some(likelihood) = votes(
        design.blocked(),
        core,
        &state.versus_good,
        &state.versus_bad,
    ) else {
        return 0.0;
    };
    design.side_prior(core, candidate) + likelihood
}

/// Sign votes of block differences against G and against B: each adds
/// ±ln(p/(1 − p)) towards B's side or G's (see `side_log_odds`).
/// `None` before the endpoints are told apart. O(n).
fn votes(blocked: &Blocked, core: &Core, versus_good: &[f64], versus_bad: &[f64]) -> Option<f64> {
    let (Some(comparison), Some(agreement)) = (&core.comparison, blocked.side_agreement) else {
        return None;
    };
    let shift = comparison.shift.estimate.ln_1p();
    if !(shift.is_finite() && shift != 0.0) {
        return None;
    }
    let weight = (agreement / (1.0 - agreement)).ln();
    let vote = |centred: f64| {
        let towards_bad = centred * shift.signum();
        if towards_bad > 0.0 {
            weight
        } else if towards_bad < 0.0 {
            -weight
        } else {
            0.0
        }
    };
    Some(
        versus_good
            .iter()
            .map(|difference| vote(difference - shift / 2.0))
            .chain(
                versus_bad
                    .iter()
                    .map(|difference| vote(difference + shift / 2.0)),
            )
            .sum(),
    )
}

/// Where X sits from G (0) to B (1) on the log scale: the medians of
/// its block differences against each endpoint, each turned into a
/// position with the endpoints' log shift, weighted by block counts.
/// 0.5 when nothing is known. O(n log n).
pub(crate) fn position_estimate(blocked: &Blocked, core: &Core, candidate: usize) -> f64 {
    let state = &blocked.commits[candidate];
    let Some(comparison) = &core.comparison else {
        return 0.5;
    };
    let shift = comparison.shift.estimate.ln_1p();
    if !(shift.is_finite() && shift != 0.0) {
        return 0.5;
    }
    let (from_good, from_bad) = (state.versus_good.len(), state.versus_bad.len());
    if from_good + from_bad == 0 {
        return 0.5;
    }
    let mut weighted = 0.0;
    if from_good > 0 {
        weighted += from_good as f64 * median(&state.versus_good) / shift;
    }
    if from_bad > 0 {
        weighted += from_bad as f64 * (1.0 + median(&state.versus_bad) / shift);
    }
    weighted / (from_good + from_bad) as f64
}

/// Adds `values` of `position` to the open block if it is that
/// commit's turn (runs measured out of turn are kept as samples but
/// enter no block), and closes the block when every turn is full.
pub(crate) fn fill_block<D: BlockDesign>(
    design: &mut D,
    core: &mut Core,
    position: usize,
    values: &[f64],
) {
    let Some((turns, index, filled)) = plan(design, core) else {
        return;
    };
    if turns[index] != position {
        return;
    }
    let candidate = design.candidate(core).expect("a plan has a target");
    design.block_opening(core, candidate);
    let block = core.config.max_batch;
    let open = match &mut design.blocked_mut().open_block {
        Some(open) if open.candidate == candidate && open.turns == turns => open,
        slot => slot.insert(OpenBlock {
            candidate,
            values: vec![Vec::new(); turns.len()],
            turns,
        }),
    };
    let take = values.len().min(block - filled);
    open.values[index].extend_from_slice(&values[..take]);
    if open.values.iter().all(|values| values.len() == block) {
        let open = design
            .blocked_mut()
            .open_block
            .take()
            .expect("the block is open");
        close_block(design, core, open);
    }
}

/// Records the block differences of a full block and evaluates the
/// candidate's tests at any look they reached.
fn close_block<D: BlockDesign>(design: &mut D, core: &mut Core, open: OpenBlock) {
    let mean_log =
        |values: &[f64]| values.iter().map(|value| value.ln()).sum::<f64>() / values.len() as f64;
    let candidate = open.candidate;
    let index = open
        .turns
        .iter()
        .position(|&turn| turn == candidate)
        .expect("a block measures its candidate");
    let own = mean_log(&open.values[index]);
    let last = core.last();
    let (mut good, mut bad) = (Vec::new(), Vec::new());
    for (&turn, values) in open.turns.iter().zip(&open.values) {
        if turn == 0 {
            good.push(own - mean_log(values));
        } else if turn == last {
            bad.push(own - mean_log(values));
        }
    }
    let state = &mut design.blocked_mut().commits[candidate];
    state.versus_good.extend(good);
    state.versus_bad.extend(bad);
    state.blocks += 1;
    evaluate_strict(design, core, candidate);
    design.block_closed(core, candidate);
}

/// Group-sequential looks: each comparison (X against G, X against B)
/// is a one-sided signed-rank test evaluated when its block count
/// reaches a look of the design, at that look's nominal level. X is
/// like-bad when the test against G rejects towards B, like-good when
/// the test against B rejects towards G, in either case only when X's
/// estimated position is also on that side (which can only make calls
/// rarer). Undecided when the design says the test is exhausted.
fn evaluate_strict<D: BlockDesign>(design: &mut D, core: &mut Core, candidate: usize) {
    if core.commits[candidate].class.is_some() {
        return;
    }
    let strict = design.strict_design().clone();
    let blocked = design.blocked();
    let state = &blocked.commits[candidate];
    let Some(looked) = look(
        blocked,
        core,
        &strict,
        candidate,
        state.good_looks_done,
        state.bad_looks_done,
    ) else {
        return;
    };
    let exhausted = design.exhausted(&strict, candidate);
    let fraction = position_estimate(design.blocked(), core, candidate);
    let (like_good, like_bad) = (looked.like_good, looked.like_bad);
    let state = &mut design.blocked_mut().commits[candidate];
    state.good_looks_done = looked.good_done;
    state.bad_looks_done = looked.bad_done;
    if !looked.advanced && !exhausted {
        return;
    }
    let intermediate = (INTERMEDIATE_LOW..=INTERMEDIATE_HIGH).contains(&fraction);
    let partial = like_good && like_bad && intermediate;
    // A call halfway between the endpoints waits until the other
    // comparison has as many blocks: both rejecting is a partial change.
    let other_behind = (like_bad && state.versus_bad.len() < state.versus_good.len())
        || (like_good && state.versus_good.len() < state.versus_bad.len());
    state.holding = intermediate && !partial && other_behind && !exhausted;
    if state.holding {
        return;
    }
    if let Some(decision) = call(
        design.blocked(),
        core,
        candidate,
        looked,
        fraction,
        partial,
        exhausted,
    ) {
        design.record(core, candidate, decision);
    }
}

/// Both comparisons of `candidate` at the latest looks of `design`
/// their block counts reached (`good_before`, `bad_before`: the looks
/// already evaluated): each one's interval on that look's blocks (a
/// later block changes nothing until the next look) and whether it
/// rejects towards the other endpoint. `None` before the endpoints are
/// told apart. O(n² log n) per comparison.
pub(crate) fn look(
    blocked: &Blocked,
    core: &Core,
    design: &CandidateDesign,
    candidate: usize,
    good_before: usize,
    bad_before: usize,
) -> Option<Looked> {
    let direction = core.comparison.as_ref()?.direction;
    let test = blocked.block_test.unwrap_or(BlockTest::SignedRank);
    let state = &blocked.commits[candidate];
    let advance = |count: usize, mut done: usize| {
        while design.looks.get(done).is_some_and(|&look| look <= count) {
            done += 1;
        }
        done
    };
    let good_done = advance(state.versus_good.len(), good_before);
    let bad_done = advance(state.versus_bad.len(), bad_before);
    let at_look = |differences: &[f64], done: usize| -> (Option<Shift>, f64) {
        if done == 0 {
            return (test.shift(differences, 0.95), 0.0);
        }
        let look = design.looks[done - 1];
        let confidence = design.confidence[done - 1];
        (test.shift(&differences[..look], confidence), confidence)
    };
    let (versus_good, good_confidence) = at_look(&state.versus_good, good_done);
    let (versus_bad, bad_confidence) = at_look(&state.versus_bad, bad_done);
    let rejects = |shift: Option<Shift>, towards_bad: bool| {
        shift
            .and_then(|shift| shift.interval)
            .is_some_and(|interval| match (direction, towards_bad) {
                (Direction::Higher, true) | (Direction::Lower, false) => interval.low > 0.0,
                (Direction::Higher, false) | (Direction::Lower, true) => interval.high < 0.0,
            })
    };
    Some(Looked {
        good_done,
        bad_done,
        advanced: good_done > good_before || bad_done > bad_before,
        like_bad: good_done > 0 && rejects(versus_good, true),
        like_good: bad_done > 0 && rejects(versus_bad, false),
        versus_good,
        good_confidence,
        versus_bad,
        bad_confidence,
    })
}

/// The decision a look makes, if any: like-good or like-bad when that
/// comparison rejects and X's estimated position is on that side,
/// undecided when `exhausted`.
pub(crate) fn call(
    blocked: &Blocked,
    core: &Core,
    candidate: usize,
    looked: Looked,
    fraction: f64,
    partial: bool,
    exhausted: bool,
) -> Option<Decision> {
    let (class, confidence) = match (looked.like_good, looked.like_bad) {
        (true, _) if fraction < 0.5 => (Class::Good, looked.bad_confidence),
        (_, true) if fraction > 0.5 => (Class::Bad, looked.good_confidence),
        _ if exhausted => (
            Class::Undecided,
            looked.good_confidence.max(looked.bad_confidence),
        ),
        _ => return None,
    };
    let state = &blocked.commits[candidate];
    let block = core.config.max_batch;
    Some(Decision {
        class,
        runs: core.commits[candidate].samples.len(),
        endpoint_runs: (
            state.versus_good.len() * block,
            state.versus_bad.len() * block,
        ),
        confidence,
        versus_good: looked.versus_good,
        versus_bad: looked.versus_bad,
        fraction: Some(fraction),
        partial,
        reason: None,
    })
}
