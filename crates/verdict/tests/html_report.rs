//! `verdict report --format html` end to end: a real run (real child
//! processes, a real SQLite file) whose factor level is
//! `<script>alert(1)</script>`, rendered to a page that must be well-formed
//! (xmllint, XML mode: every element closed, every entity valid) and that a
//! real headless Chromium loads (over the DevTools protocol on a pipe, by
//! tests/support/cdp_load.py) with no console errors, no failed checks and
//! no network request, showing the comparison table, one SVG per picture,
//! and the level name as text. A control page with an image from the
//! network and a console error proves the harness sees both. The screenshot
//! goes to target/html-report.png.

mod common;

use common::{succeed, verdict_without_store as verdict};
use std::path::{Path, PathBuf};

const EVIL: &str = "<script>alert(1)</script>";

/// A stored run of `true` with the hostile level name; returns the database.
fn real_run(directory: &Path) -> PathBuf {
    let experiment = directory.join("evil.toml");
    std::fs::write(
        &experiment,
        format!(
            "name = \"html & <b>escaping</b>\"\ncommand = [\"true\", \"{{level}}\"]\n[factors]\nlevel = [\"plain\", \"{}\"]\n[sampling]\niterations = 8\n",
            EVIL.replace('"', "\\\"")
        ),
    )
    .unwrap();
    let database = directory.join("runs.db");
    succeed(
        verdict()
            .arg("run")
            .arg(&experiment)
            .arg("--db")
            .arg(&database),
    );
    database
}

/// `xmllint --noout` in XML mode: the page is well-formed.
fn assert_well_formed(xmllint: &Path, page: &Path) {
    let output = std::process::Command::new(xmllint)
        .arg("--noout")
        .arg(page)
        .output()
        .unwrap();
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "xmllint: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The HTML parser (HTML 4 era) knows no SVG or HTML5 element names;
    // anything else it reports is a real defect.
    let output = std::process::Command::new(xmllint)
        .args(["--html", "--noout"])
        .arg(page)
        .output()
        .unwrap();
    let known = [
        "svg", "g", "line", "rect", "circle", "text", "polyline", "path", "footer",
    ];
    for line in String::from_utf8_lossy(&output.stderr).lines() {
        if let Some(rest) = line.split("HTML parser error : ").nth(1) {
            let tag = rest
                .strip_prefix("Tag ")
                .and_then(|rest| rest.strip_suffix(" invalid"));
            assert!(
                tag.is_some_and(|tag| known.contains(&tag)),
                "xmllint --html: {line}"
            );
        }
    }
}

struct Loaded {
    requests: Vec<String>,
    problems: Vec<String>,
    dom: serde_json::Value,
}

fn load_in_chromium(
    python: &Path,
    chromium: &Path,
    page: &Path,
    profile: &Path,
    screenshot: Option<&Path>,
) -> Loaded {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/cdp_load.py");
    let mut command = std::process::Command::new(python);
    command
        .arg(script)
        .arg(chromium)
        .arg(format!("file://{}", page.display()))
        .arg(profile);
    if let Some(screenshot) = screenshot {
        command.arg(screenshot);
    }
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "cdp_load.py: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let strings = |key: &str| -> Vec<serde_json::Value> {
        report[key].as_array().cloned().unwrap_or_default()
    };
    let mut problems: Vec<String> = strings("console")
        .iter()
        .map(|message| format!("console {}: {}", message["type"], message["text"]))
        .collect();
    problems.extend(strings("log").iter().map(|entry| {
        format!(
            "log {} {}: {}",
            entry["level"], entry["source"], entry["text"]
        )
    }));
    problems.extend(
        strings("exceptions")
            .iter()
            .map(|text| format!("exception: {text}")),
    );
    Loaded {
        requests: strings("requests")
            .iter()
            .map(|url| url.as_str().unwrap_or_default().to_string())
            .collect(),
        problems,
        dom: report["dom"].clone(),
    }
}

