//! verdict's olddefconfig against the kernel's own scripts/kconfig/conf
//! (built from Debian's linux-source-6.1 by scripts/prepare-kernel-tree.sh,
//! which also stores `make olddefconfig` outputs for Debian's amd64, cloud
//! and rt configs and the arm64 / powerpc defconfigs). Each tree is parsed
//! once with its toolchain probes run for real (through verdict-exec); then
//! every config and 50 perturbations of it (VERDICT_KCONFIG_PERTURBATIONS)
//! must be byte-identical to what conf writes after the same edit; so must
//! the mechanism sweep, edits that turn a whole mechanism off or on at once
//! (MODULES, 64BIT, EXPERT, COMPILE_TEST, PCI, NET, BLOCK, ...: a few in
//! CI, all of them with VERDICT_KCONFIG_SWEEP=wide, see
//! scripts/kconfig-sweep.sh). Oracle results are cached by input hash in
//! the oracle directory. Must not modify the kernel tree or the packaged
//! configs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use verdict_exec::{Cancel, Invocation, Status, SystemExecutor, Target};
use verdict_kconfig::{
    Evaluation, Kconfig, ProbeRunner, Tristate, blame_causes, load_tree_expanded, make_environment,
};

fn kernel_source() -> Option<PathBuf> {
    let path = std::env::var_os("VERDICT_KERNEL_SRC")
        .map_or_else(|| PathBuf::from("/usr/src/linux-source-6.1"), PathBuf::from);
    verdict_testkit::require_path(
        &path.join("scripts/kconfig/conf.c"),
        "apt-get install linux-source-6.1, then scripts/prepare-kernel-tree.sh",
    )
    .map(|_| path)
}

fn oracle_directory() -> Option<PathBuf> {
    let path = std::env::var_os("VERDICT_KCONFIG_ORACLE").map_or_else(
        || PathBuf::from("/usr/src/linux-kconfig-oracle"),
        PathBuf::from,
    );
    verdict_testkit::require_path(
        &path.join("done"),
        "scripts/prepare-kernel-tree.sh (needs linux-source-6.1, linux-config-6.1, make, gcc, flex, bison, bc)",
    )
    .map(|_| path)
}

/// Runs `$(shell,...)` probes like the kernel's popen(): `sh -c`, with the
/// environment `make` would export, in a scratch directory.
struct ShellProbes {
    environment: HashMap<String, String>,
    directory: PathBuf,
}

impl ProbeRunner for ShellProbes {
    fn shell(&self, command: &str) -> Option<String> {
        let mut invocation = Invocation::shell(command)
            .with_cwd(self.directory.clone())
            .with_timeout(Duration::from_secs(120));
        for (name, value) in &self.environment {
            invocation = invocation.with_env(name.clone(), value.clone());
        }
        let outcome = SystemExecutor
            .run(&invocation, &Cancel::new())
            .unwrap_or_else(|error| panic!("probe `{command}`: {error}"));
        Some(String::from_utf8_lossy(&outcome.stdout).into_owned())
    }
}

/// What `make` exports to conf, including CC_VERSION_TEXT (which make
/// computes with the compiler).
fn environment(source: &Path, arch: &str) -> HashMap<String, String> {
    let mut environment = make_environment(source, arch, &HashMap::new());
    let probes = ShellProbes {
        environment: environment.clone(),
        directory: std::env::temp_dir(),
    };
    let text = probes
        .shell("LC_ALL=C gcc --version 2>/dev/null | head -n 1")
        .unwrap_or_default();
    environment.insert(
        "CC_VERSION_TEXT".to_string(),
        text.trim_end_matches('\n').to_string(),
    );
    environment
}

fn parse(source: &Path, arch: &str, scratch: &Path) -> Kconfig {
    let environment = environment(source, arch);
    let runner = ShellProbes {
        environment: environment.clone(),
        directory: scratch.to_path_buf(),
    };
    load_tree_expanded(source, arch, &environment, &runner)
        .unwrap_or_else(|error| panic!("failed to {error}"))
}

