//! `SystemExecutor`: starts a real process and measures it.
//!
//! One run, all in the calling thread: spawn the child without a shell
//! (`clone` with `CLONE_VFORK`, see `spawn.rs`) in its own process group with stdin from
//! `/dev/null`; then block in `poll` on the child's stdout and
//! stderr pipes, a pidfd that becomes readable when the child exits, and the
//! [`Cancel`] token's eventfd, with the poll timeout set to the invocation's
//! deadline. No thread is started and nothing sleeps or polls on a timer, so
//! the per-iteration cost is a handful of system calls on top of the spawn.
//! When the child has exited (it is then a zombie, so its process group id
//! cannot be reused), it is reaped with `wait4(pid, ..., 0, &rusage)`, which
//! gives the rusage of that child and of the descendants it waited for, and
//! nothing else.
//!
//! A timeout or a cancellation sends SIGTERM to the whole process group,
//! SIGKILL after [`TERMINATION_GRACE`], and always SIGKILL to the group once
//! the child has exited (so grandchildren that ignored SIGTERM die too), all
//! before the reap. Output written after the child exited by a descendant that
//! outlived it (a daemon started by a setup command, say) is not waited for:
//! a detached thread reads and discards it until that descendant closes the
//! pipe, so the run ends at once and the descendant never gets SIGPIPE.
//!
//! Kernels without `pidfd_open` (before Linux 5.3, or seccomp filters that
//! refuse it) get a helper thread per run that blocks in
//! `waitid(..., WEXITED | WNOWAIT)`, which notices the exit without reaping.
//!
//! A normal exit leaves the group alone unless the invocation asks
//! ([`Leftovers`]): then the group's remaining members are named and, with
//! `Leftovers::Kill`, killed once the child is reaped (`leftovers.rs`).
//!
//! This file must not call `RUSAGE_CHILDREN`, reap anything but its own
//! child, or kill anything but the process group it created.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::spawn::{pipe, spawn};
use crate::tail::TailBuffer;
use crate::{Cancel, ExecError, Invocation, Leftovers, Outcome, Program, Status, Target};

/// How long a timed-out or cancelled process group gets between SIGTERM and
/// SIGKILL, so workloads such as stress-ng can remove what they created.
pub const TERMINATION_GRACE: Duration = Duration::from_millis(500);

/// Bytes read from a pipe per `read` call (the default pipe capacity).
const READ_CHUNK: usize = 64 * 1024;

/// Runs real processes; see the module documentation for how.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemExecutor;

impl Target for SystemExecutor {
    fn run(&self, invocation: &Invocation, cancel: &Cancel) -> Result<Outcome, ExecError> {
        run_process(invocation, cancel, ExitNotice::Pidfd)
    }

    fn read_file(&self, path: &std::path::Path) -> io::Result<Vec<u8>> {
        crate::local::read_file(path)
    }

    fn list_directory(&self, path: &std::path::Path) -> io::Result<Vec<String>> {
        crate::local::list_directory(path)
    }

    fn now_unix_ms(&self) -> i64 {
        crate::local::now_unix_ms()
    }
}

/// How the poll loop learns that the child exited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ExitNotice {
    /// A pidfd, falling back to a waiter thread when the kernel refuses.
    Pidfd,
    /// Always the waiter thread (tests of the fallback).
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "used only by tests of the fallback")
    )]
    WaiterThread,
}

/// Why verdict is stopping the process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StopReason {
    Timeout,
    Cancel,
}

#[derive(Debug)]
struct Stopping {
    reason: StopReason,
    kill_at: Instant,
    killed: bool,
}

/// Owns the child's pid until it is reaped: on an early return (an error
/// between spawn and reap) it kills the process group and reaps the child,
/// so no process outlives a failed run and no zombie is left behind.
#[derive(Debug)]
struct ChildGuard {
    pid: libc::pid_t,
    reaped: bool,
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if !self.reaped {
            signal_group(self.pid, libc::SIGKILL);
            let _ = wait_for(self.pid);
        }
    }
}

/// The descriptor that turns readable on exit, plus the helper thread when
/// there is one.
#[derive(Debug)]
struct ExitWatch {
    descriptor: OwnedFd,
    waiter: Option<JoinHandle<()>>,
}

