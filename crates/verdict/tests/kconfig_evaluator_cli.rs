//! `verdict kconfig olddefconfig / set / how` end to end on Debian's real
//! 6.1 tree and the configs the kernel's own `make olddefconfig` wrote
//! (scripts/prepare-kernel-tree.sh; VERDICT_KERNEL_SRC and
//! VERDICT_KCONFIG_ORACLE override the places), with the toolchain probes
//! run (`--run-probes`, through verdict-engine's kconfig_probes) on Debian's
//! amd64 config with MODULES unset against the kernel's own `conf`, plus the
//! refusals of bad input. Must not modify the tree or the oracle files.

mod common;

use common::verdict_without_store;
use predicates::prelude::*;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;
use verdict_exec::{Cancel, Invocation, Status, SystemExecutor, Target};

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

/// Issue 29's reproduction: `verdict kconfig olddefconfig --run-probes` on
/// Debian's amd64 config with CONFIG_MODULES unset writes what the kernel's
/// conf writes (it differed in MVPP2_PTP, JOYSTICK_ADI, SND_SOC_ARIZONA,
/// SND_SOC_WM_HUBS and SND_SOC_MADERA).
#[test]
fn olddefconfig_with_probes_and_modules_off_writes_what_conf_writes() {
    let Some((source, oracle)) = paths() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(oracle.join("amd64.olddefconfig")).unwrap();
    let input = verdict_kconfig::edit_config(&base, "MODULES", "# CONFIG_MODULES is not set");
    let input_path = work.path().join("no-modules.config");
    std::fs::write(&input_path, &input).unwrap();
    // The kernel's answer: its conf with the variables make exports.
    let config = work.path().join(".config");
    std::fs::write(&config, &input).unwrap();
    let mut environment = verdict_kconfig::make_environment(&source, "x86_64", &HashMap::new());
    let version = SystemExecutor
        .run(
            &Invocation::shell("LC_ALL=C gcc --version 2>/dev/null | head -n 1"),
            &Cancel::new(),
        )
        .expect("gcc --version");
    environment.insert(
        "CC_VERSION_TEXT".to_string(),
        String::from_utf8_lossy(&version.stdout)
            .trim_end()
            .to_string(),
    );
    let mut conf = Invocation::argv([
        oracle.join("conf").display().to_string(),
        "--olddefconfig".to_string(),
        "Kconfig".to_string(),
    ])
    .with_cwd(work.path().to_path_buf())
    .with_timeout(Duration::from_secs(600))
    .with_env("KCONFIG_CONFIG", config.display().to_string());
    for (name, value) in &environment {
        conf = conf.with_env(name.clone(), value.clone());
    }
    let outcome = SystemExecutor.run(&conf, &Cancel::new()).expect("run conf");
    assert_eq!(
        outcome.status,
        Status::Exited(0),
        "{}",
        outcome.output_tail(2000)
    );
    let expected = std::fs::read_to_string(&config).unwrap();
    let out = work.path().join("verdict.config");
    verdict_without_store()
        .args([
            "kconfig",
            "olddefconfig",
            "--run-probes",
            "--arch",
            "x86_64",
            "--tree",
        ])
        .arg(&source)
        .arg("--config")
        .arg(&input_path)
        .arg("-o")
        .arg(&out)
        .assert()
        .success()
        .stdout("");
    let actual = std::fs::read_to_string(&out).unwrap();
    let differing: Vec<(&str, &str)> = expected
        .lines()
        .zip(actual.lines())
        .filter(|(kernel, verdict)| kernel != verdict)
        .take(5)
        .collect();
    assert!(
        actual == expected,
        "differs from the kernel's conf ({} vs {} lines): {differing:?}",
        expected.lines().count(),
        actual.lines().count()
    );
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
