//! `verdict kconfig` end to end: the built binary run on the story-2
//! fixture tree and configs in crates/verdict-kconfig/tests/fixtures, on
//! broken inputs, and (when installed) on Debian's real 6.1 tree and configs.

mod common;

use common::{verdict_without_store, verdict_without_store_in};
use predicates::prelude::*;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../verdict-kconfig/tests/fixtures")
}

fn stdout_of(arguments: &[&str]) -> String {
    let output = verdict_without_store_in(&fixtures())
        .args(arguments)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "verdict {arguments:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

const DIFF: &str = "\
-PREEMPT_VOLUNTARY_BUILD y
 CRC32 m -> y
 JUMP_LABEL n -> y
+HAVE_PREEMPT_DYNAMIC y
+HAVE_PREEMPT_DYNAMIC_KEY y
+PREEMPTION y
+PREEMPT_BUILD y
+PREEMPT_COUNT y
+PREEMPT_DYNAMIC y
+PREEMPT_RCU y
+UNINLINE_SPIN_UNLOCK y
";

#[test]
fn diff_prints_diffconfig_format_for_plain_and_gzip_input() {
    let plain = stdout_of(&[
        "kconfig",
        "diff",
        "configs/old.config",
        "configs/new.config",
    ]);
    assert_eq!(plain, DIFF);
    let gzip = stdout_of(&[
        "kconfig",
        "diff",
        "configs/old.config",
        "configs/new.config.gz",
    ]);
    assert_eq!(gzip, DIFF);
    let preempt = stdout_of(&[
        "kconfig",
        "diff",
        "configs/old.config",
        "configs/new.config",
        "--match",
        "^PREEMPT_(DYNAMIC|RCU)$",
    ]);
    assert_eq!(preempt, "+PREEMPT_DYNAMIC y\n+PREEMPT_RCU y\n");
    verdict_without_store_in(&fixtures())
        .args([
            "kconfig",
            "diff",
            "configs/old.config",
            "configs/new.config",
            "--match",
            "(",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "verdict: error: failed to compile symbol pattern `(`:",
        ));
    let same = stdout_of(&[
        "kconfig",
        "diff",
        "configs/new.config",
        "configs/new.config.gz",
    ]);
    assert_eq!(same, "");
}

#[test]
fn diff_json_names_its_schema() {
    let text = stdout_of(&[
        "kconfig",
        "diff",
        "configs/old.config",
        "configs/new.config.gz",
        "--format",
        "json",
    ]);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["schema"], "verdict.kconfig-diff/v1");
    assert_eq!(json["old_file"], "configs/old.config");
    assert_eq!(
        json["counts"],
        serde_json::json!({"removed": 1, "changed": 2, "added": 8})
    );
    assert_eq!(
        json["entries"][1],
        serde_json::json!({"symbol": "CRC32", "kind": "changed", "old": "m", "new": "y"})
    );
    assert!(
        text.starts_with("{\n  \"schema\""),
        "schema comes first: {text}"
    );
}

const WHY_PREEMPT_RCU: &str = r#"computed by the tree: PREEMPT_RCU=y: no prompt: computed from defaults and selects; default y = y

PREEMPT_RCU=y  [kernel/rcu/Kconfig:18]
`- default y if PREEMPT || PREEMPT_RT || PREEMPT_DYNAMIC  [kernel/rcu/Kconfig:20]
   `- PREEMPT_DYNAMIC=y  [kernel/Kconfig.preempt:60]
      `- set by the user at prompt "Preemption behaviour defined on boot"  [kernel/Kconfig.preempt:61]
         |- depends on HAVE_PREEMPT_DYNAMIC && !PREEMPT_RT: holds  [kernel/Kconfig.preempt:62]
         |  |- HAVE_PREEMPT_DYNAMIC=y  [arch/Kconfig:43]
         |  |  `- selected by HAVE_PREEMPT_DYNAMIC_KEY  [arch/Kconfig:57]
         |  |     `- HAVE_PREEMPT_DYNAMIC_KEY=y  [arch/Kconfig:54]
         |  |        `- selected by PPC  [arch/powerpc/Kconfig:14]
         |  |           `- PPC=y  [arch/powerpc/Kconfig:7]
         |  |              `- default y  [arch/powerpc/Kconfig:9]
         |  `- PREEMPT_RT=n  [kernel/Kconfig.preempt:44]
         |     `- unmet dependency: depends on EXPERT && ARCH_SUPPORTS_RT: is n  [kernel/Kconfig.preempt:46]
         |        |- EXPERT=n  [init/Kconfig:34]
         |        |  `- the user left it off at prompt "Configure standard kernel features (expert users)"  [init/Kconfig:35]
         |        `- ARCH_SUPPORTS_RT=n  [arch/Kconfig:34]
         |           `- no prompt, default, select or imply can turn it on
         `- (no default applies: the value is the user's answer)
"#;

#[test]
fn why_prints_the_story_chain_with_file_and_line() {
    let text = stdout_of(&[
        "kconfig",
        "why",
        "CONFIG_PREEMPT_RCU",
        "--tree",
        "preempt-tree",
        "--config",
        "configs/new.config",
    ]);
    assert_eq!(text, WHY_PREEMPT_RCU);
    // --arch given explicitly, gzip config, JSON.
    let json = stdout_of(&[
        "kconfig",
        "why",
        "PREEMPT_RCU",
        "--tree",
        "preempt-tree",
        "--config",
        "configs/new.config.gz",
        "--arch",
        "ppc64le",
        "--format",
        "json",
    ]);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["schema"], "verdict.kconfig-why/v1");
    assert_eq!(json["value"], "y");
    assert_eq!(json["reason"]["location"], "kernel/rcu/Kconfig:18");
    assert_eq!(
        json["reason"]["children"][0]["children"][0]["text"],
        "PREEMPT_DYNAMIC=y"
    );
}

