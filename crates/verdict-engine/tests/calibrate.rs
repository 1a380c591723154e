//! `verdict_engine::calibrate` with real `sh` processes: the workload runs
//! as the engine's loop runs it (the factor's `VERDICT_<FACTOR>` variable
//! of the first cell is set, the working directory is the experiment's),
//! failed iterations are noted and not counted, nothing needs a store.

use verdict_engine::calibrate::calibrate;
use verdict_engine::{ComparisonStatus, Observer};
use verdict_exec::{Cancel, SystemExecutor};
use verdict_model::{Cell, Experiment, RunId, Sample};

#[derive(Default)]
struct Notes(Vec<String>);

impl Observer for Notes {
    fn started(&mut self, _: RunId, _: usize, _: usize, _: &[Cell]) {}
    fn sample(&mut self, _: &Sample, _: &[Cell], _: usize, _: usize) {}
    fn decisions(&mut self, _: &[ComparisonStatus]) {}
    fn note(&mut self, message: &str) {
        self.0.push(message.to_string());
    }
}

#[test]
fn calibration_runs_the_first_cell_like_the_engine_and_skips_failures() {
    let directory = tempfile::tempdir().unwrap();
    // Succeeds only with the first cell's level set, and only on every
    // other call (a counter file in the working directory).
    let text = r#"
name = "calibrated"
command = ["sh", "-c", "test \"$VERDICT_MODE\" = fast || exit 3; n=$(cat count 2>/dev/null || echo 0); echo $((n + 1)) > count; [ $((n % 2)) -eq 0 ]"]

[factors]
mode = ["fast", "slow"]
"#;
    let mut experiment = Experiment::parse(text, "calibrated.toml").unwrap();
    experiment.workdir = Some(directory.path().to_path_buf());
    let mut notes = Notes::default();
    let calibration =
        calibrate(&SystemExecutor, &experiment, 4, &Cancel::new(), &mut notes).unwrap();
    assert_eq!(calibration.name, "calibrated (mode=fast)");
    assert_eq!(calibration.iterations.len(), 2, "{:?}", notes.0);
    assert!(
        calibration
            .iterations
            .iter()
            .all(|iteration| iteration.seconds > 0.0)
    );
    assert_eq!(
        std::fs::read_to_string(directory.path().join("count")).unwrap(),
        "4\n",
        "ran in the experiment's working directory, four times"
    );
    assert!(notes.0[0].starts_with("running `sh -c"), "{:?}", notes.0);
    assert_eq!(
        notes
            .0
            .iter()
            .filter(|note| note.starts_with("workload iteration failed (exit status 1)"))
            .count(),
        2,
        "{:?}",
        notes.0
    );
}
