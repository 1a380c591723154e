//! A cheap, clonable cancellation token that also wakes runs blocked on it.
//!
//! Cancellation is a flag plus, once a real run has asked for one, an eventfd
//! that becomes readable (and stays readable: it is never drained) when the
//! token is cancelled, so a [`SystemExecutor`](crate::SystemExecutor) blocked
//! in `poll` wakes at once. It must not kill anything itself.

use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Cancels runs: `cancel()` from any thread (a Ctrl-C handler, for example)
/// makes every run using this token, or a clone of it, kill its process group
/// and return [`ExecError::Cancelled`](crate::ExecError::Cancelled).
#[derive(Clone, Default)]
pub struct Cancel(Arc<CancelInner>);

#[derive(Default)]
struct CancelInner {
    cancelled: AtomicBool,
    /// Created lazily by the first run that waits on the token; holds the
    /// errno when creation failed.
    wake: OnceLock<Result<OwnedFd, i32>>,
}

impl Cancel {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels every run using this token, now and later.
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::SeqCst);
        if let Some(Ok(descriptor)) = self.0.wake.get() {
            let one: u64 = 1;
            // SAFETY: writes 8 bytes from a live u64 to an eventfd we own. A
            // failure (EAGAIN when the counter is saturated) still leaves the
            // eventfd readable, which is all the waiters need.
            unsafe {
                libc::write(
                    descriptor.as_raw_fd(),
                    (&one as *const u64).cast(),
                    std::mem::size_of::<u64>(),
                );
            }
        }
    }

    /// Whether [`cancel`](Self::cancel) has been called.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    /// The descriptor that becomes readable on cancellation. Callers must
    /// check [`is_cancelled`](Self::is_cancelled) after getting it, since a
    /// cancel that raced with its creation sets only the flag.
    pub(crate) fn wake_descriptor(&self) -> io::Result<RawFd> {
        let created = self.0.wake.get_or_init(|| {
            // SAFETY: eventfd has no memory arguments; the result is checked.
            let raw = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
            if raw < 0 {
                Err(io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO))
            } else {
                // SAFETY: `raw` is a fresh descriptor nobody else owns.
                Ok(unsafe { OwnedFd::from_raw_fd(raw) })
            }
        });
        match created {
            Ok(descriptor) => Ok(descriptor.as_raw_fd()),
            Err(errno) => Err(io::Error::from_raw_os_error(*errno)),
        }
    }
}

impl fmt::Debug for Cancel {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Cancel")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readable(descriptor: RawFd) -> bool {
        let mut poll_descriptor = libc::pollfd {
            fd: descriptor,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, zero timeout.
        let ready = unsafe { libc::poll(&mut poll_descriptor, 1, 0) };
        ready == 1 && poll_descriptor.revents & libc::POLLIN != 0
    }

    #[test]
    fn clones_share_the_flag_and_the_wake_descriptor() {
        let token = Cancel::new();
        let clone = token.clone();
        let descriptor = clone.wake_descriptor().unwrap();
        assert_eq!(token.wake_descriptor().unwrap(), descriptor);
        assert!(!clone.is_cancelled());
        assert!(!readable(descriptor));
        token.cancel();
        assert!(clone.is_cancelled());
        assert!(readable(descriptor));
        // Stays readable for every later waiter.
        assert!(readable(descriptor));
        token.cancel();
        assert!(readable(descriptor));
    }

    #[test]
    fn cancel_before_the_descriptor_exists_sets_the_flag() {
        let token = Cancel::new();
        token.cancel();
        assert!(token.is_cancelled());
        // A descriptor created afterwards is not readable: callers check the
        // flag after getting it.
        let descriptor = token.wake_descriptor().unwrap();
        assert!(!readable(descriptor));
    }
}
