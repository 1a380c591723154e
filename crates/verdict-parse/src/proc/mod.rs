//! /proc readers as pure functions over file contents, and the monitors
//! built on them: two snapshots of the system's counter files in, the
//! counters' deltas over the iteration out (`counters`). Must not read
//! files.

mod counters;
pub mod interrupts;
pub mod stat;
pub mod vmstat;

pub use counters::{
    CounterFile, CounterUnit, WORKLOAD_INVOLUNTARY_SWITCHES, WORKLOAD_VOLUNTARY_SWITCHES,
    counter_deltas, counter_unit,
};
