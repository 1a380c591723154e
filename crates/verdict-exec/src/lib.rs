//! verdict-exec: the only crate that starts processes.
//!
//! It runs one command per call to [`Executor::run`] and reports what that
//! command, and only that command, did: exit status, wall time on the
//! monotonic clock, user and system CPU time and peak RSS from `wait4` (never
//! `RUSAGE_CHILDREN`, which mixes every child the harness ever reaped), and
//! bounded tails of stdout and stderr.
//!
//! [`SystemExecutor`] is the real implementation: no shell unless
//! [`Program::Shell`] asks for one, stdin from `/dev/null`, the child in its
//! own process group so a timeout or a [`Cancel`] kills the whole group.
//! [`FakeExecutor`] returns scripted outcomes for engine and bisection tests.
//!
//! Ctrl-C: children run in their own process group, so a terminal's SIGINT
//! reaches verdict only, never the workload. The engine handles Ctrl-C by
//! calling [`Cancel::cancel`]; the run in flight then kills its process group
//! and returns [`ExecError::Cancelled`].
//!
//! This crate must not depend on other verdict crates, parse metrics, touch the
//! store, or print anything.

mod cancel;
mod error;
mod executor;
mod fake;
mod invocation;
mod outcome;
mod signal;
mod system;
mod tail;

pub use cancel::Cancel;
pub use error::ExecError;
pub use executor::Executor;
pub use fake::FakeExecutor;
pub use invocation::{DEFAULT_OUTPUT_LIMIT, Invocation, Program};
pub use outcome::{Outcome, Status};
pub use signal::signal_name;
pub use system::{SystemExecutor, TERMINATION_GRACE};
