//! verdict-engine's bisection driver on a real git repository, a real
//! SQLite store and real `sh`/`sleep` processes: it names the culprit, its
//! measurement runs are linked to the bisection by the store's column (a
//! run that merely carries a bisection-like name is not taken for one of
//! them), a build hook's failure skips the commit, and notes reach the
//! caller instead of being printed.
//!
//! The workload sleeps 10x longer from the culprit on; the bisection uses
//! `fixed_runs` (each commit called like the nearer endpoint), so the
//! answer does not depend on a statistical decision on a loaded machine.

use std::path::Path;

use verdict_bisect::{Class, Config, Culprit, Git};
use verdict_engine::bisect::{
    BisectObserver, Driver, Finished, LocalSite, NewBisection, RemoteBuild, Request, Site,
};
use verdict_engine::{CommandError, Engine, Observer, Silent, StartOptions};
use verdict_exec::{Cancel, SystemExecutor};
use verdict_model::{Environment, Experiment};
use verdict_store::{SqliteStore, Store};
use verdict_testkit::git;

const COMMITS: usize = 6;
const CULPRIT: usize = 4;
const BROKEN: usize = 2;

/// Commits 0..=COMMITS; from CULPRIT on the workload sleeps 10x longer;
/// commit BROKEN carries a file that makes the build hook fail.
fn make_repo(repo: &Path) -> Vec<String> {
    verdict_testkit::sleep_repository(repo, COMMITS, CULPRIT, Some(BROKEN), ["0.02", "0.2"])
}

#[derive(Default)]
struct Recorder {
    notes: Vec<String>,
    measurements: usize,
}

impl BisectObserver for Recorder {
    fn measurement(&mut self, _: &str) -> Box<dyn Observer> {
        self.measurements += 1;
        Box::new(Silent)
    }

    fn note(&mut self, message: &str) {
        self.notes.push(message.to_string());
    }

    fn open_site(
        &mut self,
        remote: Option<&RemoteBuild>,
        _: &str,
    ) -> Result<Box<dyn Site>, CommandError> {
        assert!(remote.is_none(), "measured here");
        Ok(Box::new(LocalSite {
            executor: &SystemExecutor,
            environment: Environment::default(),
        }))
    }
}

#[test]
fn the_driver_names_the_culprit_and_links_its_runs_by_the_column() {
    let directory = tempfile::tempdir().unwrap();
    let repo = directory.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let hashes = make_repo(&repo);
    let repo = repo.canonicalize().unwrap();
    let database = directory.path().join("v.db");
    let store = SqliteStore::open(&database).unwrap();
    let mut experiment = Experiment::parse(
        "name = \"sleepy\"\ncommand = [\"sh\", \"work.sh\"]\n",
        "x.toml",
    )
    .unwrap();
    experiment.workdir = Some(repo.clone());

    // A run named like the first measurement of bisection 1 (the good
    // endpoint), of kind `bisect`, but not linked to it: linking by name
    // would take its values for a measurement cut off by a kill.
    let environment = Environment::default;
    let engine = Engine {
        executor: &SystemExecutor,
        store: &store,
        cancel: Cancel::new(),
        environment: &environment,
    };
    let mut decoy = experiment.clone();
    decoy.name = format!("bisect 1 {}", &hashes[0][..7]);
    decoy.sampling.iterations = 5;
    let decoy = engine
        .start(
            &StartOptions {
                experiment: decoy,
                experiment_text: String::new(),
                seed: 1,
                kind: verdict_model::RunKind::Bisect,
                command_line: Vec::new(),
                tool_version: "test".to_string(),
                bisect: None,
                placement: verdict_model::Placement::Local,
            },
            &mut Silent,
        )
        .unwrap();

    let mut recorder = Recorder::default();
    let mut driver = Driver {
        store: &store,
        store_location: &database,
        builder: &SystemExecutor,
        cancel: Cancel::new(),
        command_line: vec!["test".to_string()],
        tool_version: "test".to_string(),
        observer: &mut recorder,
    };
    let request = Request::Start(Box::new(NewBisection {
        repo: repo.clone(),
        good: hashes[0].clone(),
        bad: hashes[COMMITS].clone(),
        experiment,
        experiment_text: "name = \"sleepy\"\n".to_string(),
        experiment_path: "x.toml".into(),
        build: Some("test ! -e broken".to_string()),
        install: None,
        first_parent: true,
        worktrees: false,
        config: Config {
            fixed_runs: Some(5),
            ..Config::default()
        },
        remote: None,
        boot: None,
        seed: 7,
    }));
    let finished =
        verdict_engine::bisect::run(&mut driver, request, |path: &Path| Git::new(path)).unwrap();
    let Finished::Done(done) = finished else {
        panic!("aborted: {finished:?}");
    };
    assert_eq!(
        done.outcome.culprit,
        Culprit::Single(verdict_bisect::CommitId(hashes[CULPRIT].clone()))
    );

    let linked = store.bisect_runs(done.id).unwrap();
    assert!(!linked.is_empty());
    assert!(linked.iter().all(|run| run.id != decoy.run), "{linked:?}");
    let linked_values: u64 = linked.iter().map(|run| run.done - run.failed).sum();
    assert_eq!(
        linked_values as usize,
        done.bisection.total_runs(),
        "every value the bisection used comes from its linked runs, none from the decoy"
    );
    assert_eq!(recorder.measurements, linked.len());
    for run in &linked {
        assert!(run.name.starts_with("bisect 1 "), "{}", run.name);
        assert_eq!(
            store.annotations(run.id).unwrap()["bisect"]["bisect"],
            serde_json::json!(1)
        );
    }
    assert!(
        recorder.notes[0].starts_with("bisection 1: "),
        "{:?}",
        recorder.notes
    );
    let broken = &hashes[BROKEN][..7];
    let skipped = done.bisection.evidence().iter().any(|evidence| {
        evidence.commit.0 == hashes[BROKEN] && evidence.class == Some(Class::Skipped)
    });
    if skipped {
        assert!(
            recorder
                .notes
                .iter()
                .any(|note| note.starts_with(&format!("{broken} build failed"))),
            "{:?}",
            recorder.notes
        );
    }
    // The repository is back where it was.
    assert_eq!(git(&repo, &["rev-parse", "HEAD"]), hashes[COMMITS]);
}
