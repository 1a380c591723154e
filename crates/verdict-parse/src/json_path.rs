//! A small JSON path: dotted keys and array indices, enough to point at one
//! number in a tool's JSON output. Pure: a document in, a number out.
//!
//! Syntax: `results[0].mean`, `$.results[0].mean` (a leading `$` or `$.` is
//! optional), `stats["p99.9"]` for keys containing `.` or `[`, `times[-1]`
//! for the last element (negative indices count from the end). A key is any
//! run of characters other than `.` `[` `]`.

use serde_json::Value;

use crate::error::ParseError;
use crate::number::parse_number;

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonPathStep {
    Key(String),
    Index(i64),
}

/// Parses a path expression into steps.
pub fn parse_json_path(path: &str) -> Result<Vec<JsonPathStep>, ParseError> {
    let invalid = |message: &str| ParseError::InvalidJsonPath {
        path: path.to_string(),
        message: message.to_string(),
    };
    let mut rest = path.trim();
    if let Some(stripped) = rest.strip_prefix('$') {
        rest = stripped.strip_prefix('.').unwrap_or(stripped);
    }
    if rest.is_empty() {
        return Err(invalid("expected at least one key or index"));
    }
    let mut steps = Vec::new();
    let mut expect_key = true;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let close = after.find(']').ok_or_else(|| invalid("expected `]`"))?;
            let inside = after[..close].trim();
            if let Some(quoted) = inside
                .strip_prefix('"')
                .and_then(|text| text.strip_suffix('"'))
                .or_else(|| {
                    inside
                        .strip_prefix('\'')
                        .and_then(|text| text.strip_suffix('\''))
                })
            {
                steps.push(JsonPathStep::Key(quoted.to_string()));
            } else {
                let index: i64 = inside.parse().map_err(|_| {
                    invalid(&format!(
                        "expected an integer index or a quoted key in `[{inside}]`"
                    ))
                })?;
                steps.push(JsonPathStep::Index(index));
            }
            rest = &after[close + 1..];
            expect_key = false;
        } else if let Some(after) = rest.strip_prefix('.') {
            if expect_key {
                return Err(invalid("expected a key before `.`"));
            }
            rest = after;
            expect_key = true;
            if rest.is_empty() {
                return Err(invalid("expected a key after `.`"));
            }
        } else {
            if !expect_key {
                return Err(invalid("expected `.` or `[` between steps"));
            }
            let end = rest.find(['.', '[', ']']).unwrap_or(rest.len());
            if end == 0 {
                return Err(invalid("expected a key"));
            }
            steps.push(JsonPathStep::Key(rest[..end].to_string()));
            rest = &rest[end..];
            expect_key = false;
        }
    }
    Ok(steps)
}

/// Follows `path` in `document` and returns the number there (a JSON number
/// or a string holding one). If the whole text is not one JSON document, the
/// last non-empty line is tried, for tools that log before printing JSON.
pub fn json_path_value(document: &str, path: &str) -> Result<f64, ParseError> {
    let steps = parse_json_path(path)?;
    if document.trim().is_empty() {
        return Err(ParseError::EmptyOutput { format: "JSON" });
    }
    let root: Value = match serde_json::from_str(document) {
        Ok(value) => value,
        Err(whole_error) => document
            .lines()
            .rev()
            .find(|line| !line.trim().is_empty())
            .and_then(|line| serde_json::from_str(line).ok())
            .ok_or_else(|| ParseError::InvalidDocument {
                format: "JSON",
                message: whole_error.to_string(),
            })?,
    };
    let not_found = |message: String| ParseError::JsonPathNotFound {
        path: path.to_string(),
        message,
    };
    let mut current = &root;
    let mut walked = String::from("$");
    for step in &steps {
        current = match step {
            JsonPathStep::Key(key) => {
                let object = current.as_object().ok_or_else(|| {
                    not_found(format!("`{walked}` is {}, not an object", kind(current)))
                })?;
                let next = object.get(key).ok_or_else(|| {
                    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
                    keys.sort_unstable();
                    not_found(format!(
                        "`{walked}` has no key `{key}` (it has {})",
                        crate::error::list_names(keys)
                    ))
                })?;
                walked.push('.');
                walked.push_str(key);
                next
            }
            JsonPathStep::Index(index) => {
                let array = current.as_array().ok_or_else(|| {
                    not_found(format!("`{walked}` is {}, not an array", kind(current)))
                })?;
                let length = array.len() as i64;
                let position = if *index < 0 { length + index } else { *index };
                let next = usize::try_from(position)
                    .ok()
                    .and_then(|position| array.get(position))
                    .ok_or_else(|| {
                        not_found(format!(
                            "`{walked}` has {length} elements, index {index} is out of range"
                        ))
                    })?;
                walked.push_str(&format!("[{index}]"));
                next
            }
        };
    }
    match current {
        Value::Number(number) => number
            .as_f64()
            .ok_or_else(|| not_found("the number does not fit an f64".to_string())),
        Value::String(text) => parse_number(text)
            .map_err(|error| not_found(format!("the string there is not a number ({error})"))),
        other => Err(not_found(format!(
            "expected a number, found {}",
            kind(other)
        ))),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_syntax() {
        use JsonPathStep::{Index, Key};
        assert_eq!(
            parse_json_path("$.results[0].mean").unwrap(),
            vec![Key("results".into()), Index(0), Key("mean".into())]
        );
        assert_eq!(
            parse_json_path("a[\"p99.9\"][-1]").unwrap(),
            vec![Key("a".into()), Key("p99.9".into()), Index(-1)]
        );
        for bad in ["", "$", "a..b", "a.", ".a", "a[x]", "a[0", "a[0]b", "a]"] {
            assert!(parse_json_path(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn follows_paths_and_explains_misses() {
        let document =
            r#"{"results": [{"mean": 1.5, "times": [1, 2, 3], "name": "x", "p": "2,000"}]}"#;
        assert_eq!(json_path_value(document, "results[0].mean").unwrap(), 1.5);
        assert_eq!(
            json_path_value(document, "results[0].times[-1]").unwrap(),
            3.0
        );
        assert_eq!(json_path_value(document, "results[0].p").unwrap(), 2000.0);
        let error = json_path_value(document, "results[0].median").unwrap_err();
        assert_eq!(
            error.to_string(),
            "follow JSON path `results[0].median`: `$.results[0]` has no key `median` (it has `mean`, `name`, `p`, `times`)"
        );
        assert!(json_path_value(document, "results[1].mean").is_err());
        assert!(json_path_value(document, "results[0].name").is_err());
        assert!(json_path_value(document, "results.mean").is_err());
        let logged = "starting\n{\"ops\": 42}\n";
        assert_eq!(json_path_value(logged, "ops").unwrap(), 42.0);
        assert!(matches!(
            json_path_value("not json", "ops"),
            Err(ParseError::InvalidDocument { .. })
        ));
    }
}
