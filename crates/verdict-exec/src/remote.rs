//! Quoting for the remote shell. ssh joins its command arguments with spaces
//! and hands the result to the far side's login shell, so every argument is
//! single-quoted for a POSIX shell (a `'` becomes `'\''`): whatever bytes an
//! argument holds (quotes, `;`, `$()`, backticks, newlines, unicode), the far
//! side's program receives exactly that argument, and no value ever becomes
//! shell syntax there.
//!
//! Pure string functions; must not start processes.

/// `text` as one single-quoted POSIX shell word.
pub fn quote_for_remote_shell(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('\'');
    for character in text.chars() {
        if character == '\'' {
            quoted.push_str(r"'\''");
        } else {
            quoted.push(character);
        }
    }
    quoted.push('\'');
    quoted
}

/// The one string to give ssh as its command so that the far side runs
/// `argv` exactly: each element quoted, joined by spaces.
pub fn remote_command<S: AsRef<str>>(argv: &[S]) -> String {
    argv.iter()
        .map(|argument| quote_for_remote_shell(argument.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cancel, Invocation, Status, SystemExecutor, Target};

    /// Arguments that would run code or split if any of them reached a shell
    /// unquoted.
    pub(crate) const HOSTILE: &[&str] = &[
        "; touch MARKER",
        "$(touch MARKER)",
        "`touch MARKER`",
        "it's \"quoted\"",
        "line one\nline two",
        "ünïcødé ✓",
        "",
        "   ",
        "*",
        "\\'",
        "'",
        "a'b'c",
    ];

    #[test]
    fn quotes_every_argument() {
        assert_eq!(quote_for_remote_shell("plain"), "'plain'");
        assert_eq!(quote_for_remote_shell("it's"), r"'it'\''s'");
        assert_eq!(quote_for_remote_shell(""), "''");
        assert_eq!(remote_command(&["echo", "a b"]), "'echo' 'a b'");
    }

    /// The local shell stands in for the remote one here (ssh hands its
    /// command to `$SHELL -c`); the sshd tests check the same over ssh.
    #[test]
    fn a_posix_shell_receives_exactly_the_arguments() {
        let directory = tempfile::tempdir().unwrap();
        let mut argv = vec!["printf".to_string(), "%s\\0".to_string()];
        argv.extend(HOSTILE.iter().map(|text| text.to_string()));
        let outcome = SystemExecutor
            .run(
                &Invocation::argv(["/bin/sh", "-c", &remote_command(&argv)])
                    .with_cwd(directory.path()),
                &Cancel::new(),
            )
            .unwrap();
        assert_eq!(outcome.status, Status::Exited(0));
        let expected: Vec<u8> = HOSTILE
            .iter()
            .flat_map(|text| text.bytes().chain([0]))
            .collect();
        assert_eq!(outcome.stdout, expected);
        assert!(!directory.path().join("MARKER").exists());
    }
}
