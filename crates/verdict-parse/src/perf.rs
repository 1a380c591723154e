//! `perf stat` output: the CSV form (`-x,` or another separator), the JSON
//! lines form (`--json`/`-j`) and the human-readable report. Pure: text in, rows out. Counters that perf
//! prints as `<not supported>` or `<not counted>` are kept as unavailable and
//! are never turned into zero.

use serde_json::Value;

use crate::error::{ParseError, excerpt, list_names};
use crate::number::{parse_number, parse_plain_number};

/// A counter's value as perf printed it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CounterValue {
    Counted(f64),
    /// `<not supported>`: the PMU or kernel cannot count this event.
    NotSupported,
    /// `<not counted>`: the event was never scheduled on the PMU.
    NotCounted,
}

impl CounterValue {
    fn parse(text: &str) -> Option<CounterValue> {
        match text.trim() {
            "<not supported>" => Some(CounterValue::NotSupported),
            "<not counted>" => Some(CounterValue::NotCounted),
            other => parse_plain_number(other).ok().map(CounterValue::Counted),
        }
    }

    fn printed(self) -> &'static str {
        match self {
            CounterValue::Counted(_) => "a number",
            CounterValue::NotSupported => "<not supported>",
            CounterValue::NotCounted => "<not counted>",
        }
    }
}

/// One counter line of `perf stat` output.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfRow {
    /// The aggregation prefix, if any: `CPU0` (`-A`), `S0` (`--per-socket`),
    /// a thread name (`--per-thread`).
    pub aggregation: Option<String>,
    pub value: CounterValue,
    /// `msec` for clocks, empty for plain counts.
    pub unit: String,
    /// The event as perf printed it, modifiers included (`cycles:u`).
    pub event: String,
    /// With `-r N`: the relative standard deviation, in percent.
    pub variance_percent: Option<f64>,
    /// Time the counter ran, in nanoseconds.
    pub run_time: Option<f64>,
    /// Percentage of the run time the counter was scheduled (multiplexing).
    pub running_percent: Option<f64>,
    /// The derived metric perf printed next to the counter (IPC, GHz...).
    pub metric_value: Option<f64>,
    pub metric_unit: Option<String>,
}

fn is_counter_value(text: &str) -> bool {
    CounterValue::parse(text).is_some()
}

fn optional_number<Text: AsRef<str>>(text: Option<&Text>) -> Option<f64> {
    text.and_then(|text| parse_number(text.as_ref()).ok())
}

/// Parses `perf stat -x,` output. Lines that are not counter lines are
/// skipped: the workload's own stderr, blank lines, metric-group lines with no
/// event, and lines whose value is neither a number nor `<not supported>` or
/// `<not counted>`. An event that is absent is reported by
/// [`perf_event_value`], which lists the events that were found.
pub fn perf_stat_csv(output: &str) -> Result<Vec<PerfRow>, ParseError> {
    perf_stat_csv_with_separator(output, ',')
}

/// [`perf_stat_csv`] for output produced with `-x SEPARATOR`.
pub fn perf_stat_csv_with_separator(
    output: &str,
    separator: char,
) -> Result<Vec<PerfRow>, ParseError> {
    const FORMAT: &str = "perf stat CSV";
    if output.trim().is_empty() {
        return Err(ParseError::EmptyOutput { format: FORMAT });
    }
    let mut rows = Vec::new();
    for line in output.lines() {
        let fields: Vec<&str> = line.split(separator).collect();
        if fields.len() < 3 {
            continue;
        }
        let prefix = aggregation_prefix_length(&fields);
        let fields_after = rejoin_event(&fields[prefix..], separator);
        if fields_after.len() < 3 {
            continue;
        }
        let event = fields_after[2].trim();
        if event.is_empty() {
            continue;
        }
        let value_text = fields_after[0].trim();
        if value_text.is_empty() {
            continue;
        }
        // A value that is neither a number nor `<not ...>` means this is not
        // a perf line at all (perf shares stderr with the workload).
        let Some(value) = CounterValue::parse(value_text) else {
            continue;
        };
        let mut rest = &fields_after[3..];
        let mut variance_percent = None;
        if let Some(first) = rest.first() {
            let first = first.trim();
            if let Some(percent) = first.strip_suffix('%') {
                variance_percent = parse_number(percent.trim_start_matches("+-").trim()).ok();
                rest = &rest[1..];
            }
        }
        rows.push(PerfRow {
            aggregation: (prefix > 0).then(|| fields[0].trim().to_string()),
            value,
            unit: fields_after[1].trim().to_string(),
            event: event.to_string(),
            variance_percent,
            run_time: optional_number(rest.first()),
            running_percent: optional_number(rest.get(1)),
            metric_value: optional_number(rest.get(2)),
            metric_unit: rest
                .get(3)
                .map(|unit| unit.trim().to_string())
                .filter(|unit| !unit.is_empty()),
        });
    }
    Ok(rows)
}

