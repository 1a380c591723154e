//! `VmTarget`: a QEMU virtual machine that verdict boots itself with a given
//! kernel and command line, then measures inside over ssh with the same
//! agent as an ssh host ([`SshTarget`]).
//!
//! Per boot, in a fresh private directory: an ed25519 host key and client
//! key (`ssh-keygen`), a minimal initramfs (cpio `newc`, written here) made
//! of the host's own files — busybox (static), OpenSSH's `sshd`, the agent
//! (this verdict executable, placed where [`SshTarget`] looks for it), their
//! shared libraries as the dynamic loader resolves them (`ldd`), the NIC's
//! kernel modules with their dependencies (`modules.dep` of the kernel's
//! release, read from the kernel image) — an `/init` script, the host key and
//! the authorized client key; a client config whose `known_hosts` holds that
//! host key under a per-boot alias, so host-key checking stays on. QEMU runs
//! with user networking (the guest's port 22 forwarded to 127.0.0.1), the
//! serial console written to a file, `-no-reboot` (unless
//! [`VmOptions::reboot`]). Ready means `ssh HOST
//! true` succeeded; then the boot is proven (nonce, options, release,
//! boot_id) before anything is measured, and any mismatch is
//! [`ExecError::BootFailed`] carrying the console's tail.
//!
//! [`VmOptions::share`] (off by default, not reachable from an experiment
//! file) shares one host directory read-only over 9p, mounted at
//! `/mnt/verdict`: how the tests give a guest the kernel and initrd it
//! kexecs into when they treat it as an ssh host. [`VmOptions::monitor`]
//! (likewise) puts QEMU's monitor on two FIFOs, so a test can reset the
//! guest as a power cycle would.
//!
//! Must not: download anything, share a host directory unasked,
//! weaken host-key checking (no `StrictHostKeyChecking=no`), pass a value
//! through a shell, or leave QEMU running after the target is dropped.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::{
    AgentBinary, Cancel, ExecError, Invocation, Outcome, SshOptions, SshTarget, Status,
    SystemExecutor, Target,
};

/// How the guest's CPU is emulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acceleration {
    /// KVM when `/dev/kvm` opens and a KVM boot becomes ready within
    /// [`VmOptions::kvm_probe_timeout`]; otherwise TCG.
    Auto,
    /// Hardware virtualization (`-accel kvm`).
    Kvm,
    /// QEMU's software emulation (`-accel tcg`): slow but works anywhere.
    Tcg,
}

impl Acceleration {
    fn qemu_name(self) -> &'static str {
        match self {
            Self::Kvm => "kvm",
            Self::Tcg | Self::Auto => "tcg",
        }
    }
}

/// What to boot and how.
#[derive(Debug, Clone)]
pub struct VmOptions {
    /// `qemu-system-x86_64` by default.
    pub qemu: PathBuf,
    /// The kernel image (bzImage), e.g. `/boot/vmlinuz-6.1.0-57-amd64`.
    pub kernel: PathBuf,
    /// The level's kernel command line (options verdict checks in the guest).
    pub command_line: String,
    /// `-smp` (e.g. `sockets=1,cores=2,threads=2`).
    pub smp: String,
    /// `-m` (e.g. `1G`); the initramfs (with the agent) lives in this memory.
    pub memory: String,
    /// `-cpu` (e.g. `Skylake-Server`); QEMU's default when `None`.
    pub cpu: Option<String>,
    pub acceleration: Acceleration,
    /// How long a boot may take until `ssh true` succeeds.
    pub boot_timeout: Duration,
    /// With [`Acceleration::Auto`]: how long a KVM boot gets before verdict
    /// falls back to TCG (nested hosts may hang KVM guests).
    pub kvm_probe_timeout: Duration,
    /// The previous boot's `/proc/sys/kernel/random/boot_id`; this boot's
    /// must differ.
    pub previous_boot_id: Option<String>,
    /// Where the per-boot directory is made (the temporary directory by
    /// default).
    pub work_directory: Option<PathBuf>,
    /// Host programs (absolute paths) to put in the guest at the same
    /// paths, with their shared libraries: the workloads beyond busybox.
    pub programs: Vec<PathBuf>,
    /// The kernel's module directory (holding `modules.dep`); by default
    /// `/lib/modules/RELEASE`, RELEASE read from the kernel image. A kernel
    /// built from source can point here at `INSTALL_MOD_PATH/lib/modules/RELEASE`.
    pub modules: Option<PathBuf>,
    /// An initrd of the user's, put before verdict's initramfs in the one
    /// archive QEMU loads (the kernel unpacks both; verdict's `/init` and
    /// files win where both have one).
    pub initrd: Option<PathBuf>,
    /// A host directory the guest sees read-only at `/mnt/verdict` (9p).
    pub share: Option<PathBuf>,
    /// Let the guest reboot (QEMU restarts it with the same kernel, initrd
    /// and command line) instead of QEMU exiting.
    pub reboot: bool,
    /// QEMU's human monitor on the FIFOs `PATH.in` and `PATH.out` (made
    /// by the caller, e.g. with `mkfifo`) instead of none: writing
    /// `system_reset` to `PATH.in` resets the guest as a power cycle
    /// would (how the tests stand in for a BMC). Not reachable from an
    /// experiment file.
    pub monitor: Option<PathBuf>,
}

impl VmOptions {
    /// Defaults for `kernel` with `command_line`: 2 CPUs, 1 GiB, automatic
    /// acceleration, 300 s to boot.
    pub fn new(kernel: impl Into<PathBuf>, command_line: impl Into<String>) -> Self {
        Self {
            qemu: PathBuf::from("qemu-system-x86_64"),
            kernel: kernel.into(),
            command_line: command_line.into(),
            smp: "2".to_string(),
            memory: "1G".to_string(),
            cpu: None,
            acceleration: Acceleration::Auto,
            boot_timeout: Duration::from_secs(300),
            kvm_probe_timeout: Duration::from_secs(60),
            previous_boot_id: None,
            work_directory: None,
            programs: Vec::new(),
            modules: None,
            initrd: None,
            share: None,
            reboot: false,
            monitor: None,
        }
    }
}

/// What the guest showed after it became ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootFacts {
    /// `/proc/cmdline`, trimmed.
    pub command_line: String,
    /// `/proc/sys/kernel/random/boot_id`, trimmed.
    pub boot_id: String,
    /// `uname -r`, trimmed.
    pub kernel_release: String,
    /// `uname -v` (`/proc/sys/kernel/version`), trimmed.
    pub kernel_version: String,
}

/// What a boot must show to count as proven.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootExpectation {
    /// The per-boot nonce; `verdict.boot=NONCE` must be in the command line.
    pub nonce: String,
    /// Every whitespace-separated word must be in the command line.
    pub command_line: String,
    /// The release the kernel image names.
    pub kernel_release: String,
    /// The version (`uname -v`: build number, options and build time) the
    /// kernel image names, when its header holds one: it tells apart two
    /// builds of one release (a tree with and without a patch).
    pub kernel_version: Option<String>,
    /// The previous boot's id, which this boot's must differ from.
    pub previous_boot_id: Option<String>,
}

