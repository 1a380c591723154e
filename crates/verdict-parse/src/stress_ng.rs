//! stress-ng metrics: the text table printed by `--metrics-brief` and
//! `--metrics` (prefix `info:` up to 0.15.04, `metrc:` since 0.15.05, with or
//! without `--timestamp`), its "miscellaneous metrics" lines, and the
//! `metrics:` section of the `--yaml FILE` document. Pure: text in, rows out;
//! must not read the YAML file itself (the caller passes its contents).

use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;
use serde_yaml::Value;

use crate::error::{ParseError, list_names};
use crate::number::parse_number;

/// The six columns every stress-ng metrics table has, by their canonical
/// field names (the `--yaml` key names, where the YAML has the same value).
pub const STRESS_NG_FIELDS: [&str; 6] = [
    "bogo-ops",
    "real-time",
    "usr-time",
    "sys-time",
    "bogo-ops-per-second-real-time",
    "bogo-ops-per-second-usr-sys-time",
];

/// One stressor's metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct StressNgRow {
    pub stressor: String,
    pub bogo_ops: f64,
    /// Wall-clock seconds (`real time`; YAML `wall-clock-time`).
    pub real_time: f64,
    /// User CPU seconds (`usr time`; YAML `user-time`).
    pub usr_time: f64,
    /// System CPU seconds (`sys time`; YAML `system-time`).
    pub sys_time: f64,
    pub bogo_ops_per_second_real_time: f64,
    pub bogo_ops_per_second_usr_sys_time: f64,
    /// Further named values in the order found: `--metrics` columns
    /// (`cpu-usage-per-instance`, `max-rss`), miscellaneous metrics named by
    /// their description (`kill-calls-per-sec`), other YAML keys, and
    /// `column-N` for a text column this parser cannot name (N counts the
    /// stressor name as column 1).
    pub extra: Vec<(String, f64)>,
}

impl StressNgRow {
    /// Looks a value up by field name: one of [`STRESS_NG_FIELDS`], the YAML
    /// aliases `wall-clock-time`, `user-time`, `system-time`, or an extra name.
    pub fn field(&self, name: &str) -> Option<f64> {
        match canonical_field(name) {
            "bogo-ops" => Some(self.bogo_ops),
            "real-time" => Some(self.real_time),
            "usr-time" => Some(self.usr_time),
            "sys-time" => Some(self.sys_time),
            "bogo-ops-per-second-real-time" => Some(self.bogo_ops_per_second_real_time),
            "bogo-ops-per-second-usr-sys-time" => Some(self.bogo_ops_per_second_usr_sys_time),
            other => self
                .extra
                .iter()
                .find(|(extra_name, _)| extra_name == other)
                .map(|(_, value)| *value),
        }
    }

    /// Every field name this row answers to (canonical names only).
    pub fn field_names(&self) -> Vec<&str> {
        STRESS_NG_FIELDS
            .iter()
            .copied()
            .chain(self.extra.iter().map(|(name, _)| name.as_str()))
            .collect()
    }
}

fn canonical_field(name: &str) -> &str {
    match name {
        "wall-clock-time" => "real-time",
        "user-time" => "usr-time",
        "system-time" => "sys-time",
        "cpu-used-per-instance" => "cpu-usage-per-instance",
        other => other,
    }
}

/// `stress-ng: [HH:MM:SS.ss ]info:|metrc: [PID] rest`
static LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^stress-ng:\s+(?:\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\s+)?(?:info|metrc):\s*\[\d+\]\s?(?P<rest>.*)$")
        .expect("the stress-ng line pattern is valid")
});

/// `kill   583155.97 kill calls per sec (geometic mean of 1 instances)`
static MISCELLANEOUS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<stressor>\S+)\s+(?P<value>[0-9.,eE+-]+)\s+(?P<description>[^(]*?[A-Za-z][^(]*?)\s*(?:\(.*\))?\s*$")
        .expect("the stress-ng miscellaneous pattern is valid")
});