/// perf does not quote fields, so an event with PMU terms such as
/// `cpu/event=0x3c,umask=0x0/` is split by a `,` separator. Puts it back
/// together: the event ends at the field that closes its `/.../`.
fn rejoin_event<'a>(fields: &[&'a str], separator: char) -> Vec<std::borrow::Cow<'a, str>> {
    let mut joined: Vec<std::borrow::Cow<'a, str>> =
        fields.iter().map(|field| (*field).into()).collect();
    if joined.len() < 3 {
        return joined;
    }
    let slashes = |text: &str| text.matches('/').count();
    let mut count = slashes(&joined[2]);
    while count % 2 == 1 && joined.len() > 3 {
        let next = joined.remove(3);
        count += slashes(&next);
        let merged = format!("{}{separator}{next}", joined[2]);
        joined[2] = merged.into();
    }
    joined
}

/// How many aggregation columns precede the counter value: none for plain
/// output, one for `-A` (`CPU0`) and `--per-thread` (`name-pid`), two for
/// `--per-socket`/`--per-die`/`--per-core` (`S0`, then the number of CPUs).
fn aggregation_prefix_length(fields: &[&str]) -> usize {
    let first = fields[0].trim();
    if first.is_empty() || is_counter_value(first) {
        return 0;
    }
    let second_is_count = fields.get(1).is_some_and(|text| {
        let text = text.trim();
        !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit())
    });
    let third_is_value = fields.get(2).is_some_and(|text| is_counter_value(text));
    let fifth_is_event = fields.get(4).is_some_and(|text| !text.trim().is_empty());
    if second_is_count && third_is_value && fifth_is_event {
        2
    } else {
        1
    }
}

/// Parses `perf stat --json` (`-j`) output: one JSON object per line. Lines
/// that do not start with `{` are skipped (the workload's stderr); objects
/// without an `event` (metric-group lines) are skipped.
pub fn perf_stat_json(output: &str) -> Result<Vec<PerfRow>, ParseError> {
    const FORMAT: &str = "perf stat JSON";
    if output.trim().is_empty() {
        return Err(ParseError::EmptyOutput { format: FORMAT });
    }
    let mut rows = Vec::new();
    for (index, line) in output.lines().enumerate() {
        let trimmed = line.trim();
        if !trimmed.starts_with('{') {
            continue;
        }
        let malformed = |message: String| ParseError::MalformedLine {
            format: FORMAT,
            line: index + 1,
            message,
            text: excerpt(line),
        };
        let object: Value = serde_json::from_str(trimmed)
            .map_err(|error| malformed(format!("expected a JSON object ({error})")))?;
        let Some(event) = object.get("event").and_then(Value::as_str) else {
            continue;
        };
        let value = match object.get("counter-value") {
            Some(Value::String(text)) => CounterValue::parse(text),
            Some(Value::Number(number)) => number.as_f64().map(CounterValue::Counted),
            _ => None,
        }
        .ok_or_else(|| {
            malformed(format!(
                "expected the counter-value of `{event}` to be a number, `<not supported>` or `<not counted>`"
            ))
        })?;
        let number = |key: &str| match object.get(key) {
            Some(Value::Number(number)) => number.as_f64(),
            Some(Value::String(text)) => parse_number(text).ok(),
            _ => None,
        };
        let aggregation = ["cpu", "core", "die", "socket", "node", "thread"]
            .iter()
            .find_map(|key| object.get(*key))
            .map(|value| match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            });
        rows.push(PerfRow {
            aggregation,
            value,
            unit: object
                .get("unit")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            event: event.to_string(),
            variance_percent: number("variance"),
            run_time: number("event-runtime"),
            running_percent: number("pcnt-running"),
            metric_value: number("metric-value"),
            metric_unit: object
                .get("metric-unit")
                .and_then(Value::as_str)
                .filter(|unit| !unit.is_empty())
                .map(str::to_string),
        });
    }
    Ok(rows)
}

