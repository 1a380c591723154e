//! The page around the pictures: one self-contained HTML document with a
//! strict Content-Security-Policy (nothing external, no script), inline CSS
//! for light, dark (prefers-color-scheme) and print, and the shared pieces
//! every HTML report uses: fact lists, tables, the environment side by side
//! and the comparison table.
//! Must not: reference anything outside the document (no URLs, fonts,
//! scripts or sibling files) or emit unescaped user text.

use super::escape;
use crate::compare::{
    CompareReport, Verdict, delta_with_interval, median_with_spread, verdict_text,
};
use crate::format;
use std::fmt::Write as _;

/// Content-Security-Policy of every page: nothing may be fetched or run.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

const STYLE: &str = r#"
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #57606a; --bg: #ffffff; --panel: #f6f8fa;
  --line: #d0d7de; --grid: #e3e7eb; --dot: #24527a; --box: #9fb8d0; --band: #dff0d8;
  --regression: #b42318; --improvement: #1a7f37; --equivalent: #2f5fb3; --inconclusive: #6e7781;
  --outlier: #b35c00; --trend: #6f42c1; --failed: #b42318; --differs: #fff3cd; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #9da7b3; --bg: #0d1117; --panel: #161b22; --line: #30363d;
    --grid: #21262d; --dot: #79c0ff; --box: #2d4f73; --band: #1f3a26; --regression: #ff7b72;
    --improvement: #56d364; --equivalent: #79a6ff; --inconclusive: #9da7b3; --outlier: #ffa657;
    --trend: #d2a8ff; --failed: #ff7b72; --differs: #4b3a00; }
}
@media print {
  :root { --fg: #000; --muted: #333; --bg: #fff; --panel: #fff; --line: #999; --grid: #ddd;
    --dot: #1f4e79; --box: #c6d6e6; --band: #e4f2e0; --differs: #fff0b3; }
  section { break-inside: avoid; }
  svg.plot { max-width: 100%; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1240px; padding: 16px 20px 40px; background: var(--bg); color: var(--fg);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; }
h1 { font-size: 22px; margin: 8px 0 4px; overflow-wrap: anywhere; }
h3 { font-size: 15px; margin: 18px 0 6px; }
h2 { font-size: 17px; margin: 26px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 3px; }
p.lead, p.note { color: var(--muted); margin: 4px 0 10px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 8px 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 6px 0 12px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: right; vertical-align: top; }
th { background: var(--panel); text-align: left; }
td.text, th.text { text-align: left; overflow-wrap: anywhere; }
td:first-child { white-space: nowrap; }
table.environment { width: 100%; }
table.environment th { text-align: left; }
table.environment.sided td:last-child { white-space: nowrap; font-weight: 600; }
.changed { color: var(--outlier); }
tr.differs td { background: var(--differs); }
pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12px; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.verdict { white-space: nowrap; font-weight: 600; }
.verdict::before { content: ""; display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.35em; vertical-align: -0.05em; border-radius: 2px; background: currentColor; }
.regression { color: var(--regression); } .improvement { color: var(--improvement); }
.equivalent { color: var(--equivalent); } .inconclusive { color: var(--inconclusive); }
svg.plot { display: block; width: 100%; height: auto; margin: 6px 0 14px; font-size: 13px; }
svg.plot text { fill: var(--fg); }
svg.plot text.tick, svg.plot text.note, svg.plot text.axis-title { fill: var(--muted); font-size: 12px; }
svg.plot .grid { stroke: var(--grid); stroke-width: 1; }
svg.plot .frame { fill: none; stroke: var(--line); }
svg.plot .zero { stroke: var(--fg); stroke-width: 1.2; }
svg.plot .band { fill: var(--band); }
svg.plot .interval { stroke: currentColor; stroke-width: 2.2; }
svg.plot .estimate { fill: currentColor; }
svg.plot g.row text.verdict-word { fill: currentColor; font-weight: 600; }
svg.plot .box { fill: var(--box); fill-opacity: 0.55; stroke: var(--muted); }
svg.plot .whisker { stroke: var(--muted); stroke-width: 1.2; }
svg.plot .median { stroke: var(--fg); stroke-width: 2.5; }
svg.plot .dot { fill: var(--dot); fill-opacity: 0.7; }
svg.plot .dot.outlier { fill: var(--outlier); fill-opacity: 1; }
svg.plot .moving-median { fill: none; stroke: var(--trend); stroke-width: 2; }
svg.plot .failed { stroke: var(--failed); stroke-width: 2; fill: none; }
svg.plot text.failed-mark { fill: var(--failed); font-weight: 600; }
.legend span { margin-right: 14px; white-space: nowrap; }
.swatch { display: inline-block; width: 0.9em; height: 0.9em; vertical-align: -0.1em; margin-right: 4px; border-radius: 2px; }
"#;

/// A page being assembled.
#[derive(Debug)]
pub struct Page {
    body: String,
    title: String,
}

impl Page {
    pub fn new(title: &str) -> Page {
        let mut page = Page {
            body: String::new(),
            title: title.to_string(),
        };
        let _ = writeln!(page.body, "<h1>{}</h1>", escape::text(title));
        page
    }

    /// Raw markup built by this module (already escaped).
    pub fn push(&mut self, markup: &str) {
        self.body.push_str(markup);
    }

    /// A section heading.
    pub fn heading(&mut self, text: &str, id: &str) {
        self.heading_at(2, text, id);
    }

    /// A heading of `level` (2 or 3) with an id unique in the page.
    pub fn heading_at(&mut self, level: u8, text: &str, id: &str) {
        let _ = writeln!(
            self.body,
            "<h{level} id=\"{}\">{}</h{level}>",
            escape::text(id),
            escape::text(text)
        );
    }

    /// A muted paragraph of plain text.
    pub fn note(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p class=\"note\">{}</p>", escape::text(text));
    }

    pub fn finish(self) -> String {
        let mut output = String::with_capacity(self.body.len() + STYLE.len() + 600);
        let _ = write!(
            output,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<meta http-equiv=\"Content-Security-Policy\" content=\"{CONTENT_SECURITY_POLICY}\"/>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<meta name=\"generator\" content=\"verdict\"/>\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{}<footer><p class=\"note\">Generated by verdict: one self-contained file, no scripts, nothing fetched.</p></footer>\n</body>\n</html>\n",
            escape::text(&self.title),
            self.body
        );
        output
    }
}

/// `<dl>` of label/value facts (both escaped).
pub fn facts(pairs: &[(String, String)]) -> String {
    let mut output = String::from("<dl class=\"facts\">");
    for (label, value) in pairs {
        let _ = write!(
            output,
            "<dt>{}</dt><dd>{}</dd>",
            escape::text(label),
            escape::text(value)
        );
    }
    output.push_str("</dl>\n");
    output
}

/// A table cell's content and alignment.
#[derive(Debug, Clone)]
pub enum Cell {
    /// Left-aligned text.
    Text(String),
    /// Right-aligned number-like text.
    Number(String),
    /// A verdict: its class colours it, the text says it.
    Verdict { class: VerdictClass, text: String },
    /// Preformatted text (output tails).
    Pre(String),
}

/// A table with a header row; `row_classes` optional per row.
pub fn table(header: &[&str], rows: &[(Vec<Cell>, Option<&str>)], class: &str) -> String {
    let mut output = format!("<div class=\"scroll\"><table class=\"{class}\"><thead><tr>");
    for (index, title) in header.iter().enumerate() {
        let _ = write!(
            output,
            "<th{}>{}</th>",
            if index == 0 { " class=\"text\"" } else { "" },
            escape::text(title)
        );
    }
    output.push_str("</tr></thead><tbody>");
    for (cells, row_class) in rows {
        match row_class {
            Some(row_class) => {
                let _ = write!(output, "<tr class=\"{row_class}\">");
            }
            None => output.push_str("<tr>"),
        }
        for cell in cells {
            match cell {
                Cell::Text(text) => {
                    let _ = write!(output, "<td class=\"text\">{}</td>", escape::text(text));
                }
                Cell::Number(text) => {
                    let _ = write!(output, "<td>{}</td>", escape::text(text));
                }
                Cell::Verdict { class, text } => {
                    let _ = write!(
                        output,
                        "<td class=\"text\"><span class=\"verdict {}\">{}</span></td>",
                        class.css(),
                        escape::text(text)
                    );
                }
                Cell::Pre(text) => {
                    let _ = write!(
                        output,
                        "<td class=\"text\"><pre>{}</pre></td>",
                        escape::text(text)
                    );
                }
            }
        }
        output.push_str("</tr>");
    }
    output.push_str("</tbody></table></div>\n");
    output
}

/// How a page colours a verdict: the CSS class of a verdict cell or a
/// forest-plot row. Every page builds it from a typed word (a comparison's
/// [`Verdict`], a change across hosts, a bisection's class, a doctor
/// check), never from the text it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerdictClass {
    Regression,
    Improvement,
    Equivalent,
    /// A pivot's ratio changed (it has no good side).
    Changed,
    Inconclusive,
}

