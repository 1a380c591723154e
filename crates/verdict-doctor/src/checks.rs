//! The checks: each looks at snapshots taken before and after the
//! measurement window and says ok, warn or info, with its evidence and, where
//! one exists, the command that fixes it.
//!
//! Pure: snapshots in, `Check`s out. Must not: read files, run the fixes, or
//! call something a problem without evidence; an unreadable file is said to
//! be "not readable", never guessed.

use crate::facts;
use crate::files::FileRead;
use crate::parse::{cgroup, cpuinfo, process, stat, sysfs};
use crate::snapshot::Snapshot;
use serde::Serialize;
use std::collections::BTreeMap;

/// A check's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Nothing to change.
    Ok,
    /// Likely to add noise; the fix says what to change.
    Warn,
    /// Worth knowing (recorded with results), not necessarily a problem.
    Info,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Warn => "warn",
            Self::Info => "info",
        }
    }
}

/// One check's line in the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Check {
    /// Stable identifier, e.g. `smt`, `steal`.
    pub id: String,
    pub status: Status,
    /// One sentence: what was found.
    pub finding: String,
    /// The file values it rests on.
    pub evidence: Vec<String>,
    /// A command or action that removes the problem, when one exists.
    pub fix: Option<String>,
}

fn check(id: &str, status: Status, finding: impl Into<String>) -> Check {
    Check {
        id: id.to_string(),
        status,
        finding: finding.into(),
        evidence: Vec::new(),
        fix: None,
    }
}

impl Check {
    fn evidence(mut self, line: impl Into<String>) -> Self {
        self.evidence.push(line.into());
        self
    }

    fn fix(mut self, command: impl Into<String>) -> Self {
        self.fix = Some(command.into());
        self
    }
}

/// The measurement window: what was read before and after it.
#[derive(Debug, Clone, Copy)]
pub struct Window<'a> {
    pub before: &'a Snapshot,
    pub after: &'a Snapshot,
    pub seconds: f64,
    /// USER_HZ, the unit of /proc/stat and /proc/PID/stat times.
    pub ticks_per_second: f64,
    /// Doctor's own pid, excluded from "other processes".
    pub own_pid: Option<u32>,
}

/// A process's CPU use over the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProcessUse {
    pub pid: u32,
    pub name: String,
    /// CPUs used on average (1.0 = one CPU busy the whole window).
    pub cpus: f64,
}

/// What happened on the machine during the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WindowUsage {
    pub seconds: f64,
    /// Steal over all CPUs as a fraction of all CPU time.
    pub steal_fraction: Option<f64>,
    pub steal_ticks: Option<u64>,
    /// CPUs kept busy by everything except doctor itself, on average.
    pub other_cpus: Option<f64>,
    /// The busiest other processes (at least 0.5% of a CPU), most first,
    /// at most 5.
    pub top_processes: Vec<ProcessUse>,
    /// Pages swapped in plus out.
    pub swap_pages: Option<u64>,
    /// LPAR hypervisor dispatches of our virtual processors.
    pub dispatches: Option<u64>,
    /// LPAR dispatch dispersions (dispatches onto another physical CPU).
    pub dispatch_dispersions: Option<u64>,
}

fn proc_stat(snapshot: &Snapshot) -> Option<stat::ProcStat> {
    stat::parse(&snapshot.text("/proc/stat")?)
}

fn processes(snapshot: &Snapshot) -> BTreeMap<u32, process::ProcessTimes> {
    snapshot
        .process_stats()
        .filter_map(|(_, read)| process::parse_stat(&read.text()?))
        .map(|times| (times.pid, times))
        .collect()
}

