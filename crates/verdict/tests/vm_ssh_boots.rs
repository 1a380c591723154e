//! Boot levels on an ssh host, with real QEMU (TCG, the host's Debian
//! kernel): the test boots a guest itself (verdict's initramfs with
//! kexec-tools' `kexec` added, a read-only 9p share holding the kernel and
//! that initramfs, rebooting allowed) and hands it to `verdict run --host`
//! as an ssh host with `[target] boot`. Two levels whose command lines
//! differ are each entered by kexec (`kexec -l` with the nonce, then a
//! detached `kexec -e`), proven by the nonce in /proc/cmdline and a new
//! boot id, and verified; the samples belong to the boots of their
//! levels. A level with a hook (`true`, then a reboot: QEMU boots the same
//! kernel and command line again, so the nonce cannot be on it) is proven
//! by the boot id and options, and the record says no nonce was seen.
//!
//! One guest for the whole file; the boots are few (three kexecs and a
//! reboot) because TCG boots are CPU-bound.

use std::path::PathBuf;
use std::time::{Duration, Instant};
use verdict_exec::{Acceleration, VmOptions, VmTarget};
use verdict_model::RunId;
use verdict_store::{SqliteStore, Store};

mod common;

use common::vm::{agent_binary, debian_kernel};

/// Debian's kernel, the guest's tools and kexec-tools' `kexec`, or the
/// test fails naming the package (unless missing tools are allowed).
fn requirements() -> Option<(PathBuf, PathBuf)> {
    let kernel = debian_kernel()?;
    match ["/usr/sbin/kexec", "/sbin/kexec"]
        .into_iter()
        .map(PathBuf::from)
        .find(|path| path.is_file())
    {
        Some(kexec) => Some((kernel, kexec)),
        None => verdict_testkit::missing("kexec", "apt-get install kexec-tools"),
    }
}

fn level(value: &str, boot: &str) -> String {
    format!(
        "  {{ value = \"{value}\", boot = {{ {boot} }}, verify = {{ command = [\"cat\", \"/proc/cmdline\"], matches = \"verdict_level={value}\" }} }},\n"
    )
}

