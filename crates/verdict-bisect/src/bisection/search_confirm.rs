//! The `search-confirm` design (the default since 2026-12-02): a cheap
//! search and a confirmed answer. Commits are probed at the median of the
//! posterior over the culprit's position (probabilistic bisection,
//! `search.rs`); a visit ends at a provisional call when the looser
//! `search_error` boundary is crossed. The answer needs its culprit
//! strictly like-bad and the commit before it strictly like-good: the
//! group-sequential test at `step_error` (`blocked.rs`), continued over
//! every visit to a commit on the same blocks. A strict call against the
//! provisional ones is one more call and the search goes on.
//! Must not: do I/O, or use randomness.

use serde::{Deserialize, Serialize};

use crate::design::{CandidateDesign, search_design};
use crate::search::{Call, posterior};

use super::blocked::{self, BlockDesign, Blocked};
use super::designs::{Design, EndpointTest};
use super::stored::StoredBisection;
use super::{Action, Class, Config, Core, Decision};

/// The posterior probability that the culprit lies in one gap between
/// usable commits at which the search stops and the gap's ends are
/// confirmed.
const CONFIRM_MASS: f64 = 0.8;

/// A visit to a commit (every visit continues the commit's one pooled
/// test).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub(crate) enum TestKind {
    /// Until the provisional boundary (`search_error`) or the strict one
    /// is crossed: a provisional call that steers the search.
    Search,
    /// Until the strict boundary (`step_error`) is crossed: a call the
    /// answer may rest on.
    Confirm,
}

/// One commit's search state.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Visits {
    /// The test in progress (fresh blocks since it started), if any.
    pub(crate) test: Option<TestKind>,
    /// The class given by this commit's latest confirmation test.
    pub(crate) confirmed: Option<Class>,
    /// Search tests of this commit that ended undecided.
    pub(crate) search_undecided: usize,
    /// The search test's looks reached (its provisional boundary, on the
    /// same blocks as the strict test).
    pub(crate) search_good_looks_done: usize,
    pub(crate) search_bad_looks_done: usize,
    /// The commit's blocks when its current visit began.
    pub(crate) visit_start: usize,
}

/// The `search-confirm` design's state.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SearchConfirm {
    /// The search tests' looks and levels.
    search_design: CandidateDesign,
    /// The strict test's looks and levels: the group-sequential design's,
    /// its rounds pooled into one test over every visit.
    strict: CandidateDesign,
    blocked: Blocked,
    visits: Vec<Visits>,
    /// Every good/bad call with its error, for the posterior over the
    /// culprit's position.
    calls: Vec<Call>,
    /// Search and confirmation tests started.
    search_tests: usize,
}

/// The search tests' design of a config: one round of a quarter of
/// `max_runs_per_step` runs (or `search_max_runs`).
fn search_tests_design(config: &Config) -> CandidateDesign {
    let runs = config
        .search_max_runs
        .unwrap_or(config.max_runs_per_step / 4)
        .max(config.first_look);
    search_design(
        config.search_error,
        config.first_look.div_ceil(config.max_batch),
        (runs / config.max_batch).max(2),
    )
}

impl SearchConfirm {
    pub(crate) fn new(config: &Config, commits: usize) -> Self {
        SearchConfirm {
            search_design: search_tests_design(config),
            strict: blocked::strict_design(config),
            blocked: Blocked::new(config, commits),
            visits: vec![Visits::default(); commits],
            calls: Vec::new(),
            search_tests: 0,
        }
    }

    pub(crate) fn load(config: &Config, stored: &StoredBisection) -> Self {
        SearchConfirm {
            search_design: stored
                .search_design
                .clone()
                .unwrap_or_else(|| search_tests_design(config)),
            strict: blocked::strict_design(config),
            blocked: Blocked::load(config, stored),
            visits: stored
                .commits
                .iter()
                .map(|state| Visits {
                    test: state.test,
                    confirmed: state.confirmed,
                    search_undecided: state.search_undecided,
                    search_good_looks_done: state.search_good_looks_done,
                    search_bad_looks_done: state.search_bad_looks_done,
                    visit_start: state.visit_start,
                })
                .collect(),
            calls: stored.calls.clone(),
            search_tests: stored.search_tests,
        }
    }

    pub(crate) fn store(&self, stored: &mut StoredBisection) {
        self.blocked.store(stored);
        for (state, visits) in stored.commits.iter_mut().zip(&self.visits) {
            state.test = visits.test;
            state.confirmed = visits.confirmed;
            state.search_undecided = visits.search_undecided;
            state.search_good_looks_done = visits.search_good_looks_done;
            state.search_bad_looks_done = visits.search_bad_looks_done;
            state.visit_start = visits.visit_start;
        }
        stored.search_design = Some(self.search_design.clone());
        stored.calls = self.calls.clone();
        stored.search_tests = self.search_tests;
    }

