//! Starting a child with `posix_spawn` directly: argv without a shell, the
//! inherited environment plus the invocation's variables, stdin from
//! `/dev/null`, stdout and stderr into fresh pipes, its own process group,
//! an empty signal mask and `SIGPIPE` back to its default (Rust ignores it
//! in verdict; std's `Command` restores it the same way).
//!
//! Why not std's `Command`: it copies verdict's whole environment into a
//! map and back into C strings on every spawn once any variable is set,
//! and opens `/dev/null` each time. Here the inherited environment is
//! converted once per process and `/dev/null` opened once, which is a
//! measurable part of the per-iteration overhead on a command like `true`.
//! The environment is snapshotted at the first spawn: verdict never changes
//! its own environment after starting.
//!
//! A bare program name is looked up in verdict's `PATH` by `posix_spawnp`,
//! or in the invocation's `PATH` when it sets one (as std does). Must not
//! wait for, signal or read from the child: `system.rs` does that.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;
use std::ptr;
use std::sync::OnceLock;

use crate::{Invocation, Program};

/// `posix_spawn` and `posix_spawnp` share this signature.
type SpawnFunction = unsafe extern "C" fn(
    *mut libc::pid_t,
    *const libc::c_char,
    *const libc::posix_spawn_file_actions_t,
    *const libc::posix_spawnattr_t,
    *const *mut libc::c_char,
    *const *mut libc::c_char,
) -> libc::c_int;

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

/// Turns a `posix_spawn*` return code into a result.
fn check(code: libc::c_int) -> io::Result<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(code))
    }
}

/// The first executable regular file called `program` in `path`
/// (`execvp`'s rule; an empty element means the current directory).
fn search(program: &str, path: &OsStr) -> io::Result<CString> {
    for directory in path.as_bytes().split(|&byte| byte == b':') {
        let directory = if directory.is_empty() {
            Path::new(".")
        } else {
            Path::new(OsStr::from_bytes(directory))
        };
        let candidate = directory.join(program);
        let Ok(metadata) = std::fs::metadata(&candidate) else {
            continue;
        };
        let candidate = c_string(candidate.into_os_string().into_vec())?;
        // SAFETY: `candidate` is a valid NUL-terminated path.
        let executable = unsafe { libc::access(candidate.as_ptr(), libc::X_OK) } == 0;
        if metadata.is_file() && executable {
            return Ok(candidate);
        }
    }
    Err(io::Error::from_raw_os_error(libc::ENOENT))
}

/// File actions and attributes, destroyed on every path out.
struct SpawnSetup {
    actions: libc::posix_spawn_file_actions_t,
    attributes: libc::posix_spawnattr_t,
}

impl SpawnSetup {
    fn new() -> io::Result<Box<SpawnSetup>> {
        // SAFETY: zeroed storage is what the init functions expect to
        // overwrite; both are destroyed in Drop only after a successful init
        // (a failed init of either returns before the box is built).
        unsafe {
            let mut setup = Box::new(SpawnSetup {
                actions: std::mem::zeroed(),
                attributes: std::mem::zeroed(),
            });
            check(libc::posix_spawn_file_actions_init(&mut setup.actions))?;
            let code = libc::posix_spawnattr_init(&mut setup.attributes);
            if code != 0 {
                libc::posix_spawn_file_actions_destroy(&mut setup.actions);
                std::mem::forget(setup);
                return Err(io::Error::from_raw_os_error(code));
            }
            Ok(setup)
        }
    }
}

impl Drop for SpawnSetup {
    fn drop(&mut self) {
        // SAFETY: both were initialised in `new`.
        unsafe {
            libc::posix_spawn_file_actions_destroy(&mut self.actions);
            libc::posix_spawnattr_destroy(&mut self.attributes);
        }
    }
}

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

    // A bare name is looked up in the child's PATH: verdict's (by
    // posix_spawnp) unless the invocation sets its own.
    let bare = !program_name.as_bytes().contains(&b'/');
    let own_path = invocation
        .env
        .iter()
        .rev()
        .find(|(name, _)| name == "PATH")
        .map(|(_, value)| value.as_str());
    let resolved = match (bare, own_path) {
        (true, Some(path)) => Some(search(invocation.program.program_name(), OsStr::new(path))?),
        _ => None,
    };
    let cwd = match &invocation.cwd {
        Some(directory) => Some(c_string(directory.as_os_str().as_bytes())?),
        None => None,
    };

    let null = dev_null()?;
    let (stdout_read, stdout_write) = pipe(libc::O_CLOEXEC)?;
    let (stderr_read, stderr_write) = pipe(libc::O_CLOEXEC)?;
    let mut setup = SpawnSetup::new()?;
    let mut pid: libc::pid_t = 0;
    // SAFETY: every pointer handed over is valid until posix_spawn returns:
    // the C strings and pointer arrays above outlive this block, `setup` is
    // initialised, and the descriptors are open.
    unsafe {
        let actions = &mut setup.actions;
        check(libc::posix_spawn_file_actions_adddup2(actions, null, 0))?;
        check(libc::posix_spawn_file_actions_adddup2(
            actions,
            stdout_write.as_raw_fd(),
            1,
        ))?;
        check(libc::posix_spawn_file_actions_adddup2(
            actions,
            stderr_write.as_raw_fd(),
            2,
        ))?;
        if let Some(cwd) = &cwd {
            check(libc::posix_spawn_file_actions_addchdir_np(
                actions,
                cwd.as_ptr(),
            ))?;
        }
        let attributes = &mut setup.attributes;
        let mut signals: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut signals);
        check(libc::posix_spawnattr_setsigmask(attributes, &signals))?;
        libc::sigaddset(&mut signals, libc::SIGPIPE);
        check(libc::posix_spawnattr_setsigdefault(attributes, &signals))?;
        check(libc::posix_spawnattr_setpgroup(attributes, 0))?;
        let flags = libc::POSIX_SPAWN_SETPGROUP
            | libc::POSIX_SPAWN_SETSIGMASK
            | libc::POSIX_SPAWN_SETSIGDEF;
        check(libc::posix_spawnattr_setflags(
            attributes,
            flags as libc::c_short,
        ))?;

        // posix_spawnp searches verdict's PATH; a resolved or slashed path
        // is executed as it is.
        let (start, program): (SpawnFunction, &CString) = match &resolved {
            Some(path) => (libc::posix_spawn, path),
            None if bare => (libc::posix_spawnp, program_name),
            None => (libc::posix_spawn, program_name),
        };
        let code = start(
            &mut pid,
            program.as_ptr(),
            &setup.actions,
            &setup.attributes,
            argv_pointers.as_ptr(),
            envp.as_ptr(),
        );
        check(code)?;
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
