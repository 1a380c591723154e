//! No crate compares a stored status, kind or verdict as text: every
//! crate's `src/` is read line by line for a string literal of those words
//! compared with `==`/`!=` or matched in a `match` arm, and for any literal
//! compared with something named `status`, `kind`, `state` or `verdict`.
//! The words have types (`RunStatus`, `RunKind`, `BootStatus`,
//! `Placement`, `BlockState`, `Verdict`) whose `as_str`/`parse` are the
//! one place the spellings live; those functions (and `from_str`) are
//! allowed, as is the short list below, each with its reason. A failure
//! names every offending file:line.

use std::path::{Path, PathBuf};

/// Stored statuses, run kinds, boot statuses, block states, kernel build
/// statuses, placements and verdict words.
const WORDS: &[&str] = &[
    "running",
    "complete",
    "interrupted",
    "failed",
    "booting",
    "proven",
    "pending",
    "claimed",
    "done",
    "built",
    "cached",
    "run",
    "ab",
    "check",
    "bisect",
    "group",
    "work",
    "booted_host",
    "regression",
    "improvement",
    "equivalent",
    "inconclusive",
];

/// Names whose comparison with any literal is a string match of a word.
const NAMES: &[&str] = &["status", "kind", "state", "verdict"];

/// Functions whose job is the spelling itself.
const SPELLING_FUNCTIONS: &[&str] = &["as_str", "parse", "from_str"];

/// (file under crates/, text of the line) pairs allowed, and why.
const ALLOWED: &[(&str, &str, &str)] = &[(
    "verdict/src/commands/history.rs",
    r#""run" => Order::Run"#,
    "parses the `--by` option's value",
)];

fn crates_directory() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crates/verdict-model has a parent")
        .to_path_buf()
}

fn rust_files(directory: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
}

/// The quoted literals of `line` with the text just before and after each.
fn literals(line: &str) -> Vec<(&str, &str, &str)> {
    let mut found = Vec::new();
    let mut rest = line;
    let mut offset = 0;
    while let Some(start) = rest.find('"') {
        let after_quote = &rest[start + 1..];
        let Some(length) = after_quote.find('"') else {
            break;
        };
        let begin = offset + start;
        let end = begin + length + 2;
        found.push((&line[..begin], &line[begin + 1..end - 1], &line[end..]));
        offset = end;
        rest = &line[end..];
    }
    found
}

/// Whether `line` matches a stored word as text.
fn offends(line: &str) -> bool {
    let code = line.trim_start();
    if code.starts_with("//") {
        return false;
    }
    literals(line).into_iter().any(|(before, literal, after)| {
        let before = before.trim_end();
        let after = after.trim_start();
        let compared_before = before.ends_with("==") || before.ends_with("!=");
        let compared_after = after.starts_with("==") || after.starts_with("!=");
        let arm = after.starts_with("=>");
        let word = WORDS.contains(&literal);
        let named = compared_before && {
            let left = before[..before.len() - 2].trim_end();
            let left = left.strip_suffix(".as_str()").unwrap_or(left);
            let name: String = left
                .chars()
                .rev()
                .take_while(|character| character.is_alphanumeric() || *character == '_')
                .collect::<String>()
                .chars()
                .rev()
                .collect();
            NAMES.iter().any(|stem| name.contains(stem))
        };
        (word && (compared_before || compared_after || arm)) || named
    })
}

/// The function a line is in: the last `fn NAME` seen above it.
fn function_name(line: &str) -> Option<&str> {
    let start = line.find("fn ")? + 3;
    let name = &line[start..];
    let end = name.find(|character: char| !(character.is_alphanumeric() || character == '_'))?;
    Some(&name[..end])
}

/// The offending lines not allowed, and the allowances that allowed
/// nothing (a stale allowance would hide the next offence in its file).
fn offences() -> (Vec<String>, Vec<&'static str>) {
    let crates = crates_directory();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&crates).expect("crates/ is readable") {
        let source = entry.expect("a crate directory").path().join("src");
        rust_files(&source, &mut files);
    }
    let mut found = Vec::new();
    let mut used = vec![false; ALLOWED.len()];
    for path in files {
        let relative = path
            .strip_prefix(&crates)
            .expect("under crates/")
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(&path).expect("a readable source file");
        let mut function = "";
        for (number, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            if let Some(name) = function_name(line) {
                function = name;
            }
            if !offends(line) || SPELLING_FUNCTIONS.contains(&function) {
                continue;
            }
            let allowance = ALLOWED
                .iter()
                .position(|(file, needle, _)| relative == *file && line.contains(needle));
            if let Some(index) = allowance {
                used[index] = true;
            } else {
                found.push(format!("crates/{relative}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    let stale = ALLOWED
        .iter()
        .zip(used)
        .filter(|(_, used)| !used)
        .map(|((file, _, _), _)| *file)
        .collect();
    (found, stale)
}

#[test]
fn no_status_kind_or_verdict_is_matched_as_a_string() {
    let (found, stale) = offences();
    assert!(
        stale.is_empty(),
        "allowances that match no line any more (remove them): {stale:?}"
    );
    assert!(
        found.is_empty(),
        "stored words matched as text (compare the typed value: RunKind, BootStatus, ...):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_sees_what_it_should() {
    assert!(offends(r#"if boot.status == "failed" {"#));
    assert!(offends(r#".filter(|boot| boot.status != "failed")"#));
    assert!(offends(r#"if options.kind == "ab" {"#));
    assert!(offends(r#"    "group" => resume_group(),"#));
    assert!(offends(r#"if row.status.as_str() == "whatever" {"#));
    assert!(offends(r#"if "bisect" == run.kind {"#));
    assert!(!offends(r#"// status == "failed" in a comment"#));
    assert!(!offends(r#"if unit == "s" {"#));
    assert!(!offends(r#"WHERE b.status <> 'failed'"#));
    assert!(!offends(r#"let name = "failed";"#));
}
