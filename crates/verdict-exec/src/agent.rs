//! The agent protocol: what `verdict agent` (the verdict binary itself,
//! copied to a remote target) and [`SshTarget`](crate::SshTarget) say to
//! each other over one persistent ssh session, one JSON object per line.
//!
//! The controller sends a request (run an invocation, read a file, list a
//! directory, tell the time); the agent answers each with one reply. While a
//! run is in flight the controller may send `{"cancel":true}`, which cancels
//! it (the agent kills the process group, as locally). The agent measures
//! every run with the local [`SystemExecutor`], so wall, user, sys and peak
//! RSS come from the target's own monotonic clock and `wait4`, never from
//! the network. End of input (the connection went away) cancels the run in
//! flight and ends the agent, so nothing it started outlives the session.
//!
//! Must not: print anything but replies on its output, read the controller's
//! files, or start anything not asked for.

use std::io::{self, BufRead, Write};
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{
    Cancel, ExecError, FileSnapshot, Invocation, Leftovers, MonitorRequest, Outcome, Program,
    Snapshots, Status, SystemExecutor, Target,
};

/// One line from the controller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// Run a command and reply with its outcome.
    Run(WireInvocation),
    /// Read a whole file.
    Read { path: String },
    /// List a directory.
    List { path: String },
    /// The agent's wall clock and version.
    Hello,
    /// Cancel the run in flight (ignored when nothing runs).
    Cancel,
}

/// An [`Invocation`] on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireInvocation {
    pub argv: Option<Vec<String>>,
    pub shell: Option<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<String>,
    pub timeout_ns: Option<u64>,
    pub output_limit: usize,
    pub repeated: bool,
    /// What to do with processes the command leaves in its process group
    /// (`ignore`, `report`, `kill`): looked for on the target, where they run.
    #[serde(default)]
    pub leftovers: String,
    /// Files the agent snapshots around the command, where it runs (an
    /// agent that predates monitors ignores this and sends none back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor: Option<Vec<String>>,
}

impl WireInvocation {
    /// The wire form of `invocation`.
    pub fn from_invocation(invocation: &Invocation) -> Self {
        let (argv, shell) = match &invocation.program {
            Program::Argv(argv) => (Some(argv.clone()), None),
            Program::Shell(script) => (None, Some(script.clone())),
        };
        Self {
            argv,
            shell,
            env: invocation.env.clone(),
            cwd: invocation
                .cwd
                .as_ref()
                .map(|path| path.to_string_lossy().into_owned()),
            timeout_ns: invocation
                .timeout
                .map(|timeout| timeout.as_nanos().min(u128::from(u64::MAX)) as u64),
            output_limit: invocation.output_limit,
            repeated: invocation.repeated,
            leftovers: match invocation.leftovers {
                Leftovers::Ignore => "ignore",
                Leftovers::Report => "report",
                Leftovers::Kill => "kill",
            }
            .to_string(),
            monitor: invocation.monitor.as_ref().map(|request| {
                request
                    .files
                    .iter()
                    .map(|path| path.to_string_lossy().into_owned())
                    .collect()
            }),
        }
    }

    /// The invocation it describes.
    pub fn to_invocation(&self) -> Invocation {
        let program = match (&self.argv, &self.shell) {
            (Some(argv), _) => Program::Argv(argv.clone()),
            (None, Some(script)) => Program::Shell(script.clone()),
            (None, None) => Program::Argv(Vec::new()),
        };
        Invocation {
            program,
            env: self.env.clone(),
            cwd: self.cwd.as_ref().map(PathBuf::from),
            timeout: self.timeout_ns.map(Duration::from_nanos),
            output_limit: self.output_limit,
            repeated: self.repeated,
            leftovers: match self.leftovers.as_str() {
                "report" => Leftovers::Report,
                "kill" => Leftovers::Kill,
                _ => Leftovers::Ignore,
            },
            monitor: self.monitor.as_ref().map(|files| MonitorRequest {
                files: files.iter().map(PathBuf::from).collect(),
            }),
        }
    }
}

