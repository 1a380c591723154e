//! Starting a child: argv without a shell, the inherited environment plus
//! the invocation's variables, stdin from `/dev/null`, stdout and stderr
//! into fresh pipes, its own process group, an empty signal mask and
//! `SIGPIPE` back to its default (Rust ignores it in verdict; std's
//! `Command` restores it the same way).
//!
//! How: `clone(CLONE_VM | CLONE_VFORK)` with a small child function, the
//! way glibc's `posix_spawn` does it, minus its costs per spawn that a
//! benchmark harness pays on every iteration: std's `Command` copies the
//! whole environment into a map and back (here it is converted once per
//! process), `/dev/null` is opened once, and glibc's child queries and
//! resets all 64 signal dispositions with one system call each (here only
//! the signals verdict has handlers for, found once, are reset). The
//! child shares verdict's memory until it execs, with every signal
//! blocked: it only makes system calls on data prepared beforehand, never
//! allocates, and reports a failure through the argument block before
//! `_exit(127)`. The environment is snapshotted at the first spawn (verdict
//! never changes its own), and so are the signal handlers (verdict installs
//! them at startup, before any run).
//!
//! A bare program name is looked up before the clone, in verdict's `PATH`
//! or the invocation's when it sets one (as std does), every time: a setup
//! step may install a program earlier in `PATH` between iterations. Must
//! not wait for, signal or read from the child: `system.rs` does that.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr;
use std::sync::OnceLock;

use crate::{Invocation, Program};

/// A started child: its pid and the read ends of its output pipes.
#[derive(Debug)]
pub(crate) struct Spawned {
    pub pid: libc::pid_t,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
}

/// Verdict's environment as `NAME=value` C strings, converted once.
fn inherited_environment() -> &'static [(OsString, CString)] {
    static ENVIRONMENT: OnceLock<Vec<(OsString, CString)>> = OnceLock::new();
    ENVIRONMENT.get_or_init(|| {
        std::env::vars_os()
            .filter_map(|(name, value)| {
                let entry = environment_entry(&name, &value).ok()?;
                Some((name, entry))
            })
            .collect()
    })
}

/// `/dev/null`, opened once for every child's stdin.
fn dev_null() -> io::Result<RawFd> {
    static DEV_NULL: OnceLock<OwnedFd> = OnceLock::new();
    if let Some(descriptor) = DEV_NULL.get() {
        return Ok(descriptor.as_raw_fd());
    }
    let opened = std::fs::File::open("/dev/null")?;
    Ok(DEV_NULL.get_or_init(|| opened.into()).as_raw_fd())
}

fn environment_entry(name: &OsStr, value: &OsStr) -> io::Result<CString> {
    let mut bytes = Vec::with_capacity(name.len() + value.len() + 1);
    bytes.extend_from_slice(name.as_bytes());
    bytes.push(b'=');
    bytes.extend_from_slice(value.as_bytes());
    c_string(bytes)
}

fn c_string(bytes: impl Into<Vec<u8>>) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "a NUL byte in an argument or environment variable",
        )
    })
}

/// A pipe (read end, write end) with `pipe2`'s `flags` on both ends. The
/// output pipes are close-on-exec: the child's end is dup2'ed onto its
/// stdout or stderr, which clears the flag there.
pub(crate) fn pipe(flags: libc::c_int) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut ends = [0 as libc::c_int; 2];
    // SAFETY: `ends` is a valid array of two ints for pipe2 to fill.
    if unsafe { libc::pipe2(ends.as_mut_ptr(), flags) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and ours.
    Ok(unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) })
}