/// The reasons `facts` do not prove the boot `expected`, empty when they do.
pub fn boot_mismatches(expected: &BootExpectation, facts: &BootFacts) -> Vec<String> {
    mismatches(expected, facts, Proof::Full)
}

/// What a boot proves itself by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Proof {
    /// Nonce, options, release and boot id.
    Full,
    /// A boot arranged by a user's hook: the nonce only if the hook put it
    /// on the command line, and no release known beforehand; options and
    /// boot id as always.
    Hook,
}

/// The whitespace-separated word `verdict.boot=NONCE` is in `command_line`.
pub(crate) fn has_nonce(command_line: &str, nonce: &str) -> bool {
    let wanted = format!("verdict.boot={nonce}");
    command_line.split_whitespace().any(|word| word == wanted)
}

pub(crate) fn mismatches(
    expected: &BootExpectation,
    facts: &BootFacts,
    proof: Proof,
) -> Vec<String> {
    let words: Vec<&str> = facts.command_line.split_whitespace().collect();
    let mut reasons = Vec::new();
    let nonce = format!("verdict.boot={}", expected.nonce);
    if proof == Proof::Full && !words.contains(&nonce.as_str()) {
        reasons.push(format!(
            "the boot nonce `{nonce}` is not in /proc/cmdline (`{}`)",
            facts.command_line
        ));
    }
    for option in expected.command_line.split_whitespace() {
        if !words.contains(&option) {
            reasons.push(format!("the option `{option}` is not in /proc/cmdline"));
        }
    }
    if proof == Proof::Full && facts.kernel_release != expected.kernel_release {
        reasons.push(format!(
            "uname -r is `{}`, the kernel image is `{}`",
            facts.kernel_release, expected.kernel_release
        ));
    }
    if let Some(version) = &expected.kernel_version
        && proof == Proof::Full
        && &facts.kernel_version != version
    {
        reasons.push(format!(
            "uname -v is `{}`, the kernel image's is `{version}` (another build of the release)",
            facts.kernel_version
        ));
    }
    if facts.boot_id.is_empty() {
        reasons.push("the boot id is empty".to_string());
    } else if expected.previous_boot_id.as_deref() == Some(facts.boot_id.as_str()) {
        reasons.push(format!(
            "the boot id {} is the previous boot's (the machine did not reboot)",
            facts.boot_id
        ));
    }
    reasons
}

/// The NIC QEMU emulates and the modules that drive it.
const NIC_MODEL: &str = "virtio-net-pci";
const NIC_MODULES: [&str; 2] = ["virtio_pci", "virtio_net"];
/// The 9p file system over virtio, for [`VmOptions::share`].
const SHARE_MODULES: [&str; 2] = ["9pnet_virtio", "9p"];

/// The guest's `/init`: mounts, the NIC's modules (listed in
/// `/etc/verdict/modules` in load order), QEMU user networking, sshd.
const INIT_SCRIPT: &str = r#"#!/bin/sh
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t debugfs debugfs /sys/kernel/debug
# Programs put at host paths under /tmp stay: kept aside over the mount.
if [ -n "$(ls -A /tmp 2>/dev/null)" ]; then mkdir -p /.verdict-tmp && cp -a /tmp/. /.verdict-tmp/; fi
mount -t tmpfs tmpfs /tmp
if [ -d /.verdict-tmp ]; then cp -a /.verdict-tmp/. /tmp/ && rm -rf /.verdict-tmp; fi
while read -r module; do insmod "/lib/modules/$module" || echo "verdict-vm: insmod $module failed"; done < /etc/verdict/modules
if [ -e /etc/verdict/share ]; then
  mkdir -p /mnt/verdict
  mount -t 9p -o trans=virtio,version=9p2000.L,ro verdict /mnt/verdict || echo "verdict-vm: mount of the share failed"
fi
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
echo "verdict-vm: network up"
/usr/sbin/sshd -e -f /etc/ssh/sshd_config
echo "verdict-vm: sshd started"
# `reboot` (busybox) asks PID 1 with SIGTERM; a wait is interrupted by it.
trap 'echo "verdict-vm: rebooting"; sync; reboot -f' TERM
while true; do sleep 3600 & wait $!; done
"#;

const SSHD_CONFIG: &str = "Port 22\nHostKey /etc/ssh/ssh_host_ed25519_key\n\
AuthorizedKeysFile /etc/ssh/authorized_keys\nPermitRootLogin prohibit-password\n\
PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
StrictModes no\nUseDNS no\nPidFile none\nLogLevel ERROR\n";

/// The ssh alias of the guest in the generated client config.
const ALIAS: &str = "verdict-vm";

/// A booted virtual machine; see the module documentation.
pub struct VmTarget {
    ssh: Option<SshTarget>,
    qemu: Option<Kept>,
    directory: PathBuf,
    facts: BootFacts,
    expectation: BootExpectation,
    acceleration: Acceleration,
    /// From QEMU's start to `ssh true` succeeding.
    boot_time: Duration,
    /// Why KVM was not used with [`Acceleration::Auto`], if it was tried.
    kvm_fallback: Option<String>,
    /// The initramfs QEMU loaded (verdict's, after the user's initrd).
    initramfs: PathBuf,
}

