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
//! `[target] boot.power_cycle` against a real hang: level 2's first kexec
//! boot loads an initrd that is not an archive (the "marker", in the
//! share), so its kernel finds no root and, with `panic=0`, halts with
//! sshd never started. After the boot timeout verdict runs the power cycle
//! on the controller: a script of the test that puts the working initrd in
//! the marker's place and resets the guest through QEMU's monitor (FIFOs,
//! `VmOptions::monitor`), as a BMC's power cycle would. The guest comes
//! back in QEMU's own kernel and command line, so that boot is not proven
//! (no nonce, not level 2's options): a failed boot, recorded with the
//! booter's step log, no sample in it; the retry (`boot_retries = 1`)
//! kexecs level 2 again and is proven.
//!
//! One guest for the whole file; the boots are few (four kexecs, a reset
//! and a reboot) because TCG boots are CPU-bound.

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

/// The test's power cycle, run by verdict on the controller with the
/// share, the monitor's FIFO path, a log file and the host name as its
/// arguments: level 2's initrd becomes the working one (the hang's marker
/// is gone), then QEMU resets the guest.
const POWER_CYCLE: &str = r#"set -eu
ln -f "$1/initrd.cpio" "$1/level2.cpio"
echo "power-cycled $4" >> "$3"
printf 'system_reset\n' > "$2.in"
"#;

/// How long verdict waits for a boot before the power cycle (and again
/// after it): on this 2-CPU machine at a load about 9 the slowest boot
/// answered 63 s after its trigger (docs/targets.md), so 150 s keeps a slow
/// legitimate boot from being taken for a hang while the hang costs at
/// most 150 s of the test.
const BOOT_TIMEOUT: &str = "150s";

