//! Doctor against committed machine fixtures: the parsers, the environment
//! capture and the checks on a VM, bare metal, a container and PowerVM LPARs
//! (shared and dedicated), plus an empty machine and an unreadable one.

use std::path::PathBuf;
use verdict_doctor::checks::{self, Check, Status, Window};
use verdict_doctor::parse::{cpuinfo, kconfig, lparcfg, stat};
use verdict_doctor::snapshot::Snapshot;
use verdict_doctor::{
    FileRead, FixtureFiles, SystemFiles, capture_environment, environment, facts,
};

fn fixture(name: &str) -> FixtureFiles {
    let directory = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    FixtureFiles::load(&directory).unwrap()
}

/// Runs the checks with `after` as the end of a 10-second window.
fn checks_between(before: &FixtureFiles, after: &FixtureFiles) -> Vec<Check> {
    let first = Snapshot::full(before);
    let last = Snapshot::counters(after);
    let window = Window {
        before: &first,
        after: &last,
        seconds: 10.0,
        ticks_per_second: 100.0,
        own_pid: Some(999_999),
    };
    let usage = checks::window_usage(&window);
    let release = first.value("/proc/sys/kernel/osrelease");
    let config = environment::read_kernel_config(before, release.as_deref())
        .map(|config| kconfig::parse_options(&config.text));
    checks::run_checks(&window, &usage, config.as_ref())
}

fn find<'a>(checks: &'a [Check], id: &str) -> &'a Check {
    checks
        .iter()
        .find(|check| check.id == id)
        .unwrap_or_else(|| panic!("no check {id}"))
}

/// Adds `ticks` to the `field` column (1-based after "cpu") of the
/// aggregate line of /proc/stat.
fn advance_stat(files: &mut FixtureFiles, field: usize, ticks: u64) {
    let text = files.read("/proc/stat").text().unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut fields: Vec<String> = lines[0].split_whitespace().map(str::to_string).collect();
    let value: u64 = fields[field].parse().unwrap();
    fields[field] = (value + ticks).to_string();
    lines[0] = fields.join(" ");
    files.insert("/proc/stat", lines.join("\n") + "\n");
}

#[test]
fn firecracker_vm() {
    let files = fixture("firecracker-vm");
    let environment = capture_environment(&files);
    assert_eq!(environment.virtualization.as_deref(), Some("kvm"));
    assert_eq!(environment.smt.as_deref(), Some("notsupported"));
    assert_eq!(environment.cpufreq_governor, None);
    assert_eq!(environment.cpu_count, Some(2));
    assert_eq!(environment.architecture.as_deref(), Some("x86_64"));
    assert_eq!(
        environment.kernel_release.as_deref(),
        Some("6.18.44-fc-v657")
    );
    assert_eq!(
        environment.kernel_config_source.as_deref(),
        Some("/proc/config.gz")
    );
    assert_eq!(
        environment.kernel_config_sha256.as_ref().map(String::len),
        Some(64)
    );
    assert_eq!(environment.preempt.as_deref(), Some("none+dynamic"));
    // Provenance: the CPU's identity as the fixture's /proc/cpuinfo states
    // it, and x86's checked features (eIBRS: no PTI on this CPU).
    assert_eq!(
        environment
            .cpu_identity
            .as_ref()
            .map(verdict_model::CpuIdentity::line)
            .as_deref(),
        Some("GenuineIntel family 6 model 207 stepping 2 microcode 0x1")
    );
    assert_eq!(
        verdict_model::provenance::features_line(&environment.cpu_features),
        "ibrs+ ibrs_enhanced+ ibpb+ stibp+ ssbd+ md_clear+ pti-"
    );
    // SELinux is built in, selinuxfs is not mounted.
    assert_eq!(environment.selinux.as_deref(), Some("disabled"));
    assert_eq!(environment.clocksource.as_deref(), Some("tsc"));
    assert!(environment.steal_ticks.is_some());
    assert!(environment.cpu_flags.unwrap().contains("hypervisor"));

    let mut after = files.clone();
    advance_stat(&mut after, 1, 300);
    advance_stat(&mut after, 8, 20);
    let checks = checks_between(&files, &after);
    let virtualization = find(&checks, "virtualization");
    assert_eq!(virtualization.status, Status::Warn);
    assert!(
        virtualization
            .evidence
            .iter()
            .any(|line| line.contains("kvm-clock"))
    );
    assert!(
        virtualization
            .evidence
            .iter()
            .any(|line| line.contains(".dockerenv"))
    );
    assert_eq!(find(&checks, "smt").status, Status::Info);
    let governor = find(&checks, "governor");
    assert_eq!(governor.status, Status::Info);
    assert!(governor.finding.contains("no cpufreq"));
    let steal = find(&checks, "steal");
    assert_eq!(steal.status, Status::Warn, "{steal:?}");
    assert!(steal.evidence[0].contains("20 ticks"));
    assert_eq!(find(&checks, "perf-counters").status, Status::Info);
    assert_eq!(find(&checks, "transparent-hugepages").status, Status::Ok);
    assert_eq!(find(&checks, "cpu-quota").status, Status::Ok);
    assert!(checks.iter().all(|check| check.id != "lpar"));
}

