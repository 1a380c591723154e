//! The kernels a booted run builds from source, all before its first boot:
//! each distinct `build` of its boot plans once (from the cache when it is
//! there), each recorded in the run's `kernel_builds` annotation (built,
//! cached or failed, with the end of its log) and its resolved `.config`
//! stored under its hash (what `compare --config-diff` reads). A build
//! that fails is a recorded failure of the levels that boot it, never
//! data: the run stops before anything is measured (`on_boot_failure =
//! "stop"`) or skips those levels' boots (`"skip"`).
//!
//! Also the source of a stored run's built level (`verdict kconfig source
//! RUN:LEVEL`): its tree checked out as it was built, and its config.
//!
//! Must not: boot anything (the boot runner does), or print.

use std::path::PathBuf;

use verdict_model::{
    BootPlan, BuildFailure, BuildSpec, Experiment, KernelBuild, KernelBuildRecord,
    KernelBuildStatus, RunId, kernel_build::KERNEL_BUILDS_ANNOTATION,
};
use verdict_store::Store;

use crate::boots::{BootSlot, boot_plan};
use crate::kernel_build::{BuiltKernel, KernelBuildError, KernelBuilder};
use crate::runner::{EngineError, Observer, stored_experiment};

/// The kernels of a run: each build spec with what came of it.
#[derive(Debug, Default)]
pub struct RunKernels {
    kernels: Vec<(BuildSpec, Result<BuiltKernel, BuildFailure>)>,
}

impl RunKernels {
    /// What came of `spec`'s build: the kernel, or why there is none.
    pub fn get(&self, spec: &BuildSpec) -> Option<&Result<BuiltKernel, BuildFailure>> {
        self.kernels
            .iter()
            .find(|(known, _)| known == spec)
            .map(|(_, result)| result)
    }

    /// Points `plan` at its built kernel (the image and modules in the
    /// cache) when it names a build; the build's provenance, `None` for a
    /// plan that builds nothing, `Err` (why) when its build failed.
    pub(crate) fn resolve(&self, plan: &mut BootPlan) -> Result<Option<KernelBuild>, String> {
        let Some(spec) = plan.build.take() else {
            return Ok(None);
        };
        match self.get(&spec) {
            Some(Ok(built)) => {
                plan.kernel = Some(built.image.clone());
                plan.modules = Some(built.modules.clone());
                Ok(Some(built.build.clone()))
            }
            Some(Err(failure)) => Err(failure.to_string()),
            None => Err("it was not built".to_string()),
        }
    }

    /// The first failure: (the levels that boot it, why).
    pub fn first_failure(
        &self,
        schedule: &[BootSlot],
        experiment: &Experiment,
    ) -> Option<(String, BuildFailure)> {
        self.kernels.iter().find_map(|(spec, result)| {
            result.as_ref().err().map(|failure| {
                (
                    levels_of(spec, schedule, experiment).join(", "),
                    failure.clone(),
                )
            })
        })
    }
}

/// The boot levels (slot keys, first seen first) whose plan builds `spec`.
fn levels_of(spec: &BuildSpec, schedule: &[BootSlot], experiment: &Experiment) -> Vec<String> {
    let mut levels: Vec<String> = Vec::new();
    for slot in schedule {
        let builds = boot_plan(experiment, slot).and_then(|plan| plan.build);
        if builds.as_ref() == Some(spec) && !levels.contains(&slot.level_key) {
            levels.push(slot.level_key.clone());
        }
    }
    levels
}

