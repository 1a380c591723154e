//! What a release ships besides the commands: `verdict --version` names the
//! commit the binary was built from (build/git_version.rs, exercised here
//! on real git repositories: clean, dirty, untracked, no commit, a tarball
//! inside another repository, no git at all), stored runs and the agent's
//! identity carry the same string, the bash completion script completes
//! real subcommands in a real bash, and the man pages render with groff
//! and name every subcommand. (clap_complete's bash script also offers
//! the hidden `agent`; the man pages leave it out.)

mod common;

#[path = "../build/git_version.rs"]
mod git_version;

use common::{succeed, verdict, verdict_without_store};
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `git ARGUMENTS` in `directory` with a fixed identity and dates;
/// returns its trimmed stdout.
fn git(directory: &Path, arguments: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.invalid",
        ])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgSign=false",
        ])
        .args(arguments)
        .current_dir(directory)
        .env("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
        .env("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {arguments:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// A workspace shaped like verdict's (manifests, one crate, a README).
fn write_workspace(directory: &Path) {
    std::fs::create_dir_all(directory.join("crates/a/src")).unwrap();
    std::fs::write(directory.join("Cargo.toml"), "[workspace]\n").unwrap();
    std::fs::write(directory.join("Cargo.lock"), "version = 4\n").unwrap();
    std::fs::write(directory.join("crates/a/Cargo.toml"), "[package]\n").unwrap();
    std::fs::write(directory.join("crates/a/src/lib.rs"), "//! a\n").unwrap();
    std::fs::write(directory.join("README.md"), "# a\n").unwrap();
}

fn describe(directory: &Path) -> String {
    git_version::describe("git".as_ref(), directory).description
}

#[test]
fn a_commit_is_named_by_hash_and_date_and_dirty_follows_the_build_inputs() {
    verdict_testkit::require_program("git", "git").unwrap();
    let directory = tempfile::tempdir().unwrap();
    let root = directory.path();
    write_workspace(root);
    git(root, &["init", "-q"]);
    git(root, &["add", "."]);
    assert_eq!(
        describe(root),
        "commit unknown: the git checkout has no commit"
    );
    git(root, &["commit", "-q", "-m", "first"]);
    let hash = git(root, &["log", "-1", "--format=%h"]);
    let clean = format!("{hash} 2026-01-02");
    assert_eq!(describe(root), clean);

    let commit = git_version::describe("git".as_ref(), root);
    for watched in [
        ".git/HEAD",
        ".git/index",
        ".git/refs/heads/main",
        "crates/a/src",
    ] {
        assert!(
            commit.watched.contains(&root.join(watched)),
            "{watched} not watched: {:?}",
            commit.watched
        );
    }
    assert!(commit.watched.iter().all(|path| path.exists()));

    // Docs and tests are not what the binary is built from.
    std::fs::write(root.join("README.md"), "# b\n").unwrap();
    assert_eq!(describe(root), clean);
    let dirty = format!("{hash}-dirty 2026-01-02");
    std::fs::write(root.join("crates/a/src/lib.rs"), "//! b\n").unwrap();
    assert_eq!(describe(root), dirty);
    git(root, &["checkout", "-q", "--", "crates/a/src/lib.rs"]);
    assert_eq!(describe(root), clean);
    std::fs::write(root.join("crates/a/src/new.rs"), "//! new\n").unwrap();
    assert_eq!(describe(root), dirty);
    std::fs::remove_file(root.join("crates/a/src/new.rs")).unwrap();
    std::fs::write(root.join("Cargo.lock"), "version = 3\n").unwrap();
    assert_eq!(describe(root), dirty);
}

#[test]
fn a_build_outside_a_checkout_or_without_git_says_so() {
    verdict_testkit::require_program("git", "git").unwrap();
    let directory = tempfile::tempdir().unwrap();
    let outer = directory.path();
    // A source tarball unpacked inside some other repository.
    git(outer, &["init", "-q"]);
    std::fs::write(outer.join("notes"), "other project\n").unwrap();
    git(outer, &["add", "notes"]);
    git(outer, &["commit", "-q", "-m", "other"]);
    let unpacked = outer.join("verdict-0.2.0");
    write_workspace(&unpacked);
    let expected = "commit unknown: not built from a git checkout";
    assert_eq!(describe(&unpacked), expected);
    // No repository at all.
    let plain = tempfile::tempdir().unwrap();
    write_workspace(plain.path());
    let without_repository = Command::new("git")
        .args(["rev-parse", "--git-dir"])
        .current_dir(plain.path())
        .output()
        .unwrap();
    if !without_repository.status.success() {
        assert_eq!(describe(plain.path()), expected);
    }
    // No git program.
    let commit = git_version::describe("/nonexistent/git".as_ref(), &unpacked);
    assert_eq!(commit.description, "commit unknown: git is not installed");
    assert!(commit.watched.contains(&unpacked.join("crates/a/src")));
}

/// The version the built binary carries: the crate version and this
/// checkout's commit as the build script saw it (the same code, run now).
fn expected_version() -> String {
    format!("{} ({})", env!("CARGO_PKG_VERSION"), describe(&workspace()))
}

#[test]
fn the_version_names_the_commit_and_runs_and_the_agent_carry_it() {
    verdict_testkit::require_program("git", "git").unwrap();
    let version = expected_version();
    let head = git(&workspace(), &["log", "-1", "--format=%h"]);
    assert!(version.contains(&format!("({head}")), "{version}");
    let printed = succeed(verdict_without_store().arg("--version"));
    assert_eq!(printed, format!("verdict {version}\n"));

    let identity = succeed(verdict_without_store().args(["agent", "--identity"]));
    let hash = identity
        .trim_end()
        .strip_prefix(&format!("verdict-agent {version} "))
        .unwrap_or_else(|| panic!("{identity}"));
    assert!(hash.len() == 64 && hash.chars().all(|c| c.is_ascii_hexdigit()));

    let directory = tempfile::tempdir().unwrap();
    succeed(verdict(directory.path()).args(["ab", "-n", "3", "--seed", "1", "true", "sleep 0"]));
    let report = succeed(verdict(directory.path()).args(["report", "--format", "json"]));
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(
        report["run"]["tool_version"],
        serde_json::json!(format!("verdict {version}")),
        "{report:#}"
    );
}

/// The names under `Commands:` in `verdict --help` (not `help`).
fn subcommands() -> Vec<String> {
    let help = succeed(verdict_without_store().arg("--help"));
    let names: Vec<String> = help
        .lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.is_empty())
        // A wrapped description continues with deeper indentation.
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect();
    assert!(
        names.len() > 10 && names.iter().any(|name| name == "man"),
        "{help}"
    );
    names
}

/// What bash's completion function proposes for the command line `line`
/// (the last word being completed), with the script `verdict completions
/// bash` printed loaded the way a user loads it.
fn bash_completes(bash: &Path, script: &Path, line: &str) -> Vec<String> {
    let program = r#"
set -e
source "$1"
function=$(complete -p verdict | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
test -n "$function"
read -r -a COMP_WORDS <<< "$2"
case "$2" in *" ") COMP_WORDS+=("") ;; esac
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="$2"
COMP_POINT=${#COMP_LINE}
previous=""
if (( COMP_CWORD > 0 )); then previous="${COMP_WORDS[COMP_CWORD-1]}"; fi
"$function" verdict "${COMP_WORDS[COMP_CWORD]}" "$previous"
printf '%s\n' "${COMPREPLY[@]}"
"#;
    let output = Command::new(bash)
        .args(["--norc", "--noprofile", "-c", program, "bash"])
        .arg(script)
        .arg(line)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "bash completing {line:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut words: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|word| word.trim().to_string())
        .filter(|word| !word.is_empty())
        .collect();
    words.sort();
    words
}

#[test]
fn the_bash_completion_script_parses_and_completes_subcommands() {
    let bash = verdict_testkit::require_program("bash", "bash").unwrap();
    let directory = tempfile::tempdir().unwrap();
    let script = directory.path().join("verdict.bash");
    std::fs::write(
        &script,
        succeed(verdict_without_store().args(["completions", "bash"])),
    )
    .unwrap();
    let syntax = Command::new(&bash).arg("-n").arg(&script).output().unwrap();
    assert!(
        syntax.status.success(),
        "{}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    assert_eq!(
        bash_completes(&bash, &script, "verdict compl"),
        ["completions"]
    );
    assert_eq!(
        bash_completes(&bash, &script, "verdict ru"),
        ["run", "runs"]
    );
    let all = bash_completes(&bash, &script, "verdict ");
    for name in subcommands() {
        assert!(all.contains(&name), "{name} not completed: {all:?}");
    }
    assert_eq!(
        bash_completes(&bash, &script, "verdict kconfig why-"),
        ["why-not"]
    );
    assert!(bash_completes(&bash, &script, "verdict ab --see").contains(&"--seed".to_string()));
    assert_eq!(
        bash_completes(&bash, &script, "verdict completions "),
        [
            "--help",
            "-h",
            "bash",
            "elvish",
            "fish",
            "powershell",
            "zsh"
        ]
    );
}

#[test]
fn every_shell_gets_a_script_for_verdict() {
    for (shell, start) in [
        ("zsh", "#compdef verdict"),
        ("fish", "# Print an optspec for argparse"),
        ("elvish", "\nuse builtin;"),
        (
            "powershell",
            "\nusing namespace System.Management.Automation",
        ),
    ] {
        let script = succeed(verdict_without_store().args(["completions", shell]));
        assert!(script.starts_with(start), "{shell}: {script:.200}");
        assert!(script.contains("verdict"), "{shell}");
    }
    let unknown = verdict_without_store()
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));
}

