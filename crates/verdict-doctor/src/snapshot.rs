//! A snapshot of the /proc and /sys files doctor needs, read once through
//! `SystemFiles` into a map, so that every check and the environment
//! capture are pure functions of the snapshot.
//!
//! Must not: parse beyond locating per-process files, or fail: a missing
//! file is `Absent`, an unreadable one `NotReadable`.

use crate::files::{FileRead, SystemFiles};
use std::collections::BTreeMap;

/// Files that describe configuration (read once).
pub const CONFIGURATION_PATHS: &[&str] = &[
    "/proc/cpuinfo",
    "/proc/cmdline",
    "/proc/loadavg",
    "/proc/swaps",
    "/proc/sys/kernel/hostname",
    "/proc/sys/kernel/osrelease",
    "/proc/sys/kernel/version",
    "/proc/sys/kernel/arch",
    "/proc/sys/kernel/random/boot_id",
    "/proc/version",
    "/etc/machine-id",
    "/proc/sys/kernel/randomize_va_space",
    "/proc/sys/kernel/perf_event_paranoid",
    "/proc/1/cgroup",
    "/proc/1/environ",
    "/proc/self/mountinfo",
    "/.dockerenv",
    "/run/.containerenv",
    "/sys/devices/system/cpu/online",
    "/sys/devices/system/cpu/possible",
    "/sys/devices/system/cpu/isolated",
    "/sys/devices/system/cpu/nohz_full",
    "/sys/devices/system/cpu/smt/control",
    "/sys/devices/system/cpu/smt/active",
    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver",
    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_available_governors",
    "/sys/devices/system/cpu/cpufreq/boost",
    "/sys/devices/system/cpu/intel_pstate/no_turbo",
    "/sys/devices/system/cpu/intel_pstate/status",
    "/sys/devices/system/clocksource/clocksource0/current_clocksource",
    "/sys/devices/system/clocksource/clocksource0/available_clocksource",
    "/sys/kernel/mm/transparent_hugepage/enabled",
    "/sys/kernel/mm/transparent_hugepage/defrag",
    "/sys/class/dmi/id/sys_vendor",
    "/sys/class/dmi/id/product_name",
    "/sys/hypervisor/type",
    "/sys/fs/selinux/enforce",
    "/sys/kernel/debug/sched/preempt",
    "/sys/fs/cgroup/cpu.max",
    "/sys/fs/cgroup/cpu/cpu.cfs_quota_us",
    "/sys/fs/cgroup/cpu/cpu.cfs_period_us",
    "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us",
    "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us",
];

/// Counters compared before and after a measurement window.
pub const COUNTER_PATHS: &[&str] = &["/proc/stat", "/proc/vmstat", "/proc/ppc64/lparcfg"];

/// Directories whose entry names are recorded (not their contents).
pub const LISTED_DIRECTORIES: &[&str] = &[
    "/sys/bus/event_source/devices",
    "/sys/devices/system/cpu/cpufreq",
];

/// Read files and directory listings, by absolute path.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    files: BTreeMap<String, FileRead>,
    listings: BTreeMap<String, Vec<String>>,
}

impl Snapshot {
    /// Reads the given paths.
    pub fn read(files: &dyn SystemFiles, paths: &[&str]) -> Self {
        let mut snapshot = Self::default();
        snapshot.add(files, paths);
        snapshot
    }

    /// Reads more paths into this snapshot.
    pub fn add(&mut self, files: &dyn SystemFiles, paths: &[&str]) {
        for path in paths {
            self.files.insert((*path).to_string(), files.read(path));
        }
    }

    /// Records the entry names of directories.
    pub fn add_listings(&mut self, files: &dyn SystemFiles, directories: &[&str]) {
        for directory in directories {
            self.listings
                .insert((*directory).to_string(), files.list(directory));
        }
    }

    /// Reads /proc/PID/stat for every process listed in /proc.
    pub fn add_processes(&mut self, files: &dyn SystemFiles) {
        for entry in files.list("/proc") {
            if entry.bytes().all(|byte| byte.is_ascii_digit()) {
                let path = format!("/proc/{entry}/stat");
                let read = files.read(&path);
                self.files.insert(path, read);
            }
        }
    }

    /// The configuration files, listings and counters: everything the checks
    /// need at one moment.
    pub fn full(files: &dyn SystemFiles) -> Self {
        let mut snapshot = Self::read(files, CONFIGURATION_PATHS);
        snapshot.add(files, COUNTER_PATHS);
        snapshot.add_listings(files, LISTED_DIRECTORIES);
        snapshot.add_processes(files);
        snapshot
    }

    /// Only the counters and processes: the end of a window.
    pub fn counters(files: &dyn SystemFiles) -> Self {
        let mut snapshot = Self::read(files, COUNTER_PATHS);
        snapshot.add_processes(files);
        snapshot
    }

    /// The read of `path`; `Absent` when it was never read.
    pub fn get(&self, path: &str) -> &FileRead {
        static ABSENT: FileRead = FileRead::Absent;
        self.files.get(path).unwrap_or(&ABSENT)
    }

    /// The text of `path`, when present.
    pub fn text(&self, path: &str) -> Option<String> {
        self.get(path).text()
    }

    /// The first trimmed line of `path`, when present and non-empty.
    pub fn value(&self, path: &str) -> Option<String> {
        self.get(path).value()
    }

    /// Entry names of a listed directory (empty when absent or not listed).
    pub fn listing(&self, directory: &str) -> &[String] {
        self.listings
            .get(directory)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// All /proc/PID/stat reads, by path.
    pub fn process_stats(&self) -> impl Iterator<Item = (&str, &FileRead)> {
        self.files
            .iter()
            .filter(|(path, _)| {
                path.strip_prefix("/proc/")
                    .and_then(|rest| rest.strip_suffix("/stat"))
                    .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
            })
            .map(|(path, read)| (path.as_str(), read))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::FixtureFiles;

    #[test]
    fn absent_unreadable_and_processes() {
        let mut files = FixtureFiles::new();
        files
            .insert("/proc/stat", "cpu 1 2 3 4\n")
            .insert("/proc/12/stat", "12 (a) S 1 0 0 0 0 0 0 0 0 0 5 6")
            .insert("/proc/self/stat", "99 (b) R 1")
            .deny("/proc/1/environ");
        let snapshot = Snapshot::full(&files);
        assert_eq!(snapshot.get("/proc/cpuinfo"), &FileRead::Absent);
        assert!(matches!(
            snapshot.get("/proc/1/environ"),
            FileRead::NotReadable(_)
        ));
        assert_eq!(snapshot.get("/never/read"), &FileRead::Absent);
        let processes: Vec<&str> = snapshot.process_stats().map(|(path, _)| path).collect();
        // /proc/1 is listed (its environ exists), its stat is absent.
        assert_eq!(processes, vec!["/proc/1/stat", "/proc/12/stat"]);
        assert_eq!(snapshot.get("/proc/1/stat"), &FileRead::Absent);
        assert!(snapshot.listing("/sys/bus/event_source/devices").is_empty());
    }
}
