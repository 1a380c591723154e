//! Builds the kernels boot levels name (`build = { tree, ref, patches,
//! config, fragments, make, image }`), out of tree (`make O=`) in a cache:
//!
//! - `sources/SHA.git`: a tarball imported once (kernel_source);
//! - `work/REPO/src`, `work/REPO/obj`: one checkout and one object
//!   directory per repository, reused by every build of it, so a build of
//!   a nearby commit or of the same tree with a one-file patch recompiles
//!   what changed (Kbuild's own dependency tracking), not the kernel;
//!   a lock file per repository lets one build at a time use them;
//! - `builds/KEY/`: what a build yields (the image, its `.config`, its
//!   modules directory, the provenance `kernel-build.json`, `build.log`),
//!   KEY the SHA-256 of the source's git tree id, the patches' hashes, the
//!   resolved `.config`'s hash, the make arguments, the image path and the
//!   compiler's version;
//! - `specs/SPEC`: the KEY a build spec gave (SPEC hashes the commit, the
//!   patches, the config recipe and the toolchain's versions), so a rerun
//!   finds the kernel without touching the checkout or running `make` at
//!   all;
//! - `logs/`: the logs of failed builds.
//!
//! A resolved config that lacks what a fragment (or verdict's guest: the
//! `vm-guest` fragment's needed part) asks for fails before `make` runs,
//! naming the options. Every process (git, tar, make, the compiler's
//! `--version`) runs through the controller's [`Target`] as an argv.
//!
//! Must not: boot anything, touch the store (the caller records), or
//! print (notes go to the caller's closure).

use std::path::{Path, PathBuf};
use std::time::Instant;

use verdict_exec::{Cancel, FileLock, Target};
use verdict_kconfig::DotConfig;
use verdict_model::{
    AppliedPatch, BuildFailure, BuildSpec, BuildStep, ConfigBase, Fragment, KernelBuild,
};

use crate::kernel_source::{self, Commands, Source, file_sha256, text_sha256};

/// Why a build did not yield a kernel.
#[derive(Debug, thiserror::Error)]
pub enum KernelBuildError {
    /// A step failed (a recorded failure of the levels that boot it).
    #[error("kernel build failed at its {} step: {}", .failure.step.as_str(), .failure.message)]
    Failed {
        failure: BuildFailure,
        /// The end of the build's output.
        log_tail: Option<String>,
        /// The whole log, kept in the cache's `logs/`.
        log_path: Option<PathBuf>,
    },
    /// Ctrl-C.
    #[error("the kernel build was cancelled")]
    Cancelled,
}

impl KernelBuildError {
    pub(crate) fn failed(step: BuildStep, message: String) -> Self {
        Self::Failed {
            failure: BuildFailure { step, message },
            log_tail: None,
            log_path: None,
        }
    }
}

/// A kernel ready to boot.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltKernel {
    /// The image in the cache.
    pub image: PathBuf,
    /// Its modules directory (`modules.dep`, `modules.builtin`).
    pub modules: PathBuf,
    /// Its resolved `.config`.
    pub config_text: String,
    pub build: KernelBuild,
    /// Found in the cache: nothing was built.
    pub cached: bool,
    /// The build's log.
    pub log_path: PathBuf,
}

/// Builds kernels into a cache directory on the controller.
pub struct KernelBuilder {
    /// Runs git, tar and make (the controller).
    pub executor: Box<dyn Target>,
    /// The cache (`~/.cache/verdict/kernels` by default).
    pub cache: PathBuf,
    pub cancel: Cancel,
    /// `-jN` when the build's `make` names none.
    pub jobs: usize,
    /// Variables of the controller's environment that `make` reads
    /// (`ARCH`, `CROSS_COMPILE`, `KCFLAGS`, ...), part of the spec key.
    pub environment: Vec<(String, String)>,
}

impl std::fmt::Debug for KernelBuilder {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("KernelBuilder")
            .field("cache", &self.cache)
            .field("jobs", &self.jobs)
            .finish_non_exhaustive()
    }
}

