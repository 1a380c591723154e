//! The one error type of verdict-parse. Every message is a lowercase fragment
//! that reads after "failed to" and names what was expected and what was found.
//! This file must not format user-facing text beyond the messages themselves.

use thiserror::Error;

/// Why an extractor could not produce a value.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ParseError {
    /// A CSV file was imported without naming its column.
    #[error("a CSV file needs --column NAME")]
    CsvWithoutColumn,

    /// `extract_from` was asked for a metric file: the caller reads files.
    #[error(
        "read metric file `{path}`: verdict-parse reads no files; pass its text to `Extractor::extract_text`"
    )]
    FileNotRead { path: String },

    /// The stream the extractor reads was empty (or only whitespace).
    #[error("parse {format} output: the output is empty")]
    EmptyOutput { format: &'static str },

    /// A line that had to be well formed was not.
    #[error("parse line {line} of {format} output: {message}: `{text}`")]
    MalformedLine {
        format: &'static str,
        line: usize,
        message: String,
        text: String,
    },

    /// A piece of text that had to be a number was not.
    #[error("parse `{text}` as a number: {message}")]
    NotANumber { text: String, message: String },

    /// The output has none of what the format needs: no metrics table, no
    /// result lines, no report.
    #[error("find {what} in the output: {found}")]
    NotFound { what: &'static str, found: String },

    /// stress-ng output without a row for the requested stressor.
    #[error("find a stress-ng metrics row for stressor `{stressor}`: {found}")]
    MissingStressor { stressor: String, found: String },

    /// No stressor was named and the output has several (or duplicate) rows.
    #[error("choose a stress-ng metrics row: {found}; name the stressor")]
    AmbiguousStressor { found: String },

    /// A field name that the format does not have.
    #[error("read {format} field `{field}`: {found}")]
    MissingField {
        format: &'static str,
        field: String,
        found: String,
    },

    /// perf stat output without the requested event.
    #[error("find perf stat event `{event}`: {found}")]
    MissingEvent { event: String, found: String },

    /// perf printed `<not supported>` or `<not counted>` for the event: the
    /// value is missing, never zero.
    #[error("read perf stat event `{event}`: perf printed `{printed}`, so the value is missing")]
    CounterUnavailable { event: String, printed: String },

    /// A regular expression that does not compile.
    #[error("compile regex `{pattern}`: {message}")]
    InvalidRegex { pattern: String, message: String },

    /// A regular expression that compiled but matched nothing usable.
    #[error("match regex `{pattern}` in the output: {found}")]
    NoMatch { pattern: String, found: String },

    /// A JSON path expression with bad syntax.
    #[error("parse JSON path `{path}`: {message}")]
    InvalidJsonPath { path: String, message: String },

    /// A JSON path that does not lead to a number in the document.
    #[error("follow JSON path `{path}`: {message}")]
    JsonPathNotFound { path: String, message: String },

    /// A document that is not valid JSON or YAML, or not of the expected shape.
    #[error("parse {format} document: {message}")]
    InvalidDocument {
        format: &'static str,
        message: String,
    },

    /// A CSV header without the requested column.
    #[error("find CSV column `{column}`: the header has {found}")]
    MissingColumn { column: String, found: String },

    /// A Go benchmark result or hyperfine command that is not in the input.
    #[error("find {format} series `{name}`: {found}")]
    MissingSeries {
        format: &'static str,
        name: String,
        found: String,
    },

    /// A single-value extractor found several values.
    #[error("extract one {format} value: found {count} values")]
    TooManyValues { format: &'static str, count: usize },

    /// An extractor description that cannot work (empty name, unknown field).
    #[error("validate the {format} extractor: {message}")]
    InvalidExtractor {
        format: &'static str,
        message: String,
    },
}

impl ParseError {
    /// Whether the tool ran and reported that it could not measure the
    /// value (perf's `<not supported>` and `<not counted>`): a missing value
    /// of that one metric, not a broken iteration. Every other error (an
    /// event or field that is not in the output at all, text that is not a
    /// number) means the output is not what the experiment expects.
    pub fn is_missing_value(&self) -> bool {
        matches!(self, ParseError::CounterUnavailable { .. })
    }
}

/// Lists names for an error message, shortened so that a huge output does not
/// produce a huge message.
pub(crate) fn list_names<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    const LIMIT: usize = 12;
    let names: Vec<&str> = names.into_iter().collect();
    let mut shown: Vec<String> = names
        .iter()
        .take(LIMIT)
        .map(|name| format!("`{name}`"))
        .collect();
    if names.len() > LIMIT {
        shown.push(format!("and {} more", names.len() - LIMIT));
    }
    shown.join(", ")
}

/// Shortens a line quoted in an error message.
pub(crate) fn excerpt(text: &str) -> String {
    const LIMIT: usize = 120;
    let trimmed = text.trim_end();
    if trimmed.chars().count() <= LIMIT {
        trimmed.to_string()
    } else {
        let mut shortened: String = trimmed.chars().take(LIMIT).collect();
        shortened.push_str("...");
        shortened
    }
}
