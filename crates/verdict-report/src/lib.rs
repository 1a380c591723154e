//! verdict-report: pure renderers. A report model in, text out: plain ASCII
//! for email (80 columns where the data allows), markdown, CSV and JSON with
//! a named schema. No I/O, no clock, no database, no statistics: the models
//! (and their building from samples) are verdict-analysis's, re-exported
//! here under their old paths.

pub mod boots;
pub mod compare;
pub mod email;
pub mod escape;
pub mod explain;
pub mod export;
pub mod format;
pub mod hosts;
pub mod html;
pub mod pivot;
pub mod provenance;
pub mod run;
pub mod sequential;
pub mod simulate;
pub mod sources;
pub mod table;
pub mod time;

pub use verdict_analysis::{samples, work};

pub use compare::{CompareReport, ComparisonRow, SideSummary, comparison_rows};
pub use format::Format;
pub use run::{CellRow, FailureRow, LeftoverRow, MissingRow, RunReport};
