//! Multi-sample inputs for importing existing results (`verdict compare A B`
//! with files): a CSV column, hyperfine `--export-json`, and the Go benchmark
//! format that benchstat reads. Pure: text in, series of values out, in the
//! order they appear.

use std::collections::HashMap;

use serde::Deserialize;

use crate::error::{ParseError, excerpt, list_names};
use crate::number::parse_number;

/// Splits one CSV record (RFC 4180 quoting: `"a,b"`, `"say ""hi"""`).
/// Records spanning lines are not supported.
fn csv_record(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut characters = line.chars().peekable();
    let mut quoted = false;
    let mut at_field_start = true;
    while let Some(character) = characters.next() {
        if quoted {
            match character {
                '"' if characters.peek() == Some(&'"') => {
                    field.push('"');
                    characters.next();
                }
                '"' => quoted = false,
                other => field.push(other),
            }
        } else {
            match character {
                '"' if at_field_start => quoted = true,
                ',' => {
                    fields.push(std::mem::take(&mut field));
                    at_field_start = true;
                    continue;
                }
                other => field.push(other),
            }
        }
        at_field_start = false;
    }
    if quoted {
        return Err("expected a closing `\"`".to_string());
    }
    fields.push(field);
    Ok(fields)
}

/// The values of column `column` of a CSV file with a header line. Blank lines
/// are skipped; every other row must have the column and a number in it
/// (thousands separators and a unit suffix are tolerated).
pub fn csv_column(text: &str, column: &str) -> Result<Vec<f64>, ParseError> {
    let values = csv_cells(text, column)?
        .into_iter()
        .map(|cell| {
            parse_number(&cell.text)
                .map_err(|error| cell.malformed(format!("column `{column}`: {error}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if values.is_empty() {
        return Err(ParseError::EmptyOutput { format: CSV });
    }
    Ok(values)
}

/// The text of column `column` of a CSV file with a header line (say, the
/// time or commit labelling each value of a `csv_column`), trimmed, one per
/// non-blank row: the rows `csv_column` reads, in the same order.
pub fn csv_text_column(text: &str, column: &str) -> Result<Vec<String>, ParseError> {
    Ok(csv_cells(text, column)?
        .into_iter()
        .map(|cell| cell.text.trim().to_string())
        .collect())
}

const CSV: &str = "CSV";

/// One row's cell of the column being read, with where it came from.
struct CsvCell<'a> {
    /// 0-based line index in the file.
    index: usize,
    line: &'a str,
    text: String,
}

impl CsvCell<'_> {
    fn malformed(&self, message: String) -> ParseError {
        malformed_csv_line(self.index, self.line, message)
    }
}

fn malformed_csv_line(index: usize, line: &str, message: String) -> ParseError {
    ParseError::MalformedLine {
        format: CSV,
        line: index + 1,
        message,
        text: excerpt(line),
    }
}

/// The cells of column `column`, one per non-blank row after the header.
fn csv_cells<'a>(text: &'a str, column: &str) -> Result<Vec<CsvCell<'a>>, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty());
    let (header_index, header_line) = lines
        .next()
        .ok_or(ParseError::EmptyOutput { format: CSV })?;
    let header = csv_record(header_line.trim_end_matches('\r'))
        .map_err(|message| malformed_csv_line(header_index, header_line, message))?;
    let position = header
        .iter()
        .position(|name| name.trim() == column)
        .ok_or_else(|| ParseError::MissingColumn {
            column: column.to_string(),
            found: list_names(header.iter().map(|name| name.trim())),
        })?;
    lines
        .map(|(index, line)| {
            let record = csv_record(line.trim_end_matches('\r'))
                .map_err(|message| malformed_csv_line(index, line, message))?;
            match record.get(position) {
                Some(cell) => Ok(CsvCell {
                    index,
                    line,
                    text: cell.clone(),
                }),
                None => Err(malformed_csv_line(
                    index,
                    line,
                    format!("expected {} fields, found {}", header.len(), record.len()),
                )),
            }
        })
        .collect()
}

/// One benchmarked command of a hyperfine `--export-json` file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct HyperfineResult {
    pub command: String,
    /// Wall-clock seconds of every timed run, in run order.
    pub times: Vec<f64>,
    pub mean: Option<f64>,
    pub median: Option<f64>,
    #[serde(default)]
    pub exit_codes: Vec<Option<i64>>,
}

