//! Kernels as a factor with real QEMU (TCG, the host's Debian kernel):
//! `verdict run` of an experiment with `[target] vm` and boot levels boots
//! the VM per boot slot, proves and verifies each boot before measuring,
//! stores boots and samples, and reports per-level results with the
//! boot-to-boot spread; a level whose command line is not what its verify
//! expects is refused as a failed boot (no samples); a kernel that panics
//! is a failed boot with its console tail, the run stopping (exit 1) or
//! skipping per policy; a controller killed with SIGKILL during a boot is
//! resumed with no lost or doubled samples.
//!
//! The tests take turns (one VM at a time): TCG boots are CPU-bound.

use std::path::Path;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use verdict_model::RunId;
use verdict_store::{SqliteStore, Store};

mod common;

use common::vm::debian_kernel;

static ONE_VM_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The VM of every test: TCG, and `no_timer_check`, without which an
/// overloaded host makes some TCG boots panic in the kernel's IO-APIC
/// timer check ("IO-APIC + timer doesn't work!").
fn vm_line(kernel: &Path, extra: &str) -> String {
    format!(
        "[target]\nvm = {{ kernel = \"{}\", cmdline = \"no_timer_check\", cpus = 2, memory = \"1G\", accel = \"tcg\", boot_timeout = \"400s\"{extra} }}\n",
        kernel.display()
    )
}

fn preempt_level(value: &str, cmdline: &str, shows: &str) -> String {
    format!(
        "  {{ value = \"{value}\", boot = {{ cmdline = \"{cmdline}\" }}, verify = {{ command = [\"cat\", \"/sys/kernel/debug/sched/preempt\"], matches = '\\({shows}\\)' }} }},\n"
    )
}

fn store(directory: &Path) -> SqliteStore {
    SqliteStore::open(directory.join("v.db")).unwrap()
}

