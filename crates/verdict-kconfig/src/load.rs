//! Where Kconfig text comes from: the [`SourceFiles`] trait, a directory
//! implementation and an in-memory one for tests, and reading a `.config`
//! file (the only file reading in this crate). Also maps `ARCH`/`uname -m`
//! names to the kernel's `SRCARCH`.

use crate::config::{DotConfig, decode_config_bytes};
use crate::error::KconfigError;
use crate::macros::ProbeRunner;
use crate::parser::{ParseOptions, parse_tree, parse_tree_expanded};
use crate::tree::Kconfig;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Reads Kconfig files by path relative to the tree root. `Ok(None)` means
/// the file does not exist (so `osource` can skip it).
pub trait SourceFiles {
    fn read(&self, path: &str) -> Result<Option<String>, KconfigError>;
}

/// A kernel source directory on disk.
#[derive(Debug, Clone)]
pub struct DirectorySource {
    root: PathBuf,
}

impl DirectorySource {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }
}

impl SourceFiles for DirectorySource {
    fn read(&self, path: &str) -> Result<Option<String>, KconfigError> {
        let full = self.root.join(path);
        match std::fs::read(&full) {
            Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(KconfigError::Read { path: full, source }),
        }
    }
}

/// Files held in memory, keyed by relative path.
#[derive(Debug, Clone, Default)]
pub struct MemoryFiles {
    files: HashMap<String, String>,
}

impl MemoryFiles {
    pub fn new(files: &[(&str, &str)]) -> Self {
        Self {
            files: files
                .iter()
                .map(|(path, text)| (path.to_string(), text.to_string()))
                .collect(),
        }
    }
}

impl SourceFiles for MemoryFiles {
    fn read(&self, path: &str) -> Result<Option<String>, KconfigError> {
        Ok(self.files.get(path).cloned())
    }
}

/// The kernel's `SRCARCH` for an `ARCH` or `uname -m` value, following the
/// top-level Makefile (x86_64 and i386 live in arch/x86, ppc64le in
/// arch/powerpc, ...). Unknown names are returned unchanged.
pub fn srcarch_for_arch(arch: &str) -> String {
    let srcarch = match arch {
        "x86_64" | "i386" | "i686" | "amd64" | "x86" => "x86",
        "ppc" | "ppc64" | "ppc64le" | "powerpc" | "powerpc64" | "powerpc64le" => "powerpc",
        "aarch64" | "arm64" => "arm64",
        "sparc32" | "sparc64" => "sparc",
        "parisc64" => "parisc",
        "riscv64" | "riscv32" => "riscv",
        "loongarch64" => "loongarch",
        "s390x" => "s390",
        "mips64" | "mips64el" | "mipsel" => "mips",
        "sh64" => "sh",
        "armv7l" | "armhf" | "armel" => "arm",
        other => other,
    };
    srcarch.to_string()
}

/// Parses the tree rooted at `kernel_source/Kconfig` for `arch`.
pub fn load_tree(kernel_source: &Path, arch: &str) -> Result<Kconfig, KconfigError> {
    let srcarch = srcarch_for_arch(arch);
    let mut options = ParseOptions::for_srcarch(&srcarch);
    options.arch = arch.to_string();
    // arch/um sources arch/$(HEADER_ARCH)/um/Kconfig; the host side is x86.
    options
        .variables
        .push(("HEADER_ARCH".to_string(), "x86".to_string()));
    parse_tree(&DirectorySource::new(kernel_source), "Kconfig", &options)
}

/// Like [`load_tree`], after checking that `kernel_source` has a
/// top-level Kconfig (so a wrong directory is named as such).
pub fn load_kernel_tree(kernel_source: &Path, arch: &str) -> Result<Kconfig, KconfigError> {
    require_kconfig(kernel_source)?;
    load_tree(kernel_source, arch)
}

/// An error unless `kernel_source` has a top-level Kconfig.
pub fn require_kconfig(kernel_source: &Path) -> Result<(), KconfigError> {
    let kconfig = kernel_source.join("Kconfig");
    if kconfig.is_file() {
        Ok(())
    } else {
        Err(KconfigError::NoKconfig { kconfig })
    }
}

/// The text of the `.config` file at `path` (gzip-compressed or not) and
/// its parsed values (the evaluator reads the text in file order, as the
/// kernel does); an error for a file with no config line.
pub fn read_config(path: &Path) -> Result<(String, DotConfig), KconfigError> {
    let label = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| KconfigError::ReadConfig {
        path: label.clone(),
        source,
    })?;
    let text = decode_config_bytes(&bytes, &label)?;
    let config = DotConfig::parse(&text, &label)?;
    if config.is_empty() {
        return Err(KconfigError::EmptyConfig { path: label });
    }
    Ok((text, config))
}

/// The kernel version of the tree (`6.1.192`), from VERSION, PATCHLEVEL,
/// SUBLEVEL and EXTRAVERSION of its top-level Makefile, as `make` exports
/// it in KERNELVERSION; `None` when the Makefile is missing.
pub fn kernel_version(kernel_source: &Path) -> Option<String> {
    let text = std::fs::read_to_string(kernel_source.join("Makefile")).ok()?;
    let field = |name: &str| {
        text.lines()
            .find_map(|line| {
                let (key, value) = line.split_once('=')?;
                (key.trim() == name).then(|| value.trim().to_string())
            })
            .unwrap_or_default()
    };
    let (version, patchlevel, sublevel) =
        (field("VERSION"), field("PATCHLEVEL"), field("SUBLEVEL"));
    let mut result = version;
    if !patchlevel.is_empty() {
        result.push('.');
        result.push_str(&patchlevel);
        if !sublevel.is_empty() {
            result.push('.');
            result.push_str(&sublevel);
        }
    }
    result.push_str(&field("EXTRAVERSION"));
    Some(result)
}