/// Parses every metrics row of stress-ng's text output (`--metrics-brief` or
/// `--metrics`). Lines without the stress-ng prefix (the workload's own
/// output, other tools) are ignored. Returns an error if there is no metrics
/// table at all, or if a row in the table is malformed.
pub fn stress_ng_text(output: &str) -> Result<Vec<StressNgRow>, ParseError> {
    const FORMAT: &str = "stress-ng";
    if output.trim().is_empty() {
        return Err(ParseError::EmptyOutput { format: FORMAT });
    }
    let mut rows: Vec<StressNgRow> = Vec::new();
    // Names of columns after the sixth, from the header of the current table.
    let mut extra_columns: Vec<&'static str> = Vec::new();
    let mut in_table = false;
    for (index, line) in output.lines().enumerate() {
        let Some(captures) = LINE.captures(line) else {
            continue;
        };
        let rest = captures.name("rest").map_or("", |m| m.as_str()).trim();
        let tokens: Vec<&str> = rest.split_whitespace().collect();
        if tokens.first() == Some(&"stressor") && rest.contains("bogo ops") {
            in_table = true;
            extra_columns = extra_column_names(rest);
            continue;
        }
        if !in_table || tokens.is_empty() {
            continue;
        }
        if tokens.len() >= 7 && tokens[1..].iter().all(|token| looks_numeric(token)) {
            let values = tokens[1..]
                .iter()
                .map(|token| parse_number(token))
                .collect::<Result<Vec<f64>, _>>()
                .map_err(|error| malformed(index, line, &error.to_string()))?;
            let extra = values[6..]
                .iter()
                .enumerate()
                .map(|(position, value)| {
                    let name = extra_columns.get(position).map_or_else(
                        || format!("column-{}", position + 8),
                        |name| (*name).to_string(),
                    );
                    (name, *value)
                })
                .collect();
            rows.push(StressNgRow {
                stressor: tokens[0].to_string(),
                bogo_ops: values[0],
                real_time: values[1],
                usr_time: values[2],
                sys_time: values[3],
                bogo_ops_per_second_real_time: values[4],
                bogo_ops_per_second_usr_sys_time: values[5],
                extra,
            });
            continue;
        }
        if tokens.len() >= 2
            && looks_numeric(tokens[1])
            && rows.iter().any(|row| row.stressor == tokens[0])
        {
            // Either a miscellaneous metric ("kill 583155.97 kill calls per
            // sec (...)") or a row whose numbers are cut short.
            match MISCELLANEOUS.captures(rest) {
                Some(misc)
                    if !looks_numeric(
                        misc["description"].split_whitespace().next().unwrap_or(""),
                    ) =>
                {
                    let value = parse_number(&misc["value"])
                        .map_err(|error| malformed(index, line, &error.to_string()))?;
                    let name = slug(&misc["description"]);
                    if let Some(row) = rows.iter_mut().rev().find(|row| row.stressor == tokens[0]) {
                        row.extra.push((name, value));
                    }
                }
                _ => {
                    return Err(malformed(
                        index,
                        line,
                        &format!(
                            "expected a stressor name and at least 6 numbers, found {} fields",
                            tokens.len()
                        ),
                    ));
                }
            }
        }
    }
    if rows.is_empty() {
        return Err(ParseError::NotFound {
            what: "a stress-ng metrics table",
            found: "no `stressor bogo ops ...` header followed by rows (was --metrics-brief or --metrics given?)"
                .to_string(),
        });
    }
    Ok(rows)
}

fn malformed(index: usize, line: &str, message: &str) -> ParseError {
    ParseError::MalformedLine {
        format: "stress-ng",
        line: index + 1,
        message: message.to_string(),
        text: crate::error::excerpt(line),
    }
}

fn looks_numeric(token: &str) -> bool {
    token
        .bytes()
        .next()
        .is_some_and(|byte| byte.is_ascii_digit() || byte == b'-' || byte == b'.')
        && token.bytes().all(|byte| {
            byte.is_ascii_digit() || matches!(byte, b'.' | b',' | b'-' | b'+' | b'e' | b'E')
        })
}

/// Names the columns after the sixth from the header text. stress-ng has
/// printed `CPU used per instance (%)` and then `RSS Max (KB)` there.
fn extra_column_names(header: &str) -> Vec<&'static str> {
    let mut names = Vec::new();
    if header.contains("CPU used per") {
        names.push("cpu-usage-per-instance");
    }
    if header.contains("RSS Max") {
        names.push("max-rss");
    }
    names
}

/// "kill calls per sec" -> "kill-calls-per-sec", the YAML spelling.
fn slug(description: &str) -> String {
    description
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_lowercase)
        .collect::<Vec<_>>()
        .join("-")
}