impl VmTarget {
    /// Builds the initramfs, boots the kernel, waits for ssh, connects the
    /// agent and proves the boot. Every failure is an error before anything
    /// is measured; a boot that does not prove itself is
    /// [`ExecError::BootFailed`].
    pub fn boot(options: &VmOptions, agent: AgentBinary) -> Result<Self, ExecError> {
        let image = kernel_image_version(&options.kernel)
            .map_err(|error| target_error(error.to_string()))?;
        if options.command_line.contains('"') {
            return Err(target_error(
                "the kernel command line must not contain `\"` (its options are checked word by word)"
                    .to_string(),
            ));
        }
        let base = options
            .work_directory
            .clone()
            .unwrap_or_else(std::env::temp_dir);
        // Per-boot directories of controllers that died (SIGKILL) hold an
        // initramfs each (the agent inside: about 150 MB).
        sweep_stale_directories(&base);
        let directory = private_directory(&base).map_err(|error| {
            target_error(format!(
                "create a directory under {}: {error}",
                base.display()
            ))
        })?;
        for (what, path) in [("share", &options.share), ("monitor", &options.monitor)] {
            if let Some(path) = path
                .as_ref()
                .filter(|path| path.to_string_lossy().contains(','))
            {
                let _ = std::fs::remove_dir_all(&directory);
                return Err(target_error(format!(
                    "the {what} {} contains a comma, which QEMU's option syntax cannot carry",
                    path.display()
                )));
            }
        }
        if directory.to_string_lossy().contains(',') {
            return Err(target_error(format!(
                "{} contains a comma, which QEMU's option syntax cannot carry",
                directory.display()
            )));
        }
        let result = Self::boot_in(options, agent, &image, &directory);
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&directory);
        }
        result
    }

    fn boot_in(
        options: &VmOptions,
        agent: AgentBinary,
        image: &ImageVersion,
        directory: &Path,
    ) -> Result<Self, ExecError> {
        let kernel_release = image.release.as_str();
        let nonce = hex::encode(random_bytes(16).map_err(target_error)?);
        ssh_keygen(directory, "host_key")?;
        ssh_keygen(directory, "client_key")?;
        let initramfs = prepare_initramfs(options, &agent, kernel_release, directory)?;
        let (port, config) = write_ssh_files(directory, &nonce)?;

        let mut command_line = format!("console=ttyS0 panic=-1 verdict.boot={nonce}");
        if !options.command_line.trim().is_empty() {
            command_line.push(' ');
            command_line.push_str(options.command_line.trim());
        }
        let expectation = BootExpectation {
            nonce,
            command_line: options.command_line.clone(),
            kernel_release: kernel_release.to_string(),
            kernel_version: image.version.clone(),
            previous_boot_id: options.previous_boot_id.clone(),
        };
        let mut attempts = match options.acceleration {
            Acceleration::Auto if kvm_usable() => vec![
                (Acceleration::Kvm, options.kvm_probe_timeout),
                (Acceleration::Tcg, options.boot_timeout),
            ],
            Acceleration::Auto => vec![(Acceleration::Tcg, options.boot_timeout)],
            other => vec![(other, options.boot_timeout)],
        };
        let last = attempts.len() - 1;
        let mut kvm_fallback = None;
        for (index, (acceleration, timeout)) in attempts.drain(..).enumerate() {
            let console = directory.join(format!("console-{}.log", acceleration.qemu_name()));
            let mut qemu = start_qemu(
                options,
                acceleration,
                &initramfs,
                &command_line,
                port,
                &console,
                directory,
            )?;
            let errors_path = directory.join(format!("qemu-{}.err", acceleration.qemu_name()));
            let started = Instant::now();
            match wait_ready(&config, &mut qemu, timeout, &console, &errors_path) {
                Ok(()) => {
                    let mut vm = Self {
                        ssh: None,
                        qemu: Some(qemu),
                        directory: directory.to_path_buf(),
                        facts: BootFacts {
                            command_line: String::new(),
                            boot_id: String::new(),
                            kernel_release: String::new(),
                            kernel_version: String::new(),
                        },
                        expectation,
                        acceleration,
                        boot_time: started.elapsed(),
                        kvm_fallback: kvm_fallback.take(),
                        initramfs: initramfs.clone(),
                    };
                    let ssh_options = SshOptions {
                        config_file: Some(config.clone()),
                        connect_timeout: Duration::from_secs(60),
                        ..SshOptions::default()
                    };
                    let ssh = SshTarget::connect(ALIAS, ssh_options, agent)
                        .map_err(|error| vm.boot_failed(format!("connect the agent: {error}")))?;
                    vm.ssh = Some(ssh);
                    vm.facts = vm.read_facts()?;
                    vm.check_boot(&vm.expectation)?;
                    return Ok(vm);
                }
                Err(error) => {
                    stop(&mut qemu);
                    if index == last {
                        return Err(error);
                    }
                    kvm_fallback = Some(match error {
                        ExecError::BootFailed { message, .. } => message,
                        other => other.to_string(),
                    });
                }
            }
        }
        unreachable!("the last attempt returns")
    }

    /// Reads the boot facts through the agent.
    fn read_facts(&self) -> Result<BootFacts, ExecError> {
        read_boot_facts(self.ssh.as_ref().expect("connected"))
            .map_err(|message| self.boot_failed(format!("{message} in the guest")))
    }

    /// Checks this boot's facts against `expected`: an error naming every
    /// mismatch, with the console's tail, unless they all match.
    pub fn check_boot(&self, expected: &BootExpectation) -> Result<(), ExecError> {
        let reasons = boot_mismatches(expected, &self.facts);
        if reasons.is_empty() {
            Ok(())
        } else {
            Err(self.boot_failed(reasons.join("; ")))
        }
    }

    fn boot_failed(&self, message: String) -> ExecError {
        let console = self
            .directory
            .join(format!("console-{}.log", self.acceleration.qemu_name()));
        ExecError::BootFailed {
            message,
            console_tail: console_tail(&console),
        }
    }

    /// What the guest showed when it became ready.
    pub fn facts(&self) -> &BootFacts {
        &self.facts
    }

    /// What this boot was checked against (its nonce among them).
    pub fn expectation(&self) -> &BootExpectation {
        &self.expectation
    }

    /// From QEMU's start to `ssh true` succeeding.
    pub fn boot_time(&self) -> Duration {
        self.boot_time
    }

    /// Why a KVM boot was abandoned for TCG ([`Acceleration::Auto`] only).
    pub fn kvm_fallback(&self) -> Option<&str> {
        self.kvm_fallback.as_deref()
    }

    /// The acceleration the guest runs with.
    pub fn acceleration(&self) -> Acceleration {
        self.acceleration
    }

    /// The serial console so far (its last 4 KiB).
    pub fn console_tail(&self) -> String {
        let console = self
            .directory
            .join(format!("console-{}.log", self.acceleration.qemu_name()));
        console_tail(&console)
    }

    /// The generated ssh client configuration naming the guest as
    /// `verdict-vm` (its key, its per-boot `known_hosts`), e.g. for
    /// `ssh -F PATH verdict-vm` while the target lives.
    pub fn ssh_config(&self) -> PathBuf {
        self.directory.join("ssh_config")
    }

    /// The initramfs this boot loaded (removed with the target): e.g. for a
    /// guest that kexecs into itself again.
    pub fn initramfs(&self) -> &Path {
        &self.initramfs
    }

    /// The ssh target inside the guest.
    pub fn ssh(&self) -> &SshTarget {
        self.ssh.as_ref().expect("connected")
    }

    /// Stops QEMU and removes the per-boot directory.
    pub fn shut_down(mut self) {
        self.stop_all();
    }

    fn stop_all(&mut self) {
        self.ssh = None;
        if let Some(mut qemu) = self.qemu.take() {
            stop(&mut qemu);
        }
        let _ = std::fs::remove_dir_all(&self.directory);
    }
}

impl Drop for VmTarget {
    fn drop(&mut self) {
        self.stop_all();
    }
}

impl std::fmt::Debug for VmTarget {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("VmTarget")
            .field("facts", &self.facts)
            .field("acceleration", &self.acceleration)
            .finish_non_exhaustive()
    }
}

impl Target for VmTarget {
    fn run(&self, invocation: &Invocation, cancel: &Cancel) -> Result<Outcome, ExecError> {
        self.ssh().run(invocation, cancel)
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.ssh().read_file(path)
    }

    fn list_directory(&self, path: &Path) -> io::Result<Vec<String>> {
        self.ssh().list_directory(path)
    }

    fn now_unix_ms(&self) -> i64 {
        self.ssh().now_unix_ms()
    }

    fn target_name(&self) -> &str {
        self.ssh().target_name()
    }
}

/// A new ed25519 key pair `directory/name` (and `name.pub`) for one boot.
fn ssh_keygen(directory: &Path, name: &str) -> Result<(), ExecError> {
    let path = directory.join(name);
    let outcome = SystemExecutor.run(
        &Invocation::argv([
            "ssh-keygen",
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            "verdict-vm",
            "-f",
            &path.to_string_lossy(),
        ])
        .with_timeout(Duration::from_secs(30)),
        &Cancel::new(),
    )?;
    if outcome.status != Status::Exited(0) {
        return Err(target_error(format!(
            "ssh-keygen -f {}: {}: {}",
            path.display(),
            outcome.status,
            outcome.output_tail(400).trim()
        )));
    }
    Ok(())
}