/// The variables of the environment a kernel's `make` reads; their values
/// enter the spec key (the caller reads them).
pub const MAKE_ENVIRONMENT: &[&str] = &[
    "ARCH",
    "SUBARCH",
    "CROSS_COMPILE",
    "CC",
    "LD",
    "LLVM",
    "KCFLAGS",
    "KCPPFLAGS",
    "KAFLAGS",
    "KBUILD_BUILD_USER",
    "KBUILD_BUILD_HOST",
    "KBUILD_BUILD_TIMESTAMP",
    "KBUILD_BUILD_VERSION",
    "LOCALVERSION",
];

/// The artifacts of a build in the cache.
struct Artifacts {
    directory: PathBuf,
}

impl Artifacts {
    fn provenance(&self) -> PathBuf {
        self.directory.join("kernel-build.json")
    }

    fn config(&self) -> PathBuf {
        self.directory.join("config")
    }

    fn log(&self) -> PathBuf {
        self.directory.join("build.log")
    }

    fn modules(&self) -> PathBuf {
        let installed = self.directory.join("modules-root/lib/modules");
        match std::fs::read_dir(&installed)
            .ok()
            .and_then(|mut entries| entries.next())
            .and_then(Result::ok)
        {
            Some(release) => release.path(),
            None => self.directory.join("modules"),
        }
    }

    /// The built kernel, when this directory holds a complete build.
    fn load(&self) -> Option<BuiltKernel> {
        let build: KernelBuild =
            serde_json::from_slice(&std::fs::read(self.provenance()).ok()?).ok()?;
        let config_text = std::fs::read_to_string(self.config()).ok()?;
        let image = self.directory.join("image");
        image.is_file().then(|| BuiltKernel {
            image,
            modules: self.modules(),
            config_text,
            build,
            cached: true,
            log_path: self.log(),
        })
    }
}

