//! verdict-exec: the only crate that starts processes.
//!
//! It runs one command per call to [`Target::run`] and reports what that
//! command, and only that command, did: exit status, wall time on the
//! monotonic clock, user and system CPU time and peak RSS from `wait4` (never
//! `RUSAGE_CHILDREN`, which mixes every child the harness ever reaped), and
//! bounded tails of stdout and stderr.
//!
//! [`SystemExecutor`] is the real implementation: no shell unless
//! [`Program::Shell`] asks for one, stdin from `/dev/null`, the child in its
//! own process group so a timeout or a [`Cancel`] kills the whole group.
//! [`FakeExecutor`] returns scripted outcomes for engine and bisection tests.
//! [`SshTarget`] is another machine, reached with the system `ssh` client;
//! there, `verdict agent` ([`agent::serve`]) runs each invocation with the
//! local `SystemExecutor`, so the measurements are the target's own. The
//! trait is also exported as [`Target`]: besides running commands it reads
//! the machine's files and tells its clock. [`VmTarget`] is a QEMU virtual
//! machine verdict boots itself (a given kernel and command line, an
//! initramfs built from the host's binaries) and then reaches as an ssh
//! target, after proving the boot.
//!
//! Ctrl-C: children run in their own process group, so a terminal's SIGINT
//! reaches verdict only, never the workload. The engine handles Ctrl-C by
//! calling [`Cancel::cancel`]; the run in flight then kills its process group
//! and returns [`ExecError::Cancelled`].
//!
//! Leftovers: a command that exits while processes of its group live on
//! (`sh -c 'sleep 31 & echo started'`) has them listed in
//! [`Outcome::leftovers`] and, with [`Leftovers::Kill`], killed before `run`
//! returns, so they cannot compete with the next command.
//!
//! ```
//! use std::time::Duration;
//! use verdict_exec::{Cancel, Target, FakeExecutor, Invocation, Outcome, Status, SystemExecutor};
//!
//! // One token for the whole run; the Ctrl-C handler calls `cancel.cancel()`.
//! let cancel = Cancel::new();
//! let invocation = Invocation::argv(["printf", "%s|", "a b", "{}"])
//!     .with_env("LC_ALL", "C")
//!     .with_timeout(Duration::from_secs(10));
//! let outcome = SystemExecutor.run(&invocation, &cancel)?;
//! assert_eq!(outcome.status, Status::Exited(0));
//! assert_eq!(outcome.stdout, b"a b|{}|");
//!
//! // Engine tests script outcomes instead of starting processes.
//! let fake = FakeExecutor::with_queue([Ok(Outcome::exited(0, Duration::from_millis(12)))]);
//! assert_eq!(fake.run(&invocation, &cancel)?.wall, Duration::from_millis(12));
//! assert_eq!(fake.invocations(), vec![invocation]);
//! # Ok::<(), verdict_exec::ExecError>(())
//! ```
//!
//! [`own_process::rewrite_command_line`] hides a secret in verdict's own
//! command line from other processes.
//!
//! This crate must not depend on other verdict crates, parse metrics, touch the
//! store, or print anything.

pub mod agent;
mod boot;
mod cancel;
mod error;
mod executor;
mod fake;
mod invocation;
mod leftovers;
mod local;
mod lock;
mod monitor;
mod outcome;
pub mod own_process;
pub mod remote;
mod signal;
mod spawn;
mod ssh;
mod ssh_boot;
mod system;
mod tail;
mod vm;

pub use boot::{BootRecord, BootSpec, Booter, VmBooter};
pub use cancel::Cancel;
pub use error::ExecError;
pub use executor::Target;
pub use fake::{FAKE_CLOCK_START_MS, FakeExecutor};
pub use invocation::{DEFAULT_OUTPUT_LIMIT, Invocation, Leftovers, Program};
pub use leftovers::LEFTOVER_GRACE;
pub use lock::FileLock;
pub use monitor::{FileSnapshot, MonitorRequest, SYSTEM_COUNTER_FILES, Snapshots};
pub use outcome::{Outcome, Status};
pub use signal::signal_name;
pub use ssh::{AgentBinary, SshOptions, SshTarget, valid_host};
pub use ssh_boot::{SshBootOptions, SshBooter};
pub use system::{SystemExecutor, TERMINATION_GRACE};
pub use vm::{
    Acceleration, BootExpectation, BootFacts, ImageError, ImageVersion, VmOptions, VmTarget,
    boot_mismatches, kernel_image_version, kernel_release,
};
