//! Reproduces benchstat's golden outputs (golang.org/x/perf
//! cmd/benchstat/testdata, copied with its BSD-3-Clause license to
//! tests/data/benchstat, see its README.md) with this crate:
//! medians, the "± x%" median interval, "p=" to 3 decimals and the delta or
//! "~". Must not: depend on verdict-parse (the tiny Go-benchmark reader below
//! exists only for this test) or on benchstat's number formatting beyond
//! what is needed to read the goldens back.

use std::collections::BTreeMap;
use std::path::PathBuf;

use verdict_stats::rank::mann_whitney;
use verdict_stats::summary::{median_interval, summarize};

fn testdata(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/benchstat")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("read {}: {error}", path.display()))
}

/// Values keyed by (column, benchmark name without "Benchmark", unit),
/// in file order. The column is the `note:` value when `by_note`, else
/// the file label. Units converted like benchstat: ns/op -> sec/op is left
/// in ns (scale-free comparisons), MB/s -> B/s multiplies by 1e6.
type Samples = BTreeMap<(String, String, String), Vec<f64>>;

fn read_go_benchmarks(text: &str, file_label: &str, by_note: bool, samples: &mut Samples) {
    let mut note = String::new();
    for line in text.lines() {
        if let Some(value) = line.strip_prefix("note:") {
            note = value.trim().to_string();
            continue;
        }
        let Some(rest) = line.strip_prefix("Benchmark") else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() < 4 {
            continue;
        }
        let name = fields[0].to_string();
        // fields[1] is the iteration count; then value/unit pairs.
        for pair in fields[2..].chunks(2) {
            let value: f64 = pair[0].parse().expect("benchmark value");
            let (unit, value) = match pair[1] {
                "ns/op" => ("sec/op", value),
                "MB/s" => ("B/s", value * 1e6),
                other => (other, value),
            };
            let column = if by_note {
                note.clone()
            } else {
                file_label.to_string()
            };
            samples
                .entry((column, name.clone(), unit.to_string()))
                .or_default()
                .push(value);
        }
    }
}

/// benchstat's "± x%": max(hi/median − 1, 1 − lo/median) as %.0f, or "∞".
fn percent_range(values: &[f64]) -> String {
    let summary = summarize(values).expect("non-empty");
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    assert_eq!(summary.median_ci, median_interval(&sorted, 0.95));
    match summary.median_ci {
        None => "∞".to_string(),
        Some(interval) => {
            let spread =
                (interval.high / summary.median - 1.0).max(1.0 - interval.low / summary.median);
            format!("{:.0}%", 100.0 * spread)
        }
    }
}

/// benchstat's delta column: "~" when p > 0.05, else %+.2f%% of the
/// ratio of medians.
fn delta(old: &[f64], new: &[f64], p_value: f64) -> String {
    if p_value > 0.05 {
        return "~".to_string();
    }
    let ratio = summarize(new).unwrap().median / summarize(old).unwrap().median;
    format!("{:+.2}%", (ratio - 1.0) * 100.0)
}

/// A number as benchstat prints it ("46.55n", "15.014µ", "307.3Mi", "100.0")
/// and the half-unit of its last printed digit.
fn printed_number(text: &str, unit: &str) -> (f64, f64) {
    let split = text
        .find(|character: char| !(character.is_ascii_digit() || character == '.'))
        .unwrap_or(text.len());
    let (digits, prefix) = text.split_at(split);
    let decimals = digits.split('.').nth(1).map_or(0, str::len);
    // sec/op values are kept in ns here.
    let scale = match (prefix, unit) {
        ("n", "sec/op") => 1.0,
        ("µ", "sec/op") => 1e3,
        ("m", "sec/op") => 1e6,
        ("", "sec/op") => 1e9,
        ("Ki", _) => 1024.0,
        ("Mi", _) => 1024.0 * 1024.0,
        ("Gi", _) => 1024.0 * 1024.0 * 1024.0,
        ("", _) => 1.0,
        other => panic!("unexpected prefix {other:?}"),
    };
    let value: f64 = digits.parse().expect("number");
    (value * scale, 0.5 * 10f64.powi(-(decimals as i32)) * scale)
}