fn fnv(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// What the kernel's conf writes for `input` (cached by hash).
fn oracle(oracle: &Path, source: &Path, arch: &str, input: &str, scratch: &Path) -> String {
    // The cache lives with the oracle outputs (scripts/prepare-kernel-tree.sh
    // makes it writable for everyone); a read-only oracle directory falls
    // back to one in the temporary directory.
    let mut cache = oracle.join("cache");
    if std::fs::create_dir_all(&cache).is_err()
        || std::fs::metadata(&cache).is_ok_and(|metadata| metadata.permissions().readonly())
    {
        cache = std::env::temp_dir().join("verdict-kconfig-oracle-cache");
        std::fs::create_dir_all(&cache).expect("create the oracle cache");
    }
    let key = cache.join(format!("{arch}-{:016x}.config", fnv(input)));
    if let Ok(text) = std::fs::read_to_string(&key) {
        return text;
    }
    let work = tempfile::tempdir_in(scratch).expect("scratch directory");
    let config = work.path().join(".config");
    std::fs::write(&config, input).expect("write the input config");
    let mut invocation = Invocation::argv([
        oracle.join("conf").display().to_string(),
        "--olddefconfig".to_string(),
        "Kconfig".to_string(),
    ])
    .with_cwd(work.path().to_path_buf())
    .with_timeout(Duration::from_secs(600))
    .with_env("KCONFIG_CONFIG", config.display().to_string());
    for (name, value) in environment(source, arch) {
        invocation = invocation.with_env(name, value);
    }
    let outcome = SystemExecutor
        .run(&invocation, &Cancel::new())
        .expect("run the kernel's conf");
    assert_eq!(
        outcome.status,
        Status::Exited(0),
        "conf failed: {}",
        outcome.output_tail(4000)
    );
    let text = std::fs::read_to_string(&config).expect("read conf's output");
    let temporary = cache.join(format!("{}.tmp{}", key.display(), std::process::id()));
    std::fs::write(&temporary, &text).expect("write the cache");
    std::fs::rename(&temporary, &key).expect("fill the cache");
    text
}

/// What the kernel's conf writes for each `(label, input)`, two at a time.
fn oracle_all(
    oracle_path: &Path,
    source: &Path,
    arch: &str,
    inputs: &[(String, String)],
    scratch: &Path,
) -> Vec<String> {
    std::thread::scope(|scope| {
        let chunks: Vec<_> = inputs
            .chunks(inputs.len().div_ceil(2).max(1))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|(_, text)| oracle(oracle_path, source, arch, text, scratch))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks
            .into_iter()
            .flat_map(|handle| handle.join().expect("oracle thread"))
            .collect()
    })
}

/// Sets `CONFIG_name` to `value` in config text, where the line is, or at the end.
fn edit(text: &str, name: &str, value: Tristate) -> String {
    let new_line = match value {
        Tristate::No => format!("# CONFIG_{name} is not set"),
        other => format!("CONFIG_{name}={}", other.letter()),
    };
    verdict_kconfig::edit_config(text, name, &new_line)
}

fn first_difference(expected: &str, actual: &str) -> String {
    for (number, (left, right)) in expected.lines().zip(actual.lines()).enumerate() {
        if left != right {
            return format!("line {}: kernel `{left}`, verdict `{right}`", number + 1);
        }
    }
    format!(
        "kernel has {} lines, verdict {}",
        expected.lines().count(),
        actual.lines().count()
    )
}