/// The first executable regular file called `program` in `path`
/// (`execvp`'s rule; an empty element means the current directory).
fn search(program: &str, path: &OsStr) -> io::Result<CString> {
    // One reused buffer and one access(2) per directory: this runs before
    // every iteration's spawn.
    let mut candidate = Vec::with_capacity(path.len() + program.len() + 2);
    for directory in path.as_bytes().split(|&byte| byte == b':') {
        candidate.clear();
        candidate.extend_from_slice(if directory.is_empty() {
            b"."
        } else {
            directory
        });
        candidate.push(b'/');
        candidate.extend_from_slice(program.as_bytes());
        candidate.push(0);
        let Ok(name) = std::ffi::CStr::from_bytes_with_nul(&candidate) else {
            return Err(c_string(program).unwrap_err());
        };
        // SAFETY: `name` is a valid NUL-terminated path.
        if unsafe { libc::access(name.as_ptr(), libc::X_OK) } != 0 {
            continue;
        }
        let file = Path::new(OsStr::from_bytes(&candidate[..candidate.len() - 1]));
        if std::fs::metadata(file).is_ok_and(|metadata| metadata.is_file()) {
            return Ok(name.to_owned());
        }
    }
    Err(io::Error::from_raw_os_error(libc::ENOENT))
}

/// Where repeated workloads' programs were found in `PATH` (program, `PATH`,
/// file), kept while only repeated workloads run: starting anything else
/// (a level's setup, a build, a git command) empties it, so a program that
/// a setup installs earlier in `PATH` is found. A remembered file is still
/// checked with one access(2). Saves one failed lookup per `PATH` directory
/// before each iteration.
static RESOLVED: std::sync::Mutex<Vec<(String, OsString, CString)>> =
    std::sync::Mutex::new(Vec::new());

/// The programs `RESOLVED` holds at most (the commands of `verdict ab`).
const RESOLVED_CAPACITY: usize = 16;

/// `search`, remembered for repeated workloads; any other start forgets.
fn resolve(program: &str, path: &OsStr, repeated: bool) -> io::Result<CString> {
    let mut resolved = RESOLVED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !repeated {
        resolved.clear();
        return search(program, path);
    }
    let hit = resolved
        .iter()
        .find(|(name, searched, _)| name == program && searched == path)
        .map(|(_, _, file)| file.clone());
    if let Some(file) = hit {
        // SAFETY: `file` is a valid NUL-terminated path.
        if unsafe { libc::access(file.as_ptr(), libc::X_OK) } == 0 {
            return Ok(file);
        }
        resolved.clear();
    }
    let file = search(program, path)?;
    if resolved.len() < RESOLVED_CAPACITY {
        resolved.push((program.to_owned(), path.to_owned(), file.clone()));
    }
    Ok(file)
}

/// Forgets remembered lookups (something other than a repeated workload is
/// being started).
fn forget_lookups() {
    RESOLVED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clear();
}

/// Signals verdict has a handler for (the child must reset them before it
/// unblocks signals, or a signal arriving then would run verdict's handler
/// in the child), plus `SIGPIPE`, which Rust ignores and children expect
/// at its default. Found once, with one query per signal, at the first
/// spawn; `LATE_HANDLED` covers the handlers verdict installs later.
fn signals_to_reset() -> &'static [libc::c_int] {
    static SIGNALS: OnceLock<Vec<libc::c_int>> = OnceLock::new();
    SIGNALS.get_or_init(|| {
        let mut signals = vec![libc::SIGPIPE];
        for signal in 1..libc::SIGRTMAX() {
            // SAFETY: a query (null new action) into a zeroed sigaction.
            let mut current: libc::sigaction = unsafe { std::mem::zeroed() };
            let queried = unsafe { libc::sigaction(signal, ptr::null(), &mut current) } == 0;
            let handled =
                current.sa_sigaction != libc::SIG_DFL && current.sa_sigaction != libc::SIG_IGN;
            if queried && handled && signal != libc::SIGPIPE {
                signals.push(signal);
            }
        }
        signals
    })
}

/// Signals a handler may be installed for after the first spawn (the
/// Ctrl-C handler covers these three), so the child checks them itself.
const LATE_HANDLED: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Everything the child needs, prepared by the parent: the child may only
/// read it and write `error`.
#[repr(C)]
struct ChildPlan {
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    cwd: *const libc::c_char,
    /// (from, to) descriptor pairs for stdin, stdout and stderr.
    descriptors: [(libc::c_int, libc::c_int); 3],
    signals: *const libc::c_int,
    signal_count: usize,
    empty_mask: libc::sigset_t,
    /// errno of the step that failed; 0 when the exec succeeded.
    error: libc::c_int,
}

