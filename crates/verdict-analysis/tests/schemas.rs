//! The committed JSON Schemas (`docs/schemas/verdict.NAME.v1.json`) are
//! the document types' schemas, and a `v1` schema only gains fields: each
//! is regenerated from its type and compared with the committed file. A
//! committed property removed, renamed or retyped fails (whatever the
//! environment says); a new one fails with "update the committed schema"
//! until `VERDICT_WRITE_SCHEMAS=1 cargo test -p verdict-analysis --test
//! schemas` rewrites the files (so they stay current). Then a real
//! document (the compare snapshot the CLI tests review) is checked against
//! them; the binary's `schema_documents` test checks every command's
//! output.

use serde_json::Value;
use std::path::{Path, PathBuf};
use verdict_analysis::schema::{file_name, generate, schemas};
use verdict_testkit::json_schema::{Difference, compare, validate};

fn directory() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schemas")
}

/// Every document's schema, doctor's (verdict-doctor's type) included.
fn generated() -> Vec<(&'static str, Value)> {
    let mut all = schemas();
    all.push((
        verdict_doctor::report::SCHEMA,
        generate::<verdict_doctor::DoctorReport>(),
    ));
    all.into_iter()
        .map(|(name, schema)| (name, schema.to_value()))
        .collect()
}

fn committed(name: &str) -> Option<Value> {
    let text = std::fs::read_to_string(directory().join(file_name(name))).ok()?;
    Some(serde_json::from_str(&text).expect("a committed schema is JSON"))
}

#[test]
fn committed_schemas_only_gain_fields_and_are_current() {
    let write = std::env::var("VERDICT_WRITE_SCHEMAS").is_ok_and(|value| value == "1");
    let mut problems = Vec::new();
    for (name, schema) in generated() {
        let differences = match committed(name) {
            Some(old) => compare(&old, &schema),
            None => vec![Difference::Added(format!("{name} (no committed schema)"))],
        };
        let breaking: Vec<&Difference> = differences
            .iter()
            .filter(|difference| difference.breaks_promise())
            .collect();
        if !breaking.is_empty() {
            // Never rewritten: a field a v1 consumer reads must stay.
            problems.extend(
                breaking
                    .iter()
                    .map(|difference| format!("{name}: {difference}")),
            );
        } else if write && !differences.is_empty() {
            let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
            std::fs::create_dir_all(directory()).unwrap();
            // Whole or not at all: the other tests read these files.
            let path = directory().join(file_name(name));
            let partial = path.with_extension("json.partial");
            std::fs::write(&partial, text).unwrap();
            std::fs::rename(&partial, &path).unwrap();
        } else {
            problems.extend(
                differences
                    .iter()
                    .map(|difference| format!("{name}: {difference}")),
            );
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_committed_schema_is_a_document_s() {
    let names: Vec<String> = generated()
        .iter()
        .map(|(name, _)| file_name(name))
        .collect();
    for entry in std::fs::read_dir(directory()).unwrap() {
        let file = entry.unwrap().file_name().to_string_lossy().to_string();
        assert!(names.contains(&file), "{file} is no document's schema");
    }
}

/// A removed or renamed field is caught even though the rest of the
/// schema matches: the committed compare schema against itself without
/// one property, then with it renamed.
#[test]
fn a_removed_or_renamed_field_fails() {
    let old = committed("verdict.compare/v1").expect("committed compare schema");
    let mut removed = old.clone();
    let properties = removed["$defs"]["ComparisonRow"]["properties"]
        .as_object_mut()
        .expect("ComparisonRow has properties");
    let p_value = properties.remove("p_value").expect("p_value is a field");
    let differences = compare(&old, &removed);
    assert!(
        differences
            .iter()
            .any(|difference| difference.breaks_promise()
                && difference
                    .to_string()
                    .contains("p_value: removed or renamed")),
        "{differences:?}"
    );
    properties_of(&mut removed).insert("pvalue".to_string(), p_value);
    let differences = compare(&old, &removed);
    assert!(
        differences
            .iter()
            .any(|difference| difference.breaks_promise()),
        "{differences:?}"
    );
    assert!(
        differences.iter().any(|difference| difference
            .to_string()
            .contains("update the committed schema")),
        "{differences:?}"
    );
}

fn properties_of(schema: &mut Value) -> &mut serde_json::Map<String, Value> {
    schema["$defs"]["ComparisonRow"]["properties"]
        .as_object_mut()
        .unwrap()
}

/// The compare document the CLI tests review (insta snapshot) conforms.
#[test]
fn the_reviewed_compare_document_conforms() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../verdict/tests/snapshots/compare_cli__old_new_json.snap");
    let text = std::fs::read_to_string(path).unwrap();
    // An insta snapshot: a `---` header, then the document.
    let body = text.splitn(3, "---\n").nth(2).expect("snapshot body");
    let document: Value = serde_json::from_str(body).unwrap();
    let schema = committed("verdict.compare/v1").unwrap();
    let errors = validate(&schema, &document);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}
