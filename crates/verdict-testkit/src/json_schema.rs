//! JSON Schema checks for the tests of verdict's documents: [`compare`]
//! tells a committed schema from a regenerated one (a field removed,
//! renamed or retyped breaks the "a `v1` schema only gains fields"
//! promise; a new one means the committed file is out of date), and
//! [`validate`] checks a document against a schema (the subset of JSON
//! Schema that verdict's derived schemas use: `type`, `properties`,
//! `required`, `additionalProperties`, `items`/`prefixItems` and their
//! counts, `enum`/`const`, `minimum`, `anyOf`/`oneOf` and `$ref`s into
//! `$defs`).
//!
//! Must not: read or write files (the tests do).

use serde_json::{Map, Value};

/// How a regenerated schema differs from the committed one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Difference {
    /// A committed property is gone (removed or renamed): the promise is broken.
    Removed(String),
    /// A property kept its name but not its type (or a value set changed).
    Changed(String),
    /// A new property: the committed schema is out of date.
    Added(String),
    /// Only words (descriptions) or definition names differ.
    Described(String),
}

impl Difference {
    /// Whether the difference breaks "a v1 schema only gains fields".
    pub fn breaks_promise(&self) -> bool {
        matches!(self, Difference::Removed(_) | Difference::Changed(_))
    }
}

impl std::fmt::Display for Difference {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Difference::Removed(path) => write!(
                formatter,
                "{path}: removed or renamed (a v1 schema only gains fields)"
            ),
            Difference::Changed(path) => write!(
                formatter,
                "{path}: its type changed (a v1 schema only gains fields)"
            ),
            Difference::Added(path) => write!(
                formatter,
                "{path}: new; update the committed schema (VERDICT_WRITE_SCHEMAS=1)"
            ),
            Difference::Described(path) => write!(
                formatter,
                "{path}: described differently; update the committed schema (VERDICT_WRITE_SCHEMAS=1)"
            ),
        }
    }
}

/// Every difference of `generated` from `committed`, following `$ref`s
/// in each into its own `$defs` (so a renamed Rust type is no change).
pub fn compare(committed: &Value, generated: &Value) -> Vec<Difference> {
    let mut differences = Vec::new();
    let mut walk = Walk {
        committed_root: committed,
        generated_root: generated,
        seen: Vec::new(),
        differences: &mut differences,
    };
    walk.node(committed, generated, "$");
    if differences.is_empty() && committed != generated {
        differences.push(Difference::Described("$defs".to_string()));
    }
    differences
}

struct Walk<'a, 'd> {
    committed_root: &'a Value,
    generated_root: &'a Value,
    /// Pairs of definitions compared already (recursive types).
    seen: Vec<(String, String)>,
    differences: &'d mut Vec<Difference>,
}