/// The child, between clone and exec, on its own stack in verdict's
/// memory with every signal blocked.
extern "C" fn child_main(argument: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `argument` is the parent's live ChildPlan (the parent is
    // suspended until this process execs or exits); every pointer in it is
    // valid and only system calls are made.
    unsafe {
        let plan = &mut *argument.cast::<ChildPlan>();
        let fail = |plan: &mut ChildPlan| -> ! {
            plan.error = *libc::__errno_location();
            libc::_exit(127)
        };
        if libc::setpgid(0, 0) != 0 {
            fail(plan);
        }
        for (from, to) in plan.descriptors {
            let moved = if from == to {
                libc::fcntl(to, libc::F_SETFD, 0)
            } else {
                libc::dup2(from, to)
            };
            if moved < 0 {
                fail(plan);
            }
        }
        if !plan.cwd.is_null() && libc::chdir(plan.cwd) != 0 {
            fail(plan);
        }
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        for index in 0..plan.signal_count {
            libc::sigaction(*plan.signals.add(index), &default, ptr::null_mut());
        }
        // Handlers installed after the set above was taken (verdict's
        // Ctrl-C handler may come after a first git command): checked here,
        // an ignored one stays ignored.
        for signal in LATE_HANDLED {
            let mut current: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, ptr::null(), &mut current) == 0
                && current.sa_sigaction != libc::SIG_DFL
                && current.sa_sigaction != libc::SIG_IGN
            {
                libc::sigaction(signal, &default, ptr::null_mut());
            }
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &plan.empty_mask, ptr::null_mut());
        libc::execve(plan.path, plan.argv, plan.envp);
        fail(plan)
    }
}

/// Bytes of stack for the child (it makes a handful of calls).
const CHILD_STACK: usize = 64 * 1024;