/// The slots of `run_process`'s poll array.
const STDOUT: usize = 0;
const STDERR: usize = 1;
const EXITED: usize = 2;
const CANCELLED: usize = 3;

/// An operating-system call around `invocation`'s process failed.
fn io_error_of<'a>(
    invocation: &'a Invocation,
    operation: &'static str,
) -> impl FnOnce(io::Error) -> ExecError + 'a {
    move |source: io::Error| ExecError::Io {
        operation,
        program: invocation.program.program_name().to_string(),
        source,
    }
}

/// What a running process's output goes to: the tails kept of stdout and
/// stderr, and the read buffer they share.
struct Captured {
    stdout: TailBuffer,
    stderr: TailBuffer,
    buffer: Vec<u8>,
}

fn run_process(
    invocation: &Invocation,
    cancel: &Cancel,
    exit_notice: ExitNotice,
) -> Result<Outcome, ExecError> {
    let io_error = |operation: &'static str| io_error_of(invocation, operation);

    let cancel_descriptor = cancel
        .wake_descriptor()
        .map_err(io_error("create the cancellation eventfd"))?;
    if cancel.is_cancelled() {
        return Err(ExecError::Cancelled);
    }

    if matches!(&invocation.program, Program::Argv(argv) if argv.is_empty()) {
        return Err(ExecError::EmptyCommand);
    }
    // Read before the clock starts and after it stops: the snapshots are
    // not part of the command's wall time.
    let monitor_before = invocation.monitor.as_ref().map(crate::monitor::read_all);
    let started = Instant::now();
    let spawned = spawn(invocation).map_err(|source| spawn_error(invocation, source))?;
    let mut guard = ChildGuard {
        pid: spawned.pid,
        reaped: false,
    };
    let pid = guard.pid;
    let (stdout, stderr) = (spawned.stdout, spawned.stderr);
    set_nonblocking(&stdout).map_err(io_error("configure the output pipe"))?;
    set_nonblocking(&stderr).map_err(io_error("configure the output pipe"))?;
    let exit_watch = watch_exit(pid, exit_notice).map_err(io_error("watch the process"))?;

    let deadline = invocation.timeout.map(|timeout| started + timeout);
    let mut captured = Captured {
        stdout: TailBuffer::new(invocation.output_limit),
        stderr: TailBuffer::new(invocation.output_limit),
        // Uninitialised: zeroing 64 KiB per run would be measurable on `true`.
        buffer: Vec::with_capacity(READ_CHUNK),
    };
    let mut descriptors = [
        poll_entry(stdout.as_raw_fd()),
        poll_entry(stderr.as_raw_fd()),
        poll_entry(exit_watch.descriptor.as_raw_fd()),
        poll_entry(cancel_descriptor),
    ];
    let stopping = poll_until_exit(
        invocation,
        cancel,
        pid,
        deadline,
        &mut descriptors,
        &mut captured,
    )?;

    if stopping.is_some() {
        // The child is a zombie until reaped, so the group id is still ours:
        // sweep any descendant that ignored SIGTERM.
        signal_group(pid, libc::SIGKILL);
    }
    let (wait_status, usage) = wait_for(pid).map_err(io_error("reap the process"))?;
    let wall = started.elapsed();
    guard.reaped = true;
    let monitor = invocation
        .monitor
        .as_ref()
        .zip(monitor_before)
        .map(|(request, before)| crate::Snapshots {
            ticks_per_second: crate::monitor::ticks_per_second(),
            before,
            after: crate::monitor::read_all(request),
        });
    // After a timeout or a cancellation the group was killed above; after a
    // normal exit, what is left of it is named (and killed) now, before the
    // final drain, so killed leftovers close the pipes they inherited.
    let leftovers = match (invocation.leftovers, &stopping) {
        (Leftovers::Ignore, _) | (_, Some(_)) => Vec::new(),
        (Leftovers::Report, None) => crate::leftovers::sweep(pid, false),
        (Leftovers::Kill, None) => crate::leftovers::sweep(pid, true),
    };

    // Whatever the child wrote before exiting is in the pipes now (an exiting
    // process closes its descriptors before it becomes a zombie).
    for (index, tail, pipe) in [
        (STDOUT, &mut captured.stdout, stdout),
        (STDERR, &mut captured.stderr, stderr),
    ] {
        if descriptors[index].fd >= 0
            && !drain(descriptors[index].fd, tail, &mut captured.buffer)
                .map_err(io_error("read the output"))?
        {
            discard_in_background(pipe);
        }
    }
    if let Some(waiter) = exit_watch.waiter {
        // It returned when the child exited, before the poll loop ended.
        let _ = waiter.join();
    }

    let status = match stopping.map(|stop| stop.reason) {
        Some(StopReason::Cancel) => return Err(ExecError::Cancelled),
        Some(StopReason::Timeout) => Status::TimedOut,
        None => decode_status(wait_status).ok_or_else(|| {
            io_error("interpret the wait status")(io::Error::other(format!(
                "unexpected wait status {wait_status:#x}"
            )))
        })?,
    };
    let (stdout, stdout_truncated) = captured.stdout.finish();
    let (stderr, stderr_truncated) = captured.stderr.finish();
    Ok(Outcome {
        status,
        wall,
        user: timeval_duration(usage.ru_utime),
        sys: timeval_duration(usage.ru_stime),
        max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
        stdout,
        stderr,
        stdout_truncated,
        stderr_truncated,
        leftovers,
        voluntary_switches: u64::try_from(usage.ru_nvcsw).unwrap_or(0),
        involuntary_switches: u64::try_from(usage.ru_nivcsw).unwrap_or(0),
        monitor,
    })
}