#[test]
fn why_not_names_the_unmet_dependency_in_the_old_config() {
    let text = stdout_of(&[
        "kconfig",
        "why-not",
        "PREEMPT_DYNAMIC",
        "--tree",
        "preempt-tree",
        "--config",
        "configs/old.config",
    ]);
    assert!(
        text.starts_with(
            "computed by the tree: PREEMPT_DYNAMIC=n: not set in the config; no default applies\n\nPREEMPT_DYNAMIC=n  [kernel/Kconfig.preempt:60]\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("`- unmet dependency: depends on HAVE_PREEMPT_DYNAMIC && !PREEMPT_RT: is n  [kernel/Kconfig.preempt:62]"),
        "{text}"
    );
    assert!(
        text.contains("would be selected by HAVE_PREEMPT_DYNAMIC_KEY: HAVE_PREEMPT_DYNAMIC_KEY is off  [arch/Kconfig:57]"),
        "{text}"
    );
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn blame_shows_both_trees_and_the_changed_leaves() {
    let old_tree = tempfile::tempdir().unwrap();
    copy_tree(&fixtures().join("preempt-tree"), old_tree.path());
    let arch = old_tree.path().join("arch/powerpc/Kconfig");
    let reverted = std::fs::read_to_string(&arch)
        .unwrap()
        .replace("\tselect HAVE_PREEMPT_DYNAMIC_KEY\n", "");
    std::fs::write(&arch, reverted).unwrap();
    let text = stdout_of(&[
        "kconfig",
        "blame",
        "configs/old.config",
        "configs/new.config",
        "PREEMPT_RCU",
        "--tree",
        old_tree.path().to_str().unwrap(),
        "--new-tree",
        "preempt-tree",
        "--full",
    ]);
    assert!(text.starts_with("PREEMPT_RCU: n -> y\n\n"), "{text}");
    assert!(text.contains("\n\nOLD "), "{text}");
    assert!(text.contains("| NEW\n"), "{text}");
    let only_new = text.split("Leaves only in NEW:\n").nth(1).unwrap();
    assert!(
        only_new.contains("  + PPC: default y  [arch/powerpc/Kconfig:9]"),
        "{text}"
    );
    let only_old = text.split("Leaves only in OLD:\n").nth(1).unwrap();
    assert!(
        only_old.contains(
            "  - HAVE_PREEMPT_DYNAMIC_KEY: no prompt, default, select or imply can turn it on"
        ),
        "{text}"
    );
    let json = stdout_of(&[
        "kconfig",
        "blame",
        "configs/old.config",
        "configs/new.config",
        "PREEMPT_RCU",
        "--tree",
        "preempt-tree",
        "--format",
        "json",
    ]);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["schema"], "verdict.kconfig-blame/v1");
    assert_eq!(json["old"]["value"], "n");
    assert_eq!(json["new"]["value"], "y");
}

#[test]
fn bad_input_exits_2_with_file_and_line() {
    verdict_without_store_in(&fixtures())
        .args([
            "kconfig",
            "why",
            "PPC",
            "--tree",
            "no-such-dir",
            "--config",
            "configs/new.config",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no-such-dir/Kconfig: --tree must be a kernel source directory",
        ));
    verdict_without_store_in(&fixtures())
        .args(["kconfig", "why", "NOPE", "--tree", "preempt-tree", "--config", "configs/new.config"])
        .assert()
        .code(2)
        .stderr("verdict: error: failed to explain NOPE: no `config NOPE` in the Kconfig tree for arch powerpc\n");
    verdict_without_store_in(&fixtures())
        .args([
            "kconfig",
            "diff",
            "configs/old.config",
            "configs/missing.config",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "failed to read config configs/missing.config",
        ));

    let broken = tempfile::tempdir().unwrap();
    std::fs::write(broken.path().join("Kconfig"), "source \"sub/Kconfig\"\n").unwrap();
    std::fs::create_dir(broken.path().join("sub")).unwrap();
    std::fs::write(
        broken.path().join("sub/Kconfig"),
        "config A\n\tbool \"a\"\n\tdepends on B &&\n",
    )
    .unwrap();
    std::fs::write(
        broken.path().join("bad.config"),
        "CONFIG_A=y\nnot a config line\n",
    )
    .unwrap();
    verdict_without_store_in(&fixtures())
        .args(["kconfig", "why", "A", "--arch", "x86_64", "--config", "configs/new.config", "--tree"])
        .arg(broken.path())
        .assert()
        .code(2)
        .stderr(
            "verdict: error: failed to parse sub/Kconfig:3: expected a symbol, string or `(`, found end of line\n",
        );
    verdict_without_store_in(&fixtures())
        .args(["kconfig", "diff", "configs/old.config"])
        .arg(broken.path().join("bad.config"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.config:2: expected `CONFIG_NAME=value` or `# CONFIG_NAME is not set`, found `not a config line`"));
}

#[test]
fn real_debian_tree_when_installed() {
    let source = std::env::var_os("VERDICT_KERNEL_SRC")
        .map_or_else(|| PathBuf::from("/usr/src/linux-source-6.1"), PathBuf::from);
    let configs = std::env::var_os("VERDICT_KERNEL_CONFIGS")
        .map_or_else(|| PathBuf::from("/usr/src/linux-config-6.1"), PathBuf::from);
    let compressed = configs.join("config.amd64_none_amd64.xz");
    let tree_hint = "apt-get install linux-source-6.1, then scripts/prepare-kernel-tree.sh (or set VERDICT_KERNEL_SRC to an extracted tree)";
    let Some(_) = verdict_testkit::require_path(&source.join("Kconfig"), tree_hint) else {
        return;
    };
    let config_hint =
        "apt-get install linux-config-6.1 (or set VERDICT_KERNEL_CONFIGS to its directory)";
    let Some(_) = verdict_testkit::require_path(&compressed, config_hint) else {
        return;
    };
    let Some(_) = verdict_testkit::require_program("xz", "xz-utils") else {
        return;
    };
    let output = std::process::Command::new("xz")
        .arg("-dc")
        .arg(&compressed)
        .output()
        .unwrap();
    assert!(output.status.success());
    let directory = tempfile::tempdir().unwrap();
    let config = directory.path().join("config");
    std::fs::write(&config, &output.stdout).unwrap();
    let mut command = verdict_without_store_in(&fixtures());
    command
        .args(["kconfig", "why", "PREEMPT_RCU", "--tree"])
        .arg(&source)
        .arg("--config")
        .arg(&config);
    command
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "computed by the tree: PREEMPT_RCU=y: ",
        ))
        .stdout(predicate::str::contains(
            "\n\nPREEMPT_RCU=y  [kernel/rcu/Kconfig:",
        ))
        .stdout(predicate::str::contains(
            "selected by PREEMPT_DYNAMIC  [kernel/Kconfig.preempt:",
        ));
    let mut command = verdict_without_store_in(&fixtures());
    command
        .args(["kconfig", "why-not", "PREEMPT", "--tree"])
        .arg(&source)
        .arg("--config")
        .arg(&config);
    command.assert().success().stdout(predicate::str::contains(
        "not chosen in choice \"Preemption Model\": PREEMPT_VOLUNTARY was chosen",
    ));
}

#[test]
fn the_vm_guest_fragment_is_printed_and_an_unknown_one_named() {
    let output = verdict_without_store()
        .args(["kconfig", "fragment", "vm-guest"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(text, verdict_kconfig::fragment("vm-guest").unwrap());
    for line in [
        "CONFIG_VIRTIO_NET=y",
        "CONFIG_EVENTFD=y",
        "CONFIG_DEVTMPFS=y",
        "CONFIG_SCHED_SMT=y",
    ] {
        assert!(text.lines().any(|found| found == line), "{line}");
    }
    verdict_without_store()
        .args(["kconfig", "fragment", "vm-host"])
        .assert()
        .code(2)
        .stderr("verdict: error: no fragment `vm-host`; verdict ships: vm-guest\n");
}
