//! The boot seam: a target that can be booted into a given kernel and
//! command line ([`Booter`]), as the engine sees it, and its VM
//! implementation ([`VmBooter`]: a fresh QEMU per boot, through
//! [`VmTarget`]); ssh hosts are [`crate::SshBooter`] (kexec, or a hook and a
//! reboot). Every boot is proven (nonce, options, release, a boot id
//! other than the previous boot's) before the booter hands out the target;
//! a boot that does not prove itself is [`ExecError::BootFailed`] with the
//! console's tail.
//!
//! Must not: decide the schedule, retry on its own, or touch the store
//! (the engine records boots and decides what a failure means).

use std::path::PathBuf;
use std::time::Duration;

use crate::{Acceleration, AgentBinary, ExecError, Target, VmOptions, VmTarget};

/// What to boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootSpec {
    /// The kernel image: a file on the controller for a VM (always given),
    /// on the host for kexec (`None` with a hook).
    pub kernel: Option<PathBuf>,
    pub initrd: Option<PathBuf>,
    /// The options the guest's /proc/cmdline must show (verdict adds its
    /// console and nonce).
    pub command_line: String,
    /// ssh hosts: the user's argv that arranges the next boot, run on the
    /// host before a reboot (instead of kexec).
    pub hook: Option<Vec<String>>,
    /// A VM's kernel modules directory (`modules.dep`, `modules.builtin`)
    /// for `kernel`; `None`: `/lib/modules/RELEASE` of the controller.
    pub modules: Option<PathBuf>,
}

/// A proven boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootRecord {
    /// `verdict.boot=NONCE` was on the guest's command line (`None`: a
    /// hook's boot that did not carry it, proven by boot id and options).
    pub nonce: Option<String>,
    pub boot_id: String,
    pub kernel_release: String,
    /// The guest's /proc/cmdline.
    pub command_line: String,
    /// `kvm` or `tcg` for a VM; `kexec` or `reboot` for an ssh host.
    pub accelerator: String,
    /// From the hypervisor's start to `ssh true` answering.
    pub boot_time: Duration,
    /// Why KVM was given up for TCG, when it was tried.
    pub kvm_fallback: Option<String>,
}

/// A target the engine can boot. Between boots, [`Booter::target`] is the
/// machine of the last proven boot.
pub trait Booter {
    /// Ends the current boot (if any) and boots `spec`; `Ok` only when the
    /// boot proved itself.
    fn boot(&mut self, spec: &BootSpec) -> Result<BootRecord, ExecError>;
    /// The booted machine; `None` before the first proven boot or after a
    /// failed one.
    fn target(&self) -> Option<&dyn Target>;
    /// The last 4 KiB of the current boot's console (for a failure found
    /// after the boot, such as a level's verify).
    fn console_tail(&self) -> String;
    /// Ends the current boot (a VM stops; an ssh host stays up and only
    /// the connection ends).
    fn shut_down(&mut self);
    /// The machine's name for the run record (an ssh host's name); `None`
    /// lets the engine name it.
    fn host_name(&self) -> Option<String> {
        None
    }
}

/// Boots a fresh QEMU per [`Booter::boot`] from a template of options.
pub struct VmBooter {
    template: VmOptions,
    agent: AgentBinary,
    current: Option<VmTarget>,
    previous_boot_id: Option<String>,
}

impl std::fmt::Debug for VmBooter {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("VmBooter")
            .field("template", &self.template)
            .field("current", &self.current)
            .finish_non_exhaustive()
    }
}

impl VmBooter {
    /// `template`'s kernel, initrd and command line are replaced by each
    /// boot's [`BootSpec`].
    pub fn new(template: VmOptions, agent: AgentBinary) -> Self {
        Self {
            template,
            agent,
            current: None,
            previous_boot_id: None,
        }
    }

    /// The current boot, if any.
    pub fn current(&self) -> Option<&VmTarget> {
        self.current.as_ref()
    }
}

impl Booter for VmBooter {
    fn boot(&mut self, spec: &BootSpec) -> Result<BootRecord, ExecError> {
        if let Some(previous) = self.current.take() {
            previous.shut_down();
        }
        let mut options = self.template.clone();
        if let Some(kernel) = &spec.kernel {
            options.kernel = kernel.clone();
        }
        options.initrd = spec.initrd.clone();
        options.modules = spec.modules.clone();
        options.command_line = spec.command_line.clone();
        options.previous_boot_id = self.previous_boot_id.clone();
        let vm = VmTarget::boot(&options, self.agent.clone())?;
        let acceleration = vm.acceleration();
        // KVM that failed once is not probed again on every boot.
        if self.template.acceleration == Acceleration::Auto {
            self.template.acceleration = acceleration;
        }
        let facts = vm.facts().clone();
        self.previous_boot_id = Some(facts.boot_id.clone());
        let record = BootRecord {
            nonce: Some(vm.expectation().nonce.clone()),
            boot_id: facts.boot_id,
            kernel_release: facts.kernel_release,
            command_line: facts.command_line,
            accelerator: match acceleration {
                Acceleration::Kvm => "kvm",
                Acceleration::Tcg | Acceleration::Auto => "tcg",
            }
            .to_string(),
            boot_time: vm.boot_time(),
            kvm_fallback: vm.kvm_fallback().map(str::to_string),
        };
        self.current = Some(vm);
        Ok(record)
    }

    fn target(&self) -> Option<&dyn Target> {
        self.current.as_ref().map(|vm| vm as &dyn Target)
    }

    fn console_tail(&self) -> String {
        self.current
            .as_ref()
            .map(VmTarget::console_tail)
            .unwrap_or_default()
    }

    fn shut_down(&mut self) {
        if let Some(vm) = self.current.take() {
            vm.shut_down();
        }
    }
}
