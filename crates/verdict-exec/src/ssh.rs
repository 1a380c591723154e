//! `SshTarget`: another machine as a [`Target`](crate::Target), reached with
//! the system OpenSSH client (`ssh`, which honours `~/.ssh/config`, or the
//! file given as `-F`).
//!
//! Per target: one ControlMaster connection (`BatchMode=yes`,
//! `ConnectTimeout`, `ServerAliveInterval`; its socket in a private 0700
//! temporary directory; `ControlPersist` so it ends by itself
//! [`MASTER_LINGER`] after its last session even if verdict is killed),
//! a probe of the far side's architecture and agent,
//! the agent copied when missing or of another build, and one persistent
//! session to `verdict agent` speaking the JSON lines of [`crate::agent`].
//! Every iteration is timed by the agent on the target; the network only
//! carries requests and replies. The ssh processes run in their own process
//! group, so a terminal's Ctrl-C reaches verdict (which cancels) and never
//! cuts the connection by itself.
//!
//! Commands ssh runs directly (the probe, the copy, the agent) are argv
//! lists quoted word by word for the far side's shell ([`crate::remote`]);
//! their shell scripts are constants and take values only as positional
//! arguments. A connection lost during a request is
//! [`ExecError::ConnectionLost`]; the next request reconnects with bounded
//! backoff, and a host that stays unreachable past
//! [`SshOptions::host_down_after`] is [`ExecError::HostDown`] from then on.
//!
//! Must not: send or store a password or key (BatchMode=yes: ssh fails
//! rather than prompts), build a remote command by pasting a value into
//! shell text, or time iterations on this side.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::agent::{ErrorKind, Reply, Request, WireInvocation};
use crate::remote::remote_command;
use crate::{Cancel, ExecError, Invocation, Outcome, Status, SystemExecutor, Target};

/// How the ssh client is run.
#[derive(Debug, Clone)]
pub struct SshOptions {
    /// The ssh client (`ssh` from `PATH` by default).
    pub program: PathBuf,
    /// A client configuration file, passed as `-F` (default: the user's).
    pub config_file: Option<PathBuf>,
    /// `ConnectTimeout`, and how long the agent gets to answer its first
    /// request.
    pub connect_timeout: Duration,
    /// How long reconnecting keeps trying after a lost connection before the
    /// host is declared down.
    pub host_down_after: Duration,
}

impl Default for SshOptions {
    fn default() -> Self {
        Self {
            program: PathBuf::from("ssh"),
            config_file: None,
            connect_timeout: Duration::from_secs(10),
            host_down_after: Duration::from_secs(60),
        }
    }
}

/// The agent to run on the target: this verdict binary.
#[derive(Debug, Clone)]
pub struct AgentBinary {
    /// The executable on this machine, copied to targets that lack it.
    pub local_path: PathBuf,
    /// Its file name in the target's cache directory,
    /// e.g. `agent-0.1.0-1a2b3c4d5e6f7a8b`.
    pub file_name: String,
    /// What `AGENT agent --identity` prints; another answer means another
    /// build, which is replaced.
    pub identity: String,
    /// The architecture it was built for, as `uname -m` prints it.
    pub architecture: String,
}

/// Prints the architecture, the agent's absolute path and the agent's
/// identity (or `missing`). `$1` is the agent's file name.
const PROBE_SCRIPT: &str = r#"directory="${XDG_CACHE_HOME:-$HOME/.cache}/verdict"
uname -m
printf '%s\n' "$directory/$1"
if [ -x "$directory/$1" ]; then "$directory/$1" agent --identity 2>/dev/null || echo unusable; else echo missing; fi"#;

/// Writes standard input to `$1` atomically (a temporary file renamed over
/// it), creating the directory.
const INSTALL_SCRIPT: &str = r#"set -e
mkdir -p "$(dirname "$1")"
chmod 700 "$(dirname "$1")"
temporary="$1.part.$$"
cat > "$temporary"
chmod 700 "$temporary"
mv -f "$temporary" "$1""#;