/// Parses the human-readable `perf stat` report (no `-x`, no `--json`):
/// the lines after `Performance counter stats for ...`, such as
/// `5,205,202,243 cycles # 3.046 GHz`, `0.71 msec task-clock # ... ( +- 5.59% )`,
/// `<not supported> cycles`, and a multiplexing note `(66.67%)`. Lines before
/// that heading (the workload's stderr) are skipped. The closing lines
/// `N seconds time elapsed`, `N seconds user`, `N seconds sys` become the
/// events `time-elapsed`, `user` and `sys` (unit `seconds`). Values may use `,` thousands separators (perf's default
/// `--big-num`); a locale with `.` separators is not supported.
pub fn perf_stat_text(output: &str) -> Result<Vec<PerfRow>, ParseError> {
    const FORMAT: &str = "perf stat";
    if output.trim().is_empty() {
        return Err(ParseError::EmptyOutput { format: FORMAT });
    }
    let mut rows = Vec::new();
    let mut in_report = false;
    for line in output.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("Performance counter stats for") {
            in_report = true;
            continue;
        }
        if !in_report || trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let (counter_part, annotation) = match trimmed.split_once('#') {
            Some((counter, annotation)) => (counter.trim(), annotation.trim()),
            None => (trimmed, ""),
        };
        // Trailing parenthesised notes: `( +- 5.59% )` and `(66.67%)`.
        let mut variance_percent = None;
        let mut running_percent = None;
        let mut remainder = annotation.to_string();
        let mut counter_part = counter_part.to_string();
        for text in [&mut remainder, &mut counter_part] {
            while let Some(open) = text.rfind('(') {
                let Some(close) = text[open..].find(')').map(|offset| open + offset) else {
                    break;
                };
                let inside = text[open + 1..close].trim().to_string();
                if let Some(variance) = inside.strip_prefix("+-") {
                    variance_percent =
                        parse_plain_number(variance.trim().trim_end_matches('%')).ok();
                } else if let Some(percent) = inside.strip_suffix('%') {
                    running_percent = parse_plain_number(percent).ok();
                } else {
                    break;
                }
                text.replace_range(open..=close, "");
                *text = text.trim().to_string();
            }
        }
        let (value, rest) = if let Some(rest) = counter_part.strip_prefix("<not supported>") {
            (CounterValue::NotSupported, rest)
        } else if let Some(rest) = counter_part.strip_prefix("<not counted>") {
            (CounterValue::NotCounted, rest)
        } else {
            let mut split = counter_part.splitn(2, char::is_whitespace);
            let first = split.next().unwrap_or("");
            let Ok(number) = parse_plain_number(first) else {
                continue;
            };
            (CounterValue::Counted(number), split.next().unwrap_or(""))
        };
        let mut tokens: Vec<&str> = rest.split_whitespace().collect();
        // `0.00471 +- 0.00346 seconds time elapsed` with -r: drop the spread.
        if tokens.first() == Some(&"+-") && tokens.len() > 2 {
            tokens.drain(..2);
        }
        let (unit, event) = match tokens.as_slice() {
            ["seconds", "time", "elapsed"] => ("seconds", "time-elapsed"),
            ["seconds", "user"] => ("seconds", "user"),
            ["seconds", "sys"] => ("seconds", "sys"),
            [event] => ("", *event),
            // Older perf: `1.879704 task-clock (msec)`.
            [event, unit] if unit.starts_with('(') && unit.ends_with(')') => {
                (unit.trim_start_matches('(').trim_end_matches(')'), *event)
            }
            [unit, event] => (*unit, *event),
            _ => continue,
        };
        let mut metric_words = remainder.split_whitespace();
        let metric_value = metric_words
            .next()
            .and_then(|word| parse_plain_number(word.trim_end_matches('%')).ok());
        let metric_unit = metric_value.map(|_| metric_words.collect::<Vec<_>>().join(" "));
        rows.push(PerfRow {
            aggregation: None,
            value,
            unit: unit.to_string(),
            event: event.to_string(),
            variance_percent,
            run_time: None,
            running_percent,
            metric_value,
            metric_unit: metric_unit.filter(|unit| !unit.is_empty()),
        });
    }
    Ok(rows)
}

