//! Monitors: what the system did during one iteration, as named counter
//! deltas from two snapshots of a counter file taken on the target just
//! before the workload started and just after it was reaped.
//!
//! Names (one namespace, stable across runs so rows line up):
//! `cpu.user` ... `cpu.steal` (seconds of CPU time summed over every CPU,
//! from /proc/stat's `cpu` line and the target's USER_HZ),
//! `context_switches` and `forks` (/proc/stat `ctxt`, `processes`),
//! `interrupts.SOURCE` (/proc/interrupts, summed over CPUs),
//! `softirqs.TYPE` (/proc/softirqs), `vmstat.NAME` (the counters
//! [`vmstat::monitored`](super::vmstat::monitored) keeps), and the
//! workload's own `workload.voluntary_switches` and
//! `workload.involuntary_switches` (from `wait4`, named here so every
//! monitor name is made in one place). Must not read files.

use super::{interrupts, stat, vmstat};
use crate::ParseError;

/// Which counter file a snapshot is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterFile {
    Stat,
    Interrupts,
    Softirqs,
    Vmstat,
}

impl CounterFile {
    /// The file at `path` (`/proc/stat`, ...), `None` for any other.
    pub fn from_path(path: &str) -> Option<Self> {
        match path {
            "/proc/stat" => Some(Self::Stat),
            "/proc/interrupts" => Some(Self::Interrupts),
            "/proc/softirqs" => Some(Self::Softirqs),
            "/proc/vmstat" => Some(Self::Vmstat),
            _ => None,
        }
    }

    fn format(self) -> &'static str {
        match self {
            Self::Stat => "/proc/stat",
            Self::Interrupts => "/proc/interrupts",
            Self::Softirqs => "/proc/softirqs",
            Self::Vmstat => "/proc/vmstat",
        }
    }
}

/// What a monitor's value counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterUnit {
    /// CPU time, seconds (`cpu.*`).
    Seconds,
    /// Events (switches, interrupts, faults...).
    Count,
}

impl CounterUnit {
    /// The unit as reports print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Seconds => "s",
            Self::Count => "count",
        }
    }
}

/// The unit of the monitor called `name`.
pub fn counter_unit(name: &str) -> CounterUnit {
    if name.starts_with("cpu.") {
        CounterUnit::Seconds
    } else {
        CounterUnit::Count
    }
}

/// The workload's voluntary context switches (`ru_nvcsw`).
pub const WORKLOAD_VOLUNTARY_SWITCHES: &str = "workload.voluntary_switches";
/// The workload's involuntary context switches (`ru_nivcsw`).
pub const WORKLOAD_INVOLUNTARY_SWITCHES: &str = "workload.involuntary_switches";