/// Builds (or finds) every kernel `schedule` boots, records each in run
/// `run`'s annotation (after those of earlier attempts: a resumed run
/// keeps its history) and stores each config. `Err` for a cancellation
/// (every record so far stored) or the store; a failed build is in the
/// result, not an error.
pub fn build_kernels(
    builder: Option<&KernelBuilder>,
    store: &dyn Store,
    run: RunId,
    experiment: &Experiment,
    schedule: &[BootSlot],
    observer: &mut dyn Observer,
) -> Result<RunKernels, EngineError> {
    // In the levels' order (the baseline's first), not the boots' drawn
    // order: the same experiment builds in the same order on every run.
    let mut ordered: Vec<&BootSlot> = schedule.iter().collect();
    ordered.sort_by(|a, b| a.levels.cmp(&b.levels));
    let mut specs: Vec<BuildSpec> = Vec::new();
    for slot in ordered {
        if let Some(spec) = boot_plan(experiment, slot).and_then(|plan| plan.build)
            && !specs.contains(&spec)
        {
            specs.push(spec);
        }
    }
    let mut kernels = RunKernels::default();
    if specs.is_empty() {
        return Ok(kernels);
    }
    let Some(builder) = builder else {
        return Err(EngineError::NeedsBuilder { run });
    };
    let mut records = stored_records(store, run)?;
    for spec in specs {
        let levels = levels_of(&spec, schedule, experiment);
        observer.note(&format!(
            "kernel for {}: {}",
            levels.join(", "),
            describe(&spec)
        ));
        let started = std::time::Instant::now();
        let result = builder.build(&spec, &mut |message| observer.note(message));
        let seconds = started.elapsed().as_secs_f64();
        let (record, outcome) = match result {
            Ok(built) => {
                observer.note(&format!(
                    "kernel for {}: {} {} ({}, release {}){}",
                    levels.join(", "),
                    if built.cached {
                        "found in the cache:"
                    } else {
                        "built:"
                    },
                    built.image.display(),
                    built.build.summary(),
                    built.build.release,
                    if built.cached {
                        String::new()
                    } else {
                        format!(" in {:.0}s", built.build.build_seconds)
                    }
                ));
                store.put_kernel_config(
                    &built.build.config_sha256,
                    &format!("kernel build {}", &built.build.key[..20]),
                    &built.config_text,
                )?;
                let record = KernelBuildRecord {
                    levels,
                    status: if built.cached {
                        KernelBuildStatus::Cached
                    } else {
                        KernelBuildStatus::Built
                    },
                    build: Some(built.build.clone()),
                    failure: None,
                    log_tail: None,
                    log_path: Some(built.log_path.display().to_string()),
                    seconds,
                };
                (record, Ok(built))
            }
            Err(KernelBuildError::Failed {
                failure,
                log_tail,
                log_path,
            }) => {
                observer.note(&format!("kernel for {}: {failure}", levels.join(", ")));
                let record = KernelBuildRecord {
                    levels,
                    status: KernelBuildStatus::Failed,
                    build: None,
                    failure: Some(failure.clone()),
                    log_tail,
                    log_path: log_path.map(|path| path.display().to_string()),
                    seconds,
                };
                (record, Err(failure))
            }
            Err(KernelBuildError::Cancelled) => {
                store.put_annotation(run, KERNEL_BUILDS_ANNOTATION, &to_value(&records))?;
                return Err(EngineError::BuildCancelled { run });
            }
        };
        records.push(record);
        store.put_annotation(run, KERNEL_BUILDS_ANNOTATION, &to_value(&records))?;
        kernels.kernels.push((spec, outcome));
    }
    Ok(kernels)
}

/// The kernels run `run` built (its `kernel_builds` annotation), in the
/// order it built them; empty for a run that built none.
pub fn stored_records(
    store: &dyn Store,
    run: RunId,
) -> Result<Vec<KernelBuildRecord>, verdict_store::StoreError> {
    Ok(store
        .annotations(run)?
        .remove(KERNEL_BUILDS_ANNOTATION)
        .and_then(|value| serde_json::from_value(value).ok())
        .unwrap_or_default())
}

fn to_value(records: &[KernelBuildRecord]) -> serde_json::Value {
    serde_json::to_value(records).expect("build records serialize")
}

