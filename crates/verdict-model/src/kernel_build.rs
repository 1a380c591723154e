//! Kernels built from source, as experiment files state them and as runs
//! record them: a boot level's (or `[target] vm`'s) `build = { tree, ref,
//! patches, config, fragments, make, image }` ([`BuildSpec`], validated
//! here), the provenance of a built kernel stored with every boot that
//! booted it ([`KernelBuild`]), and what a run records about each build it
//! needed, built, found in the cache or failed ([`KernelBuildRecord`], the
//! run's `kernel_builds` annotation). Must not start processes, read the
//! tree, the patches or any file (paths are joined, never opened).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The annotation holding a run's [`KernelBuildRecord`]s.
pub const KERNEL_BUILDS_ANNOTATION: &str = "kernel_builds";

/// The kernel image a build boots unless `image` says otherwise (relative
/// to the object directory).
pub const DEFAULT_IMAGE: &str = "arch/x86/boot/bzImage";

/// The prefix naming one of verdict's own config fragments
/// (`verdict:vm-guest`: what verdict's guest needs; `verdict kconfig
/// fragment vm-guest` prints it).
pub const VERDICT_FRAGMENT_PREFIX: &str = "verdict:";

/// `build = { … }`: a kernel verdict builds before it boots it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BuildSpec {
    /// A git repository, or a tarball of a tree (`.tar`, `.tar.xz`,
    /// `.tar.gz`, `.tar.bz2`, `.tgz`) that verdict imports once into a git
    /// repository of its cache. `None` only in `[target] vm`'s build of a
    /// bisection, which builds its `--repo` at each commit.
    pub tree: Option<PathBuf>,
    /// The revision of a git tree (`HEAD` when absent); a tarball has none.
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    /// Applied in order with `git apply` on a clean checkout of `ref`.
    pub patches: Vec<PathBuf>,
    /// The base config: a `make` target or a file.
    pub config: ConfigBase,
    /// Merged into the base config in order, then `make olddefconfig`;
    /// each fragment's assignments must hold in the resolved `.config`.
    pub fragments: Vec<Fragment>,
    /// Arguments of every `make` (`-jN`, `NAME=VALUE`); `-j` with the
    /// number of CPUs is added when none is given.
    pub make: Vec<String>,
    /// The image to boot, relative to the object directory.
    pub image: PathBuf,
}

/// Where a build's config starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ConfigBase {
    /// A `make` target writing a whole config (`tinyconfig`, `defconfig`,
    /// `x86_64_defconfig`): a value without `/`.
    Target(String),
    /// A config file (a value with `/`), then `make olddefconfig`.
    File(PathBuf),
}

/// A config fragment merged into the base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Fragment {
    /// A fragment of the tree, merged by its own `make` target
    /// (`kvm_guest.config`): a value without `/` ending in `.config`.
    Target(String),
    /// One of verdict's fragments (`verdict:vm-guest`), by name.
    Verdict(String),
    /// A file (a value with `/`).
    File(PathBuf),
}

impl Fragment {
    /// As the experiment file writes it.
    pub fn label(&self) -> String {
        match self {
            Fragment::Target(name) => name.clone(),
            Fragment::Verdict(name) => format!("{VERDICT_FRAGMENT_PREFIX}{name}"),
            Fragment::File(path) => path.display().to_string(),
        }
    }
}

impl ConfigBase {
    /// As the experiment file writes it.
    pub fn label(&self) -> String {
        match self {
            ConfigBase::Target(name) => name.clone(),
            ConfigBase::File(path) => path.display().to_string(),
        }
    }
}

impl BuildSpec {
    /// Relative paths (tree, patches, config and fragment files) joined to
    /// `base`, the directory of the experiment file that names them.
    pub fn resolve_paths(&mut self, base: &Path) {
        let join = |path: &mut PathBuf| {
            if path.is_relative() {
                *path = base.join(&*path);
            }
        };
        if let Some(tree) = &mut self.tree {
            join(tree);
        }
        self.patches.iter_mut().for_each(join);
        if let ConfigBase::File(path) = &mut self.config {
            join(path);
        }
        for fragment in &mut self.fragments {
            if let Fragment::File(path) = fragment {
                join(path);
            }
        }
    }

