//! A kernel built from source, with real tools: `verdict run` of an
//! experiment whose `[target] vm` builds Debian's linux-source-6.1 (the
//! tarball, imported into a git repository of the cache) with `make
//! tinyconfig`, the tree's `kvm_guest.config` and verdict's `vm-guest`
//! fragment, then boots it under QEMU (TCG) with no file of it under
//! /lib/modules (its release is not installed on this machine): the NIC's
//! drivers are built in, found in the build's `modules.builtin`, and the
//! guest has every feature the agent needs. The boot is proven (nonce,
//! release, and the image's `uname -v`), the build's provenance is in the
//! boot's environment and the report, its config is stored (`compare
//! --config-diff` between two runs finds no difference), and a second run
//! builds nothing (the cache's spec key names the kernel).
//!
//! The kernel is built once per cache: the cache is
//! `$CARGO_TARGET_TMPDIR/kernel-cache`, kept between test runs, so a rerun
//! with an unchanged tree and toolchain boots the cached kernel (about 4
//! minutes of `make` on 2 idle cores the first time).

use std::path::{Path, PathBuf};

mod common;

/// What the build needs on this machine, or `None` (the test then fails
/// naming the package, unless missing tools are allowed).
fn build_tools() -> Option<PathBuf> {
    common::vm::debian_kernel()?;
    for (program, package) in [
        ("make", "make"),
        ("gcc", "gcc"),
        ("flex", "flex"),
        ("bison", "bison"),
        ("bc", "bc"),
        ("git", "git"),
        ("tar", "tar"),
        ("xz", "xz-utils"),
    ] {
        verdict_testkit::require_program(program, package)?;
    }
    verdict_testkit::require_path(
        Path::new("/usr/src/linux-source-6.1.tar.xz"),
        "apt-get install linux-source-6.1",
    )
}

const EXPERIMENT: &str = r#"name = "built"
command = ["cat", "/sys/devices/system/cpu/online"]

[sampling]
iterations = 3
timeout = "120s"

[target]
vm = { build = { tree = "/usr/src/linux-source-6.1.tar.xz", config = "tinyconfig", fragments = ["kvm_guest.config", "verdict:vm-guest"] }, smp = "sockets=1,cores=2,threads=2", cpu = "Skylake-Server", memory = "1G", accel = "tcg", cmdline = "no_timer_check", boot_timeout = "600s" }
"#;

#[test]
fn a_tinyconfig_kernel_with_the_vm_guest_fragment_boots_with_no_module_files() {
    let Some(tarball) = build_tools() else {
        return;
    };
    assert!(tarball.is_file());
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernel-cache");
    let directory = tempfile::tempdir().unwrap();
    std::fs::write(directory.path().join("built.toml"), EXPERIMENT).unwrap();
    let run = || {
        let output = common::verdict(directory.path())
            .env("VERDICT_KERNEL_CACHE", &cache)
            .args(["run", "built.toml"])
            .timeout(std::time::Duration::from_secs(3 * 3600))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(output.status.success(), "{stdout}\n{stderr}");
        (stdout, stderr)
    };
    let started = std::time::Instant::now();
    let (report, progress) = run();
    eprintln!(
        "first run (build or cache, boot, 3 iterations): {:.0?}",
        started.elapsed()
    );
    assert!(
        progress.contains("kernel for (all): /usr/src/linux-source-6.1.tar.xz"),
        "{progress}"
    );
    assert!(progress.contains("boot 0 proven: "), "{progress}");
    for line in [
        "kernels built from source",
        "(all): ",
        "of /usr/src/linux-source-6.1.tar.xz; config tinyconfig + kvm_guest.config + verdict:vm-guest",
        "kernel build: commit ",
    ] {
        assert!(report.contains(line), "{line}\n{report}");
    }

    let store = verdict_store::SqliteStore::open(directory.path().join("v.db")).unwrap();
    use verdict_store::Store;
    let first = store.latest_run().unwrap().unwrap().id;
    let boots = store.boots(first).unwrap();
    assert_eq!(boots.len(), 1);
    let boot = &boots[0];
    assert_eq!(boot.status, verdict_model::BootStatus::Complete);
    let environment = boot.environment.as_ref().unwrap();
    let build = environment.kernel_build.as_ref().unwrap();
    let release = boot.kernel_release.clone().unwrap();
    assert_eq!(build.release, release);
    // Nothing of this kernel is installed here: its drivers were built in.
    assert!(
        !Path::new("/lib/modules").join(&release).exists(),
        "/lib/modules/{release} exists"
    );
    assert!(
        Path::new(&boot.kernel).starts_with(&cache),
        "{}",
        boot.kernel
    );
    // Four CPUs (ACPI lists them), SMT control, the config in the guest.
    assert_eq!(environment.cpus_online.as_deref(), Some("0-3"));
    assert_eq!(environment.smt.as_deref(), Some("on"));
    assert_eq!(
        environment.kernel_config_sha256.as_deref(),
        Some(build.config_sha256.as_str()),
        "the guest's /proc/config.gz is the built config"
    );
    assert!(build.compiler.starts_with("gcc"), "{}", build.compiler);
    let samples = store.samples(first).unwrap();
    assert!(samples.iter().all(|sample| sample.is_data()));

    // Again: the spec key finds the kernel; nothing is built.
    let (_, progress) = run();
    assert!(
        progress.contains("kernel for (all): found in the cache:"),
        "{progress}"
    );
    assert!(!progress.contains("building "), "{progress}");
    let second = store.latest_run().unwrap().unwrap().id;
    let records: Vec<verdict_model::KernelBuildRecord> = serde_json::from_value(
        store
            .annotations(second)
            .unwrap()
            .remove(verdict_model::kernel_build::KERNEL_BUILDS_ANNOTATION)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(records[0].status, verdict_model::KernelBuildStatus::Cached);
    assert_eq!(records[0].build.as_ref().unwrap().key, build.key);

    // The two runs' booted kernels have one config: nothing differs.
    let output = common::verdict(directory.path())
        .args([
            "compare",
            &first.to_string(),
            &second.to_string(),
            "--config-diff",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        text.contains(&format!("run {first} boot 0 (all)")),
        "{text}"
    );
    assert!(text.contains("(no differences)"), "{text}");
}