/// verdict's initramfs for one boot (the agent, the kernel's modules, the
/// programs asked for), after the user's initrd when there is one.
fn prepare_initramfs(
    options: &VmOptions,
    agent: &AgentBinary,
    kernel_release: &str,
    directory: &Path,
) -> Result<PathBuf, ExecError> {
    let initramfs = directory.join("initramfs.cpio");
    let modules_root = options
        .modules
        .clone()
        .unwrap_or_else(|| PathBuf::from("/lib/modules").join(kernel_release));
    build_initramfs(
        &initramfs,
        directory,
        agent,
        &modules_root,
        &options.programs,
        options.share.is_some(),
    )?;
    match &options.initrd {
        None => Ok(initramfs),
        Some(user) => {
            let combined = directory.join("initrd-combined.cpio");
            prepend_initrd(user, &initramfs, &combined).map_err(|error| {
                target_error(format!(
                    "put the initrd {} before verdict's initramfs: {error}",
                    user.display()
                ))
            })?;
            Ok(combined)
        }
    }
}

/// The ssh client files of one boot: `known_hosts` with the guest's key
/// under an alias that names the nonce, and an `ssh_config` for a free
/// local port; the port and the config's path.
fn write_ssh_files(directory: &Path, nonce: &str) -> Result<(u16, PathBuf), ExecError> {
    let port = free_port().map_err(|error| target_error(format!("find a free port: {error}")))?;
    let host_public = read_public_key(&directory.join("host_key.pub"))?;
    std::fs::write(
        directory.join("known_hosts"),
        format!("{ALIAS}-{nonce} {host_public}\n"),
    )
    .map_err(|error| target_error(format!("write known_hosts: {error}")))?;
    let config = directory.join("ssh_config");
    write_private(
        &config,
        &format!(
            "Host {ALIAS}\n  HostName 127.0.0.1\n  Port {port}\n  User root\n  IdentityFile {}\n  \
             IdentitiesOnly yes\n  UserKnownHostsFile {}\n  GlobalKnownHostsFile /dev/null\n  \
             StrictHostKeyChecking yes\n  HostKeyAlias {ALIAS}-{nonce}\n  LogLevel ERROR\n",
            directory.join("client_key").display(),
            directory.join("known_hosts").display()
        ),
    )
    .map_err(|error| target_error(format!("write {}: {error}", config.display())))?;
    Ok((port, config))
}

/// `/proc/cmdline`, the boot id and `uname -r` of a booted machine, read
/// through its agent; the error names what could not be read.
pub(crate) fn read_boot_facts(target: &dyn Target) -> Result<BootFacts, String> {
    let read = |path: &str| -> Result<String, String> {
        target
            .read_file(Path::new(path))
            .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_string())
            .map_err(|error| format!("read {path}: {error}"))
    };
    let command_line = read("/proc/cmdline")?;
    let boot_id = read("/proc/sys/kernel/random/boot_id")?;
    let kernel_version = read("/proc/sys/kernel/version")?;
    let outcome = target
        .run(
            &Invocation::argv(["uname", "-r"]).with_timeout(Duration::from_secs(60)),
            &Cancel::new(),
        )
        .map_err(|error| format!("uname -r: {error}"))?;
    if outcome.status != Status::Exited(0) {
        return Err(format!("uname -r: {}", outcome.status));
    }
    Ok(BootFacts {
        command_line,
        boot_id,
        kernel_release: String::from_utf8_lossy(&outcome.stdout).trim().to_string(),
        kernel_version,
    })
}

fn target_error(message: String) -> ExecError {
    ExecError::Target {
        host: ALIAS.to_string(),
        message,
    }
}

/// The last 4 KiB of the console log, lossily decoded.
fn console_tail(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_default();
    let start = bytes.len().saturating_sub(4096);
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

/// The release a bzImage names (`6.1.0-57-amd64`): the Linux boot protocol
/// puts a pointer to the version string at offset 0x20E (relative to 0x200).
pub fn kernel_release(kernel: &Path) -> Result<String, ImageError> {
    kernel_image_version(kernel).map(|image| image.release)
}

/// Why a kernel image names no release: it cannot be read, or it is not
/// a bzImage. Messages name the file.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("read {}: {source}", .path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error("{} is not a bzImage kernel (no HdrS header)", .path.display())]
    NotBzImage { path: PathBuf },
}

/// What a bzImage's header says it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageVersion {
    /// `uname -r` of the kernel (`6.1.0-57-amd64`).
    pub release: String,
    /// `uname -v` (`#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-11-26)`),
    /// when the header's string has the usual `RELEASE (USER@HOST)
    /// VERSION` shape.
    pub version: Option<String>,
}

/// The release and version a bzImage names (the setup header's string is
/// `UTS_RELEASE (BUILDER@HOST) UTS_VERSION`).
pub fn kernel_image_version(kernel: &Path) -> Result<ImageVersion, ImageError> {
    let bytes = std::fs::read(kernel).map_err(|source| ImageError::Read {
        path: kernel.to_path_buf(),
        source,
    })?;
    let release = kernel_release_in(&bytes, kernel)?;
    let version = header_string(&bytes).and_then(|text| uts_version(&text, &release));
    Ok(ImageVersion { release, version })
}

/// The version string the setup header points at.
fn header_string(bytes: &[u8]) -> Option<String> {
    if bytes.get(0x202..0x206) != Some(b"HdrS".as_slice()) {
        return None;
    }
    let offset = u16::from_le_bytes([*bytes.get(0x20E)?, *bytes.get(0x20F)?]) as usize + 0x200;
    let text = bytes.get(offset..)?;
    let end = text.iter().position(|&byte| byte == 0)?;
    Some(String::from_utf8_lossy(&text[..end]).into_owned())
}

/// `UTS_VERSION` from `RELEASE (BUILDER@HOST) UTS_VERSION`.
fn uts_version(text: &str, release: &str) -> Option<String> {
    let rest = text.strip_prefix(release)?.strip_prefix(" (")?;
    let mut depth = 1usize;
    for (index, character) in rest.char_indices() {
        match character {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    let version = rest[index + 1..].trim();
                    return (!version.is_empty()).then(|| version.to_string());
                }
            }
            _ => {}
        }
    }
    None
}

/// The release named by `bytes`, the start of the bzImage `kernel` (its
/// first 64 KiB hold the setup header and the version string).
pub(crate) fn kernel_release_in(bytes: &[u8], kernel: &Path) -> Result<String, ImageError> {
    let not_bzimage = || ImageError::NotBzImage {
        path: kernel.to_path_buf(),
    };
    if bytes.get(0x202..0x206) != Some(b"HdrS".as_slice()) {
        return Err(not_bzimage());
    }
    let offset = u16::from_le_bytes([bytes[0x20E], bytes[0x20F]]) as usize + 0x200;
    let text = bytes.get(offset..).ok_or_else(not_bzimage)?;
    let end = text.iter().position(|&byte| byte == 0).unwrap_or(0);
    let version = String::from_utf8_lossy(&text[..end]);
    version
        .split_whitespace()
        .next()
        .map(str::to_string)
        .ok_or_else(not_bzimage)
}