/// Computes the window's usage from the two snapshots.
pub fn window_usage(window: &Window<'_>) -> WindowUsage {
    let mut usage = WindowUsage {
        seconds: window.seconds,
        ..WindowUsage::default()
    };
    let ticks = window.seconds * window.ticks_per_second;
    let before = processes(window.before);
    let after = processes(window.after);
    let mut own_ticks = 0u64;
    let mut uses: Vec<ProcessUse> = Vec::new();
    for (pid, later) in &after {
        let earlier = before.get(pid).map_or(0, |earlier| earlier.cpu_ticks);
        let used = later.cpu_ticks.saturating_sub(earlier);
        if Some(*pid) == window.own_pid {
            own_ticks = used;
        } else if ticks > 0.0 && used as f64 / ticks >= 0.005 {
            uses.push(ProcessUse {
                pid: *pid,
                name: later.name.clone(),
                cpus: used as f64 / ticks,
            });
        }
    }
    uses.sort_by(|left, right| right.cpus.total_cmp(&left.cpus));
    uses.truncate(5);
    usage.top_processes = uses;
    if let (Some(first), Some(last)) = (proc_stat(window.before), proc_stat(window.after)) {
        let delta = first.total.delta_to(&last.total);
        usage.steal_ticks = Some(delta.steal);
        usage.steal_fraction = delta.steal_fraction();
        if ticks > 0.0 {
            let others = delta.busy().saturating_sub(own_ticks);
            usage.other_cpus = Some(others as f64 / ticks);
        }
    }
    let swapped = |snapshot: &Snapshot| -> Option<u64> {
        let text = snapshot.text("/proc/vmstat")?;
        Some(sysfs::vmstat_counter(&text, "pswpin")? + sysfs::vmstat_counter(&text, "pswpout")?)
    };
    if let (Some(first), Some(last)) = (swapped(window.before), swapped(window.after)) {
        usage.swap_pages = Some(last.saturating_sub(first));
    }
    if let (Some(first), Some(last)) = (facts::lpar(window.before), facts::lpar(window.after)) {
        let rise = |earlier: Option<u64>, later: Option<u64>| Some(later?.saturating_sub(earlier?));
        usage.dispatches = rise(first.dispatches, last.dispatches);
        usage.dispatch_dispersions = rise(first.dispatch_dispersions, last.dispatch_dispersions);
    }
    usage
}

fn describe(read: &FileRead, path: &str) -> String {
    match read {
        FileRead::Present(_) => format!("{path} = {}", read.value().unwrap_or_default()),
        other => format!("{path} {}", other.state_word()),
    }
}

fn percent(value: f64) -> String {
    format!("{:.1}%", value * 100.0)
}

const SMT_CONTROL: &str = "/sys/devices/system/cpu/smt/control";
const GOVERNOR: &str = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor";
const CLOCKSOURCE: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
const AVAILABLE_CLOCKSOURCES: &str =
    "/sys/devices/system/clocksource/clocksource0/available_clocksource";
const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// Runs every check.
pub fn run_checks(
    window: &Window<'_>,
    usage: &WindowUsage,
    config: Option<&BTreeMap<String, String>>,
) -> Vec<Check> {
    let snapshot = window.before;
    let mut checks = vec![virtualization(snapshot)];
    checks.extend(lpar(snapshot, usage));
    checks.push(steal(usage));
    checks.push(other_processes(snapshot, usage));
    checks.push(governor(snapshot));
    checks.push(boost(snapshot));
    checks.push(smt(snapshot));
    checks.push(isolation(snapshot));
    checks.push(cgroup_quota(snapshot));
    checks.push(swap(snapshot, usage));
    checks.push(irq_balance(snapshot));
    checks.push(transparent_hugepages(snapshot));
    checks.push(aslr(snapshot));
    checks.push(perf_counters(snapshot));
    checks.push(clocksource(snapshot));
    checks.push(preemption(snapshot, config));
    checks.push(selinux(snapshot, config));
    checks
}