/// Parses the `metrics:` section of a stress-ng `--yaml` document, or of
/// each of several concatenated documents, in order.
pub fn stress_ng_yaml(document: &str) -> Result<Vec<StressNgRow>, ParseError> {
    const FORMAT: &str = "stress-ng YAML";
    if document.trim().is_empty() {
        return Err(ParseError::EmptyOutput { format: FORMAT });
    }
    let invalid = |message: String| ParseError::InvalidDocument {
        format: FORMAT,
        message,
    };
    // Several files concatenated (`cat run-*.yaml`) are several documents;
    // their rows are returned in order.
    let mut entries: Vec<Value> = Vec::new();
    let mut documents_with_metrics = 0;
    for yaml_document in serde_yaml::Deserializer::from_str(document) {
        let root = Value::deserialize(yaml_document).map_err(|error| invalid(error.to_string()))?;
        let Some(metrics) = root.get("metrics") else {
            continue;
        };
        documents_with_metrics += 1;
        let list = metrics
            .as_sequence()
            .ok_or_else(|| invalid("expected `metrics:` to be a list of stressors".to_string()))?;
        entries.extend(list.iter().cloned());
    }
    if documents_with_metrics == 0 {
        return Err(invalid(
            "expected a `metrics:` section (was --metrics or --metrics-brief given?)".to_string(),
        ));
    }
    let mut rows = Vec::with_capacity(entries.len());
    for (position, entry) in entries.iter().enumerate() {
        let map = entry.as_mapping().ok_or_else(|| {
            invalid(format!(
                "expected metrics entry {} to be a map",
                position + 1
            ))
        })?;
        let stressor = map
            .get("stressor")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                invalid(format!(
                    "expected metrics entry {} to have a `stressor` name",
                    position + 1
                ))
            })?
            .to_string();
        let mut values: Vec<(String, f64)> = Vec::new();
        for (key, value) in map {
            let Some(key) = key.as_str() else { continue };
            if key == "stressor" {
                continue;
            }
            let number = match value {
                Value::Number(number) => number.as_f64(),
                Value::String(text) => parse_number(text).ok(),
                _ => None,
            };
            if let Some(number) = number {
                values.push((canonical_field(key).to_string(), number));
            }
        }
        let mut take = |name: &str| -> Result<f64, ParseError> {
            let index = values
                .iter()
                .position(|(key, _)| key == name)
                .ok_or_else(|| {
                    invalid(format!(
                        "expected stressor `{stressor}` to have a numeric `{name}`"
                    ))
                })?;
            Ok(values.remove(index).1)
        };
        rows.push(StressNgRow {
            bogo_ops: take("bogo-ops")?,
            real_time: take("real-time")?,
            usr_time: take("usr-time")?,
            sys_time: take("sys-time")?,
            bogo_ops_per_second_real_time: take("bogo-ops-per-second-real-time")?,
            bogo_ops_per_second_usr_sys_time: take("bogo-ops-per-second-usr-sys-time")?,
            extra: values,
            stressor,
        });
    }
    if rows.is_empty() {
        return Err(invalid(
            "expected at least one stressor under `metrics:`".to_string(),
        ));
    }
    Ok(rows)
}

/// Finds one row: the named stressor's, or the only row when `stressor` is
/// `None`. Two rows for the same stressor are ambiguous and an error.
pub fn select_row<'a>(
    rows: &'a [StressNgRow],
    stressor: Option<&str>,
) -> Result<&'a StressNgRow, ParseError> {
    let names = || list_names(rows.iter().map(|row| row.stressor.as_str()));
    match stressor {
        None => match rows {
            [only] => Ok(only),
            _ => Err(ParseError::AmbiguousStressor {
                found: format!("the output has {} rows ({})", rows.len(), names()),
            }),
        },
        Some(wanted) => {
            let mut matching = rows.iter().filter(|row| row.stressor == wanted);
            let first = matching.next().ok_or_else(|| ParseError::MissingStressor {
                stressor: wanted.to_string(),
                found: format!("the output has rows for {}", names()),
            })?;
            if matching.next().is_some() {
                return Err(ParseError::AmbiguousStressor {
                    found: format!("the output has more than one row for stressor `{wanted}`"),
                });
            }
            Ok(first)
        }
    }
}

/// Looks up one value: the `field` of the row for `stressor`.
pub fn stress_ng_value(
    rows: &[StressNgRow],
    stressor: Option<&str>,
    field: &str,
) -> Result<f64, ParseError> {
    let row = select_row(rows, stressor)?;
    row.field(field).ok_or_else(|| ParseError::MissingField {
        format: "stress-ng",
        field: field.to_string(),
        found: format!(
            "stressor `{}` has {}",
            row.stressor,
            list_names(row.field_names())
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slug_matches_yaml_spelling() {
        assert_eq!(slug("kill calls per sec"), "kill-calls-per-sec");
        assert_eq!(slug("nanoseconds per call"), "nanoseconds-per-call");
    }

    #[test]
    fn short_row_is_an_error_with_line_number() {
        let text = "stress-ng: metrc: [1] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s\n\
                    stress-ng: metrc: [1] kill 100 2.00 0.1 1.0 50.0 90.9\n\
                    stress-ng: metrc: [1] kill 100 2.00\n";
        let error = stress_ng_text(text).unwrap_err();
        assert!(
            matches!(error, ParseError::MalformedLine { line: 3, .. }),
            "{error}"
        );
    }

    #[test]
    fn lines_before_the_table_and_without_prefix_are_ignored() {
        let text = "kill 1 2 3 4 5 6\nstress-ng: info:  [9] kill 1 2 3 4 5 6\n";
        assert!(matches!(
            stress_ng_text(text),
            Err(ParseError::NotFound { .. })
        ));
    }
}
