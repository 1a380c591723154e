//! Output formats and number formatting shared by every renderer.

/// How a report is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Markdown,
    Csv,
    Json,
    /// Plain text for a mail to a list: every line at most 80 columns
    /// (`email`).
    Email,
}

impl Format {
    pub fn parse(text: &str) -> Option<Format> {
        match text {
            "text" => Some(Format::Text),
            "markdown" | "md" => Some(Format::Markdown),
            "csv" => Some(Format::Csv),
            "json" => Some(Format::Json),
            "email" => Some(Format::Email),
            _ => None,
        }
    }
}

/// A value for people: whole numbers with thousands separators from 1,000
/// on (so a column never mixes `8436` and `14,097`), about four significant
/// digits below; seconds scaled to ms/us below one second.
pub fn value(number: f64, unit: &str) -> String {
    if !number.is_finite() {
        return number.to_string();
    }
    if unit == "s" && number.abs() < 1.0 && number != 0.0 {
        if number.abs() >= 1e-3 {
            return format!("{}ms", plain(number * 1e3));
        }
        return format!("{}us", plain(number * 1e6));
    }
    let text = plain(number);
    if unit == "s" {
        format!("{text}s")
    } else {
        text
    }
}

fn plain(number: f64) -> String {
    let magnitude = number.abs();
    if magnitude >= 1000.0 {
        thousands(number.round() as i64)
    } else if magnitude >= 100.0 {
        format!("{number:.1}")
    } else if magnitude >= 10.0 {
        format!("{number:.2}")
    } else {
        format!("{number:.3}")
    }
}

fn thousands(number: i64) -> String {
    let digits = number.unsigned_abs().to_string();
    let mut grouped = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    if number < 0 {
        format!("-{grouped}")
    } else {
        grouped
    }
}

/// A relative change as a signed percentage: `+2.7%`, `-18.6%`.
pub fn percent(change: f64) -> String {
    let hundred = change * 100.0;
    if hundred.abs() >= 100.0 {
        format!("{hundred:+.0}%")
    } else {
        format!("{hundred:+.1}%")
    }
}

/// A threshold as a percentage without needless decimals: `2%`, `2.5%`.
pub fn threshold(fraction: f64) -> String {
    let percent = fraction * 100.0;
    if (percent - percent.round()).abs() < 1e-9 {
        format!("{percent:.0}%")
    } else {
        format!("{}%", (percent * 100.0).round() / 100.0)
    }
}

/// A p-value to three decimals, `<0.001` below that.
pub fn p_value(p: f64) -> String {
    if p < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_naturally() {
        assert_eq!(value(68275.4, "bogo-ops/s"), "68,275");
        assert_eq!(value(1_234_567.0, ""), "1,234,567");
        assert_eq!(value(0.01234, "s"), "12.34ms");
        assert_eq!(value(0.0005, "s"), "500.0us");
        assert_eq!(value(74.792, "s"), "74.79s");
        assert_eq!(value(3.2051, ""), "3.205");
        assert_eq!(
            value(8436.2, ""),
            "8,436",
            "one separator style from 1,000 on"
        );
        assert_eq!(value(14_097.0, ""), "14,097");
        assert_eq!(value(999.94, ""), "999.9");
        assert_eq!(value(-1500.0, ""), "-1,500");
        assert_eq!(percent(-0.186), "-18.6%");
        assert_eq!(percent(0.027), "+2.7%");
        assert_eq!(p_value(0.0004), "<0.001");
        assert_eq!(threshold(0.02), "2%");
        assert_eq!(threshold(0.025), "2.5%");
        assert_eq!(p_value(0.6789), "0.679");
    }
}
