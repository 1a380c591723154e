//! `verdict kconfig olddefconfig / set / how` end to end on Debian's real
//! 6.1 tree and the configs the kernel's own `make olddefconfig` wrote
//! (scripts/prepare-kernel-tree.sh; VERDICT_KERNEL_SRC and
//! VERDICT_KCONFIG_ORACLE override the places), plus the refusals of bad
//! input. Must not modify the tree or the oracle files.

mod common;

use common::verdict_without_store;
use predicates::prelude::*;
use std::path::PathBuf;

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

#[test]
fn olddefconfig_writes_what_make_olddefconfig_wrote() {
    let Some((source, oracle)) = paths() else {
        return;
    };
    let output = tempfile::tempdir().unwrap();
    for name in ["amd64", "powerpc"] {
        let expected =
            std::fs::read_to_string(oracle.join(format!("{name}.olddefconfig"))).unwrap();
        let out = output.path().join(format!("{name}.config"));
        verdict_without_store()
            .args(["kconfig", "olddefconfig", "--tree"])
            .arg(&source)
            .arg("--config")
            .arg(oracle.join(format!("{name}.olddefconfig")))
            .arg("-o")
            .arg(&out)
            .assert()
            .success()
            .stdout("");
        let actual = std::fs::read_to_string(&out).unwrap();
        assert!(
            actual == expected,
            "{name}: -o output differs from make olddefconfig"
        );
    }
}

#[test]
fn set_prints_the_changes_with_reasons_and_how_finds_preempt() {
    let Some((source, oracle)) = paths() else {
        return;
    };
    let powerpc = oracle.join("powerpc.olddefconfig");
    verdict_without_store()
        .args(["kconfig", "set", "CONFIG_PREEMPT=y", "--tree"])
        .arg(&source)
        .arg("--config")
        .arg(&powerpc)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            " PREEMPT n -> y\n    because set by this edit (y: chosen in the config)\n",
        ))
        .stdout(predicate::str::contains(
            " PREEMPT_NONE y -> n\n    because n: its choice picks PREEMPT\n",
        ))
        .stdout(predicate::str::contains(
            "+PREEMPT_RCU y\n    because y: no prompt: computed from defaults and selects; default y = y\n",
        ));
    // The done-when of issue 18: PREEMPT=y is the way, and the only one.
    let output = verdict_without_store()
        .args(["kconfig", "how", "PREEMPT_RCU=y", "--tree"])
        .arg(&source)
        .arg("--config")
        .arg(&powerpc)
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.starts_with("PREEMPT_RCU=y (now n): 1 way(s), each checked by the evaluator, fewest other changes first:\n  1. PREEMPT=y  (changes 15 other symbol(s): "),
        "{text}"
    );
    verdict_without_store()
        .args(["kconfig", "how", "PREEMPT_RT=y", "--tree"])
        .arg(&source)
        .arg("--config")
        .arg(oracle.join("amd64.olddefconfig"))
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "impossible on this arch (x86_64) with one or two changes of user-settable symbols: PREEMPT_RT stays n because n: not available in its choice (ARCH_SUPPORTS_RT is n)",
        ));
}

#[test]
fn misspelled_symbols_and_non_configs_are_refused() {
    let Some((source, oracle)) = paths() else {
        return;
    };
    let powerpc = oracle.join("powerpc.olddefconfig");
    verdict_without_store()
        .args(["kconfig", "set", "PREMPT=y", "--tree"])
        .arg(&source)
        .arg("--config")
        .arg(&powerpc)
        .assert()
        .code(2)
        .stderr(predicate::str::ends_with("did you mean PREEMPT?\n"));
    verdict_without_store()
        .args(["kconfig", "why", "PREEMPT_RCUU", "--tree"])
        .arg(&source)
        .arg("--config")
        .arg(&powerpc)
        .assert()
        .code(2)
        .stderr(predicate::str::ends_with("did you mean PREEMPT_RCU?\n"));
    let directory = tempfile::tempdir().unwrap();
    let empty = directory.path().join("empty.config");
    std::fs::write(&empty, "").unwrap();
    verdict_without_store()
        .args(["kconfig", "olddefconfig", "--tree"])
        .arg(&source)
        .arg("--config")
        .arg(&empty)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("it has no `CONFIG_NAME=value` or `# CONFIG_NAME is not set` line; is it a kernel .config?"));
    let script = directory.path().join("script.sh");
    std::fs::write(&script, "#!/bin/sh\necho hello\n").unwrap();
    verdict_without_store()
        .args(["kconfig", "olddefconfig", "--tree"])
        .arg(&source)
        .arg("--config")
        .arg(&script)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "script.sh:2: expected `CONFIG_NAME=value`",
        ));
}