#[test]
fn bare_metal_x86() {
    let files = fixture("bare-metal-x86");
    let environment = capture_environment(&files);
    assert_eq!(environment.virtualization.as_deref(), Some("none"));
    assert_eq!(environment.smt.as_deref(), Some("on"));
    assert_eq!(environment.cpufreq_governor.as_deref(), Some("powersave"));
    assert_eq!(environment.cpu_count, Some(8));
    assert_eq!(
        environment.kernel_config_source.as_deref(),
        Some("/boot/config-5.15.0-91-generic")
    );
    // debugfs is not readable: the preemption mode comes from the config.
    assert_eq!(environment.preempt.as_deref(), Some("voluntary+dynamic"));
    assert_eq!(environment.selinux.as_deref(), Some("disabled"));
    assert_eq!(environment.load_average, Some([1.12, 0.87, 0.61]));

    // firefox burns 1.5 CPUs during the window, irqbalance a little.
    let mut after = files.clone();
    after.insert(
        "/proc/4410/stat",
        "4410 (firefox) R 2800 4410 4410 0 -1 4194560 12311 0 40 0 311224 88102 0 0 20 0 1 0",
    );
    advance_stat(&mut after, 1, 1500);
    advance_stat(&mut after, 4, 6500);
    let checks = checks_between(&files, &after);
    assert_eq!(find(&checks, "virtualization").status, Status::Ok);
    let governor = find(&checks, "governor");
    assert_eq!(governor.status, Status::Warn);
    assert!(governor.fix.as_deref().unwrap().contains("performance"));
    assert_eq!(find(&checks, "turbo").status, Status::Warn);
    assert_eq!(find(&checks, "smt").status, Status::Warn);
    assert_eq!(find(&checks, "irq-balance").status, Status::Info);
    assert_eq!(find(&checks, "steal").status, Status::Ok);
    let others = find(&checks, "other-processes");
    assert_eq!(others.status, Status::Warn);
    assert_eq!(others.evidence[0], "firefox (pid 4410): 100% of a CPU");
    assert!(
        others.finding.contains("1.50 of 8 CPUs"),
        "{}",
        others.finding
    );
    assert_eq!(find(&checks, "perf-counters").status, Status::Ok);
    assert_eq!(find(&checks, "clocksource").status, Status::Ok);
    assert_eq!(find(&checks, "swap").status, Status::Ok);
    let preemption = find(&checks, "preemption");
    assert!(
        preemption.evidence[0].contains("not readable"),
        "{preemption:?}"
    );
}

