//! Where the two sides of a comparison came from (`verdict compare`'s
//! `sources`), the provenance model: a file, or the runs and cells a
//! stored selection pooled, with its value count and time span. Its serde
//! form is the JSON document's `sources` entries. Pure data; verdict-report
//! renders it as text or markdown lines.

use schemars::JsonSchema;
use serde::Serialize;

/// One side of a comparison, as the JSON document's `sources` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Source {
    /// `baseline` or `candidate`.
    pub side: String,
    /// The side as the user wrote it.
    pub spec: String,
    #[serde(flatten)]
    pub kind: SourceKind,
}

/// A file, or a stored selection with what it pooled.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SourceKind {
    File,
    Selection {
        runs: Vec<i64>,
        cells: usize,
        values: usize,
        first_at_ms: i64,
        last_at_ms: i64,
    },
}
