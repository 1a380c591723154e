//! Kernels built from source, against a stand-in kernel tree: a real git
//! repository whose Makefile behaves as Kbuild does where the builder
//! relies on it (`make -C TREE O=OBJ` with config targets, `olddefconfig`,
//! a default target that "compiles" each `kernel/*.c` newer than its object
//! and leaves a bzImage whose header names a release), run by real `git`,
//! `tar` and `make`. What is checked: a rerun builds nothing; a one-file
//! patch recompiles that file only (the object directory is shared);
//! switching back finds the first kernel in the cache; a tarball imports
//! to the same commit in any cache; a patch that does not apply, a `make`
//! that fails and a config that lacks what verdict's guest needs are each
//! a failure naming its step, before (or instead of) anything measured,
//! and a run whose kernel does not build stops before its first boot with
//! the failure recorded, or skips that level's boots.

use std::path::{Path, PathBuf};
use std::time::Duration;

use verdict_engine::{
    BootRunner, EngineError, KernelBuildError, KernelBuilder, Silent, StartOptions,
};
use verdict_exec::{
    BootRecord, BootSpec, Booter, Cancel, ExecError, FakeExecutor, Outcome, Target,
};
use verdict_model::kernel_build::KERNEL_BUILDS_ANNOTATION;
use verdict_model::{
    BuildSpec, BuildStep, ConfigBase, Environment, Experiment, Fragment, KernelBuildRecord,
    KernelBuildStatus, RunStatus,
};
use verdict_store::{SqliteStore, Store};

/// A config holding what verdict's guest needs, and the compiler's line.
fn base_config() -> String {
    format!(
        "{}CONFIG_CC_VERSION_TEXT=\"gcc (stand-in) 1.0\"\n",
        verdict_kconfig::vm_guest_needs()
    )
}

/// The stand-in tree (verdict-testkit's) with a config holding what
/// verdict's guest needs; its path and first commit.
fn tree(directory: &Path) -> (PathBuf, String) {
    verdict_testkit::kernel_tree::stand_in_kernel_tree(directory, &base_config())
}

use verdict_testkit::kernel_tree::ONE_FILE_PATCH as PATCH;

fn builder(cache: &Path) -> KernelBuilder {
    KernelBuilder {
        executor: Box::new(verdict_exec::SystemExecutor),
        cache: cache.to_path_buf(),
        cancel: Cancel::new(),
        jobs: 2,
        environment: Vec::new(),
    }
}

fn spec(tree: &Path, patches: &[PathBuf]) -> BuildSpec {
    BuildSpec {
        tree: Some(tree.to_path_buf()),
        git_ref: None,
        patches: patches.to_vec(),
        config: ConfigBase::Target("tinyconfig".into()),
        fragments: vec![Fragment::Target("extra.config".into())],
        make: Vec::new(),
        image: PathBuf::from("arch/x86/boot/bzImage"),
    }
}

/// The files the stand-in compiled so far, in order (every build's).
fn compiled(cache: &Path) -> Vec<String> {
    let work = cache.join("work");
    let Ok(entries) = std::fs::read_dir(&work) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| entry.path().is_dir())
        .map(|entry| std::fs::read_to_string(entry.path().join("obj/compiled")).unwrap_or_default())
        .collect::<String>()
        .lines()
        .map(str::to_string)
        .collect()
}

fn tools_present() -> bool {
    verdict_testkit::require_program("git", "git").is_some()
        && verdict_testkit::require_program("make", "make").is_some()
        && verdict_testkit::require_program("tar", "tar").is_some()
}