    /// The test to run next, if any: the test in progress; else, while no
    /// gap between usable commits holds `CONFIRM_MASS` of the posterior
    /// over the culprit, a search test at the posterior's median
    /// (probabilistic bisection, `search.rs`); else a confirmation of that
    /// gap's ends (its lower end like-good, its upper end like-bad).
    /// `None` when both are confirmed (or the test limits are reached):
    /// the search is over. O(n + c).
    fn search_target(&self, core: &Core) -> Option<(usize, TestKind)> {
        let last = core.last();
        if let Some(position) = (1..last).find(|&position| {
            self.visits[position].test.is_some() && core.commits[position].class.is_none()
        }) {
            return Some((position, self.visits[position].test?));
        }
        let probabilities = self.culprit_posterior(core);
        let mut cumulative = Vec::with_capacity(probabilities.len());
        let mut running = 0.0;
        for probability in &probabilities {
            running += probability;
            cumulative.push(running);
        }
        // Commits that can still end a gap: not skipped, not left
        // undecided by a confirmation or by every search round.
        let usable = |position: usize| {
            let visits = &self.visits[position];
            core.commits[position].class != Some(Class::Skipped)
                && visits.confirmed != Some(Class::Undecided)
                && visits.search_undecided <= core.config.retests
        };
        let fences: Vec<usize> = std::iter::once(0)
            .chain((1..last).filter(|&position| usable(position)))
            .chain(std::iter::once(last))
            .collect();
        let (mut best, mut best_mass) = ((0, last), f64::NEG_INFINITY);
        for pair in fences.windows(2) {
            let mass = cumulative[pair[1]] - cumulative[pair[0]];
            if mass > best_mass {
                (best, best_mass) = ((pair[0], pair[1]), mass);
            }
        }
        let search_limit = 4 * (usize::BITS - last.leading_zeros()) as usize + 8;
        if best_mass < CONFIRM_MASS && self.search_tests < search_limit {
            let median = fences[1..fences.len() - 1]
                .iter()
                .copied()
                .filter(|&position| self.visits[position].confirmed.is_none())
                .min_by(|&first, &second| {
                    (cumulative[first] - 0.5)
                        .abs()
                        .total_cmp(&(cumulative[second] - 0.5).abs())
                        .then(first.cmp(&second))
                });
            if let Some(position) = median {
                // A commit visited before is at the median again: the
                // provisional evidence is split there, so its test goes on
                // to the strict boundary.
                let kind = if core.commits[position].samples.is_empty() {
                    TestKind::Search
                } else {
                    TestKind::Confirm
                };
                return Some((position, kind));
            }
        }
        let (low, high) = best;
        let (low_class, high_class) = (self.visits[low].confirmed, self.visits[high].confirmed);
        if low_class == Some(Class::Bad) || high_class == Some(Class::Good) {
            // Strict calls contradict the provisional ones here: the search
            // ends with the strict calls' bounds and their conflicts.
            return None;
        }
        if low != 0 && low_class != Some(Class::Good) {
            return Some((low, TestKind::Confirm));
        }
        if high != last && high_class != Some(Class::Bad) {
            return Some((high, TestKind::Confirm));
        }
        None
    }

    /// A visit of kind `kind` to `candidate` begins; its blocks continue
    /// the commit's one test.
    fn start_test(&mut self, core: &mut Core, candidate: usize, kind: TestKind) {
        if kind == TestKind::Search {
            self.search_tests += 1;
        }
        let block = &mut self.blocked.commits[candidate];
        block.holding = false;
        core.commits[candidate].class = None;
        let visits = &mut self.visits[candidate];
        visits.visit_start = block.blocks;
        visits.test = Some(kind);
    }

    /// A search visit ends with a provisional call when the search
    /// design's boundary (one-sided `search_error` per comparison over its
    /// looks, on the commit's blocks) is crossed with X's estimate on that
    /// side, or undecided after `search_max_runs` runs of the visit. The
    /// strict test runs on the same blocks first; a provisional call never
    /// enters it.
    fn evaluate_search(&mut self, core: &mut Core, candidate: usize) {
        let design = &self.search_design;
        let visits = &self.visits[candidate];
        let exhausted =
            self.blocked.commits[candidate].blocks - visits.visit_start >= design.round_blocks;
        let Some(looked) = blocked::look(
            &self.blocked,
            core,
            design,
            candidate,
            visits.search_good_looks_done,
            visits.search_bad_looks_done,
        ) else {
            return;
        };
        if !looked.advanced && !exhausted {
            return;
        }
        let fraction = blocked::position_estimate(&self.blocked, core, candidate);
        let visits = &mut self.visits[candidate];
        visits.search_good_looks_done = looked.good_done;
        visits.search_bad_looks_done = looked.bad_done;
        if let Some(decision) = blocked::call(
            &self.blocked,
            core,
            candidate,
            looked,
            fraction,
            false,
            exhausted,
        ) {
            self.record_call(core, candidate, decision, true);
        }
    }

