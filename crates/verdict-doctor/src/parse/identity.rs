//! Who built the running kernel and which machine this is: the compiler
//! line of `/proc/version`, and the server address of an ssh session's
//! `SSH_CONNECTION` (from a process environment block).
//!
//! Must not: keep anything else of an environment block (it can hold
//! secrets), read files, or guess.

/// The compiler (and linker) that built the kernel: the second
/// parenthesized group of `/proc/version`, after `(user@host)`:
/// `Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org)
/// (gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for
/// Debian) 2.40) #1 SMP ...` gives `gcc-12 (Debian 12.2.0-14+deb12u1)
/// 12.2.0, GNU ld (GNU Binutils for Debian) 2.40`. `None` when the line
/// has no such group (very old kernels print only the compiler's version
/// as `(gcc version X)`, which is returned as it is).
pub fn kernel_compiler(proc_version: &str) -> Option<String> {
    let rest = proc_version.trim().strip_prefix("Linux version ")?;
    let mut groups = Vec::new();
    let mut depth = 0usize;
    let mut start = 0usize;
    for (index, character) in rest.char_indices() {
        match character {
            '(' => {
                if depth == 0 {
                    start = index + 1;
                }
                depth += 1;
            }
            ')' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    groups.push(&rest[start..index]);
                    if groups.len() == 2 {
                        break;
                    }
                }
            }
            // The groups come before `#1 SMP ...`.
            '#' if depth == 0 => break,
            _ => {}
        }
    }
    let compiler = match groups.as_slice() {
        [_, compiler] => compiler,
        [only] if !only.contains('@') => only,
        _ => return None,
    };
    let compiler = compiler.trim();
    (!compiler.is_empty()).then(|| compiler.to_string())
}

/// The server address of `SSH_CONNECTION` (`client port server port`) in a
/// NUL-separated environment block (`/proc/self/environ`): the address
/// the machine was reached at. Nothing else of the block is kept.
pub fn ssh_server_address(environ: &[u8]) -> Option<String> {
    environ
        .split(|byte| *byte == 0)
        .find_map(|entry| entry.strip_prefix(b"SSH_CONNECTION="))
        .and_then(|value| std::str::from_utf8(value).ok())
        .and_then(|value| value.split_whitespace().nth(2))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compiler_group_of_real_version_lines() {
        // Debian 12's kernel, and this machine's.
        assert_eq!(
            kernel_compiler(
                "Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1 (2025-11-09)\n"
            )
            .as_deref(),
            Some("gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40")
        );
        assert_eq!(
            kernel_compiler(
                "Linux version 6.18.44-fc-v1147 (builder@sandboxing) (gcc (GCC) 15.3.0, GNU ld (GNU Binutils) 2.46) #1 SMP PREEMPT_DYNAMIC @0"
            )
            .as_deref(),
            Some("gcc (GCC) 15.3.0, GNU ld (GNU Binutils) 2.46")
        );
        // clang-built kernels name clang and lld.
        assert_eq!(
            kernel_compiler(
                "Linux version 6.6.0 (user@box) (ClangBuiltLinux clang version 17.0.6, LLD 17.0.6) #1 SMP"
            )
            .as_deref(),
            Some("ClangBuiltLinux clang version 17.0.6, LLD 17.0.6")
        );
        // Old kernels: only the compiler.
        assert_eq!(
            kernel_compiler("Linux version 2.6.32 (gcc version 4.4.7) #1 SMP").as_deref(),
            Some("gcc version 4.4.7")
        );
        assert_eq!(kernel_compiler("garbage"), None);
        assert_eq!(kernel_compiler("Linux version 6.1 (user@host) #1"), None);
    }

    #[test]
    fn only_the_ssh_server_address_is_taken() {
        let environ =
            b"PGPASSWORD=secret\0SSH_CONNECTION=127.0.0.1 51234 127.0.0.1 2222\0HOME=/root\0";
        assert_eq!(ssh_server_address(environ).as_deref(), Some("127.0.0.1"));
        assert_eq!(ssh_server_address(b"HOME=/root\0"), None);
        assert_eq!(ssh_server_address(b"SSH_CONNECTION=broken\0"), None);
    }
}
