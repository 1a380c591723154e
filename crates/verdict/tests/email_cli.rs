//! `--format email`: every report a maintainer mails (a run's, `ab`'s, a
//! pivot's, `compare`'s, a bisection's summary and log) as real output of
//! the built binary, golden where the workload prints fixed values
//! (insta snapshots, dates and machine facts filtered), and every line of
//! every one at most 80 columns. Also `--width N`, which lays the text
//! tables out within N columns. The two-host `ab` by email is in
//! `ssh_targets.rs`, a VM run's in `vm_boots.rs`.

mod common;

use common::{quick_bisect, steps_repository, succeed, verdict, verdict_without_store_in};
use std::path::Path;

/// Every line of `text` at most `width` display columns.
fn assert_within(text: &str, width: usize) {
    assert_eq!(common::line_over(text, width), None, "{text}");
}

/// The part of an email before its "What ran" section (the machine's
/// facts, which differ between machines), after checking that the
/// section names what a maintainer asks: CPU identity, kernel with its
/// compiler, config, runs, and the command with the experiment's hash.
fn before_what_ran(email: &str) -> String {
    let (head, tail) = email
        .split_once("\nWhat ran\n")
        .unwrap_or_else(|| panic!("no What ran section:\n{email}"));
    for fact in [
        "  runs: ",
        "(the workload ran here)",
        "    cpu: ",
        "    kernel: ",
        "Reproduce",
        "experiment sha256 below",
    ] {
        assert!(tail.contains(fact), "What ran lacks {fact:?}:\n{tail}");
    }
    head.to_string()
}

const FILTERS: &[(&str, &str)] = &[
    (r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC", "[date]"),
    (r"\b[0-9a-f]{40}\b", "[hash]"),
    (r"\b[0-9a-f]{7,12}\b", "[short]"),
    (r"/tmp/[^\s']+", "[path]"),
];

/// Two factors, fixed values: `echo {kernel}{mode}` prints 100, 105, 120
/// and 125, so every figure and verdict is the same on every machine.
fn golden_run(directory: &Path) {
    std::fs::write(
        directory.join("e.toml"),
        "name = \"golden\"\ncommand = [\"echo\", \"{kernel}{mode}\"]\n\n[factors]\n\
         kernel = [\"10\", \"12\"]\nmode = [\"0\", \"5\"]\n\n[[metrics]]\nname = \"latency\"\n\
         source = \"number\"\nunit = \"us\"\ndirection = \"lower\"\n\n[sampling]\n\
         iterations = 6\nseed = 3\n",
    )
    .unwrap();
    succeed(verdict(directory).args(["run", "e.toml"]));
}

#[test]
fn a_run_and_its_pivot_by_email_are_golden_and_fit_80_columns() {
    let directory = tempfile::tempdir().unwrap();
    golden_run(directory.path());
    let email = succeed(verdict(directory.path()).args(["report", "--format", "email"]));
    assert_within(&email, 80);
    let pivot = succeed(verdict(directory.path()).args([
        "report", "--rows", "mode", "--cols", "kernel", "--format", "email",
    ]));
    assert_within(&pivot, 80);
    let filters: Vec<(&str, &str)> = FILTERS.to_vec();
    insta::with_settings!({filters => filters}, {
        insta::assert_snapshot!("run_email", before_what_ran(&email));
        insta::assert_snapshot!("pivot_email", before_what_ran(&pivot));
    });
    // The reproduce line is the command as given, and the hash is the file's.
    let hash = {
        use sha2::{Digest, Sha256};
        hex::encode(Sha256::digest(
            std::fs::read(directory.path().join("e.toml")).unwrap(),
        ))
    };
    assert!(email.contains("  verdict run e.toml\n"), "{email}");
    assert!(email.contains(&hash), "{email}");
    // The text report's tables within 60 columns: stacked, not overflowing.
    let narrow = succeed(verdict(directory.path()).args(["report", "--width", "60"]));
    let tables = narrow
        .lines()
        .skip_while(|line| !line.starts_with("median "))
        .skip(1);
    for line in tables.filter(|line| !line.contains(": CV = ") && !line.contains("; alpha ")) {
        assert!(
            line.chars().count() <= 60 || line.starts_with("delta = "),
            "{line}\n{narrow}"
        );
    }
}

#[test]
fn ab_by_email_fits_80_columns_and_says_what_ran() {
    let directory = tempfile::tempdir().unwrap();
    let email = succeed(verdict(directory.path()).args([
        "ab",
        "-n",
        "6",
        "--seed",
        "5",
        "--format",
        "email",
        "sleep 0",
        "sleep 0.002",
    ]));
    assert_within(&email, 80);
    let head = before_what_ran(&email);
    assert!(head.contains("command=sleep 0.002 vs sleep 0"), "{email}");
    assert!(head.contains("    baseline   "), "{email}");
    assert!(head.contains("    candidate  "), "{email}");
    assert!(email.contains("verdict ab -n 6 --seed 5 --format email 'sleep 0' 'sleep 0.002'"));
}

#[test]
fn compare_by_email_is_golden_and_width_stacks_the_text_table() {
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../verdict-stats/tests/data/benchstat");
    let email = succeed(
        verdict_without_store_in(&fixtures)
            .args(["compare", "old.txt", "new.txt", "--format", "email"]),
    );
    assert_within(&email, 80);
    insta::assert_snapshot!("compare_email", email);
    let narrow = succeed(
        verdict_without_store_in(&fixtures)
            .args(["compare", "old.txt", "new.txt", "--width", "60"]),
    );
    let table: Vec<&str> = narrow.lines().skip_while(|line| !line.is_empty()).collect();
    assert_within(&table.join("\n"), 60);
    insta::assert_snapshot!("compare_width_60", narrow);
    // Without --width the table keeps its natural width.
    let natural =
        succeed(verdict_without_store_in(&fixtures).args(["compare", "old.txt", "new.txt"]));
    assert!(natural.lines().any(|line| line.chars().count() > 80));
}

#[test]
fn a_bisection_by_email_names_the_metric_the_machine_and_the_compiler() {
    let directory = tempfile::tempdir().unwrap();
    let hashes = steps_repository(directory.path());
    let repo = directory.path().join("repo");
    let mut arguments = quick_bisect(&repo, &hashes[0], &hashes[4]);
    arguments.extend(["--build", "true", "--format", "email"].map(str::to_string));
    let summary = succeed(verdict(directory.path()).args(&arguments));
    assert_within(&summary, 80);
    for part in [
        "verdict bisect: metric value [ops] (lower is better)",
        &format!("first bad commit: {}", hashes[3]),
        "What ran",
        "    cpu: ",
        "    kernel: ",
        "    build:      true",
        "Reproduce",
        "  verdict bisect --repo ",
    ] {
        assert!(summary.contains(part), "{part:?}:\n{summary}");
    }
    if verdict_testkit::require_program("cc", "gcc").is_some() {
        assert!(summary.contains("    compiler: "), "{summary}");
    }
    let log = succeed(verdict(directory.path()).args(["bisect", "log", "--format", "email"]));
    assert_within(&log, 80);
    let (head, tail) = log.split_once("\nWhat ran\n").expect("What ran");
    assert!(tail.contains("    build:      true"), "{log}");
    let filters: Vec<(&str, &str)> = FILTERS.to_vec();
    insta::with_settings!({filters => filters}, {
        insta::assert_snapshot!("bisect_log_email", head);
    });
    // The JSON log names what the commits were measured on.
    let json = succeed(verdict(directory.path()).args(["bisect", "log", "--format", "json"]));
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let machine = &json["measured_on"]["machines"][0];
    assert_eq!(machine["role"], "host", "{json}");
    assert_eq!(machine["build"]["command"], "true", "{json}");
    assert!(machine["build"]["commit"].is_null(), "{json}");
    assert!(json["measured_on"]["commit"].is_null(), "{json}");
    // `verdict runs`: the bisection's measurement runs are one line.
    let runs = succeed(verdict(directory.path()).arg("runs"));
    let lines: Vec<&str> = runs.lines().collect();
    assert_eq!(lines.len(), 2, "{runs}");
    assert!(lines[1].contains("bisection 1 ("), "{runs}");
    let all = succeed(verdict(directory.path()).args(["runs", "--all"]));
    assert!(all.lines().count() > 3, "{all}");
    assert!(
        all.lines().skip(1).all(|line| line.contains("bisect")),
        "{all}"
    );
}

/// An example's name, the replacements that make it short, and the
/// arguments of its run.
type ShortExample = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
);