impl KernelBuilder {
    /// The kernel `spec` describes: from the cache when a build of the
    /// same source, patches, config and toolchain is there, else built.
    pub fn build(
        &self,
        spec: &BuildSpec,
        note: &mut dyn FnMut(&str),
    ) -> Result<BuiltKernel, KernelBuildError> {
        let commands = Commands {
            executor: self.executor.as_ref(),
            cancel: &self.cancel,
        };
        let source = kernel_source::resolve(&commands, spec, &self.cache, note)?;
        let patches = kernel_source::patch_hashes(spec)?;
        let make = self.make_arguments(spec);
        let spec_key = self.spec_key(&commands, spec, &source, &patches, &make)?;
        let specs = self.cache.join("specs");
        if let Some(built) = std::fs::read_to_string(specs.join(&spec_key[..20]))
            .ok()
            .and_then(|key| self.artifacts(key.trim()).load())
        {
            return Ok(built);
        }
        let work = self.work_directory(&source)?;
        let _lock = FileLock::exclusive(&work.with_extension("lock"))
            .map_err(|error| cache_error(&work, error))?;
        // Another process may have built it while this one waited.
        if let Some(built) = std::fs::read_to_string(specs.join(&spec_key[..20]))
            .ok()
            .and_then(|key| self.artifacts(key.trim()).load())
        {
            return Ok(built);
        }
        let src = kernel_source::checkout(&commands, &source, spec, &patches, &work)?;
        let object = work.join("obj");
        std::fs::create_dir_all(&object).map_err(|error| cache_error(&object, error))?;
        let steps = Steps {
            commands: &commands,
            src: &src,
            object: &object,
            make: &make,
        };
        let config_text = steps.configure(spec)?;
        let config = DotConfig::parse(&config_text, ".config")
            .map_err(|error| KernelBuildError::failed(BuildStep::Config, error.to_string()))?;
        check_features(spec, &config)?;
        let compiler = config_string(&config, "CC_VERSION_TEXT").unwrap_or_default();
        let config_sha256 = text_sha256(config_text.as_bytes());
        let key = build_key(&source, &patches, &config_sha256, &make, spec, &compiler);
        if let Some(built) = self.artifacts(&key).load() {
            write_spec(&specs, &spec_key, &key)?;
            return Ok(built);
        }
        note(&format!(
            "building {} at {}{} (make {}) in {}",
            source.label,
            &source.commit[..12],
            if patches.is_empty() {
                String::new()
            } else {
                format!(" + {} patch(es)", patches.len())
            },
            make.join(" "),
            object.display()
        ));
        let started = Instant::now();
        let log = steps.make_kernel(&config, &self.cache)?;
        let staging = self.cache.join("builds").join(format!(
            "{}.staging-{}",
            &key[..20],
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir_all(&staging).map_err(|error| cache_error(&staging, error))?;
        steps.collect(spec, &config, &staging, &log)?;
        let image = kernel_image_version(&staging.join("image"))?;
        let build = KernelBuild {
            source: source.label.clone(),
            commit: source.commit.clone(),
            tree_id: source.tree_id.clone(),
            tarball_sha256: source.tarball_sha256.clone(),
            patches,
            config_recipe: recipe(spec),
            config_sha256,
            compiler,
            make,
            release: image.release,
            version: image.version,
            key: key.clone(),
            built_at_ms: crate::runner::now_ms(),
            build_seconds: started.elapsed().as_secs_f64(),
        };
        let provenance = serde_json::to_vec_pretty(&build).expect("provenance serializes");
        std::fs::write(staging.join("kernel-build.json"), provenance)
            .map_err(|error| cache_error(&staging, error))?;
        let artifacts = self.artifacts(&key);
        let _ = std::fs::remove_dir_all(&artifacts.directory);
        std::fs::rename(&staging, &artifacts.directory)
            .map_err(|error| cache_error(&artifacts.directory, error))?;
        write_spec(&specs, &spec_key, &key)?;
        let mut built = artifacts.load().ok_or_else(|| {
            KernelBuildError::failed(
                BuildStep::Make,
                format!(
                    "the build in {} is incomplete",
                    artifacts.directory.display()
                ),
            )
        })?;
        built.cached = false;
        Ok(built)
    }

    /// The cache's checkout of `spec`'s tree made to hold exactly its
    /// source (the commit, the patches applied), e.g. for `verdict kconfig
    /// why` on a level's own Kconfig files. The next build of the tree may
    /// switch the checkout again.
    pub fn checkout(
        &self,
        spec: &BuildSpec,
        note: &mut dyn FnMut(&str),
    ) -> Result<PathBuf, KernelBuildError> {
        let commands = Commands {
            executor: self.executor.as_ref(),
            cancel: &self.cancel,
        };
        let source = kernel_source::resolve(&commands, spec, &self.cache, note)?;
        let patches = kernel_source::patch_hashes(spec)?;
        let work = self.work_directory(&source)?;
        let _lock = FileLock::exclusive(&work.with_extension("lock"))
            .map_err(|error| cache_error(&work, error))?;
        kernel_source::checkout(&commands, &source, spec, &patches, &work)
    }

    /// `work/REPO`: the checkout and object directory of one repository.
    fn work_directory(&self, source: &Source) -> Result<PathBuf, KernelBuildError> {
        let work = self
            .cache
            .join("work")
            .join(&text_sha256(source.git_dir.as_os_str().as_encoded_bytes())[..20]);
        std::fs::create_dir_all(&work).map_err(|error| cache_error(&work, error))?;
        Ok(work)
    }

    fn artifacts(&self, key: &str) -> Artifacts {
        Artifacts {
            directory: self.cache.join("builds").join(&key[..key.len().min(20)]),
        }
    }

    /// The build's make arguments, with `-jN` when it names none.
    fn make_arguments(&self, spec: &BuildSpec) -> Vec<String> {
        let mut make = spec.make.clone();
        if !make.iter().any(|argument| argument.starts_with("-j")) {
            make.insert(0, format!("-j{}", self.jobs.max(1)));
        }
        make
    }

    /// SHA-256 of everything that decides the resolved config and the
    /// build before either is made: the commit and tree, the patches, the
    /// config recipe with the fragments' texts, the make arguments, the
    /// image, the make-related environment and the toolchain's versions.
    fn spec_key(
        &self,
        commands: &Commands<'_>,
        spec: &BuildSpec,
        source: &Source,
        patches: &[AppliedPatch],
        make: &[String],
    ) -> Result<String, KernelBuildError> {
        let mut parts = vec![
            "verdict kernel spec v1".to_string(),
            source.commit.clone(),
            source.tree_id.clone(),
        ];
        parts.extend(patches.iter().map(|patch| patch.sha256.clone()));
        parts.push(match &spec.config {
            ConfigBase::Target(name) => format!("config target {name}"),
            ConfigBase::File(path) => format!(
                "config file {}",
                file_sha256(path).map_err(|error| {
                    KernelBuildError::failed(
                        BuildStep::Config,
                        format!("read the config {}: {error}", path.display()),
                    )
                })?
            ),
        });
        for fragment in &spec.fragments {
            let text = fragment_text(fragment, None)?;
            parts.push(format!(
                "fragment {} {}",
                fragment.label(),
                text.map_or_else(String::new, |text| text_sha256(text.as_bytes()))
            ));
        }
        parts.extend(make.iter().cloned());
        parts.push(spec.image.display().to_string());
        parts.extend(
            self.environment
                .iter()
                .map(|(name, value)| format!("{name}={value}")),
        );
        for tool in toolchain(make) {
            let version = commands
                .run(BuildStep::Config, &[&tool, "--version"], None, &[], false)
                .ok()
                .map(|outcome| {
                    String::from_utf8_lossy(&outcome.stdout)
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .to_string()
                })
                .unwrap_or_default();
            parts.push(format!("{tool}: {version}"));
        }
        Ok(text_sha256(parts.join("\n").as_bytes()))
    }
}

/// The programs whose versions the resolved config records: the compiler
/// (`CC=` of the make arguments, `clang` with `LLVM=1`, else `gcc`), the
/// linker and pahole.
fn toolchain(make: &[String]) -> Vec<String> {
    let variable = |name: &str| {
        make.iter()
            .find_map(|argument| argument.strip_prefix(&format!("{name}=")))
            .map(str::to_string)
    };
    let llvm = variable("LLVM").is_some_and(|value| !value.is_empty() && value != "0");
    let compiler = variable("CC")
        .and_then(|cc| cc.split_whitespace().last().map(str::to_string))
        .unwrap_or_else(|| if llvm { "clang" } else { "gcc" }.to_string());
    let linker = variable("LD").unwrap_or_else(|| if llvm { "ld.lld" } else { "ld" }.to_string());
    vec![compiler, linker, "pahole".to_string()]
}

/// The key of a build: SHA-256 of the git tree id, the patches' hashes,
/// the resolved config's hash, the make arguments, the image and the
/// compiler.
fn build_key(
    source: &Source,
    patches: &[AppliedPatch],
    config_sha256: &str,
    make: &[String],
    spec: &BuildSpec,
    compiler: &str,
) -> String {
    let mut parts = vec![
        "verdict kernel build v1".to_string(),
        source.tree_id.clone(),
    ];
    parts.extend(patches.iter().map(|patch| patch.sha256.clone()));
    parts.push(config_sha256.to_string());
    parts.extend(make.iter().cloned());
    parts.push(spec.image.display().to_string());
    parts.push(compiler.to_string());
    text_sha256(parts.join("\n").as_bytes())
}

fn write_spec(specs: &Path, spec_key: &str, key: &str) -> Result<(), KernelBuildError> {
    std::fs::create_dir_all(specs).map_err(|error| cache_error(specs, error))?;
    let temporary = specs.join(format!("{}.{}", &spec_key[..20], std::process::id()));
    std::fs::write(&temporary, key).map_err(|error| cache_error(&temporary, error))?;
    std::fs::rename(&temporary, specs.join(&spec_key[..20]))
        .map_err(|error| cache_error(specs, error))
}

fn cache_error(path: &Path, error: std::io::Error) -> KernelBuildError {
    KernelBuildError::failed(
        BuildStep::Source,
        format!("the kernel cache {}: {error}", path.display()),
    )
}

/// How the config was made, as the experiment wrote it.
fn recipe(spec: &BuildSpec) -> Vec<String> {
    std::iter::once(spec.config.label())
        .chain(spec.fragments.iter().map(Fragment::label))
        .collect()
}

/// A fragment's text: verdict's own, a file's, or (with the tree at
/// `src`) a tree fragment's (`kernel/configs/NAME`, then
/// `arch/x86/configs/NAME`); `None` for a tree fragment without `src`.
fn fragment_text(
    fragment: &Fragment,
    src: Option<&Path>,
) -> Result<Option<String>, KernelBuildError> {
    match fragment {
        Fragment::Verdict(name) => verdict_kconfig::fragment(name)
            .map(|text| Some(text.to_string()))
            .ok_or_else(|| {
                KernelBuildError::failed(
                    BuildStep::Config,
                    format!(
                        "`verdict:{name}` is not one of verdict's fragments ({})",
                        verdict_kconfig::fragment_names().join(", ")
                    ),
                )
            }),
        Fragment::File(path) => std::fs::read_to_string(path).map(Some).map_err(|error| {
            KernelBuildError::failed(
                BuildStep::Config,
                format!("read the fragment {}: {error}", path.display()),
            )
        }),
        Fragment::Target(name) => Ok(src.and_then(|src| {
            ["kernel/configs", "arch/x86/configs"]
                .iter()
                .find_map(|directory| std::fs::read_to_string(src.join(directory).join(name)).ok())
        })),
    }
}

/// Refuses a resolved config lacking what a fragment of verdict's or a
/// file fragment asks for, or what verdict's guest needs (tree fragments
/// such as `kvm_guest.config` name options of other architectures and
/// are merged as the kernel's own `make` merges them, without a check).
fn check_features(spec: &BuildSpec, config: &DotConfig) -> Result<(), KernelBuildError> {
    let modules = config.get("MODULES") == Some("y");
    let mut problems = Vec::new();
    for fragment in &spec.fragments {
        if let Some(text) = fragment_text(fragment, None)? {
            let unmet = verdict_kconfig::unmet(&text, config, modules, &fragment.label())
                .map_err(|error| KernelBuildError::failed(BuildStep::Config, error.to_string()))?;
            if !unmet.is_empty() {
                problems.push(format!(
                    "{} asks for {} that the resolved config does not hold: {}",
                    fragment.label(),
                    plural(unmet.len(), "option"),
                    unmet
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
    }
    let unmet = verdict_kconfig::unmet(
        verdict_kconfig::vm_guest_needs(),
        config,
        modules,
        "vm-guest",
    )
    .map_err(|error| KernelBuildError::failed(BuildStep::Config, error.to_string()))?;
    if !unmet.is_empty() {
        problems.push(format!(
            "the kernel would not boot in verdict's VM: it lacks {} (add `fragments = [\"verdict:vm-guest\"]`; `verdict kconfig fragment vm-guest` prints them)",
            unmet.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(KernelBuildError::failed(
            BuildStep::Features,
            problems.join("; "),
        ))
    }
}

fn plural(count: usize, word: &str) -> String {
    if count == 1 {
        format!("1 {word}")
    } else {
        format!("{count} {word}s")
    }
}

/// A string value of a config (`CONFIG_CC_VERSION_TEXT="gcc (Debian …"`).
fn config_string(config: &DotConfig, symbol: &str) -> Option<String> {
    config
        .get(symbol)
        .map(|value| value.trim_matches('"').replace("\\\"", "\""))
}

fn kernel_image_version(image: &Path) -> Result<verdict_exec::ImageVersion, KernelBuildError> {
    verdict_exec::kernel_image_version(image)
        .map_err(|error| KernelBuildError::failed(BuildStep::Make, error.to_string()))
}

/// The make steps in the shared checkout and object directory.
struct Steps<'a> {
    commands: &'a Commands<'a>,
    src: &'a Path,
    object: &'a Path,
    make: &'a [String],
}

impl Steps<'_> {
    /// `make -C SRC O=OBJ ARGUMENTS TARGETS…`; with `check`, a failure is
    /// an error of `step`.
    fn make(
        &self,
        step: BuildStep,
        targets: &[&str],
        check: bool,
    ) -> Result<verdict_exec::Outcome, KernelBuildError> {
        let src = self.src.to_string_lossy();
        let object = format!("O={}", self.object.display());
        let mut argv: Vec<&str> = vec!["make", "-C", &src, &object];
        argv.extend(self.make.iter().map(String::as_str));
        argv.extend_from_slice(targets);
        self.commands.run(step, &argv, None, &[], check)
    }

    /// Writes `obj/.config` from the base and the fragments, then
    /// `olddefconfig`; its text.
    fn configure(&self, spec: &BuildSpec) -> Result<String, KernelBuildError> {
        let config_path = self.object.join(".config");
        let io = |error: std::io::Error| {
            KernelBuildError::failed(
                BuildStep::Config,
                format!("write {}: {error}", config_path.display()),
            )
        };
        match &spec.config {
            ConfigBase::Target(target) => {
                self.make(BuildStep::Config, &[target], true)?;
            }
            ConfigBase::File(path) => {
                std::fs::copy(path, &config_path).map_err(|error| {
                    KernelBuildError::failed(
                        BuildStep::Config,
                        format!("copy the config {}: {error}", path.display()),
                    )
                })?;
                self.make(BuildStep::Config, &["olddefconfig"], true)?;
            }
        }
        let mut pending = false;
        for fragment in &spec.fragments {
            match fragment {
                Fragment::Target(target) => {
                    if pending {
                        self.make(BuildStep::Config, &["olddefconfig"], true)?;
                        pending = false;
                    }
                    self.make(BuildStep::Config, &[target], true)?;
                }
                other => {
                    let text = fragment_text(other, None)?.unwrap_or_default();
                    let mut config = std::fs::read_to_string(&config_path).map_err(io)?;
                    config.push_str(&format!("\n# merged by verdict: {}\n", other.label()));
                    config.push_str(&text);
                    std::fs::write(&config_path, config).map_err(io)?;
                    pending = true;
                }
            }
        }
        if pending {
            self.make(BuildStep::Config, &["olddefconfig"], true)?;
        }
        std::fs::read_to_string(&config_path).map_err(|error| {
            KernelBuildError::failed(
                BuildStep::Config,
                format!("read {}: {error}", config_path.display()),
            )
        })
    }

    /// `make` (the default targets: the image, and the modules when the
    /// config has them); the log's text. A failure keeps the log in the
    /// cache's `logs/` and carries its end.
    fn make_kernel(&self, config: &DotConfig, cache: &Path) -> Result<String, KernelBuildError> {
        let outcome = self.make(BuildStep::Make, &[], false)?;
        let mut log = format!(
            "$ make -C {} O={} {}\n{}",
            self.src.display(),
            self.object.display(),
            self.make.join(" "),
            String::from_utf8_lossy(&outcome.stdout)
        );
        let stderr = String::from_utf8_lossy(&outcome.stderr).into_owned();
        if !stderr.is_empty() {
            log.push_str("\n--- standard error ---\n");
            log.push_str(&stderr);
        }
        let mut failure = (outcome.status != verdict_exec::Status::Exited(0))
            .then(|| (BuildStep::Make, format!("make: {}", outcome.status)));
        if failure.is_none() && config.get("MODULES") == Some("y") {
            let staged = self.object.join("verdict-modules");
            let _ = std::fs::remove_dir_all(&staged);
            let path = format!("INSTALL_MOD_PATH={}", staged.display());
            let install = self.make(BuildStep::Modules, &["modules_install", &path], false)?;
            log.push_str(&format!(
                "\n$ make modules_install {path}\n{}{}",
                String::from_utf8_lossy(&install.stdout),
                String::from_utf8_lossy(&install.stderr)
            ));
            if install.status != verdict_exec::Status::Exited(0) {
                failure = Some((
                    BuildStep::Modules,
                    format!("make modules_install: {}", install.status),
                ));
            }
        }
        match failure {
            None => Ok(log),
            Some((step, message)) => {
                let logs = cache.join("logs");
                let _ = std::fs::create_dir_all(&logs);
                let path = logs.join(format!(
                    "{}-{}.log",
                    crate::runner::now_ms(),
                    std::process::id()
                ));
                let _ = std::fs::write(&path, &log);
                let tail_source = if stderr.trim().is_empty() {
                    log.as_str()
                } else {
                    stderr.as_str()
                };
                Err(KernelBuildError::Failed {
                    failure: BuildFailure { step, message },
                    log_tail: Some(tail(tail_source, 8192)),
                    log_path: Some(path),
                })
            }
        }
    }

    /// Copies what the build made into `staging`: the image, the config,
    /// the modules (installed, or `modules.builtin` and an empty
    /// `modules.dep` for a kernel without modules) and the log.
    fn collect(
        &self,
        spec: &BuildSpec,
        config: &DotConfig,
        staging: &Path,
        log: &str,
    ) -> Result<(), KernelBuildError> {
        let copy = |from: &Path, to: &Path| {
            std::fs::copy(from, to).map(|_| ()).map_err(|error| {
                KernelBuildError::failed(
                    BuildStep::Make,
                    format!("copy {} to {}: {error}", from.display(), to.display()),
                )
            })
        };
        let image = self.object.join(&spec.image);
        if !image.is_file() {
            return Err(KernelBuildError::failed(
                BuildStep::Make,
                format!("make succeeded but left no image at {}", image.display()),
            ));
        }
        copy(&image, &staging.join("image"))?;
        copy(&self.object.join(".config"), &staging.join("config"))?;
        let write = |path: PathBuf, text: &str| {
            std::fs::write(&path, text).map_err(|error| cache_error(&path, error))
        };
        write(staging.join("build.log"), log)?;
        if config.get("MODULES") == Some("y") {
            let installed = self.object.join("verdict-modules");
            std::fs::rename(&installed, staging.join("modules-root"))
                .map_err(|error| cache_error(&installed, error))?;
        } else {
            let modules = staging.join("modules");
            std::fs::create_dir_all(&modules).map_err(|error| cache_error(&modules, error))?;
            let builtin = self.object.join("modules.builtin");
            if builtin.is_file() {
                copy(&builtin, &modules.join("modules.builtin"))?;
            } else {
                write(modules.join("modules.builtin"), "")?;
            }
            write(modules.join("modules.dep"), "")?;
        }
        Ok(())
    }
}

/// The last `bytes` of `text`, from a line start.
fn tail(text: &str, bytes: usize) -> String {
    if text.len() <= bytes {
        return text.to_string();
    }
    let mut start = text.len() - bytes;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let cut = &text[start..];
    cut.split_once('\n')
        .map_or(cut, |(_, rest)| rest)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_toolchain_follows_the_make_arguments() {
        assert_eq!(toolchain(&[]), ["gcc", "ld", "pahole"]);
        assert_eq!(
            toolchain(&["CC=ccache gcc-12".into()]),
            ["gcc-12", "ld", "pahole"]
        );
        assert_eq!(toolchain(&["LLVM=1".into()]), ["clang", "ld.lld", "pahole"]);
    }

    #[test]
    fn a_tail_starts_at_a_line() {
        assert_eq!(tail("a\nb\nc\n", 100), "a\nb\nc\n");
        assert_eq!(tail("aaaa\nbb\ncc\n", 6), "cc\n");
    }

    #[test]
    fn config_strings_lose_their_quotes() {
        let config = DotConfig::from_pairs([("CC_VERSION_TEXT", "\"gcc (Debian 12.2.0) 12.2.0\"")]);
        assert_eq!(
            config_string(&config, "CC_VERSION_TEXT").as_deref(),
            Some("gcc (Debian 12.2.0) 12.2.0")
        );
    }
}
