//! A QEMU virtual machine as a target, booted by the test itself (TCG, the
//! host's Debian kernel, `preempt=full` on the command line): the initramfs
//! verdict builds from the host's binaries boots, sshd answers with the host
//! key verdict put there (checking on), the agent inside runs a program, the
//! guest's debugfs shows the preemption mode the command line asked for, and
//! the boot proof refuses a nonce, an option, a release or a boot id that do
//! not match. One boot for the whole file: TCG boots take tens of seconds on
//! a loaded machine.

use std::path::Path;
use std::time::Duration;
use verdict_exec::{
    Acceleration, BootExpectation, Cancel, ExecError, Invocation, Status, Target, VmOptions,
    VmTarget,
};

mod common;

use common::vm::{agent_binary as agent, debian_kernel};

#[test]
fn a_booted_vm_runs_the_agent_and_proves_its_boot() {
    let Some(qemu) = verdict_testkit::require_program("qemu-system-x86_64", "qemu-system-x86")
    else {
        return;
    };
    let Some(kernel) = debian_kernel() else {
        return;
    };
    let Some(stress_ng) = verdict_testkit::require_program("stress-ng", "stress-ng") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let mut options = VmOptions::new(&kernel, "preempt=full");
    options.programs = vec![stress_ng.clone()];
    options.qemu = qemu;
    options.acceleration = Acceleration::Tcg;
    options.smp = "sockets=1,cores=2,threads=2".to_string();
    options.cpu = Some("Skylake-Server".to_string());
    options.memory = "1G".to_string();
    options.boot_timeout = Duration::from_secs(400);
    options.work_directory = Some(work.path().to_path_buf());
    let vm = match VmTarget::boot(&options, agent()) {
        Ok(vm) => vm,
        Err(error) => panic!("boot {}: {error}", kernel.display()),
    };

    eprintln!(
        "booted {} with {:?} in {:.1}s",
        kernel.display(),
        vm.acceleration(),
        vm.boot_time().as_secs_f64()
    );

    // Proven: the nonce verdict chose is on the guest's command line, with
    // the level's option, and the release is the image's.
    let facts = vm.facts().clone();
    let nonce = vm.expectation().nonce.clone();
    assert_eq!(nonce.len(), 32, "{nonce}");
    assert!(
        facts
            .command_line
            .split_whitespace()
            .any(|word| word == format!("verdict.boot={nonce}")),
        "{facts:?}"
    );
    assert!(facts.command_line.contains("preempt=full"), "{facts:?}");
    assert_eq!(
        Some(facts.kernel_release.as_str()),
        kernel
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.strip_prefix("vmlinuz-")),
    );

    // A program runs inside the guest through the agent: its hostname is
    // not ours, and its kernel is the image's.
    let outcome = vm
        .run(
            &Invocation::argv(["sh", "-c", "uname -r; cat /proc/sys/kernel/random/boot_id"])
                .with_timeout(Duration::from_secs(60)),
            &Cancel::new(),
        )
        .unwrap();
    assert_eq!(
        outcome.status,
        Status::Exited(0),
        "{}",
        outcome.output_tail(400)
    );
    let stdout = String::from_utf8_lossy(&outcome.stdout).into_owned();
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        vec![facts.kernel_release.as_str(), facts.boot_id.as_str()]
    );
    let host_boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    assert_ne!(host_boot_id.trim(), facts.boot_id);

    // A host program given to the VM runs inside with its libraries.
    let outcome = vm
        .run(
            &Invocation::argv([stress_ng.to_str().unwrap(), "--version"])
                .with_timeout(Duration::from_secs(60)),
            &Cancel::new(),
        )
        .unwrap();
    assert_eq!(
        outcome.status,
        Status::Exited(0),
        "{}",
        outcome.output_tail(400)
    );
    assert!(
        String::from_utf8_lossy(&outcome.stdout).contains("stress-ng"),
        "{}",
        outcome.output_tail(400)
    );

    // The guest's scheduler runs the preemption mode the command line asked.
    let preempt = vm
        .read_file(Path::new("/sys/kernel/debug/sched/preempt"))
        .unwrap();
    let preempt = String::from_utf8_lossy(&preempt).into_owned();
    assert!(preempt.contains("(full)"), "{preempt}");

    // SMT control works in the guest with threads=2.
    let smt = vm
        .read_file(Path::new("/sys/devices/system/cpu/smt/control"))
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&smt).trim(), "on");

    // The same facts against another boot's expectation are refused, each
    // mismatch named, with the console's tail.
    let refuse = |expected: BootExpectation, needle: &str| match vm.check_boot(&expected) {
        Err(ExecError::BootFailed {
            message,
            console_tail,
        }) => {
            assert!(message.contains(needle), "{message}");
            assert!(
                console_tail.contains("verdict-vm: sshd started"),
                "{console_tail}"
            );
        }
        other => panic!("expected a failed boot for {expected:?}, got {other:?}"),
    };
    let good = vm.expectation().clone();
    assert!(vm.check_boot(&good).is_ok());
    refuse(
        BootExpectation {
            nonce: "0".repeat(32),
            ..good.clone()
        },
        &format!("verdict.boot={}", "0".repeat(32)),
    );
    refuse(
        BootExpectation {
            command_line: "preempt=none".into(),
            ..good.clone()
        },
        "option `preempt=none`",
    );
    refuse(
        BootExpectation {
            kernel_release: "6.99.0-other".into(),
            ..good.clone()
        },
        "6.99.0-other",
    );
    // The image's `uname -v` (build number and time) is what the guest
    // shows; another build's is refused.
    assert_eq!(
        good.kernel_version.as_deref(),
        Some(facts.kernel_version.as_str())
    );
    refuse(
        BootExpectation {
            kernel_version: Some("#99 SMP another build".into()),
            ..good.clone()
        },
        "uname -v",
    );
    refuse(
        BootExpectation {
            previous_boot_id: Some(facts.boot_id.clone()),
            ..good
        },
        "did not reboot",
    );

    // Host-key checking is on: the same client with a known_hosts naming
    // another key for the guest is refused by ssh.
    let config = std::fs::read_to_string(vm.ssh_config()).unwrap();
    let other_key = work.path().join("other_key");
    let keygen = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&other_key)
        .status()
        .unwrap();
    assert!(keygen.success());
    let alias = config
        .lines()
        .find_map(|line| line.trim().strip_prefix("HostKeyAlias "))
        .unwrap()
        .to_string();
    let other_public = std::fs::read_to_string(other_key.with_extension("pub")).unwrap();
    let other_known = work.path().join("other_known_hosts");
    let mut words = other_public.split_whitespace();
    std::fs::write(
        &other_known,
        format!(
            "{alias} {} {}\n",
            words.next().unwrap(),
            words.next().unwrap()
        ),
    )
    .unwrap();
    let known_line = config
        .lines()
        .find(|line| line.trim().starts_with("UserKnownHostsFile "))
        .unwrap();
    let other_config = work.path().join("other_ssh_config");
    std::fs::write(
        &other_config,
        config.replace(
            known_line,
            &format!("  UserKnownHostsFile {}", other_known.display()),
        ),
    )
    .unwrap();
    let refused = std::process::Command::new("ssh")
        .arg("-F")
        .arg(&other_config)
        .args(["-o", "BatchMode=yes", "verdict-vm", "true"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
            || stderr.contains("Host key verification failed"),
        "{stderr}"
    );
    for file in [
        "other_key",
        "other_key.pub",
        "other_known_hosts",
        "other_ssh_config",
    ] {
        std::fs::remove_file(work.path().join(file)).unwrap();
    }

    vm.shut_down();
    // Nothing of the boot is left: QEMU stopped, its directory removed.
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0);
}

#[test]
fn a_kernel_that_panics_is_a_failed_boot_with_the_console_tail() {
    let Some(qemu) = verdict_testkit::require_program("qemu-system-x86_64", "qemu-system-x86")
    else {
        return;
    };
    let Some(kernel) = debian_kernel() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    // No init in the initramfs under that name and no root device: the
    // kernel panics, and with -no-reboot QEMU exits.
    let mut options = VmOptions::new(
        &kernel,
        "rdinit=/verdict-missing-init root=/dev/verdict-none",
    );
    options.qemu = qemu;
    options.acceleration = Acceleration::Tcg;
    options.memory = "1G".to_string();
    options.boot_timeout = Duration::from_secs(400);
    options.work_directory = Some(work.path().to_path_buf());
    match VmTarget::boot(&options, agent()) {
        Err(ExecError::BootFailed {
            message,
            console_tail,
        }) => {
            assert!(message.contains("QEMU exited"), "{message}");
            assert!(console_tail.contains("Kernel panic"), "{console_tail}");
        }
        other => panic!("expected a failed boot, got {other:?}"),
    }
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0);
}
