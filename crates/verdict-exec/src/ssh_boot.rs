//! [`SshBooter`]: an ssh host booted into a level's kernel and command line
//! through the [`Booter`] seam.
//!
//! Per boot, on the host through its agent (argv only, never a shell with
//! a value in it): with a kernel, `kexec -l KERNEL [--initrd=INITRD]
//! --command-line=OPTIONS verdict.boot=NONCE`; with a level's hook, the
//! hook's argv with `{nonce}` and `{cmdline}` substituted and
//! `VERDICT_BOOT_NONCE` / `VERDICT_BOOT_CMDLINE` in its environment. Then a
//! detached trigger (`systemctl kexec` or `kexec -e`; `systemctl reboot` or
//! `reboot`), a constant script that takes the word `kexec` or `reboot` as
//! its only argument. The connection from before the boot (its
//! ControlMaster included) is closed; ready means `ssh HOST true` succeeds
//! (no control socket, the user's host-key checking as configured) and the
//! boot id differs from the one read just before the boot. A host that
//! does not come back within the timeout has the controller's
//! `power_cycle` argv run (`{host}` substituted), then gets the timeout
//! again. The boot is proven as a VM's is (nonce, options, `uname -r`
//! against the kernel image's release, a new boot id); a hook that did not
//! put the nonce on the command line leaves the boot id and the options as
//! the proof, and the record says the nonce was not seen. Any failure is
//! [`ExecError::BootFailed`] carrying this boot's log of steps in place of
//! a console.
//!
//! Must not: run anything of the user's through a shell, run `power_cycle`
//! on the host, or retry a boot on its own (the engine does).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::SystemExecutor;
use crate::boot::{BootRecord, BootSpec, Booter};
use crate::vm::{
    BootExpectation, BootFacts, Proof, has_nonce, kernel_release_in, mismatches, random_bytes,
    read_boot_facts,
};
use crate::{AgentBinary, Cancel, ExecError, Invocation, SshOptions, SshTarget, Status, Target};

/// Detaches itself (setsid forks when it leads its process group, as the
/// agent's commands do), lets the agent's reply leave, then kexecs or
/// reboots the host: through systemd when it runs the host, directly
/// otherwise. `$1` is `kexec` or `reboot`, a constant of this module.
const TRIGGER_SCRIPT: &str = r#"exec </dev/null >/dev/null 2>&1
sleep 1
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then exec systemctl "$1"; fi
if [ "$1" = kexec ]; then exec kexec -e; fi
exec reboot"#;

/// How an ssh host is booted.
#[derive(Debug, Clone)]
pub struct SshBootOptions {
    /// How long a boot may take until `ssh HOST true` answers with a new
    /// boot id.
    pub timeout: Duration,
    /// Run on the controller when the host does not come back in time;
    /// `{host}` is replaced by the host name.
    pub power_cycle: Option<Vec<String>>,
}

/// Boots an ssh host by kexec or by a hook and a reboot; see the module
/// documentation.
pub struct SshBooter {
    host: String,
    ssh: SshOptions,
    agent: AgentBinary,
    options: SshBootOptions,
    current: Option<SshTarget>,
    /// What the current (or last failed) boot did, step by step.
    log: String,
}

impl std::fmt::Debug for SshBooter {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SshBooter")
            .field("host", &self.host)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// `argv` with `{nonce}` and `{cmdline}` replaced in every word.
fn hook_argv(argv: &[String], nonce: &str, command_line: &str) -> Vec<String> {
    argv.iter()
        .map(|word| {
            word.replace("{nonce}", nonce)
                .replace("{cmdline}", command_line)
        })
        .collect()
}

impl SshBooter {
    pub fn new(host: &str, ssh: SshOptions, agent: AgentBinary, options: SshBootOptions) -> Self {
        Self {
            host: host.to_string(),
            ssh,
            agent,
            options,
            current: None,
            log: String::new(),
        }
    }

    fn note(&mut self, line: impl AsRef<str>) {
        self.log.push_str(line.as_ref());
        self.log.push('\n');
    }

    fn failed(&self, message: impl Into<String>) -> ExecError {
        let start = self.log.len().saturating_sub(4096);
        let start = (start..=self.log.len())
            .find(|&index| self.log.is_char_boundary(index))
            .unwrap_or(self.log.len());
        ExecError::BootFailed {
            message: message.into(),
            console_tail: self.log[start..].to_string(),
        }
    }

    /// `ssh HOST true` alone (no control socket), as readiness.
    fn answers(&self) -> Result<bool, ExecError> {
        let mut argv = vec![self.ssh.program.to_string_lossy().into_owned()];
        if let Some(config) = &self.ssh.config_file {
            argv.extend(["-F".to_string(), config.to_string_lossy().into_owned()]);
        }
        for option in ["BatchMode=yes", "ConnectTimeout=5", "ControlPath=none"] {
            argv.extend(["-o".to_string(), option.to_string()]);
        }
        argv.extend(["-T".to_string(), self.host.clone(), "true".to_string()]);
        let outcome = SystemExecutor.run(
            &Invocation::argv(argv).with_timeout(Duration::from_secs(30)),
            &Cancel::new(),
        )?;
        Ok(outcome.status == Status::Exited(0))
    }