fn virtualization(snapshot: &Snapshot) -> Check {
    let Some(detection) = facts::virtualization(snapshot) else {
        return check(
            "virtualization",
            Status::Info,
            "unknown: /proc/cpuinfo not readable",
        )
        .evidence(describe(snapshot.get("/proc/cpuinfo"), "/proc/cpuinfo"));
    };
    let mut result = match (&detection.hypervisor, &detection.container) {
        (None, None) => check(
            "virtualization",
            Status::Ok,
            "bare metal: no hypervisor or container detected",
        ),
        (Some(hypervisor), None) if hypervisor == "powervm" => check(
            "virtualization",
            Status::Info,
            "PowerVM logical partition: see the lpar check for its processor mode",
        ),
        (Some(hypervisor), container) => check(
            "virtualization",
            Status::Warn,
            format!(
                "virtual machine ({hypervisor}{}): neighbours on the host can take CPU time",
                container
                    .as_ref()
                    .map(|c| format!(", in a {c} container"))
                    .unwrap_or_default()
            ),
        )
        .fix("measure on bare metal or dedicated, pinned vCPUs; confirm on a second machine"),
        (None, Some(container)) => check(
            "virtualization",
            Status::Info,
            format!("{container} container on a shared kernel: other containers share the CPUs"),
        ),
    };
    for line in &detection.evidence {
        result = result.evidence(line.clone());
    }
    for line in &detection.hints {
        result = result.evidence(format!("ignored: {line}"));
    }
    result
}

fn lpar(snapshot: &Snapshot, usage: &WindowUsage) -> Option<Check> {
    let read = snapshot.get("/proc/ppc64/lparcfg");
    if let FileRead::NotReadable(_) = read {
        return Some(
            check("lpar", Status::Info, "LPAR configuration not readable")
                .evidence(describe(read, "/proc/ppc64/lparcfg"))
                .fix("run verdict doctor as root to read /proc/ppc64/lparcfg"),
        );
    }
    let config = facts::lpar(snapshot)?;
    let mode = config.mode_word().unwrap_or("unknown mode");
    let capped = match config.capped {
        Some(true) => "capped",
        Some(false) => "uncapped",
        None => "capping unknown",
    };
    let entitled = config
        .entitled_capacity
        .map(|value| format!(", entitled {value:.2} processors"))
        .unwrap_or_default();
    let mut result = if config.shared == Some(true) {
        check(
            "lpar",
            Status::Warn,
            format!("PowerVM LPAR, {mode} processors, {capped}{entitled}: other partitions take cycles from the pool"),
        )
        .fix("use a dedicated-processor LPAR (HMC partition profile), and confirm results on a second, physically separate LPAR")
    } else {
        check(
            "lpar",
            Status::Info,
            format!("PowerVM LPAR, {mode} processors{entitled}: caches and memory are still shared with other partitions"),
        )
        .fix("confirm results on a second, physically separate LPAR")
    };
    for key in [
        "shared_processor_mode",
        "capped",
        "partition_entitled_capacity",
        "partition_active_processors",
        "capacity_weight",
        "pool",
    ] {
        if let Some(value) = config.fields.get(key) {
            result = result.evidence(format!("{key}={value}"));
        }
    }
    if let Some(dispatches) = usage.dispatches {
        result = result.evidence(format!("dispatches during the check: {dispatches}"));
    }
    if let Some(dispersions) = usage.dispatch_dispersions {
        result = result.evidence(format!(
            "dispatch_dispersions during the check: {dispersions}"
        ));
        if dispersions > 0 && result.status == Status::Info {
            result.status = Status::Warn;
        }
    }
    Some(result)
}

fn steal(usage: &WindowUsage) -> Check {
    let Some(ticks) = usage.steal_ticks else {
        return check(
            "steal",
            Status::Info,
            "steal time unknown: /proc/stat not readable",
        );
    };
    let fraction = usage.steal_fraction.unwrap_or(0.0);
    let evidence = format!(
        "/proc/stat steal: {ticks} tick{} in {:.1} s ({})",
        if ticks == 1 { "" } else { "s" },
        usage.seconds,
        percent(fraction)
    );
    if ticks == 0 {
        check("steal", Status::Ok, "no steal time during the check").evidence(evidence)
    } else if fraction < 0.01 {
        check(
            "steal",
            Status::Info,
            format!("little steal during the check ({})", percent(fraction)),
        )
        .evidence(evidence)
    } else {
        check(
            "steal",
            Status::Warn,
            format!(
                "the hypervisor took {} of CPU time during the check",
                percent(fraction)
            ),
        )
        .evidence(evidence)
        .fix("ask for dedicated or pinned vCPUs, or measure when the host is quiet")
    }
}

