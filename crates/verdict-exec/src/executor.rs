//! The `Executor` trait: the one seam between verdict and the processes it
//! starts, so the engine and bisection can run against a fake.
//!
//! Trait and forwarding impls only; no process handling lives here.

use std::sync::Arc;

use crate::{Cancel, ExecError, Invocation, Outcome};

/// Runs one command to completion (or to its timeout or cancellation).
pub trait Executor: Send + Sync {
    /// Runs `invocation` and waits for it. A non-zero exit, a signal or a
    /// timeout is an `Ok` outcome; `Err` means there is no outcome: the
    /// command could not start, `cancel` was cancelled, or the system failed.
    fn run(&self, invocation: &Invocation, cancel: &Cancel) -> Result<Outcome, ExecError>;
}

impl<T: Executor + ?Sized> Executor for &T {
    fn run(&self, invocation: &Invocation, cancel: &Cancel) -> Result<Outcome, ExecError> {
        (**self).run(invocation, cancel)
    }
}

impl<T: Executor + ?Sized> Executor for Box<T> {
    fn run(&self, invocation: &Invocation, cancel: &Cancel) -> Result<Outcome, ExecError> {
        (**self).run(invocation, cancel)
    }
}

impl<T: Executor + ?Sized> Executor for Arc<T> {
    fn run(&self, invocation: &Invocation, cancel: &Cancel) -> Result<Outcome, ExecError> {
        (**self).run(invocation, cancel)
    }
}
