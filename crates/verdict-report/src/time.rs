//! Times and durations for people, from milliseconds since the epoch:
//! UTC dates and spans (no time-zone database), RFC 3339 timestamps, and
//! durations in the largest two units. Pure string functions; the clock is
//! never read here.

/// UTC `YYYY-MM-DD HH:MM` from milliseconds since the epoch, so reports
/// need no time-zone database.
pub fn format_time(milliseconds: i64) -> String {
    let (year, month, day, of_day) = civil(milliseconds);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        of_day / 3600,
        of_day % 3600 / 60
    )
}

/// From and to at second resolution, the date once when both share it:
/// `2026-12-01 14:38:34 to 14:38:35 UTC`.
pub fn format_span(from_ms: i64, to_ms: i64) -> String {
    let clock = |of_day: i64| {
        format!(
            "{:02}:{:02}:{:02}",
            of_day / 3600,
            of_day % 3600 / 60,
            of_day % 60
        )
    };
    let (from_year, from_month, from_day, from_of_day) = civil(from_ms);
    let (to_year, to_month, to_day, to_of_day) = civil(to_ms);
    let from = format!(
        "{from_year:04}-{from_month:02}-{from_day:02} {}",
        clock(from_of_day)
    );
    if (from_year, from_month, from_day) == (to_year, to_month, to_day) {
        format!("{from} to {} UTC", clock(to_of_day))
    } else {
        format!(
            "{from} to {to_year:04}-{to_month:02}-{to_day:02} {} UTC",
            clock(to_of_day)
        )
    }
}

/// RFC 3339 UTC with milliseconds, `2026-11-30T12:00:05.250Z`.
pub fn format_timestamp(milliseconds: i64) -> String {
    let (year, month, day, of_day) = civil(milliseconds);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60,
        milliseconds.rem_euclid(1000)
    )
}

/// (year, month, day, second of the day) in UTC from milliseconds since the
/// epoch (civil-from-days, Howard Hinnant's algorithm).
fn civil(milliseconds: i64) -> (i64, i64, i64, i64) {
    let seconds = milliseconds.div_euclid(1000);
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day, of_day)
}

/// A duration for people: `850 ms`, `42 s`, `3 min 20 s`, `2 h 5 min`,
/// `3 d 4 h`.
pub fn format_duration(milliseconds: i64) -> String {
    let milliseconds = milliseconds.max(0);
    if milliseconds < 1000 {
        return format!("{milliseconds} ms");
    }
    let seconds = milliseconds / 1000;
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} min {} s", seconds / 60, seconds % 60),
        3600..86_400 => format!("{} h {} min", seconds / 3600, seconds % 3600 / 60),
        _ => format!("{} d {} h", seconds / 86_400, seconds % 86_400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_durations() {
        assert_eq!(super::format_duration(850), "850 ms");
        assert_eq!(super::format_duration(42_400), "42 s");
        assert_eq!(super::format_duration(200_000), "3 min 20 s");
        assert_eq!(super::format_duration(7_500_000), "2 h 5 min");
        assert_eq!(super::format_duration(273_600_000), "3 d 4 h");
    }

    #[test]
    fn formats_utc_times() {
        assert_eq!(super::format_time(0), "1970-01-01 00:00 UTC");
        assert_eq!(
            super::format_time(1_796_040_000_000),
            "2026-11-30 12:00 UTC"
        );
        assert_eq!(super::format_time(951_782_400_000), "2000-02-29 00:00 UTC");
        assert_eq!(
            super::format_timestamp(1_796_040_005_250),
            "2026-11-30T12:00:05.250Z"
        );
        assert_eq!(super::format_timestamp(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(
            super::format_span(1_796_040_005_250, 1_796_040_065_000),
            "2026-11-30 12:00:05 to 12:01:05 UTC"
        );
        assert_eq!(
            super::format_span(1_796_040_005_250, 1_796_140_005_250),
            "2026-11-30 12:00:05 to 2026-12-01 15:46:45 UTC"
        );
    }
}
