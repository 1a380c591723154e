//! /proc/stat: cumulative CPU time by state, in clock ticks (USER_HZ), the
//! context switches and the processes forked since boot. The one parser of
//! this file (verdict-doctor reads it through here too).
//!
//! Source: proc(5), "/proc/stat". Columns after `cpu`/`cpuN` are user, nice,
//! system, idle, iowait, irq, softirq, steal, guest, guest_nice; older
//! kernels print fewer columns (missing ones read as 0). Must not: read the
//! file or interpret ticks as seconds (the caller knows USER_HZ).

use serde::Serialize;

/// CPU time by state, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTimes {
    /// All ticks counted (guest time is already inside user/nice).
    pub fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }

    /// Ticks spent doing something (not idle, not waiting for I/O).
    pub fn busy(&self) -> u64 {
        self.total() - self.idle - self.iowait
    }

    /// `later - self`, saturating at 0 per field (counters can go backwards
    /// across CPU hotplug).
    pub fn delta_to(&self, later: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: later.user.saturating_sub(self.user),
            nice: later.nice.saturating_sub(self.nice),
            system: later.system.saturating_sub(self.system),
            idle: later.idle.saturating_sub(self.idle),
            iowait: later.iowait.saturating_sub(self.iowait),
            irq: later.irq.saturating_sub(self.irq),
            softirq: later.softirq.saturating_sub(self.softirq),
            steal: later.steal.saturating_sub(self.steal),
        }
    }

    /// Steal as a fraction of all ticks, `None` when no time elapsed.
    pub fn steal_fraction(&self) -> Option<f64> {
        let total = self.total();
        (total > 0).then(|| self.steal as f64 / total as f64)
    }
}

/// The parts of /proc/stat doctor uses.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProcStat {
    /// The aggregate `cpu` line.
    pub total: CpuTimes,
    /// `cpuN` lines in file order: (N, times).
    pub per_cpu: Vec<(u32, CpuTimes)>,
    /// `ctxt`: context switches since boot.
    pub context_switches: Option<u64>,
    /// `procs_running`.
    pub procs_running: Option<u64>,
    /// `processes`: forks since boot.
    pub processes: Option<u64>,
}

fn parse_times(fields: &[&str]) -> Option<CpuTimes> {
    let mut numbers = [0u64; 8];
    if fields.len() < 4 {
        return None;
    }
    for (slot, field) in numbers.iter_mut().zip(fields) {
        *slot = field.parse().ok()?;
    }
    Some(CpuTimes {
        user: numbers[0],
        nice: numbers[1],
        system: numbers[2],
        idle: numbers[3],
        iowait: numbers[4],
        irq: numbers[5],
        softirq: numbers[6],
        steal: numbers[7],
    })
}

/// Parses /proc/stat. `None` when there is no aggregate `cpu` line.
pub fn parse(text: &str) -> Option<ProcStat> {
    let mut stat = ProcStat::default();
    let mut seen_total = false;
    let first = |rest: &str| rest.split_whitespace().next()?.parse().ok();
    for line in text.lines() {
        // Split the key off first: the `intr` and `softirq` lines (hundreds
        // of numbers) are not read further.
        let (key, rest) = line
            .trim_start()
            .split_once(char::is_whitespace)
            .unwrap_or((line.trim_start(), ""));
        if key == "cpu" {
            stat.total = parse_times(&rest.split_whitespace().collect::<Vec<_>>())?;
            seen_total = true;
        } else if let Some(number) = key.strip_prefix("cpu") {
            if let (Ok(index), Some(times)) = (
                number.parse(),
                parse_times(&rest.split_whitespace().collect::<Vec<_>>()),
            ) {
                stat.per_cpu.push((index, times));
            }
        } else if key == "ctxt" {
            stat.context_switches = first(rest);
        } else if key == "processes" {
            stat.processes = first(rest);
        } else if key == "procs_running" {
            stat.procs_running = first(rest);
        }
    }
    seen_total.then_some(stat)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_steal_and_per_cpu() {
        let text = "cpu  28609 0 3152 35010 337 0 43 32 0 0\n\
                    cpu0 14561 0 1431 17321 260 0 18 17 0 0\n\
                    cpu1 14047 0 1721 17689 77 0 24 14 0 0\n\
                    intr 1 2 3\nctxt 2287243\nprocesses 5521\nprocs_running 3\n";
        let stat = parse(text).unwrap();
        assert_eq!(stat.total.steal, 32);
        assert_eq!(stat.total.user, 28609);
        assert_eq!(stat.per_cpu.len(), 2);
        assert_eq!(stat.per_cpu[1].0, 1);
        assert_eq!(stat.context_switches, Some(2_287_243));
        assert_eq!(stat.procs_running, Some(3));
        assert_eq!(stat.processes, Some(5521));
        assert_eq!(stat.total.total(), 28609 + 3152 + 35010 + 337 + 43 + 32);
    }

    #[test]
    fn old_kernels_without_steal_column() {
        // 2.6.9-era /proc/stat: 7 columns.
        let stat = parse("cpu 10 0 5 100 1 0 0\n").unwrap();
        assert_eq!(stat.total.steal, 0);
        assert_eq!(stat.total.busy(), 15);
    }

    #[test]
    fn garbage_and_empty() {
        assert_eq!(parse(""), None);
        assert_eq!(parse("cpu x y z w\n"), None);
        assert_eq!(parse("intr 5\n"), None);
    }

    #[test]
    fn delta_and_fraction() {
        let before = parse("cpu 100 0 0 100 0 0 0 0\n").unwrap().total;
        let after = parse("cpu 150 0 0 140 0 0 0 10\n").unwrap().total;
        let delta = before.delta_to(&after);
        assert_eq!(delta.steal, 10);
        assert_eq!(delta.steal_fraction(), Some(0.1));
        assert_eq!(CpuTimes::default().steal_fraction(), None);
        // Counters that go backwards saturate.
        assert_eq!(after.delta_to(&before).user, 0);
    }
}