    /// Waits until the host answers with a boot id other than `previous`
    /// and the agent is connected; runs `power_cycle` once when the
    /// timeout passes. The connected target and its facts.
    fn wait_for_boot(
        &mut self,
        previous: Option<&str>,
    ) -> Result<(SshTarget, BootFacts), ExecError> {
        let mut power_cycled = false;
        let mut deadline = Instant::now() + self.options.timeout;
        let started = Instant::now();
        let mut last = String::from("no answer yet");
        loop {
            if Instant::now() >= deadline {
                match (&self.options.power_cycle, power_cycled) {
                    (Some(argv), false) => {
                        let argv: Vec<String> = argv
                            .iter()
                            .map(|word| word.replace("{host}", &self.host))
                            .collect();
                        self.note(format!(
                            "{}s: no new boot ({last}); power_cycle on the controller: {argv:?}",
                            started.elapsed().as_secs()
                        ));
                        let outcome = SystemExecutor.run(
                            &Invocation::argv(argv).with_timeout(Duration::from_secs(300)),
                            &Cancel::new(),
                        )?;
                        self.note(format!(
                            "power_cycle: {}: {}",
                            outcome.status,
                            outcome.output_tail(400).trim()
                        ));
                        power_cycled = true;
                        deadline = Instant::now() + self.options.timeout;
                        continue;
                    }
                    _ => {
                        return Err(self.failed(format!(
                            "{} did not come back with a new boot within {}s{} (last: {last})",
                            self.host,
                            self.options.timeout.as_secs(),
                            if power_cycled {
                                " after power_cycle"
                            } else {
                                ""
                            }
                        )));
                    }
                }
            }
            if !self.answers()? {
                last = "ssh true did not succeed".to_string();
                std::thread::sleep(Duration::from_secs(2));
                continue;
            }
            let target = match SshTarget::connect(&self.host, self.ssh.clone(), self.agent.clone())
            {
                Ok(target) => target,
                Err(error) => {
                    last = format!("connect the agent: {error}");
                    std::thread::sleep(Duration::from_secs(2));
                    continue;
                }
            };
            match read_boot_facts(&target) {
                // The old system still answering before it went down.
                Ok(facts) if previous == Some(facts.boot_id.as_str()) => {
                    last = format!(
                        "the boot id is still the previous boot's ({})",
                        facts.boot_id
                    );
                    drop(target);
                    std::thread::sleep(Duration::from_secs(2));
                }
                Ok(facts) => {
                    self.note(format!(
                        "{}s: ssh true answered; boot id {}, release {}, /proc/cmdline `{}`",
                        started.elapsed().as_secs(),
                        facts.boot_id,
                        facts.kernel_release,
                        facts.command_line
                    ));
                    return Ok((target, facts));
                }
                Err(message) => {
                    last = message;
                    std::thread::sleep(Duration::from_secs(2));
                }
            }
        }
    }

    /// The connected host, connecting (and waiting for it) first if needed.
    fn connected(&mut self) -> Result<&SshTarget, ExecError> {
        if self.current.is_none() {
            let target = match SshTarget::connect(&self.host, self.ssh.clone(), self.agent.clone())
            {
                Ok(target) => target,
                Err(error) => {
                    self.note(format!("connect: {error}; waiting for the host"));
                    self.wait_for_boot(None)?.0
                }
            };
            self.current = Some(target);
        }
        Ok(self.current.as_ref().expect("connected above"))
    }

