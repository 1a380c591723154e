//! `verdict doctor --host`: the agent on a host runs doctor there, so its
//! calibration loop times the host's own CPU. This module starts that run
//! through the host's ssh target; the caller prints what it wrote.

use std::time::Duration;

use verdict_exec::{Cancel, ExecError, Invocation, Outcome, SshTarget, Target};

/// How long a host's doctor may take (`--long` calibrates for about a
/// minute; the rest is the host's checks).
const DOCTOR_TIMEOUT: Duration = Duration::from_secs(600);

/// The doctor a host runs: its flags as the host's verdict reads them.
#[derive(Debug, Clone, PartialEq)]
pub struct HostDoctor {
    pub quick: bool,
    pub long: bool,
    pub threshold: Option<f64>,
    /// The `--format` word (`text`, `json`, `email`).
    pub format: &'static str,
}

impl HostDoctor {
    /// The arguments after the agent's path.
    fn arguments(&self) -> Vec<String> {
        let mut argv = vec!["doctor".to_string()];
        if self.quick {
            argv.push("--quick".to_string());
        }
        if self.long {
            argv.push("--long".to_string());
        }
        if let Some(threshold) = self.threshold {
            argv.extend(["--threshold".to_string(), threshold.to_string()]);
        }
        argv.extend(["--format".to_string(), self.format.to_string()]);
        argv
    }
}

/// Runs `doctor` on `target` through its agent binary; the outcome holds
/// the report (stdout), its notes (stderr) and its exit status.
pub fn run_on_host(target: &SshTarget, doctor: &HostDoctor) -> Result<Outcome, ExecError> {
    let mut argv = vec![target.remote_agent_path()];
    argv.extend(doctor.arguments());
    target.run(
        &Invocation::argv(argv).with_timeout(DOCTOR_TIMEOUT),
        &Cancel::new(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_reads_the_flags_it_was_given() {
        let doctor = HostDoctor {
            quick: true,
            long: false,
            threshold: Some(0.02),
            format: "json",
        };
        assert_eq!(
            doctor.arguments(),
            [
                "doctor",
                "--quick",
                "--threshold",
                "0.02",
                "--format",
                "json"
            ]
        );
    }
}
