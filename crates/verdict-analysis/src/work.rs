//! Where a detached run was measured (`verdict run --detach`, then
//! `verdict work` on several machines): the hosts its blocks ran on and the
//! blocks taken over from a controller whose lease expired, as a section of
//! the run's report (`RunReport::with_work`). Pure: the store's record in,
//! the section out; must not render or read a clock.

use schemars::JsonSchema;
use serde::Serialize;

use crate::run::RunReport;

/// A block one controller took over from another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TakeoverRow {
    pub block: u32,
    /// When, in milliseconds since the epoch.
    pub taken_at_ms: i64,
    pub from_worker: String,
    pub from_host: String,
    pub to_worker: String,
    pub to_host: String,
    /// The block's last sample stored before (the taker continued after
    /// it); none when none was.
    pub resumed_after: Option<u32>,
}

/// The shared work of a detached run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WorkSection {
    /// The machine the run was detached from (its recorded host).
    pub detached_on: String,
    /// Every host a block was measured on.
    pub hosts: Vec<String>,
    pub takeovers: Vec<TakeoverRow>,
}

impl RunReport {
    /// Adds the shared work: the header names the hosts the samples ran
    /// on, and the run's recorded host as where it was detached.
    pub fn with_work(mut self, work: WorkSection) -> RunReport {
        for (key, _) in &mut self.environment {
            if key == "host" {
                *key = "detached on".to_string();
            }
        }
        self.environment
            .insert(0, ("hosts".to_string(), work.hosts.join(", ")));
        self.work = Some(work);
        self
    }
}
