//! The shell-splice guard: finds every argv element that some shell will
//! parse as code and refuses a `{factor}` placeholder there, at load time.
//!
//! Shell code hides in more places than `sh -c` as the first word: a shell
//! behind any wrapper (`taskset -c 0 sh -c`, `nice`, `timeout 5`, `env -i
//! FOO=1`, `perf stat --`, `sudo`, `xargs`, `find -exec`, `busybox sh`, ...),
//! every argument after the host of `ssh` (ssh joins them into one line for
//! the remote shell), the command strings of `su`/`runuser`, `sudo -s`/`-i`,
//! `watch` (without `-x`), `flock -c`, `script -c` and the string of `env -S`.
//! The rule: every argv element whose base name is a known shell is followed
//! through its options; its script (the first operand when a `-c` cluster
//! appeared) and its options are off limits, and so is the argument after any
//! later option cluster containing `c`. Where the guard cannot tell, it
//! refuses. A placeholder in a program position counts as every program its
//! levels name (`["{shell}", "-c", ...]` with `shell = ["sh"]` is a shell).
//!
//! Must not: run anything, read files, or judge a level's content except
//! where a position is safe only for some values (an ssh host that is a plain
//! host name, a shell's script file that does not start with `-`).

use crate::experiment::env_name;
use std::collections::BTreeMap;

/// Where a placeholder would reach shell code, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Splice {
    /// The factor whose placeholder is refused.
    pub factor: String,
    /// The argv index of the element holding it (0 = the program).
    pub index: usize,
    /// Why a shell parses that element (completes "which ...").
    pub reason: String,
    /// How to pass the value safely in this position.
    pub hint: String,
}

/// Names a shell goes by (base name, version digits stripped: `ksh93` → `ksh`).
const SHELLS: &[&str] = &[
    "sh", "bash", "rbash", "dash", "zsh", "ksh", "mksh", "lksh", "pdksh", "oksh", "ash", "hush",
    "yash", "posh", "fish", "csh", "tcsh", "elvish", "nu", "xonsh", "rc", "es",
];

/// Programs that run an argument (after `-c`/`--command`) with a shell.
const COMMAND_OPTION_PROGRAMS: &[&str] = &["flock", "script"];

/// Programs that hand their remaining arguments to a remote shell.
const REMOTE_SHELL_PROGRAMS: &[&str] = &["ssh", "slogin", "rsh", "autossh"];

/// Short options of ssh that take an argument (OpenSSH `ssh(1)`).
const SSH_OPTIONS_WITH_ARGUMENT: &str = "BbcDEeFIiJLlmOoPpQRSWw";

/// Short options of sudo that take an argument (`sudo(8)`).
const SUDO_OPTIONS_WITH_ARGUMENT: &str = "uUgCDprRtT";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Shell,
    RemoteShell,
    Su,
    Runuser,
    Sudo,
    Watch,
    CommandOption,
    Env,
}

/// The first place in `argv` where a placeholder of a factor in `levels`
/// (factor name → its level values) would reach shell code, if any.
pub fn find_splice(argv: &[String], levels: &BTreeMap<String, Vec<String>>) -> Option<Splice> {
    let guard = Guard { argv, levels };
    // The argument right after a shell's script is the script's `$0`, a
    // name the shell never runs: `sh -c 'echo "$1"' sh {v}` is the safe form
    // and its second `sh` is not a shell (its `$1`, `$2`... still count).
    let names: Vec<usize> = (0..argv.len())
        .filter(|&index| kind_of(&argv[index]) == Some(Kind::Shell))
        .filter_map(|index| guard.script_position(index))
        .map(|script| script + 1)
        .collect();
    (0..argv.len())
        .filter(|index| !names.contains(index))
        .find_map(|index| {
            guard
                .kinds(index)
                .into_iter()
                .find_map(|kind| guard.check(kind, index))
        })
}

