//! Where Kconfig text comes from: the [`SourceFiles`] trait, a directory
//! implementation (the only file reading in this crate) and an in-memory one
//! for tests. Also maps `ARCH`/`uname -m` names to the kernel's `SRCARCH`.

use crate::error::KconfigError;
use crate::parser::{ParseOptions, parse_tree};
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
