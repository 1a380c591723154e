//! verdict-doctor: measures a machine's noise and names its sources before an
//! experiment, and captures the run environment stored with every run.
//!
//! Layout: `parse` holds pure parsers of /proc and /sys contents; `files`
//! is the one outside effect (a `SystemFiles` trait with a real and a
//! fixture implementation); `snapshot` reads what the checks need into a
//! map; `facts` and `checks` are pure functions of snapshots; `noise` is the
//! pure statistics of the calibration probe; `probe` runs it; `report` is
//! the serializable result and its text rendering. Must not: print to the
//! terminal, start processes, or change the machine (fixes are printed as
//! commands for the user, never run).

pub mod checks;
pub mod environment;
pub mod facts;
pub mod files;
pub mod noise;
pub mod parse;
pub mod probe;
pub mod report;
pub mod snapshot;

pub use environment::capture_environment;
pub use files::{FileRead, FixtureFiles, RealFiles, SystemFiles};
pub use report::{DoctorOptions, DoctorReport, ProbeLength, run_doctor, run_doctor_with};

/// Failures of doctor's own inputs (fixture directories). Inspecting a
/// machine never fails: unreadable facts are reported, not raised.
#[derive(Debug, thiserror::Error)]
pub enum DoctorError {
    /// A fixture file or directory could not be read.
    #[error("read fixture {path}: {source}")]
    ReadFixture {
        path: String,
        #[source]
        source: std::io::Error,
    },
}
