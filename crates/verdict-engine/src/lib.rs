//! verdict-engine: orchestration. The schedule (randomized complete blocks
//! from a recorded seed), level switches with setup and teardown, warmups,
//! adaptive stopping and resume. Processes go through verdict-exec's
//! `Target`, samples through verdict-store's `Store`, decisions through
//! verdict-stats; shared work on a PostgreSQL store (`work`: detached runs,
//! controllers claiming blocks under host leases); a kernel tree's Kconfig
//! toolchain probes run on a target (`kconfig_probes`); a local build
//! measured on a host (`remote_site`) and doctor run on a host
//! (`remote_doctor`); the commands' errors and their exit classes
//! (`error`); every run's launch on its placement (`launch`: this machine,
//! ssh hosts (`machine`), a VM or ssh host it boots (`booted`)); this
//! crate prints nothing.

pub mod adaptive;
pub mod bisect;
pub mod bisect_boots;
pub mod boot_builds;
pub mod booted;
pub mod boots;
pub mod calibrate;
mod capture;
pub mod commit;
pub mod compare;
pub mod error;
pub mod explain;
pub mod export;
pub mod history;
pub mod history_source;
pub mod host_group;
pub mod hosts;
pub mod iteration;
pub mod kconfig_probes;
pub mod kernel_build;
mod kernel_source;
pub mod launch;
pub mod machine;
pub mod plan;
pub mod profile;
pub mod remote_doctor;
pub mod remote_site;
pub mod runner;
pub mod schedule;
pub mod work;

pub use adaptive::{AdaptivePlan, ComparisonStatus};
pub use boots::{BootCapture, BootRunner, BootSlot, boot_plan, boot_schedule};
pub use error::CommandError;
pub use hosts::{HostPart, HostWork, run_on_hosts};
pub use kernel_build::{BuiltKernel, KernelBuildError, KernelBuilder};
pub use runner::{
    Engine, EngineError, Observer, RunOutcome, Silent, StartOptions, check_design,
    planned_iterations,
};
pub use work::{WorkOptions, WorkSummary, Worker, detach};
