//! The email text table: columns line up whatever the cells hold (`±`,
//! which is printed as `+-`; wide characters; control characters), one
//! thousands-separator style per column, and asymmetric intervals shown as
//! intervals. Golden snapshots, a property test over random tables, and the
//! asymmetric case from issue 11. Pure: renders strings, reads nothing.

use proptest::prelude::*;
use verdict_report::compare::median_with_spread;
use verdict_report::format;
use verdict_report::table::{Table, display_width};
use verdict_report::{SideSummary, escape};

fn side(median: f64, low: f64, high: f64) -> SideSummary {
    SideSummary {
        n: 15,
        median,
        ci_low: Some(low),
        ci_high: Some(high),
        cv: None,
    }
}

/// Every line of `text` has the same display width.
fn widths(text: &str) -> Vec<usize> {
    text.lines().map(display_width).collect()
}

#[test]
fn mixed_width_cells_with_plus_minus_line_up() {
    let mut table = Table::new(
        ["benchmark", "old", "new", "ops"]
            .map(String::from)
            .to_vec(),
    );
    table.push(vec![
        "kill".to_string(),
        median_with_spread(&side(68_275.0, 62_000.0, 74_000.0), ""),
        median_with_spread(&side(8_436.0, 8_300.0, 8_600.0), ""),
        format::value(8_436.0, ""),
    ]);
    table.push(vec![
        "fork-and-exec".to_string(),
        median_with_spread(&side(0.1197, 0.1167, 0.1224), "s"),
        median_with_spread(&side(14_097.0, 13_000.0, 15_000.0), ""),
        format::value(14_097.0, ""),
    ]);
    table.push(vec![
        "x".to_string(),
        "±?".to_string(),
        "1 ±1%".to_string(),
        format::value(3.2, ""),
    ]);
    let text = table.text();
    let widths = widths(&text);
    assert!(
        widths.iter().all(|width| *width == widths[0]),
        "ragged: {widths:?}\n{text}"
    );
    assert!(text.contains("8,436") && !text.contains("8436"), "{text}");
    insta::assert_snapshot!("mixed_width_text_table", text);
}

#[test]
fn asymmetric_interval_is_shown_as_the_interval() {
    // Issue 11: a median of 425.6 ms with interval [392 ms, 2.269 s] was
    // printed `425.6ms +-433%`, hiding that the low side is only -8%.
    assert_eq!(
        median_with_spread(&side(0.4256, 0.392, 2.269), "s"),
        "425.6ms [392.0ms, 2.269s]"
    );
    // Symmetric enough: the larger side as ± (benchstat's notation).
    assert_eq!(
        median_with_spread(&side(68_275.0, 62_000.0, 74_000.0), ""),
        "68,275 ±9%"
    );
    // Lopsided but within 5 points: still ±, which only overstates.
    assert_eq!(
        median_with_spread(&side(100.0, 99.0, 104.0), ""),
        "100.0 ±4%"
    );
    // A zero median (sys time of a command that makes no system calls):
    // no relative spread exists, and `±?` would claim n is too small.
    assert_eq!(
        median_with_spread(&side(0.0, 0.0, 0.002), "s"),
        "0.000s [0.000s, 2.000ms]"
    );
    let mut table = Table::new(["cell", "median"].map(String::from).to_vec());
    table.push(vec![
        "a".to_string(),
        median_with_spread(&side(0.4256, 0.392, 2.269), "s"),
    ]);
    table.push(vec![
        "b".to_string(),
        median_with_spread(&side(0.4256, 0.410, 0.440), "s"),
    ]);
    insta::assert_snapshot!("asymmetric_interval_table", table.text());
}

#[test]
fn pivot_style_table_with_left_aligned_verdicts_lines_up() {
    let mut table = Table::new(
        ["selinux", "7.1", "7.2", "7.2 vs 7.1", "verdict"]
            .map(String::from)
            .to_vec(),
    );
    table.left = vec![4];
    table.push(vec![
        "enforcing".to_string(),
        "68,275 ±18%".to_string(),
        "9,154 ±2%".to_string(),
        "+2.8% [-18.8%, +30.0%]".to_string(),
        "inconclusive (~3266/cell for ±2%)".to_string(),
    ]);
    table.push(vec![
        "disabled".to_string(),
        "99,654 ±8%".to_string(),
        "100,510 ±18%".to_string(),
        "+0.9% [-2.3%, +2.6%]".to_string(),
        "equivalent (within ±3%)".to_string(),
    ]);
    let text = table.text();
    // The left-aligned verdict column starts at the same place in every line.
    let verdict_starts: Vec<Option<usize>> = text
        .lines()
        .map(|line| {
            line.rfind("  ")
                .map(|index| display_width(&line[..index + 2]))
        })
        .collect();
    assert!(
        verdict_starts
            .iter()
            .all(|start| *start == verdict_starts[0]),
        "verdict column starts at {verdict_starts:?}\n{text}"
    );
    insta::assert_snapshot!("pivot_style_text_table", text);
}

/// Cells as users and renderers produce them: numbers, `±`, Greek and
/// wide characters, control characters from workload output.
fn cell() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("a".to_string()),
            Just("±".to_string()),
            Just("γ".to_string()),
            Just("—".to_string()),
            Just("核".to_string()),
            Just("\n".to_string()),
            Just("\t".to_string()),
            Just("\u{1b}[31m".to_string()),
            Just("|".to_string()),
            Just(" ".to_string()),
            "[0-9]{1,6}".prop_map(|digits| digits),
        ],
        0..6,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #[test]
    fn every_line_of_a_text_table_has_the_same_display_width(
        columns in 2usize..6,
        rows in proptest::collection::vec(proptest::collection::vec(cell(), 6), 0..8),
        header in proptest::collection::vec(cell(), 6),
        left in proptest::collection::vec(any::<bool>(), 6),
    ) {
        let mut table = Table::new(header[..columns].to_vec());
        // Left-aligned columns anywhere but the last (a left-aligned last
        // column ends each line at its own text: trailing spaces are trimmed).
        table.left = (1..columns.saturating_sub(1)).filter(|index| left[*index]).collect();
        for row in &rows {
            table.push(row[..columns].to_vec());
        }
        let text = table.text();
        prop_assert_eq!(text.lines().count(), rows.len() + 1, "one line per row:\n{}", text);
        prop_assert!(!escape::has_raw_control(&text), "raw control character:\n{:?}", text);
        // Trailing spaces are trimmed (format=flowed email), so a line whose
        // last cell is blank may end early; every other line is exactly as
        // wide as the widest.
        let widths: Vec<usize> = text.lines().map(display_width).collect();
        let expected = widths.iter().copied().max().unwrap_or(0);
        for ((line, width), row) in text.lines().zip(&widths).zip(std::iter::once(&header).chain(&rows)) {
            if !escape::text(&row[columns - 1]).trim().is_empty() {
                prop_assert_eq!(*width, expected, "ragged line {:?}:\n{}", line, text);
            }
        }
    }
}