pub(crate) fn random_bytes(count: usize) -> Result<Vec<u8>, String> {
    let mut bytes = vec![0u8; count];
    File::open("/dev/urandom")
        .and_then(|mut file| file.read_exact(&mut bytes))
        .map_err(|error| format!("read /dev/urandom: {error}"))?;
    Ok(bytes)
}

fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn read_public_key(path: &Path) -> Result<String, ExecError> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| target_error(format!("read {}: {error}", path.display())))?;
    Ok(text
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" "))
}

fn write_private(path: &Path, text: &str) -> io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(text.as_bytes())
}

/// Removes the per-boot directories under `base` (`verdict-vm-PID-…`,
/// this user's) whose controller process PID no longer exists; the removed
/// ones. A directory whose PID lives (this process, another verdict, or an
/// unrelated process that reused the number) is kept.
pub(crate) fn sweep_stale_directories(base: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix("verdict-vm-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<libc::pid_t>().ok())
            .filter(|&pid| pid > 0)
        else {
            continue;
        };
        let Ok(metadata) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if !metadata.is_dir() || metadata.uid() != uid {
            continue;
        }
        // SAFETY: signal 0 only checks that the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0
            || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH);
        if !alive && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed.push(entry.path());
        }
    }
    removed
}

fn private_directory(base: &Path) -> io::Result<PathBuf> {
    let mut attempt = 0u32;
    loop {
        let candidate = base.join(format!(
            "verdict-vm-{}-{}-{attempt}",
            std::process::id(),
            crate::local::now_unix_ms()
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1;
            }
            Err(error) => return Err(error),
        }
    }
}

/// Whether `/dev/kvm` can be opened for reading and writing.
fn kvm_usable() -> bool {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_ok()
}

fn start_qemu(
    options: &VmOptions,
    acceleration: Acceleration,
    initramfs: &Path,
    command_line: &str,
    port: u16,
    console: &Path,
    directory: &Path,
) -> Result<Kept, ExecError> {
    let mut argv: Vec<String> = vec![
        "-accel".into(),
        acceleration.qemu_name().into(),
        "-smp".into(),
        options.smp.clone(),
        "-m".into(),
        options.memory.clone(),
        "-kernel".into(),
        options.kernel.to_string_lossy().into_owned(),
        "-initrd".into(),
        initramfs.to_string_lossy().into_owned(),
        "-append".into(),
        command_line.to_string(),
        "-display".into(),
        "none".into(),
        "-monitor".into(),
        match &options.monitor {
            Some(monitor) => format!("pipe:{}", monitor.display()),
            None => "none".into(),
        },
        "-serial".into(),
        format!("file:{}", console.display()),
        "-nic".into(),
        format!("user,model={NIC_MODEL},hostfwd=tcp:127.0.0.1:{port}-:22"),
    ];
    if !options.reboot {
        argv.push("-no-reboot".into());
    }
    if let Some(share) = &options.share {
        argv.extend([
            "-virtfs".to_string(),
            format!(
                "local,path={},mount_tag=verdict,security_model=none,readonly=on",
                share.display()
            ),
        ]);
    }
    if let Some(cpu) = &options.cpu {
        argv.extend(["-cpu".to_string(), cpu.clone()]);
    }
    let errors_path = directory.join(format!("qemu-{}.err", acceleration.qemu_name()));
    let errors = File::create(&errors_path)
        .map_err(|error| target_error(format!("create {}: {error}", errors_path.display())))?;
    Kept::spawn(&options.qemu, argv, errors).map_err(|source| ExecError::Spawn {
        program: options.qemu.to_string_lossy().into_owned(),
        source,
    })
}

fn stop(qemu: &mut Kept) {
    qemu.stop();
}

/// A child (QEMU) started by a thread of its own that lives exactly as long
/// as this handle: the child is started with `PR_SET_PDEATHSIG(SIGKILL)`,
/// which the kernel delivers when the thread that forked it ends. So QEMU
/// dies with verdict even when verdict is killed with SIGKILL (no VM keeps
/// running unseen, holding CPUs), and a keeper thread owned by the handle
/// cannot end early the way a caller's thread could.
#[derive(Debug)]
struct Kept {
    child: Child,
    keeper: Option<(mpsc::Sender<()>, std::thread::JoinHandle<()>)>,
}

