//! What exactly ran, as every report's header states it: the commit, the
//! machines the workload ran on (the host, or per boot level the booted
//! guest, with the controller that booted it labelled as such), each one's
//! CPU identity and performance-relevant features, kernel release, the
//! compiler that built that kernel, its config, the build of the measured
//! program, and the command that reproduces the run with the experiment
//! file's hash. Built from stored environments only.
//!
//! Must not: read anything, render, or compute statistics.

use crate::boots::ReportBoot;
use schemars::JsonSchema;
use serde::Serialize;
use verdict_model::{BuildProvenance, CpuFeature, CpuIdentity, Environment};

/// Which part a machine played in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MachineRole {
    /// The machine the workload ran on (this one, or an ssh host).
    Host,
    /// A booted machine the workload ran on (a VM guest, a host booted per
    /// boot level), one entry per boot level.
    Guest,
    /// The machine that ran verdict and booted the guests: not measured.
    Controller,
}

impl MachineRole {
    pub fn as_str(self) -> &'static str {
        match self {
            MachineRole::Host => "host",
            MachineRole::Guest => "guest",
            MachineRole::Controller => "controller",
        }
    }
}

/// One machine's provenance facts.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MachineProvenance {
    pub role: MachineRole,
    /// A guest's boot level (`preempt=full`); `None` for a host.
    pub level: Option<String>,
    /// A guest's proven boots whose environment was read.
    pub boots: Vec<u32>,
    pub hostname: Option<String>,
    pub cpu_model: Option<String>,
    pub cpu_identity: Option<CpuIdentity>,
    pub cpu_features: Vec<CpuFeature>,
    /// `2 (online 0-1)`.
    pub cpus: Option<String>,
    pub smt: Option<String>,
    pub kernel_release: Option<String>,
    pub kernel_compiler: Option<String>,
    pub kernel_cmdline: Option<String>,
    pub kernel_config_source: Option<String>,
    pub kernel_config_sha256: Option<String>,
    pub virtualization: Option<String>,
    pub build: Option<BuildProvenance>,
}

impl MachineProvenance {
    /// The facts of `environment` in `role`.
    pub fn of(environment: &Environment, role: MachineRole) -> Self {
        MachineProvenance {
            role,
            level: None,
            boots: Vec::new(),
            hostname: environment.hostname.clone(),
            cpu_model: environment.cpu_model.clone(),
            cpu_identity: environment.cpu_identity.clone(),
            cpu_features: environment.cpu_features.clone(),
            cpus: cpus_line(environment),
            smt: environment.smt.clone(),
            kernel_release: environment.kernel_release.clone(),
            kernel_compiler: environment.kernel_compiler.clone(),
            kernel_cmdline: environment.kernel_cmdline.as_deref().map(|line| {
                // The boot nonce is new on every boot by design.
                line.split_whitespace()
                    .filter(|word| !word.starts_with("verdict.boot="))
                    .collect::<Vec<_>>()
                    .join(" ")
            }),
            kernel_config_source: environment.kernel_config_source.clone(),
            kernel_config_sha256: environment.kernel_config_sha256.clone(),
            virtualization: environment.virtualization.clone(),
            // The measured program's build, else the kernel verdict built
            // and booted.
            build: environment.build.clone().or_else(|| {
                environment
                    .kernel_build
                    .as_ref()
                    .map(verdict_model::KernelBuild::provenance)
            }),
        }
    }

