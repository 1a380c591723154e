//! Resource reports of `time`: GNU `/usr/bin/time -v` and its default
//! two-line format, POSIX `time -p`
//! (`real 1.23`) and the bash keyword's default format (`real 1m14.792s`).
//! Pure: text in, named values out. Times are returned in seconds; the other
//! values in the unit GNU time prints (kbytes, counts, percent).

use std::sync::LazyLock;

use regex::Regex;

use crate::error::{ParseError, excerpt, list_names};
use crate::number::parse_plain_number;

/// The fields of `time -v`: canonical name, the label GNU time prints.
pub const TIME_VERBOSE_FIELDS: [(&str, &str); 22] = [
    ("user-time", "User time (seconds)"),
    ("system-time", "System time (seconds)"),
    ("percent-cpu", "Percent of CPU this job got"),
    ("elapsed", "Elapsed (wall clock) time (h:mm:ss or m:ss)"),
    (
        "average-shared-text-size",
        "Average shared text size (kbytes)",
    ),
    (
        "average-unshared-data-size",
        "Average unshared data size (kbytes)",
    ),
    ("average-stack-size", "Average stack size (kbytes)"),
    ("average-total-size", "Average total size (kbytes)"),
    ("max-rss", "Maximum resident set size (kbytes)"),
    ("average-rss", "Average resident set size (kbytes)"),
    ("major-page-faults", "Major (requiring I/O) page faults"),
    (
        "minor-page-faults",
        "Minor (reclaiming a frame) page faults",
    ),
    ("voluntary-context-switches", "Voluntary context switches"),
    (
        "involuntary-context-switches",
        "Involuntary context switches",
    ),
    ("swaps", "Swaps"),
    ("file-system-inputs", "File system inputs"),
    ("file-system-outputs", "File system outputs"),
    ("socket-messages-sent", "Socket messages sent"),
    ("socket-messages-received", "Socket messages received"),
    ("signals-delivered", "Signals delivered"),
    ("page-size", "Page size (bytes)"),
    ("exit-status", "Exit status"),
];

/// Field-name aliases accepted by [`time_verbose_value`].
fn canonical_verbose_field(name: &str) -> Option<&'static str> {
    let alias = match name {
        "real" | "wall-clock-time" | "elapsed-time" | "real-time" => "elapsed",
        "user" | "usr-time" => "user-time",
        "sys" | "sys-time" => "system-time",
        "maximum-resident-set-size" | "max-rss-kbytes" => "max-rss",
        other => other,
    };
    TIME_VERBOSE_FIELDS
        .iter()
        .find(|(canonical, label)| *canonical == alias || label.eq_ignore_ascii_case(name))
        .map(|(canonical, _)| *canonical)
}

/// Checks a `time -v` field name without any output (for validation).
pub fn check_time_verbose_field(name: &str) -> Result<&'static str, ParseError> {
    canonical_verbose_field(name).ok_or_else(|| ParseError::MissingField {
        format: "time -v",
        field: name.to_string(),
        found: format!(
            "known fields are {}",
            list_names(TIME_VERBOSE_FIELDS.iter().map(|(canonical, _)| *canonical))
        ),
    })
}

/// Parses GNU `time -v` output into (canonical name, value) pairs, in the
/// order printed; if there is no `-v` line, GNU time's default two-line
/// format, whose values take the same names. Lines that are not `time -v` lines (the workload's own
/// stderr, `Command exited with non-zero status 1`) are ignored. When the
/// report appears more than once, later values replace earlier ones: the
/// outermost `time` prints last.
pub fn time_verbose(output: &str) -> Result<Vec<(&'static str, f64)>, ParseError> {
    const FORMAT: &str = "time -v";
    if output.trim().is_empty() {
        return Err(ParseError::EmptyOutput { format: FORMAT });
    }
    let mut values: Vec<(&'static str, f64)> = Vec::new();
    for (index, line) in output.lines().enumerate() {
        let trimmed = line.trim();
        let Some((canonical, label)) = TIME_VERBOSE_FIELDS.iter().find(|(_, label)| {
            trimmed
                .strip_prefix(label)
                .is_some_and(|rest| rest.starts_with(':'))
        }) else {
            continue;
        };
        let text = trimmed[label.len() + 1..].trim();
        let parsed = match *canonical {
            "elapsed" => parse_clock(text),
            "percent-cpu" => parse_plain_number(text.trim_end_matches('%')),
            _ => parse_plain_number(text),
        };
        let value = parsed.map_err(|error| ParseError::MalformedLine {
            format: FORMAT,
            line: index + 1,
            message: error.to_string(),
            text: excerpt(line),
        })?;
        values.retain(|(name, _)| name != canonical);
        values.push((canonical, value));
    }
    if values.is_empty() {
        values = time_default_format(output)?;
    }
    if values.is_empty() {
        return Err(ParseError::NotFound {
            what: "a GNU `time -v` report",
            found: "no line has a `time -v` label such as `Maximum resident set size (kbytes):`"
                .to_string(),
        });
    }
    Ok(values)
}

/// GNU time's default format (no `-v`, no `-p`):
/// `0.09user 0.57system 0:01.05elapsed 62%CPU (0avgtext+0avgdata 10116maxresident)k`
static DEFAULT_FIRST_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?P<user>[0-9.]+)user (?P<system>[0-9.]+)system (?P<elapsed>[0-9:.]+)elapsed (?P<cpu>[0-9]+|\?)%CPU \((?P<text>[0-9]+)avgtext\+(?P<data>[0-9]+)avgdata (?P<rss>[0-9]+)maxresident\)k\s*$",
    )
    .expect("the GNU time default pattern is valid")
});