impl<'a> Walk<'a, '_> {
    fn node(&mut self, committed: &'a Value, generated: &'a Value, path: &str) {
        let (committed, committed_ref) = resolve(self.committed_root, committed);
        let (generated, generated_ref) = resolve(self.generated_root, generated);
        if let (Some(old), Some(new)) = (&committed_ref, &generated_ref) {
            let pair = (old.clone(), new.clone());
            if self.seen.contains(&pair) {
                return;
            }
            self.seen.push(pair);
        }
        let (Value::Object(old), Value::Object(new)) = (committed, generated) else {
            if committed != generated {
                self.differences.push(Difference::Changed(path.to_string()));
            }
            return;
        };
        let keys: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
        for key in keys {
            let here = format!("{path}.{key}");
            match (key.as_str(), old.get(key), new.get(key)) {
                ("$defs" | "$schema", _, _) => {}
                ("description" | "title", old, new) => {
                    if old != new {
                        self.differences.push(Difference::Described(here));
                    }
                }
                ("properties", Some(Value::Object(old)), Some(Value::Object(new))) => {
                    self.properties(old, new, path);
                }
                ("required", old, new) => {
                    let list = |value: Option<&Value>| -> Vec<String> {
                        let mut names: Vec<String> = value
                            .and_then(Value::as_array)
                            .map(|names| {
                                names
                                    .iter()
                                    .filter_map(|name| name.as_str().map(str::to_string))
                                    .collect()
                            })
                            .unwrap_or_default();
                        names.sort();
                        names
                    };
                    let (old, new) = (list(old), list(new));
                    // A property's own addition or removal is reported
                    // under `properties`; here only a change of status.
                    let old_properties = self.property_names(committed);
                    let new_properties = self.property_names(generated);
                    for name in old.iter().filter(|name| !new.contains(name)) {
                        if new_properties.contains(name) {
                            self.differences
                                .push(Difference::Changed(format!("{path}.{name} (now optional)")));
                        }
                    }
                    for name in new.iter().filter(|name| !old.contains(name)) {
                        if old_properties.contains(name) {
                            self.differences
                                .push(Difference::Changed(format!("{path}.{name} (now required)")));
                        }
                    }
                }
                (_, Some(old), Some(new)) => match (old, new) {
                    (Value::Array(old_items), Value::Array(new_items))
                        if old_items.len() == new_items.len()
                            && old_items.iter().chain(new_items).all(Value::is_object) =>
                    {
                        for (index, (old, new)) in old_items.iter().zip(new_items).enumerate() {
                            self.node(old, new, &format!("{here}[{index}]"));
                        }
                    }
                    (Value::Object(_), Value::Object(_)) => self.node(old, new, &here),
                    _ if old != new => self.differences.push(Difference::Changed(here)),
                    _ => {}
                },
                (_, Some(_), None) => self.differences.push(Difference::Changed(here)),
                (_, None, Some(_)) => self.differences.push(Difference::Changed(here)),
                (_, None, None) => {}
            }
        }
    }

    fn properties(&mut self, old: &'a Map<String, Value>, new: &'a Map<String, Value>, path: &str) {
        for (name, committed) in old {
            let here = format!("{path}.{name}");
            match new.get(name) {
                Some(generated) => self.node(committed, generated, &here),
                None => self.differences.push(Difference::Removed(here)),
            }
        }
        for name in new.keys().filter(|name| !old.contains_key(*name)) {
            self.differences
                .push(Difference::Added(format!("{path}.{name}")));
        }
    }

    fn property_names(&self, schema: &Value) -> Vec<String> {
        schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// `schema` with its `$ref` (to `#/$defs/NAME` of `root`) followed, and
/// the name it referred to.
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> (&'a Value, Option<String>) {
    let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
        return (schema, None);
    };
    let name = reference.trim_start_matches("#/$defs/");
    match root
        .get("$defs")
        .and_then(|definitions| definitions.get(name))
    {
        Some(definition) => (definition, Some(name.to_string())),
        None => (schema, None),
    }
}

/// Every place `document` does not conform to `schema` (empty: it does),
/// for the keywords the derived schemas use: `type`, `properties`,
/// `required`, `additionalProperties`, `items`, `prefixItems`,
/// `minItems`, `maxItems`, `enum`, `const`, `minimum`, `$ref`, `allOf`,
/// `anyOf` and `oneOf`. Others (`format`, `description`) are ignored.
pub fn validate(schema: &Value, document: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    check(schema, schema, document, "$", &mut errors);
    errors
}