    /// `host vm`, `guest preempt=full (boots 0, 3)`, `controller vm`.
    pub fn title(&self) -> String {
        let mut title = self.role.as_str().to_string();
        if let Some(level) = &self.level {
            title.push(' ');
            title.push_str(level);
        } else if let Some(host) = &self.hostname {
            title.push(' ');
            title.push_str(host);
        }
        if !self.boots.is_empty() {
            title.push_str(&format!(
                " (boot{} {})",
                if self.boots.len() == 1 { "" } else { "s" },
                self.boots
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        title
    }

    /// `AMD EPYC; AuthenticAMD family 26 model 2 stepping 1 microcode
    /// 0x1000065`: the model name and the identity, as far as recorded.
    pub fn cpu_line(&self) -> Option<String> {
        let identity = self
            .cpu_identity
            .as_ref()
            .map(CpuIdentity::line)
            .filter(|line| !line.is_empty());
        match (&self.cpu_model, identity) {
            (Some(model), Some(identity)) => Some(format!("{model}; {identity}")),
            (Some(model), None) => Some(model.clone()),
            (None, identity) => identity,
        }
    }

    /// `6.1.0-57-amd64, built by gcc-12 (Debian 12.2.0-14) 12.2.0, ...`.
    pub fn kernel_line(&self) -> Option<String> {
        let release = self.kernel_release.clone()?;
        Some(match &self.kernel_compiler {
            Some(compiler) => format!("{release}, built by {compiler}"),
            None => release,
        })
    }

    /// `/proc/config.gz, sha256 37c1638f8e99ddd5`.
    pub fn config_line(&self) -> Option<String> {
        let hash = self
            .kernel_config_sha256
            .as_ref()
            .map(|hash| hash[..hash.len().min(16)].to_string());
        match (&self.kernel_config_source, hash) {
            (Some(source), Some(hash)) => Some(format!("{source}, sha256 {hash}")),
            (None, Some(hash)) => Some(format!("sha256 {hash}")),
            (Some(source), None) => Some(source.clone()),
            (None, None) => None,
        }
    }
}

/// `2 (online 0-1)`, as the header has always shown the CPUs.
pub fn cpus_line(environment: &Environment) -> Option<String> {
    match (environment.cpu_count, &environment.cpus_online) {
        (Some(count), Some(online)) => Some(format!("{count} (online {online})")),
        (Some(count), None) => Some(count.to_string()),
        (None, online) => online.clone(),
    }
}

/// The command that reproduces a run and the experiment it ran.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Reproduce {
    /// The verdict command line as it was given (the program as `verdict`,
    /// every argument shell-quoted where needed).
    pub command: String,
    /// SHA-256 of the experiment text as read (for `ab`, the generated one).
    pub experiment_sha256: String,
    /// The seed of the run's schedule.
    pub seed: u64,
}

/// Everything a maintainer asks about a run before trusting it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Provenance {
    /// The commit the run measured, when recorded.
    pub commit: Option<String>,
    /// The machines the workload ran on: the host, or one guest per boot
    /// level (in the order of the level's first boot).
    pub machines: Vec<MachineProvenance>,
    /// The machine that booted the guests (a VM run): its environment is
    /// the run's recorded one, labelled so it is not read as the guest's.
    pub controller: Option<MachineProvenance>,
    pub reproduce: Reproduce,
}

/// What [`Provenance::build`] is built from.
#[derive(Debug, Clone, Copy)]
pub struct ProvenanceInput<'a> {
    pub commit: Option<&'a str>,
    pub command_line: &'a [String],
    pub experiment_sha256: &'a str,
    pub seed: u64,
    /// The run's environment at its start.
    pub environment: &'a Environment,
    /// The run's boots (empty for a run that booted nothing).
    pub boots: &'a [ReportBoot],
}

impl Provenance {
    pub fn build(input: ProvenanceInput<'_>) -> Provenance {
        let mut guests: Vec<MachineProvenance> = Vec::new();
        for boot in input.boots.iter().filter(|boot| boot.status.booted()) {
            let Some(environment) = &boot.environment else {
                continue;
            };
            match guests
                .iter_mut()
                .find(|guest| guest.level.as_deref() == Some(boot.level_key.as_str()))
            {
                Some(guest) => guest.boots.push(boot.id),
                None => {
                    let mut guest = MachineProvenance::of(environment, MachineRole::Guest);
                    guest.level = Some(boot.level_key.clone());
                    guest.boots = vec![boot.id];
                    guests.push(guest);
                }
            }
        }
        let (machines, controller) = if guests.is_empty() {
            (
                vec![MachineProvenance::of(input.environment, MachineRole::Host)],
                None,
            )
        } else {
            (
                guests,
                Some(MachineProvenance::of(
                    input.environment,
                    MachineRole::Controller,
                )),
            )
        };
        // A bisection's measurement records its build; so may any run. Boot
        // levels that built different commits have no one commit: each
        // machine names its own.
        let commit = input.commit.map(str::to_string).or_else(|| {
            let mut built: Vec<String> = machines
                .iter()
                .chain(&controller)
                .filter_map(|machine| machine.build.as_ref()?.commit.clone())
                .collect();
            built.dedup();
            match built.as_slice() {
                [one] => Some(one.clone()),
                _ => None,
            }
        });
        Provenance {
            commit,
            machines,
            controller,
            reproduce: Reproduce {
                command: command_line(input.command_line),
                experiment_sha256: input.experiment_sha256.to_string(),
                seed: input.seed,
            },
        }
    }
}

/// `verdict run examples/smt-switch.toml --db 'my db.db'`: the stored argv
/// with the program shown as `verdict` and each argument quoted for a
/// POSIX shell when it needs it.
pub fn command_line(argv: &[String]) -> String {
    let mut words = vec!["verdict".to_string()];
    words.extend(argv.iter().skip(1).map(|word| shell_word(word)));
    words.join(" ")
}