/// How long a master connection outlives its last session.
pub const MASTER_LINGER: Duration = Duration::from_secs(15);

/// A remote machine reached over ssh; see the module documentation.
pub struct SshTarget {
    host: String,
    options: SshOptions,
    agent: AgentBinary,
    control_directory: PathBuf,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    session: Option<Session>,
    remote_agent_path: String,
    /// Target clock minus controller clock, from the agent's hello.
    clock_offset_ms: i64,
    /// Set once the host stayed unreachable past `host_down_after`.
    down: Option<String>,
}

struct Session {
    child: Child,
    input: ChildStdin,
    replies: Receiver<String>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Whether `host` can be given to ssh as a destination: not an option
/// (`-oProxyCommand=...`), no whitespace or control characters.
pub fn valid_host(host: &str) -> bool {
    !host.is_empty()
        && !host.starts_with('-')
        && !host
            .chars()
            .any(|character| character.is_whitespace() || character.is_control())
}

impl SshTarget {
    /// Connects to `host`: the master connection, the architecture check,
    /// the agent (copied when missing or stale) and its session. Every
    /// failure here is a clear error before anything is measured.
    pub fn connect(host: &str, options: SshOptions, agent: AgentBinary) -> Result<Self, ExecError> {
        if !valid_host(host) {
            return Err(ExecError::Target {
                host: host.to_string(),
                message: "not a valid host name (it must not start with `-` or contain spaces)"
                    .to_string(),
            });
        }
        let control_directory = private_directory().map_err(|error| ExecError::Target {
            host: host.to_string(),
            message: format!("create a private directory for the control socket: {error}"),
        })?;
        let target = Self {
            host: host.to_string(),
            options,
            agent,
            control_directory,
            state: Mutex::new(State::default()),
        };
        {
            let mut state = lock(&target.state);
            target.start_master()?;
            target.prepare_agent(&mut state)?;
            target.start_session(&mut state)?;
        }
        Ok(target)
    }

    /// The host name as given.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The agent's absolute path on the target.
    pub fn remote_agent_path(&self) -> String {
        lock(&self.state).remote_agent_path.clone()
    }

    fn error(&self, message: impl Into<String>) -> ExecError {
        ExecError::Target {
            host: self.host.clone(),
            message: message.into(),
        }
    }

    fn control_path(&self) -> PathBuf {
        self.control_directory.join("control")
    }

    /// `ssh` and the options every call shares.
    fn base_command(&self) -> Vec<String> {
        let mut argv = vec![self.options.program.to_string_lossy().into_owned()];
        if let Some(config) = &self.options.config_file {
            argv.push("-F".to_string());
            argv.push(config.to_string_lossy().into_owned());
        }
        let timeout = self.options.connect_timeout.as_secs().max(1);
        for option in [
            "BatchMode=yes".to_string(),
            format!("ConnectTimeout={timeout}"),
            "ServerAliveInterval=5".to_string(),
            "ServerAliveCountMax=3".to_string(),
            format!("ControlPath={}", self.control_path().display()),
        ] {
            argv.push("-o".to_string());
            argv.push(option);
        }
        argv
    }

    /// The argv that runs `remote` (an argv on the far side) through the
    /// master connection.
    fn through_master(&self, remote: &[&str]) -> Vec<String> {
        let mut argv = self.base_command();
        argv.extend([
            "-o".to_string(),
            "ControlMaster=no".to_string(),
            "-T".to_string(),
            self.host.clone(),
            remote_command(remote),
        ]);
        argv
    }

