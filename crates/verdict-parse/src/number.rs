//! Tolerant number parsing ("69,107", "1.23s", "-4.5e3 ns/op") and the plain
//! one-number-per-line format. Pure: text in, `f64` out. Must not guess at
//! units: a unit suffix is accepted and ignored, never used to scale.

use std::sync::LazyLock;

use regex::Regex;

use crate::error::{ParseError, excerpt};

/// A number with optional sign, optional thousands separators in groups of
/// exactly three digits, optional fraction and exponent, then optionally a
/// single unit token such as `s`, `ms`, `%`, `ns/op` or `MB/s`.
static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?P<number>[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*(?P<unit>[A-Za-z%µμ/][A-Za-z0-9%µμ/()._-]*)?$",
    )
    .expect("the number pattern is valid")
});

/// Parses one number, tolerating thousands separators (`69,107`) and a
/// trailing unit (`1.23s`, `56 B/op`, `94%`), which is ignored.
///
/// Rejects NaN, infinities, an empty string, a comma that is not a thousands
/// separator (`1,5`), and anything else around the number.
pub fn parse_number(text: &str) -> Result<f64, ParseError> {
    let trimmed = text.trim();
    let not_a_number = |message: &str| ParseError::NotANumber {
        text: excerpt(text),
        message: message.to_string(),
    };
    if trimmed.is_empty() {
        return Err(not_a_number("the text is empty"));
    }
    // Fast path for the common case (a bare decimal), which the regex below
    // would accept too; 2-3x faster on perf and time -v output (see
    // examples/parse_timing.rs).
    if trimmed
        .bytes()
        .all(|byte| byte.is_ascii_digit() || matches!(byte, b'.' | b'-' | b'+' | b'e' | b'E'))
    {
        if let Ok(value) = trimmed.parse::<f64>() {
            if value.is_finite() {
                return Ok(value);
            }
        }
    }
    let captures = NUMBER
        .captures(trimmed)
        .ok_or_else(|| not_a_number("expected digits with an optional unit after them"))?;
    let number = &captures["number"];
    if !number.bytes().any(|byte| byte.is_ascii_digit()) {
        return Err(not_a_number("expected at least one digit"));
    }
    let without_separators: String = number.chars().filter(|&c| c != ',').collect();
    let value: f64 = without_separators
        .parse()
        .map_err(|_| not_a_number("expected a decimal number"))?;
    if !value.is_finite() {
        return Err(not_a_number("the value is not finite"));
    }
    Ok(value)
}

/// Parses a number with optional thousands separators but no unit: for
/// fields that are numbers by construction (perf counters, table cells).
pub(crate) fn parse_plain_number(text: &str) -> Result<f64, ParseError> {
    let trimmed = text.trim();
    if trimmed.bytes().any(|byte| {
        !(byte.is_ascii_digit() || matches!(byte, b'.' | b',' | b'-' | b'+' | b'e' | b'E'))
    }) {
        return Err(ParseError::NotANumber {
            text: excerpt(text),
            message: "expected only digits, a sign, a decimal point and an exponent".to_string(),
        });
    }
    parse_number(trimmed)
}

/// Parses plain numbers, one per line. Blank lines and lines whose first
/// non-blank character is `#` are skipped; any other line must be a number
/// (see [`parse_number`]) or the error names its 1-based line number.
pub fn plain_numbers(text: &str) -> Result<Vec<f64>, ParseError> {
    let mut values = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let value = parse_number(trimmed).map_err(|error| ParseError::MalformedLine {
            format: "plain numbers",
            line: index + 1,
            message: match error {
                ParseError::NotANumber { message, .. } => format!("expected a number ({message})"),
                other => other.to_string(),
            },
            text: excerpt(line),
        })?;
        values.push(value);
    }
    if values.is_empty() {
        return Err(ParseError::EmptyOutput {
            format: "plain numbers",
        });
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_thousands_separators_and_units() {
        assert_eq!(parse_number("69,107").unwrap(), 69107.0);
        assert_eq!(parse_number("1,234,567.25").unwrap(), 1_234_567.25);
        assert_eq!(parse_number(" 1.23s ").unwrap(), 1.23);
        assert_eq!(parse_number("56 B/op").unwrap(), 56.0);
        assert_eq!(parse_number("94%").unwrap(), 94.0);
        assert_eq!(parse_number("-4.5e3").unwrap(), -4500.0);
        assert_eq!(parse_number("+.5").unwrap(), 0.5);
        assert_eq!(parse_number("12µs").unwrap(), 12.0);
    }

    #[test]
    fn rejects_ambiguous_or_junk_text() {
        for text in [
            "", "  ", "1,5", "12,34", "abc", "1.2.3", "NaN", "inf", "1 2", "--1", "1e999",
        ] {
            assert!(parse_number(text).is_err(), "{text:?} should be rejected");
        }
    }

    #[test]
    fn plain_numbers_skip_comments_and_report_junk_with_line_number() {
        let values = plain_numbers("# run 1\n1.5\n\n  2\n# done\n3,000\n").unwrap();
        assert_eq!(values, vec![1.5, 2.0, 3000.0]);
        let error = plain_numbers("1\n2\noops\n4\n").unwrap_err();
        assert!(
            matches!(error, ParseError::MalformedLine { line: 3, .. }),
            "{error}"
        );
        assert_eq!(
            error.to_string(),
            "parse line 3 of plain numbers output: expected a number (expected at least one digit): `oops`"
        );
        assert_eq!(
            plain_numbers("\n# nothing\n").unwrap_err(),
            ParseError::EmptyOutput {
                format: "plain numbers"
            }
        );
    }
}