impl Kept {
    fn spawn(program: &Path, argv: Vec<String>, errors: File) -> io::Result<Self> {
        let (result_sender, result_receiver) = mpsc::channel();
        let (stop_sender, stop_receiver) = mpsc::channel::<()>();
        let program = program.to_path_buf();
        let parent = std::process::id();
        let thread = std::thread::Builder::new()
            .name("verdict-vm-keeper".to_string())
            .spawn(move || {
                let mut command = Command::new(&program);
                command
                    .args(&argv)
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::from(errors))
                    .process_group(0);
                // SAFETY: the closure runs in the forked child before exec
                // and only makes the async-signal-safe calls prctl and
                // getppid; it allocates nothing.
                unsafe {
                    command.pre_exec(move || {
                        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                            return Err(io::Error::last_os_error());
                        }
                        // verdict died between fork and prctl: no signal
                        // would ever come.
                        if u32::try_from(libc::getppid()).ok() != Some(parent) {
                            return Err(io::Error::from_raw_os_error(libc::ESRCH));
                        }
                        Ok(())
                    });
                }
                let _ = result_sender.send(command.spawn());
                let _ = stop_receiver.recv();
            })?;
        match result_receiver.recv() {
            Ok(Ok(child)) => Ok(Self {
                child,
                keeper: Some((stop_sender, thread)),
            }),
            Ok(Err(error)) => {
                drop(stop_sender);
                let _ = thread.join();
                Err(error)
            }
            Err(_) => Err(io::Error::other("the thread starting the child ended")),
        }
    }

    fn try_wait(&mut self) -> io::Result<Option<std::process::ExitStatus>> {
        self.child.try_wait()
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.release_keeper();
    }

    fn release_keeper(&mut self) {
        if let Some((stop_sender, thread)) = self.keeper.take() {
            drop(stop_sender);
            let _ = thread.join();
        }
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Waits until `ssh verdict-vm true` succeeds; QEMU exiting or the deadline
/// passing is a failed boot with the console's tail.
fn wait_ready(
    config: &Path,
    qemu: &mut Kept,
    timeout: Duration,
    console: &Path,
    errors_path: &Path,
) -> Result<(), ExecError> {
    let deadline = Instant::now() + timeout;
    let config_text = config.to_string_lossy().into_owned();
    let mut last = String::new();
    loop {
        if let Ok(Some(status)) = qemu.try_wait() {
            let errors = std::fs::read_to_string(errors_path).unwrap_or_default();
            // QEMU repeats a warning per CPU for every feature TCG lacks:
            // those say nothing about why the guest ended.
            let lines: Vec<&str> = errors
                .lines()
                .filter(|line| !line.contains("doesn't support requested feature"))
                .collect();
            let errors = lines[lines.len().saturating_sub(5)..].join("\n");
            return Err(ExecError::BootFailed {
                message: format!(
                    "QEMU exited ({status}) before ssh answered{}",
                    if errors.trim().is_empty() {
                        " (the guest shut down or rebooted; see the console)".to_string()
                    } else {
                        format!(": {}", errors.trim())
                    }
                ),
                console_tail: console_tail(console),
            });
        }
        if Instant::now() >= deadline {
            return Err(ExecError::BootFailed {
                message: format!(
                    "ssh did not answer within {}s (last: {})",
                    timeout.as_secs(),
                    last.trim()
                ),
                console_tail: console_tail(console),
            });
        }
        let outcome = SystemExecutor.run(
            &Invocation::argv([
                "ssh",
                "-F",
                &config_text,
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=5",
                ALIAS,
                "true",
            ])
            .with_timeout(Duration::from_secs(30)),
            &Cancel::new(),
        )?;
        if outcome.status == Status::Exited(0) {
            return Ok(());
        }
        last = outcome.output_tail(300);
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// One file of the initramfs.
enum Entry {
    Directory(u32),
    /// Mode and contents: a host file to copy (symlinks followed) or bytes.
    HostFile(u32, PathBuf),
    Bytes(u32, Vec<u8>),
    Symlink(String),
}

/// Builds the per-boot initramfs at `path`.
fn build_initramfs(
    path: &Path,
    directory: &Path,
    agent: &AgentBinary,
    modules_root: &Path,
    programs: &[PathBuf],
    share: bool,
) -> Result<(), ExecError> {
    let mut entries: BTreeMap<String, Entry> = BTreeMap::new();
    for name in [
        "bin",
        "sbin",
        "usr",
        "usr/bin",
        "usr/sbin",
        "etc",
        "etc/ssh",
        "etc/verdict",
        "proc",
        "sys",
        "dev",
        "tmp",
        "run",
        "root",
        "var",
        "var/empty",
        "lib",
        "lib64",
        "lib/modules",
    ] {
        entries.insert(name.to_string(), Entry::Directory(0o755));
    }
    entries.insert("run/sshd".to_string(), Entry::Directory(0o755));
    entries.insert("tmp".to_string(), Entry::Directory(0o1777));
    entries.insert("root".to_string(), Entry::Directory(0o700));

    let busybox = find_file(&["/usr/bin/busybox", "/bin/busybox"]).ok_or_else(|| {
        target_error("busybox is missing (apt-get install busybox-static)".into())
    })?;
    entries.insert("bin/busybox".into(), Entry::HostFile(0o755, busybox));
    entries.insert("bin/sh".into(), Entry::Symlink("busybox".into()));
    let sshd = find_file(&["/usr/sbin/sshd"])
        .ok_or_else(|| target_error("sshd is missing (apt-get install openssh-server)".into()))?;
    add_with_libraries(&mut entries, &sshd, "usr/sbin/sshd")?;
    // Where SshTarget's probe looks for the agent (HOME=/root, no
    // XDG_CACHE_HOME): found there, it is not copied over the network.
    add_with_libraries(
        &mut entries,
        &agent.local_path,
        &format!("root/.cache/verdict/{}", agent.file_name),
    )?;
    for program in programs {
        let name = program
            .to_str()
            .and_then(|path| path.strip_prefix('/'))
            .filter(|name| !name.is_empty() && !name.split('/').any(|part| part == ".."))
            .ok_or_else(|| {
                target_error(format!(
                    "{}: a program for the guest must be an absolute path without `..`",
                    program.display()
                ))
            })?;
        if !program.is_file() {
            return Err(target_error(format!(
                "{}: no such program on this host",
                program.display()
            )));
        }
        add_with_libraries(&mut entries, program, name)?;
    }
    entries.insert("root/.cache".into(), Entry::Directory(0o700));
    entries.insert("root/.cache/verdict".into(), Entry::Directory(0o700));

    let mut modules = nic_modules(modules_root)?;
    if share {
        for module in modules_in_order(modules_root, &SHARE_MODULES, "a 9p share")? {
            if !modules.contains(&module) {
                modules.push(module);
            }
        }
        entries.insert("etc/verdict/share".into(), Entry::Bytes(0o644, Vec::new()));
    }
    for module in &modules {
        entries.insert(
            format!("lib/modules/{module}"),
            Entry::HostFile(0o644, modules_root.join(module)),
        );
    }
    let module_list: String = modules.iter().map(|module| format!("{module}\n")).collect();
    entries.insert(
        "etc/verdict/modules".into(),
        Entry::Bytes(0o644, module_list.into_bytes()),
    );
    entries.insert(
        "init".into(),
        Entry::Bytes(0o755, INIT_SCRIPT.as_bytes().to_vec()),
    );
    entries.insert(
        "etc/passwd".into(),
        Entry::Bytes(
            0o644,
            b"root:x:0:0:root:/root:/bin/sh\nsshd:x:102:65534::/run/sshd:/bin/false\n".to_vec(),
        ),
    );
    entries.insert(
        "etc/group".into(),
        Entry::Bytes(0o644, b"root:x:0:\nnogroup:x:65534:\n".to_vec()),
    );
    entries.insert(
        "etc/shadow".into(),
        Entry::Bytes(
            0o600,
            b"root:*:19000:0:99999:7:::\nsshd:*:19000:0:99999:7:::\n".to_vec(),
        ),
    );
    entries.insert(
        "etc/ssh/sshd_config".into(),
        Entry::Bytes(0o644, SSHD_CONFIG.as_bytes().to_vec()),
    );
    entries.insert(
        "etc/ssh/ssh_host_ed25519_key".into(),
        Entry::HostFile(0o600, directory.join("host_key")),
    );
    entries.insert(
        "etc/ssh/authorized_keys".into(),
        Entry::HostFile(0o644, directory.join("client_key.pub")),
    );
    // Parents of everything, so the archive never names a missing directory.
    let names: Vec<String> = entries.keys().cloned().collect();
    for name in names {
        let mut parent = Path::new(&name).parent();
        while let Some(directory) = parent.filter(|path| !path.as_os_str().is_empty()) {
            entries
                .entry(directory.to_string_lossy().into_owned())
                .or_insert(Entry::Directory(0o755));
            parent = directory.parent();
        }
    }
    write_cpio(path, &entries)
        .map_err(|error| target_error(format!("write the initramfs {}: {error}", path.display())))
}

/// `user` then `ours` in one file, the second archive starting at a
/// multiple of 4 bytes as the kernel's unpacker expects (zeros between
/// archives are skipped).
fn prepend_initrd(user: &Path, ours: &Path, combined: &Path) -> io::Result<()> {
    let mut output = BufWriter::new(File::create(combined)?);
    let copied = io::copy(&mut File::open(user)?, &mut output)?;
    pad(&mut output, copied)?;
    io::copy(&mut File::open(ours)?, &mut output)?;
    output.flush()
}

fn find_file(candidates: &[&str]) -> Option<PathBuf> {
    candidates
        .iter()
        .map(PathBuf::from)
        .find(|path| path.is_file())
}

/// Adds `program` as `name` and every shared library the dynamic loader
/// resolves for it (`ldd`), at the paths the loader found them.
fn add_with_libraries(
    entries: &mut BTreeMap<String, Entry>,
    program: &Path,
    name: &str,
) -> Result<(), ExecError> {
    entries.insert(
        name.to_string(),
        Entry::HostFile(0o755, program.to_path_buf()),
    );
    let outcome = SystemExecutor.run(
        &Invocation::argv(["ldd", &program.to_string_lossy()])
            .with_timeout(Duration::from_secs(30)),
        &Cancel::new(),
    )?;
    let text = String::from_utf8_lossy(&outcome.stdout).into_owned();
    if outcome.status != Status::Exited(0) {
        // A static executable: `ldd` says so and fails.
        if text.contains("not a dynamic executable")
            || outcome.output_tail(200).contains("not a dynamic")
        {
            return Ok(());
        }
        return Err(target_error(format!(
            "ldd {}: {}: {}",
            program.display(),
            outcome.status,
            outcome.output_tail(400).trim()
        )));
    }
    for line in text.lines() {
        if line.contains("not found") {
            return Err(target_error(format!(
                "ldd {}: a library is missing: {}",
                program.display(),
                line.trim()
            )));
        }
        let library = match line.split_once("=>") {
            Some((_, right)) => right.split_whitespace().next(),
            None => line.split_whitespace().next(),
        };
        if let Some(library) = library.filter(|library| library.starts_with('/')) {
            entries.insert(
                library.trim_start_matches('/').to_string(),
                Entry::HostFile(0o755, PathBuf::from(library)),
            );
        }
    }
    Ok(())
}

/// The NIC's modules and their dependencies in load order (dependencies
/// first), as paths relative to the release's module directory; empty for
/// drivers built into the kernel (`modules.builtin`).
fn nic_modules(modules_root: &Path) -> Result<Vec<String>, ExecError> {
    modules_in_order(modules_root, &NIC_MODULES, &format!("QEMU's {NIC_MODEL}"))
}

/// The modules `wanted` and their dependencies in load order, for `what`.
fn modules_in_order(
    modules_root: &Path,
    wanted_modules: &[&str],
    what: &str,
) -> Result<Vec<String>, ExecError> {
    let dep_path = modules_root.join("modules.dep");
    let dependencies = std::fs::read_to_string(&dep_path).unwrap_or_default();
    let builtin = std::fs::read_to_string(modules_root.join("modules.builtin")).unwrap_or_default();
    let mut order: Vec<String> = Vec::new();
    for &wanted in wanted_modules {
        let line = dependencies.lines().find(|line| {
            line.split(':')
                .next()
                .is_some_and(|module| module_name(module) == wanted)
        });
        match line {
            Some(line) => {
                let (module, needs) = line.split_once(':').unwrap_or((line, ""));
                // modules.dep lists the dependencies of a module with the
                // ones loaded last first.
                for dependency in needs.split_whitespace().rev().chain([module]) {
                    if !dependency.ends_with(".ko") {
                        return Err(target_error(format!(
                            "{dependency} is compressed; busybox's insmod needs plain .ko modules"
                        )));
                    }
                    if !order.iter().any(|known| known == dependency) {
                        order.push(dependency.to_string());
                    }
                }
            }
            None if builtin.lines().any(|line| module_name(line) == wanted) => {}
            None => {
                return Err(target_error(format!(
                    "the kernel needs the module {wanted} for {what} but {} does not list it (is the kernel's modules package installed?)",
                    dep_path.display()
                )));
            }
        }
    }
    Ok(order)
}

/// `virtio_net` for `kernel/drivers/net/virtio_net.ko` (or `.ko.xz`, ...).
fn module_name(path: &str) -> &str {
    let file_name = path.rsplit('/').next().unwrap_or(path);
    file_name
        .split_once(".ko")
        .map_or(file_name, |(name, _)| name)
}

/// Writes `entries` as a cpio archive in the `newc` format the kernel
/// unpacks (Documentation/driver-api/early-userspace/buffer-format.rst):
/// per entry a 110-byte ASCII header, the name, the data, each padded to 4.
fn write_cpio(path: &Path, entries: &BTreeMap<String, Entry>) -> io::Result<()> {
    let mut output = BufWriter::new(File::create(path)?);
    for (inode, (name, entry)) in (1u32..).zip(entries) {
        let (mode, size, source): (u32, u64, Option<Box<dyn Read>>) = match entry {
            Entry::Directory(mode) => (0o040000 | mode, 0, None),
            Entry::Symlink(target) => (
                0o120000 | 0o777,
                target.len() as u64,
                Some(Box::new(io::Cursor::new(target.clone().into_bytes()))),
            ),
            Entry::Bytes(mode, bytes) => (
                0o100000 | mode,
                bytes.len() as u64,
                Some(Box::new(io::Cursor::new(bytes.clone()))),
            ),
            Entry::HostFile(mode, host) => {
                let file = File::open(host).map_err(|error| {
                    io::Error::new(error.kind(), format!("{}: {error}", host.display()))
                })?;
                let size = file.metadata()?.size();
                (0o100000 | mode, size, Some(Box::new(file)))
            }
        };
        let size32 = u32::try_from(size)
            .map_err(|_| io::Error::other(format!("{name} is larger than 4 GiB")))?;
        write_header(&mut output, inode, mode, size32, name)?;
        if let Some(mut source) = source {
            let copied = io::copy(&mut source.as_mut().take(size), &mut output)?;
            if copied != size {
                return Err(io::Error::other(format!(
                    "{name} changed while it was copied"
                )));
            }
            pad(&mut output, size)?;
        }
    }
    write_header(&mut output, 0, 0, 0, "TRAILER!!!")?;
    output.flush()
}

fn write_header(
    output: &mut impl Write,
    inode: u32,
    mode: u32,
    size: u32,
    name: &str,
) -> io::Result<()> {
    let name_size = name.len() as u32 + 1;
    let nlink = if mode & 0o170000 == 0o040000 { 2 } else { 1 };
    write!(
        output,
        "070701{inode:08x}{mode:08x}{:08x}{:08x}{nlink:08x}{:08x}{size:08x}{:08x}{:08x}{:08x}{:08x}{name_size:08x}{:08x}",
        0, 0, 0, 0, 0, 0, 0, 0
    )?;
    output.write_all(name.as_bytes())?;
    output.write_all(&[0])?;
    pad(output, 110 + u64::from(name_size))
}

fn pad(output: &mut impl Write, length: u64) -> io::Result<()> {
    let padding = (4 - length % 4) % 4;
    output.write_all(&[0u8; 3][..padding as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> BootFacts {
        BootFacts {
            command_line: "console=ttyS0 panic=-1 verdict.boot=abc preempt=full".into(),
            boot_id: "id-2".into(),
            kernel_release: "6.1.0-57-amd64".into(),
            kernel_version: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-11-26)".into(),
        }
    }

    fn expectation() -> BootExpectation {
        BootExpectation {
            nonce: "abc".into(),
            command_line: "preempt=full".into(),
            kernel_release: "6.1.0-57-amd64".into(),
            kernel_version: Some("#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-11-26)".into()),
            previous_boot_id: Some("id-1".into()),
        }
    }

    #[test]
    fn a_matching_boot_is_proven_and_each_mismatch_is_named() {
        assert!(boot_mismatches(&expectation(), &facts()).is_empty());
        let wrong = BootExpectation {
            nonce: "abd".into(),
            command_line: "preempt=none".into(),
            kernel_release: "6.2.0".into(),
            kernel_version: Some("#2 SMP Wed Dec  3 18:20:01 UTC 2025".into()),
            previous_boot_id: Some("id-2".into()),
        };
        let reasons = boot_mismatches(&wrong, &facts());
        assert_eq!(reasons.len(), 5, "{reasons:?}");
        assert!(reasons[0].contains("verdict.boot=abd"));
        assert!(reasons[1].contains("preempt=none"));
        assert!(reasons[2].contains("6.2.0"));
        assert!(reasons[3].contains("uname -v") && reasons[3].contains("#2 SMP"));
        assert!(reasons[4].contains("previous boot"));
        // An image whose header holds no version is proven without it.
        let unknown = BootExpectation {
            kernel_version: None,
            ..expectation()
        };
        let mut other_build = facts();
        other_build.kernel_version = "#7".into();
        assert!(boot_mismatches(&unknown, &other_build).is_empty());
    }

    #[test]
    fn a_nonce_that_is_only_a_prefix_does_not_match() {
        let mut expected = expectation();
        expected.nonce = "ab".into();
        assert_eq!(boot_mismatches(&expected, &facts()).len(), 1);
    }

    #[test]
    fn cpio_entries_are_aligned_and_end_with_the_trailer() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("a.cpio");
        let mut entries = BTreeMap::new();
        entries.insert("bin".to_string(), Entry::Directory(0o755));
        entries.insert("bin/sh".to_string(), Entry::Symlink("busybox".into()));
        entries.insert(
            "init".to_string(),
            Entry::Bytes(0o755, b"#!/bin/sh\n".to_vec()),
        );
        write_cpio(&path, &entries).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len() % 4, 0);
        assert!(bytes.starts_with(b"070701"));
        // "bin": header 110 + name 4 = 114, padded to 116.
        assert_eq!(&bytes[116..122], b"070701");
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("TRAILER!!!"));
        assert!(text.contains("bin/sh\0"));
        assert!(text.contains("#!/bin/sh\n"));
    }

    #[test]
    fn nic_modules_come_with_their_dependencies_first() {
        let directory = tempfile::tempdir().unwrap();
        let root = directory.path();
        std::fs::write(
            root.join("modules.dep"),
            "kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko\n\
             kernel/drivers/net/virtio_net.ko: kernel/net/core/failover.ko kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko\n",
        )
        .unwrap();
        assert_eq!(
            nic_modules(root).unwrap(),
            [
                "kernel/drivers/virtio/virtio_ring.ko",
                "kernel/drivers/virtio/virtio.ko",
                "kernel/drivers/virtio/virtio_pci.ko",
                "kernel/net/core/failover.ko",
                "kernel/drivers/net/virtio_net.ko",
            ]
        );
        // Built in: nothing to load.
        std::fs::write(root.join("modules.dep"), "").unwrap();
        std::fs::write(
            root.join("modules.builtin"),
            "kernel/drivers/virtio/virtio_pci.ko\nkernel/drivers/net/virtio_net.ko\n",
        )
        .unwrap();
        assert!(nic_modules(root).unwrap().is_empty());
        // Missing: refused, naming the file that lacks it.
        std::fs::write(root.join("modules.builtin"), "").unwrap();
        let error = nic_modules(root).unwrap_err().to_string();
        assert!(
            error.contains("virtio_pci") && error.contains("modules.dep"),
            "{error}"
        );
        // Compressed: busybox's insmod cannot load it.
        std::fs::write(
            root.join("modules.dep"),
            "kernel/drivers/virtio/virtio_pci.ko.xz:\nkernel/drivers/net/virtio_net.ko.xz:\n",
        )
        .unwrap();
        let error = nic_modules(root).unwrap_err().to_string();
        assert!(error.contains("compressed"), "{error}");
    }

    #[test]
    fn only_directories_of_dead_controllers_are_swept() {
        let base = tempfile::tempdir().unwrap();
        let mut child = Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = base
            .path()
            .join(format!("verdict-vm-{dead}-1700000000000-0"));
        std::fs::create_dir(&stale).unwrap();
        std::fs::write(stale.join("initramfs.cpio"), b"070701").unwrap();
        let live = base
            .path()
            .join(format!("verdict-vm-{}-1700000000000-0", std::process::id()));
        std::fs::create_dir(&live).unwrap();
        // PID 1 lives; a name that is not a per-boot directory; a file.
        let init = base.path().join("verdict-vm-1-1700000000000-0");
        std::fs::create_dir(&init).unwrap();
        let other = base.path().join(format!("verdict-vmx-{dead}"));
        std::fs::create_dir(&other).unwrap();
        let file = base.path().join(format!("verdict-vm-{dead}-file"));
        std::fs::write(&file, b"").unwrap();
        assert_eq!(sweep_stale_directories(base.path()), vec![stale.clone()]);
        assert!(!stale.exists());
        for kept in [&live, &init, &other, &file] {
            assert!(kept.exists(), "{} was removed", kept.display());
        }
    }

    #[test]
    fn a_kept_child_dies_when_its_keeper_thread_ends() {
        let log = tempfile::tempfile().unwrap();
        let mut kept = Kept::spawn(Path::new("sleep"), vec!["60".to_string()], log).unwrap();
        assert!(kept.try_wait().unwrap().is_none());
        // The keeper thread ends without anyone killing the child: as when
        // verdict itself dies, the kernel's parent-death signal does.
        kept.release_keeper();
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = kept.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "the child outlived its keeper");
            std::thread::sleep(Duration::from_millis(20));
        };
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }

    #[test]
    fn the_release_is_read_from_the_kernel_image() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("vmlinuz");
        let mut image = vec![0u8; 0x400];
        image[0x202..0x206].copy_from_slice(b"HdrS");
        image[0x20E..0x210].copy_from_slice(&0x100u16.to_le_bytes());
        image[0x300..0x300 + 30].copy_from_slice(b"6.1.0-57-amd64 (debian@x) #1\0\0");
        std::fs::write(&path, &image).unwrap();
        assert_eq!(kernel_release(&path).unwrap(), "6.1.0-57-amd64");
        assert_eq!(
            kernel_image_version(&path).unwrap().version.as_deref(),
            Some("#1")
        );
        assert_eq!(
            uts_version(
                "6.1.192 (root@host (a)) #3 SMP PREEMPT_DYNAMIC Wed Dec  3 18:20:01 UTC 2025",
                "6.1.192"
            )
            .as_deref(),
            Some("#3 SMP PREEMPT_DYNAMIC Wed Dec  3 18:20:01 UTC 2025")
        );
        assert_eq!(uts_version("6.1.192", "6.1.192"), None);
        std::fs::write(&path, b"not a kernel").unwrap();
        assert!(
            kernel_release(&path)
                .unwrap_err()
                .to_string()
                .contains("not a bzImage")
        );
    }
}
