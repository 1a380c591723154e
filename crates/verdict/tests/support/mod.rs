//! Helpers shared by the binary's integration tests.

pub mod sshd;