    /// Records a decision; a good or bad call enters the posterior, a
    /// provisional one (a search call) weighted by the search test's error
    /// and a strict one by `step_error`.
    fn record_call(
        &mut self,
        core: &mut Core,
        position: usize,
        decision: Decision,
        provisional: bool,
    ) {
        let visits = &mut self.visits[position];
        visits.test = None;
        if decision.class != Class::Skipped {
            let error = if provisional {
                if decision.class == Class::Undecided {
                    visits.search_undecided += 1;
                }
                // Weighted as wrong with probability half the search
                // test's error: in the simulation (tests/simulation.rs)
                // fewer runs than the full error (more probes) and than a
                // quarter (slower to recover from a wrong call).
                core.config.search_error / 2.0
            } else {
                visits.confirmed = Some(decision.class);
                core.config.step_error
            };
            if matches!(decision.class, Class::Good | Class::Bad) {
                self.calls.push(Call {
                    position,
                    bad: decision.class == Class::Bad,
                    error,
                });
            }
        }
        core.record(position, decision, provisional);
    }

    /// The posterior over the culprit's position from every call
    /// (provisional ones at `search_error`, strict ones at `step_error`).
    /// O(n + c).
    fn culprit_posterior(&self, core: &Core) -> Vec<f64> {
        posterior(core.last(), self.calls.iter().map(Call::evidence))
    }
}

impl Design for SearchConfirm {
    fn endpoint_test(&self) -> &dyn EndpointTest {
        &self.blocked
    }

    fn evaluate_endpoints(&mut self, core: &mut Core) {
        core.evaluate_endpoints(self);
    }

    fn endpoints_told_apart(&mut self, core: &Core) {
        self.blocked.endpoints_told_apart(core);
    }

    fn samples_added(&mut self, core: &mut Core, position: usize, values: &[f64]) {
        blocked::fill_block(self, core, position, values);
    }

    fn skipping(&mut self, position: usize) {
        self.blocked.skipping(position);
    }

    fn record(&mut self, core: &mut Core, position: usize, decision: Decision) {
        self.record_call(core, position, decision, false);
    }

    fn next_action(&self, core: &Core) -> Action {
        blocked::next_action(self, core)
    }

    /// Search calls are provisional: a candidate's class for the answer is
    /// its latest confirmation's.
    fn settled_class(&self, core: &Core, position: usize) -> Option<Class> {
        if position != 0 && position != core.last() {
            self.visits[position].confirmed
        } else {
            core.commits[position].class
        }
    }
}

impl BlockDesign for SearchConfirm {
    fn blocked(&self) -> &Blocked {
        &self.blocked
    }

    fn blocked_mut(&mut self) -> &mut Blocked {
        &mut self.blocked
    }

    fn candidate(&self, core: &Core) -> Option<usize> {
        self.search_target(core).map(|(position, _)| position)
    }

    fn strict_design(&self) -> &CandidateDesign {
        &self.strict
    }

    /// One test, its rounds pooled: undecided at its last look.
    fn exhausted(&self, design: &CandidateDesign, candidate: usize) -> bool {
        design
            .looks
            .last()
            .is_some_and(|&last| self.blocked.commits[candidate].blocks >= last)
    }

    /// The posterior probability that X is like B, P(culprit ≤ X), kept
    /// within [0.1, 0.9] so that a few blocks can overturn it.
    fn side_prior(&self, core: &Core, candidate: usize) -> f64 {
        let bad: f64 = self.culprit_posterior(core)[..=candidate].iter().sum();
        let bad = bad.clamp(0.1, 0.9);
        (bad / (1.0 - bad)).ln()
    }

    fn block_opening(&mut self, core: &mut Core, candidate: usize) {
        if self.visits[candidate].test.is_none() {
            let (_, kind) = self.search_target(core).expect("a plan has a target");
            self.start_test(core, candidate, kind);
        }
    }

    fn block_closed(&mut self, core: &mut Core, candidate: usize) {
        if core.commits[candidate].class.is_none()
            && self.visits[candidate].test == Some(TestKind::Search)
        {
            self.evaluate_search(core, candidate);
        }
    }
}
