//! Documented examples are real output: every code block in README.md and
//! docs/*.md preceded by a marker
//!
//! ```text
//! <!-- verdict-example: [cwd=DIR] [exit=N] [stream=stderr] ARGS... -->
//! ```
//!
//! is the output of `verdict ARGS` run with the built binary in DIR
//! (relative to the repository root; default the root). The block may start
//! with the command line `$ verdict ARGS  # comment`, which must name the
//! same arguments. Filter (the only differences allowed): trailing spaces and
//! blank lines at the end are ignored, and a line that is just `...` stands
//! for any number of lines; a fenced block's own indentation (inside a list
//! item) is removed. Only deterministic commands are marked (fixed
//! inputs and seeds, no clock); see docs/README.md. Must not write anywhere
//! but a temp directory.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[derive(Debug)]
struct Example {
    origin: String,
    cwd: PathBuf,
    exit: i32,
    stderr: bool,
    arguments: Vec<String>,
    expected: Vec<String>,
}

/// Splits like a shell would, for single and double quotes only (no
/// expansion): enough for documented command lines.
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for character in text.chars() {
        match quote {
            Some(open) if character == open => quote = None,
            Some(_) => current.push(character),
            None if character == '\'' || character == '"' => {
                quote = Some(character);
                in_word = true;
            }
            None if character.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            None => {
                current.push(character);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(current);
    }
    words
}

fn examples_in(path: &Path) -> Vec<Example> {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path
        .strip_prefix(repository())
        .unwrap_or(path)
        .display()
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    let mut examples = Vec::new();
    let mut in_fence = false;
    for (index, line) in lines.iter().enumerate() {
        // A marker shown inside a code block (as in docs/README.md) is text.
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        if in_fence {
            continue;
        }
        let Some(spec) = line
            .trim()
            .strip_prefix("<!-- verdict-example:")
            .and_then(|rest| rest.strip_suffix("-->"))
        else {
            continue;
        };
        let origin = format!("{name}:{}", index + 1);
        let mut cwd = repository();
        let mut exit = 0;
        let mut stderr = false;
        let mut arguments = Vec::new();
        for word in words(spec) {
            if arguments.is_empty() {
                if let Some(directory) = word.strip_prefix("cwd=") {
                    cwd = repository().join(directory);
                    continue;
                }
                if let Some(code) = word.strip_prefix("exit=") {
                    exit = code.parse().unwrap();
                    continue;
                }
                if word == "stream=stderr" {
                    stderr = true;
                    continue;
                }
            }
            arguments.push(word);
        }
        // The block: the next fenced block, or an indented one.
        let mut position = index + 1;
        while lines
            .get(position)
            .is_some_and(|line| line.trim().is_empty())
        {
            position += 1;
        }
        let mut block = Vec::new();
        match lines.get(position) {
            Some(fence) if fence.trim_start().starts_with("```") => {
                // A fence inside a list item is indented; so is its text.
                let indent = &fence[..fence.len() - fence.trim_start().len()];
                position += 1;
                while let Some(line) = lines.get(position) {
                    if line.trim_start().starts_with("```") {
                        break;
                    }
                    block.push(line.strip_prefix(indent).unwrap_or(line).to_string());
                    position += 1;
                }
            }
            Some(line) if line.starts_with("    ") => {
                while let Some(line) = lines.get(position) {
                    if !(line.starts_with("    ") || line.trim().is_empty()) {
                        break;
                    }
                    block.push(line.get(4..).unwrap_or("").to_string());
                    position += 1;
                }
            }
            _ => panic!("{origin}: a verdict-example marker must precede a code block"),
        }
        if let Some(shown) = block
            .first()
            .and_then(|line| line.strip_prefix("$ verdict "))
        {
            let shown = shown.split("  #").next().unwrap_or(shown);
            assert_eq!(
                words(shown),
                arguments,
                "{origin}: the command shown differs from the marker's"
            );
            block.remove(0);
        }
        examples.push(Example {
            origin,
            cwd,
            exit,
            stderr,
            arguments,
            expected: block,
        });
    }
    examples
}

fn all_examples() -> Vec<Example> {
    let mut files = vec![repository().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repository().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files.iter().flat_map(|path| examples_in(path)).collect()
}

fn normalized(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .map(|line| line.trim_end().to_string())
        .collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

/// Whether `actual` is `expected` with each `...` line standing for any
/// number of lines.
fn matches(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first.trim() == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(line, others)| line == first && matches(rest, others)),
    }
}

#[test]
fn the_ellipsis_filter_is_the_only_freedom() {
    let lines = |text: &str| normalized(text);
    assert!(matches(&lines("a\n...\nd"), &lines("a\nb\nc\nd")));
    assert!(matches(&lines("a\n..."), &lines("a")));
    assert!(matches(&lines("a  \nb\n\n"), &lines("a\nb")));
    assert!(!matches(&lines("a\nb"), &lines("a\nc")));
    assert!(!matches(&lines("a\n...\nd"), &lines("a\nb\nc")));
    assert!(!matches(&lines("a"), &lines("a\nb")));
    assert_eq!(words("compare 'a b' \"c\" d"), ["compare", "a b", "c", "d"]);
}

#[test]
fn documented_examples_are_real_output() {
    let examples = all_examples();
    let covered: Vec<&str> = examples
        .iter()
        .map(|example| example.origin.split(':').next().unwrap_or_default())
        .collect();
    for file in ["docs/cli.md", "docs/kconfig.md"] {
        assert!(covered.contains(&file), "no marked example in {file}");
    }
    let temporary = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for example in &examples {
        let output = Command::cargo_bin("verdict")
            .unwrap()
            .current_dir(&example.cwd)
            .env("NO_COLOR", "1")
            .env("VERDICT_DB", temporary.path().join("none.db"))
            .args(&example.arguments)
            .output()
            .unwrap();
        let stream = if example.stderr {
            &output.stderr
        } else {
            &output.stdout
        };
        let actual = normalized(&String::from_utf8_lossy(stream));
        let expected = normalized(&example.expected.join("\n"));
        if output.status.code() != Some(example.exit) || !matches(&expected, &actual) {
            failures.push(format!(
                "{} (verdict {}): exit {:?}, expected {}\n--- documented\n{}\n--- real\n{}\n--- stderr\n{}",
                example.origin,
                example.arguments.join(" "),
                output.status.code(),
                example.exit,
                expected.join("\n"),
                actual.join("\n"),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} documented examples differ from real output:\n\n{}",
        failures.len(),
        examples.len(),
        failures.join("\n\n")
    );
}
