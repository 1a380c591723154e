//! `verdict run` of boot levels whose kernels verdict builds, against a
//! stand-in kernel tree (verdict-testkit's: a real git repository and a
//! Makefile that behaves as Kbuild does for the builder), so no kernel is
//! compiled and nothing boots: a patch that does not apply stops the run
//! before its first boot with exit 1, the report (snapshot) lists both
//! builds, the failure with git's words, and stderr says what to do; the
//! run's record keeps both builds. A config that lacks a feature verdict's
//! guest needs is refused the same way, naming the option.

use std::path::Path;

mod common;

fn base_config() -> String {
    format!(
        "{}CONFIG_CC_VERSION_TEXT=\"gcc (stand-in) 1.0\"\n",
        verdict_kconfig::vm_guest_needs()
    )
}

fn experiment(tree: &Path, patch: &str, config: &str) -> String {
    format!(
        "name = \"patched\"\ncommand = [\"true\"]\n\n[factors.patch]\nlevels = [\n  \
         {{ value = \"without\", boot = {{ build = {{ tree = \"{tree}\", config = \"{config}\" }} }} }},\n  \
         {{ value = \"with\", boot = {{ build = {{ tree = \"{tree}\", config = \"{config}\", patches = [\"{patch}\"] }} }} }},\n]\n\n\
         [sampling]\niterations = 2\n\n[target]\nvm = {{ smp = \"2\", accel = \"tcg\" }}\n",
        tree = tree.display()
    )
}

#[test]
fn a_patch_that_does_not_apply_stops_the_run_before_its_first_boot() {
    for (program, package) in [("git", "git"), ("make", "make")] {
        if verdict_testkit::require_program(program, package).is_none() {
            return;
        }
    }
    let directory = tempfile::tempdir().unwrap();
    let (tree, _) =
        verdict_testkit::kernel_tree::stand_in_kernel_tree(directory.path(), &base_config());
    std::fs::write(
        directory.path().join("stale.patch"),
        verdict_testkit::kernel_tree::ONE_FILE_PATCH.replace("int cpu;", "int cpus;"),
    )
    .unwrap();
    std::fs::write(
        directory.path().join("patched.toml"),
        experiment(&tree, "stale.patch", "tinyconfig"),
    )
    .unwrap();
    let output = common::verdict(directory.path())
        .env("VERDICT_KERNEL_CACHE", directory.path().join("cache"))
        .args(["run", "patched.toml"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(!stderr.contains("boot 0"), "nothing booted: {stderr}");
    assert!(
        stderr.contains(
            "verdict: run 1 stopped before measuring: the kernel of patch=with was not built: patch failed: the patch stale.patch"
        ) && stderr.contains("`verdict run --resume 1` builds it again"),
        "{stderr}"
    );
    let section = &stdout[stdout.find("kernels built from source").expect(&stdout)..];
    insta::with_settings!({filters => vec![
        (r"\b[0-9a-f]{64}\b", "[sha256]"),
        (r"\b[0-9a-f]{20}\b", "[key]"),
        (r"\b[0-9a-f]{16}\b", "[sha256]"),
        (r"\b[0-9a-f]{12}\b", "[short]"),
        (r"/tmp/[^\s';:)]+", "[path]"),
        (r"(built in|after) [0-9a-z ]+:", "$1 [time]:"),
    ]}, {
        insta::assert_snapshot!("kernel_build_failed_patch", section);
    });

    // A config without what the guest needs: refused before make, naming
    // the option, for the first level already.
    let lacking = directory.path().join("configs/lacking.config");
    std::fs::create_dir_all(lacking.parent().unwrap()).unwrap();
    std::fs::write(&lacking, base_config().replace("CONFIG_EVENTFD=y\n", "")).unwrap();
    std::fs::write(
        directory.path().join("lacking.toml"),
        experiment(&tree, "stale.patch", "./configs/lacking.config"),
    )
    .unwrap();
    let output = common::verdict(directory.path())
        .env("VERDICT_KERNEL_CACHE", directory.path().join("cache"))
        .args(["run", "lacking.toml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the kernel of patch=without was not built: features failed: the kernel would not boot in verdict's VM: it lacks CONFIG_EVENTFD=y"),
        "{stderr}"
    );
}