/// One line from the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// The outcome of a run.
    Outcome(WireOutcome),
    /// A file's bytes, hex encoded.
    File { hex: String },
    /// A directory's entry names, sorted.
    Entries { names: Vec<String> },
    /// The answer to `Hello`.
    Hello { version: String, now_unix_ms: i64 },
    /// The run or read failed.
    Error { kind: ErrorKind, message: String },
}

/// Why a run or read failed, as the agent tells it (spelled `not_found`,
/// `permission_denied`, `cancelled`, `spawn`, `other` on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The file or directory does not exist (or a path component is not a
    /// directory).
    NotFound,
    PermissionDenied,
    /// The run was cancelled before it finished.
    Cancelled,
    /// The program could not be started.
    Spawn,
    /// Anything else, also a kind a newer agent names that this side does
    /// not know.
    #[serde(other)]
    Other,
}

/// An [`Outcome`] on the wire (output tails hex encoded).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireOutcome {
    pub exited: Option<i32>,
    pub signaled: Option<i32>,
    pub timed_out: bool,
    pub wall_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub max_rss_kib: u64,
    pub stdout_hex: String,
    pub stderr_hex: String,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// Processes the command left behind on the target, one name each.
    #[serde(default)]
    pub leftovers: Vec<String>,
    #[serde(default)]
    pub voluntary_switches: u64,
    #[serde(default)]
    pub involuntary_switches: u64,
    /// The monitor snapshots, taken on the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor: Option<WireSnapshots>,
}

/// [`Snapshots`] on the wire: the files' text as read (they are ASCII).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireSnapshots {
    pub ticks_per_second: u64,
    pub before: Vec<WireFile>,
    pub after: Vec<WireFile>,
}

/// One [`FileSnapshot`] on the wire; `text` is absent when it was unread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireFile {
    pub path: String,
    pub text: Option<String>,
}

impl WireSnapshots {
    fn from_snapshots(snapshots: &Snapshots) -> Self {
        let files = |files: &[FileSnapshot]| {
            files
                .iter()
                .map(|file| WireFile {
                    path: file.path.to_string_lossy().into_owned(),
                    text: file.text.clone(),
                })
                .collect()
        };
        Self {
            ticks_per_second: snapshots.ticks_per_second,
            before: files(&snapshots.before),
            after: files(&snapshots.after),
        }
    }

    fn to_snapshots(&self) -> Snapshots {
        let files = |files: &[WireFile]| {
            files
                .iter()
                .map(|file| FileSnapshot {
                    path: PathBuf::from(&file.path),
                    text: file.text.clone(),
                })
                .collect()
        };
        Snapshots {
            ticks_per_second: self.ticks_per_second,
            before: files(&self.before),
            after: files(&self.after),
        }
    }
}

fn nanos(duration: Duration) -> u64 {
    duration.as_nanos().min(u128::from(u64::MAX)) as u64
}

impl WireOutcome {
    /// The wire form of `outcome`.
    pub fn from_outcome(outcome: &Outcome) -> Self {
        let (exited, signaled, timed_out) = match outcome.status {
            Status::Exited(code) => (Some(code), None, false),
            Status::Signaled(signal) => (None, Some(signal), false),
            Status::TimedOut => (None, None, true),
        };
        Self {
            exited,
            signaled,
            timed_out,
            wall_ns: nanos(outcome.wall),
            user_ns: nanos(outcome.user),
            sys_ns: nanos(outcome.sys),
            max_rss_kib: outcome.max_rss_kib,
            stdout_hex: hex::encode(&outcome.stdout),
            stderr_hex: hex::encode(&outcome.stderr),
            stdout_truncated: outcome.stdout_truncated,
            stderr_truncated: outcome.stderr_truncated,
            leftovers: outcome.leftovers.clone(),
            voluntary_switches: outcome.voluntary_switches,
            involuntary_switches: outcome.involuntary_switches,
            monitor: outcome.monitor.as_ref().map(WireSnapshots::from_snapshots),
        }
    }

