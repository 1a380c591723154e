//! The JSON documents' schemas: every `verdict.NAME/v1` document is a type
//! of this crate (doctor's is verdict-doctor's `DoctorReport`, which this
//! crate does not depend on), its JSON Schema derived from that type
//! (schemars) and committed as `docs/schemas/verdict.NAME.v1.json`. The
//! promise: a `v1` schema only gains fields (the tests hold each committed
//! schema against the types: verdict-testkit's `json_schema`). [`sorted`]
//! prints the documents whose keys have always been in alphabetical order.
//!
//! Must not: describe anything the printed documents do not carry.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde::Serialize;
use serde_json::Value;

use crate::bisect_log::BisectLogDocument;
use crate::compare::CompareDocument;
use crate::explain::ExplainReport;
use crate::export::ExportDocument;
use crate::history::HistoryDocument;
use crate::hosts::{GroupReport, HostsDocument};
use crate::pivot::PivotReport;
use crate::plan::PlanDocument;
use crate::run::RunReport;
use crate::runs::RunsDocument;
use crate::sequential::SequentialCompareReport;
use crate::simulate::{BootOutput, SimulateOutput};

/// A document as serde_json's map orders it: keys in alphabetical order
/// at every level (serde_json's `Map` is a `BTreeMap`: this workspace never
/// enables its `preserve_order`, and [`tests`] checks it). The
/// `history`, `runs`, `plan`, `bisect-log`, `hosts` and sequential
/// `compare` documents have always printed so.
pub fn sorted<T: Serialize>(document: &T) -> Result<Value, serde_json::Error> {
    serde_json::to_value(document)
}

/// `#[serde(serialize_with)]` for a field printed as [`sorted`] prints it.
pub fn serialize_sorted<T: Serialize, S: serde::Serializer>(
    value: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    sorted(value)
        .map_err(serde::ser::Error::custom)?
        .serialize(serializer)
}

/// What the printer adds after a document's own fields (`verdict
/// runs`, `report` and `compare`): the warnings about where the
/// measurements came from.
#[derive(Debug, JsonSchema)]
pub struct WithWarnings<T> {
    #[serde(flatten)]
    pub document: T,
    pub warnings: Vec<DocumentWarning>,
}

/// One warning, as far as every kind has it (each kind adds the figures
/// behind its message).
#[derive(Debug, JsonSchema)]
pub struct DocumentWarning {
    /// `overlapping_runs` or `different_runs`.
    pub kind: String,
    pub message: String,
}

/// `verdict.compare/v1`: the fixed design's comparisons, or their
/// sequential replay (`--sequential`).
#[derive(Debug, JsonSchema)]
#[serde(untagged)]
pub enum CompareDocuments<'a> {
    Fixed(CompareDocument<'a>),
    Sequential(SequentialCompareReport),
}

/// Every document's name (`verdict.NAME/v1`) and its schema, as the types
/// make it now. doctor's schema is generated from verdict-doctor.
pub fn schemas() -> Vec<(&'static str, Schema)> {
    vec![
        ("verdict.bisect-log/v1", generate::<BisectLogDocument>()),
        (
            "verdict.compare/v1",
            generate::<WithWarnings<CompareDocuments<'static>>>(),
        ),
        ("verdict.explain/v1", generate::<ExplainReport>()),
        ("verdict.export/v1", generate::<ExportDocument<'static>>()),
        ("verdict.group/v1", generate::<GroupReport<'static>>()),
        ("verdict.history/v1", generate::<HistoryDocument>()),
        ("verdict.hosts/v1", generate::<HostsDocument>()),
        ("verdict.pivot/v1", generate::<WithWarnings<PivotReport>>()),
        ("verdict.plan/v1", generate::<PlanDocument>()),
        ("verdict.report/v1", generate::<WithWarnings<RunReport>>()),
        ("verdict.runs/v1", generate::<WithWarnings<RunsDocument>>()),
        ("verdict.simulate/v1", generate::<SimulateOutput<'static>>()),
        (
            "verdict.simulate_boots/v1",
            generate::<BootOutput<'static>>(),
        ),
    ]
}

/// The schema of `T` as verdict prints it (draft 2020-12, definitions
/// under `$defs`): a field serde skips when empty is optional, every
/// other one required.
pub fn generate<T: JsonSchema>() -> Schema {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
}

/// The file a schema is committed as: `verdict.NAME.v1.json`.
pub fn file_name(name: &str) -> String {
    format!("{}.json", name.replace('/', "."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Unordered {
        zebra: u8,
        apple: u8,
    }

    /// The documents printed through [`sorted`] rely on serde_json's map
    /// ordering keys; a dependency enabling `preserve_order` would change
    /// their bytes.
    #[test]
    fn sorted_orders_keys_alphabetically() {
        let text =
            serde_json::to_string(&sorted(&Unordered { zebra: 1, apple: 2 }).unwrap()).unwrap();
        assert_eq!(text, r#"{"apple":2,"zebra":1}"#);
    }
}
