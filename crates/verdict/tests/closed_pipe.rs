//! Every command that prints, run by the built binary with its standard
//! output a pipe whose reader is gone (`verdict export 1 | head -1` once
//! ended in a panic, exit 101): it ends quietly, with the exit status it
//! has when its output is read (`bisect` itself prints its summary
//! through the same `out!` as `bisect log`). And no `print!`/`println!`
//! is left in the binary's sources (they panic on a closed pipe): every
//! command prints through `output.rs`. Must not depend on another test's
//! database.

use std::path::Path;
use std::process::{Command, Output, Stdio};

const VERDICT: &str = env!("CARGO_BIN_EXE_verdict");

fn verdict(directory: &Path, arguments: &[&str]) -> Command {
    let mut command = Command::new(VERDICT);
    command
        .args(arguments)
        .current_dir(directory)
        .env("NO_COLOR", "1")
        .env("VERDICT_DB", directory.join("verdict.db"));
    command
}

/// The writing end of a pipe whose reading end is closed.
fn closed_pipe() -> Stdio {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut descriptors = [0; 2];
    // SAFETY: pipe(2) writes two new descriptors into the array.
    assert_eq!(unsafe { libc::pipe(descriptors.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just opened and nothing else owns them.
    let (reader, writer) = unsafe {
        (
            OwnedFd::from_raw_fd(descriptors[0]),
            OwnedFd::from_raw_fd(descriptors[1]),
        )
    };
    drop(reader);
    Stdio::from(writer)
}

/// `arguments` run with stdout read to the end, then with stdout a pipe
/// nobody reads: the same exit status, no panic.
fn ends_quietly(directory: &Path, arguments: &[&str]) {
    let read: Output = verdict(directory, arguments).output().unwrap();
    assert!(
        !read.stdout.is_empty(),
        "{arguments:?} printed nothing: {}",
        String::from_utf8_lossy(&read.stderr)
    );
    let closed = verdict(directory, arguments)
        .stdout(closed_pipe())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&closed.stderr);
    assert_eq!(
        closed.status.code(),
        read.status.code(),
        "{arguments:?} on a closed pipe: {stderr}"
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "{arguments:?}: {stderr}"
    );
}

#[test]
fn every_command_that_prints_ends_quietly_on_a_closed_pipe() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path();
    std::fs::write(
        path.join("small.toml"),
        "name = \"small\"\ncommand = [\"sh\", \"-c\", \"echo score: 7\"]\n\n[factors]\n\
         mode = [\"a\", \"b\"]\n\n[[metrics]]\nname = \"score\"\nsource = \"regex\"\n\
         pattern = 'score: (\\d+)'\ndirection = \"higher\"\n\n[sampling]\niterations = 6\n",
    )
    .unwrap();
    std::fs::write(
        path.join("one.toml"),
        "name = \"one\"\ncommand = [\"true\"]\n\n[sampling]\niterations = 3\n",
    )
    .unwrap();
    std::fs::write(
        path.join("old.config"),
        "CONFIG_A=y\n# CONFIG_C is not set\n",
    )
    .unwrap();
    std::fs::write(path.join("new.config"), "CONFIG_A=m\nCONFIG_B=y\n").unwrap();
    std::fs::write(path.join("series.csv"), "score\n1\n2\n1\n2\n9\n9\n9\n9\n").unwrap();
    let setup = verdict(path, &["run", "small.toml"]).output().unwrap();
    assert!(
        setup.status.success(),
        "{}",
        String::from_utf8_lossy(&setup.stderr)
    );
    // A bisection of three commits (the last one 5x slower), for `bisect
    // log`.
    let repo = path.join("repo");
    std::fs::create_dir(&repo).unwrap();
    let hashes = verdict_testkit::sleep_repository(&repo, 2, 2, None, ["0.01", "0.05"]);
    std::fs::write(
        path.join("sleepy.toml"),
        "name = \"sleepy\"\ncommand = [\"sh\", \"work.sh\"]\n",
    )
    .unwrap();
    let bisection = verdict(
        path,
        &[
            "bisect",
            "--repo",
            "repo",
            "--good",
            &hashes[0],
            "--bad",
            &hashes[2],
            "--experiment",
            "sleepy.toml",
            "--build",
            "true",
            "--batch",
            "1",
            "--step-error",
            "0.05",
        ],
    )
    .output()
    .unwrap();
    assert!(
        bisection.status.success(),
        "{}",
        String::from_utf8_lossy(&bisection.stderr)
    );
    for arguments in [
        &["run", "small.toml", "-n", "3"][..],
        &["ab", "true", "true", "-n", "3"],
        &["runs"],
        &["runs", "--format", "json"],
        &["report", "1"],
        &["report", "1", "--format", "html"],
        &["report", "1", "--cols", "mode"],
        &["export", "1"],
        &["export", "1", "--format", "json"],
        &["compare", "1:mode=a", "1:mode=b", "--metric", "score"],
        &["plan", "--cv", "30%"],
        &["simulate", "--trials", "50"],
        &["history", "small"],
        &["history", "--file", "series.csv", "--column", "score"],
        &["kconfig", "diff", "old.config", "new.config"],
        &[
            "check",
            "--baseline",
            "1:mode=a",
            "--experiment",
            "one.toml",
        ],
        &["push", "1", "--to", "copy.db"],
        &["pull", "1", "--from", "copy.db"],
        &["bisect", "log"],
        &["bisect", "log", "--format", "json"],
        &["doctor", "--quick"],
        &["agent", "--identity"],
    ] {
        ends_quietly(path, arguments);
    }
}

/// `print!` and `println!` panic when the reader of stdout is gone; the
/// binary prints through `output.rs` (`out!`, `outln!`, `writer`) only.
#[test]
fn the_binary_prints_through_one_place() {
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut offenders = Vec::new();
    let mut directories = vec![sources];
    while let Some(directory) = directories.pop() {
        for entry in std::fs::read_dir(&directory).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                directories.push(path);
                continue;
            }
            if path.file_name().is_some_and(|name| name == "output.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (number, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for word in ["print!(", "println!("] {
                    if code
                        .match_indices(word)
                        .any(|(at, _)| at == 0 || !code[..at].ends_with('e'))
                    {
                        offenders.push(format!("{}:{}: {line}", path.display(), number + 1));
                    }
                }
            }
        }
    }
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}