    /// Whether `tree` names a tarball rather than a git repository.
    pub fn tree_is_tarball(tree: &Path) -> bool {
        let name = tree.to_string_lossy();
        [
            ".tar", ".tar.xz", ".tar.gz", ".tar.bz2", ".tar.zst", ".tgz", ".txz",
        ]
        .iter()
        .any(|suffix| name.ends_with(suffix))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBuild {
    tree: Option<PathBuf>,
    #[serde(rename = "ref")]
    git_ref: Option<String>,
    #[serde(default)]
    patches: Vec<PathBuf>,
    config: Option<String>,
    #[serde(default)]
    fragments: Vec<String>,
    #[serde(default)]
    make: Vec<String>,
    image: Option<PathBuf>,
}

/// Validates a `build` table (`key` names it in errors: `boot.build`,
/// `vm.build`); `tree_required` unless a bisection supplies the tree.
pub(crate) fn build_from(
    value: toml::Value,
    key: &str,
    tree_required: bool,
) -> Result<BuildSpec, String> {
    let raw: RawBuild = value.try_into().map_err(|error: toml::de::Error| {
        format!(
            "`{key}`: {}; expected {{ tree = \"…\", ref = \"…\", patches = [\"…\"], config = \"tinyconfig\", fragments = [\"…\"], make = [\"-j2\"], image = \"{DEFAULT_IMAGE}\" }}",
            error.message().trim()
        )
    })?;
    let tree = match raw.tree {
        Some(tree) if tree.as_os_str().is_empty() => {
            return Err(format!(
                "`{key}.tree` is empty; expected a git repository or a tarball"
            ));
        }
        Some(tree) => Some(tree),
        None if tree_required => {
            return Err(format!(
                "`{key}` has no `tree`: name the git repository (or a tarball such as /usr/src/linux-source-6.1.tar.xz) to build"
            ));
        }
        None => None,
    };
    if let Some(git_ref) = &raw.git_ref {
        if git_ref.is_empty()
            || git_ref.starts_with('-')
            || git_ref.chars().any(char::is_whitespace)
        {
            return Err(format!(
                "`{key}.ref` = {git_ref:?}; expected a git revision (a branch, tag or commit)"
            ));
        }
        if tree.as_deref().is_some_and(BuildSpec::tree_is_tarball) {
            return Err(format!(
                "`{key}.ref`: the tree is a tarball, which has one revision; remove `ref`"
            ));
        }
    }
    for patch in &raw.patches {
        if patch.as_os_str().is_empty() {
            return Err(format!("`{key}.patches` has an empty path"));
        }
    }
    let config = match raw.config.as_deref() {
        None => {
            return Err(format!(
                "`{key}` has no `config`: a make target (\"tinyconfig\", \"defconfig\") or a config file (\"./my.config\")"
            ));
        }
        Some("") => return Err(format!("`{key}.config` is empty")),
        Some(text) if text.contains('/') => ConfigBase::File(PathBuf::from(text)),
        Some(text) if is_make_word(text) => ConfigBase::Target(text.to_string()),
        Some(text) => {
            return Err(format!(
                "`{key}.config` = {text:?}; expected a make target such as \"tinyconfig\" or a file path containing `/` (\"./my.config\")"
            ));
        }
    };
    let fragments = raw
        .fragments
        .iter()
        .map(|text| fragment_from(text, key))
        .collect::<Result<Vec<_>, _>>()?;
    for argument in &raw.make {
        check_make_argument(argument, key)?;
    }
    let image = raw.image.unwrap_or_else(|| PathBuf::from(DEFAULT_IMAGE));
    if image.is_absolute()
        || image.as_os_str().is_empty()
        || image
            .components()
            .any(|part| part == std::path::Component::ParentDir)
    {
        return Err(format!(
            "`{key}.image` = {}; expected a path inside the object directory such as \"{DEFAULT_IMAGE}\"",
            image.display()
        ));
    }
    Ok(BuildSpec {
        tree,
        git_ref: raw.git_ref,
        patches: raw.patches,
        config,
        fragments,
        make: raw.make,
        image,
    })
}

fn is_make_word(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with('-')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

fn fragment_from(text: &str, key: &str) -> Result<Fragment, String> {
    if let Some(name) = text.strip_prefix(VERDICT_FRAGMENT_PREFIX) {
        return if is_make_word(name) {
            Ok(Fragment::Verdict(name.to_string()))
        } else {
            Err(format!(
                "`{key}.fragments`: {text:?} names no fragment of verdict's (e.g. \"verdict:vm-guest\")"
            ))
        };
    }
    if text.contains('/') {
        return Ok(Fragment::File(PathBuf::from(text)));
    }
    if is_make_word(text) && text.ends_with(".config") {
        return Ok(Fragment::Target(text.to_string()));
    }
    Err(format!(
        "`{key}.fragments`: {text:?} is neither a fragment of the tree (\"kvm_guest.config\"), one of verdict's (\"verdict:vm-guest\") nor a file path containing `/` (\"./extra.config\")"
    ))
}

/// `-jN` (or `-j`, `-k`, `-s`) or `NAME=VALUE`: what may follow `make`
/// besides the object directory and the target verdict gives.
fn check_make_argument(argument: &str, key: &str) -> Result<(), String> {
    let jobs = argument
        .strip_prefix("-j")
        .is_some_and(|count| count.chars().all(|c| c.is_ascii_digit()));
    let flag = matches!(argument, "-k" | "-s" | "--keep-going" | "--silent");
    let variable = argument.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    if !(jobs || flag || variable) {
        return Err(format!(
            "`{key}.make`: {argument:?} is not a make variable (NAME=VALUE) or -jN; verdict gives the object directory and the targets itself"
        ));
    }
    if let Some((name, _)) = argument.split_once('=')
        && ["O", "KBUILD_OUTPUT", "INSTALL_MOD_PATH"].contains(&name)
    {
        return Err(format!(
            "`{key}.make`: {name} is verdict's to set (it builds out of tree in its cache)"
        ));
    }
    Ok(())
}

/// A patch a build applied, by the name the experiment gave and the
/// SHA-256 of its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AppliedPatch {
    pub name: String,
    pub sha256: String,
}

/// What a kernel built from source is: stored with every boot that booted
/// it (the boot's environment) and in the cache beside the image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct KernelBuild {
    /// The tree as the experiment named it (a repository or a tarball).
    pub source: String,
    /// The commit built (for a tarball, the commit of its import).
    pub commit: String,
    /// The git tree id of that commit: the source's content hash.
    pub tree_id: String,
    /// The SHA-256 of the tarball a tree was imported from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tarball_sha256: Option<String>,
    pub patches: Vec<AppliedPatch>,
    /// How the config was made: the base, then the fragments, as written.
    pub config_recipe: Vec<String>,
    /// SHA-256 of the resolved `.config` (stored in the database under it).
    pub config_sha256: String,
    /// The compiler's `--version`, first line (the kernel's
    /// `CONFIG_CC_VERSION_TEXT`).
    pub compiler: String,
    /// Every argument of the build's `make`, after `make -C TREE O=OBJ`.
    pub make: Vec<String>,
    /// The release the image names (what `uname -r` shows).
    pub release: String,
    /// The version the image names (what `uname -v` shows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The cache key (SHA-256 of the tree id, the patches, the config,
    /// the make arguments, the image path and the compiler).
    pub key: String,
    /// When the build finished (Unix ms).
    pub built_at_ms: i64,
    /// How long its `make` took.
    pub build_seconds: f64,
}

impl KernelBuild {
    /// One line: `commit 1a2b3c4d5e6f + 1 patch (name 0123abcd)`.
    pub fn summary(&self) -> String {
        let commit = &self.commit[..self.commit.len().min(12)];
        let mut line = format!("commit {commit}");
        if !self.patches.is_empty() {
            let patches: Vec<String> = self
                .patches
                .iter()
                .map(|patch| {
                    format!(
                        "{} {}",
                        patch.name,
                        &patch.sha256[..patch.sha256.len().min(12)]
                    )
                })
                .collect();
            line.push_str(&format!(
                " + {} patch{} ({})",
                self.patches.len(),
                if self.patches.len() == 1 { "" } else { "es" },
                patches.join(", ")
            ));
        }
        line
    }