/// Reads `descriptors`' output into `captured` until the process exits,
/// stopping it (SIGTERM, then SIGKILL after the grace) on a timeout or a
/// cancellation; the stop it started, if any.
fn poll_until_exit(
    invocation: &Invocation,
    cancel: &Cancel,
    pid: libc::pid_t,
    deadline: Option<Instant>,
    descriptors: &mut [libc::pollfd; 4],
    captured: &mut Captured,
) -> Result<Option<Stopping>, ExecError> {
    let io_error = |operation: &'static str| io_error_of(invocation, operation);
    let mut stopping: Option<Stopping> = None;
    loop {
        let wake_at = match &stopping {
            None => deadline,
            Some(stop) if !stop.killed => Some(stop.kill_at),
            Some(_) => None,
        };
        let timeout_ms = wake_at.map_or(-1, |at| {
            poll_timeout_ms(at.saturating_duration_since(Instant::now()))
        });
        // SAFETY: `descriptors` is a live array of pollfd of the given length.
        let ready = unsafe {
            libc::poll(
                descriptors.as_mut_ptr(),
                descriptors.len() as libc::nfds_t,
                timeout_ms,
            )
        };
        if ready < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(io_error("wait for the process")(error));
        }

        for (index, tail) in [
            (STDOUT, &mut captured.stdout),
            (STDERR, &mut captured.stderr),
        ] {
            if descriptors[index].revents != 0 {
                let at_end = drain(descriptors[index].fd, tail, &mut captured.buffer)
                    .map_err(io_error("read the output"))?;
                if at_end {
                    // A negative descriptor is ignored by poll.
                    descriptors[index].fd = -1;
                }
            }
        }

        let cancelled = descriptors[CANCELLED].revents != 0 || cancel.is_cancelled();
        if cancelled && stopping.is_none() {
            stopping = Some(start_stopping(pid, StopReason::Cancel));
        }
        if stopping.is_some() {
            // The eventfd stays readable; stop listening to it.
            descriptors[CANCELLED].fd = -1;
        }

        if descriptors[EXITED].revents != 0 {
            break;
        }

        let now = Instant::now();
        match &mut stopping {
            None => {
                if deadline.is_some_and(|deadline| now >= deadline) {
                    stopping = Some(start_stopping(pid, StopReason::Timeout));
                    descriptors[CANCELLED].fd = -1;
                }
            }
            Some(stop) => {
                if !stop.killed && now >= stop.kill_at {
                    signal_group(pid, libc::SIGKILL);
                    stop.killed = true;
                }
            }
        }
    }
    Ok(stopping)
}