fn other_processes(snapshot: &Snapshot, usage: &WindowUsage) -> Check {
    let Some(others) = usage.other_cpus else {
        return check(
            "other-processes",
            Status::Info,
            "CPU use by others unknown: /proc/stat not readable",
        );
    };
    let cpus = snapshot
        .text("/proc/cpuinfo")
        .and_then(|text| cpuinfo::parse(&text))
        .map_or(1.0, |info| f64::from(info.processors.max(1)));
    let mut result = if others > 0.1 {
        check(
            "other-processes",
            Status::Warn,
            format!("other work kept {others:.2} of {cpus:.0} CPUs busy during the check"),
        )
        .fix("stop the processes named in the evidence, or pin the workload away from them (taskset -c)")
    } else {
        check(
            "other-processes",
            Status::Ok,
            format!("the machine was quiet ({others:.2} CPUs used by others)"),
        )
    };
    for process in &usage.top_processes {
        result = result.evidence(format!(
            "{} (pid {}): {:.0}% of a CPU",
            process.name,
            process.pid,
            process.cpus * 100.0
        ));
    }
    if let Some(loads) = snapshot
        .text("/proc/loadavg")
        .and_then(|t| sysfs::parse_loadavg(&t))
    {
        result = result.evidence(format!(
            "load average before: {:.2} {:.2} {:.2}",
            loads[0], loads[1], loads[2]
        ));
    }
    result
}

fn governor(snapshot: &Snapshot) -> Check {
    let read = snapshot.get(GOVERNOR);
    match read.value().as_deref() {
        Some("performance") => check("governor", Status::Ok, "cpufreq governor is performance")
            .evidence(describe(read, GOVERNOR)),
        Some(other) => check(
            "governor",
            Status::Warn,
            format!("cpufreq governor is {other}: frequency follows load"),
        )
        .evidence(describe(read, GOVERNOR))
        .evidence(describe(
            snapshot.get("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver"),
            "scaling_driver",
        ))
        .fix("sudo cpupower frequency-set -g performance"),
        None if read.exists() => check("governor", Status::Info, "cpufreq governor not readable")
            .evidence(describe(read, GOVERNOR)),
        None => check(
            "governor",
            Status::Info,
            "no cpufreq: frequency is set by the hypervisor or firmware, not this kernel",
        )
        .evidence(format!("{GOVERNOR} absent")),
    }
}

fn boost(snapshot: &Snapshot) -> Check {
    const BOOST: &str = "/sys/devices/system/cpu/cpufreq/boost";
    const NO_TURBO: &str = "/sys/devices/system/cpu/intel_pstate/no_turbo";
    if let Some(value) = snapshot.value(NO_TURBO) {
        return if value == "1" {
            check("turbo", Status::Ok, "turbo is off")
                .evidence(describe(snapshot.get(NO_TURBO), NO_TURBO))
        } else {
            check(
                "turbo",
                Status::Warn,
                "turbo is on: clock speed depends on temperature and load",
            )
            .evidence(describe(snapshot.get(NO_TURBO), NO_TURBO))
            .fix(format!("echo 1 | sudo tee {NO_TURBO}"))
        };
    }
    if let Some(value) = snapshot.value(BOOST) {
        return if value == "0" {
            check("turbo", Status::Ok, "boost is off")
                .evidence(describe(snapshot.get(BOOST), BOOST))
        } else {
            check(
                "turbo",
                Status::Warn,
                "boost is on: clock speed depends on temperature and load",
            )
            .evidence(describe(snapshot.get(BOOST), BOOST))
            .fix(format!("echo 0 | sudo tee {BOOST}"))
        };
    }
    check(
        "turbo",
        Status::Info,
        "no boost or turbo control exposed to this kernel",
    )
    .evidence(format!("{BOOST} {}", snapshot.get(BOOST).state_word()))
    .evidence(format!(
        "{NO_TURBO} {}",
        snapshot.get(NO_TURBO).state_word()
    ))
}

