//! What the real-QEMU tests share: the tools a guest needs (or the test
//! fails naming their packages), Debian's kernel, and this build's
//! `verdict` as the agent.

use std::path::PathBuf;
use verdict_exec::AgentBinary;

/// The agent as the binary describes itself (`verdict agent --identity`).
pub fn agent_binary() -> AgentBinary {
    let verdict = assert_cmd::cargo::cargo_bin("verdict");
    let output = std::process::Command::new(&verdict)
        .args(["agent", "--identity"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let identity = String::from_utf8(output.stdout).unwrap().trim().to_string();
    // `verdict-agent VERSION (COMMIT) SHA256`; the file name on the host
    // holds the crate version and the hash's first 16 digits.
    let hash = identity.rsplit(' ').next().unwrap_or_default();
    assert!(
        identity.starts_with(&format!("verdict-agent {} (", env!("CARGO_PKG_VERSION")))
            && hash.len() == 64,
        "{identity}"
    );
    AgentBinary {
        local_path: verdict,
        file_name: format!("agent-{}-{}", env!("CARGO_PKG_VERSION"), &hash[..16]),
        identity,
        architecture: std::env::consts::ARCH.to_string(),
    }
}

/// The newest Debian kernel image in /boot (linux-image-amd64), once QEMU
/// and the guest's tools are there; otherwise the test fails naming the
/// package (unless missing tools are allowed, then `None`).
pub fn debian_kernel() -> Option<PathBuf> {
    verdict_testkit::require_program("qemu-system-x86_64", "qemu-system-x86")?;
    for (program, package) in [
        ("busybox", "busybox-static"),
        ("sshd", "openssh-server"),
        ("ssh", "openssh-client"),
        ("ssh-keygen", "openssh-client"),
    ] {
        verdict_testkit::require_program(program, package)?;
    }
    let mut kernels: Vec<PathBuf> = std::fs::read_dir("/boot")
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("vmlinuz-"))
        })
        .collect();
    kernels.sort();
    match kernels.pop() {
        Some(kernel) => Some(kernel),
        None => verdict_testkit::missing(
            "a kernel image in /boot",
            "apt-get install linux-image-amd64",
        ),
    }
}
