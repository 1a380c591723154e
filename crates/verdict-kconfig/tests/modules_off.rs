//! Kconfig with modules off, against outputs the kernel's own
//! scripts/kconfig/conf wrote (tests/fixtures/modules-off, see its README):
//! `m` in comparisons, `m` promoted to `y`, select and imply by former
//! modules, `depends on m`, a tristate choice. Runs without a kernel tree;
//! with the oracle present (scripts/prepare-kernel-tree.sh) it also re-runs
//! conf on the fixture so the committed outputs cannot drift from the
//! kernel. Must not modify the fixture.

use std::path::{Path, PathBuf};
use std::time::Duration;
use verdict_exec::{Cancel, Invocation, Status, SystemExecutor, Target};
use verdict_kconfig::{Evaluation, Kconfig, NoProbes, load_tree_expanded};

const CASES: [&str; 3] = ["modules-on", "modules-off", "compile-test"];

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/modules-off")
}

fn tree() -> Kconfig {
    load_tree_expanded(&fixture(), "x86_64", &Default::default(), &NoProbes)
        .unwrap_or_else(|error| panic!("failed to {error}"))
}

fn read(name: &str) -> String {
    std::fs::read_to_string(fixture().join(name))
        .unwrap_or_else(|error| panic!("read {name}: {error}"))
}

#[test]
fn olddefconfig_with_modules_off_is_the_kernels() {
    let tree = tree();
    for case in CASES {
        let expected = read(&format!("{case}.olddefconfig"));
        let actual = Evaluation::new(&tree, &read(&format!("{case}.config"))).write_config();
        assert_eq!(actual, expected, "{case}");
    }
}

/// The five symbols Debian's amd64 config got wrong with MODULES unset,
/// each with the rule that decides it: `m` reads as "m" in a comparison
/// whether or not modules are on.
#[test]
fn comparisons_with_m_read_m_when_modules_are_off() {
    let tree = tree();
    let mut evaluation = Evaluation::new(&tree, &read("modules-off.config"));
    // MVPP2 is n, so `MVPP2 = m` is n: the prompt stays hidden.
    assert!(!evaluation.write_config().contains("MVPP2_PTP"));
    // ADI is n, so `ADI != m` holds and the user's m becomes y.
    assert_eq!(evaluation.value("JOYSTICK_ADI").as_deref(), Some("y"));
    // SND_SOC_WM8993 is n: `default m if SND_SOC_WM8993=m` does not apply.
    assert_eq!(evaluation.value("SND_SOC_ARIZONA").as_deref(), Some("n"));
}

fn oracle_conf() -> Option<PathBuf> {
    let path = std::env::var_os("VERDICT_KCONFIG_ORACLE").map_or_else(
        || PathBuf::from("/usr/src/linux-kconfig-oracle"),
        PathBuf::from,
    );
    verdict_testkit::require_path(
        &path.join("done"),
        "scripts/prepare-kernel-tree.sh (needs linux-source-6.1, linux-config-6.1, make, gcc, flex, bison, bc)",
    )
    .map(|_| path.join("conf"))
}

#[test]
fn the_committed_outputs_are_what_the_kernels_conf_writes() {
    let Some(conf) = oracle_conf() else {
        return;
    };
    for case in CASES {
        let work = tempfile::tempdir().expect("scratch directory");
        let config = work.path().join(".config");
        std::fs::write(&config, read(&format!("{case}.config"))).expect("write the input");
        let invocation = Invocation::argv([
            conf.display().to_string(),
            "--olddefconfig".to_string(),
            "Kconfig".to_string(),
        ])
        // conf also writes include/config/auto.conf under its directory.
        .with_cwd(work.path().to_path_buf())
        .with_timeout(Duration::from_secs(60))
        .with_env("KCONFIG_CONFIG", config.display().to_string())
        .with_env("srctree", fixture().display().to_string());
        let outcome = SystemExecutor
            .run(&invocation, &Cancel::new())
            .expect("run the kernel's conf");
        assert_eq!(
            outcome.status,
            Status::Exited(0),
            "conf failed: {}",
            outcome.output_tail(4000)
        );
        let written = std::fs::read_to_string(&config).expect("read conf's output");
        assert_eq!(written, read(&format!("{case}.olddefconfig")), "{case}");
    }
}