    /// The build as every machine's provenance names one: the commit, the
    /// `make` command, the compiler, the patches (name and SHA-256) and
    /// the config's hash.
    pub fn provenance(&self) -> crate::provenance::BuildProvenance {
        crate::provenance::BuildProvenance {
            commit: Some(self.commit.clone()),
            command: Some(format!("make {}", self.make.join(" "))),
            compiler: Some(self.compiler.clone()),
            patches: self
                .patches
                .iter()
                .map(|patch| format!("{} {}", patch.name, patch.sha256))
                .collect(),
            config_sha256: Some(self.config_sha256.clone()),
        }
    }
}

/// How a run's build of one kernel ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum KernelBuildStatus {
    /// Built by this run.
    Built,
    /// Found in the cache: nothing was built.
    Cached,
    /// Did not yield a kernel: the levels that boot it were not measured.
    Failed,
}

impl KernelBuildStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Built => "built",
            Self::Cached => "cached",
            Self::Failed => "failed",
        }
    }
}

/// The step a build failed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum BuildStep {
    /// The tree, its revision or a tarball's import.
    Source,
    /// A patch did not apply.
    Patch,
    /// Making the config (the base, a fragment, olddefconfig).
    Config,
    /// The resolved config lacks what a fragment asks for (such as a
    /// feature verdict's guest needs).
    Features,
    /// `make` of the kernel failed, or left no image.
    Make,
    /// Installing the modules failed.
    Modules,
}

