//! Where the two sides of a comparison came from (`verdict compare`'s
//! `sources`) as text or markdown lines. The model (`Source`,
//! `SourceKind`: a file, or the runs and cells a stored selection pooled)
//! is verdict-analysis's, re-exported here under its old path. Renders
//! only: the runs and counts are given.

use crate::Format;
pub use verdict_analysis::sources::{Source, SourceKind};

/// Text or markdown lines naming where each stored side came from; empty
/// for CSV, JSON, and two files.
pub fn render(sources: &[Source], format: Format) -> String {
    if !matches!(format, Format::Text | Format::Markdown) {
        return String::new();
    }
    let mut lines = String::new();
    for source in sources {
        let SourceKind::Selection {
            runs,
            cells,
            values,
            ..
        } = &source.kind
        else {
            continue;
        };
        let runs: Vec<String> = runs.iter().map(i64::to_string).collect();
        let line = format!(
            "{} `{}`: {values} values from {} {}{}",
            source.side,
            source.spec,
            if runs.len() == 1 { "run" } else { "runs" },
            runs.join(", "),
            if *cells > 1 {
                format!(" ({cells} cells pooled)")
            } else {
                String::new()
            }
        );
        let line = crate::escape::text(&line);
        if format == Format::Markdown {
            lines.push_str(&format!("- {line}\n"));
        } else {
            lines.push_str(&format!("{line}\n"));
        }
    }
    if lines.is_empty() {
        lines
    } else {
        format!("\n{lines}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources() -> Vec<Source> {
        vec![
            Source {
                side: "baseline".to_string(),
                spec: "old.txt".to_string(),
                kind: SourceKind::File,
            },
            Source {
                side: "candidate".to_string(),
                spec: "mode=fast".to_string(),
                kind: SourceKind::Selection {
                    runs: vec![3, 5],
                    cells: 2,
                    values: 12,
                    first_at_ms: 1,
                    last_at_ms: 2,
                },
            },
        ]
    }

    #[test]
    fn stored_sides_are_named_with_their_runs_and_files_are_not() {
        assert_eq!(
            render(&sources(), Format::Text),
            "\ncandidate `mode=fast`: 12 values from runs 3, 5 (2 cells pooled)\n"
        );
        assert_eq!(
            render(&sources(), Format::Markdown),
            "\n- candidate `mode=fast`: 12 values from runs 3, 5 (2 cells pooled)\n"
        );
        assert_eq!(render(&sources(), Format::Csv), "");
        assert_eq!(render(&sources()[..1], Format::Text), "");
    }

    #[test]
    fn the_json_entries_keep_their_field_names() {
        let json = serde_json::to_value(sources()).unwrap();
        assert_eq!(
            json,
            serde_json::json!([
                {"side": "baseline", "spec": "old.txt", "kind": "file"},
                {"side": "candidate", "spec": "mode=fast", "kind": "selection",
                 "runs": [3, 5], "cells": 2, "values": 12, "first_at_ms": 1, "last_at_ms": 2}
            ])
        );
    }
}