/// Parses `perf stat` output in any of its forms: JSON lines if a line
/// starts with `{"`, the human-readable report if it has the `Performance
/// counter stats for` heading, CSV with `,` otherwise.
pub fn perf_stat(output: &str) -> Result<Vec<PerfRow>, ParseError> {
    if output
        .lines()
        .any(|line| line.trim_start().starts_with("{\""))
    {
        perf_stat_json(output)
    } else if output.contains("Performance counter stats for") {
        perf_stat_text(output)
    } else {
        perf_stat_csv(output)
    }
}

/// The value of `event`. Several rows for the event (per-CPU or per-socket
/// output) are summed, as perf itself aggregates them; if any of them is
/// `<not supported>` or `<not counted>` the value is missing and this is an
/// error, never a zero.
pub fn perf_event_value(rows: &[PerfRow], event: &str) -> Result<f64, ParseError> {
    let matching: Vec<&PerfRow> = rows.iter().filter(|row| row.event == event).collect();
    if matching.is_empty() {
        let mut events: Vec<&str> = Vec::new();
        for row in rows {
            if !events.contains(&row.event.as_str()) {
                events.push(&row.event);
            }
        }
        return Err(ParseError::MissingEvent {
            event: event.to_string(),
            found: if events.is_empty() {
                "the output has no perf stat counter lines".to_string()
            } else {
                format!("the output has {}", list_names(events))
            },
        });
    }
    let mut total = 0.0;
    for row in matching {
        match row.value {
            CounterValue::Counted(value) => total += value,
            unavailable => {
                return Err(ParseError::CounterUnavailable {
                    event: event.to_string(),
                    printed: unavailable.printed().to_string(),
                });
            }
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_detection() {
        assert_eq!(
            aggregation_prefix_length(&["0.58", "msec", "task-clock", "1", "100.00"]),
            0
        );
        assert_eq!(
            aggregation_prefix_length(&["<not supported>", "", "cycles", "0"]),
            0
        );
        assert_eq!(
            aggregation_prefix_length(&["CPU0", "101.80", "msec", "task-clock", "1"]),
            1
        );
        assert_eq!(
            aggregation_prefix_length(&["CPU3", "5", "", "cycles", "1", "100.00"]),
            1
        );
        assert_eq!(
            aggregation_prefix_length(&["S0", "1", "1.89", "msec", "cpu-clock", "1"]),
            2
        );
        assert_eq!(
            aggregation_prefix_length(&["worker-a-101", "200", "", "cycles", "100"]),
            1
        );
    }

    #[test]
    fn events_with_commas_in_pmu_terms() {
        let rows = perf_stat_csv(
            "1234,,cpu/event=0x3c,umask=0x0/u,5000,100.00,,\n7,,cycles,5000,100.00,,\n",
        )
        .unwrap();
        assert_eq!(rows[0].event, "cpu/event=0x3c,umask=0x0/u");
        assert_eq!(rows[0].run_time, Some(5000.0));
        assert_eq!(rows[1].event, "cycles");
        // A metric unit with a slash (`/sec`) must not be merged into the event.
        let rows = perf_stat_csv("0,,context-switches,549395,100.00,0.000,/sec\n").unwrap();
        assert_eq!(rows[0].metric_unit.as_deref(), Some("/sec"));
        let rows = perf_stat_csv("5,,cpu_core/cycles/,10,100.00,,\n").unwrap();
        assert_eq!(rows[0].event, "cpu_core/cycles/");
    }

    #[test]
    fn junk_lines_are_skipped_not_misread() {
        let rows = perf_stat_csv("hello, from the workload\n12x3,,cycles,100,100.00,,\na,b,c,d\n5,,instructions,100,100.00,,\n").unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].event, "instructions");
        assert_eq!(rows[0].value, CounterValue::Counted(5.0));
    }
}
