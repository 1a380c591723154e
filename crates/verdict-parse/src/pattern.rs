//! Regular-expression extraction: the first match of a user's pattern, the
//! number in its `value` group (or first group, or the whole match). Pure;
//! must not cache compiled patterns globally (callers compile once through
//! [`compile_pattern`] and keep the `Regex`).

use regex::{Regex, RegexBuilder};

use crate::error::{ParseError, excerpt};
use crate::number::parse_number;

/// Compiles a user pattern with `^`/`$` matching at line boundaries, so that
/// `^ops: (\d+)` works on multi-line output.
pub fn compile_pattern(pattern: &str) -> Result<Regex, ParseError> {
    RegexBuilder::new(pattern)
        .multi_line(true)
        .size_limit(1 << 20)
        .build()
        .map_err(|error| ParseError::InvalidRegex {
            pattern: pattern.to_string(),
            message: error
                .to_string()
                .lines()
                .last()
                .unwrap_or("invalid pattern")
                .trim()
                .to_string(),
        })
}

/// The number captured by the first match of `regex` in `text`: the group
/// named `value` if the pattern has one, else group 1 if it has groups, else
/// the whole match. The captured text is parsed by
/// [`parse_number`](crate::parse_number), so `69,107` and `1.23s` work.
pub fn regex_value(regex: &Regex, text: &str) -> Result<f64, ParseError> {
    let pattern = regex.as_str();
    if text.trim().is_empty() {
        return Err(ParseError::EmptyOutput { format: "regex" });
    }
    let captures = regex.captures(text).ok_or_else(|| ParseError::NoMatch {
        pattern: pattern.to_string(),
        found: format!("no match in {} lines of output", text.lines().count()),
    })?;
    let has_value_group = regex.capture_names().any(|name| name == Some("value"));
    let group = if has_value_group {
        captures.name("value")
    } else if regex.captures_len() > 1 {
        captures.get(1)
    } else {
        captures.get(0)
    };
    let matched = group.ok_or_else(|| ParseError::NoMatch {
        pattern: pattern.to_string(),
        found: format!(
            "the match `{}` did not take part in the value group",
            excerpt(captures.get(0).map_or("", |whole| whole.as_str()))
        ),
    })?;
    parse_number(matched.as_str()).map_err(|error| ParseError::NoMatch {
        pattern: pattern.to_string(),
        found: format!("the captured text is not a number ({error})"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_group_first_group_and_whole_match() {
        let text = "warming up\nthroughput: 69,107 ops/s\nlatency: 12.5ms\n";
        let named = compile_pattern(r"latency: (?P<unit>x)?(?P<value>\S+)").unwrap();
        assert_eq!(regex_value(&named, text).unwrap(), 12.5);
        let first = compile_pattern(r"^throughput: ([\d,]+)").unwrap();
        assert_eq!(regex_value(&first, text).unwrap(), 69107.0);
        let whole = compile_pattern(r"\d+\.\d+").unwrap();
        assert_eq!(regex_value(&whole, text).unwrap(), 12.5);
    }

    #[test]
    fn errors_name_the_pattern() {
        let error = compile_pattern("ops: (").unwrap_err();
        assert!(
            error.to_string().starts_with("compile regex `ops: (`: "),
            "{error}"
        );
        let regex = compile_pattern(r"missing: (\d+)").unwrap();
        let error = regex_value(&regex, "a\nb\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "match regex `missing: (\\d+)` in the output: no match in 2 lines of output"
        );
        let regex = compile_pattern(r"name: (\w+)").unwrap();
        assert!(matches!(
            regex_value(&regex, "name: kill"),
            Err(ParseError::NoMatch { .. })
        ));
    }
}
