//! verdict-bisect: statistical bisection. A pure state machine (evidence in,
//! next action out) that finds the first commit whose performance matches
//! the bad endpoint rather than the good one, a `Vcs` trait with a git
//! implementation, and a `git bisect log`-compatible replay writer.
//!
//! Must not: measure anything, read the clock, or touch a database; the
//! caller (verdict-engine and the `verdict bisect` command) runs the
//! workload, stores the events and feeds them back. Only `git.rs` starts
//! processes.
//!
//! # Driving it (what `verdict bisect` does)
//! 1. `Vcs::resolve` good and bad, `Vcs::candidates(good, bad,
//!    first_parent)`; store the config, good id and candidate ids with the
//!    bisection (resume must not recompute them: the repository may move).
//! 2. Loop on `Bisection::next_action`: for `Measure { commit, runs }`
//!    check the commit out (`Vcs::checkout`), build/install (exit 125 or a
//!    failed build → `Event::Skip`), run the workload up to `runs` times,
//!    and `apply` + store each `Event::Samples` (one per run is fine: a kill
//!    then loses only the run in flight). Stop on `Done` or `Abort`.
//! 3. `--resume`: `Bisection::replay(config, good, candidates, &events)`
//!    then the same loop. The state is also `serde`, if a snapshot is wanted.
//! 4. Report: `Outcome` (culprit, last good, conflicts, partial, skipped,
//!    undecided, runs), `Bisection::steps` (per-step decisions with their
//!    intervals and cumulative runs), `Bisection::evidence` (per commit
//!    samples and decision, for `verdict bisect log`), `Bisection::compare`
//!    (culprit vs last good), `Bisection::bisect_log` (git replay text).
//!    `Vcs::restore(&head)` at the end.
//!
//! ```
//! use verdict_bisect::{Action, Bisection, Config, Culprit, Event, FakeVcs, Vcs};
//!
//! let vcs = FakeVcs::linear(9); // c00 good ... c08 bad; c05 is 3x slower
//! let good = vcs.resolve("c00")?;
//! let candidates = vcs.candidates(&good, &vcs.resolve("c08")?, true)?;
//! let ids = candidates.into_iter().map(|commit| commit.id).collect();
//! let mut bisection = Bisection::new(Config::default(), good, ids)?;
//! let mut stored = Vec::new(); // the store
//! let outcome = loop {
//!     match bisection.next_action() {
//!         Action::Measure { commit, runs } => {
//!             vcs.checkout(&commit)?;
//!             let slow = commit.as_str() >= "c05";
//!             let values = (0..runs).map(|run| if slow { 3.0 } else { 1.0 } + run as f64 / 100.0);
//!             let event = Event::Samples { commit, values: values.collect() };
//!             bisection.apply(&event)?;
//!             stored.push(event);
//!         }
//!         Action::Done(outcome) => break outcome,
//!         Action::Abort { reason } => panic!("{reason:?}"),
//!     }
//! };
//! assert_eq!(outcome.culprit, Culprit::Single(vcs.resolve("c05")?));
//! let resumed = Bisection::replay(Config::default(), vcs.resolve("c00")?,
//!     bisection.order()[1..].to_vec(), &stored)?;
//! assert_eq!(resumed, bisection);
//! # Ok::<(), verdict_bisect::BisectError>(())
//! ```

mod bisection;
mod blocks;
mod commit;
mod design;
mod error;
mod git;
mod log;
mod looks;
mod search;
mod vcs;

pub use bisection::{
    AbortReason, Action, Bisection, Class, CommitEvidence, Config, Conflict, Culprit, Decision,
    Direction, EndpointComparison, Event, LookDesign, Outcome, Phase, Step,
};
pub use commit::{Commit, CommitId};
pub use error::BisectError;
pub use git::Git;
pub use log::{LogEntry, LogVerdict, bisect_log};
pub use vcs::{FakeVcs, Head, Vcs};