    /// Starts the master connection. It backgrounds itself once logged in
    /// (ControlPersist) and ends by itself [`MASTER_LINGER`] after its last
    /// session closes, so even a controller killed with SIGKILL leaves no
    /// ssh process behind for long; a clean end stops it at once.
    fn start_master(&self) -> Result<(), ExecError> {
        self.stop_master();
        let _ = std::fs::remove_file(self.control_path());
        let mut argv = self.base_command();
        argv.extend([
            "-o".to_string(),
            "ControlMaster=yes".to_string(),
            "-o".to_string(),
            format!("ControlPersist={}", MASTER_LINGER.as_secs()),
            "-N".to_string(),
            self.host.clone(),
        ]);
        let errors_path = self.control_directory.join("master.err");
        let errors = std::fs::File::create(&errors_path)
            .map_err(|error| self.error(format!("create {}: {error}", errors_path.display())))?;
        let mut child = command(&argv)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(errors))
            .spawn()
            .map_err(|error| self.error(format!("start `{}`: {error}", argv[0])))?;
        let deadline = Instant::now() + self.options.connect_timeout + Duration::from_secs(5);
        loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    if status.success() && self.control_path().exists() {
                        return Ok(());
                    }
                    let stderr = std::fs::read_to_string(&errors_path).unwrap_or_default();
                    return Err(self.error(connection_message(&stderr)));
                }
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(self.error("connection timed out"));
                }
            }
        }
    }

    /// Asks the master connection, if any, to exit (`ssh -O exit`).
    fn stop_master(&self) {
        if !self.control_path().exists() {
            return;
        }
        let mut argv = self.base_command();
        argv.extend(["-O".to_string(), "exit".to_string(), self.host.clone()]);
        let _ = command(&argv)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }

    /// Runs `remote` on the far side through the master; its outcome.
    fn run_remote(&self, remote: &[&str]) -> Result<Outcome, ExecError> {
        let argv = self.through_master(remote);
        SystemExecutor.run(
            &Invocation::argv(argv).with_timeout(self.options.connect_timeout * 6),
            &Cancel::new(),
        )
    }

    /// Runs `argv` on the target with ssh alone (no agent): one ssh process
    /// through the master connection, every argument quoted for the remote
    /// shell. The outcome's times are this side's (they include the
    /// network); for bootstrap and for comparison with the agent.
    pub fn run_direct(&self, argv: &[&str]) -> Result<Outcome, ExecError> {
        self.run_remote(argv)
    }

    fn prepare_agent(&self, state: &mut State) -> Result<(), ExecError> {
        let probe = |target: &Self| -> Result<(String, String, String), ExecError> {
            let outcome =
                target.run_remote(&["sh", "-c", PROBE_SCRIPT, "sh", &target.agent.file_name])?;
            if outcome.status != Status::Exited(0) {
                return Err(target.error(format!(
                    "probe the target (uname -m): {}: {}",
                    outcome.status,
                    outcome.output_tail(400).trim()
                )));
            }
            let text = String::from_utf8_lossy(&outcome.stdout).into_owned();
            let mut lines = text.lines().map(str::to_string);
            let architecture = lines.next().unwrap_or_default();
            let path = lines.next().unwrap_or_default();
            let identity = lines.next().unwrap_or_default();
            Ok((architecture, path, identity))
        };
        let (architecture, path, identity) = probe(self)?;
        if architecture != self.agent.architecture {
            return Err(self.error(format!(
                "the target's architecture is {architecture}, this verdict is built for {}; install verdict for {architecture} on the controller or run verdict on the target itself",
                self.agent.architecture
            )));
        }
        if !path.starts_with('/') {
            return Err(self.error(format!(
                "could not resolve the agent's cache directory (got `{path}`); is HOME set on the target?"
            )));
        }
        state.remote_agent_path = path.clone();
        if identity == self.agent.identity {
            return Ok(());
        }
        self.install_agent(&path)?;
        let (_, _, identity) = probe(self)?;
        if identity != self.agent.identity {
            return Err(self.error(format!(
                "the agent copied to {path} does not run (it answered `{identity}`); is the target's file system mounted noexec?"
            )));
        }
        Ok(())
    }

    fn install_agent(&self, path: &str) -> Result<(), ExecError> {
        self.upload(&self.agent.local_path, path)
    }

    /// The target's verdict cache directory (where the agent lives), an
    /// absolute path on the target.
    pub fn cache_directory(&self) -> String {
        let agent = self.remote_agent_path();
        match agent.rsplit_once('/') {
            Some((directory, _)) if !directory.is_empty() => directory.to_string(),
            _ => "/".to_string(),
        }
    }

    /// Copies the local file `local` to `remote` (an absolute path on the
    /// target) over ssh's standard input, through the master connection:
    /// written to a temporary name and renamed, mode 0700, its directories
    /// created (0700 for the last one). `remote` reaches the far side only
    /// as a quoted positional parameter of a constant script. A master
    /// connection that is gone is re-established first; a copy that fails
    /// is an error naming the file and the host.
    pub fn upload(&self, local: &Path, remote: &str) -> Result<(), ExecError> {
        let file = std::fs::File::open(local)
            .map_err(|error| self.error(format!("read {}: {error}", local.display())))?;
        if !self.control_path().exists() {
            self.start_master()?;
        }
        let argv = self.through_master(&["sh", "-c", INSTALL_SCRIPT, "sh", remote]);
        let output = command(&argv)
            .stdin(Stdio::from(file))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|error| self.error(format!("start `{}`: {error}", argv[0])))?;
        if !output.status.success() {
            return Err(self.error(format!(
                "copy {} to {remote}: {}",
                local.display(),
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        Ok(())
    }

    fn start_session(&self, state: &mut State) -> Result<(), ExecError> {
        state.session = None;
        let argv = self.through_master(&[&state.remote_agent_path, "agent"]);
        let mut child = command(&argv)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|error| self.error(format!("start `{}`: {error}", argv[0])))?;
        let input = child.stdin.take().expect("piped");
        let output = child.stdout.take().expect("piped");
        let mut error_pipe = child.stderr.take().expect("piped");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let stderr_tail = Arc::clone(&stderr);
        std::thread::Builder::new()
            .name(format!("verdict-ssh-stderr-{}", self.host))
            .spawn(move || {
                let mut buffer = [0u8; 4096];
                while let Ok(count) = error_pipe.read(&mut buffer) {
                    if count == 0 {
                        break;
                    }
                    let mut tail = lock(&stderr_tail);
                    tail.extend_from_slice(&buffer[..count]);
                    let excess = tail.len().saturating_sub(4096);
                    tail.drain(..excess);
                }
            })
            .map_err(|error| self.error(format!("start a reader thread: {error}")))?;
        let (sender, replies) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name(format!("verdict-ssh-replies-{}", self.host))
            .spawn(move || {
                for line in BufReader::new(output).lines() {
                    let Ok(line) = line else { break };
                    if sender.send(line).is_err() {
                        break;
                    }
                }
            })
            .map_err(|error| self.error(format!("start a reader thread: {error}")))?;
        state.session = Some(Session {
            child,
            input,
            replies,
            stderr,
        });
        // The first hello's round trip includes the agent's start-up, so
        // the clock offset comes from the following ones, the one with the
        // shortest round trip (as NTP picks its sample: the error of the
        // midpoint is at most half the round trip).
        let mut best: Option<(i64, i64)> = None;
        for attempt in 0..4 {
            let sent_at = crate::local::now_unix_ms();
            let reply = self
                .exchange_locked(
                    state,
                    &Request::Hello,
                    &Cancel::new(),
                    Some(self.options.connect_timeout),
                )
                .map_err(|error| {
                    state.session = None;
                    self.error(format!(
                        "the agent at {} did not answer: {error}",
                        state.remote_agent_path
                    ))
                })?;
            let received_at = crate::local::now_unix_ms();
            match reply {
                Reply::Hello { now_unix_ms, .. } => {
                    let round_trip = received_at - sent_at;
                    if attempt > 0 && best.is_none_or(|(shortest, _)| round_trip < shortest) {
                        best = Some((round_trip, now_unix_ms - (sent_at + received_at) / 2));
                    }
                }
                other => {
                    return Err(self.error(format!("the agent answered hello with {other:?}")));
                }
            }
        }
        state.clock_offset_ms = best.map_or(0, |(_, offset)| offset);
        Ok(())
    }

    /// Reconnects after a lost connection, with backoff (0.25 s doubling to
    /// 4 s) until `host_down_after`; then the host is down for good.
    fn reconnect(&self, state: &mut State) -> Result<(), ExecError> {
        if let Some(reason) = &state.down {
            return Err(ExecError::HostDown {
                host: self.host.clone(),
                message: reason.clone(),
            });
        }
        let give_up_at = Instant::now() + self.options.host_down_after;
        let mut delay = Duration::from_millis(250);
        loop {
            let attempt = self
                .start_master()
                .and_then(|()| self.prepare_agent(state))
                .and_then(|()| self.start_session(state));
            match attempt {
                Ok(()) => return Ok(()),
                Err(error) => {
                    if Instant::now() + delay >= give_up_at {
                        let reason = format!(
                            "unreachable for {}s after the connection was lost ({error})",
                            self.options.host_down_after.as_secs()
                        );
                        state.down = Some(reason.clone());
                        return Err(ExecError::HostDown {
                            host: self.host.clone(),
                            message: reason,
                        });
                    }
                    std::thread::sleep(delay);
                    delay = (delay * 2).min(Duration::from_secs(4));
                }
            }
        }
    }

    /// Sends one request and waits for its reply, forwarding a cancellation.
    fn exchange(&self, request: &Request, cancel: &Cancel) -> Result<Reply, ExecError> {
        let mut state = lock(&self.state);
        if state.session.is_none() {
            self.reconnect(&mut state)?;
        }
        self.exchange_locked(&mut state, request, cancel, None)
    }

    fn exchange_locked(
        &self,
        state: &mut State,
        request: &Request,
        cancel: &Cancel,
        limit: Option<Duration>,
    ) -> Result<Reply, ExecError> {
        let lost = |state: &mut State| {
            let detail = state
                .session
                .as_ref()
                .map(|session| {
                    String::from_utf8_lossy(&lock(&session.stderr))
                        .trim()
                        .to_string()
                })
                .unwrap_or_default();
            state.session = None;
            ExecError::ConnectionLost {
                host: self.host.clone(),
                detail,
            }
        };
        let Some(session) = state.session.as_mut() else {
            return Err(lost(state));
        };
        let mut line =
            serde_json::to_string(request).map_err(|error| self.error(error.to_string()))?;
        line.push('\n');
        if session
            .input
            .write_all(line.as_bytes())
            .and_then(|()| session.input.flush())
            .is_err()
        {
            return Err(lost(state));
        }
        let started = Instant::now();
        let mut cancel_sent = false;
        loop {
            let session = state.session.as_mut().expect("checked above");
            match session.replies.recv_timeout(Duration::from_millis(50)) {
                Ok(text) => {
                    return serde_json::from_str::<Reply>(&text)
                        .map_err(|error| self.error(format!("the agent sent `{text}`: {error}")));
                }
                Err(RecvTimeoutError::Disconnected) => return Err(lost(state)),
                Err(RecvTimeoutError::Timeout) => {
                    if cancel.is_cancelled() && !cancel_sent {
                        cancel_sent = true;
                        let mut cancel_line =
                            serde_json::to_string(&Request::Cancel).unwrap_or_default();
                        cancel_line.push('\n');
                        let _ = session.input.write_all(cancel_line.as_bytes());
                        let _ = session.input.flush();
                    }
                    if limit.is_some_and(|limit| started.elapsed() > limit) {
                        state.session = None;
                        return Err(self.error("no answer in time"));
                    }
                }
            }
        }
    }

    fn io_request(&self, request: Request) -> io::Result<Reply> {
        match self.exchange(&request, &Cancel::new()) {
            Ok(Reply::Error { kind, message }) => Err(match kind {
                ErrorKind::NotFound => io::Error::new(io::ErrorKind::NotFound, message),
                ErrorKind::PermissionDenied => {
                    io::Error::new(io::ErrorKind::PermissionDenied, message)
                }
                _ => io::Error::other(message),
            }),
            Ok(reply) => Ok(reply),
            Err(error) => Err(io::Error::other(error.to_string())),
        }
    }
}

impl Target for SshTarget {
    fn run(&self, invocation: &Invocation, cancel: &Cancel) -> Result<Outcome, ExecError> {
        if cancel.is_cancelled() {
            return Err(ExecError::Cancelled);
        }
        let reply = self.exchange(
            &Request::Run(WireInvocation::from_invocation(invocation)),
            cancel,
        )?;
        match reply {
            Reply::Outcome(wire) => wire
                .to_outcome()
                .ok_or_else(|| self.error("the agent sent a malformed outcome")),
            Reply::Error {
                kind: ErrorKind::Cancelled,
                ..
            } => Err(ExecError::Cancelled),
            Reply::Error { message, .. } => Err(self.error(message)),
            other => Err(self.error(format!("the agent answered a run with {other:?}"))),
        }
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        match self.io_request(Request::Read {
            path: path.to_string_lossy().into_owned(),
        })? {
            Reply::File { hex } => hex::decode(hex).map_err(io::Error::other),
            other => Err(io::Error::other(format!("unexpected reply {other:?}"))),
        }
    }

    fn list_directory(&self, path: &Path) -> io::Result<Vec<String>> {
        match self.io_request(Request::List {
            path: path.to_string_lossy().into_owned(),
        })? {
            Reply::Entries { names } => Ok(names),
            other => Err(io::Error::other(format!("unexpected reply {other:?}"))),
        }
    }

    fn now_unix_ms(&self) -> i64 {
        crate::local::now_unix_ms() + lock(&self.state).clock_offset_ms
    }

    fn target_name(&self) -> &str {
        &self.host
    }
}

impl Drop for SshTarget {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        state.session = None;
        self.stop_master();
        let _ = std::fs::remove_dir_all(&self.control_directory);
    }
}

