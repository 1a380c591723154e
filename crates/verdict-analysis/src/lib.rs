//! verdict-analysis: the typed analysis built from stored samples. Run
//! summaries, comparisons with their verdicts (multiplicity handled across
//! the family), pivots with their ratio bootstrap, boots decided with
//! the boot as the unit, and where a comparison's sides came from; every figure is computed through verdict-stats.
//! Never renders, no I/O, no clock: the models here are what
//! verdict-report renders, and their `Serialize` field names are the JSON
//! documents (`verdict.report/v1`, `verdict.compare/v1`,
//! `verdict.pivot/v1`, `verdict.explain/v1` and every other
//! `verdict.NAME/v1`), whose JSON Schemas `schema` derives.

pub mod bisect_log;
pub mod boots;
pub mod compare;
mod error;
pub mod explain;
mod explain_rows;
pub mod export;
pub mod flame;
pub mod history;
pub mod hosts;
pub mod pivot;
pub mod plan;
pub mod provenance;
pub mod run;
pub mod runs;
pub mod samples;
pub mod schema;
pub mod sequential;
pub mod simulate;
pub mod sources;
pub mod work;

pub use compare::{CompareReport, ComparisonRow, SideSummary, comparison_rows};
pub use error::AnalysisError;
pub use explain::{ExplainOptions, ExplainReport};
pub use explain_rows::{AnalysisUnit, HostTest};
pub use run::{CellRow, FailureRow, LeftoverRow, MissingRow, RunReport};