/// `word` as a POSIX shell reads it back: as is when it holds only safe
/// characters, else in single quotes (a quote inside as `'\''`).
pub fn shell_word(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || "-_./=:,+%@".contains(character));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boot(id: u32, level: &str, release: &str) -> ReportBoot {
        ReportBoot {
            id,
            level_key: level.to_string(),
            status: verdict_model::BootStatus::Complete,
            accelerator: Some("tcg".to_string()),
            kernel_release: Some(release.to_string()),
            message: None,
            console_tail: None,
            environment: Some(Environment {
                kernel_release: Some(release.to_string()),
                kernel_cmdline: Some(format!("quiet verdict.boot=abc{id} {level}")),
                kernel_config_source: Some("controller:/boot/config-6.1".to_string()),
                kernel_config_sha256: Some("0123456789abcdef0123".to_string()),
                ..Environment::default()
            }),
        }
    }

    #[test]
    fn a_vm_run_leads_with_its_guests_and_labels_the_controller() {
        let controller = Environment {
            hostname: Some("builder".to_string()),
            kernel_release: Some("6.18".to_string()),
            ..Environment::default()
        };
        let boots = [
            boot(0, "preempt=none", "6.1"),
            boot(1, "preempt=full", "6.1"),
            boot(2, "preempt=none", "6.1"),
        ];
        let argv: Vec<String> = ["/usr/bin/verdict", "run", "my file.toml", "--seed", "7"]
            .map(String::from)
            .to_vec();
        let provenance = Provenance::build(ProvenanceInput {
            commit: None,
            command_line: &argv,
            experiment_sha256: "feed",
            seed: 7,
            environment: &controller,
            boots: &boots,
        });
        assert_eq!(provenance.machines.len(), 2);
        assert_eq!(
            provenance.machines[0].title(),
            "guest preempt=none (boots 0, 2)"
        );
        assert_eq!(
            provenance.machines[0].kernel_cmdline.as_deref(),
            Some("quiet preempt=none")
        );
        assert_eq!(
            provenance.machines[1].config_line().as_deref(),
            Some("controller:/boot/config-6.1, sha256 0123456789abcdef")
        );
        let controller = provenance.controller.unwrap();
        assert_eq!(controller.title(), "controller builder");
        assert_eq!(
            provenance.reproduce.command,
            "verdict run 'my file.toml' --seed 7"
        );
    }

    #[test]
    fn a_run_without_boots_has_one_host() {
        let environment = Environment {
            hostname: Some("box".to_string()),
            cpu_model: Some("AMD EPYC".to_string()),
            cpu_identity: Some(CpuIdentity {
                vendor: Some("AuthenticAMD".to_string()),
                family: Some("26".to_string()),
                ..CpuIdentity::default()
            }),
            kernel_release: Some("6.1".to_string()),
            kernel_compiler: Some("gcc 12".to_string()),
            build: Some(BuildProvenance {
                commit: Some("abc".to_string()),
                ..BuildProvenance::default()
            }),
            ..Environment::default()
        };
        let provenance = Provenance::build(ProvenanceInput {
            commit: None,
            command_line: &[],
            experiment_sha256: "",
            seed: 1,
            environment: &environment,
            boots: &[],
        });
        assert!(provenance.controller.is_none());
        let host = &provenance.machines[0];
        assert_eq!(host.title(), "host box");
        assert_eq!(
            host.cpu_line().as_deref(),
            Some("AMD EPYC; AuthenticAMD family 26")
        );
        assert_eq!(host.kernel_line().as_deref(), Some("6.1, built by gcc 12"));
        // The build's commit stands for the run's.
        assert_eq!(provenance.commit.as_deref(), Some("abc"));
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn a_guest_booted_from_a_kernel_verdict_built_names_that_build() {
        let build =
            |commit: &str, patches: Vec<verdict_model::AppliedPatch>| verdict_model::KernelBuild {
                source: "/usr/src/linux".to_string(),
                commit: commit.to_string(),
                tree_id: "t".to_string(),
                tarball_sha256: None,
                patches,
                config_recipe: vec!["tinyconfig".to_string()],
                config_sha256: "c0ffee".to_string(),
                compiler: "gcc (Debian 12.2.0-14) 12.2.0".to_string(),
                make: vec!["-j2".to_string(), "bzImage".to_string()],
                release: "6.1.0".to_string(),
                version: None,
                key: "k".to_string(),
                built_at_ms: 0,
                build_seconds: 1.0,
            };
        let mut with = boot(0, "patch=with", "6.1.0");
        let mut without = boot(1, "patch=without", "6.1.0");
        let patch = verdict_model::AppliedPatch {
            name: "fix.patch".to_string(),
            sha256: "ab12".to_string(),
        };
        with.environment.as_mut().unwrap().kernel_build = Some(build("aaaa", vec![patch]));
        without.environment.as_mut().unwrap().kernel_build = Some(build("aaaa", Vec::new()));
        let controller = Environment::default();
        let input = |boots| ProvenanceInput {
            commit: None,
            command_line: &[],
            experiment_sha256: "feed",
            seed: 1,
            environment: &controller,
            boots,
        };
        let boots = [with.clone(), without.clone()];
        let provenance = Provenance::build(input(&boots));
        let built = provenance.machines[0].build.as_ref().unwrap();
        assert_eq!(built.commit.as_deref(), Some("aaaa"));
        assert_eq!(built.command.as_deref(), Some("make -j2 bzImage"));
        assert_eq!(built.patches, vec!["fix.patch ab12".to_string()]);
        assert_eq!(built.config_sha256.as_deref(), Some("c0ffee"));
        // Both levels built one commit: the run's.
        assert_eq!(provenance.commit.as_deref(), Some("aaaa"));
        // Levels that built different commits have no one commit.
        without.environment.as_mut().unwrap().kernel_build = Some(build("bbbb", Vec::new()));
        let boots = [with, without];
        assert_eq!(Provenance::build(input(&boots)).commit, None);
    }
}