#[test]
fn levels_on_an_ssh_host_are_entered_by_kexec_and_by_a_hook_each_proven() {
    let Some((kernel, kexec)) = requirements() else {
        return;
    };
    let started = Instant::now();
    let share = tempfile::tempdir().unwrap();
    std::fs::copy(&kernel, share.path().join("vmlinuz")).unwrap();
    // Level 2's first boot hangs: its initrd is not an archive.
    std::fs::write(
        share.path().join("level2.cpio"),
        "not an initramfs: level 2's first boot halts here\n",
    )
    .unwrap();
    let control = tempfile::tempdir().unwrap();
    let monitor = control.path().join("monitor");
    for end in ["monitor.in", "monitor.out"] {
        let status = std::process::Command::new("mkfifo")
            .arg(control.path().join(end))
            .status()
            .unwrap();
        assert!(status.success(), "mkfifo {end}");
    }
    let script = control.path().join("power-cycle.sh");
    std::fs::write(&script, POWER_CYCLE).unwrap();
    let cycles = control.path().join("power-cycles");
    let mut options = VmOptions::new(&kernel, "no_timer_check verdict_level=3");
    options.acceleration = Acceleration::Tcg;
    options.memory = "2G".to_string();
    options.boot_timeout = Duration::from_secs(600);
    options.programs = vec![kexec];
    options.share = Some(share.path().to_path_buf());
    options.reboot = true;
    options.monitor = Some(monitor.clone());
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
    // Level 2 replaces the command line: `panic=0` halts its hanging boot
    // instead of rebooting it.
    let power_cycle = [
        "sh".to_string(),
        script.display().to_string(),
        share.path().display().to_string(),
        monitor.display().to_string(),
        cycles.display().to_string(),
        "{host}".to_string(),
    ];
    let experiment = format!(
        "name = \"kexec-levels\"\ncommand = [\"cat\", \"/proc/cmdline\"]\n\
         [factors.mode]\nlevels = [\n{}{}  {{ value = \"3\", boot = {{ hook = [\"true\", \"{{nonce}}\"], cmdline = \"verdict_level=3\" }} }},\n]\n\
         [[metrics]]\nname = \"level\"\nsource = \"regex\"\npattern = 'verdict_level=(\\d+)'\ndirection = \"higher\"\n\
         [sampling]\niterations = 2\nwarmups = 0\nseed = 5\nboot_retries = 1\ntimeout = \"120s\"\n\
         [target]\nboot = {{ kernel = \"/mnt/verdict/vmlinuz\", initrd = \"/mnt/verdict/initrd.cpio\", cmdline = \"console=ttyS0 panic=-1 no_timer_check\", timeout = \"{BOOT_TIMEOUT}\", power_cycle = {power_cycle:?} }}\n",
        level("1", "cmdline = \"verdict_level=1\""),
        level(
            "2",
            "cmdline = \"console=ttyS0 panic=0 no_timer_check verdict_level=2\", cmdline_mode = \"replace\", initrd = \"/mnt/verdict/level2.cpio\""
        ),
    );
    std::fs::write(directory.path().join("e.toml"), experiment).unwrap();
    let output = common::verdict(directory.path())
        .args(["run", "e.toml", "--host", "verdict-vm", "--ssh-config"])
        .arg(vm.ssh_config())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    eprintln!("{stderr}\n{stdout}");
    assert!(output.status.success(), "{stdout}\n{stderr}");

    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    assert_eq!(store.run(RunId(1)).unwrap().host, "verdict-vm");
    let boots = store.boots(RunId(1)).unwrap();
    assert_eq!(boots.len(), 4, "{boots:?}");
    let samples = store.samples(RunId(1)).unwrap();

    // Level 2's first boot hung; the power cycle ran once, after the
    // timeout, and its boot is recorded as failed with the step log.
    let failed: Vec<_> = boots
        .iter()
        .filter(|boot| boot.status == verdict_model::BootStatus::Failed)
        .collect();
    assert_eq!(failed.len(), 1, "{boots:?}");
    let hung = failed[0];
    assert_eq!(
        (hung.level_key.as_str(), hung.attempt),
        ("mode=2", 0),
        "{hung:?}"
    );
    let log = hung.console_tail.clone().unwrap_or_default();
    eprintln!("the hung boot's step log:\n{log}");
    let waited: u64 = log
        .lines()
        .find_map(|line| line.split_once("s: no new boot ("))
        .map(|(seconds, _)| seconds.parse().unwrap())
        .unwrap_or_else(|| panic!("no power cycle in the step log:\n{log}"));
    assert!(waited >= 150, "power cycled after {waited}s:\n{log}");
    assert!(log.contains("power_cycle on the controller"), "{log}");
    assert!(log.contains("power_cycle: exit status 0"), "{log}");
    assert_eq!(
        std::fs::read_to_string(&cycles).unwrap(),
        "power-cycled verdict-vm\n"
    );
    // It came back in QEMU's own kernel and command line: not proven.
    let message = hung.message.clone().unwrap_or_default();
    assert!(message.contains("verdict.boot="), "{message}");
    assert!(message.contains("verdict_level=2"), "{message}");
    // No sample of the failed boot: none started while it was under way.
    let (from, to) = (hung.started_at_ms, hung.finished_at_ms.unwrap());
    assert!(
        samples
            .iter()
            .all(|sample| !(from..=to).contains(&sample.started_at_ms)),
        "{samples:?}"
    );
    // The retry of the same slot entered level 2, proven.
    let retry = boots
        .iter()
        .find(|boot| boot.slot == hung.slot && boot.attempt == 1)
        .unwrap_or_else(|| panic!("no retry: {boots:?}"));
    assert_eq!(
        retry.status,
        verdict_model::BootStatus::Complete,
        "{retry:?}"
    );
    assert_eq!(retry.first_sequence, hung.first_sequence);
    assert!(stderr.contains("trying boot slot"), "{stderr}");

    let mut boot_ids = vec![first_boot_id];
    assert_eq!(hung.environment, None, "{hung:?}");
    for boot in boots
        .iter()
        .filter(|boot| boot.status != verdict_model::BootStatus::Failed)
    {
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
        assert_eq!(boot.status, verdict_model::BootStatus::Complete, "{boot:?}");
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
    // The report shows each level's booted environment (one boot each, so
    // nothing differs) and the failed boot with its step log.
    let release = verdict_exec::kernel_release(&kernel).unwrap();
    for level in ["mode=1", "mode=2", "mode=3"] {
        assert!(stdout.contains(&format!("  {level} (boot ")), "{stdout}");
    }
    assert!(
        stdout.contains(&format!("    kernel release: {release}\n")),
        "{stdout}"
    );
    assert!(
        stdout.contains("    command line: console=ttyS0 panic=0 no_timer_check verdict_level=2\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("DIFFERS"), "{stdout}");
    assert!(
        stdout.contains(&format!("boot {} mode=2: ", hung.id)),
        "{stdout}"
    );
    assert!(stdout.contains("power_cycle: exit status 0"), "{stdout}");

    // Every sample was measured in a boot of its own level, and read that
    // boot's command line (the metric): tagged right.
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