#[test]
fn a_rerun_builds_nothing_and_a_one_file_patch_recompiles_one_file() {
    if !tools_present() {
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let (repo, commit) = tree(directory.path());
    let cache = directory.path().join("cache");
    let patch = directory.path().join("expedite.patch");
    std::fs::write(&patch, PATCH).unwrap();
    let builder = builder(&cache);
    let mut notes = Vec::new();
    let mut note = |message: &str| notes.push(message.to_string());

    let first = builder.build(&spec(&repo, &[]), &mut note).unwrap();
    assert!(!first.cached);
    assert_eq!(first.build.commit, commit);
    assert_eq!(first.build.release, "6.1.0-standin");
    assert_eq!(
        first.build.version.as_deref(),
        Some("#1 SMP Thu Jan  1 00:00:00 UTC 1970")
    );
    assert_eq!(first.build.compiler, "gcc (stand-in) 1.0");
    assert_eq!(first.build.make, ["-j2"]);
    assert_eq!(first.build.config_recipe, ["tinyconfig", "extra.config"]);
    assert!(first.config_text.contains("CONFIG_EXTRA=y"));
    assert!(first.image.starts_with(&cache) && first.image.is_file());
    let builtin = std::fs::read_to_string(first.modules.join("modules.builtin")).unwrap();
    assert!(builtin.contains("virtio_net"), "{builtin}");
    assert_eq!(
        std::fs::read_to_string(first.modules.join("modules.dep")).unwrap(),
        ""
    );
    let mut first_compiled = compiled(&cache);
    first_compiled.sort();
    assert_eq!(first_compiled, ["kernel/cpu", "kernel/fork"]);

    // The same spec again: found by its spec key, nothing run in the tree.
    let again = builder.build(&spec(&repo, &[]), &mut note).unwrap();
    assert!(again.cached);
    assert_eq!(again.build, first.build);
    assert_eq!(compiled(&cache).len(), 2);

    // With a one-file patch: only that file is compiled again.
    let patched = builder
        .build(&spec(&repo, std::slice::from_ref(&patch)), &mut note)
        .unwrap();
    assert!(!patched.cached);
    assert_ne!(patched.build.key, first.build.key);
    assert_eq!(patched.build.patches.len(), 1);
    assert_eq!(patched.build.patches[0].name, "expedite.patch");
    assert_eq!(patched.build.config_sha256, first.build.config_sha256);
    assert_eq!(compiled(&cache).len(), 3);
    assert_eq!(compiled(&cache)[2], "kernel/cpu");
    assert_ne!(
        std::fs::read(&patched.image).unwrap(),
        std::fs::read(&first.image).unwrap()
    );

    // Back without it, and with it again: both from the cache.
    assert!(builder.build(&spec(&repo, &[]), &mut note).unwrap().cached);
    assert!(
        builder
            .build(&spec(&repo, &[patch]), &mut note)
            .unwrap()
            .cached
    );
    assert_eq!(compiled(&cache).len(), 3);
    // A new commit of the tree is a new build (its tree id differs).
    std::fs::write(repo.join("kernel/fork.c"), "int fork2;\n").unwrap();
    verdict_testkit::git(&repo, &["commit", "-q", "-am", "fork"]);
    let next = builder.build(&spec(&repo, &[]), &mut note).unwrap();
    assert!(!next.cached);
    assert_ne!(next.build.tree_id, first.build.tree_id);
    assert!(
        notes.iter().any(|note| note.starts_with("building ")),
        "{notes:?}"
    );
}

#[test]
fn a_tarball_is_imported_once_to_the_same_commit_in_any_cache() {
    if !tools_present() {
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let (repo, _) = tree(directory.path());
    let tarball = directory.path().join("linux.tar.gz");
    let status = std::process::Command::new("tar")
        .args(["-czf"])
        .arg(&tarball)
        .args(["--exclude=.git", "-C"])
        .arg(directory.path())
        .arg("linux")
        .status()
        .unwrap();
    assert!(status.success());
    let _ = std::fs::remove_dir_all(&repo);
    let built = |cache: &str| {
        builder(&directory.path().join(cache))
            .build(&spec(&tarball, &[]), &mut |_| {})
            .unwrap()
    };
    let one = built("one");
    let two = built("two");
    assert_eq!(one.build.commit, two.build.commit);
    assert_eq!(one.build.key, two.build.key);
    assert_eq!(one.build.source, tarball.display().to_string());
    assert_eq!(one.build.tarball_sha256.as_ref().map(String::len), Some(64));
    let sources: Vec<_> = std::fs::read_dir(directory.path().join("one/sources"))
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".git"))
        .collect();
    assert_eq!(sources.len(), 1, "{sources:?}");
}

