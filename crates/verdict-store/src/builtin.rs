//! How a sample's built-in metrics are kept (schema version 3): a metric
//! whose value is, bit for bit, the sample's own measurement
//! (`Sample::builtins_as_measured`, verdict-model) is a bit in
//! `samples.builtin_metrics` instead of a `sample_metrics` row, and reads
//! back as that measurement under the built-in's name. Which metrics are
//! built in, their names and their values are verdict-model's; only the
//! bits and the columns are the store's. Must not hold queries.

use verdict_model::{Builtin, Sample};

/// A built-in metric's bit in `samples.builtin_metrics` and the column
/// holding its value (schema version 3; never renumbered).
const fn encoding(builtin: Builtin) -> (i64, &'static str) {
    match builtin {
        Builtin::Wall => (1, "wall_seconds"),
        Builtin::User => (2, "user_seconds"),
        Builtin::Sys => (4, "sys_seconds"),
        Builtin::MaxRss => (8, "max_rss_kib"),
    }
}

/// The `builtin_metrics` bits of a sample about to be stored.
pub(crate) fn flags(sample: &Sample) -> i64 {
    sample
        .builtins_as_measured()
        .fold(0, |flags, builtin| flags | encoding(builtin).0)
}

/// Whether metric `name` is kept as a bit of `flags` (and has no row).
pub(crate) fn is_flagged(name: &str, flags: i64) -> bool {
    Builtin::from_name(name).is_some_and(|builtin| flags & encoding(builtin).0 != 0)
}

/// The names of the built-in metrics `flags` stands for.
pub(crate) fn names(flags: i64) -> impl Iterator<Item = &'static str> {
    Builtin::ALL
        .into_iter()
        .filter(move |builtin| flags & encoding(*builtin).0 != 0)
        .map(Builtin::name)
}

/// Puts the metrics `flags` stands for back into a sample read from the
/// store.
pub(crate) fn expand(sample: &mut Sample, flags: i64) {
    for builtin in Builtin::ALL {
        if flags & encoding(builtin).0 != 0 {
            let value = sample.measured(builtin);
            sample.metrics.insert(builtin.name().to_string(), value);
        }
    }
}

/// The SQL for metric `metric`'s value over `samples s` left-joined to
/// its `sample_metrics m` row: a built-in metric may be a bit on the
/// sample rather than a row. Only constants reach the text; `<>` reads
/// the same in both dialects.
pub(crate) fn value_sql(metric: &str) -> String {
    match Builtin::from_name(metric).map(encoding) {
        Some((bit, column)) => {
            format!("CASE WHEN (s.builtin_metrics & {bit}) <> 0 THEN s.{column} ELSE m.value END")
        }
        None => "m.value".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An iteration measured at 0.25 s wall, 0.125 s user, 2048 KiB.
    fn measured() -> Sample {
        serde_json::from_str(
            r#"{"cell": 0, "block": 0, "sequence": 0, "warmup": false, "started_at_ms": 0,
                "wall_seconds": 0.25, "user_seconds": 0.125, "sys_seconds": 0.0,
                "max_rss_kib": 2048, "exit_code": 0, "signal": null, "timed_out": false,
                "metrics": {}, "failure": null}"#,
        )
        .unwrap()
    }

    #[test]
    fn a_measured_builtin_is_a_bit_and_reads_back_by_its_model_name() {
        let mut sample = measured();
        sample.metrics.insert("wall".to_string(), 0.25);
        sample.metrics.insert("user".to_string(), 0.5);
        sample.metrics.insert("maxrss".to_string(), 2048.0);
        sample.metrics.insert("ops".to_string(), 7.0);
        let flags = flags(&sample);
        assert_eq!(flags, 1 | 8, "user differs from the column: a row");
        assert!(is_flagged("wall", flags) && is_flagged("maxrss", flags));
        assert!(!is_flagged("user", flags) && !is_flagged("ops", flags));
        let mut read = measured();
        expand(&mut read, flags);
        assert_eq!(
            read.metrics.into_iter().collect::<Vec<_>>(),
            [("maxrss".to_string(), 2048.0), ("wall".to_string(), 0.25)]
        );
        assert_eq!(value_sql("ops"), "m.value");
        assert!(value_sql("sys").contains("& 4) <> 0 THEN s.sys_seconds"));
    }
}
