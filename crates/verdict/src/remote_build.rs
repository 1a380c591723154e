//! `--host` for `bisect` and `check`: build here, measure there. The build
//! runs on this machine in its tree as without `--host`; the files it
//! produced (`--copy PATH`, relative to the tree; by default the
//! experiment's program when that is a path inside the tree) are copied
//! through the ssh target into a directory of the host's verdict cache, and
//! the experiment runs there with that directory (mirroring the tree) as its
//! working directory, its environment read on the host.
//!
//! The flags are read here; the copying and the runs on the host are
//! verdict-engine's (`remote_site`). Must not: start processes itself.

use crate::error::CliError;
use std::path::{Path, PathBuf};
use std::time::Duration;
use verdict_engine::CommandError;
pub(crate) use verdict_engine::bisect::RemoteBuild;
use verdict_engine::bisect::Site;
use verdict_engine::remote_site::{RemoteSite, inside_tree, program_in_tree};
use verdict_exec::{SshTarget, Target};
use verdict_model::{Environment, Experiment};

/// Where a locally built tree is measured.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct RemoteBuildArgs {
    /// Measure on this host over ssh while building here: the build's
    /// output (--copy) is copied to the host's verdict cache and the
    /// experiment runs there. The name is given to `ssh` as is.
    #[arg(long, value_name = "HOST")]
    pub(crate) host: Option<String>,
    /// ssh client configuration file (passed to ssh as -F).
    #[arg(long, value_name = "FILE", requires = "host")]
    pub(crate) ssh_config: Option<PathBuf>,
    /// A file or directory the build produced, relative to the tree, to copy
    /// to the host (repeatable) [default: the experiment's program, when it
    /// is a path inside the tree].
    #[arg(long = "copy", value_name = "PATH", requires = "host")]
    pub(crate) copy: Vec<PathBuf>,
    /// How long the host may stay unreachable after a lost connection
    /// before the measurement stops, e.g. 60s or 5m.
    #[arg(long, value_name = "DURATION", default_value = "60s",
          value_parser = crate::common::parse_timeout)]
    pub(crate) reconnect_timeout: Duration,
}

/// The remote side asked for by `args`, `None` without `--host`. `tree` is
/// where the build runs; the default copy is the experiment's program when
/// it is a path inside it.
pub(crate) fn from_args(
    args: &RemoteBuildArgs,
    experiment: &Experiment,
    tree: &Path,
) -> Result<Option<RemoteBuild>, CliError> {
    let Some(host) = &args.host else {
        return Ok(None);
    };
    if !verdict_exec::valid_host(host) {
        return Err(CliError::input(format!(
            "--host `{host}`: not a valid host name (it must not start with `-` or contain spaces)"
        )));
    }
    let mut copy = Vec::new();
    for path in &args.copy {
        copy.push(inside_tree(path)?);
    }
    if copy.is_empty() {
        match program_in_tree(experiment, tree) {
            Some(program) => copy.push(program),
            None => {
                return Err(CliError::input(format!(
                    "--host {host}: nothing to copy; the experiment's program is not a path inside {}, so name what the build produces with --copy PATH (relative to it)",
                    tree.display()
                )));
            }
        }
    }
    Ok(Some(RemoteBuild {
        host: host.clone(),
        ssh_config: args.ssh_config.clone(),
        copy,
        reconnect: verdict_model::ReconnectTimeout::of(args.reconnect_timeout),
    }))
}

/// Connects to the host of `remote` (architecture check, agent); `label`
/// names this use's directory in the host's cache (`VERDICT_CACHE/label/...`).
pub(crate) fn connect(remote: &RemoteBuild, label: &str) -> Result<RemoteMachine, CliError> {
    let mut connected = verdict_engine::machine::connect_hosts(
        std::slice::from_ref(&remote.host),
        remote.ssh_config.as_deref(),
        remote.reconnect.duration().max(Duration::from_secs(1)),
        &crate::target::own_identity()?,
    )?;
    let target = connected.remove(0);
    Ok(RemoteMachine {
        site: RemoteSite::new(remote.clone(), target, label),
    })
}

/// A connected host that measures locally built trees: the engine's site,
/// with the host's environment read as this binary reads it.
#[derive(Debug)]
pub(crate) struct RemoteMachine {
    site: RemoteSite,
}

impl RemoteMachine {
    pub(crate) fn target(&self) -> &SshTarget {
        self.site.target()
    }

    /// The host's environment, read on the host.
    pub(crate) fn environment(&self) -> Environment {
        verdict_engine::machine::EnvironmentSource::new(self.site.target()).capture()
    }

    /// `experiment` as it runs on the host, the build output of `tree`
    /// copied there under `key` (once per key and session).
    pub(crate) fn stage(
        &mut self,
        experiment: &Experiment,
        tree: &Path,
        key: &str,
    ) -> Result<Experiment, CliError> {
        Ok(self.site.stage(experiment, tree, key)?)
    }

    /// Removes this use's directory on the host; a failure is a warning.
    pub(crate) fn remove_all(&self) {
        if !self.site.remove_all() {
            eprintln!(
                "verdict: warning: could not remove {} on {}",
                self.site.base(),
                self.site.host()
            );
        }
    }
}

impl Site for RemoteMachine {
    fn executor(&self) -> &dyn Target {
        self.site.target()
    }

    fn environment(&self) -> Environment {
        RemoteMachine::environment(self)
    }

    fn stage(
        &mut self,
        experiment: &Experiment,
        tree: &Path,
        key: &str,
    ) -> Result<Experiment, CommandError> {
        self.site.stage(experiment, tree, key)
    }

    fn remove_all(&self) {
        RemoteMachine::remove_all(self);
    }
}
