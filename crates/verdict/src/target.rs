//! This verdict binary as the agent on ssh hosts and VM guests: its
//! build identity (the version build.rs sets and the hash of the
//! executable) and the architecture it runs on. The machines themselves
//! are reached through verdict-engine (`machine`, `launch`).

/// This verdict binary as an agent for ssh targets: its path, its build
/// identity (version and the first 16 hex digits of the SHA-256 of the
/// executable) and the architecture it runs on. The executable is hashed
/// once per process, however many hosts it connects to.
pub(crate) fn own_identity() -> Result<verdict_exec::AgentBinary, verdict_engine::CommandError> {
    static IDENTITY: std::sync::OnceLock<Result<verdict_exec::AgentBinary, String>> =
        std::sync::OnceLock::new();
    IDENTITY
        .get_or_init(|| hash_own_executable().map_err(|error| error.to_string()))
        .clone()
        .map_err(verdict_engine::CommandError::internal)
}

fn hash_own_executable() -> Result<verdict_exec::AgentBinary, verdict_engine::CommandError> {
    use sha2::{Digest, Sha256};
    let local_path = std::env::current_exe().map_err(|error| {
        verdict_engine::CommandError::internal(format!("find this executable: {error}"))
    })?;
    let mut file = std::fs::File::open(&local_path).map_err(|error| {
        verdict_engine::CommandError::internal(format!("read {}: {error}", local_path.display()))
    })?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(|error| {
        verdict_engine::CommandError::internal(format!("read {}: {error}", local_path.display()))
    })?;
    let hash = hex::encode(hasher.finalize());
    // The file name keeps to the crate version (no spaces); the identity
    // carries the commit too, and the executable's hash decides.
    let file_version = env!("CARGO_PKG_VERSION");
    let version = crate::common::VERSION;
    Ok(verdict_exec::AgentBinary {
        local_path,
        file_name: format!("agent-{file_version}-{}", &hash[..16]),
        identity: format!("verdict-agent {version} {hash}"),
        architecture: machine_architecture(),
    })
}

/// `uname -m` of this machine.
fn machine_architecture() -> String {
    // SAFETY: utsname is plain data; zeroed is valid, uname fills it.
    let mut name: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: uname writes into the live struct.
    if unsafe { libc::uname(&mut name) } != 0 {
        return std::env::consts::ARCH.to_string();
    }
    // SAFETY: uname NUL-terminates the field.
    unsafe { std::ffi::CStr::from_ptr(name.machine.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}