    /// The outcome it describes; `None` when the reply is malformed.
    pub fn to_outcome(&self) -> Option<Outcome> {
        let status = match (self.exited, self.signaled, self.timed_out) {
            (Some(code), None, false) => Status::Exited(code),
            (None, Some(signal), false) => Status::Signaled(signal),
            (None, None, true) => Status::TimedOut,
            _ => return None,
        };
        Some(Outcome {
            status,
            wall: Duration::from_nanos(self.wall_ns),
            user: Duration::from_nanos(self.user_ns),
            sys: Duration::from_nanos(self.sys_ns),
            max_rss_kib: self.max_rss_kib,
            stdout: hex::decode(&self.stdout_hex).ok()?,
            stderr: hex::decode(&self.stderr_hex).ok()?,
            stdout_truncated: self.stdout_truncated,
            stderr_truncated: self.stderr_truncated,
            leftovers: self.leftovers.clone(),
            voluntary_switches: self.voluntary_switches,
            involuntary_switches: self.involuntary_switches,
            monitor: self.monitor.as_ref().map(WireSnapshots::to_snapshots),
        })
    }
}

/// The reply for a failed read or list.
fn io_reply(error: &io::Error) -> Reply {
    let kind = match error.kind() {
        io::ErrorKind::NotFound => ErrorKind::NotFound,
        io::ErrorKind::PermissionDenied => ErrorKind::PermissionDenied,
        _ if error.raw_os_error() == Some(libc::ENOTDIR) => ErrorKind::NotFound,
        _ => ErrorKind::Other,
    };
    Reply::Error {
        kind,
        message: error.to_string(),
    }
}

/// Serves requests from `input` until it ends, writing replies to `output`.
/// `version` is what `Hello` reports. Returns when the input ends (or
/// cannot be read); a reply that cannot be written ends it too.
pub fn serve(
    input: impl BufRead + Send + 'static,
    mut output: impl Write,
    version: &str,
) -> io::Result<()> {
    // A reader thread, so a `Cancel` (or the end of input) reaches the run
    // in flight while the main thread waits for it.
    let current: Arc<Mutex<InFlight>> = Arc::new(Mutex::new(InFlight::default()));
    let (sender, receiver) = mpsc::channel::<Result<Request, String>>();
    let reader_current = Arc::clone(&current);
    std::thread::Builder::new()
        .name("verdict-agent-input".to_string())
        .spawn(move || {
            for line in input.lines() {
                let Ok(line) = line else { break };
                if line.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<Request>(&line) {
                    Ok(Request::Cancel) => cancel_current(&reader_current),
                    Ok(request) => {
                        if sender.send(Ok(request)).is_err() {
                            break;
                        }
                    }
                    Err(error) => {
                        let _ = sender.send(Err(format!("bad request: {error}")));
                    }
                }
            }
            // The controller is gone: stop what runs for it, and anything
            // it asked for that has not started yet.
            let mut in_flight = lock(&reader_current);
            in_flight.closed = true;
            if let Some(cancel) = &in_flight.cancel {
                cancel.cancel();
            }
        })?;

    while let Ok(request) = receiver.recv() {
        let reply = match request {
            Err(message) => Reply::Error {
                kind: ErrorKind::Other,
                message,
            },
            Ok(request) => answer(request, &current, version),
        };
        let mut line = serde_json::to_string(&reply).map_err(io::Error::other)?;
        line.push('\n');
        output.write_all(line.as_bytes())?;
        output.flush()?;
    }
    Ok(())
}

/// The run in flight and whether the input has ended.
#[derive(Debug, Default)]
struct InFlight {
    cancel: Option<Cancel>,
    closed: bool,
}

fn lock(shared: &Mutex<InFlight>) -> std::sync::MutexGuard<'_, InFlight> {
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn cancel_current(current: &Mutex<InFlight>) {
    if let Some(cancel) = &lock(current).cancel {
        cancel.cancel();
    }
}