/// A spawn failure, blamed on the working directory when that is missing.
fn spawn_error(invocation: &Invocation, source: io::Error) -> ExecError {
    let program = invocation.program.program_name().to_string();
    if let Some(directory) = &invocation.cwd {
        let problem = match std::fs::metadata(directory) {
            Err(error) => Some(error),
            Ok(metadata) if !metadata.is_dir() => Some(io::Error::from_raw_os_error(libc::ENOTDIR)),
            Ok(_) => None,
        };
        if let Some(problem) = problem {
            return ExecError::WorkingDirectory {
                program,
                directory: directory.clone(),
                source: problem,
            };
        }
    }
    ExecError::Spawn { program, source }
}

fn poll_entry(fd: RawFd) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

/// Milliseconds for `poll`, rounded up so a wake-up is never early, capped
/// to what `poll` accepts.
fn poll_timeout_ms(remaining: Duration) -> i32 {
    let micros = remaining.as_micros();
    let millis = micros.div_ceil(1000);
    i32::try_from(millis).unwrap_or(i32::MAX)
}

fn set_nonblocking(descriptor: &OwnedFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own. The pipe's only status flag is
    // its access mode, which F_SETFL ignores, so no F_GETFL is needed.
    let result = unsafe { libc::fcntl(descriptor.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Reads everything available; `Ok(true)` at end of file.
/// `buffer` is used only for its capacity.
fn drain(descriptor: RawFd, tail: &mut TailBuffer, buffer: &mut Vec<u8>) -> io::Result<bool> {
    let spare = buffer.spare_capacity_mut();
    let capacity = spare.len();
    assert!(capacity > 0, "drain needs a buffer with capacity");
    let start = spare.as_mut_ptr().cast::<u8>();
    loop {
        // SAFETY: reads at most `capacity` bytes into the allocation's spare
        // capacity, which is live and writable.
        let count = unsafe { libc::read(descriptor, start.cast(), capacity) };
        match count {
            0 => return Ok(true),
            count if count > 0 => {
                // SAFETY: the kernel initialised the first `count` bytes.
                let filled = unsafe { std::slice::from_raw_parts(start, count as usize) };
                tail.push(filled);
            }
            _ => {
                let error = io::Error::last_os_error();
                match error.kind() {
                    io::ErrorKind::Interrupted => continue,
                    io::ErrorKind::WouldBlock => return Ok(false),
                    _ => return Err(error),
                }
            }
        }
    }
}

/// Reads `pipe` to its end on a detached thread, throwing the bytes away.
/// Only for pipes still held open by a descendant after the child exited, so
/// the common case starts no thread.
fn discard_in_background(pipe: OwnedFd) {
    // SAFETY: fcntl on a descriptor we own; back to blocking reads.
    unsafe {
        libc::fcntl(pipe.as_raw_fd(), libc::F_SETFL, 0);
    }
    let spawned = std::thread::Builder::new()
        .name("verdict-exec-discard".to_string())
        .spawn(move || {
            let mut buffer = [0_u8; 4096];
            loop {
                // SAFETY: reads into a live buffer of the given length.
                let count = unsafe {
                    libc::read(pipe.as_raw_fd(), buffer.as_mut_ptr().cast(), buffer.len())
                };
                if count == 0
                    || (count < 0
                        && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted)
                {
                    break;
                }
            }
        });
    // Without a thread the pipe is closed here, and the descendant gets
    // SIGPIPE if it writes again: the documented behaviour before this one.
    drop(spawned);
}

fn start_stopping(pid: libc::pid_t, reason: StopReason) -> Stopping {
    signal_group(pid, libc::SIGTERM);
    Stopping {
        reason,
        kill_at: Instant::now() + TERMINATION_GRACE,
        killed: false,
    }
}

/// Signals the process group led by `pid`. Only called while `pid` is not yet
/// reaped, so the group id cannot belong to anyone else. Errors (ESRCH when
/// the group is already empty) need no handling.
fn signal_group(pid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: kill has no memory arguments.
    unsafe {
        libc::kill(-pid, signal);
    }
}

fn watch_exit(pid: libc::pid_t, exit_notice: ExitNotice) -> io::Result<ExitWatch> {
    if exit_notice == ExitNotice::Pidfd {
        // SAFETY: pidfd_open has no memory arguments; the result is checked.
        let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if raw >= 0 {
            // SAFETY: a fresh descriptor (close-on-exec by definition) that
            // nobody else owns.
            let descriptor = unsafe { OwnedFd::from_raw_fd(raw as RawFd) };
            return Ok(ExitWatch {
                descriptor,
                waiter: None,
            });
        }
    }
    watch_exit_with_thread(pid)
}

/// The fallback: a thread blocks in `waitid(WNOWAIT)` and then closes the
/// write end of a pipe, which makes the read end readable (end of file).
fn watch_exit_with_thread(pid: libc::pid_t) -> io::Result<ExitWatch> {
    let (read_end, write_end) = pipe(libc::O_CLOEXEC | libc::O_NONBLOCK)?;
    let waiter = std::thread::Builder::new()
        .name(format!("verdict-exec-wait-{pid}"))
        .spawn(move || {
            loop {
                // SAFETY: siginfo_t is plain data; zeroed is a valid value.
                let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
                // SAFETY: waitid writes into the live siginfo_t; WNOWAIT
                // leaves the child unreaped for the caller's wait4.
                let result = unsafe {
                    libc::waitid(
                        libc::P_PID,
                        pid as libc::id_t,
                        &mut info,
                        libc::WEXITED | libc::WNOWAIT,
                    )
                };
                if result == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                    break;
                }
            }
            drop(write_end);
        })?;
    Ok(ExitWatch {
        descriptor: read_end,
        waiter: Some(waiter),
    })
}

/// Reaps `pid` with `wait4`, retrying on EINTR: its wait status and rusage.
fn wait_for(pid: libc::pid_t) -> io::Result<(libc::c_int, libc::rusage)> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: rusage is plain data; zeroed is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 writes into the live status and rusage.
        let result = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if result == pid {
            return Ok((status, usage));
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

fn decode_status(status: libc::c_int) -> Option<Status> {
    if libc::WIFEXITED(status) {
        Some(Status::Exited(libc::WEXITSTATUS(status)))
    } else if libc::WIFSIGNALED(status) {
        Some(Status::Signaled(libc::WTERMSIG(status)))
    } else {
        None
    }
}

fn timeval_duration(time: libc::timeval) -> Duration {
    let seconds = u64::try_from(time.tv_sec).unwrap_or(0);
    let micros = u32::try_from(time.tv_usec).unwrap_or(0);
    Duration::from_secs(seconds) + Duration::from_micros(u64::from(micros))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_timeout_rounds_up() {
        assert_eq!(poll_timeout_ms(Duration::ZERO), 0);
        assert_eq!(poll_timeout_ms(Duration::from_micros(1)), 1);
        assert_eq!(poll_timeout_ms(Duration::from_millis(200)), 200);
        assert_eq!(poll_timeout_ms(Duration::from_secs(u64::MAX / 4)), i32::MAX);
    }

    #[test]
    fn decodes_exit_and_signal_statuses() {
        assert_eq!(decode_status(3 << 8), Some(Status::Exited(3)));
        assert_eq!(decode_status(9), Some(Status::Signaled(9)));
    }

    #[test]
    fn waiter_thread_fallback_runs_a_command() {
        let invocation = Invocation::shell("echo out; echo err >&2; exit 4");
        let outcome = run_process(&invocation, &Cancel::new(), ExitNotice::WaiterThread).unwrap();
        assert_eq!(outcome.status, Status::Exited(4));
        assert_eq!(outcome.stdout, b"out\n");
        assert_eq!(outcome.stderr, b"err\n");
    }

    #[test]
    fn waiter_thread_fallback_times_out_and_kills_the_group() {
        let invocation =
            Invocation::shell("sleep 100 & sleep 100").with_timeout(Duration::from_millis(100));
        let started = Instant::now();
        let outcome = run_process(&invocation, &Cancel::new(), ExitNotice::WaiterThread).unwrap();
        assert_eq!(outcome.status, Status::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
