//! Kernels as a factor, as experiment files state them: the VM target
//! (`[target] vm = { kernel = …, … }`), ssh hosts verdict may boot
//! (`[target] boot = { kernel = …, cmdline = …, timeout = …, power_cycle =
//! [argv] }`), a level's boot (`boot = { cmdline = …, cmdline_mode = …,
//! kernel = …, initrd = … }` or `boot = { hook = [argv], cmdline = … }`)
//! and a level's runtime
//! proof (`verify = { command = [argv], matches = "REGEX" }`). A VM or a
//! level may name a kernel built from source instead of an image (`build =
//! { … }`, see [`crate::kernel_build`]) and the directory of an image's
//! modules (`modules`). Validated
//! here (paths, durations, the regex, the shell guard of the verify
//! command); the errors are strings the experiment loader places at
//! `file:line:col`. Must not start processes, read the kernel image or
//! touch any file.

use crate::experiment::{CommandSpec, parse_duration};
use crate::kernel_build::{BuildSpec, build_from};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// How the guest's CPU is emulated (`accel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Accelerator {
    /// KVM when it works (probed with a timeout), otherwise TCG.
    Auto,
    Tcg,
    Kvm,
}

/// `[target] vm`: the virtual machine verdict boots itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct VmSpec {
    /// The default kernel image of every boot (a level's `boot.kernel`
    /// replaces it); `None` when `build` makes it.
    pub kernel: Option<PathBuf>,
    /// The default kernel, built from source (`build = { … }`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildSpec>,
    /// The directory holding `kernel`'s `modules.dep` and
    /// `modules.builtin` (`/lib/modules/RELEASE` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modules: Option<PathBuf>,
    /// An initrd put before verdict's own initramfs (whose `/init` wins).
    pub initrd: Option<PathBuf>,
    /// Options every boot gets (a level's `cmdline_mode = "replace"`
    /// replaces them).
    pub cmdline: String,
    /// QEMU's `-smp`: `smp` when given, else the number of CPUs.
    pub smp: String,
    /// QEMU's `-m`.
    pub memory: String,
    /// QEMU's `-cpu`.
    pub cpu: Option<String>,
    pub accel: Accelerator,
    /// Host programs (absolute paths, as written or found on PATH by the
    /// binary) put in the guest with their libraries.
    pub programs: Vec<String>,
    /// How long a boot may take until `ssh true` answers.
    pub boot_timeout: Duration,
}

/// How a level's command line combines with the VM's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CmdlineMode {
    /// After the VM's `cmdline` (and earlier factors' options).
    Append,
    /// Instead of the VM's `cmdline` (and earlier factors' options).
    Replace,
}

/// A level that takes a boot to enter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LevelBoot {
    pub cmdline: String,
    pub cmdline_mode: CmdlineMode,
    pub kernel: Option<PathBuf>,
    pub initrd: Option<PathBuf>,
    /// ssh hosts: a command run on the host that arranges its next boot
    /// (e.g. `grub-reboot`), followed by a reboot, instead of kexec. Its
    /// arguments get `{nonce}` and `{cmdline}` substituted (never through
    /// a shell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook: Option<Vec<String>>,
    /// A kernel built from source for this level (VM targets), instead of
    /// `kernel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildSpec>,
    /// The directory of `kernel`'s modules (`modules.dep`,
    /// `modules.builtin`), instead of `/lib/modules/RELEASE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modules: Option<PathBuf>,
}

/// `[target] boot`: how verdict boots the ssh hosts of an experiment with
/// boot levels (kexec by default, a level's `hook` otherwise).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HostBoot {
    /// The kernel kexec loads (a path on the host) unless a level names
    /// one.
    pub kernel: Option<PathBuf>,
    /// Its initrd (a path on the host).
    pub initrd: Option<PathBuf>,
    /// The options every kexec boot gets (a level's `cmdline_mode =
    /// "replace"` replaces them).
    pub cmdline: String,
    /// How long a boot may take until `ssh HOST true` answers.
    pub timeout: Duration,
    /// A command run on the controller (never on the host) when the host
    /// does not come back within `timeout`; `{host}` is substituted.
    pub power_cycle: Option<Vec<String>>,
}

