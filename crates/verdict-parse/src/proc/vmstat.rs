//! /proc/vmstat: `name value` lines of the kernel's virtual-memory event
//! counters. The one parser of this file (verdict-doctor's swap check looks
//! counters up through here).
//!
//! Source: proc(5), "/proc/vmstat"; the names are the kernel's
//! `vmstat_text` (mm/vmstat.c) and vary by version and configuration
//! (`numa_*` only with CONFIG_NUMA, `thp_*` only with transparent huge
//! pages). Must not read the file.

use std::collections::BTreeMap;

/// Every counter in the file, by name. Lines that are not `name number`
/// are skipped.
pub fn parse(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(char::is_whitespace)?;
            Some((name.to_string(), value.trim().parse().ok()?))
        })
        .collect()
}

/// The [`monitored`] counters only, names borrowed from `text` (a
/// monitor parses two snapshots per iteration: the other ~150 lines are
/// not kept).
pub fn monitored_counters(text: &str) -> BTreeMap<&str, u64> {
    text.lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(char::is_whitespace)?;
            monitored(name).then_some(())?;
            Some((name, value.trim().parse().ok()?))
        })
        .collect()
}

/// One counter, `None` when the file does not have it.
pub fn counter(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (key, value) = line.split_once(char::is_whitespace)?;
        (key == name).then(|| value.trim().parse().ok())?
    })
}

/// The counters a monitor keeps: page faults, allocation stalls and direct
/// reclaim, compaction stalls, NUMA placement and migration, transparent
/// huge pages, swapping. Prefixes of the names.
pub const MONITORED_PREFIXES: [&str; 10] = [
    "pgfault",
    "pgmajfault",
    "allocstall",
    "compact_stall",
    "pgscan_direct",
    "pgsteal_direct",
    "numa_",
    "pgmigrate_",
    "thp_",
    "pswp",
];

/// Whether a monitor keeps the counter `name`.
pub fn monitored(name: &str) -> bool {
    MONITORED_PREFIXES
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_and_the_monitored_ones() {
        let text = "nr_free_pages 12\npgfault 100\npgmajfault 3\nallocstall_normal 1\n\
                    thp_fault_alloc 0\nbroken\nnuma_hit x\n";
        let counters = parse(text);
        assert_eq!(counters.len(), 5);
        assert_eq!(counter(text, "pgmajfault"), Some(3));
        assert_eq!(counter(text, "pswpin"), None);
        let kept: Vec<&String> = counters.keys().filter(|name| monitored(name)).collect();
        assert_eq!(
            kept,
            [
                "allocstall_normal",
                "pgfault",
                "pgmajfault",
                "thp_fault_alloc"
            ]
        );
        let monitored: Vec<&str> = monitored_counters(text).into_keys().collect();
        assert_eq!(monitored, kept);
    }
}