/// `0inputs+0outputs (0major+1192minor)pagefaults 0swaps`
static DEFAULT_SECOND_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?P<inputs>[0-9]+)inputs\+(?P<outputs>[0-9]+)outputs \((?P<major>[0-9]+)major\+(?P<minor>[0-9]+)minor\)pagefaults (?P<swaps>[0-9]+)swaps\s*$",
    )
    .expect("the GNU time default pattern is valid")
});

/// Parses GNU time's default two-line format into the `time -v` names. The
/// last report in the output wins. `?%CPU` (printed for a zero elapsed time)
/// leaves `percent-cpu` out.
fn time_default_format(output: &str) -> Result<Vec<(&'static str, f64)>, ParseError> {
    let mut values: Vec<(&'static str, f64)> = Vec::new();
    const FIRST_LINE_GROUPS: [(&str, &str); 7] = [
        ("user-time", "user"),
        ("system-time", "system"),
        ("elapsed", "elapsed"),
        ("percent-cpu", "cpu"),
        ("average-shared-text-size", "text"),
        ("average-unshared-data-size", "data"),
        ("max-rss", "rss"),
    ];
    const SECOND_LINE_GROUPS: [(&str, &str); 5] = [
        ("file-system-inputs", "inputs"),
        ("file-system-outputs", "outputs"),
        ("major-page-faults", "major"),
        ("minor-page-faults", "minor"),
        ("swaps", "swaps"),
    ];
    for (index, line) in output.lines().enumerate() {
        let (captures, groups) = if let Some(captures) = DEFAULT_FIRST_LINE.captures(line) {
            (captures, &FIRST_LINE_GROUPS[..])
        } else if let Some(captures) = DEFAULT_SECOND_LINE.captures(line) {
            (captures, &SECOND_LINE_GROUPS[..])
        } else {
            continue;
        };
        for (name, group) in groups {
            let text = &captures[*group];
            if text == "?" {
                continue;
            }
            let parsed = if *name == "elapsed" {
                parse_clock(text)
            } else {
                parse_plain_number(text)
            };
            let value = parsed.map_err(|error| ParseError::MalformedLine {
                format: "GNU time",
                line: index + 1,
                message: error.to_string(),
                text: excerpt(line),
            })?;
            values.retain(|(existing, _)| existing != name);
            values.push((name, value));
        }
    }
    Ok(values)
}

/// One `time -v` value by field name (see [`TIME_VERBOSE_FIELDS`]; also
/// `real`, `user`, `sys`, or the label exactly as GNU time prints it).
pub fn time_verbose_value(output: &str, field: &str) -> Result<f64, ParseError> {
    let canonical = check_time_verbose_field(field)?;
    let values = time_verbose(output)?;
    values
        .iter()
        .find(|(name, _)| *name == canonical)
        .map(|(_, value)| *value)
        .ok_or_else(|| ParseError::MissingField {
            format: "time -v",
            field: field.to_string(),
            found: format!(
                "the output has {}",
                list_names(values.iter().map(|(name, _)| *name))
            ),
        })
}

/// `h:mm:ss`, `m:ss` or `m:ss.ss` (GNU time's elapsed) to seconds.
fn parse_clock(text: &str) -> Result<f64, ParseError> {
    let parts: Vec<&str> = text.split(':').collect();
    if !(2..=3).contains(&parts.len()) {
        return Err(ParseError::NotANumber {
            text: text.to_string(),
            message: "expected h:mm:ss or m:ss".to_string(),
        });
    }
    let mut seconds = 0.0;
    for part in &parts {
        seconds = seconds * 60.0 + parse_plain_number(part)?;
    }
    Ok(seconds)
}

/// The three values of `time -p` or the bash `time` keyword, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeReport {
    pub real: f64,
    pub user: f64,
    pub sys: f64,
}

