//! Property tests of the tolerant number parser: what verdict prints (plain,
//! with thousands separators, with a unit) parses back to the same value, and
//! European decimal commas are refused rather than misread.

use proptest::prelude::*;
use verdict_parse::parse_number;

fn with_thousands_separators(integer: u64) -> String {
    let digits = integer.to_string();
    let mut grouped = String::new();
    for (position, digit) in digits.chars().enumerate() {
        if position > 0 && (digits.len() - position) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

proptest! {
    #[test]
    fn plain_display_round_trips(value in -1e12f64..1e12f64) {
        prop_assert_eq!(parse_number(&value.to_string()).unwrap(), value);
    }

    #[test]
    fn grouped_integers_round_trip(integer in 0u64..10_000_000_000_000, unit in prop::sample::select(vec!["", " ops/s", "ns/op", " %", "s", " KiB"])) {
        let text = format!("{}{unit}", with_thousands_separators(integer));
        prop_assert_eq!(parse_number(&text).unwrap(), integer as f64);
    }

    #[test]
    fn decimal_commas_are_refused(integer in 0u64..1000, fraction in 0u64..100) {
        let text = format!("{integer},{fraction:02}");
        prop_assert!(parse_number(&text).is_err(), "{} was accepted", text);
    }
}