fn smt(snapshot: &Snapshot) -> Check {
    let read = snapshot.get(SMT_CONTROL);
    let cpu = snapshot
        .text("/proc/cpuinfo")
        .and_then(|t| cpuinfo::parse(&t));
    let threads = cpu
        .as_ref()
        .and_then(|info| Some((info.siblings?, info.cores?)))
        .map(|(siblings, cores)| format!("cpuinfo: {siblings} siblings, {cores} cores"));
    let mut result = match read.value().as_deref() {
        Some("on") => check(
            "smt",
            Status::Warn,
            "SMT is on: sibling threads share a core's execution units",
        )
        .fix(format!(
            "echo off | sudo tee {SMT_CONTROL}  (or pin to one thread per core)"
        )),
        Some("off" | "forceoff") => check("smt", Status::Ok, "SMT is off"),
        Some("notsupported") => check(
            "smt",
            Status::Info,
            "SMT not supported or not visible (a VM hides the host's threads)",
        ),
        Some("notimplemented") => check(
            "smt",
            Status::Info,
            "SMT control not implemented on this architecture",
        ),
        Some(other) => check("smt", Status::Info, format!("SMT control reads {other}")),
        None => check(
            "smt",
            Status::Info,
            format!("SMT state unknown: control file {}", read.state_word()),
        ),
    };
    result = result.evidence(describe(read, SMT_CONTROL));
    if let Some(line) = threads {
        result = result.evidence(line);
    }
    result
}

fn isolation(snapshot: &Snapshot) -> Check {
    let isolated = snapshot
        .text("/sys/devices/system/cpu/isolated")
        .and_then(|text| sysfs::parse_cpu_list(&text))
        .unwrap_or_default();
    let nohz = snapshot
        .text("/sys/devices/system/cpu/nohz_full")
        .and_then(|text| sysfs::parse_cpu_list(&text))
        .unwrap_or_default();
    let online = snapshot
        .text("/sys/devices/system/cpu/online")
        .and_then(|text| sysfs::parse_cpu_list(&text))
        .unwrap_or_default();
    let isolated_text = snapshot
        .value("/sys/devices/system/cpu/isolated")
        .unwrap_or_default();
    if !isolated.is_empty() {
        let mut result = check(
            "isolation",
            Status::Ok,
            format!("CPUs {isolated_text} are isolated: pin the workload there"),
        )
        .evidence(format!("isolated = {isolated_text}"))
        .fix(format!("taskset -c {isolated_text} COMMAND"));
        if !nohz.is_empty() {
            result = result.evidence(format!("nohz_full = {nohz:?}"));
        }
        return result;
    }
    let spare = online.last().copied().filter(|_| online.len() > 1);
    let mut result = check(
        "isolation",
        Status::Info,
        "no isolated CPUs: the scheduler may move the workload and run others beside it",
    )
    .evidence("/sys/devices/system/cpu/isolated is empty".to_string());
    if let Some(cpu) = spare {
        result = result.fix(format!(
            "pin with taskset -c {cpu}; for more, boot with isolcpus={cpu} nohz_full={cpu}"
        ));
    }
    result
}