/// Parses POSIX `time -p` (`real 1.23`) or bash's default `time` format
/// (`real\t1m14.792s`). Other lines are ignored; the last complete report
/// wins. Also accepts `XhYmZs`.
pub fn time_posix(output: &str) -> Result<TimeReport, ParseError> {
    const FORMAT: &str = "time -p";
    if output.trim().is_empty() {
        return Err(ParseError::EmptyOutput { format: FORMAT });
    }
    let (mut real, mut user, mut sys) = (None, None, None);
    let mut last_complete = None;
    for (index, line) in output.lines().enumerate() {
        let mut tokens = line.split_whitespace();
        let (Some(key), Some(text), None) = (tokens.next(), tokens.next(), tokens.next()) else {
            continue;
        };
        let slot = match key {
            "real" => &mut real,
            "user" => &mut user,
            "sys" => &mut sys,
            _ => continue,
        };
        let value = parse_duration(text).map_err(|error| ParseError::MalformedLine {
            format: FORMAT,
            line: index + 1,
            message: error.to_string(),
            text: excerpt(line),
        })?;
        *slot = Some(value);
        if let (Some(real), Some(user), Some(sys)) = (real, user, sys) {
            last_complete = Some(TimeReport { real, user, sys });
        }
        if key == "sys" {
            (real, user, sys) = (None, None, None);
        }
    }
    last_complete.ok_or_else(|| ParseError::NotFound {
        what: "a `time -p` or bash `time` report",
        found: "no `real`, `user` and `sys` lines in that order".to_string(),
    })
}

/// One value of a `time -p`/bash report: `real`, `user` or `sys` (or the
/// aliases `wall-clock-time`/`elapsed`, `user-time`, `system-time`).
pub fn time_posix_value(output: &str, field: &str) -> Result<f64, ParseError> {
    let pick = check_time_posix_field(field)?;
    let report = time_posix(output)?;
    Ok(pick(&report))
}

/// Reads one value out of a [`TimeReport`].
pub type TimePick = fn(&TimeReport) -> f64;

/// Checks a `time -p` field name without any output (for validation).
pub fn check_time_posix_field(field: &str) -> Result<TimePick, ParseError> {
    let pick: TimePick = match field {
        "real" | "wall-clock-time" | "elapsed" | "real-time" => |report| report.real,
        "user" | "user-time" | "usr-time" => |report| report.user,
        "sys" | "system-time" | "sys-time" => |report| report.sys,
        _ => {
            return Err(ParseError::MissingField {
                format: "time -p",
                field: field.to_string(),
                found: "known fields are `real`, `user`, `sys`".to_string(),
            });
        }
    };
    Ok(pick)
}

/// `1.23`, `1m14.792s`, `0m03.205s`, `1h2m3s`, `4.5s` to seconds.
fn parse_duration(text: &str) -> Result<f64, ParseError> {
    if !text.ends_with('s') {
        return parse_plain_number(text);
    }
    let mut seconds = 0.0;
    let mut number = String::new();
    for character in text.chars() {
        let scale = match character {
            'h' => 3600.0,
            'm' => 60.0,
            's' => 1.0,
            _ => {
                number.push(character);
                continue;
            }
        };
        seconds += scale * parse_plain_number(&number)?;
        number.clear();
    }
    if !number.is_empty() {
        return Err(ParseError::NotANumber {
            text: text.to_string(),
            message: "expected a duration like 1m14.792s".to_string(),
        });
    }
    Ok(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_and_duration_forms() {
        assert_eq!(parse_clock("0:01.23").unwrap(), 1.23);
        assert_eq!(parse_clock("1:02:03").unwrap(), 3723.0);
        assert!((parse_duration("1m14.792s").unwrap() - 74.792).abs() < 1e-9);
        assert!((parse_duration("2m27.695s").unwrap() - 147.695).abs() < 1e-9);
        assert!((parse_duration("0m03.205s").unwrap() - 3.205).abs() < 1e-9);
        assert_eq!(parse_duration("1h2m3s").unwrap(), 3723.0);
        assert_eq!(parse_duration("1.23").unwrap(), 1.23);
        assert!(parse_duration("1m").is_err());
        assert!(parse_duration("ms").is_err());
        assert!(parse_clock("12").is_err());
    }
}