/// `groff -man -Tutf8 -ww` of `page`, which must render without warnings.
fn render(groff: &Path, page: &Path) -> String {
    let output = Command::new(groff)
        .args(["-man", "-Tutf8", "-ww"])
        .arg(page)
        .env("LC_ALL", "C.UTF-8")
        .env("GROFF_NO_SGR", "1")
        .output()
        .unwrap();
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "groff {}: {}",
        page.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    // Bold and underline as overstrikes: keep the printed character.
    let text = String::from_utf8(output.stdout).unwrap();
    let mut plain = String::new();
    for character in text.chars() {
        if character == '\u{8}' {
            plain.pop();
        } else {
            plain.push(character);
        }
    }
    plain
}

#[test]
fn the_man_pages_render_and_name_every_subcommand() {
    let groff = verdict_testkit::require_program("groff", "groff-base").unwrap();
    let directory = tempfile::tempdir().unwrap();
    let page = directory.path().join("printed.1");
    let printed = succeed(verdict_without_store().arg("man"));
    assert!(printed.is_ascii(), "the page is not ASCII");
    std::fs::write(&page, printed).unwrap();
    let text = render(&groff, &page);
    let names = subcommands();
    for name in &names {
        assert!(
            text.contains(&format!("verdict-{name}(1)")),
            "{name}:\n{text}"
        );
    }
    assert!(!text.contains("verdict-agent"), "{text}");
    assert!(text.contains(&expected_version()), "{text}");

    let pages = directory.path().join("man1");
    let listed = succeed(verdict_without_store().args(["man", "--dir"]).arg(&pages));
    let mut written: Vec<PathBuf> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    written.sort();
    let mut listed: Vec<PathBuf> = listed.lines().map(PathBuf::from).collect();
    assert_eq!(listed.first(), Some(&pages.join("verdict.1")));
    listed.sort();
    assert_eq!(listed, written);
    for name in &names {
        assert!(
            written.contains(&pages.join(format!("verdict-{name}.1"))),
            "{name}"
        );
    }
    assert!(written.contains(&pages.join("verdict-kconfig-why-not.1")));
    for page in &written {
        let text = render(&groff, page);
        assert!(text.contains("SYNOPSIS"), "{}:\n{text}", page.display());
    }
    let run = render(&groff, &pages.join("verdict-run.1"));
    assert!(run.contains("verdict-run - Run an experiment"), "{run}");
}