fn cgroup_quota(snapshot: &Snapshot) -> Check {
    let v2 = snapshot
        .text("/sys/fs/cgroup/cpu.max")
        .and_then(|text| cgroup::parse_cpu_max(&text));
    let v1 = ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"]
        .iter()
        .find_map(|base| {
            let quota = snapshot.text(&format!("{base}/cpu.cfs_quota_us"))?;
            let period = snapshot.text(&format!("{base}/cpu.cfs_period_us"))?;
            cgroup::parse_cfs_quota(&quota, &period)
        });
    match v2.or(v1) {
        Some(Some(cpus)) => check(
            "cpu-quota",
            Status::Warn,
            format!("a cgroup CPU quota of {cpus:.2} CPUs applies: bursts are throttled"),
        )
        .evidence(format!("cgroup quota = {cpus:.2} CPUs"))
        .fix("run without a CPU quota (e.g. docker run without --cpus)"),
        Some(None) => check("cpu-quota", Status::Ok, "no cgroup CPU quota"),
        None => check("cpu-quota", Status::Info, "cgroup CPU quota not visible"),
    }
}

fn swap(snapshot: &Snapshot, usage: &WindowUsage) -> Check {
    let areas = snapshot
        .text("/proc/swaps")
        .and_then(|text| sysfs::parse_swaps(&text));
    let pages = usage.swap_pages;
    match (areas, pages) {
        (_, Some(pages)) if pages > 0 => check(
            "swap",
            Status::Warn,
            format!("the machine swapped {pages} pages during the check"),
        )
        .evidence(format!("/proc/vmstat pswpin+pswpout rose by {pages}"))
        .fix("free memory or sudo swapoff -a before measuring"),
        (Some(areas), _) if areas.is_empty() => check("swap", Status::Ok, "no swap configured"),
        (Some(areas), pages) => {
            let used: u64 = areas.iter().map(|area| area.used_kib).sum();
            let mut result = check(
                "swap",
                Status::Ok,
                format!(
                    "swap configured ({} area{}, {used} KiB used), no swapping during the check",
                    areas.len(),
                    if areas.len() == 1 { "" } else { "s" }
                ),
            );
            if pages.is_none() {
                result.status = Status::Info;
                result.finding =
                    "swap configured; activity unknown (/proc/vmstat not readable)".to_string();
            }
            result
        }
        (None, _) => check(
            "swap",
            Status::Info,
            "swap state unknown: /proc/swaps not readable",
        ),
    }
}

fn irq_balance(snapshot: &Snapshot) -> Check {
    let running = snapshot
        .process_stats()
        .filter_map(|(_, read)| process::parse_stat(&read.text()?))
        .find(|process| process.name == "irqbalance");
    match running {
        Some(process) => check(
            "irq-balance",
            Status::Info,
            "irqbalance is running: interrupts may move between CPUs during runs",
        )
        .evidence(format!("irqbalance pid {}", process.pid))
        .fix("sudo systemctl stop irqbalance, then pin IRQs away from the measured CPUs"),
        None => check("irq-balance", Status::Ok, "irqbalance is not running"),
    }
}

fn transparent_hugepages(snapshot: &Snapshot) -> Check {
    let read = snapshot.get(THP);
    match read
        .text()
        .and_then(|text| sysfs::selected_choice(&text))
        .as_deref()
    {
        Some("always") => check(
            "transparent-hugepages",
            Status::Warn,
            "transparent hugepages always: khugepaged and compaction vary run to run",
        )
        .evidence(describe(read, THP))
        .fix(format!("echo madvise | sudo tee {THP}")),
        Some(choice) => check(
            "transparent-hugepages",
            Status::Ok,
            format!("transparent hugepages {choice}"),
        )
        .evidence(describe(read, THP)),
        None => check(
            "transparent-hugepages",
            Status::Info,
            format!("transparent hugepages: {}", read.state_word()),
        ),
    }
}

fn aslr(snapshot: &Snapshot) -> Check {
    const PATH: &str = "/proc/sys/kernel/randomize_va_space";
    let read = snapshot.get(PATH);
    match read.value().as_deref() {
        Some("0") => check("aslr", Status::Ok, "address space randomization is off"),
        Some(level) => check(
            "aslr",
            Status::Info,
            format!("address space randomization is on (level {level}): layout changes every run"),
        )
        .fix("for microbenchmarks: setarch -R COMMAND (one process) or sudo sysctl kernel.randomize_va_space=0"),
        None => check("aslr", Status::Info, format!("ASLR state unknown: {PATH} {}", read.state_word())),
    }
    .evidence(describe(read, PATH))
}