#[test]
fn preempt_levels_boot_in_a_balanced_order_verified_and_compared_boot_by_boot() {
    let Some(kernel) = debian_kernel() else {
        return;
    };
    let Some(stress_ng) = verdict_testkit::require_program("stress-ng", "stress-ng") else {
        return;
    };
    let _turn = ONE_VM_AT_A_TIME
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    let directory = tempfile::tempdir().unwrap();
    // The second level boots another kernel: Debian's image copied beside
    // a config that differs (CONFIG_HZ), as a kernel built with another
    // config would; the guest has no config of its own, so each boot's
    // is read beside its image on this machine.
    let release = kernel_release(&kernel).expect("a vmlinuz-RELEASE image");
    let kernels = directory.path().join("kernels");
    std::fs::create_dir_all(&kernels).unwrap();
    let copy = kernels.join(format!("vmlinuz-{release}"));
    std::fs::copy(&kernel, &copy).unwrap();
    let config = std::fs::read_to_string(format!("/boot/config-{release}"))
        .expect("Debian's /boot/config-RELEASE beside the image (linux-image-amd64)");
    assert!(
        config.contains("\nCONFIG_HZ=250\n"),
        "Debian's config sets HZ=250"
    );
    std::fs::write(
        kernels.join(format!("config-{release}")),
        config.replace("\nCONFIG_HZ=250\n", "\nCONFIG_HZ=1000\n"),
    )
    .unwrap();
    let full_level = format!(
        "  {{ value = \"full\", boot = {{ cmdline = \"preempt=full\", kernel = \"{}\" }}, verify = {{ command = [\"cat\", \"/sys/kernel/debug/sched/preempt\"], matches = '\\(full\\)' }} }},\n",
        copy.display()
    );
    let experiment = format!(
        "name = \"preempt-test\"\ncommand = [\"{}\", \"--switch\", \"1\", \"--switch-ops\", \"500\", \"--metrics-brief\"]\n\
         [factors.preempt]\nbaseline = \"none\"\nlevels = [\n{}{}{}]\n\
         [[metrics]]\nname = \"bogo-ops/s\"\nsource = \"stress-ng\"\nstressor = \"switch\"\n\
         [sampling]\nboots = 2\niterations = 2\ntimeout = \"120s\"\nseed = 11\n{}",
        stress_ng.display(),
        preempt_level("none", "preempt=none", "none"),
        full_level,
        "",
        vm_line(
            &kernel,
            &format!(", programs = [\"{}\"]", stress_ng.display())
        )
    );
    std::fs::write(directory.path().join("e.toml"), experiment).unwrap();
    let output = common::verdict(directory.path())
        .args(["run", "e.toml"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stdout}\n{stderr}");

    let store = store(directory.path());
    let boots = store.boots(RunId(1)).unwrap();
    // A boot may fail on an overloaded machine and be tried again (once,
    // by default); the 4 slots are each measured in one proven boot.
    let proven: Vec<_> = boots
        .iter()
        .filter(|boot| boot.status != verdict_model::BootStatus::Failed)
        .collect();
    assert_eq!(proven.len(), 4, "{boots:?}");
    // Balanced: each round boots each level once.
    for round in proven.chunks(2) {
        let mut keys: Vec<&str> = round.iter().map(|boot| boot.level_key.as_str()).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["preempt=full", "preempt=none"], "{boots:?}");
    }
    let mut boot_ids = Vec::new();
    for boot in &proven {
        // Proven: the nonce, the level's option, a new boot id, and the
        // accelerator that ran.
        assert_eq!(boot.status, verdict_model::BootStatus::Complete, "{boot:?}");
        assert_eq!(boot.nonce.as_deref().map(str::len), Some(32));
        assert!(boot.command_line.contains(&boot.level_key[8..]));
        assert_eq!(
            boot.kernel_release.as_deref(),
            kernel_release(&kernel).as_deref()
        );
        assert_eq!(boot.accelerator.as_deref(), Some("tcg"));
        boot_ids.push(boot.boot_id.clone().unwrap());
    }
    boot_ids.sort();
    boot_ids.dedup();
    assert_eq!(boot_ids.len(), 4);
    // Samples: 2 per proven boot, each in a boot of its own level.
    let samples = store.samples(RunId(1)).unwrap();
    assert_eq!(samples.len(), 8);
    let cells = ["none", "full"];
    for sample in &samples {
        let boot = verdict_store::BootRow::of_sample(&boots, sample.sequence).unwrap();
        let boot = &boots[boot as usize];
        assert_eq!(boot.status, verdict_model::BootStatus::Complete);
        assert_eq!(boot.level_key, format!("preempt={}", cells[sample.cell]));
        assert!(sample.is_data(), "{sample:?}");
    }
    // The report: per-level results, the boots with their spread, the
    // accelerator, boot-level comparisons on per-boot medians.
    assert!(stdout.contains("accelerator: tcg"), "{stdout}");
    assert!(stdout.contains("boots: 4 proven (tcg)"), "{stdout}");
    assert!(stdout.contains("between-boot CV"), "{stdout}");
    assert!(
        stdout.contains("preempt=full vs none (per-boot medians)"),
        "{stdout}"
    );
    for level in ["preempt=none", "preempt=full"] {
        let row = stdout
            .lines()
            .find(|line| line.starts_with(level) && line.split_whitespace().nth(1) == Some("2"))
            .unwrap_or_else(|| panic!("no spread row with 2 boots for {level}:\n{stdout}"));
        assert!(row.contains(".."), "{row}");
    }
    assert!(stderr.contains("verified preempt=full"), "{stderr}");
    assert!(stderr.contains("verified preempt=none"), "{stderr}");

    // Each proven boot recorded its guest's config: the one beside the
    // image it booted, on this machine, with the guest's CPU and compiler.
    for boot in &proven {
        let environment = boot.environment.as_ref().expect("the guest's environment");
        let expected = if boot.level_key == "preempt=full" {
            format!("controller:{}/config-{release}", kernels.display())
        } else {
            format!("controller:/boot/config-{release}")
        };
        assert_eq!(
            environment.kernel_config_source.as_deref(),
            Some(expected.as_str()),
            "{boot:?}"
        );
        assert!(environment.kernel_compiler.is_some(), "{environment:?}");
        assert!(environment.cpu_identity.is_some(), "{environment:?}");
    }
    // The report leads with the guests and labels the controller.
    assert!(stdout.contains("guest preempt=none"), "{stdout}");
    assert!(stdout.contains("controller host:"), "{stdout}");
    // The two boot levels' kernels differ in their config: compare says how.
    let output = common::verdict(directory.path())
        .args([
            "compare",
            "1:preempt=none",
            "1:preempt=full",
            "--config-diff",
        ])
        .output()
        .unwrap();
    let compared = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{compared}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let hz = compared
        .lines()
        .find(|line| line.contains("HZ") && line.contains("250") && line.contains("1000"))
        .unwrap_or_else(|| panic!("no CONFIG_HZ difference:\n{compared}"));
    assert!(!hz.contains("HZ_"), "{hz}");
    // The email of the VM run fits 80 columns and names each guest's config.
    let email = common::email_report(directory.path());
    assert_eq!(common::line_over(&email, 80), None, "{email}");
    assert!(email.contains("the workload ran in this guest"), "{email}");
    assert!(email.contains(&format!("config-{release}")), "{email}");
    // The HTML page's environment leads with the guests and labels the
    // controller's columns as the controller's.
    let output = common::verdict(directory.path())
        .args(["report", "--format", "html"])
        .output()
        .unwrap();
    let html = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{html}");
    let environment = html
        .split_once("id=\"environment\"")
        .map(|(_, tail)| tail)
        .unwrap_or_else(|| panic!("no environment section:\n{html}"));
    let guest = environment.find("guest preempt=none (boot");
    let controller = environment.find("controller: run 1 start");
    assert!(
        guest.is_some() && controller.is_some() && guest < controller,
        "{environment}"
    );
}