/// The shipped local examples, made short (two iterations, or an adaptive
/// run of two to three; one-second stress-ng runs; fewer files), each
/// reported by email: every line within 80 columns and the What ran and
/// Reproduce sections there. stress-ng-kill's is in `run_cli.rs`, the VM
/// examples' in `vm_boots.rs`.
#[test]
fn every_local_example_by_email_fits_80_columns() {
    let Some(_) = verdict_testkit::require_program("stress-ng", "stress-ng") else {
        return;
    };
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let shorter: [ShortExample; 4] = [
        ("quickstart", &[], &["-n", "2"]),
        ("stressors", &[], &["-n", "2"]),
        (
            "bulk-operation",
            &[("[\"2000\", \"4000\"]", "[\"20\", \"40\"]")],
            &["-n", "2"],
        ),
        (
            "adaptive-kill",
            &[
                ("\"-t\", \"2\"", "\"-t\", \"1\""),
                ("\nmin = 6\n", "\nmin = 2\n"),
                ("\nmax = 60\n", "\nmax = 3\n"),
            ],
            &[],
        ),
    ];
    for (name, replacements, arguments) in shorter {
        let directory = tempfile::tempdir().unwrap();
        let mut text = std::fs::read_to_string(examples.join(format!("{name}.toml"))).unwrap();
        for (from, to) in replacements {
            assert!(text.contains(from), "{name}: {from:?}");
            text = text.replace(from, to);
        }
        let file = format!("{name}.toml");
        std::fs::write(directory.path().join(&file), text).unwrap();
        succeed(
            verdict(directory.path())
                .args(["run", &file])
                .args(arguments),
        );
        let email = succeed(verdict(directory.path()).args(["report", "--format", "email"]));
        assert_within(&email, 80);
        let head = before_what_ran(&email);
        assert!(
            head.starts_with(&format!("verdict: run 1 {name} (complete)")),
            "{email}"
        );
        assert!(email.contains(&format!("  verdict run {file}")), "{email}");
    }
}
