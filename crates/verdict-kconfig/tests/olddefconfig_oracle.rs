//! verdict's olddefconfig against the kernel's own scripts/kconfig/conf
//! (built from Debian's linux-source-6.1 by scripts/prepare-kernel-tree.sh,
//! which also stores `make olddefconfig` outputs for Debian's amd64, cloud
//! and rt configs and the arm64 / powerpc defconfigs). Each tree is parsed
//! once with its toolchain probes run for real (through verdict-exec); then
//! every config and 50 perturbations of it (VERDICT_KCONFIG_PERTURBATIONS)
//! must be byte-identical to what conf writes after the same edit. Oracle
//! results are cached by input hash in the oracle directory. Must not modify
//! the kernel tree or the packaged configs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use verdict_exec::{Cancel, Executor, Invocation, Status, SystemExecutor};
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
    // The kernel's conf runs in parallel (two at a time); verdict in turn.
    let outputs: Vec<String> = std::thread::scope(|scope| {
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
    });
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
