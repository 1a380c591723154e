//! verdict-engine: orchestration. The schedule (randomized complete blocks
//! from a recorded seed), level switches with setup and teardown, warmups,
//! adaptive stopping and resume. Processes go through verdict-exec's
//! `Executor`, samples through verdict-store's `Store`, decisions through
//! verdict-stats; this crate prints nothing.

pub mod adaptive;
pub mod boots;
pub mod history;
pub mod hosts;
pub mod iteration;
pub mod runner;
pub mod schedule;

pub use adaptive::{AdaptivePlan, ComparisonStatus};
pub use boots::{BootRunner, BootSlot, boot_plan, boot_schedule};
pub use hosts::{HostPart, HostWork, run_on_hosts};
pub use runner::{
    Engine, EngineError, Observer, RunSummary, Silent, StartOptions, check_design,
    planned_iterations,
};
