//! The evaluator's reasons for the cases the reading-only explainer got
//! wrong (issue 18), on Debian's real 6.1 tree and the configs the kernel's
//! own `make olddefconfig` wrote (scripts/prepare-kernel-tree.sh). The tree
//! is parsed without running probes, as `verdict kconfig why` does by
//! default. Must not modify the tree or the configs.

use std::collections::HashMap;
use std::path::PathBuf;
use verdict_kconfig::{Evaluation, Kconfig, NoProbes, load_tree_expanded, make_environment};

fn paths() -> Option<(PathBuf, PathBuf)> {
    let source = std::env::var_os("VERDICT_KERNEL_SRC")
        .map_or_else(|| PathBuf::from("/usr/src/linux-source-6.1"), PathBuf::from);
    let oracle = std::env::var_os("VERDICT_KCONFIG_ORACLE").map_or_else(
        || PathBuf::from("/usr/src/linux-kconfig-oracle"),
        PathBuf::from,
    );
    verdict_testkit::require_path(
        &oracle.join("done"),
        "apt-get install linux-source-6.1 linux-config-6.1, then scripts/prepare-kernel-tree.sh",
    )?;
    Some((source, oracle))
}

fn tree(source: &std::path::Path, arch: &str) -> Kconfig {
    let environment = make_environment(source, arch, &HashMap::new());
    load_tree_expanded(source, arch, &environment, &NoProbes)
        .unwrap_or_else(|error| panic!("failed to {error}"))
}

fn config(oracle: &std::path::Path, name: &str) -> String {
    std::fs::read_to_string(oracle.join(format!("{name}.olddefconfig"))).expect("oracle output")
}

#[test]
fn x86_probes_tristates_choices_and_foreign_values() {
    let Some((source, oracle)) = paths() else {
        return;
    };
    let tree = tree(&source, "x86_64");
    let amd64 = config(&oracle, "amd64");
    let mut evaluation = Evaluation::new(&tree, &amd64);
    // Toolchain probes are no longer "unmet dependencies": a prompt behind
    // a probe takes the user's value, a probe symbol the config's answer.
    let split = evaluation.reason("DEBUG_INFO_SPLIT").unwrap();
    assert_eq!(split, "n: set to n in the config");
    let x32 = evaluation.reason("X86_X32_ABI").unwrap();
    assert_eq!(x32, "y: set to y in the config");
    let ibt = evaluation.reason("CC_HAS_IBT").unwrap();
    assert!(
        ibt.starts_with("y: a toolchain probe that was not run"),
        "{ibt}"
    );

    // NO_HZ_FULL needs SMP: without SMP the choice falls back, and the
    // member it falls back to says so.
    let text = verdict_kconfig::edit_config(&amd64, "SMP", "# CONFIG_SMP is not set");
    let mut evaluation = Evaluation::new(&tree, &text);
    let full = evaluation.reason("NO_HZ_FULL").unwrap();
    assert!(
        full.starts_with("n: not available in its choice (SMP is n)"),
        "{full}"
    );
    let fallback = ["HZ_PERIODIC", "NO_HZ_IDLE"]
        .iter()
        .find(|name| evaluation.value(name).as_deref() == Some("y"))
        .expect("a timer choice member is picked");
    let reason = evaluation.reason(fallback).unwrap();
    assert!(
        reason.starts_with(
            "y: choice fallback: the config chose NO_HZ_FULL, which is not available (SMP is n)"
        ),
        "{reason}"
    );

    // PREEMPT_RT=y written into a config of a tree without RT support.
    let text = verdict_kconfig::edit_config(&amd64, "PREEMPT_RT", "CONFIG_PREEMPT_RT=y");
    let mut evaluation = Evaluation::new(&tree, &text);
    assert_eq!(evaluation.value("PREEMPT_RT").as_deref(), Some("n"));
    let rt = evaluation.reason("PREEMPT_RT").unwrap();
    assert!(rt.contains("ARCH_SUPPORTS_RT is n"), "{rt}");
}

#[test]
fn powerpc_tristate_comparison_and_arm64_environment_string() {
    let Some((source, oracle)) = paths() else {
        return;
    };
    // CRAMFS_MTD: `CRAMFS <= MTD` compares tristates n < m < y, so with
    // CRAMFS=m and MTD=n the prompt is hidden (not "left off by the user").
    let tree = tree(&source, "powerpc");
    let powerpc = config(&oracle, "powerpc");
    let mut evaluation = Evaluation::new(&tree, &powerpc);
    let cramfs = evaluation.reason("CRAMFS_MTD").unwrap();
    assert!(
        cramfs.starts_with("n: prompt hidden: needs CRAMFS <= MTD"),
        "{cramfs}"
    );

    // `"$(CROSS_COMPILE_COMPAT)" != ""` is expanded from the environment
    // (empty here), not compared as literal text.
    let tree = tree_arm64(&source);
    let arm64 = config(&oracle, "arm64");
    let mut evaluation = Evaluation::new(&tree, &arm64);
    let vdso = evaluation.reason("COMPAT_VDSO").unwrap();
    assert!(vdso.contains("\"\" != \"\""), "{vdso}");
    assert_eq!(evaluation.value("COMPAT_VDSO").as_deref(), Some("n"));
}

fn tree_arm64(source: &std::path::Path) -> Kconfig {
    tree(source, "arm64")
}