/// The first known factor placeholder in a shell string (`shell = true`),
/// which a shell parses whole.
pub fn find_in_shell_string(text: &str, levels: &BTreeMap<String, Vec<String>>) -> Option<String> {
    known_placeholders(text, levels).into_iter().next()
}

struct Guard<'a> {
    argv: &'a [String],
    levels: &'a BTreeMap<String, Vec<String>>,
}

impl Guard<'_> {
    /// What the program at `index` may be: for a literal element its base
    /// name, for one with placeholders every base name its levels produce.
    fn kinds(&self, index: usize) -> Vec<Kind> {
        let mut kinds = Vec::new();
        for candidate in self.candidates(&self.argv[index]) {
            if let Some(kind) = kind_of(&candidate) {
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
            }
        }
        kinds
    }

    /// The element itself and the element with each level of each factor it
    /// names substituted in turn.
    fn candidates(&self, element: &str) -> Vec<String> {
        let mut candidates = vec![element.to_string()];
        for factor in known_placeholders(element, self.levels) {
            for level in &self.levels[&factor] {
                candidates.push(element.replace(&format!("{{{factor}}}"), level));
            }
        }
        candidates
    }

    fn placeholder(&self, index: usize) -> Option<String> {
        self.argv
            .get(index)
            .and_then(|element| known_placeholders(element, self.levels).into_iter().next())
    }

    fn refuse(&self, index: usize, reason: String, hint: &str) -> Option<Splice> {
        self.placeholder(index).map(|factor| Splice {
            hint: hint
                .replace(
                    "$VERDICT_{FACTOR}",
                    &format!("$VERDICT_{}", env_name(&factor)),
                )
                .replace("{FACTOR}", &factor),
            factor,
            index,
            reason,
        })
    }

    fn refuse_any(&self, from: usize, reason: &str, hint: &str) -> Option<Splice> {
        (from..self.argv.len()).find_map(|index| self.refuse(index, reason.to_string(), hint))
    }

    fn check(&self, kind: Kind, index: usize) -> Option<Splice> {
        let name = base_name(&self.argv[index]);
        match kind {
            Kind::Shell => self.check_shell(index, &name),
            Kind::RemoteShell => self.check_remote_shell(index, &name),
            Kind::Su => self.refuse_any(
                index + 1,
                &format!("is an argument of `{name}`, which hands its command (`-c`) and extra arguments to a shell"),
                HINT_ENVIRONMENT,
            ),
            Kind::Runuser => {
                let direct = self.argv[index + 1..].iter().any(|argument| {
                    argument == "-u" || argument == "--user" || argument.starts_with("--user=")
                });
                if direct {
                    None
                } else {
                    self.refuse_any(
                        index + 1,
                        &format!("is an argument of `{name}` without `-u`, which hands its command and arguments to a shell"),
                        HINT_ENVIRONMENT,
                    )
                }
            }
            Kind::Sudo => self.check_sudo(index, &name),
            Kind::Watch => {
                let direct = self.argv[index + 1..].iter().any(|argument| {
                    argument == "--exec" || (is_short_cluster(argument) && argument.contains('x'))
                });
                if direct {
                    None
                } else {
                    self.refuse_any(
                        index + 1,
                        &format!("is an argument of `{name}`, which joins its command into one line for `sh -c` (use `{name} -x` to run it without a shell)"),
                        HINT_ENVIRONMENT,
                    )
                }
            }
            Kind::CommandOption => self.check_command_options(index, &name),
            Kind::Env => self.check_env(index),
        }
    }

    /// Where the script of the shell at `index` is, when it has a `-c`
    /// cluster among its options (the option walk of [`Guard::check_shell`]).
    fn script_position(&self, index: usize) -> Option<usize> {
        let argv = self.argv;
        let mut position = index + 1;
        let mut script_option = false;
        while let Some(argument) = argv.get(position) {
            if argument == "--" || argument == "-" {
                position += 1;
                break;
            }
            if !((argument.starts_with('-') || argument.starts_with('+')) && argument.len() > 1) {
                break;
            }
            if let Some(long) = argument.strip_prefix("--") {
                let option = long.split('=').next().unwrap_or(long);
                script_option |= matches!(option, "command" | "init-command");
                if !long.contains('=') && matches!(option, "rcfile" | "init-file" | "emulate") {
                    position += 1;
                }
            } else {
                script_option |= argument[1..].contains(['c', 'C']);
                position += argument[1..]
                    .chars()
                    .filter(|c| matches!(c, 'o' | 'O'))
                    .count();
            }
            position += 1;
        }
        (script_option && position < argv.len()).then_some(position)
    }

    fn check_shell(&self, index: usize, name: &str) -> Option<Splice> {
        let argv = self.argv;
        let mut position = index + 1;
        let mut script_option = false;
        let mut options_ended = false;
        while position < argv.len() {
            let argument = &argv[position];
            if argument == "--" || argument == "-" {
                options_ended = true;
                position += 1;
                break;
            }
            let is_option =
                (argument.starts_with('-') || argument.starts_with('+')) && argument.len() > 1;
            if !is_option {
                break;
            }
            if let Some(splice) = self.refuse(
                position,
                format!("is an option of the shell `{name}`"),
                HINT_ARGUMENT,
            ) {
                return Some(splice);
            }
            let mut takes = 0;
            if let Some(long) = argument.strip_prefix("--") {
                let (option, has_value) = match long.split_once('=') {
                    Some((option, _)) => (option, true),
                    None => (long, false),
                };
                if matches!(option, "command" | "init-command") {
                    script_option = true;
                }
                if !has_value && matches!(option, "rcfile" | "init-file" | "emulate") {
                    takes = 1;
                }
            } else {
                let letters = &argument[1..];
                if letters.contains(['c', 'C']) {
                    script_option = true;
                }
                takes = letters.chars().filter(|c| matches!(c, 'o' | 'O')).count();
            }
            for _ in 0..takes {
                position += 1;
                if let Some(splice) = self.refuse(
                    position,
                    format!("is the value of an option of the shell `{name}`"),
                    HINT_ARGUMENT,
                ) {
                    return Some(splice);
                }
            }
            position += 1;
        }
        if position < argv.len() {
            if script_option {
                if let Some(splice) = self.refuse(
                    position,
                    format!("is the script the shell runs (`{name} -c SCRIPT`)"),
                    HINT_ARGUMENT,
                ) {
                    return Some(splice);
                }
            } else if !options_ended
                && self
                    .candidates(&argv[position])
                    .iter()
                    .skip(1)
                    .any(|value| value.starts_with('-') || value.starts_with('+'))
            {
                return self.refuse(
                    position,
                    format!("is the first operand of the shell `{name}` and one of its levels starts with `-` or `+`, so the shell would read it as options (such as `-c`)"),
                    "write `--` before it, or pass the value as `$VERDICT_{FACTOR}`",
                );
            }
        }
        // Belt and braces: whatever the option parsing above missed (an
        // option taking a value it does not know), the argument after any
        // later `-c` cluster may be the script.
        for (position, argument) in argv.iter().enumerate().skip(index + 1) {
            let script_follows = (is_short_cluster(argument) && argument[1..].contains(['c', 'C']))
                || argument == "--command"
                || argument == "--init-command";
            if script_follows {
                if let Some(splice) = self.refuse(
                    position + 1,
                    format!("follows `{argument}` after the shell `{name}`, so it may be the script the shell runs"),
                    HINT_ARGUMENT,
                ) {
                    return Some(splice);
                }
            }
        }
        None
    }

    fn check_remote_shell(&self, index: usize, name: &str) -> Option<Splice> {
        let argv = self.argv;
        let mut position = index + 1;
        while position < argv.len() {
            let argument = &argv[position];
            if argument == "--" {
                position += 1;
                break;
            }
            if !(argument.starts_with('-') && argument.len() > 1) {
                break;
            }
            if let Some(splice) = self.refuse(
                position,
                format!("is an option of `{name}` (options such as `-o ProxyCommand=` and `-o LocalCommand=` run shell commands)"),
                HINT_REMOTE,
            ) {
                return Some(splice);
            }
            let letters = &argument[1..];
            if let Some(at) = letters.find(|c| SSH_OPTIONS_WITH_ARGUMENT.contains(c)) {
                if at + 1 == letters.len() {
                    position += 1;
                    if let Some(splice) = self.refuse(
                        position,
                        format!("is the value of an option of `{name}` (options such as `-o ProxyCommand=` run shell commands)"),
                        HINT_REMOTE,
                    ) {
                        return Some(splice);
                    }
                }
            }
            position += 1;
        }
        if position >= argv.len() {
            return None;
        }
        let plain_host = |value: &String| {
            !value.is_empty()
                && !value.starts_with('-')
                && value
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-@:[]%".contains(c))
        };
        let host_values = self.candidates(&argv[position]);
        if host_values.len() > 1 && !host_values.iter().skip(1).all(plain_host) {
            return self.refuse(
                position,
                format!("is the host of `{name}` and one of its levels is not a plain host name (letters, digits, `._-@:[]%`, not starting with `-`)"),
                HINT_REMOTE,
            );
        }
        self.refuse_any(
            position + 1,
            &format!("comes after the host of `{name}`: {name} joins every argument after the host into one command line for the remote shell"),
            HINT_REMOTE,
        )
    }

    fn check_sudo(&self, index: usize, name: &str) -> Option<Splice> {
        let argv = self.argv;
        let mut position = index + 1;
        let mut through_shell = false;
        while position < argv.len() {
            let argument = &argv[position];
            if argument == "--" {
                position += 1;
                break;
            }
            if !(argument.starts_with('-') && argument.len() > 1) {
                break;
            }
            if let Some(long) = argument.strip_prefix("--") {
                let option = long.split('=').next().unwrap_or(long);
                if matches!(option, "shell" | "login") {
                    through_shell = true;
                }
                if !long.contains('=')
                    && matches!(
                        option,
                        "user"
                            | "group"
                            | "close-from"
                            | "chdir"
                            | "prompt"
                            | "chroot"
                            | "role"
                            | "type"
                            | "command-timeout"
                            | "other-user"
                            | "host"
                    )
                {
                    position += 1;
                }
            } else {
                let letters = &argument[1..];
                for (at, letter) in letters.char_indices() {
                    if matches!(letter, 's' | 'i') {
                        through_shell = true;
                    }
                    if SUDO_OPTIONS_WITH_ARGUMENT.contains(letter) {
                        if at + 1 == letters.len() {
                            position += 1;
                        }
                        break;
                    }
                }
            }
            position += 1;
        }
        if through_shell {
            self.refuse_any(
                position,
                &format!("is part of the command `{name} -s`/`-i` runs through a shell"),
                HINT_ENVIRONMENT,
            )
        } else {
            None
        }
    }

    fn check_command_options(&self, index: usize, name: &str) -> Option<Splice> {
        let argv = self.argv;
        for (position, argument) in argv.iter().enumerate().skip(index + 1) {
            if argument.starts_with("--command=") {
                if let Some(splice) = self.refuse(
                    position,
                    format!("is the command `{name}` runs with a shell"),
                    HINT_ARGUMENT,
                ) {
                    return Some(splice);
                }
            }
            let command_follows =
                (is_short_cluster(argument) && argument.contains('c')) || argument == "--command";
            if command_follows {
                if let Some(splice) = self.refuse(
                    position + 1,
                    format!("is the command `{name} {argument}` runs with a shell"),
                    HINT_ARGUMENT,
                ) {
                    return Some(splice);
                }
            }
        }
        None
    }

    fn check_env(&self, index: usize) -> Option<Splice> {
        let argv = self.argv;
        let reason = || {
            "is the string `env -S` splits into a command line (quotes, `${VAR}`, escapes)"
                .to_string()
        };
        let mut position = index + 1;
        while position < argv.len() {
            let argument = &argv[position];
            if argument == "--" || !(argument.starts_with('-') && argument.len() > 1) {
                break;
            }
            if let Some(long) = argument.strip_prefix("--") {
                if long.starts_with("split-string") {
                    if let Some(splice) = self.refuse(position, reason(), HINT_ARGUMENT) {
                        return Some(splice);
                    }
                    if long == "split-string" {
                        position += 1;
                        if let Some(splice) = self.refuse(position, reason(), HINT_ARGUMENT) {
                            return Some(splice);
                        }
                    }
                } else if matches!(long, "unset" | "chdir") {
                    position += 1;
                }
            } else {
                let letters = &argument[1..];
                if let Some(at) = letters.find(['u', 'C', 'S']) {
                    let split = letters[at..].starts_with('S');
                    if split {
                        if let Some(splice) = self.refuse(position, reason(), HINT_ARGUMENT) {
                            return Some(splice);
                        }
                    }
                    if at + 1 == letters.len() {
                        position += 1;
                        if split {
                            if let Some(splice) = self.refuse(position, reason(), HINT_ARGUMENT) {
                                return Some(splice);
                            }
                        }
                    }
                }
            }
            position += 1;
        }
        None
    }
}