/// One comparison row of a benchstat text table.
#[derive(Debug)]
struct GoldenRow {
    name: String,
    unit: String,
    old_median: String,
    old_range: String,
    new_median: String,
    new_range: String,
    delta: String,
    p_value: String,
}

fn golden_rows(text: &str) -> Vec<GoldenRow> {
    let mut unit = String::new();
    let mut rows = Vec::new();
    for line in text.lines() {
        if line.contains('│') {
            let cells: Vec<&str> = line.split('│').map(str::trim).collect();
            if cells.len() > 1 && !cells[1].is_empty() && !cells[1].ends_with(".txt") {
                if ["before", "after"].contains(&cells[1]) {
                    continue;
                }
                unit = cells[1].to_string();
            }
            continue;
        }
        let tokens: Vec<&str> = line
            .split_whitespace()
            .filter(|token| !["¹", "²", "³"].contains(token))
            .collect();
        // name m1 ± r1 m2 ± r2 delta (p=… n=…)
        if tokens.len() == 10 && tokens[2] == "±" && tokens[5] == "±" {
            rows.push(GoldenRow {
                name: tokens[0].to_string(),
                unit: unit.clone(),
                old_median: tokens[1].to_string(),
                old_range: tokens[3].to_string(),
                new_median: tokens[4].to_string(),
                new_range: tokens[6].to_string(),
                delta: tokens[7].to_string(),
                p_value: tokens[8].trim_start_matches("(p=").to_string(),
            });
        }
    }
    rows
}