/// The failure of `spec`'s build.
fn failure(
    builder: &KernelBuilder,
    spec: &BuildSpec,
) -> (BuildStep, String, Option<String>, Option<PathBuf>) {
    match builder.build(spec, &mut |_| {}) {
        Err(KernelBuildError::Failed {
            failure,
            log_tail,
            log_path,
        }) => (failure.step, failure.message, log_tail, log_path),
        other => panic!("expected a failed build, got {other:?}"),
    }
}

#[test]
fn a_broken_patch_a_failing_make_and_a_missing_feature_name_their_step() {
    if !tools_present() {
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let (repo, _) = tree(directory.path());
    let cache = directory.path().join("cache");
    let builder = builder(&cache);

    let stale = directory.path().join("stale.patch");
    std::fs::write(&stale, PATCH.replace("int cpu;", "int cpus;")).unwrap();
    let (step, message, _, _) = failure(&builder, &spec(&repo, &[stale]));
    assert_eq!(step, BuildStep::Patch);
    assert!(
        message.contains("stale.patch") && message.contains("does not apply"),
        "{message}"
    );
    assert!(compiled(&cache).is_empty(), "nothing was compiled");

    // Without EVENTFD the agent cannot run in the guest: refused before
    // make, naming the option and the fragment that has it.
    let config = directory.path().join("configs/no-eventfd.config");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, base_config().replace("CONFIG_EVENTFD=y\n", "")).unwrap();
    let mut lacking = spec(&repo, &[]);
    lacking.config = ConfigBase::File(config);
    let (step, message, _, _) = failure(&builder, &lacking);
    assert_eq!(step, BuildStep::Features);
    assert!(
        message.contains("CONFIG_EVENTFD=y") && message.contains("verdict:vm-guest"),
        "{message}"
    );
    assert!(compiled(&cache).is_empty(), "nothing was compiled");
    // A file fragment's assignment that does not hold is named too.
    let fragment = directory.path().join("configs/want.config");
    std::fs::write(&fragment, "CONFIG_WANTED=y\n").unwrap();
    let mut wanting = spec(&repo, &[]);
    wanting.fragments.push(Fragment::File(fragment));
    // The stand-in's olddefconfig keeps what was appended: it holds.
    assert!(builder.build(&wanting, &mut |_| {}).is_ok());

    std::fs::write(repo.join("broken"), "").unwrap();
    verdict_testkit::git(&repo, &["add", "broken"]);
    verdict_testkit::git(&repo, &["commit", "-q", "-m", "broken"]);
    let (step, message, tail, log) = failure(&builder, &spec(&repo, &[]));
    assert_eq!(step, BuildStep::Make);
    assert!(message.contains("make"), "{message}");
    let tail = tail.unwrap();
    assert!(tail.contains("error: expected ';'"), "{tail}");
    let log = std::fs::read_to_string(log.unwrap()).unwrap();
    assert!(log.contains("error: expected ';'"), "{log}");
}

/// Boots by script (see tests/boots.rs): every boot is proven, and the
/// machine's workload prints 200 when the booted image holds `int slow`
/// (a bisection's culprit code), else 100. Records what it booted.
#[derive(Default)]
struct StandInBooter {
    booted: std::rc::Rc<std::cell::RefCell<Vec<BootSpec>>>,
    current: Option<FakeExecutor>,
}

impl StandInBooter {
    fn specs(&self) -> Vec<BootSpec> {
        self.booted.borrow().clone()
    }
}