impl VerdictClass {
    /// The CSS class (the page's style colours each).
    pub const fn css(self) -> &'static str {
        match self {
            VerdictClass::Regression => "regression",
            VerdictClass::Improvement => "improvement",
            VerdictClass::Equivalent => "equivalent",
            VerdictClass::Changed => "changed",
            VerdictClass::Inconclusive => "inconclusive",
        }
    }
}

/// A comparison's verdict is coloured as itself.
impl From<Verdict> for VerdictClass {
    fn from(verdict: Verdict) -> Self {
        match verdict {
            Verdict::Regression => VerdictClass::Regression,
            Verdict::Improvement => VerdictClass::Improvement,
            Verdict::Equivalent => VerdictClass::Equivalent,
            Verdict::Inconclusive => VerdictClass::Inconclusive,
        }
    }
}

/// An element id made of `text`: ASCII letters and digits kept, every
/// other character a `-`.
pub fn anchor(text: &str) -> String {
    text.chars()
        .map(|character| {
            if character.is_ascii_alphanumeric() {
                character.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// One column of the environment table: a title (`run 3 start`, a host)
/// and its `(key, value)` lines.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvironmentColumn {
    pub title: String,
    pub lines: Vec<(String, String)>,
}

/// The environment, side by side when there are several columns that
/// differ, with differing rows highlighted and marked in words; a single
/// column when they agree.
pub fn environment(columns: &[EnvironmentColumn]) -> String {
    let mut keys: Vec<&str> = Vec::new();
    for column in columns {
        for (key, _) in &column.lines {
            if !keys.contains(&key.as_str()) {
                keys.push(key);
            }
        }
    }
    if keys.is_empty() {
        return "<p class=\"note\">No environment was recorded.</p>\n".to_string();
    }
    let value = |column: &EnvironmentColumn, key: &str| {
        column
            .lines
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.clone())
    };
    let differs = |key: &str| {
        columns
            .windows(2)
            .any(|pair| value(&pair[0], key) != value(&pair[1], key))
    };
    let any_difference = keys.iter().any(|key| differs(key));
    let shown: Vec<&EnvironmentColumn> = if any_difference {
        columns.iter().collect()
    } else {
        columns.iter().take(1).collect()
    };
    let mut header: Vec<String> = vec!["".to_string()];
    if any_difference {
        header.extend(shown.iter().map(|column| column.title.clone()));
        header.push("".to_string());
    } else if columns.len() > 1 {
        header.push(format!(
            "{} (identical in all {})",
            columns
                .iter()
                .map(|column| column.title.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            columns.len()
        ));
    } else {
        header.push(columns[0].title.clone());
    }
    let rows: Vec<(Vec<Cell>, Option<&str>)> = keys
        .iter()
        .map(|key| {
            let mut cells = vec![Cell::Text(key.to_string())];
            for column in &shown {
                cells.push(Cell::Text(
                    value(column, key).unwrap_or_else(|| "-".to_string()),
                ));
            }
            let different = any_difference && differs(key);
            if any_difference {
                cells.push(Cell::Text(if different {
                    "differs".to_string()
                } else {
                    String::new()
                }));
            }
            (cells, different.then_some("differs"))
        })
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    table(
        &header,
        &rows,
        if any_difference {
            "environment sided"
        } else {
            "environment"
        },
    )
}

/// The comparison table, cell for cell what the text report prints (same
/// verdicts, same intervals, same words), with the verdict coloured.
pub fn comparison_table(report: &CompareReport) -> String {
    let mut output = String::new();
    for line in crate::compare::header(report).lines() {
        let _ = writeln!(output, "<p class=\"note\">{}</p>", escape::text(line));
    }
    let rows: Vec<(Vec<Cell>, Option<&str>)> = report
        .comparisons
        .iter()
        .map(|row| {
            (
                vec![
                    Cell::Text(row.name.clone()),
                    Cell::Number(median_with_spread(&row.baseline, &row.unit)),
                    Cell::Number(median_with_spread(&row.candidate, &row.unit)),
                    Cell::Number(delta_with_interval(row)),
                    Cell::Number(if row.p_value >= report.alpha {
                        format!("~ {}", format::p_value(row.p_value))
                    } else {
                        format::p_value(row.p_value)
                    }),
                    Cell::Number(format!("{}+{}", row.baseline.n, row.candidate.n)),
                    Cell::Verdict {
                        class: row.verdict.into(),
                        text: verdict_text(row),
                    },
                ],
                None,
            )
        })
        .collect();
    output.push_str(&table(
        &[
            "name",
            "baseline",
            "candidate",
            "delta [interval]",
            "p",
            "n",
            "verdict",
        ],
        &rows,
        "comparisons",
    ));
    output
}

/// The legend under a forest plot, in words.
pub fn forest_legend() -> String {
    "<p class=\"legend note\"><span><span class=\"swatch\" style=\"background: var(--band)\"></span>threshold band (practically zero)</span><span class=\"verdict regression\">regression</span> <span class=\"verdict improvement\">improvement</span> <span class=\"verdict equivalent\">equivalent</span> <span class=\"verdict inconclusive\">inconclusive</span><span>square: Hodges-Lehmann delta; bar: its interval</span></p>\n".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A comparison's verdict is coloured by the class of its own name, as
    /// the pages always were.
    #[test]
    fn a_verdict_has_the_class_of_its_name() {
        for verdict in [
            Verdict::Regression,
            Verdict::Improvement,
            Verdict::Equivalent,
            Verdict::Inconclusive,
        ] {
            assert_eq!(VerdictClass::from(verdict).css(), verdict.as_str());
        }
    }
}
