//! `csv_text_column`: the label column `verdict history --time-column`
//! reads beside `csv_column`'s values, row for row, with file:line errors.
//! Must not: depend on files outside the test.

use verdict_parse::{ParseError, csv_column, csv_text_column};

#[test]
fn labels_come_row_for_row_with_the_values() {
    let text = "time,value\n2026-11-01,10.43\n\n\"2026-11-02, late\",10.23\r\n";
    assert_eq!(
        csv_text_column(text, "time").unwrap(),
        ["2026-11-01", "2026-11-02, late"]
    );
    assert_eq!(csv_column(text, "value").unwrap(), [10.43, 10.23]);
}

#[test]
fn a_missing_column_and_a_short_row_are_errors() {
    let error = csv_text_column("a,b\n1,2\n", "time").unwrap_err();
    assert!(matches!(error, ParseError::MissingColumn { .. }), "{error}");
    let error = csv_text_column("a,b\n1,2\n3\n", "b").unwrap_err();
    let message = error.to_string();
    assert!(message.contains("line 3"), "{message}");
}