fn perf_counters(snapshot: &Snapshot) -> Check {
    const DEVICES: &str = "/sys/bus/event_source/devices";
    let devices = snapshot.listing(DEVICES);
    let hardware = devices.iter().find(|name| {
        matches!(name.as_str(), "cpu" | "cpu_core" | "cpu_atom" | "cpum_cf")
            || name.starts_with("armv8")
            || name.starts_with("armv7")
    });
    let paranoid = snapshot.value("/proc/sys/kernel/perf_event_paranoid");
    let mut result = match hardware {
        Some(name) => check(
            "perf-counters",
            Status::Ok,
            format!("hardware performance counters available ({name} PMU)"),
        ),
        None if devices.is_empty() => check(
            "perf-counters",
            Status::Info,
            "no perf event sources visible",
        ),
        None => check(
            "perf-counters",
            Status::Info,
            "no hardware PMU: cycles and instructions cannot be counted (VM without vPMU)",
        ),
    };
    result = result.evidence(format!("event sources: {}", devices.join(" ")));
    if let Some(level) = paranoid {
        result = result.evidence(format!("perf_event_paranoid = {level}"));
    }
    result
}

fn clocksource(snapshot: &Snapshot) -> Check {
    let read = snapshot.get(CLOCKSOURCE);
    let available = snapshot.value(AVAILABLE_CLOCKSOURCES).unwrap_or_default();
    let result = match read.value().as_deref() {
        Some(source @ ("tsc" | "kvm-clock" | "arch_sys_counter" | "timebase" | "tod")) => check(
            "clocksource",
            Status::Ok,
            format!("clock source {source} (cheap to read)"),
        ),
        Some(source) if source.starts_with("hyperv_clocksource") => {
            check("clocksource", Status::Ok, format!("clock source {source}"))
        }
        Some(source) => {
            let mut slow = check(
                "clocksource",
                Status::Warn,
                format!("clock source {source} is slow to read: timing calls perturb the workload"),
            );
            if available.split_whitespace().any(|name| name == "tsc") {
                slow = slow.fix(format!("echo tsc | sudo tee {CLOCKSOURCE}"));
            }
            slow
        }
        None => check(
            "clocksource",
            Status::Info,
            format!("clock source {}", read.state_word()),
        ),
    };
    result
        .evidence(describe(read, CLOCKSOURCE))
        .evidence(format!("available: {available}"))
}

fn preemption(snapshot: &Snapshot, config: Option<&BTreeMap<String, String>>) -> Check {
    match facts::preemption(snapshot, config) {
        Some(mode) => check(
            "preemption",
            Status::Info,
            format!("kernel preemption: {mode}"),
        )
        .evidence(describe(
            snapshot.get("/sys/kernel/debug/sched/preempt"),
            "/sys/kernel/debug/sched/preempt",
        )),
        None => check(
            "preemption",
            Status::Info,
            "preemption mode unknown (no kernel config, no debugfs)",
        ),
    }
}

fn selinux(snapshot: &Snapshot, config: Option<&BTreeMap<String, String>>) -> Check {
    let read = snapshot.get("/sys/fs/selinux/enforce");
    let result = match facts::selinux_mode(snapshot, config) {
        Some(mode) => check(
            "selinux",
            Status::Info,
            format!("SELinux {mode}: keep the mode identical across compared runs"),
        ),
        None if matches!(read, FileRead::NotReadable(_)) => {
            check("selinux", Status::Info, "SELinux mode not readable")
        }
        None => check("selinux", Status::Ok, "SELinux not built into this kernel"),
    };
    result.evidence(describe(read, "/sys/fs/selinux/enforce"))
}