#[test]
fn docker_container() {
    let files = fixture("docker-container");
    let environment = capture_environment(&files);
    assert_eq!(
        environment.virtualization.as_deref(),
        Some("kvm+container:docker")
    );
    assert_eq!(environment.kernel_config_sha256, None);
    assert_eq!(environment.preempt, None);
    assert_eq!(environment.selinux, None);
    let snapshot = Snapshot::full(&files);
    assert!(matches!(
        snapshot.get("/proc/1/environ"),
        FileRead::NotReadable(_)
    ));
    let checks = checks_between(&files, &files);
    let quota = find(&checks, "cpu-quota");
    assert_eq!(quota.status, Status::Warn);
    assert!(quota.finding.contains("2.00 CPUs"));
    assert_eq!(find(&checks, "transparent-hugepages").status, Status::Warn);
    assert_eq!(
        find(&checks, "steal").status,
        Status::Ok,
        "no steal in an empty window"
    );
    assert_eq!(find(&checks, "selinux").status, Status::Ok);
}

#[test]
fn powervm_shared_lpar() {
    let files = fixture("powervm-lpar-shared");
    let text = files.read("/proc/ppc64/lparcfg").text().unwrap();
    let config = lparcfg::parse(&text).unwrap();
    assert_eq!(config.shared, Some(true));
    assert_eq!(config.capped, Some(false));
    assert_eq!(config.entitled_capacity, Some(2.0));
    assert_eq!(config.active_processors, Some(8));
    assert_eq!(config.capacity_weight, Some(128));
    assert_eq!(config.dispatch_dispersions, Some(51_230_133));
    assert_eq!(config.partition_name.as_deref(), Some("perf-lpar-07"));
    assert_eq!(config.system_type.as_deref(), Some("IBM,9080-HEX"));
    assert_eq!(config.fields.get("pool").map(String::as_str), Some("0"));

    let environment = capture_environment(&files);
    assert_eq!(environment.virtualization.as_deref(), Some("powervm"));
    assert_eq!(environment.architecture.as_deref(), Some("ppc64le"));
    assert_eq!(environment.cpu_count, Some(64));
    assert_eq!(
        environment.cpu_model.as_deref(),
        Some("POWER10 (architected), altivec supported")
    );
    assert_eq!(environment.selinux.as_deref(), Some("enforcing"));
    assert_eq!(environment.preempt.as_deref(), Some("full"));
    assert_eq!(environment.clocksource.as_deref(), Some("timebase"));

    // The window sees 4000 more dispersions and 2% steal.
    let mut after = files.clone();
    after.insert(
        "/proc/ppc64/lparcfg",
        text.replace(
            "dispatch_dispersions=51230133",
            "dispatch_dispersions=51234133",
        )
        .replace("dispatches=1184123309", "dispatches=1184133309"),
    );
    advance_stat(&mut after, 1, 6000);
    advance_stat(&mut after, 4, 57_600);
    advance_stat(&mut after, 8, 1_300);
    let checks = checks_between(&files, &after);
    let lpar = find(&checks, "lpar");
    assert_eq!(lpar.status, Status::Warn);
    assert!(
        lpar.finding.contains("shared processors, uncapped"),
        "{}",
        lpar.finding
    );
    assert!(lpar.finding.contains("entitled 2.00"));
    assert!(
        lpar.evidence
            .iter()
            .any(|line| line == "dispatch_dispersions during the check: 4000")
    );
    assert!(
        lpar.evidence
            .iter()
            .any(|line| line == "dispatches during the check: 10000")
    );
    assert_eq!(find(&checks, "steal").status, Status::Warn);
    // The lpar check carries the verdict for PowerVM.
    assert_eq!(find(&checks, "virtualization").status, Status::Info);
    assert_eq!(find(&checks, "perf-counters").status, Status::Ok);
    assert_eq!(
        find(&checks, "selinux").finding,
        "SELinux enforcing: keep the mode identical across compared runs"
    );
}

