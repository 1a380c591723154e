//! verdict-bisect: statistical bisection. A pure state machine (evidence in,
//! next action out) that finds the first commit whose performance matches
//! the bad endpoint rather than the good one, a `Vcs` trait with a git
//! implementation, and a `git bisect log`-compatible replay writer.
//!
//! Must not: measure anything, read the clock, or touch a database; the
//! caller (verdict-engine and the `verdict bisect` command) runs the
//! workload, stores the events and feeds them back. Only `git.rs` starts
//! processes.

mod bisection;
mod commit;
mod error;
mod git;
mod log;
mod looks;
mod vcs;

pub use bisection::{
    AbortReason, Action, Bisection, Class, CommitEvidence, Config, Conflict, Culprit, Decision,
    Direction, EndpointComparison, Event, Outcome, Phase, Step,
};
pub use commit::{Commit, CommitId};
pub use error::BisectError;
pub use git::Git;
pub use log::{LogEntry, LogVerdict, bisect_log};
pub use vcs::{FakeVcs, Head, Vcs};