impl Booter for StandInBooter {
    fn boot(&mut self, spec: &BootSpec) -> Result<BootRecord, ExecError> {
        let kernel = spec.kernel.clone().expect("a VM boots an image");
        let slow = String::from_utf8_lossy(&std::fs::read(&kernel).unwrap()).contains("int slow");
        self.booted.borrow_mut().push(spec.clone());
        self.current = Some(FakeExecutor::with_function(move |_| {
            let mut outcome = Outcome::exited(0, Duration::from_millis(10));
            outcome.stdout = if slow {
                b"200\n".to_vec()
            } else {
                b"100\n".to_vec()
            };
            Ok(outcome)
        }));
        let count = self.booted.borrow().len();
        Ok(BootRecord {
            nonce: Some(format!("n{count}")),
            boot_id: format!("id{count}"),
            kernel_release: "6.1.0-standin".into(),
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
        String::new()
    }

    fn shut_down(&mut self) {
        self.current = None;
    }
}

fn run_options(repo: &Path, patch: &Path, policy: &str) -> StartOptions {
    let text = format!(
        "name = \"k\"\ncommand = [\"work\"]\n[factors]\npatch = [\n\
         {{ value = \"without\", boot = {{ build = {{ tree = \"{tree}\", config = \"tinyconfig\" }} }} }},\n\
         {{ value = \"with\", boot = {{ build = {{ tree = \"{tree}\", config = \"tinyconfig\", patches = [\"{patch}\"] }} }} }},\n]\n\
         [sampling]\niterations = 1\nboots = 2\non_boot_failure = \"{policy}\"\n[target]\nvm = {{ smp = \"2\" }}\n",
        tree = repo.display(),
        patch = patch.display()
    );
    StartOptions {
        experiment: Experiment::parse(&text, "k.toml").unwrap(),
        experiment_text: text,
        seed: 5,
        kind: verdict_model::RunKind::Run,
        command_line: Vec::new(),
        tool_version: "test".into(),
        bisect: None,
        placement: verdict_model::Placement::Vm,
    }
}

/// A boot runner with the stand-in booter and no environment, started.
#[expect(
    clippy::result_large_err,
    reason = "returns what BootRunner::start returns, for the tests to match"
)]
fn start_boots(
    booter: &mut StandInBooter,
    store: &dyn Store,
    kernels: Option<&KernelBuilder>,
    options: &StartOptions,
) -> Result<verdict_engine::RunOutcome, EngineError> {
    BootRunner {
        booter,
        store,
        cancel: Cancel::new(),
        environment: &Environment::default,
        boot_environment: &|_: &dyn Target, _: &verdict_exec::BootSpec| {
            verdict_engine::boots::BootCapture {
                environment: Environment::default(),
                kernel_config: None,
            }
        },
        kernels,
    }
    .start(options, &[], &mut Silent)
}

fn records(store: &dyn Store, run: verdict_model::RunId) -> Vec<KernelBuildRecord> {
    serde_json::from_value(
        store
            .annotations(run)
            .unwrap()
            .remove(KERNEL_BUILDS_ANNOTATION)
            .unwrap(),
    )
    .unwrap()
}