/// `examples/preempt-modes.toml` as shipped (Debian's /vmlinuz, `accel =
/// "auto"`, three modes) but two boots per level of three iterations (the
/// shipped size is for deciding, and takes a quarter of an hour under
/// TCG): every boot proven and verified, the modes booted in balanced
/// random rounds, the report's per-level results, boot spread and
/// boot-unit comparisons, each guest's config recorded per boot.
#[test]
fn the_preempt_modes_example_runs_as_shipped() {
    if debian_kernel().is_none() {
        return;
    }
    if verdict_testkit::require_program("stress-ng", "stress-ng").is_none() {
        return;
    }
    if !Path::new("/vmlinuz").exists() {
        let _: Option<()> = verdict_testkit::missing(
            "/vmlinuz (Debian's kernel symlink)",
            "apt-get install linux-image-amd64",
        );
        return;
    }
    let _turn = ONE_VM_AT_A_TIME
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    let directory = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/preempt-modes.toml");
    let shipped = std::fs::read_to_string(&example).unwrap();
    let boots_line = shipped
        .lines()
        .find(|line| line.starts_with("boots = "))
        .expect("the example sets [sampling] boots");
    let smaller = directory.path().join("preempt-modes.toml");
    std::fs::write(&smaller, shipped.replace(boots_line, "boots = 2")).unwrap();
    let output = common::verdict(directory.path())
        .args(["run", "-n", "3"])
        .arg(&smaller)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let boots = store(directory.path()).boots(RunId(1)).unwrap();
    let proven: Vec<_> = boots
        .iter()
        .filter(|boot| boot.status != verdict_model::BootStatus::Failed)
        .collect();
    assert_eq!(proven.len(), 6, "{boots:?}");
    for round in proven.chunks(3) {
        let mut keys: Vec<&str> = round.iter().map(|boot| boot.level_key.as_str()).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["preempt=full", "preempt=none", "preempt=voluntary"],
            "{boots:?}"
        );
    }
    for mode in ["none", "voluntary", "full"] {
        assert!(
            stderr.contains(&format!("verified preempt={mode}")),
            "{stderr}"
        );
        assert!(
            stdout.contains(&format!("preempt={mode}")),
            "no results for {mode}:\n{stdout}"
        );
    }
    assert!(stdout.contains("boots: 6 proven"), "{stdout}");
    assert!(stdout.contains("Welch t over boots"), "{stdout}");
    assert!(
        stdout.contains("preempt=voluntary vs none (per-boot medians)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("preempt=full vs none (per-boot medians)"),
        "{stdout}"
    );
    // Each guest's config, per boot: /vmlinuz's neighbour on this machine.
    for boot in &proven {
        let source = boot
            .environment
            .as_ref()
            .and_then(|environment| environment.kernel_config_source.clone())
            .unwrap_or_default();
        assert!(source.starts_with("controller:/boot/config-"), "{boot:?}");
    }
    // The example's report by email: within 80 columns, both metrics'
    // verdicts over boots, each guest with its CPU identity and config.
    let email = common::email_report(directory.path());
    assert_eq!(common::line_over(&email, 80), None, "{email}");
    for part in [
        "\n  bogo-ops/s: ",
        "\n  wall [s]: ",
        "n=2 boots",
        "\n  guest preempt=voluntary (boots ",
        "\n    cpu:        ",
        " family ",
        "\n    config:     controller:/boot/config-",
        "\n  verdict run ",
    ] {
        assert!(email.contains(part), "{part:?}:\n{email}");
    }
}