#[test]
fn html_report_is_well_formed_escaped_and_loads_cleanly_in_chromium() {
    let Some(chromium) = verdict_testkit::require_program("chromium", "chromium") else {
        return;
    };
    let Some(xmllint) = verdict_testkit::require_program("xmllint", "libxml2-utils") else {
        return;
    };
    let Some(python) = verdict_testkit::require_program("python3", "python3") else {
        return;
    };
    let directory = tempfile::tempdir().unwrap();
    let database = real_run(directory.path());
    let page = directory.path().join("report.html");
    let printed = succeed(
        verdict()
            .args(["report", "--format", "html", "-o"])
            .arg(&page)
            .arg("--db")
            .arg(&database),
    );
    assert!(printed.is_empty(), "-o writes the file, not stdout");
    let html = std::fs::read_to_string(&page).unwrap();
    let to_stdout = succeed(
        verdict()
            .args(["report", "--format", "html", "--db"])
            .arg(&database),
    );
    assert_eq!(to_stdout, html, "without -o the same page goes to stdout");
    assert!(!html.to_lowercase().contains("<script"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_well_formed(&xmllint, &page);

    let pivot = directory.path().join("pivot.html");
    succeed(
        verdict()
            .args(["report", "--cols", "level", "--format", "html", "-o"])
            .arg(&pivot)
            .arg("--db")
            .arg(&database),
    );
    assert_well_formed(&xmllint, &pivot);
    assert!(
        std::fs::read_to_string(&pivot)
            .unwrap()
            .contains("table class=\"pivot\"")
    );

    let baseline = directory.path().join("old.txt");
    let candidate = directory.path().join("new.txt");
    std::fs::write(&baseline, "10\n11\n10.5\n10.2\n10.8\n10.1\n").unwrap();
    std::fs::write(&candidate, "12\n12.5\n12.2\n11.9\n12.4\n12.1\n").unwrap();
    let compared = directory.path().join("compare.html");
    succeed(
        verdict()
            .arg("compare")
            .arg(&baseline)
            .arg(&candidate)
            .args(["--format", "html", "-o"])
            .arg(&compared),
    );
    assert_well_formed(&xmllint, &compared);
    let compared = std::fs::read_to_string(&compared).unwrap();
    assert!(compared.contains("<span class=\"verdict regression\">regression"));
    assert_eq!(compared.matches("<svg ").count(), 1 + 1 + 2);

    let stored = directory.path().join("stored.html");
    succeed(
        verdict()
            .arg("compare")
            .arg("1:level=plain")
            .arg(format!("1:level={EVIL}"))
            .args(["--format", "html", "-o"])
            .arg(&stored)
            .arg("--db")
            .arg(&database),
    );
    assert_well_formed(&xmllint, &stored);
    let stored = std::fs::read_to_string(&stored).unwrap();
    assert!(
        stored.contains("<h2 id=\"environment\">"),
        "stored sides show their runs' environment"
    );
    assert!(!stored.to_lowercase().contains("<script"));

    // The harness must see what it is meant to catch.
    let control = directory.path().join("control.html");
    std::fs::write(
        &control,
        "<!DOCTYPE html><html><head><title>control</title></head><body><img src=\"http://127.0.0.1:9/x.png\"><script>console.error(\"control error\")</script></body></html>",
    )
    .unwrap();
    let seen = load_in_chromium(
        &python,
        &chromium,
        &control,
        &directory.path().join("profile-control"),
        None,
    );
    assert!(
        seen.requests
            .iter()
            .any(|url| url.starts_with("http://127.0.0.1:9/")),
        "the harness sees network requests: {:?}",
        seen.requests
    );
    assert!(
        seen.problems
            .iter()
            .any(|problem| problem.contains("control error")),
        "the harness sees console errors: {:?}",
        seen.problems
    );

    let screenshot = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/html-report.png");
    let loaded = load_in_chromium(
        &python,
        &chromium,
        &page,
        &directory.path().join("profile"),
        Some(&screenshot),
    );
    let own = format!("file://{}", page.display());
    assert_eq!(
        loaded.requests,
        vec![own],
        "nothing but the page itself is fetched"
    );
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let dom = &loaded.dom;
    assert_eq!(dom["scripts"], 0);
    assert_eq!(dom["comparison_tables"], 1);
    assert_eq!(dom["comparison_rows"], 1);
    assert_eq!(dom["forest"], 1);
    assert_eq!(dom["distributions"], 1);
    assert_eq!(dom["run_order"], 2, "one run-order plot per cell");
    assert_eq!(dom["svgs"], 4, "one SVG per picture");
    assert!(
        dom["text"].as_str().unwrap().contains(EVIL),
        "the level name is shown as text"
    );
    assert!(
        dom["width"].as_u64().unwrap() <= 1280,
        "readable in a 1280-px window without horizontal scrolling"
    );
    assert!(
        dom["csp"]
            .as_str()
            .unwrap()
            .starts_with("default-src 'none'")
    );
    assert!(screenshot.exists());
}

fn git(repo: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .args(args)
        .current_dir(repo)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}");
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// A real bisection over a generated repository (the workload sleeps 4x
/// longer from commit 3 on; subjects carry markup) rendered by
/// `bisect log --format html`: well-formed, every measured commit in order,
/// the culprit marked, subjects escaped.
#[test]
fn bisect_log_page_marks_the_culprit() {
    let Some(xmllint) = verdict_testkit::require_program("xmllint", "libxml2-utils") else {
        return;
    };
    let directory = tempfile::tempdir().unwrap();
    let repo = directory.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    let mut hashes = Vec::new();
    for index in 0..=4 {
        let seconds = if index >= 3 { "0.04" } else { "0.01" };
        std::fs::write(
            repo.join("work.sh"),
            format!("sleep {seconds}\n# revision {index}\n"),
        )
        .unwrap();
        git(&repo, &["add", "-A"]);
        git(
            &repo,
            &["commit", "-qm", &format!("change <b>{index}</b> & more")],
        );
        hashes.push(git(&repo, &["rev-parse", "HEAD"]));
    }
    std::fs::write(
        directory.path().join("exp.toml"),
        "name = \"sleepy\"\ncommand = [\"sh\", \"work.sh\"]\n",
    )
    .unwrap();
    let database = directory.path().join("v.db");
    succeed(
        verdict()
            .current_dir(directory.path())
            .args(common::quick_bisect(&repo, &hashes[0], &hashes[4]))
            .arg("--db")
            .arg(&database),
    );
    let page = directory.path().join("bisect.html");
    succeed(
        verdict()
            .args(["bisect", "log", "--format", "html", "-o"])
            .arg(&page)
            .arg("--db")
            .arg(&database),
    );
    assert_well_formed(&xmllint, &page);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(&format!(
        "first bad commit: {} change &lt;b&gt;3&lt;/b&gt; &amp; more",
        hashes[3]
    )));
    assert!(!html.contains("<b>"));
    let culprit_row = format!(
        "<tr class=\"differs\"><td class=\"text\">{}</td>",
        &hashes[3][..12]
    );
    assert!(html.contains(&culprit_row), "the culprit row is marked");
    // What the commits were measured on is among the page's facts.
    assert!(html.contains("<dt>host "), "{html}");
    assert!(html.contains(": cpu</dt>"), "{html}");
    assert!(html.contains(": kernel</dt>"), "{html}");
    assert_eq!(html.matches("<tr class=\"differs\">").count(), 1);
    assert!(
        html.contains(">bad (culprit)</text>"),
        "and so is its forest row"
    );
    // Commits in order: the good endpoint's row comes before the culprit's.
    let good_at = html.find(&format!("<td class=\"text\">{}</td>", &hashes[0][..12]));
    assert!(good_at.is_some_and(|at| at < html.find(&culprit_row).unwrap()));
}

/// `verdict doctor --quick --format html`: the real probe on this machine,
/// rendered well-formed with the checks table and the probe's samples as a
/// distribution and against time.
#[test]
fn doctor_page_shows_checks_and_the_probe_against_time() {
    let Some(xmllint) = verdict_testkit::require_program("xmllint", "libxml2-utils") else {
        return;
    };
    let directory = tempfile::tempdir().unwrap();
    let page = directory.path().join("doctor.html");
    succeed(
        verdict()
            .args(["doctor", "--quick", "--format", "html", "-o"])
            .arg(&page),
    );
    assert_well_formed(&xmllint, &page);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<table class=\"checks\">"));
    assert!(
        html.contains("<td class=\"text\">steal</td>"),
        "a check is listed"
    );
    assert_eq!(html.matches("<svg class=\"plot distribution\"").count(), 1);
    assert_eq!(html.matches("<svg class=\"plot run-order\"").count(), 1);
    assert!(html.contains("noise: probe CV"));
}