/// `linux-source-6.1.tar.xz + rcu.patch, tinyconfig + kvm_guest.config`.
fn describe(spec: &BuildSpec) -> String {
    let tree = spec
        .tree
        .as_ref()
        .map(|tree| tree.display().to_string())
        .unwrap_or_default();
    let mut text = match &spec.git_ref {
        Some(git_ref) => format!("{tree} at {git_ref}"),
        None => tree,
    };
    for patch in &spec.patches {
        text.push_str(&format!(
            " + {}",
            patch.file_name().map_or_else(
                || patch.display().to_string(),
                |name| name.to_string_lossy().into_owned()
            )
        ));
    }
    let recipe: Vec<String> = std::iter::once(spec.config.label())
        .chain(spec.fragments.iter().map(verdict_model::Fragment::label))
        .collect();
    format!("{text}, config {}", recipe.join(" + "))
}

/// A built level's source, ready for `verdict kconfig why`.
#[derive(Debug, Clone)]
pub struct LevelSource {
    /// The cache's checkout, holding the level's commit and patches.
    pub tree: PathBuf,
    /// The level's resolved `.config` (written from the store).
    pub config: PathBuf,
    pub build: KernelBuild,
}

/// The source of the kernel that boot level `selection` (`RUN:factor=level`,
/// or `RUN` without boot factors) of a stored run built: its build spec
/// from the run's experiment, its config from the store, the cache's
/// checkout switched to its commit and patches.
pub fn level_source(
    builder: &KernelBuilder,
    store: &dyn Store,
    selection: &str,
    note: &mut dyn FnMut(&str),
) -> Result<LevelSource, EngineError> {
    let refuse = |message: String| EngineError::LevelSource {
        selection: selection.to_string(),
        message,
    };
    let parsed = crate::compare::parse_selection(selection)
        .ok_or_else(|| refuse("expected RUN or RUN:factor=level".to_string()))?;
    let run = parsed
        .run
        .ok_or_else(|| refuse("name the run: RUN:factor=level".to_string()))?;
    let record = store.run(run)?;
    let experiment = stored_experiment(&record)?;
    let vm = experiment
        .target
        .vm()
        .ok_or_else(|| refuse(format!("run {run} booted no VM")))?;
    let mut keys = Vec::new();
    let mut boots = Vec::new();
    for index in experiment.boot_factors() {
        let factor = &experiment.factors[index];
        let chosen = parsed
            .levels
            .iter()
            .find(|(name, _)| *name == factor.name)
            .map(|(_, value)| value.clone())
            .or_else(|| (factor.levels.len() == 1).then(|| factor.levels[0].value.clone()))
            .ok_or_else(|| {
                refuse(format!(
                    "name the level of the boot factor `{}`",
                    factor.name
                ))
            })?;
        let level = factor
            .levels
            .iter()
            .find(|level| level.value == chosen)
            .ok_or_else(|| refuse(format!("factor `{}` has no level `{chosen}`", factor.name)))?;
        keys.push(format!("{}={chosen}", factor.name));
        boots.extend(level.boot.iter());
    }
    let level_key = if keys.is_empty() {
        "(all)".to_string()
    } else {
        keys.join(",")
    };
    let spec = BootPlan::combine(vm, boots)
        .build
        .ok_or_else(|| refuse(format!("{level_key} boots a kernel verdict did not build")))?;
    let records = stored_records(store, run)?;
    let build = records
        .iter()
        .rev()
        .filter(|record| record.levels.contains(&level_key))
        .find_map(|record| record.build.clone())
        .ok_or_else(|| refuse(format!("run {run} built no kernel for {level_key}")))?;
    let (_, text) = store
        .kernel_config(&build.config_sha256)?
        .ok_or_else(|| refuse(format!("the config {} is not stored", build.config_sha256)))?;
    let tree = builder
        .checkout(&spec, note)
        .map_err(|error| refuse(error.to_string()))?;
    let configs = builder.cache.join("configs");
    let config = configs.join(format!("{}.config", &build.config_sha256[..20]));
    std::fs::create_dir_all(&configs)
        .and_then(|()| std::fs::write(&config, text))
        .map_err(|error| refuse(format!("write {}: {error}", config.display())))?;
    Ok(LevelSource {
        tree,
        config,
        build,
    })
}
