//! Importing samples from a results file (`verdict compare A B` with
//! files): which format the file holds, told from its name and its text,
//! and its values as named series. Formats: a CSV column (`column` given),
//! hyperfine `--export-json`, stress-ng `--yaml` (several documents
//! pooled), the Go benchmark format, or plain numbers.
//!
//! Must not: read the file (the caller passes its name and text) or decide
//! anything about the values.

use crate::error::ParseError;
use crate::extractor::go_unit_direction;
use crate::number::plain_numbers;
use crate::samples::{csv_column, go_benchmark_series, go_benchmarks, hyperfine_json};
use crate::stress_ng::stress_ng_yaml;
use verdict_stats::verdict::Better;

/// One series of values read from a file.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedSeries {
    pub name: String,
    pub unit: String,
    /// `None` when the format does not say (a CSV column, plain numbers).
    pub direction: Option<Better>,
    pub values: Vec<f64>,
}

/// The series in `text`, a file named `file_name` (its extension picks the
/// format where the text does not; its stem names an unnamed series).
/// `column` reads that CSV column; a `.csv` file without one is an error.
pub fn import(
    file_name: &str,
    text: &str,
    column: Option<&str>,
) -> Result<Vec<ImportedSeries>, ParseError> {
    let path = std::path::Path::new(file_name);
    let extension = path
        .extension()
        .and_then(|extension| extension.to_str())
        .unwrap_or("");
    let stem = path
        .file_stem()
        .and_then(|stem| stem.to_str())
        .unwrap_or("value")
        .to_string();
    if let Some(column) = column {
        return Ok(vec![ImportedSeries {
            name: column.to_string(),
            unit: String::new(),
            direction: None,
            values: csv_column(text, column)?,
        }]);
    }
    if extension == "csv" {
        return Err(ParseError::CsvWithoutColumn);
    }
    if extension == "json" || text.trim_start().starts_with('{') {
        return Ok(hyperfine_json(text)?
            .into_iter()
            .map(|result| ImportedSeries {
                name: if result.command.is_empty() {
                    stem.clone()
                } else {
                    result.command
                },
                unit: "s".to_string(),
                direction: Some(Better::Lower),
                values: result.times,
            })
            .collect());
    }
    if extension == "yaml"
        || extension == "yml"
        || text
            .lines()
            .any(|line| line.trim_start().starts_with("metrics:"))
    {
        let mut series: Vec<ImportedSeries> = Vec::new();
        for document in text
            .split("\n---")
            .filter(|document| document.contains("metrics:"))
        {
            for row in stress_ng_yaml(document)? {
                let name = format!("{} bogo-ops/s", row.stressor);
                let value = row.bogo_ops_per_second_real_time;
                match series.iter_mut().find(|existing| existing.name == name) {
                    Some(existing) => existing.values.push(value),
                    None => series.push(ImportedSeries {
                        name,
                        unit: "bogo-ops/s".to_string(),
                        direction: Some(Better::Higher),
                        values: vec![value],
                    }),
                }
            }
        }
        return Ok(series);
    }
    if text.lines().any(|line| line.starts_with("Benchmark")) {
        return Ok(go_benchmark_series(&go_benchmarks(text)?)
            .into_iter()
            .map(|series| ImportedSeries {
                direction: Some(go_unit_direction(&series.unit)),
                name: format!("{} {}", series.name, series.unit),
                unit: series.unit,
                values: series.values,
            })
            .collect());
    }
    Ok(vec![ImportedSeries {
        name: stem,
        unit: String::new(),
        direction: None,
        values: plain_numbers(text)?,
    }])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_follows_the_text_and_the_name() {
        let hyperfine = r#"{"results": [{"command": "sleep 0.1", "times": [0.1, 0.11]}]}"#;
        let series = import("base.json", hyperfine, None).unwrap();
        assert_eq!(series[0].name, "sleep 0.1");
        assert_eq!(series[0].direction, Some(Better::Lower));
        assert_eq!(series[0].values, vec![0.1, 0.11]);

        let go = "BenchmarkSort-8 \t 100 \t 1200 ns/op \t 80 MB/s\n";
        let series = import("go.txt", go, None).unwrap();
        let names: Vec<_> = series
            .iter()
            .map(|series| (series.name.as_str(), series.direction))
            .collect();
        assert!(
            names.contains(&("Sort-8 ns/op", Some(Better::Lower))),
            "{names:?}"
        );
        assert!(names.contains(&("Sort-8 MB/s", Some(Better::Higher))));

        let series = import("plain.txt", "1.5\n# note\n2.5\n", None).unwrap();
        assert_eq!(
            (series[0].name.as_str(), series[0].values.clone()),
            ("plain", vec![1.5, 2.5])
        );

        let csv = "run,ms\n1,3.5\n2,4.5\n";
        assert_eq!(
            import("t.csv", csv, Some("ms")).unwrap()[0].values,
            vec![3.5, 4.5]
        );
        assert_eq!(
            import("t.csv", csv, None).unwrap_err().to_string(),
            "a CSV file needs --column NAME"
        );
    }
}