/// `uname -r` of an image named `vmlinuz-RELEASE`.
fn kernel_release(kernel: &Path) -> Option<String> {
    kernel
        .file_name()?
        .to_str()?
        .strip_prefix("vmlinuz-")
        .map(str::to_string)
}

#[test]
fn a_level_whose_command_line_is_not_what_it_claims_is_refused_as_a_failed_boot() {
    let Some(kernel) = debian_kernel() else {
        return;
    };
    let _turn = ONE_VM_AT_A_TIME
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    let directory = tempfile::tempdir().unwrap();
    // `mislabeled` boots preempt=none but claims to be full: its verify
    // cannot match, so its boot is refused, and nothing is measured.
    let experiment = format!(
        "name = \"guard-test\"\ncommand = [\"true\"]\n\
         [factors.preempt]\nlevels = [\n{}]\n\
         [sampling]\niterations = 2\nboot_retries = 0\non_boot_failure = \"skip\"\n{}",
        preempt_level("mislabeled", "preempt=none", "full"),
        vm_line(&kernel, "")
    );
    std::fs::write(directory.path().join("e.toml"), experiment).unwrap();
    let output = common::verdict(directory.path())
        .args(["run", "e.toml"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let store = store(directory.path());
    let boots = store.boots(RunId(1)).unwrap();
    assert_eq!(boots.len(), 1, "{boots:?}");
    let boot = &boots[0];
    assert_eq!(boot.status, verdict_model::BootStatus::Failed, "{boot:?}");
    let message = boot.message.as_deref().unwrap_or("");
    assert!(
        message.contains("verify preempt=mislabeled") && message.contains("(none)"),
        "{message}"
    );
    // The guest was up (the boot itself was proven), with its console.
    assert!(
        boot.console_tail
            .as_deref()
            .unwrap_or("")
            .contains("verdict-vm: sshd started"),
        "{boot:?}"
    );
    assert!(store.samples(RunId(1)).unwrap().is_empty());
    assert!(stdout.contains("1 failed boot(s), never data"), "{stdout}");
    assert!(stdout.contains("did not show"), "{stdout}");
}

#[test]
fn a_kernel_that_panics_stops_the_run_with_exit_1_and_its_console_tail() {
    let Some(kernel) = debian_kernel() else {
        return;
    };
    let _turn = ONE_VM_AT_A_TIME
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    let directory = tempfile::tempdir().unwrap();
    let experiment = format!(
        "name = \"panic-test\"\ncommand = [\"true\"]\n\
         [factors.init]\nlevels = [{{ value = \"missing\", boot = {{ cmdline = \"rdinit=/nonexistent root=/dev/verdict-none\" }} }}]\n\
         [sampling]\niterations = 1\nboot_retries = 1\n{}",
        vm_line(&kernel, "")
    );
    std::fs::write(directory.path().join("e.toml"), experiment).unwrap();
    let output = common::verdict(directory.path())
        .args(["run", "e.toml"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("run 1 stopped"), "{stderr}");
    // Tried twice (boot_retries = 1), both recorded with the console.
    let store = store(directory.path());
    let boots = store.boots(RunId(1)).unwrap();
    assert_eq!(boots.len(), 2, "{boots:?}");
    for boot in &boots {
        assert_eq!(boot.status, verdict_model::BootStatus::Failed);
        assert_eq!(boot.slot, 0);
        let tail = boot.console_tail.as_deref().unwrap_or("");
        assert!(tail.contains("Kernel panic"), "{tail}");
    }
    assert_eq!(boots[1].attempt, 1);
    assert!(store.samples(RunId(1)).unwrap().is_empty());
    assert_eq!(
        store.run(RunId(1)).unwrap().status,
        verdict_model::RunStatus::Failed
    );
    // The report shows the failed boots with their console tails.
    assert!(stdout.contains("2 failed boot(s), never data"), "{stdout}");
    assert!(stdout.contains("console: "), "{stdout}");
    assert!(stdout.contains("Kernel panic"), "{stdout}");
}

#[test]
fn a_controller_killed_during_a_boot_resumes_without_lost_or_doubled_samples() {
    let Some(kernel) = debian_kernel() else {
        return;
    };
    let _turn = ONE_VM_AT_A_TIME
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    let directory = tempfile::tempdir().unwrap();
    let experiment = format!(
        "name = \"resume-test\"\ncommand = [\"cat\", \"/proc/sys/kernel/random/boot_id\"]\n\
         [sampling]\niterations = 3\nwarmups = 1\nseed = 5\n{}",
        vm_line(&kernel, "")
    );
    std::fs::write(directory.path().join("e.toml"), experiment).unwrap();
    let binary = assert_cmd::cargo::cargo_bin("verdict");
    let stderr_path = directory.path().join("stderr.txt");
    let mut child = std::process::Command::new(&binary)
        .args(["run", "e.toml"])
        .current_dir(directory.path())
        .env("VERDICT_DB", directory.path().join("v.db"))
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap();
    // Killed while QEMU boots: after the boot is recorded, before ssh answers.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let text = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        if text.contains("boot 0 (slot 1 of 1") {
            break;
        }
        assert!(Instant::now() < deadline, "no boot started: {text}");
        assert!(child.try_wait().unwrap().is_none(), "verdict ended: {text}");
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(3));
    let pid = child.id();
    assert!(qemu_of(pid), "no QEMU of verdict {pid} is booting");
    child.kill().unwrap();
    child.wait().unwrap();
    let text = std::fs::read_to_string(&stderr_path).unwrap();
    assert!(!text.contains("proven"), "killed too late: {text}");
    {
        let store = store(directory.path());
        let boots = store.boots(RunId(1)).unwrap();
        assert_eq!(boots.len(), 1);
        assert_eq!(boots[0].status, verdict_model::BootStatus::Booting);
        assert!(store.samples(RunId(1)).unwrap().is_empty());
    }
    // QEMU died with its controller (parent-death signal).
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline && qemu_of(pid) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!qemu_of(pid), "QEMU outlived verdict");
    // A killed verdict cannot remove its per-boot directory (keys and an
    // initramfs of ~180 MB): the test does.
    for entry in std::fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(&format!("verdict-vm-{pid}-"))
        {
            std::fs::remove_dir_all(entry.path()).unwrap();
        }
    }

    let output = common::verdict(directory.path())
        .args(["run", "--resume", "1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let store = store(directory.path());
    let boots = store.boots(RunId(1)).unwrap();
    assert_eq!(boots.len(), 2, "{boots:?}");
    assert_eq!(boots[0].status, verdict_model::BootStatus::Interrupted);
    assert_eq!(boots[1].status, verdict_model::BootStatus::Complete);
    assert_eq!(boots[1].slot, 0);
    let samples = store.samples(RunId(1)).unwrap();
    let sequences: Vec<u32> = samples.iter().map(|sample| sample.sequence).collect();
    assert_eq!(sequences, [0, 1, 2, 3]);
    // Every iteration ran in the resumed boot: the guest's boot id.
    let boot_id = boots[1].boot_id.clone().unwrap();
    for sample in &samples {
        assert_eq!(sample.exit_code, Some(0));
        assert_eq!(
            verdict_store::BootRow::of_sample(&boots, sample.sequence),
            Some(1)
        );
    }
    assert_ne!(
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .unwrap()
            .trim(),
        boot_id
    );
    assert_eq!(
        store.run(RunId(1)).unwrap().status,
        verdict_model::RunStatus::Complete
    );
}

/// Whether a QEMU started by verdict process `pid` runs (its per-boot
/// directory is named `verdict-vm-PID-…`).
fn qemu_of(pid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    let marker = format!("verdict-vm-{pid}-");
    entries.flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline")).is_ok_and(|cmdline| {
            let text = String::from_utf8_lossy(&cmdline);
            text.contains("qemu-system") && text.contains(&marker)
        })
    })
}