/// A runtime proof of a level: `command` runs on the target after the
/// level is entered, before anything is measured; its standard output must
/// match `matches` (a regular expression, searched anywhere).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Verify {
    pub command: CommandSpec,
    pub matches: String,
}

/// What a run does when a boot fails after its retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum OnBootFailure {
    /// The run stops (status failed, exit 1); `--resume` tries again.
    #[default]
    Stop,
    /// That boot's iterations are skipped; the run goes on.
    Skip,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVm {
    kernel: Option<PathBuf>,
    build: Option<toml::Value>,
    modules: Option<PathBuf>,
    initrd: Option<PathBuf>,
    #[serde(default)]
    cmdline: String,
    cpus: Option<u32>,
    memory: Option<String>,
    smp: Option<String>,
    cpu: Option<String>,
    accel: Option<String>,
    #[serde(default)]
    programs: Vec<String>,
    boot_timeout: Option<toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBoot {
    #[serde(default)]
    cmdline: String,
    cmdline_mode: Option<String>,
    kernel: Option<PathBuf>,
    initrd: Option<PathBuf>,
    hook: Option<Vec<String>>,
    build: Option<toml::Value>,
    modules: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHostBoot {
    kernel: Option<PathBuf>,
    initrd: Option<PathBuf>,
    #[serde(default)]
    cmdline: String,
    timeout: Option<toml::Value>,
    power_cycle: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVerify {
    command: Vec<String>,
    matches: String,
}

/// Characters QEMU's option syntax or the word-by-word check of the
/// command line cannot carry.
fn check_cmdline(text: &str, key: &str) -> Result<(), String> {
    if let Some(bad) = text.chars().find(|c| *c == '"' || c.is_control()) {
        return Err(format!(
            "`{key}` contains {:?}; the kernel command line is checked word by word and must not hold quotes or control characters",
            bad
        ));
    }
    if text
        .split_whitespace()
        .any(|word| word.starts_with("verdict.boot="))
    {
        return Err(format!(
            "`{key}` sets `verdict.boot=`, which verdict puts on every boot as its proof"
        ));
    }
    Ok(())
}

fn absolute(path: &std::path::Path, key: &str) -> Result<(), String> {
    if path.as_os_str().is_empty() {
        return Err(format!("`{key}` is empty; expected the path of a file"));
    }
    if path.to_string_lossy().contains(',') {
        return Err(format!(
            "`{key}` = {}: a comma cannot be passed to QEMU in a file name",
            path.display()
        ));
    }
    Ok(())
}

/// A positive duration (`"300s"` or seconds), `default` seconds when absent.
fn timeout_from(value: Option<&toml::Value>, key: &str, default: u64) -> Result<Duration, String> {
    match value {
        None => Ok(Duration::from_secs(default)),
        Some(toml::Value::String(text)) => parse_duration(text)
            .filter(|duration| !duration.is_zero())
            .ok_or_else(|| format!("`{key}` = {text:?}; expected a duration such as \"300s\"")),
        Some(toml::Value::Integer(seconds)) if *seconds > 0 => {
            Ok(Duration::from_secs(*seconds as u64))
        }
        Some(other) => Err(format!(
            "`{key}` = {other}; expected a duration such as \"300s\""
        )),
    }
}

/// An argv of the file: not empty, no empty program.
fn argv_from(argv: &[String], key: &str) -> Result<(), String> {
    match argv.first() {
        None => Err(format!(
            "`{key}` is an empty array; expected a program and its arguments"
        )),
        Some(program) if program.is_empty() => Err(format!("`{key}` names an empty program")),
        Some(_) => Ok(()),
    }
}

/// Validates `[target] boot` (ssh hosts verdict boots).
pub(crate) fn host_boot_from(value: toml::Value) -> Result<HostBoot, String> {
    let raw: RawHostBoot = value
        .try_into()
        .map_err(|error: toml::de::Error| format!("`[target] boot`: {}", error.message().trim()))?;
    check_cmdline(&raw.cmdline, "boot.cmdline")?;
    for (path, key) in [(&raw.kernel, "boot.kernel"), (&raw.initrd, "boot.initrd")] {
        if let Some(path) = path
            && !path.is_absolute()
        {
            return Err(format!(
                "`{key}` = {}: expected an absolute path on the host",
                path.display()
            ));
        }
    }
    if let Some(argv) = &raw.power_cycle {
        argv_from(argv, "boot.power_cycle")?;
    }
    Ok(HostBoot {
        kernel: raw.kernel,
        initrd: raw.initrd,
        cmdline: raw.cmdline,
        timeout: timeout_from(raw.timeout.as_ref(), "boot.timeout", 600)?,
        power_cycle: raw.power_cycle,
    })
}

/// Validates `[target] vm`.
pub(crate) fn vm_from(value: toml::Value) -> Result<VmSpec, String> {
    let raw: RawVm = value
        .try_into()
        .map_err(|error: toml::de::Error| format!("`[target] vm`: {}", error.message().trim()))?;
    let build = raw
        .build
        .map(|value| build_from(value, "vm.build", false))
        .transpose()?;
    match (&raw.kernel, &build) {
        (Some(_), Some(_)) => {
            return Err(
                "`[target] vm`: give either `kernel` (an image) or `build` (a kernel verdict builds)"
                    .to_string(),
            );
        }
        // Every boot level names its kernel (checked with the factors).
        (None, None) => {}
        (Some(kernel), None) => absolute(kernel, "vm.kernel")?,
        (None, Some(_)) => {}
    }
    if let Some(initrd) = &raw.initrd {
        absolute(initrd, "vm.initrd")?;
    }
    if let Some(modules) = &raw.modules {
        absolute(modules, "vm.modules")?;
        if build.is_some() {
            return Err(
                "`vm.modules` names the modules of `kernel`; a kernel verdict builds brings its own"
                    .to_string(),
            );
        }
    }
    check_cmdline(&raw.cmdline, "vm.cmdline")?;
    let smp = match (raw.smp, raw.cpus) {
        (Some(_), Some(_)) => {
            return Err(
                "`[target] vm`: give either `cpus` or `smp` (which sets the CPU count itself)"
                    .to_string(),
            );
        }
        (Some(smp), None) => {
            if smp.is_empty() || smp.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(format!(
                    "`vm.smp` = {smp:?}; expected e.g. \"sockets=1,cores=2,threads=2\""
                ));
            }
            smp
        }
        (None, Some(0)) => return Err("`vm.cpus` = 0; expected at least 1".to_string()),
        (None, Some(cpus)) => cpus.to_string(),
        (None, None) => "2".to_string(),
    };
    let memory = raw.memory.unwrap_or_else(|| "1G".to_string());
    if memory.is_empty()
        || !memory.chars().all(|c| c.is_ascii_alphanumeric())
        || !memory.starts_with(|c: char| c.is_ascii_digit())
    {
        return Err(format!(
            "`vm.memory` = {memory:?}; expected a size such as \"1G\" or \"512M\""
        ));
    }
    if let Some(cpu) = &raw.cpu
        && (cpu.is_empty() || cpu.starts_with('-') || cpu.chars().any(char::is_whitespace))
    {
        return Err(format!(
            "`vm.cpu` = {cpu:?}; expected a QEMU CPU model such as \"Skylake-Server\""
        ));
    }
    let accel = match raw.accel.as_deref() {
        None | Some("auto") => Accelerator::Auto,
        Some("tcg") => Accelerator::Tcg,
        Some("kvm") => Accelerator::Kvm,
        Some(other) => {
            return Err(format!(
                "`vm.accel` = \"{other}\"; expected \"auto\", \"tcg\" or \"kvm\""
            ));
        }
    };
    for program in &raw.programs {
        if program.is_empty() || program.split('/').any(|part| part == "..") {
            return Err(format!(
                "`vm.programs`: {program:?} is not a program name or absolute path"
            ));
        }
    }
    let boot_timeout = timeout_from(raw.boot_timeout.as_ref(), "vm.boot_timeout", 300)?;
    Ok(VmSpec {
        kernel: raw.kernel,
        build,
        modules: raw.modules,
        initrd: raw.initrd,
        cmdline: raw.cmdline,
        smp,
        memory,
        cpu: raw.cpu,
        accel,
        programs: raw.programs,
        boot_timeout,
    })
}

/// Validates a level's `boot`.
pub(crate) fn boot_from(value: toml::Value) -> Result<LevelBoot, String> {
    let raw: RawBoot = value
        .try_into()
        .map_err(|error: toml::de::Error| format!("`boot`: {}", error.message().trim()))?;
    if let Some(hook) = &raw.hook {
        argv_from(hook, "boot.hook")?;
        // `{nonce}` and `{cmdline}` are substituted in its words: never
        // where a shell (or a wrapper running one) parses them.
        let placeholders: std::collections::BTreeMap<String, Vec<String>> = [
            ("nonce".to_string(), vec!["0".repeat(32)]),
            (
                "cmdline".to_string(),
                vec![format!("{} verdict.boot=0", raw.cmdline)],
            ),
        ]
        .into();
        if let Some(splice) = crate::shell_guard::find_splice(hook, &placeholders) {
            return Err(format!(
                "`boot.hook` puts `{{{}}}` in argument {} (`{}`), which {}; values are never spliced into shell code: pass it as its own argument (`sh -c '… \"$1\"' sh {{{}}}`) or read $VERDICT_BOOT_NONCE / $VERDICT_BOOT_CMDLINE",
                splice.factor, splice.index, hook[splice.index], splice.reason, splice.factor
            ));
        }
        if raw.kernel.is_some() || raw.initrd.is_some() || raw.build.is_some() {
            return Err(
                "`boot.hook` arranges the next boot itself; give either `hook` or `kernel`/`initrd`/`build`"
                    .to_string(),
            );
        }
    }
    let build = raw
        .build
        .map(|value| build_from(value, "boot.build", true))
        .transpose()?;
    if build.is_some() && raw.kernel.is_some() {
        return Err(
            "`boot`: give either `kernel` (an image) or `build` (a kernel verdict builds)"
                .to_string(),
        );
    }
    if let Some(modules) = &raw.modules {
        absolute(modules, "boot.modules")?;
        if raw.kernel.is_none() {
            return Err(
                "`boot.modules` names the modules of the level's `kernel`; without `kernel` there is none (a kernel verdict builds brings its own)"
                    .to_string(),
            );
        }
    }
    check_cmdline(&raw.cmdline, "boot.cmdline")?;
    let cmdline_mode = match raw.cmdline_mode.as_deref() {
        None | Some("append") => CmdlineMode::Append,
        Some("replace") => CmdlineMode::Replace,
        Some(other) => {
            return Err(format!(
                "`boot.cmdline_mode` = \"{other}\"; expected \"append\" or \"replace\""
            ));
        }
    };
    if let Some(kernel) = &raw.kernel {
        absolute(kernel, "boot.kernel")?;
    }
    if let Some(initrd) = &raw.initrd {
        absolute(initrd, "boot.initrd")?;
    }
    Ok(LevelBoot {
        cmdline: raw.cmdline,
        cmdline_mode,
        kernel: raw.kernel,
        initrd: raw.initrd,
        hook: raw.hook,
        build,
        modules: raw.modules,
    })
}

/// Validates a level's `verify` (the shell guard is the caller's, with the
/// factors' levels).
pub(crate) fn verify_from(value: toml::Value) -> Result<Verify, String> {
    let raw: RawVerify = value.try_into().map_err(|error: toml::de::Error| {
        format!(
            "`verify`: {}; expected {{ command = [\"prog\", \"arg\"], matches = \"REGEX\" }}",
            error.message().trim()
        )
    })?;
    if raw.command.is_empty() {
        return Err(
            "`verify.command` is an empty array; expected a program and its arguments".to_string(),
        );
    }
    regex::Regex::new(&raw.matches)
        .map_err(|error| format!("`verify.matches` is not a valid regular expression: {error}"))?;
    Ok(Verify {
        command: CommandSpec::Argv(raw.command),
        matches: raw.matches,
    })
}

/// The boot of one combination of boot levels: the kernel, initrd and
/// command line (or the hook) the levels (in factor order) and the target
/// make together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BootPlan {
    /// Always set on a VM; on an ssh host, the kernel kexec loads (`None`
    /// with a hook, or when neither the target nor a level names one).
    pub kernel: Option<PathBuf>,
    pub initrd: Option<PathBuf>,
    /// The options verdict puts after its own (console, nonce).
    pub cmdline: String,
    /// The last level's hook, if any boots by one (ssh hosts).
    pub hook: Option<Vec<String>>,
    /// The kernel to build and boot, when the last kernel named is a
    /// `build` (then `kernel` is `None` until the build gives its image).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildSpec>,
    /// The modules of `kernel` (`None`: `/lib/modules/RELEASE`, or the
    /// build's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modules: Option<PathBuf>,
}

impl BootPlan {
    /// Combines `vm` with `boots` in factor order: each `append` adds its
    /// options, each `replace` drops what came before; the last kernel
    /// (an image or a build) and initrd named win.
    pub fn combine<'a>(vm: &VmSpec, boots: impl IntoIterator<Item = &'a LevelBoot>) -> BootPlan {
        let mut plan = Self::combine_from(vm.kernel.clone(), vm.initrd.clone(), &vm.cmdline, []);
        plan.build = vm.build.clone();
        plan.modules = vm.modules.clone();
        plan.add_levels(boots);
        plan
    }

    /// As [`BootPlan::combine`] on an ssh host: the target's `[target]
    /// boot` is the base; a level with a hook boots by that hook (the last
    /// such level's).
    pub fn combine_host<'a>(
        host: &HostBoot,
        boots: impl IntoIterator<Item = &'a LevelBoot>,
    ) -> BootPlan {
        Self::combine_from(
            host.kernel.clone(),
            host.initrd.clone(),
            &host.cmdline,
            boots,
        )
    }

    fn combine_from<'a>(
        kernel: Option<PathBuf>,
        initrd: Option<PathBuf>,
        cmdline: &str,
        boots: impl IntoIterator<Item = &'a LevelBoot>,
    ) -> BootPlan {
        let mut plan = BootPlan {
            kernel,
            initrd,
            cmdline: cmdline.trim().to_string(),
            hook: None,
            build: None,
            modules: None,
        };
        plan.add_levels(boots);
        plan
    }

    fn add_levels<'a>(&mut self, boots: impl IntoIterator<Item = &'a LevelBoot>) {
        for boot in boots {
            match boot.cmdline_mode {
                CmdlineMode::Replace => self.cmdline = boot.cmdline.trim().to_string(),
                CmdlineMode::Append => {
                    if !boot.cmdline.trim().is_empty() {
                        if !self.cmdline.is_empty() {
                            self.cmdline.push(' ');
                        }
                        self.cmdline.push_str(boot.cmdline.trim());
                    }
                }
            }
            if let Some(kernel) = &boot.kernel {
                self.kernel = Some(kernel.clone());
                self.build = None;
                self.modules = boot.modules.clone();
            }
            if let Some(build) = &boot.build {
                self.build = Some(build.clone());
                self.kernel = None;
                self.modules = None;
            }
            if let Some(initrd) = &boot.initrd {
                self.initrd = Some(initrd.clone());
            }
            if let Some(hook) = &boot.hook {
                self.hook = Some(hook.clone());
            }
        }
        if self.hook.is_some() {
            self.kernel = None;
            self.initrd = None;
            self.build = None;
            self.modules = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vm() -> VmSpec {
        vm_from(toml::from_str("kernel = \"/vmlinuz\"\ncmdline = \"quiet\"").unwrap()).unwrap()
    }

    #[test]
    fn levels_append_or_replace_the_vm_command_line() {
        let append = LevelBoot {
            cmdline: "preempt=full".into(),
            cmdline_mode: CmdlineMode::Append,
            kernel: None,
            initrd: None,
            hook: None,
            build: None,
            modules: None,
        };
        let replace = LevelBoot {
            cmdline: "nosmt".into(),
            cmdline_mode: CmdlineMode::Replace,
            kernel: Some("/boot/other".into()),
            initrd: None,
            hook: None,
            build: None,
            modules: Some("/tmp/modules".into()),
        };
        assert_eq!(
            BootPlan::combine(&vm(), [&append]).cmdline,
            "quiet preempt=full"
        );
        let plan = BootPlan::combine(&vm(), [&append, &replace]);
        assert_eq!(plan.cmdline, "nosmt");
        assert_eq!(plan.kernel, Some(PathBuf::from("/boot/other")));
        assert_eq!(plan.modules, Some(PathBuf::from("/tmp/modules")));
        assert_eq!(BootPlan::combine(&vm(), []).cmdline, "quiet");
        // A level's build replaces the VM's kernel (and its modules); a
        // later level's kernel replaces the build.
        let built = boot_from(
            toml::from_str("build = { tree = \"/src/linux\", config = \"tinyconfig\" }").unwrap(),
        )
        .unwrap();
        let plan = BootPlan::combine(&vm(), [&built]);
        assert_eq!(plan.kernel, None);
        assert_eq!(
            plan.build.as_ref().and_then(|build| build.tree.clone()),
            Some(PathBuf::from("/src/linux"))
        );
        let plan = BootPlan::combine(&vm(), [&built, &replace]);
        assert_eq!(
            (plan.build, plan.kernel),
            (None, Some("/boot/other".into()))
        );
        let built_vm = vm_from(
            toml::from_str("build = { config = \"tinyconfig\" }\ncmdline = \"quiet\"").unwrap(),
        )
        .unwrap();
        let plan = BootPlan::combine(&built_vm, [&append]);
        assert!(plan.build.is_some() && plan.kernel.is_none());
    }

    #[test]
    fn bad_values_are_refused_with_the_key() {
        let vm = |text: &str| vm_from(toml::from_str(text).unwrap()).unwrap_err();
        assert!(vm("kernel = \"/k\"\naccel = \"hvf\"").contains("vm.accel"));
        assert!(vm("kernel = \"/k\"\ncpus = 2\nsmp = \"2\"").contains("either"));
        assert!(vm("kernel = \"/k\"\nmemory = \"1 G\"").contains("vm.memory"));
        assert!(vm("kernel = \"/k\"\nboot_timeout = \"soon\"").contains("boot_timeout"));
        assert!(vm("kernel = \"/k\"\nbuild = { config = \"tinyconfig\" }").contains("either"));
        assert!(vm("build = { config = \"tinyconfig\" }\nmodules = \"/m\"").contains("vm.modules"));
        assert!(vm("kernel = \"/k\"\ncmdline = \"verdict.boot=x\"").contains("verdict.boot"));
        let boot = |text: &str| boot_from(toml::from_str(text).unwrap()).unwrap_err();
        assert!(boot("cmdline_mode = \"prepend\"").contains("cmdline_mode"));
        assert!(boot("cmdline = \"a=\\\"b c\\\"\"").contains("quotes"));
        assert!(boot("hook = []").contains("empty"));
        let spliced = boot("hook = [\"sh\", \"-c\", \"grubby --args={cmdline}\"]");
        assert!(
            spliced.contains("{cmdline}") && spliced.contains("shell"),
            "{spliced}"
        );
        assert!(
            boot_from(
                toml::from_str(
                    "hook = [\"sh\", \"-c\", \"grubby --args=\\\"$1\\\"\", \"sh\", \"{cmdline}\"]"
                )
                .unwrap()
            )
            .is_ok()
        );
        assert!(boot("hook = [\"grub-reboot\"]\nkernel = \"/k\"").contains("either"));
        assert!(
            boot("kernel = \"/k\"\nbuild = { tree = \"/l\", config = \"tinyconfig\" }")
                .contains("either")
        );
        assert!(boot("modules = \"/m\"").contains("boot.modules"));
        assert!(boot("build = { config = \"tinyconfig\" }").contains("no `tree`"));
        let host = |text: &str| host_boot_from(toml::from_str(text).unwrap()).unwrap_err();
        assert!(host("kernel = \"vmlinuz\"").contains("absolute"));
        assert!(host("power_cycle = []").contains("power_cycle"));
        assert!(host("timeout = \"soon\"").contains("boot.timeout"));
        assert!(host("cmdline = \"verdict.boot=1\"").contains("verdict.boot"));
        let verify = |text: &str| verify_from(toml::from_str(text).unwrap()).unwrap_err();
        assert!(verify("command = [\"cat\"]\nmatches = \"(full\"").contains("regular expression"));
        assert!(verify("command = []\nmatches = \"x\"").contains("empty"));
        assert!(verify("command = [\"cat\"]").contains("matches"));
    }
}