/// The variables the kernel's top-level Makefile exports to
/// scripts/kconfig/conf for `arch` without CROSS_COMPILE or LLVM (ARCH,
/// SRCARCH, KERNELVERSION, srctree, CC, LD and the other tools). Entries of
/// `overrides` (normally the process environment) win.
pub fn make_environment(
    kernel_source: &Path,
    arch: &str,
    overrides: &HashMap<String, String>,
) -> HashMap<String, String> {
    let mut environment: HashMap<String, String> = HashMap::new();
    let make_arch = match arch {
        "x86_64" | "i386" | "i686" | "amd64" => "x86",
        "aarch64" => "arm64",
        "ppc64" | "ppc64le" | "ppc" | "powerpc64" | "powerpc64le" => "powerpc",
        other => other,
    };
    let cross = overrides.get("CROSS_COMPILE").cloned().unwrap_or_default();
    let mut set = |name: &str, value: String| {
        environment.insert(name.to_string(), value);
    };
    set("ARCH", make_arch.to_string());
    set("SRCARCH", srcarch_for_arch(make_arch));
    set(
        "KERNELVERSION",
        kernel_version(kernel_source).unwrap_or_default(),
    );
    set("srctree", kernel_source.display().to_string());
    set("objtree", ".".to_string());
    set("CROSS_COMPILE", cross.clone());
    for (name, tool) in [
        ("CC", "gcc"),
        ("LD", "ld"),
        ("AR", "ar"),
        ("NM", "nm"),
        ("OBJCOPY", "objcopy"),
        ("OBJDUMP", "objdump"),
        ("READELF", "readelf"),
        ("STRIP", "strip"),
    ] {
        set(name, format!("{cross}{tool}"));
    }
    set("CPP", format!("{cross}gcc -E"));
    for (name, value) in [
        ("HOSTCC", "gcc"),
        ("HOSTCXX", "g++"),
        ("HOSTPKG_CONFIG", "pkg-config"),
        ("CONFIG_SHELL", "sh"),
        ("BASH", "bash"),
        ("PERL", "perl"),
        ("PYTHON3", "python3"),
        ("AWK", "awk"),
        ("LEX", "flex"),
        ("YACC", "bison"),
        ("PAHOLE", "pahole"),
        ("RUSTC", "rustc"),
        ("BINDGEN", "bindgen"),
        ("CARGO", "cargo"),
        ("RUSTFMT", "rustfmt"),
        ("CLIPPY_DRIVER", "clippy-driver"),
        ("RUSTDOC", "rustdoc"),
    ] {
        set(name, value.to_string());
    }
    for (name, value) in overrides {
        environment.insert(name.clone(), value.clone());
    }
    environment
}

/// Parses the tree for evaluation (every macro expanded, see
/// [`crate::parse_tree_expanded`]) with the `environment` of
/// [`make_environment`]. CC_VERSION_TEXT, which `make` computes with the
/// compiler, is asked from `runner` when the environment lacks it.
pub fn load_tree_expanded(
    kernel_source: &Path,
    arch: &str,
    environment: &HashMap<String, String>,
    runner: &dyn ProbeRunner,
) -> Result<Kconfig, KconfigError> {
    let mut environment = environment.clone();
    let make_arch = environment
        .get("ARCH")
        .cloned()
        .unwrap_or_else(|| arch.to_string());
    let srcarch = srcarch_for_arch(&make_arch);
    if !environment.contains_key("CC_VERSION_TEXT") {
        let compiler = environment
            .get("CC")
            .cloned()
            .unwrap_or_else(|| "gcc".to_string());
        let text = runner
            .shell(&format!(
                "LC_ALL=C {compiler} --version 2>/dev/null | head -n 1"
            ))
            .map(|text| text.trim_end_matches('\n').replace('\n', " "))
            .unwrap_or_else(|| format!("{}cc_version_text", crate::macros::PROBE_MARKER));
        environment.insert("CC_VERSION_TEXT".to_string(), text);
    }
    let mut options = ParseOptions::for_srcarch(&srcarch);
    options.arch = make_arch;
    options
        .variables
        .push(("HEADER_ARCH".to_string(), "x86".to_string()));
    parse_tree_expanded(
        &DirectorySource::new(kernel_source),
        "Kconfig",
        &options,
        environment,
        runner,
    )
}

/// Guesses the `ARCH` a config was made for from its arch symbols
/// (`CONFIG_X86_64`, `CONFIG_PPC64`, ...); `None` when none is set.
pub fn guess_arch(config: &crate::config::DotConfig) -> Option<&'static str> {
    const MARKERS: [(&str, &str); 14] = [
        ("X86_64", "x86_64"),
        ("X86_32", "i386"),
        ("PPC64", "ppc64le"),
        ("PPC", "powerpc"),
        ("ARM64", "arm64"),
        ("ARM", "arm"),
        ("RISCV", "riscv"),
        ("S390", "s390"),
        ("MIPS", "mips"),
        ("LOONGARCH", "loongarch"),
        ("SPARC", "sparc"),
        ("PARISC", "parisc"),
        ("M68K", "m68k"),
        ("UML", "um"),
    ];
    MARKERS
        .iter()
        .find(|(symbol, _)| config.get(symbol) == Some("y"))
        .map(|(_, arch)| *arch)
}