fn answer(request: Request, current: &Mutex<InFlight>, version: &str) -> Reply {
    match request {
        Request::Run(wire) => {
            let cancel = Cancel::new();
            {
                let mut in_flight = lock(current);
                if in_flight.closed {
                    cancel.cancel();
                }
                in_flight.cancel = Some(cancel.clone());
            }
            let result = SystemExecutor.run(&wire.to_invocation(), &cancel);
            lock(current).cancel = None;
            match result {
                Ok(outcome) => Reply::Outcome(WireOutcome::from_outcome(&outcome)),
                Err(ExecError::Cancelled) => Reply::Error {
                    kind: ErrorKind::Cancelled,
                    message: "cancelled".to_string(),
                },
                Err(
                    error @ (ExecError::Spawn { .. }
                    | ExecError::WorkingDirectory { .. }
                    | ExecError::EmptyCommand),
                ) => Reply::Error {
                    kind: ErrorKind::Spawn,
                    message: error.to_string(),
                },
                Err(error) => Reply::Error {
                    kind: ErrorKind::Other,
                    message: error.to_string(),
                },
            }
        }
        Request::Read { path } => match SystemExecutor.read_file(path.as_ref()) {
            Ok(bytes) => Reply::File {
                hex: hex::encode(bytes),
            },
            Err(error) => io_reply(&error),
        },
        Request::List { path } => match SystemExecutor.list_directory(path.as_ref()) {
            Ok(names) => Reply::Entries { names },
            Err(error) => io_reply(&error),
        },
        Request::Hello => Reply::Hello {
            version: version.to_string(),
            now_unix_ms: SystemExecutor.now_unix_ms(),
        },
        Request::Cancel => unreachable!("handled by the reader thread"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    #[test]
    fn error_kinds_keep_their_wire_spelling() {
        let reply = Reply::Error {
            kind: ErrorKind::PermissionDenied,
            message: "no".into(),
        };
        assert_eq!(
            serde_json::to_string(&reply).unwrap(),
            r#"{"error":{"kind":"permission_denied","message":"no"}}"#
        );
        let newer: Reply =
            serde_json::from_str(r#"{"error":{"kind":"quota","message":"full"}}"#).unwrap();
        assert_eq!(
            newer,
            Reply::Error {
                kind: ErrorKind::Other,
                message: "full".into()
            }
        );
    }

    /// Sends `requests` to a serving agent over socket pairs (as over ssh,
    /// the input stays open until every reply has arrived), then ends the
    /// input and waits for the agent to finish.
    fn exchange(requests: &[Request]) -> Vec<Reply> {
        use std::os::unix::net::UnixStream;
        let (mut to_agent, agent_input) = UnixStream::pair().unwrap();
        let (agent_output, from_agent) = UnixStream::pair().unwrap();
        let server = std::thread::spawn(move || {
            serve(BufReader::new(agent_input), agent_output, "9.9").unwrap()
        });
        for request in requests {
            let mut line = serde_json::to_string(request).unwrap();
            line.push('\n');
            to_agent.write_all(line.as_bytes()).unwrap();
        }
        let mut replies = Vec::new();
        let mut lines = BufReader::new(from_agent).lines();
        while replies.len() < requests.len() {
            let line = lines.next().unwrap().unwrap();
            replies.push(serde_json::from_str(&line).unwrap());
        }
        drop(to_agent);
        server.join().unwrap();
        replies
    }

    #[test]
    fn runs_reads_lists_and_greets() {
        let directory = tempfile::tempdir().unwrap();
        std::fs::write(directory.path().join("metric"), b"42\n").unwrap();
        let invocation = Invocation::argv(["sh", "-c", "printf '%s' \"$1\"; exit 3", "sh", "a'b"])
            .with_env("X", "1");
        let replies = exchange(&[
            Request::Hello,
            Request::Run(WireInvocation::from_invocation(&invocation)),
            Request::Read {
                path: directory.path().join("metric").display().to_string(),
            },
            Request::Read {
                path: directory.path().join("none").display().to_string(),
            },
            Request::List {
                path: directory.path().display().to_string(),
            },
        ]);
        assert_eq!(replies.len(), 5);
        assert!(matches!(&replies[0], Reply::Hello { version, now_unix_ms }
            if version == "9.9" && *now_unix_ms > 1_577_836_800_000));
        let Reply::Outcome(outcome) = &replies[1] else {
            panic!("{:?}", replies[1])
        };
        let outcome = outcome.to_outcome().unwrap();
        assert_eq!(outcome.status, Status::Exited(3));
        assert_eq!(outcome.stdout, b"a'b");
        assert_eq!(
            replies[2],
            Reply::File {
                hex: hex::encode(b"42\n")
            }
        );
        assert!(matches!(
            &replies[3],
            Reply::Error {
                kind: ErrorKind::NotFound,
                ..
            }
        ));
        assert_eq!(
            replies[4],
            Reply::Entries {
                names: vec!["metric".to_string()]
            }
        );
    }

    #[test]
    fn a_monitored_run_brings_its_snapshots_and_switches_back() {
        // The workload sleeps: it blocks at least once (a voluntary switch),
        // and the snapshots are read by the agent around it.
        let invocation =
            Invocation::argv(["sleep", "0.05"]).with_monitor(MonitorRequest::system_counters());
        let replies = exchange(&[Request::Run(WireInvocation::from_invocation(&invocation))]);
        let Reply::Outcome(outcome) = &replies[0] else {
            panic!("{:?}", replies[0])
        };
        let outcome = outcome.to_outcome().unwrap();
        assert!(outcome.voluntary_switches >= 1, "{outcome:?}");
        let snapshots = outcome.monitor.expect("snapshots");
        assert_eq!(snapshots.before.len(), 4);
        let (before, after) = snapshots.pair(std::path::Path::new("/proc/stat")).unwrap();
        assert!(before.starts_with("cpu ") && after.starts_with("cpu "));
        assert_ne!(before, after, "the counters moved during the sleep");
        // Without a request, nothing is read.
        let replies = exchange(&[Request::Run(WireInvocation::from_invocation(
            &Invocation::argv(["true"]),
        ))]);
        let Reply::Outcome(outcome) = &replies[0] else {
            panic!("{:?}", replies[0])
        };
        assert_eq!(outcome.monitor, None);
    }

    #[test]
    fn the_end_of_input_cancels_the_run_in_flight() {
        // The request is followed by the end of input, as when the ssh
        // connection drops: the 30 s sleep must be killed, not waited for.
        let request = serde_json::to_string(&Request::Run(WireInvocation::from_invocation(
            &Invocation::argv(["sleep", "30"]),
        )))
        .unwrap();
        let started = std::time::Instant::now();
        let mut output = Vec::new();
        serve(
            BufReader::new(std::io::Cursor::new(format!("{request}\n").into_bytes())),
            &mut output,
            "9.9",
        )
        .unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        let reply: Reply = serde_json::from_slice(output.trim_ascii_end()).unwrap();
        assert!(matches!(
            &reply,
            Reply::Error {
                kind: ErrorKind::Cancelled,
                ..
            }
        ));
    }

    #[test]
    fn wire_forms_round_trip() {
        let invocation = Invocation::shell("echo $HOME")
            .with_cwd("/tmp")
            .with_timeout(Duration::from_millis(1500))
            .with_env("A", "b c")
            .with_monitor(MonitorRequest::system_counters())
            .repeated();
        assert_eq!(
            WireInvocation::from_invocation(&invocation).to_invocation(),
            invocation
        );
        let outcome = Outcome::new(Status::Signaled(9), Duration::from_micros(1234))
            .with_stdout(vec![0, 255, 10])
            .with_usage(Duration::from_millis(1), Duration::from_millis(2), 4096)
            .with_switches(7, 3)
            .with_monitor(Snapshots {
                ticks_per_second: 100,
                before: vec![FileSnapshot {
                    path: PathBuf::from("/proc/stat"),
                    text: Some("cpu 1 2 3 4\n".into()),
                }],
                after: vec![FileSnapshot {
                    path: PathBuf::from("/proc/softirqs"),
                    text: None,
                }],
            });
        assert_eq!(
            WireOutcome::from_outcome(&outcome).to_outcome().unwrap(),
            outcome
        );
    }
}