#[test]
fn powervm_dedicated_lpar() {
    let files = fixture("powervm-lpar-dedicated");
    let config = lparcfg::parse(&files.read("/proc/ppc64/lparcfg").text().unwrap()).unwrap();
    assert_eq!(config.mode_word(), Some("dedicated"));
    assert_eq!(config.capped, Some(true));
    assert_eq!(config.entitled_capacity, Some(8.0));
    assert!(!config.fields.contains_key("pool"));
    let checks = checks_between(&files, &files);
    let lpar = find(&checks, "lpar");
    assert_eq!(lpar.status, Status::Info, "{lpar:?}");
    assert!(lpar.finding.contains("dedicated processors"));
    assert!(lpar.finding.contains("still shared"));
    assert!(lpar.fix.as_deref().unwrap().contains("second"));
    assert_eq!(find(&checks, "steal").status, Status::Ok);
}

#[test]
fn dedicated_lpar_with_dispersions_warns() {
    let files = fixture("powervm-lpar-dedicated");
    let text = files.read("/proc/ppc64/lparcfg").text().unwrap();
    let mut after = files.clone();
    after.insert(
        "/proc/ppc64/lparcfg",
        text.replace("dispatch_dispersions=1031", "dispatch_dispersions=1090"),
    );
    let checks = checks_between(&files, &after);
    assert_eq!(find(&checks, "lpar").status, Status::Warn);
}

#[test]
fn parsers_read_every_fixture() {
    for name in [
        "firecracker-vm",
        "bare-metal-x86",
        "docker-container",
        "powervm-lpar-shared",
        "powervm-lpar-dedicated",
    ] {
        let files = fixture(name);
        let proc_stat = stat::parse(&files.read("/proc/stat").text().unwrap()).unwrap();
        let info = cpuinfo::parse(&files.read("/proc/cpuinfo").text().unwrap()).unwrap();
        assert_eq!(
            proc_stat.per_cpu.len(),
            info.processors as usize,
            "{name}: a cpuN line per processor"
        );
        assert!(proc_stat.context_switches.is_some(), "{name}");
        assert!(
            facts::virtualization(&Snapshot::full(&files)).is_some(),
            "{name}"
        );
    }
}

#[test]
fn empty_machine_is_all_unknown_never_a_crash() {
    let files = FixtureFiles::new();
    let environment = capture_environment(&files);
    assert_eq!(environment, verdict_model::Environment::default());
    let checks = checks_between(&files, &files);
    assert!(
        checks.iter().all(|check| check.status != Status::Warn),
        "{checks:#?}"
    );
    assert!(find(&checks, "steal").finding.contains("unknown"));
    assert!(find(&checks, "virtualization").finding.contains("unknown"));
}

#[test]
fn unreadable_machine_says_not_readable() {
    let mut files = fixture("bare-metal-x86");
    for path in verdict_doctor::snapshot::CONFIGURATION_PATHS
        .iter()
        .chain(verdict_doctor::snapshot::COUNTER_PATHS)
    {
        files.deny(path);
    }
    files.deny("/boot/config-5.15.0-91-generic");
    let environment = capture_environment(&files);
    assert_eq!(environment, verdict_model::Environment::default());
    let checks = checks_between(&files, &files);
    assert!(
        checks.iter().all(|check| check.status != Status::Warn),
        "{checks:#?}"
    );
    assert!(find(&checks, "smt").finding.contains("not readable"));
    assert!(find(&checks, "governor").finding.contains("not readable"));
    assert!(find(&checks, "aslr").finding.contains("not readable"));
    let lpar_denied = {
        let mut power = fixture("powervm-lpar-shared");
        power.deny("/proc/ppc64/lparcfg");
        checks_between(&power, &power)
    };
    let lpar = find(&lpar_denied, "lpar");
    assert!(lpar.evidence[0].contains("not readable"));
}