    /// Runs `argv` on the host through the agent; a failure to start or a
    /// non-zero exit is a failed boot naming `what`.
    fn run_on_host(
        &mut self,
        what: &str,
        invocation: Invocation,
    ) -> Result<crate::Outcome, ExecError> {
        let target = self.connected()?;
        let result = target.run(&invocation, &Cancel::new());
        match result {
            Ok(outcome) if outcome.status == Status::Exited(0) => {
                self.note(format!("{what}: ok"));
                Ok(outcome)
            }
            Ok(outcome) => {
                let tail = outcome.output_tail(600);
                self.note(format!("{what}: {}: {}", outcome.status, tail.trim()));
                Err(self.failed(format!("{what}: {}: {}", outcome.status, tail.trim())))
            }
            Err(error) => {
                self.note(format!("{what}: {error}"));
                Err(self.failed(format!("{what}: {error}")))
            }
        }
    }
}

impl Booter for SshBooter {
    fn boot(&mut self, spec: &BootSpec) -> Result<BootRecord, ExecError> {
        self.log.clear();
        let started = Instant::now();
        let nonce = hex::encode(random_bytes(16).map_err(|message| self.failed(message))?);
        let mut command_line = spec.command_line.trim().to_string();
        if !command_line.is_empty() {
            command_line.push(' ');
        }
        command_line.push_str(&format!("verdict.boot={nonce}"));
        let previous = {
            let target = self.connected()?;
            read_boot_facts(target).map_err(|message| format!("before the boot: {message}"))
        };
        let previous = previous.map_err(|message| self.failed(message))?;
        self.note(format!(
            "before: boot id {}, release {}",
            previous.boot_id, previous.kernel_release
        ));
        let (proof, expected_release, trigger) = match (&spec.hook, &spec.kernel) {
            (Some(hook), _) => {
                let argv = hook_argv(hook, &nonce, &command_line);
                let invocation = Invocation::argv(argv.clone())
                    .with_env("VERDICT_BOOT_NONCE", nonce.clone())
                    .with_env("VERDICT_BOOT_CMDLINE", command_line.clone())
                    .with_timeout(Duration::from_secs(300));
                self.run_on_host(&format!("hook {argv:?}"), invocation)?;
                (Proof::Hook, String::new(), "reboot")
            }
            (None, Some(kernel)) => {
                let kernel_text = kernel.to_string_lossy().into_owned();
                let head = self.run_on_host(
                    &format!("read the start of {kernel_text}"),
                    Invocation::argv(["head", "-c", "65536", kernel_text.as_str()])
                        .with_output_limit(65536)
                        .with_timeout(Duration::from_secs(60)),
                )?;
                let release = kernel_release_in(&head.stdout, Path::new(kernel))
                    .map_err(|message| self.failed(format!("on {}: {message}", self.host)))?;
                let mut argv = vec!["kexec".to_string(), "-l".to_string(), kernel_text.clone()];
                if let Some(initrd) = &spec.initrd {
                    argv.push(format!("--initrd={}", initrd.to_string_lossy()));
                }
                argv.push(format!("--command-line={command_line}"));
                self.run_on_host(
                    &format!("kexec -l {kernel_text} (release {release})"),
                    Invocation::argv(argv).with_timeout(Duration::from_secs(300)),
                )?;
                (Proof::Full, release, "kexec")
            }
            (None, None) => {
                return Err(self.failed(
                    "the boot names no kernel to kexec and no hook: give `[target] boot.kernel`, a level's `boot.kernel`, or a level's `boot.hook`",
                ));
            }
        };
        self.run_on_host(
            &format!("detached {trigger}"),
            Invocation::argv(["setsid", "sh", "-c", TRIGGER_SCRIPT, "sh", trigger])
                .with_timeout(Duration::from_secs(60)),
        )?;
        // The connection from before the boot ends here, its master too.
        self.current = None;
        let (target, facts) = self.wait_for_boot(Some(&previous.boot_id))?;
        let boot_time = started.elapsed();
        let expectation = BootExpectation {
            nonce: nonce.clone(),
            command_line: spec.command_line.clone(),
            kernel_release: expected_release,
            kernel_version: None,
            previous_boot_id: Some(previous.boot_id.clone()),
        };
        let reasons = mismatches(&expectation, &facts, proof);
        if !reasons.is_empty() {
            self.note(format!("not proven: {}", reasons.join("; ")));
            self.current = Some(target);
            return Err(self.failed(reasons.join("; ")));
        }
        let nonce_seen = has_nonce(&facts.command_line, &nonce);
        if !nonce_seen {
            self.note(
                "the hook did not put the nonce on the command line: proven by boot id and options",
            );
        }
        self.current = Some(target);
        Ok(BootRecord {
            nonce: nonce_seen.then_some(nonce),
            boot_id: facts.boot_id,
            kernel_release: facts.kernel_release,
            command_line: facts.command_line,
            accelerator: trigger.to_string(),
            boot_time,
            kvm_fallback: None,
        })
    }

    fn target(&self) -> Option<&dyn Target> {
        self.current.as_ref().map(|target| target as &dyn Target)
    }

    fn console_tail(&self) -> String {
        self.log.clone()
    }

    fn shut_down(&mut self) {
        // The host stays up as it is; only the connection ends.
        self.current = None;
    }

    fn host_name(&self) -> Option<String> {
        Some(self.host.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_gets_the_nonce_and_command_line_word_by_word() {
        let argv = hook_argv(
            &[
                "grubby".into(),
                "--args={cmdline}".into(),
                "x{nonce}".into(),
                "$(rm -rf /)".into(),
            ],
            "abc",
            "quiet verdict.boot=abc",
        );
        assert_eq!(
            argv,
            [
                "grubby",
                "--args=quiet verdict.boot=abc",
                "xabc",
                "$(rm -rf /)"
            ]
        );
    }
}