#[derive(Deserialize)]
struct HyperfineExport {
    results: Vec<HyperfineResult>,
}

/// Parses a hyperfine `--export-json` document.
pub fn hyperfine_json(text: &str) -> Result<Vec<HyperfineResult>, ParseError> {
    const FORMAT: &str = "hyperfine JSON";
    if text.trim().is_empty() {
        return Err(ParseError::EmptyOutput { format: FORMAT });
    }
    let export: HyperfineExport =
        serde_json::from_str(text).map_err(|error| ParseError::InvalidDocument {
            format: FORMAT,
            message: error.to_string(),
        })?;
    if export.results.is_empty() {
        return Err(ParseError::InvalidDocument {
            format: FORMAT,
            message: "expected at least one entry in `results`".to_string(),
        });
    }
    Ok(export.results)
}

/// The raw samples of one command: `command` names it, or `None` when the
/// file has a single command.
pub fn hyperfine_times(text: &str, command: Option<&str>) -> Result<Vec<f64>, ParseError> {
    let results = hyperfine_json(text)?;
    let names = || list_names(results.iter().map(|result| result.command.as_str()));
    let chosen = match command {
        None if results.len() == 1 => &results[0],
        None => {
            return Err(ParseError::NotFound {
                what: "the one hyperfine command",
                found: format!(
                    "the file has {} commands ({}); name one",
                    results.len(),
                    names()
                ),
            });
        }
        Some(wanted) => results
            .iter()
            .find(|result| result.command == wanted)
            .ok_or_else(|| ParseError::MissingSeries {
                format: "hyperfine",
                name: wanted.to_string(),
                found: format!("the file has {}", names()),
            })?,
    };
    Ok(chosen.times.clone())
}

/// One result line of the Go benchmark format.
#[derive(Debug, Clone, PartialEq)]
pub struct GoBenchResult {
    /// The name without the `Benchmark` prefix, with sub-benchmark parts and
    /// the `-N` GOMAXPROCS suffix (`Encode/format=json-48`), as benchstat keeps it.
    pub name: String,
    pub iterations: u64,
    /// (value, unit) pairs in the order printed: `(1726.0, "ns/op")`.
    pub values: Vec<(f64, String)>,
    /// The `key: value` configuration lines in effect for this result.
    pub configuration: Vec<(String, String)>,
    /// 1-based line number in the input.
    pub line: usize,
}

/// All values of one (benchmark name, unit) pair, in input order.
#[derive(Debug, Clone, PartialEq)]
pub struct GoBenchSeries {
    pub name: String,
    pub unit: String,
    pub values: Vec<f64>,
}

/// Parses the Go benchmark format
/// (<https://go.googlesource.com/proposal/+/master/design/14313-benchmark-format.md>):
/// configuration lines `key: value` (key starts with a lower-case letter and
/// has no spaces or upper-case letters) apply to the results after them;
/// result lines are `BenchmarkName N value unit [value unit...]`. Other lines
/// (`PASS`, `ok ...`, test logs, `Unit` metadata) are ignored. A line that
/// starts like a result but is not one is an error with its line number.
pub fn go_benchmarks(text: &str) -> Result<Vec<GoBenchResult>, ParseError> {
    const FORMAT: &str = "Go benchmark";
    if text.trim().is_empty() {
        return Err(ParseError::EmptyOutput { format: FORMAT });
    }
    let mut configuration: Vec<(String, String)> = Vec::new();
    let mut results = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if let Some((key, value)) = configuration_line(line) {
            configuration.retain(|(existing, _)| existing != key);
            if !value.is_empty() {
                configuration.push((key.to_string(), value.to_string()));
            }
            continue;
        }
        let Some(after_prefix) = line.strip_prefix("Benchmark") else {
            continue;
        };
        // "Benchmark" must be followed by the end or a non-lower-case letter.
        if after_prefix.chars().next().is_some_and(char::is_lowercase) {
            continue;
        }
        let malformed = |message: String| ParseError::MalformedLine {
            format: FORMAT,
            line: index + 1,
            message,
            text: excerpt(line),
        };
        let fields: Vec<&str> = after_prefix.split_whitespace().collect();
        if fields.len() < 4 || fields.len() % 2 != 0 {
            return Err(malformed(
                "expected a name, an iteration count and value-unit pairs".to_string(),
            ));
        }
        let iterations: u64 = fields[1].parse().map_err(|_| {
            malformed(format!(
                "expected an iteration count, found `{}`",
                fields[1]
            ))
        })?;
        let mut values = Vec::with_capacity(fields.len() / 2 - 1);
        for pair in fields[2..].chunks(2) {
            let value: f64 = pair[0]
                .parse()
                .ok()
                .filter(|value: &f64| value.is_finite())
                .ok_or_else(|| {
                    malformed(format!(
                        "expected a number before unit `{}`, found `{}`",
                        pair[1], pair[0]
                    ))
                })?;
            values.push((value, pair[1].to_string()));
        }
        results.push(GoBenchResult {
            name: fields[0].to_string(),
            iterations,
            values,
            configuration: configuration.clone(),
            line: index + 1,
        });
    }
    if results.is_empty() {
        return Err(ParseError::NotFound {
            what: "Go benchmark results",
            found: "no line is a `BenchmarkName N value unit` result".to_string(),
        });
    }
    Ok(results)
}