impl std::fmt::Debug for SshTarget {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SshTarget")
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

/// A `Command` for `argv` in its own process group (a terminal's Ctrl-C
/// must not cut the connection under a run that is being cancelled).
fn command(argv: &[String]) -> Command {
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]).process_group(0);
    command
}

/// A fresh 0700 directory under the temporary directory.
fn private_directory() -> io::Result<PathBuf> {
    let base = std::env::temp_dir();
    let mut attempt = 0u32;
    loop {
        let candidate = base.join(format!(
            "verdict-ssh-{}-{}-{attempt}",
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

/// The reason ssh gave for not connecting, in words a user can act on.
fn connection_message(stderr: &str) -> String {
    let text = stderr.trim();
    if text.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
        || text.contains("Host key verification failed")
    {
        return format!(
            "host key verification failed (the host's key is unknown or does not match known_hosts; verdict never accepts a key by itself): {}",
            text.lines().last().unwrap_or("")
        );
    }
    if text.contains("Permission denied") {
        return format!(
            "authentication failed (verdict uses BatchMode: set up key-based login or an ssh-agent): {}",
            text.lines().last().unwrap_or("")
        );
    }
    let last = text
        .lines()
        .last()
        .unwrap_or("ssh exited without a message");
    format!("cannot connect: {last}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_that_would_be_options_are_refused() {
        assert!(valid_host("lpar1"));
        assert!(valid_host("user@host.example:22"));
        assert!(!valid_host("-oProxyCommand=touch /tmp/x"));
        assert!(!valid_host("a b"));
        assert!(!valid_host(""));
        assert!(!valid_host("a\nb"));
    }

    #[test]
    fn connection_messages_name_the_cause() {
        assert!(
            connection_message("Host key verification failed.\n")
                .starts_with("host key verification failed")
        );
        assert!(
            connection_message("ssh: connect to host 127.0.0.1 port 1: Connection refused\n")
                .ends_with("Connection refused")
        );
        assert!(
            connection_message("root@x: Permission denied (publickey).")
                .starts_with("authentication failed")
        );
    }
}