/// Checks every comparison row of `golden` against this crate; returns the
/// number of rows checked.
fn check_table(golden: &str, samples: &Samples, old: &str, new: &str) -> usize {
    let rows = golden_rows(golden);
    let mut failures = Vec::new();
    for row in &rows {
        let key = |column: &str| (column.to_string(), row.name.clone(), row.unit.clone());
        let old_values = &samples[&key(old)];
        let new_values = &samples[&key(new)];
        for (values, printed) in [(old_values, &row.old_median), (new_values, &row.new_median)] {
            let (expected, tolerance) = printed_number(printed, &row.unit);
            let median = summarize(values).unwrap().median;
            if (median - expected).abs() > tolerance * 1.000_001 {
                failures.push(format!(
                    "{} {}: median {median} vs {printed}",
                    row.name, row.unit
                ));
            }
        }
        let got_ranges = (percent_range(old_values), percent_range(new_values));
        if got_ranges != (row.old_range.clone(), row.new_range.clone()) {
            failures.push(format!(
                "{} {}: ranges {got_ranges:?} vs {} {}",
                row.name, row.unit, row.old_range, row.new_range
            ));
        }
        let p_value = mann_whitney(old_values, new_values).p_value;
        let got_p = format!("{p_value:.3}");
        if got_p != row.p_value {
            failures.push(format!(
                "{} {}: p {got_p} vs {}",
                row.name, row.unit, row.p_value
            ));
        }
        let got_delta = delta(old_values, new_values, p_value);
        if got_delta != row.delta {
            failures.push(format!(
                "{} {}: delta {got_delta} vs {}",
                row.name, row.unit, row.delta
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    rows.len()
}

#[test]
fn old_vs_new_csv_golden() {
    let mut samples = Samples::new();
    read_go_benchmarks(&testdata("old.txt"), "old", false, &mut samples);
    read_go_benchmarks(&testdata("new.txt"), "new", false, &mut samples);
    let golden = testdata("csvOldNew.stdout");
    let mut checked = 0;
    for line in golden.lines().filter(|line| line.starts_with("Encode/")) {
        let cells: Vec<&str> = line.split(',').collect();
        let name = cells[0];
        let old = &samples[&("old".to_string(), name.to_string(), "sec/op".to_string())];
        let new = &samples[&("new".to_string(), name.to_string(), "sec/op".to_string())];
        // The CSV prints medians in seconds at full precision.
        let old_median: f64 = cells[1].parse().unwrap();
        let new_median: f64 = cells[3].parse().unwrap();
        assert!((summarize(old).unwrap().median * 1e-9 / old_median - 1.0).abs() < 1e-12);
        assert!((summarize(new).unwrap().median * 1e-9 / new_median - 1.0).abs() < 1e-12);
        assert_eq!(percent_range(old), cells[2], "{name}");
        assert_eq!(percent_range(new), cells[4], "{name}");
        let test = mann_whitney(old, new);
        assert!(test.exact);
        assert_eq!(
            format!("p={:.3} n={}", test.p_value, old.len()),
            cells[6],
            "{name}"
        );
        assert_eq!(delta(old, new, test.p_value), cells[5], "{name}");
        checked += 1;
    }
    assert_eq!(checked, 2);
}

#[test]
fn old_vs_new_independent_hand_checks() {
    // README.txt: gob U1 = 39.5 (old as first sample), p = 0.44610;
    // json fully separated, p = 2/C(20,10).
    let mut samples = Samples::new();
    read_go_benchmarks(&testdata("old.txt"), "old", false, &mut samples);
    read_go_benchmarks(&testdata("new.txt"), "new", false, &mut samples);
    let get = |column: &str, name: &str| {
        samples[&(column.to_string(), name.to_string(), "sec/op".to_string())].clone()
    };
    let gob = mann_whitney(
        &get("old", "Encode/format=gob-48"),
        &get("new", "Encode/format=gob-48"),
    );
    assert!(gob.u == 39.5 || gob.u == 60.5, "{gob:?}");
    assert!((gob.p_value - 0.446_10).abs() < 5e-6, "{gob:?}");
    let json = mann_whitney(
        &get("old", "Encode/format=json-48"),
        &get("new", "Encode/format=json-48"),
    );
    assert!((json.p_value - 2.0 / 184_756.0).abs() < 1e-15);
}

#[test]
fn crc_ignore_note_golden() {
    // benchstat -ignore note crc-old.txt crc-new.txt: both units, 72 rows.
    let mut samples = Samples::new();
    read_go_benchmarks(&testdata("crc-old.txt"), "crc-old.txt", false, &mut samples);
    read_go_benchmarks(&testdata("crc-new.txt"), "crc-new.txt", false, &mut samples);
    let checked = check_table(
        &testdata("crcIgnore.stdout"),
        &samples,
        "crc-old.txt",
        "crc-new.txt",
    );
    assert_eq!(checked, 72);
}

#[test]
fn crc_separate_tables_golden() {
    // benchstat crc-old.txt crc-new.txt: notes differ, so each file gets its
    // own table of medians and ± ranges (no comparison).
    let mut samples = Samples::new();
    read_go_benchmarks(&testdata("crc-old.txt"), "crc-old.txt", false, &mut samples);
    read_go_benchmarks(&testdata("crc-new.txt"), "crc-new.txt", false, &mut samples);
    let golden = testdata("crcOldNew.stdout");
    let (mut column, mut unit, mut checked) = (String::new(), String::new(), 0);
    for line in golden.lines() {
        if line.contains('│') {
            let cell = line.split('│').nth(1).unwrap_or("").trim().to_string();
            if cell.ends_with(".txt") {
                column = cell;
            } else if !cell.is_empty() {
                unit = cell;
            }
            continue;
        }
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.len() == 4 && tokens[2] == "±" {
            let values = &samples[&(column.clone(), tokens[0].to_string(), unit.clone())];
            let (expected, tolerance) = printed_number(tokens[1], &unit);
            let median = summarize(values).unwrap().median;
            assert!(
                (median - expected).abs() <= tolerance * 1.000_001,
                "{line}: {median}"
            );
            assert_eq!(percent_range(values), tokens[3], "{line}");
            checked += 1;
        }
    }
    assert_eq!(checked, 4 * 36);
}

#[test]
fn small_sample_goldens() {
    // issue19634 (5 vs 5, separated): p=0.008, no 95% interval below n=6.
    // smallSample (1 vs 1): p=1.000, "~". issue19565 A (6 vs 6, all equal):
    // p=1.000, "~", ± 0%.
    for (input, golden) in [
        ("issue19634.txt", "issue19634.stdout"),
        ("smallSample.txt", "smallSample.stdout"),
        ("issue19565.txt", "issue19565.stdout"),
    ] {
        let mut samples = Samples::new();
        read_go_benchmarks(&testdata(input), input, true, &mut samples);
        let checked = check_table(&testdata(golden), &samples, "before", "after");
        assert_eq!(checked, 1, "{golden}");
    }
}