impl BuildStep {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Source => "source",
            Self::Patch => "patch",
            Self::Config => "config",
            Self::Features => "features",
            Self::Make => "make",
            Self::Modules => "modules",
        }
    }
}

/// Why a build did not yield a kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BuildFailure {
    pub step: BuildStep,
    pub message: String,
}

impl std::fmt::Display for BuildFailure {
    /// `patch failed: ...`.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{} failed: {}", self.step.as_str(), self.message)
    }
}

/// What a run recorded about one kernel it needed (the `kernel_builds`
/// annotation holds a list of these, in the order they were built).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct KernelBuildRecord {
    /// The boot levels that boot this kernel (`patch=with`), `(all)`
    /// without boot factors.
    pub levels: Vec<String>,
    pub status: KernelBuildStatus,
    /// The built kernel (absent when the build failed).
    pub build: Option<KernelBuild>,
    pub failure: Option<BuildFailure>,
    /// The end of the build's output (its errors, for a failure).
    pub log_tail: Option<String>,
    /// The whole log on the controller.
    pub log_path: Option<String>,
    /// How long this run spent on it (checks, config and make).
    pub seconds: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(text: &str) -> Result<BuildSpec, String> {
        build_from(toml::from_str(text).unwrap(), "boot.build", true)
    }

    #[test]
    fn a_build_table_names_its_parts_and_defaults_the_rest() {
        let spec = build(
            "tree = \"/usr/src/linux-source-6.1.tar.xz\"\npatches = [\"rcu.patch\"]\nconfig = \"tinyconfig\"\nfragments = [\"kvm_guest.config\", \"verdict:vm-guest\", \"./extra.config\"]\nmake = [\"-j2\", \"CC=ccache gcc\"]\n",
        )
        .unwrap();
        assert_eq!(spec.config, ConfigBase::Target("tinyconfig".into()));
        assert_eq!(
            spec.fragments,
            [
                Fragment::Target("kvm_guest.config".into()),
                Fragment::Verdict("vm-guest".into()),
                Fragment::File("./extra.config".into()),
            ]
        );
        assert_eq!(spec.image, PathBuf::from(DEFAULT_IMAGE));
        assert!(BuildSpec::tree_is_tarball(spec.tree.as_deref().unwrap()));
        let mut resolved = spec.clone();
        resolved.tree = Some("linux".into());
        resolved.resolve_paths(Path::new("/e"));
        assert_eq!(resolved.tree, Some(PathBuf::from("/e/linux")));
        assert_eq!(resolved.patches, [PathBuf::from("/e/rcu.patch")]);
        assert_eq!(
            resolved.fragments[2],
            Fragment::File("/e/./extra.config".into())
        );
        let file =
            build("tree = \"linux\"\nref = \"v6.1\"\nconfig = \"configs/base.config\"\n").unwrap();
        assert_eq!(file.config, ConfigBase::File("configs/base.config".into()));
        assert_eq!(file.git_ref.as_deref(), Some("v6.1"));
    }

    #[test]
    fn build_mistakes_name_their_key() {
        let error = |text: &str| build(text).unwrap_err();
        assert!(error("config = \"tinyconfig\"").contains("no `tree`"));
        assert!(
            build_from(
                toml::from_str("config = \"tinyconfig\"").unwrap(),
                "vm.build",
                false
            )
            .is_ok()
        );
        assert!(error("tree = \"l\"").contains("no `config`"));
        assert!(error("tree = \"l\"\nconfig = \"tiny config\"").contains("boot.build.config"));
        assert!(
            error("tree = \"l.tar.xz\"\nref = \"v1\"\nconfig = \"tinyconfig\"").contains("tarball")
        );
        assert!(error("tree = \"l\"\nref = \"-x\"\nconfig = \"tinyconfig\"").contains("ref"));
        assert!(
            error("tree = \"l\"\nconfig = \"tinyconfig\"\nfragments = [\"vm\"]")
                .contains("fragments")
        );
        assert!(
            error("tree = \"l\"\nconfig = \"tinyconfig\"\nfragments = [\"verdict:a b\"]")
                .contains("verdict:")
        );
        assert!(
            error("tree = \"l\"\nconfig = \"tinyconfig\"\nmake = [\"bzImage\"]")
                .contains("make variable")
        );
        assert!(
            error("tree = \"l\"\nconfig = \"tinyconfig\"\nmake = [\"O=/tmp\"]")
                .contains("verdict's")
        );
        assert!(
            error("tree = \"l\"\nconfig = \"tinyconfig\"\nimage = \"/boot/vmlinuz\"")
                .contains("image")
        );
        assert!(error("tree = \"l\"\nconfig = \"tinyconfig\"\nbranch = \"x\"").contains("branch"));
    }

    #[test]
    fn a_build_reads_as_one_line() {
        let build = KernelBuild {
            source: "/usr/src/linux-source-6.1.tar.xz".into(),
            commit: "0123456789abcdef0123".into(),
            tree_id: "t".into(),
            tarball_sha256: None,
            patches: vec![AppliedPatch {
                name: "rcu.patch".into(),
                sha256: "abcdef0123456789abcdef".into(),
            }],
            config_recipe: vec!["tinyconfig".into()],
            config_sha256: "c".into(),
            compiler: "gcc 12".into(),
            make: vec!["-j2".into()],
            release: "6.1.192".into(),
            version: None,
            key: "k".into(),
            built_at_ms: 0,
            build_seconds: 1.0,
        };
        assert_eq!(
            build.summary(),
            "commit 0123456789ab + 1 patch (rcu.patch abcdef012345)"
        );
    }
}