#[test]
fn a_run_whose_kernel_does_not_build_stops_before_its_first_boot_or_skips_it() {
    if !tools_present() {
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let (repo, _) = tree(directory.path());
    let stale = directory.path().join("stale.patch");
    std::fs::write(&stale, PATCH.replace("int cpu;", "int cpus;")).unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let builder = builder(&directory.path().join("cache"));

    let mut booter = StandInBooter::default();
    let error = start_boots(
        &mut booter,
        &store,
        Some(&builder),
        &run_options(&repo, &stale, "stop"),
    )
    .unwrap_err();
    let EngineError::KernelBuild {
        run,
        levels,
        failure,
    } = error
    else {
        panic!("expected a failed kernel build, got {error}");
    };
    assert_eq!(levels, "patch=with");
    assert_eq!(failure.step, verdict_model::BuildStep::Patch);
    assert!(failure.message.contains("stale.patch"), "{failure}");
    assert!(booter.specs().is_empty(), "nothing booted");
    assert_eq!(store.run(run).unwrap().status, RunStatus::Failed);
    assert!(store.boots(run).unwrap().is_empty());
    let stored = records(&store, run);
    assert_eq!(
        stored
            .iter()
            .map(|record| record.status)
            .collect::<Vec<_>>(),
        [KernelBuildStatus::Built, KernelBuildStatus::Failed]
    );
    assert_eq!(stored[1].levels, ["patch=with"]);
    assert_eq!(stored[1].failure.as_ref().unwrap().step, BuildStep::Patch);
    // The built kernel's config is stored under its hash.
    let config = stored[0].build.as_ref().unwrap().config_sha256.clone();
    assert!(store.kernel_config(&config).unwrap().is_some());

    // `skip`: the level that built is measured, with its kernel from the
    // cache and its provenance in each boot's environment.
    let mut booter = StandInBooter::default();
    let summary = start_boots(
        &mut booter,
        &store,
        Some(&builder),
        &run_options(&repo, &stale, "skip"),
    )
    .unwrap();
    assert_eq!(summary.status, RunStatus::Complete);
    assert_eq!(booter.specs().len(), 2, "the two boots of `without` only");
    for spec in &booter.specs() {
        let kernel = spec.kernel.as_ref().unwrap();
        assert!(
            kernel.starts_with(directory.path().join("cache/builds")),
            "{kernel:?}"
        );
        assert!(
            spec.modules
                .as_ref()
                .unwrap()
                .join("modules.builtin")
                .is_file()
        );
    }
    let boots = store.boots(summary.run).unwrap();
    assert_eq!(boots.len(), 2);
    for boot in &boots {
        assert_eq!(boot.level_key, "patch=without");
        let build = boot
            .environment
            .as_ref()
            .and_then(|environment| environment.kernel_build.as_ref())
            .unwrap();
        assert_eq!(build.release, "6.1.0-standin");
        assert!(build.patches.is_empty());
    }
    assert_eq!(
        records(&store, summary.run)
            .iter()
            .map(|record| record.status)
            .collect::<Vec<_>>(),
        [KernelBuildStatus::Cached, KernelBuildStatus::Failed]
    );

    // The level's own source for `verdict kconfig why`: the checkout at
    // its commit without the patch, and its config.
    let source = verdict_engine::boot_builds::level_source(
        &builder,
        &store,
        &format!("{}:patch=without", summary.run),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(source.tree.join("kernel/cpu.c")).unwrap(),
        "int cpu;\n"
    );
    assert!(
        std::fs::read_to_string(&source.config)
            .unwrap()
            .contains("CONFIG_EVENTFD=y")
    );
    let error = verdict_engine::boot_builds::level_source(
        &builder,
        &store,
        &format!("{}:patch=with", summary.run),
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("built no kernel for patch=with"), "{error}");
}

#[test]
fn a_build_level_without_a_builder_is_refused() {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let mut booter = StandInBooter::default();
    let error = start_boots(
        &mut booter,
        &store,
        None,
        &run_options(Path::new("/src/linux"), Path::new("/p.patch"), "stop"),
    )
    .unwrap_err();
    assert!(matches!(error, EngineError::NeedsBuilder { .. }), "{error}");
}

struct BisectTerminal {
    cache: PathBuf,
    booted: std::rc::Rc<std::cell::RefCell<Vec<BootSpec>>>,
    notes: Vec<String>,
}

impl verdict_engine::bisect::BisectObserver for BisectTerminal {
    fn measurement(&mut self, _: &str) -> Box<dyn verdict_engine::Observer> {
        Box::new(Silent)
    }

    fn note(&mut self, message: &str) {
        self.notes.push(message.to_string());
    }

    fn open_site(
        &mut self,
        _: Option<&verdict_engine::bisect::RemoteBuild>,
        _: &str,
    ) -> Result<Box<dyn verdict_engine::bisect::Site>, verdict_engine::CommandError> {
        Ok(Box::new(verdict_engine::bisect::LocalSite {
            executor: &verdict_exec::SystemExecutor,
            environment: Environment::default(),
        }))
    }

    fn open_booter(
        &mut self,
        _: &Experiment,
    ) -> Result<verdict_engine::bisect_boots::BootSite, verdict_engine::CommandError> {
        Ok(verdict_engine::bisect_boots::BootSite {
            booter: Box::new(StandInBooter {
                booted: self.booted.clone(),
                current: None,
            }),
            environment: Box::new(|_, _| verdict_engine::boots::BootCapture {
                environment: Environment::default(),
                kernel_config: None,
            }),
            kernels: Some(builder(&self.cache)),
        })
    }
}

/// `verdict bisect` with a VM whose `build` names no tree: each commit of
/// the repository is built by verdict (no checkout of the repository, no
/// build command), a commit whose build fails is skipped with the build's
/// reason, and the culprit is named.
#[test]
fn a_bisection_builds_each_commits_kernel_from_the_vm_build() {
    if !tools_present() {
        return;
    }
    const CULPRIT: usize = 3;
    const BROKEN: usize = 2;
    let directory = tempfile::tempdir().unwrap();
    let (repo, first) = tree(directory.path());
    let mut hashes = vec![first];
    for index in 1..=4 {
        let code = if index >= CULPRIT {
            "int slow;\n"
        } else {
            "int fast;\n"
        };
        std::fs::write(repo.join("kernel/fork.c"), format!("{code}/* {index} */\n")).unwrap();
        if index == BROKEN {
            std::fs::write(repo.join("broken"), "").unwrap();
        } else {
            let _ = std::fs::remove_file(repo.join("broken"));
        }
        verdict_testkit::git(&repo, &["add", "-A"]);
        verdict_testkit::git(&repo, &["commit", "-q", "-m", &format!("commit {index}")]);
        hashes.push(verdict_testkit::git(&repo, &["rev-parse", "HEAD"]));
    }
    let head_before = verdict_testkit::git(&repo, &["rev-parse", "HEAD"]);
    let text = "name = \"k\"\ncommand = [\"work\"]\n[[metrics]]\nname = \"cost\"\nsource = \"number\"\ndirection = \"lower\"\n\
                [target]\nvm = { build = { config = \"tinyconfig\" } }\n";
    let experiment = Experiment::parse(text, "k.toml").unwrap();
    let store = SqliteStore::open(directory.path().join("v.db")).unwrap();
    let booted = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let mut terminal = BisectTerminal {
        cache: directory.path().join("cache"),
        booted: booted.clone(),
        notes: Vec::new(),
    };
    let mut driver = verdict_engine::bisect::Driver {
        store: &store,
        store_location: &directory.path().join("v.db"),
        builder: &verdict_exec::SystemExecutor,
        cancel: Cancel::new(),
        command_line: Vec::new(),
        tool_version: "test".into(),
        observer: &mut terminal,
    };
    let request =
        verdict_engine::bisect::Request::Start(Box::new(verdict_engine::bisect::NewBisection {
            repo: repo.clone(),
            good: hashes[0].clone(),
            bad: hashes[4].clone(),
            experiment,
            experiment_text: text.to_string(),
            experiment_path: "k.toml".into(),
            build: None,
            install: None,
            first_parent: true,
            worktrees: false,
            config: verdict_bisect::Config {
                fixed_runs: Some(1),
                ..verdict_bisect::Config::default()
            },
            remote: None,
            boot: Some(verdict_engine::bisect_boots::BootBuild {
                from_source: true,
                ..Default::default()
            }),
            seed: 3,
        }));
    let finished = verdict_engine::bisect::run(&mut driver, request, |path: &Path| {
        verdict_bisect::Git::new(path)
    })
    .unwrap();
    let verdict_engine::bisect::Finished::Done(done) = finished else {
        panic!("aborted: {finished:?}");
    };
    // The culprit, with the skipped commit before it that could also be.
    assert_eq!(
        done.outcome.culprit,
        verdict_bisect::Culprit::Range(vec![
            verdict_bisect::CommitId(hashes[BROKEN].clone()),
            verdict_bisect::CommitId(hashes[CULPRIT].clone()),
        ])
    );
    // Every boot booted a kernel of the cache; the repository's checkout
    // never moved.
    assert!(!booted.borrow().is_empty());
    for spec in booted.borrow().iter() {
        let kernel = spec.kernel.as_ref().unwrap();
        assert!(
            kernel.starts_with(directory.path().join("cache/builds")),
            "{kernel:?}"
        );
    }
    assert_eq!(
        verdict_testkit::git(&repo, &["rev-parse", "HEAD"]),
        head_before
    );
    assert!(verdict_testkit::git(&repo, &["status", "--porcelain"]).is_empty());
    // The broken commit (the first measured) was skipped for its build,
    // the failure recorded in its run.
    let broken = &hashes[BROKEN][..12];
    let note = terminal
        .notes
        .iter()
        .find(|note| note.starts_with(&format!("{broken} kernel build failed")))
        .unwrap_or_else(|| panic!("{:?}", terminal.notes));
    assert!(note.contains("at its make step"), "{note}");
}