/// The counters' increase from `before` to `after`, by monitor name (see
/// the module documentation). A counter that went backwards (CPU hotplug,
/// a reset) counts 0; one that appeared meanwhile (an interrupt line
/// registered during the iteration) counts from 0; one that disappeared is
/// left out. `ticks_per_second` converts /proc/stat's ticks to seconds.
/// Errors when a snapshot is not the file it should be. O(size of the
/// files).
pub fn counter_deltas(
    file: CounterFile,
    before: &str,
    after: &str,
    ticks_per_second: u64,
) -> Result<Vec<(String, f64)>, ParseError> {
    let unreadable = || ParseError::NotFound {
        what: file.format(),
        found: "the snapshot is not in that file's format".to_string(),
    };
    match file {
        CounterFile::Stat => {
            let (earlier, later) = (
                stat::parse(before).ok_or_else(unreadable)?,
                stat::parse(after).ok_or_else(unreadable)?,
            );
            let delta = earlier.total.delta_to(&later.total);
            let seconds = |ticks: u64| ticks as f64 / ticks_per_second.max(1) as f64;
            let mut deltas: Vec<(String, f64)> = [
                ("cpu.user", delta.user),
                ("cpu.nice", delta.nice),
                ("cpu.system", delta.system),
                ("cpu.irq", delta.irq),
                ("cpu.softirq", delta.softirq),
                ("cpu.idle", delta.idle),
                ("cpu.iowait", delta.iowait),
                ("cpu.steal", delta.steal),
            ]
            .into_iter()
            .map(|(name, ticks)| (name.to_string(), seconds(ticks)))
            .collect();
            for (name, earlier, later) in [
                (
                    "context_switches",
                    earlier.context_switches,
                    later.context_switches,
                ),
                ("forks", earlier.processes, later.processes),
            ] {
                if let (Some(earlier), Some(later)) = (earlier, later) {
                    deltas.push((name.to_string(), later.saturating_sub(earlier) as f64));
                }
            }
            Ok(deltas)
        }
        CounterFile::Interrupts | CounterFile::Softirqs => {
            let prefix = if file == CounterFile::Interrupts {
                "interrupts."
            } else {
                "softirqs."
            };
            let earlier = interrupts::parse_table(before).ok_or_else(unreadable)?;
            let later = interrupts::parse_table(after).ok_or_else(unreadable)?;
            Ok(later
                .iter()
                .map(|(source, count)| {
                    let start = earlier.get(source).copied().unwrap_or(0);
                    (
                        format!("{prefix}{source}"),
                        count.saturating_sub(start) as f64,
                    )
                })
                .collect())
        }
        CounterFile::Vmstat => {
            // Not the file when no line is `name number`.
            let counter_line = |line: &str| {
                line.split_once(char::is_whitespace)
                    .is_some_and(|(_, value)| value.trim().parse::<u64>().is_ok())
            };
            if !after.lines().any(counter_line) {
                return Err(unreadable());
            }
            let earlier = vmstat::monitored_counters(before);
            let later = vmstat::monitored_counters(after);
            Ok(later
                .iter()
                .map(|(name, count)| {
                    let start = earlier.get(name).copied().unwrap_or(0);
                    (format!("vmstat.{name}"), count.saturating_sub(start) as f64)
                })
                .collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_deltas_in_seconds_with_switches_and_forks() {
        let before = "cpu  100 0 50 1000 0 0 0 0 0 0\nctxt 500\nprocesses 40\n";
        let after = "cpu  130 0 70 1100 2 1 1 0 0 0\nctxt 620\nprocesses 43\n";
        let deltas = counter_deltas(CounterFile::Stat, before, after, 100).unwrap();
        let value = |name: &str| {
            deltas
                .iter()
                .find(|(found, _)| found == name)
                .unwrap_or_else(|| panic!("no {name} in {deltas:?}"))
                .1
        };
        assert_eq!(value("cpu.user"), 0.30);
        assert_eq!(value("cpu.system"), 0.20);
        assert_eq!(value("cpu.idle"), 1.0);
        assert_eq!(value("cpu.iowait"), 0.02);
        assert_eq!(value("context_switches"), 120.0);
        assert_eq!(value("forks"), 3.0);
        assert_eq!(deltas.len(), 10);
        assert_eq!(counter_unit("cpu.user"), CounterUnit::Seconds);
        assert_eq!(counter_unit("forks"), CounterUnit::Count);
    }

    #[test]
    fn new_sources_count_from_zero_and_wrong_files_are_errors() {
        let before = "      CPU0\n LOC: 10 Local timer interrupts\n";
        let after = "      CPU0\n LOC: 15 Local timer interrupts\n 40: 2 PCI-MSI 1-edge nvme0q1\n";
        let deltas = counter_deltas(CounterFile::Interrupts, before, after, 100).unwrap();
        assert_eq!(
            deltas,
            [
                ("interrupts.40:nvme0q1".to_string(), 2.0),
                ("interrupts.LOC".to_string(), 5.0)
            ]
        );
        let error = counter_deltas(CounterFile::Stat, "nonsense", "cpu 1 2 3 4", 100).unwrap_err();
        assert!(error.to_string().contains("/proc/stat"), "{error}");
        assert_eq!(
            CounterFile::from_path("/proc/vmstat"),
            Some(CounterFile::Vmstat)
        );
        assert_eq!(CounterFile::from_path("/etc/passwd"), None);
    }
}