#[test]
fn levels_on_an_ssh_host_are_entered_by_kexec_and_by_a_hook_each_proven() {
    let Some((kernel, kexec)) = requirements() else {
        return;
    };
    let started = Instant::now();
    let share = tempfile::tempdir().unwrap();
    std::fs::copy(&kernel, share.path().join("vmlinuz")).unwrap();
    let mut options = VmOptions::new(&kernel, "no_timer_check verdict_level=3");
    options.acceleration = Acceleration::Tcg;
    options.memory = "2G".to_string();
    options.boot_timeout = Duration::from_secs(600);
    options.programs = vec![kexec];
    options.share = Some(share.path().to_path_buf());
    options.reboot = true;
    let vm = VmTarget::boot(&options, agent_binary()).unwrap_or_else(|error| panic!("{error}"));
    eprintln!("guest up in {:.0}s", vm.boot_time().as_secs_f64());
    // kexec comes back to the same initramfs (the same host key, sshd and
    // agent), read by the guest from the share.
    std::fs::copy(vm.initramfs(), share.path().join("initrd.cpio")).unwrap();
    let first_boot_id = vm.facts().boot_id.clone();

    let directory = tempfile::tempdir().unwrap();
    // Each boot's command line names its level (`verdict_level=N`), which
    // the workload reads back as the metric: a sample taken in the wrong
    // boot shows it. The hook level reboots into QEMU's own command line,
    // which carries `verdict_level=3` (and a nonce of the test's, not the
    // run's).
    let experiment = format!(
        "name = \"kexec-levels\"\ncommand = [\"cat\", \"/proc/cmdline\"]\n\
         [factors.mode]\nlevels = [\n{}{}  {{ value = \"3\", boot = {{ hook = [\"true\", \"{{nonce}}\"], cmdline = \"verdict_level=3\" }} }},\n]\n\
         [[metrics]]\nname = \"level\"\nsource = \"regex\"\npattern = 'verdict_level=(\\d+)'\ndirection = \"higher\"\n\
         [sampling]\niterations = 2\nwarmups = 0\nseed = 5\nboot_retries = 0\ntimeout = \"120s\"\n\
         [target]\nboot = {{ kernel = \"/mnt/verdict/vmlinuz\", initrd = \"/mnt/verdict/initrd.cpio\", cmdline = \"console=ttyS0 panic=-1 no_timer_check\", timeout = \"600s\" }}\n",
        level("1", "cmdline = \"verdict_level=1\""),
        level("2", "cmdline = \"verdict_level=2\""),
    );
    std::fs::write(directory.path().join("e.toml"), experiment).unwrap();
    let output = common::verdict(directory.path())
        .args(["run", "e.toml", "--host", "verdict-vm", "--ssh-config"])
        .arg(vm.ssh_config())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    eprintln!("{stderr}");
    assert!(output.status.success(), "{stdout}\n{stderr}");

    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    assert_eq!(store.run(RunId(1)).unwrap().host, "verdict-vm");
    let boots = store.boots(RunId(1)).unwrap();
    assert_eq!(boots.len(), 3, "{boots:?}");
    let mut boot_ids = vec![first_boot_id];
    for boot in &boots {
        // The booted machine's own environment, read through the target
        // after the proof and stored with the boot: its command line is
        // this boot's.
        let environment = boot
            .environment
            .clone()
            .expect("a proven boot's environment");
        let cmdline = environment.kernel_cmdline.clone().unwrap_or_default();
        assert!(
            cmdline.contains(&format!(
                "verdict_level={}",
                &boot.level_key["mode=".len()..]
            )),
            "{environment:?}"
        );
        if let Some(nonce) = &boot.nonce {
            assert!(cmdline.contains(nonce.as_str()), "{environment:?}");
        }
        assert!(environment.cpu_model.is_some(), "{environment:?}");
        assert_eq!(environment.cpu_count, Some(2), "{environment:?}");
        assert_eq!(boot.status, "complete", "{boot:?}");
        let id = boot.boot_id.clone().unwrap();
        assert!(
            !boot_ids.contains(&id),
            "boot id {id} seen before: {boots:?}"
        );
        boot_ids.push(id);
        assert_eq!(
            boot.kernel_release.as_deref(),
            Some(verdict_exec::kernel_release(&kernel).unwrap().as_str())
        );
        if boot.level_key == "mode=3" {
            // Rebooted, not kexec'd: QEMU's own command line, no nonce.
            assert_eq!(boot.accelerator.as_deref(), Some("reboot"), "{boot:?}");
            assert_eq!(boot.nonce, None, "{boot:?}");
            assert!(boot.kernel.starts_with("hook: true"), "{boot:?}");
        } else {
            // kexec'd with the nonce and the level's option on the command
            // line the new kernel shows.
            assert_eq!(boot.accelerator.as_deref(), Some("kexec"), "{boot:?}");
            assert_eq!(boot.kernel, "/mnt/verdict/vmlinuz");
            let nonce = boot.nonce.clone().expect("a kexec boot carries its nonce");
            assert_eq!(nonce.len(), 32);
            let level = &boot.level_key["mode=".len()..];
            assert!(
                stderr.contains(&format!("nonce {nonce} in /proc/cmdline")),
                "{stderr}"
            );
            assert!(
                stderr.contains(&format!("verified mode={level}")),
                "{stderr}"
            );
        }
    }
    // Every sample was measured in a boot of its own level, and read that
    // boot's command line (the metric): tagged right.
    let samples = store.samples(RunId(1)).unwrap();
    assert_eq!(samples.len(), 6);
    let cells = store.cells(RunId(1)).unwrap();
    for sample in &samples {
        let boot = verdict_store::BootRow::of_sample(&boots, sample.sequence).unwrap();
        let boot = &boots[boot as usize];
        let (_, cell) = cells
            .iter()
            .find(|(index, _)| *index == sample.cell)
            .unwrap();
        let level = &cell.levels[0].1;
        assert_eq!(boot.level_key, format!("mode={level}"));
        assert!(sample.is_data(), "{sample:?}");
        assert_eq!(
            sample.metrics.get("level").copied(),
            Some(level.parse::<f64>().unwrap()),
            "{sample:?}"
        );
    }
    eprintln!(
        "vm_ssh_boots: {:.0}s in all",
        started.elapsed().as_secs_f64()
    );
    drop(vm);
}

/// `[target] boot` boots one ssh host: without a host, or with two, the run
/// is refused before anything connects, naming what to give.
#[test]
fn a_boot_section_needs_exactly_one_ssh_host() {
    let directory = tempfile::tempdir().unwrap();
    std::fs::write(
        directory.path().join("e.toml"),
        "name = \"t\"\ncommand = [\"true\"]\n[factors.mode]\nlevels = [\n  { value = \"a\", boot = { cmdline = \"quiet\" } },\n]\n\
         [target]\nboot = { kernel = \"/boot/vmlinuz\" }\n",
    )
    .unwrap();
    let output = common::verdict(directory.path())
        .args(["run", "e.toml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("give one with --host"), "{stderr}");
    let output = common::verdict(directory.path())
        .args(["run", "e.toml", "--host", "a", "--host", "b"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("boots one ssh host"), "{stderr}");
    // Nothing was created: no run in the store.
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    assert!(store.latest_run().unwrap().is_none());
}
