//! The `Target` trait, also exported as `Target`: the one seam between
//! verdict and the machine under test. It runs commands there, reads files
//! there and tells that machine's clock, so the engine, the environment
//! capture and bisection run the same against the local machine
//! ([`SystemExecutor`](crate::SystemExecutor)), another machine over ssh
//! ([`SshTarget`](crate::SshTarget)) or a fake.
//!
//! Trait and forwarding impls only; no process handling lives here.

use std::io;
use std::path::Path;
use std::sync::Arc;

use crate::{Cancel, ExecError, Invocation, Outcome};

/// The machine under test: runs one command to completion (or to its
/// timeout or cancellation), reads its files and its clock.
pub trait Target: Send + Sync {
    /// Runs `invocation` and waits for it. A non-zero exit, a signal or a
    /// timeout is an `Ok` outcome; `Err` means there is no outcome: the
    /// command could not start, `cancel` was cancelled, or the system failed.
    fn run(&self, invocation: &Invocation, cancel: &Cancel) -> Result<Outcome, ExecError>;

    /// Reads a whole file on the target (a metric file, /proc, /sys).
    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>>;

    /// The names of a directory's entries on the target, sorted.
    fn list_directory(&self, path: &Path) -> io::Result<Vec<String>>;

    /// The target's wall clock: milliseconds since the Unix epoch.
    fn now_unix_ms(&self) -> i64;

    /// What the target is called in messages and in the store: `local`, or
    /// the host name given on the command line.
    fn target_name(&self) -> &str {
        "local"
    }
}

macro_rules! forward_executor {
    ($($wrapper:ty),*) => {$(
        impl<T: Target + ?Sized> Target for $wrapper {
            fn run(&self, invocation: &Invocation, cancel: &Cancel) -> Result<Outcome, ExecError> {
                (**self).run(invocation, cancel)
            }
            fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
                (**self).read_file(path)
            }
            fn list_directory(&self, path: &Path) -> io::Result<Vec<String>> {
                (**self).list_directory(path)
            }
            fn now_unix_ms(&self) -> i64 {
                (**self).now_unix_ms()
            }
            fn target_name(&self) -> &str {
                (**self).target_name()
            }
        }
    )*};
}

forward_executor!(&T, Box<T>, Arc<T>);
