//! The boot as the unit of the schedule, against a scripted booter (whose
//! machines are scripted executors) and a real SQLite store: failed boots
//! recorded and retried, then skipped or stopping the run; a verify that
//! does not match refusing the boot; resume after a stop measuring exactly
//! the missing iterations in fresh boots.

use std::collections::VecDeque;
use std::time::Duration;
use verdict_engine::{BootCapture, BootRunner, EngineError, Silent, StartOptions};
use verdict_exec::{
    BootRecord, BootSpec, Booter, Cancel, ExecError, FakeExecutor, Outcome, Target,
};
use verdict_model::{Environment, Experiment, RunId, RunStatus};
use verdict_store::{SqliteStore, Store};

/// Boots by script: each `boot` takes the next entry (`Ok` = proven), and
/// a proven boot's machine answers every command with exit 0 and prints
/// what the level's verify shows (`(full)` unless the command line asks
/// for `preempt=none`).
struct ScriptedBooter {
    script: VecDeque<bool>,
    specs: Vec<BootSpec>,
    current: Option<FakeExecutor>,
}

impl ScriptedBooter {
    fn new(script: &[bool]) -> Self {
        Self {
            script: script.iter().copied().collect(),
            specs: Vec::new(),
            current: None,
        }
    }
}

impl Booter for ScriptedBooter {
    fn boot(&mut self, spec: &BootSpec) -> Result<BootRecord, ExecError> {
        self.current = None;
        self.specs.push(spec.clone());
        let proven = self.script.pop_front().expect("a boot beyond the script");
        if !proven {
            return Err(ExecError::BootFailed {
                message: "QEMU exited".into(),
                console_tail: "Kernel panic - not syncing".into(),
            });
        }
        let shows = if spec.command_line.contains("preempt=none") {
            "(none) voluntary full\n"
        } else {
            "none voluntary (full)\n"
        };
        self.current = Some(FakeExecutor::with_function(move |_| {
            let mut outcome = Outcome::exited(0, Duration::from_millis(10));
            outcome.stdout = shows.as_bytes().to_vec();
            Ok(outcome)
        }));
        Ok(BootRecord {
            nonce: Some(format!("n{}", self.specs.len())),
            boot_id: format!("id{}", self.specs.len()),
            kernel_release: "6.1.0-test".into(),
            command_line: spec.command_line.clone(),
            accelerator: "tcg".into(),
            boot_time: Duration::from_secs(1),
            kvm_fallback: None,
        })
    }

    fn target(&self) -> Option<&dyn Target> {
        self.current.as_ref().map(|fake| fake as &dyn Target)
    }

    fn console_tail(&self) -> String {
        "verdict-vm: sshd started".into()
    }

    fn shut_down(&mut self) {
        self.current = None;
    }
}

fn no_environment() -> Environment {
    Environment::default()
}

/// What the engine is handed as the booted machine's environment: read
/// through the boot's target (its name stands for the capture).
fn target_environment(target: &dyn Target, _: &verdict_exec::BootSpec) -> BootCapture {
    BootCapture {
        environment: Environment {
            hostname: Some(target.target_name().to_string()),
            ..Environment::default()
        },
        kernel_config: None,
    }
}

fn options(policy: &str, full_verify: &str) -> StartOptions {
    let text = format!(
        "name = \"b\"\ncommand = [\"work\"]\n[factors]\npreempt = [\n\
         {{ value = \"none\", boot = {{ cmdline = \"preempt=none\" }} }},\n\
         {{ value = \"full\", boot = {{ cmdline = \"preempt=full\" }}, verify = {{ command = [\"cat\", \"/sys/kernel/debug/sched/preempt\"], matches = '{full_verify}' }} }},\n]\n\
         [sampling]\niterations = 2\nboots = 2\nboot_retries = 1\non_boot_failure = \"{policy}\"\n\
         [target]\nvm = {{ kernel = \"/vmlinuz\" }}\n"
    );
    StartOptions {
        experiment: Experiment::parse(&text, "b.toml").unwrap(),
        experiment_text: text,
        seed: 3,
        kind: verdict_model::RunKind::Run,
        command_line: Vec::new(),
        tool_version: "test".into(),
        bisect: None,
        placement: verdict_model::Placement::Vm,
    }
}