fn check(root: &Value, schema: &Value, value: &Value, path: &str, errors: &mut Vec<String>) {
    let schema = resolve(root, schema).0;
    let Value::Object(keywords) = schema else {
        if schema == &Value::Bool(false) {
            errors.push(format!("{path}: not allowed"));
        }
        return;
    };
    if let Some(types) = keywords.get("type") {
        let allowed: Vec<&str> = match types {
            Value::String(name) => vec![name.as_str()],
            Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !allowed.iter().any(|name| has_type(value, name)) {
            errors.push(format!("{path}: {value} is not {}", allowed.join(" or ")));
            return;
        }
    }
    if let Some(constant) = keywords.get("const")
        && constant != value
    {
        errors.push(format!("{path}: {value} is not {constant}"));
    }
    if let Some(Value::Array(values)) = keywords.get("enum")
        && !values.contains(value)
    {
        errors.push(format!("{path}: {value} is not one of {values:?}"));
    }
    if let (Some(minimum), Some(number)) = (
        keywords.get("minimum").and_then(Value::as_f64),
        value.as_f64(),
    ) && number < minimum
    {
        errors.push(format!("{path}: {number} is below {minimum}"));
    }
    if let Value::Object(fields) = value {
        check_object(root, keywords, fields, path, errors);
    }
    if let Value::Array(items) = value {
        check_array(root, keywords, items, path, errors);
    }
    if let Some(Value::Array(all)) = keywords.get("allOf") {
        for schema in all {
            check(root, schema, value, path, errors);
        }
    }
    for (keyword, exactly_one) in [("anyOf", false), ("oneOf", true)] {
        if let Some(Value::Array(choices)) = keywords.get(keyword) {
            let outcomes: Vec<Vec<String>> = choices
                .iter()
                .map(|choice| {
                    let mut inner = Vec::new();
                    check(root, choice, value, path, &mut inner);
                    inner
                })
                .collect();
            let matching = outcomes.iter().filter(|inner| inner.is_empty()).count();
            if matching == 0 || (exactly_one && matching > 1) {
                errors.push(format!(
                    "{path}: matches {matching} of the {} choices of {keyword}",
                    choices.len()
                ));
                // Why each choice failed: the closest one names the field.
                for (index, inner) in outcomes.iter().enumerate() {
                    for error in inner {
                        errors.push(format!("  choice {index}: {error}"));
                    }
                }
            }
        }
    }
}

fn check_object(
    root: &Value,
    keywords: &Map<String, Value>,
    fields: &Map<String, Value>,
    path: &str,
    errors: &mut Vec<String>,
) {
    let properties = keywords.get("properties").and_then(Value::as_object);
    if let Some(Value::Array(required)) = keywords.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !fields.contains_key(name) {
                errors.push(format!("{path}: `{name}` is missing"));
            }
        }
    }
    for (name, field) in fields {
        let here = format!("{path}.{name}");
        match properties.and_then(|properties| properties.get(name)) {
            Some(schema) => check(root, schema, field, &here, errors),
            None => {
                if let Some(additional) = keywords.get("additionalProperties") {
                    check(root, additional, field, &here, errors);
                }
            }
        }
    }
}

fn check_array(
    root: &Value,
    keywords: &Map<String, Value>,
    items: &[Value],
    path: &str,
    errors: &mut Vec<String>,
) {
    let count = |keyword: &str| keywords.get(keyword).and_then(Value::as_u64);
    if count("minItems").is_some_and(|minimum| (items.len() as u64) < minimum)
        || count("maxItems").is_some_and(|maximum| (items.len() as u64) > maximum)
    {
        errors.push(format!("{path}: {} items", items.len()));
    }
    let prefix = keywords
        .get("prefixItems")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    for (index, item) in items.iter().enumerate() {
        let here = format!("{path}[{index}]");
        match prefix.get(index) {
            Some(schema) => check(root, schema, item, &here, errors),
            None => {
                if let Some(schema) = keywords.get("items") {
                    check(root, schema, item, &here, errors);
                }
            }
        }
    }
}

fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "number" => value.is_number(),
        // 3.0 is an integer too (JSON Schema counts values, not spellings).
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|x| x.fract() == 0.0)
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_property_breaks_the_promise_and_a_new_one_asks_for_an_update() {
        let old = serde_json::json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a", "b"]});
        let new = serde_json::json!({"type": "object", "properties": {"a": {"type": "integer"}, "c": {"type": "string"}}, "required": ["a", "c"]});
        let differences = compare(&old, &new);
        assert!(
            differences.contains(&Difference::Removed("$.b".to_string())),
            "{differences:?}"
        );
        assert!(
            differences.contains(&Difference::Added("$.c".to_string())),
            "{differences:?}"
        );
        let retyped = serde_json::json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a", "b"]});
        assert_eq!(
            compare(&old, &retyped),
            vec![Difference::Changed("$.a.type".to_string())]
        );
    }

    #[test]
    fn validation_names_the_place() {
        let schema = serde_json::json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}, "x": {"type": ["number", "null"]}}, "required": ["n"]});
        assert!(validate(&schema, &serde_json::json!({"n": 3, "x": null})).is_empty());
        let errors = validate(&schema, &serde_json::json!({"n": -1, "x": "a"}));
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert_eq!(
            validate(&schema, &serde_json::json!({})),
            vec!["$: `n` is missing".to_string()]
        );
    }
}
