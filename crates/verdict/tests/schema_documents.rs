//! Real documents conform to the committed JSON Schemas
//! (`docs/schemas/verdict.NAME.v1.json`): the JSON each command prints on
//! a store this test fills (`verdict ab`, `verdict run` of a two-factor
//! experiment, a bisection whose workload prints fixed values) and on the
//! fixture files, checked with verdict-analysis's validator. verdict-analysis's
//! `schemas` test keeps the committed files equal to the types' schemas.

mod common;

use common::{quick_bisect, steps_repository, succeed, verdict, verdict_without_store};
use serde_json::Value;
use std::path::Path;

fn schema(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/schemas")
        .join(verdict_analysis::schema::file_name(name));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// `output` is one JSON document whose `schema` is `name` and which
/// conforms to the committed schema of that name.
fn conforms(name: &str, output: &str) {
    let document: Value =
        serde_json::from_str(output).unwrap_or_else(|error| panic!("{name}: {error}\n{output}"));
    assert_eq!(document["schema"], name, "{output}");
    let errors = verdict_testkit::json_schema::validate(&schema(name), &document);
    assert!(errors.is_empty(), "{name}:\n{}", errors.join("\n"));
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/go-allocs")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn documents_of_files_and_settings_conform() {
    let (old, new) = (fixture("old.txt"), fixture("new.txt"));
    let json = ["--format", "json"];
    conforms(
        "verdict.compare/v1",
        &succeed(
            verdict_without_store()
                .args(["compare", &old, &new])
                .args(json),
        ),
    );
    conforms(
        "verdict.compare/v1",
        &succeed(
            verdict_without_store()
                .args(["compare", "--sequential", &old, &new])
                .args(json),
        ),
    );
    conforms(
        "verdict.plan/v1",
        &succeed(
            verdict_without_store()
                .args([
                    "plan",
                    "--cv",
                    "13%",
                    "--threshold",
                    "10%",
                    "--trials",
                    "20",
                ])
                .args(json),
        ),
    );
    conforms(
        "verdict.simulate/v1",
        &succeed(
            verdict_without_store()
                .args([
                    "simulate", "--trials", "50", "--seed", "7", "--max", "20", "--runs", "10",
                ])
                .args(json),
        ),
    );
    let directory = tempfile::tempdir().unwrap();
    let series: String = (0..30)
        .map(|row| format!("{row},{}\n", if row < 15 { 100 } else { 130 } + row % 3))
        .collect();
    std::fs::write(
        directory.path().join("series.csv"),
        format!("t,v\n{series}"),
    )
    .unwrap();
    conforms(
        "verdict.history/v1",
        &succeed(
            verdict_without_store()
                .current_dir(directory.path())
                .args([
                    "history",
                    "--file",
                    "series.csv",
                    "--column",
                    "v",
                    "--time-column",
                    "t",
                ])
                .args(json),
        ),
    );
}

#[test]
fn documents_of_stored_runs_conform() {
    let directory = tempfile::tempdir().unwrap();
    let json = ["--format", "json"];
    succeed(verdict(directory.path()).args(["ab", "-n", "3", "--seed", "1", "true", "sleep 0"]));
    std::fs::write(
        directory.path().join("select.toml"),
        "name = \"select\"\ncommand = [\"printf\", \"%s %s\", \"{benchmark}\", \"{variant}\"]\n\
         [factors]\nbenchmark = [\"fork\", \"pipe\"]\nvariant = [\"a\", \"b\"]\n\
         [sampling]\niterations = 3\n",
    )
    .unwrap();
    for _ in 0..3 {
        succeed(verdict(directory.path()).args(["run", "select.toml", "--seed", "1"]));
    }
    conforms(
        "verdict.runs/v1",
        &succeed(verdict(directory.path()).arg("runs").args(json)),
    );
    conforms(
        "verdict.report/v1",
        &succeed(verdict(directory.path()).args(["report", "1"]).args(json)),
    );
    conforms(
        "verdict.pivot/v1",
        &succeed(
            verdict(directory.path())
                .args(["report", "2", "--rows", "variant", "--cols", "benchmark"])
                .args(json),
        ),
    );
    conforms(
        "verdict.compare/v1",
        &succeed(
            verdict(directory.path())
                .args([
                    "compare",
                    "2:benchmark=fork,variant=a",
                    "4:benchmark=fork,variant=b",
                ])
                .args(json),
        ),
    );
    conforms(
        "verdict.export/v1",
        &succeed(verdict(directory.path()).args(["export", "2"]).args(json)),
    );
    conforms(
        "verdict.history/v1",
        &succeed(
            verdict(directory.path())
                .args(["history", "select"])
                .args(json),
        ),
    );
}

#[test]
fn the_bisection_log_conforms() {
    let directory = tempfile::tempdir().unwrap();
    let hashes = steps_repository(directory.path());
    let repo = directory.path().join("repo");
    succeed(verdict(directory.path()).args(quick_bisect(&repo, &hashes[0], &hashes[4])));
    conforms(
        "verdict.bisect-log/v1",
        &succeed(verdict(directory.path()).args(["bisect", "log", "--format", "json"])),
    );
}