#[test]
fn a_boot_that_fails_twice_is_skipped_and_recorded() {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    // Slot 1 proven; slot 2 fails, then fails its retry (skipped); slots 3
    // and 4 proven.
    let mut booter = ScriptedBooter::new(&[true, false, false, true, true]);
    let summary = BootRunner {
        booter: &mut booter,
        store: &store,
        cancel: Cancel::new(),
        environment: &no_environment,
        boot_environment: &target_environment,
        kernels: None,
    }
    .start(&options("skip", r"\(full\)"), &[], &mut Silent)
    .unwrap();
    assert_eq!(summary.status, RunStatus::Complete);
    let boots = store.boots(summary.run).unwrap();
    let statuses: Vec<&str> = boots.iter().map(|boot| boot.status.as_str()).collect();
    assert_eq!(
        statuses,
        ["complete", "failed", "failed", "complete", "complete"]
    );
    assert_eq!((boots[1].slot, boots[1].attempt), (1, 0));
    assert_eq!((boots[2].slot, boots[2].attempt), (1, 1));
    // Each proven boot's machine environment is stored in its row; a
    // failed boot has none.
    for boot in &boots {
        if boot.status == verdict_model::BootStatus::Complete {
            let environment = boot
                .environment
                .as_ref()
                .expect("a proven boot's environment");
            assert_eq!(environment.hostname.as_deref(), Some("local"));
        } else {
            assert_eq!(boot.environment, None, "{boot:?}");
        }
    }
    assert_eq!(
        boots[2].console_tail.as_deref(),
        Some("Kernel panic - not syncing")
    );
    // 3 boots measured, 2 iterations each; the skipped slot's sequences
    // stay unused, none is doubled.
    let samples = store.samples(summary.run).unwrap();
    assert_eq!(samples.len(), 6);
    for sample in &samples {
        let boot = verdict_store::BootRow::of_sample(&boots, sample.sequence).unwrap();
        assert_eq!(
            boots[boot as usize].status,
            verdict_model::BootStatus::Complete
        );
    }
    // The command lines the booter got: each slot's level.
    assert!(
        booter
            .specs
            .iter()
            .all(|spec| spec.kernel.as_deref() == Some(std::path::Path::new("/vmlinuz")))
    );
}

#[test]
fn a_stopped_run_resumes_with_exactly_the_missing_iterations() {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let mut booter = ScriptedBooter::new(&[true, false, false]);
    let error = BootRunner {
        booter: &mut booter,
        store: &store,
        cancel: Cancel::new(),
        environment: &no_environment,
        boot_environment: &target_environment,
        kernels: None,
    }
    .start(&options("stop", r"\(full\)"), &[], &mut Silent)
    .unwrap_err();
    let EngineError::BootFailed { run, boot, .. } = error else {
        panic!("{error}");
    };
    assert_eq!(boot, 2);
    assert_eq!(store.run(run).unwrap().status, RunStatus::Failed);
    assert_eq!(store.samples(run).unwrap().len(), 2);
    let mut booter = ScriptedBooter::new(&[true, true, true]);
    let summary = BootRunner {
        booter: &mut booter,
        store: &store,
        cancel: Cancel::new(),
        environment: &no_environment,
        boot_environment: &target_environment,
        kernels: None,
    }
    .resume(run, &mut Silent)
    .unwrap();
    assert_eq!(summary.status, RunStatus::Complete);
    let sequences: Vec<u32> = store
        .samples(run)
        .unwrap()
        .iter()
        .map(|sample| sample.sequence)
        .collect();
    assert_eq!(sequences, (0..8).collect::<Vec<_>>());
    assert_eq!(store.boots(run).unwrap().len(), 6);
}

#[test]
fn a_verify_that_does_not_match_refuses_the_boot() {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    // `full` claims a mode its kernel does not show: every boot of it is
    // refused (after its retry), none of its iterations is data.
    let mut booter = ScriptedBooter::new(&[true; 6]);
    let summary = BootRunner {
        booter: &mut booter,
        store: &store,
        cancel: Cancel::new(),
        environment: &no_environment,
        boot_environment: &target_environment,
        kernels: None,
    }
    .start(&options("skip", r"\(voluntary\)"), &[], &mut Silent)
    .unwrap();
    let run: RunId = summary.run;
    let boots = store.boots(run).unwrap();
    let refused: Vec<_> = boots
        .iter()
        .filter(|boot| boot.level_key == "preempt=full")
        .collect();
    assert_eq!(refused.len(), 4);
    for boot in refused {
        assert_eq!(boot.status, verdict_model::BootStatus::Failed);
        assert!(
            boot.message
                .as_deref()
                .unwrap()
                .contains("did not show /\\(voluntary\\)/"),
            "{boot:?}"
        );
        assert_eq!(
            boot.console_tail.as_deref(),
            Some("verdict-vm: sshd started")
        );
    }
    let experiment = options("skip", "x").experiment;
    let cells = experiment.cells();
    for sample in store.samples(run).unwrap() {
        assert_eq!(cells[sample.cell].level("preempt"), Some("none"));
    }
    assert_eq!(store.samples(run).unwrap().len(), 4);
}