const HINT_ARGUMENT: &str = "pass the value as its own argument after the script (`sh -c 'echo \"$1\"' sh {{FACTOR}}`) or read \"$VERDICT_{FACTOR}\" (set for every iteration and hook)";
const HINT_REMOTE: &str = "no argument after the host is safe, so send the value on stdin instead (`sh -c 'printf \"%s\\n\" \"$1\" | ssh HOST ./script' sh {{FACTOR}}`, the remote script reading it with `read`)";
const HINT_ENVIRONMENT: &str = "read \"$VERDICT_{FACTOR}\" in the script (set for every iteration and hook), or run the program directly without the shell in between";

fn kind_of(program: &str) -> Option<Kind> {
    let name = base_name(program);
    let bare = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    if SHELLS.contains(&name.as_str()) || SHELLS.contains(&bare) {
        return Some(Kind::Shell);
    }
    if REMOTE_SHELL_PROGRAMS.contains(&name.as_str()) {
        return Some(Kind::RemoteShell);
    }
    if COMMAND_OPTION_PROGRAMS.contains(&name.as_str()) {
        return Some(Kind::CommandOption);
    }
    match name.as_str() {
        "su" => Some(Kind::Su),
        "runuser" => Some(Kind::Runuser),
        "sudo" => Some(Kind::Sudo),
        "watch" => Some(Kind::Watch),
        "env" => Some(Kind::Env),
        _ => None,
    }
}

fn base_name(program: &str) -> String {
    program.rsplit('/').next().unwrap_or(program).to_string()
}

/// `-abc` or `+abc`: a cluster of single-letter options.
fn is_short_cluster(argument: &str) -> bool {
    (argument.starts_with('-') || argument.starts_with('+'))
        && argument.len() > 1
        && argument[1..].chars().all(|c| c.is_ascii_alphabetic())
}

/// The factors of `levels` whose `{name}` appears in `text`, in order.
fn known_placeholders(text: &str, levels: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let name = &after[..close];
                if levels.contains_key(name) && !names.iter().any(|known| known == name) {
                    names.push(name.to_string());
                }
                // Go on right after this `{`: `{{v}}` still holds `{v}`.
                rest = after;
            }
            None => break,
        }
    }
    names
}