/// Starts the invocation's program; see the module documentation.
pub(crate) fn spawn(invocation: &Invocation) -> io::Result<Spawned> {
    let argv: Vec<CString> = match &invocation.program {
        Program::Argv(argv) => argv
            .iter()
            .map(|argument| c_string(argument.as_bytes()))
            .collect::<io::Result<_>>()?,
        Program::Shell(script) => vec![
            c_string("/bin/sh")?,
            c_string("-c")?,
            c_string(script.as_bytes())?,
        ],
    };
    let program_name = argv
        .first()
        .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOENT))?;
    let mut argv_pointers: Vec<*mut libc::c_char> = argv
        .iter()
        .map(|argument| argument.as_ptr().cast_mut())
        .collect();
    argv_pointers.push(ptr::null_mut());

    let inherited = inherited_environment();
    let added: Vec<CString> = invocation
        .env
        .iter()
        .map(|(name, value)| environment_entry(OsStr::new(name), OsStr::new(value)))
        .collect::<io::Result<_>>()?;
    let mut envp: Vec<*mut libc::c_char> = Vec::with_capacity(inherited.len() + added.len() + 1);
    for (name, entry) in inherited {
        let overridden = invocation
            .env
            .iter()
            .any(|(added_name, _)| added_name.as_bytes() == name.as_bytes());
        if !overridden {
            envp.push(entry.as_ptr().cast_mut());
        }
    }
    envp.extend(added.iter().map(|entry| entry.as_ptr().cast_mut()));
    envp.push(ptr::null_mut());

    // A bare name is looked up in the child's PATH: the invocation's, or
    // verdict's (execvp's default when there is none).
    let resolved;
    let path = if program_name.as_bytes().contains(&b'/') {
        if !invocation.repeated {
            forget_lookups();
        }
        program_name
    } else {
        let own_path = invocation
            .env
            .iter()
            .rev()
            .find(|(name, _)| name == "PATH")
            .map(|(_, value)| OsStr::new(value.as_str()));
        let inherited_path = inherited
            .iter()
            .find(|(name, _)| name == "PATH")
            .and_then(|(_, entry)| entry.as_bytes().strip_prefix(b"PATH="))
            .map(OsStr::from_bytes);
        let search_path = own_path
            .or(inherited_path)
            .unwrap_or(OsStr::new("/bin:/usr/bin"));
        resolved = resolve(
            invocation.program.program_name(),
            search_path,
            invocation.repeated,
        )?;
        &resolved
    };
    let cwd = match &invocation.cwd {
        Some(directory) => Some(c_string(directory.as_os_str().as_bytes())?),
        None => None,
    };

    let null = dev_null()?;
    let (stdout_read, stdout_write) = pipe(libc::O_CLOEXEC)?;
    let (stderr_read, stderr_write) = pipe(libc::O_CLOEXEC)?;
    let signals = signals_to_reset();
    // SAFETY: zeroed sigset_t storage initialised by sigemptyset.
    let mut empty_mask: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe { libc::sigemptyset(&mut empty_mask) };
    let mut plan = ChildPlan {
        path: path.as_ptr(),
        argv: argv_pointers.as_ptr().cast(),
        envp: envp.as_ptr().cast(),
        cwd: cwd.as_ref().map_or(ptr::null(), |cwd| cwd.as_ptr()),
        descriptors: [
            (null, 0),
            (stdout_write.as_raw_fd(), 1),
            (stderr_write.as_raw_fd(), 2),
        ],
        signals: signals.as_ptr(),
        signal_count: signals.len(),
        empty_mask,
        error: 0,
    };
    // Uninitialised on purpose: a stack needs no zeroing.
    let mut stack: Vec<u8> = Vec::with_capacity(CHILD_STACK);
    // SAFETY: the stack grows down from its 16-byte aligned top, inside
    // the allocation; signals are blocked around the clone so that no
    // handler runs in the child before it resets them; the plan outlives
    // the child's use of it (CLONE_VFORK suspends this thread until the
    // child execs or exits).
    let pid = unsafe {
        let top = stack.as_mut_ptr().add(CHILD_STACK);
        let top = top.sub(top as usize % 16);
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut previous: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut previous);
        let pid = libc::clone(
            child_main,
            top.cast(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&raw mut plan).cast(),
        );
        let clone_error = io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &previous, ptr::null_mut());
        if pid < 0 {
            return Err(clone_error);
        }
        pid
    };
    // SAFETY: the child is done with the plan (it exec'ed or exited).
    let error = unsafe { ptr::read_volatile(&raw const plan.error) };
    drop(stack);
    if error != 0 {
        // It exited with 127 before exec: reap it, report why.
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        return Err(io::Error::from_raw_os_error(error));
    }
    // The child has its copies; ours must close so end of file arrives when
    // the child (and whatever inherited them) exits.
    drop(stdout_write);
    drop(stderr_write);
    Ok(Spawned {
        pid,
        stdout: stdout_read,
        stderr: stderr_read,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_finds_the_first_executable_file_and_skips_others() {
        let directory = tempfile::tempdir().unwrap();
        let first = directory.path().join("a");
        let second = directory.path().join("b");
        std::fs::create_dir_all(&first).unwrap();
        std::fs::create_dir_all(second.join("tool")).unwrap(); // a directory
        std::fs::write(first.join("tool"), "not executable").unwrap();
        let third = directory.path().join("c");
        std::fs::create_dir_all(&third).unwrap();
        let script = third.join("tool");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([&first, &second, &third]).unwrap();
        let found = search("tool", &path).unwrap();
        assert_eq!(found.as_bytes(), script.as_os_str().as_bytes());
        let missing = search("no-such-tool", &path).unwrap_err();
        assert_eq!(missing.raw_os_error(), Some(libc::ENOENT));
    }

    #[test]
    fn a_nul_byte_is_an_invalid_input_error_not_a_truncated_argument() {
        let invocation = Invocation::argv(["echo", "a\0b"]);
        let error = spawn(&invocation).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
    }
}