fn configuration_line(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(':')?;
    let mut characters = key.chars();
    if !characters.next()?.is_lowercase()
        || key.chars().any(|c| c.is_whitespace() || c.is_uppercase())
    {
        return None;
    }
    if !(value.is_empty() || value.starts_with([' ', '\t'])) {
        return None;
    }
    Some((key, value.trim()))
}

/// Groups results per (name, unit), in order of first appearance, values in
/// input order. Results with the same name under different configurations
/// (`note: before` / `note: after`) are kept apart only by the caller: use
/// [`GoBenchResult::configuration`] to split them first.
pub fn go_benchmark_series(results: &[GoBenchResult]) -> Vec<GoBenchSeries> {
    let mut series: Vec<GoBenchSeries> = Vec::new();
    let mut positions: HashMap<(String, String), usize> = HashMap::new();
    for result in results {
        for (value, unit) in &result.values {
            let key = (result.name.clone(), unit.clone());
            let position = *positions.entry(key).or_insert_with(|| {
                series.push(GoBenchSeries {
                    name: result.name.clone(),
                    unit: unit.clone(),
                    values: Vec::new(),
                });
                series.len() - 1
            });
            series[position].values.push(*value);
        }
    }
    series
}

/// The values of one benchmark (`name` with or without the `Benchmark`
/// prefix) in one unit.
pub fn go_benchmark_values(text: &str, name: &str, unit: &str) -> Result<Vec<f64>, ParseError> {
    let results = go_benchmarks(text)?;
    let name = name.strip_prefix("Benchmark").unwrap_or(name);
    let series = go_benchmark_series(&results);
    series
        .iter()
        .find(|series| series.name == name && series.unit == unit)
        .map(|series| series.values.clone())
        .ok_or_else(|| {
            let mut names: Vec<String> = Vec::new();
            for series in &series {
                let label = format!("{} ({})", series.name, series.unit);
                if !names.contains(&label) {
                    names.push(label);
                }
            }
            ParseError::MissingSeries {
                format: "Go benchmark",
                name: format!("{name} ({unit})"),
                found: format!(
                    "the input has {}",
                    list_names(names.iter().map(String::as_str))
                ),
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quoting() {
        assert_eq!(
            csv_record(r#"a,"b,c","say ""hi""",,"#).unwrap(),
            vec!["a", "b,c", "say \"hi\"", "", ""]
        );
        assert!(csv_record(r#"a,"b"#).is_err());
    }

    #[test]
    fn configuration_line_rules() {
        assert_eq!(configuration_line("goos: linux"), Some(("goos", "linux")));
        assert_eq!(
            configuration_line("note: hw acceleration disabled"),
            Some(("note", "hw acceleration disabled"))
        );
        assert_eq!(configuration_line("Unit ns/op assume=exact"), None);
        assert_eq!(
            configuration_line("cpu: Intel(R) Core(TM) i7"),
            Some(("cpu", "Intel(R) Core(TM) i7"))
        );
        assert_eq!(configuration_line("Goos: linux"), None);
        assert_eq!(configuration_line("has space: x"), None);
        assert_eq!(configuration_line("url:http"), None);
    }
}