/// A small deterministic generator (SplitMix64).
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut value = self.0;
        value = (value ^ (value >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        value = (value ^ (value >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        value ^ (value >> 31)
    }
}

fn perturbation_count() -> usize {
    std::env::var("VERDICT_KCONFIG_PERTURBATIONS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(50)
}

/// Checks one config and its perturbations; returns how many matched.
fn check(
    name: &str,
    arch: &str,
    tree: &Kconfig,
    source: &Path,
    oracle_path: &Path,
    named: &[&str],
    scratch: &Path,
) -> usize {
    let input = std::fs::read_to_string(oracle_path.join(format!("{name}.input")))
        .expect("read the oracle input");
    let expected = std::fs::read_to_string(oracle_path.join(format!("{name}.olddefconfig")))
        .expect("read make olddefconfig's output");
    let actual = Evaluation::new(tree, &input).write_config();
    assert!(
        expected == actual,
        "{name}: verdict olddefconfig differs from make olddefconfig: {}",
        first_difference(&expected, &actual)
    );
    let mut evaluation = Evaluation::new(tree, &expected);
    let visible = evaluation.user_visible_symbols();
    let mut random = Random(fnv(name));
    let mut edits: Vec<(String, Tristate)> = Vec::new();
    for symbol in named {
        if let Some((_, value)) = visible.iter().find(|(candidate, _)| candidate == symbol) {
            let flipped = if *value == Tristate::No {
                Tristate::Yes
            } else {
                Tristate::No
            };
            edits.push((symbol.to_string(), flipped));
        }
    }
    let count = perturbation_count();
    while edits.len() < count && !visible.is_empty() {
        let (symbol, value) = &visible[(random.next() % visible.len() as u64) as usize];
        let flipped = if *value == Tristate::No {
            Tristate::Yes
        } else {
            Tristate::No
        };
        edits.push((symbol.clone(), flipped));
    }
    let inputs: Vec<(String, String)> = edits
        .iter()
        .map(|(symbol, value)| {
            (
                format!("{symbol}={}", value.letter()),
                edit(&expected, symbol, *value),
            )
        })
        .collect();
    let outputs = oracle_all(oracle_path, source, arch, &inputs, scratch);
    let mut matched = 0;
    let mut blamed = 0;
    let base_lines: std::collections::HashSet<&str> = expected.lines().collect();
    for (((label, text), kernel), (flipped, _)) in inputs.iter().zip(&outputs).zip(&edits) {
        let actual = Evaluation::new(tree, text).write_config();
        assert!(
            *kernel == actual,
            "{name} with {label}: verdict differs from the kernel's conf: {}",
            first_difference(kernel, &actual)
        );
        matched += 1;
        // Blame: for a symbol the edit changed besides the flipped one, the
        // flipped option must be listed first.
        let changed = kernel
            .lines()
            .filter(|line| !base_lines.contains(line))
            .filter_map(|line| {
                line.strip_prefix("CONFIG_")
                    .and_then(|rest| rest.split_once('=').map(|(symbol, _)| symbol))
                    .or_else(|| {
                        line.strip_prefix("# CONFIG_")
                            .and_then(|rest| rest.strip_suffix(" is not set"))
                    })
            })
            .find(|symbol| symbol != flipped);
        if let Some(symbol) = changed {
            let causes = blame_causes(tree, &expected, kernel, symbol);
            assert_eq!(
                causes.first().map(|cause| cause.symbol.as_str()),
                Some(flipped.as_str()),
                "{name} with {label}: blame for {symbol} ranks {causes:?}"
            );
            blamed += 1;
        }
    }
    eprintln!(
        "{name}: olddefconfig identical, and on {matched} perturbations; blame lists the flipped option first for {blamed} changed symbols"
    );
    matched
}

/// Mechanism perturbations: each is a set of edits applied together to the
/// kernel's own olddefconfig output, turning a whole mechanism off (or on),
/// so that thousands of symbols change visibility, type or value at once.
/// A choice member is set with the member it replaces unset (the config's
/// last `=y` of a choice wins). The first list of each arch runs in CI;
/// VERDICT_KCONFIG_SWEEP=wide adds the second (scripts/kconfig-sweep.sh,
/// figures in docs/kconfig.md).
const X86_MECHANISMS: [&[&str]; 2] = [
    &[
        "MODULES=n",
        "64BIT=n",
        "EXPERT=n",
        "COMPILE_TEST=y",
        "PCI=n",
        "NET=n",
        "BLOCK=n",
    ],
    &[
        "MODULES=n COMPILE_TEST=y",
        "MODULES=n 64BIT=n",
        "MODULES=n SMP=n",
        "MODULES=n EXPERT=n",
        "64BIT=n SMP=n MODULES=n",
        "EMBEDDED=y",
        "PRINTK=n",
        "SMP=n",
        "NUMA=n",
        "ACPI=n",
        "SWAP=n",
        "SYSFS=n",
        "PROC_FS=n",
        "INPUT=n",
        "TTY=n",
        "VT=n",
        "SECURITY=n",
        "CGROUPS=n",
        "NAMESPACES=n",
        "MULTIUSER=n",
        "FUTEX=n",
        "SHMEM=n",
        "BPF_SYSCALL=n",
        "PERF_EVENTS=n",
        "FTRACE=n",
        "KPROBES=n",
        "DEBUG_KERNEL=n",
        "DEBUG_FS=n",
        "KALLSYMS=n",
        "BUG=n",
        "AUDIT=n",
        "CRYPTO=n",
        "INET=n",
        "NETDEVICES=n",
        "WIRELESS=n",
        "USB_SUPPORT=n",
        "SOUND=n",
        "DRM=n",
        "HID=n",
        "SCSI=n",
        "ATA=n",
        "MD=n",
        "BLK_DEV=n",
        "VIRTUALIZATION=n",
        "HYPERVISOR_GUEST=n",
        "HOTPLUG_CPU=n",
        "PM=n",
        "CPU_FREQ=n",
        "HIBERNATION=n",
        "EFI=n",
        "IA32_EMULATION=n",
        "X86_MCE=n",
        "RELOCATABLE=n",
        "STACKPROTECTOR=n",
        "JUMP_LABEL=n",
        "HUGETLBFS=n",
        "TRANSPARENT_HUGEPAGE=n",
        "MEMCG=n",
        "MEMORY_HOTPLUG=n",
        "MIGRATION=n",
        "KEXEC=n",
        "STAGING=n",
        "KASAN=y",
        "RCU_EXPERT=y",
        "SLAB=y SLUB=n",
        "CC_OPTIMIZE_FOR_SIZE=y CC_OPTIMIZE_FOR_PERFORMANCE=n",
        "DEBUG_INFO_NONE=y DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=n",
    ],
];

const ARM64_MECHANISMS: [&[&str]; 2] = [
    &["MODULES=n", "EXPERT=y", "PCI=n"],
    &[
        "MODULES=n COMPILE_TEST=y",
        "COMPILE_TEST=y",
        "EXPERT=y PRINTK=n",
        "EXPERT=y MODULES=n",
        "NET=n",
        "BLOCK=n",
        "NUMA=n",
        "ACPI=n",
        "SWAP=n",
        "SECURITY=n",
        "CGROUPS=n",
        "CRYPTO=n",
        "INET=n",
        "NETDEVICES=n",
        "USB_SUPPORT=n",
        "SOUND=n",
        "DRM=n",
        "SCSI=n",
        "ATA=n",
        "MD=n",
        "VIRTUALIZATION=n",
        "HOTPLUG_CPU=n",
        "PM=n",
        "EFI=n",
        "COMPAT=n",
        "FTRACE=y",
        "KASAN=y",
        "CPU_BIG_ENDIAN=y CPU_LITTLE_ENDIAN=n",
        "ARM64_64K_PAGES=y ARM64_4K_PAGES=n",
        "DEBUG_KERNEL=n",
        "RELOCATABLE=n",
        "SLAB=y SLUB=n",
        "DEBUG_INFO_NONE=y DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=n",
    ],
];

const POWERPC_MECHANISMS: [&[&str]; 2] = [
    &["MODULES=n", "PPC64=n", "EXPERT=y"],
    &[
        "MODULES=n COMPILE_TEST=y",
        "COMPILE_TEST=y",
        "EXPERT=y PRINTK=n",
        "PPC64=n MODULES=n",
        "CPU_LITTLE_ENDIAN=y CPU_BIG_ENDIAN=n",
        "SMP=n",
        "PCI=n",
        "NET=n",
        "BLOCK=n",
        "NUMA=n",
        "SWAP=n",
        "SECURITY=y",
        "AUDIT=y",
        "CGROUPS=n",
        "CRYPTO=n",
        "INET=n",
        "NETDEVICES=n",
        "USB_SUPPORT=n",
        "SOUND=n",
        "SCSI=n",
        "ATA=n",
        "MD=n",
        "VIRTUALIZATION=n",
        "HOTPLUG_CPU=n",
        "FTRACE=n",
        "KPROBES=n",
        "HUGETLBFS=n",
        "DEBUG_KERNEL=n",
        "DEBUG_INFO_DWARF5=y DEBUG_INFO_NONE=n",
        "SLAB=y SLUB=n",
    ],
];

/// The mechanisms this run checks: the CI list, plus the wide one with
/// VERDICT_KCONFIG_SWEEP=wide.
fn mechanisms(lists: [&'static [&'static str]; 2]) -> Vec<&'static str> {
    let wide = std::env::var("VERDICT_KCONFIG_SWEEP").is_ok_and(|value| value == "wide");
    let mut chosen = lists[0].to_vec();
    if wide {
        chosen.extend_from_slice(lists[1]);
    }
    chosen
}

/// `edits` ("A=n B=y") applied to config text.
fn apply_mechanism(text: &str, edits: &str) -> String {
    edits
        .split_whitespace()
        .fold(text.to_string(), |text, assignment| {
            let (name, value) = assignment.split_once('=').expect("SYMBOL=VALUE");
            let value = match value {
                "y" => Tristate::Yes,
                "m" => Tristate::Module,
                "n" => Tristate::No,
                other => panic!("a mechanism sets y, m or n, not {other}"),
            };
            edit(&text, name, value)
        })
}

/// Checks every mechanism on one config: verdict's olddefconfig of the
/// edited config against the kernel's. Prints one line per mechanism (and
/// how many lines differ between the kernel's output and the config before
/// the edit, added plus removed) and fails listing every difference.
/// Returns how many were identical.
fn sweep_mechanisms(
    name: &str,
    arch: &str,
    tree: &Kconfig,
    source: &Path,
    oracle_path: &Path,
    mechanisms: &[&str],
    scratch: &Path,
) -> usize {
    let started = std::time::Instant::now();
    let base = std::fs::read_to_string(oracle_path.join(format!("{name}.olddefconfig")))
        .expect("read make olddefconfig's output");
    let base_lines: std::collections::HashSet<&str> = base.lines().collect();
    let inputs: Vec<(String, String)> = mechanisms
        .iter()
        .map(|edits| (edits.to_string(), apply_mechanism(&base, edits)))
        .collect();
    let outputs = oracle_all(oracle_path, source, arch, &inputs, scratch);
    let mut differences = Vec::new();
    let mut took_effect = 0;
    for ((label, text), kernel) in inputs.iter().zip(&outputs) {
        let kernel_lines: std::collections::HashSet<&str> = kernel.lines().collect();
        let changed = kernel_lines.symmetric_difference(&base_lines).count();
        if changed > 0 {
            took_effect += 1;
        }
        let actual = Evaluation::new(tree, text).write_config();
        if *kernel == actual {
            eprintln!(
                "mechanism {name} {label}: identical ({changed} lines changed by the kernel)"
            );
        } else {
            let difference = first_difference(kernel, &actual);
            eprintln!(
                "mechanism {name} {label}: DIFFERENT ({changed} lines changed by the kernel), {difference}"
            );
            differences.push(format!("{name} with {label}: {difference}"));
        }
    }
    eprintln!(
        "mechanisms {name}: {} of {} identical, {took_effect} changed the kernel's output, {:.1} s",
        mechanisms.len() - differences.len(),
        mechanisms.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        differences.is_empty(),
        "verdict differs from the kernel's conf:\n{}",
        differences.join("\n")
    );
    mechanisms.len()
}

#[test]
fn olddefconfig_matches_the_kernel_on_x86_configs() {
    let (Some(source), Some(oracle_path)) = (kernel_source(), oracle_directory()) else {
        return;
    };
    let scratch = tempfile::tempdir().expect("scratch");
    let tree = parse(&source, "x86_64", scratch.path());
    let named = [
        "PREEMPT",
        "SMP",
        "PREEMPT_DYNAMIC",
        "NO_HZ_FULL",
        "PREEMPT_VOLUNTARY",
    ];
    let mut total = 0;
    for name in ["amd64", "cloud", "rt"] {
        total += check(
            name,
            "x86_64",
            &tree,
            &source,
            &oracle_path,
            &named,
            scratch.path(),
        );
    }
    eprintln!("x86: {total} perturbations identical");
    assert!(total >= 3 * perturbation_count());
}

#[test]
fn olddefconfig_matches_the_kernel_on_arm64_defconfig() {
    let (Some(source), Some(oracle_path)) = (kernel_source(), oracle_directory()) else {
        return;
    };
    let scratch = tempfile::tempdir().expect("scratch");
    let tree = parse(&source, "arm64", scratch.path());
    let named = ["PREEMPT", "SMP", "PREEMPT_DYNAMIC", "NO_HZ_FULL"];
    let total = check(
        "arm64",
        "arm64",
        &tree,
        &source,
        &oracle_path,
        &named,
        scratch.path(),
    );
    assert!(total >= perturbation_count());
}

#[test]
fn olddefconfig_matches_the_kernel_on_powerpc_defconfig() {
    let (Some(source), Some(oracle_path)) = (kernel_source(), oracle_directory()) else {
        return;
    };
    let scratch = tempfile::tempdir().expect("scratch");
    let tree = parse(&source, "powerpc", scratch.path());
    let named = [
        "PREEMPT",
        "SMP",
        "PREEMPT_DYNAMIC",
        "NO_HZ_FULL",
        "POWER9_CPU",
        "GENERIC_CPU",
    ];
    let total = check(
        "powerpc",
        "powerpc",
        &tree,
        &source,
        &oracle_path,
        &named,
        scratch.path(),
    );
    assert!(total >= perturbation_count());
}

/// Issue reproduction: Debian's amd64 config with CONFIG_MODULES unset
/// differed from `make olddefconfig` in MVPP2_PTP, JOYSTICK_ADI,
/// SND_SOC_ARIZONA, SND_SOC_WM_HUBS and SND_SOC_MADERA; then every x86
/// config with the x86 mechanisms turned off.
#[test]
fn mechanisms_turned_off_match_the_kernel_on_x86_configs() {
    let all = mechanisms(X86_MECHANISMS);
    // CI checks MODULES=n on every flavour and the rest on amd64.
    let flavour = if all.len() > X86_MECHANISMS[0].len() {
        all.clone()
    } else {
        vec!["MODULES=n"]
    };
    sweep_arch(
        "x86_64",
        &[("amd64", all), ("cloud", flavour.clone()), ("rt", flavour)],
    );
}

#[test]
fn mechanisms_turned_off_match_the_kernel_on_arm64_defconfig() {
    sweep_arch("arm64", &[("arm64", mechanisms(ARM64_MECHANISMS))]);
}

#[test]
fn mechanisms_turned_off_match_the_kernel_on_powerpc_defconfig() {
    sweep_arch("powerpc", &[("powerpc", mechanisms(POWERPC_MECHANISMS))]);
}

/// Parses `arch`'s tree once (probes run) and sweeps each config's
/// mechanisms.
fn sweep_arch(arch: &str, configs: &[(&str, Vec<&str>)]) {
    let (Some(source), Some(oracle_path)) = (kernel_source(), oracle_directory()) else {
        return;
    };
    let scratch = tempfile::tempdir().expect("scratch");
    let tree = parse(&source, arch, scratch.path());
    let mut total = 0;
    for (name, chosen) in configs {
        total += sweep_mechanisms(
            name,
            arch,
            &tree,
            &source,
            &oracle_path,
            chosen,
            scratch.path(),
        );
    }
    eprintln!("{arch} mechanisms: {total} identical");
}

/// Without running any probe, the answers come from the config itself: on
/// the kernel's own output every config is a fixed point (x86, arm64 and
/// powerpc), although the tree's probes are all left unanswered.
#[test]
fn without_probes_the_kernels_output_is_a_fixed_point() {
    let (Some(source), Some(oracle_path)) = (kernel_source(), oracle_directory()) else {
        return;
    };
    for (arch, names) in [
        ("x86_64", &["amd64", "cloud", "rt"][..]),
        ("arm64", &["arm64"][..]),
        ("powerpc", &["powerpc"][..]),
    ] {
        let environment = make_environment(&source, arch, &HashMap::new());
        let tree = load_tree_expanded(&source, arch, &environment, &verdict_kconfig::NoProbes)
            .unwrap_or_else(|error| panic!("failed to {error}"));
        for name in names {
            let expected =
                std::fs::read_to_string(oracle_path.join(format!("{name}.olddefconfig")))
                    .expect("read make olddefconfig's output");
            let actual = Evaluation::new(&tree, &expected).write_config();
            assert!(
                expected == actual,
                "{name} without probes: {}",
                first_difference(&expected, &actual)
            );
        }
    }
}
