//! The one outside effect of doctor's inspection: reading /proc and /sys.
//!
//! What it does: a small `SystemFiles` trait with the real file system
//! (`RealFiles`) and an in-memory fake (`FixtureFiles`) loaded from a
//! committed fixture directory. A missing file is `Absent`, a permission error
//! is `NotReadable`; neither is ever a panic or an error that stops doctor.
//! Must not: parse contents (that is `parse`), or decide anything.

use serde::Serialize;
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// The outcome of reading one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", tag = "state", content = "detail")]
pub enum FileRead {
    /// The file's bytes.
    Present(Vec<u8>),
    /// The file does not exist (feature not built in, not this platform).
    Absent,
    /// The file exists but could not be read; the reason says why.
    NotReadable(String),
}

impl FileRead {
    /// Classifies the result of a read: not-found is `Absent`, any other
    /// error (permission, I/O) is `NotReadable` with the error text.
    pub fn from_io(result: io::Result<Vec<u8>>) -> Self {
        match result {
            Ok(bytes) => Self::Present(bytes),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Self::Absent,
            // ENOTDIR: a path component is a file, so the file cannot exist.
            Err(error) if error.raw_os_error() == Some(libc::ENOTDIR) => Self::Absent,
            Err(error) if error.kind() == io::ErrorKind::PermissionDenied => {
                Self::NotReadable("permission denied".to_string())
            }
            Err(error) => Self::NotReadable(error.to_string()),
        }
    }

    /// The contents as text (lossy UTF-8), when present.
    pub fn text(&self) -> Option<String> {
        match self {
            Self::Present(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
            _ => None,
        }
    }

    /// The first line, trimmed, when present and non-empty.
    pub fn value(&self) -> Option<String> {
        let text = self.text()?;
        let line = text.lines().next().unwrap_or("").trim();
        (!line.is_empty()).then(|| line.to_string())
    }

    /// True when the file exists (readable or not).
    pub fn exists(&self) -> bool {
        !matches!(self, Self::Absent)
    }

    /// A short word for reports: "present", "absent" or "not readable".
    pub fn state_word(&self) -> &'static str {
        match self {
            Self::Present(_) => "present",
            Self::Absent => "absent",
            Self::NotReadable(_) => "not readable",
        }
    }
}

/// Read access to the machine's /proc and /sys (or a fake of them).
pub trait SystemFiles {
    /// Reads a whole file by absolute path.
    fn read(&self, path: &str) -> FileRead;
    /// Names of the entries of a directory, sorted; empty when the
    /// directory is absent or unreadable.
    fn list(&self, path: &str) -> Vec<String>;
}

/// The real file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFiles;

impl SystemFiles for RealFiles {
    fn read(&self, path: &str) -> FileRead {
        FileRead::from_io(std::fs::read(path))
    }

    fn list(&self, path: &str) -> Vec<String> {
        list_directory(Path::new(path))
    }
}

fn list_directory(path: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(path) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// An in-memory machine: files by absolute path, plus the paths that exist
/// but cannot be read. Loaded from a fixture directory laid out as
/// `DIR/root/<absolute path>` with an optional `DIR/unreadable.txt` listing
/// one unreadable absolute path per line (tests run as root, where file
/// modes cannot produce a permission error).
#[derive(Debug, Clone, Default)]
pub struct FixtureFiles {
    files: BTreeMap<String, Vec<u8>>,
    unreadable: BTreeMap<String, String>,
}

impl FixtureFiles {
    /// An empty machine: every file absent.
    pub fn new() -> Self {
        Self::default()
    }

    /// Loads a fixture directory (see the type's documentation).
    pub fn load(directory: &Path) -> Result<Self, crate::DoctorError> {
        let root = directory.join("root");
        let mut fixture = Self::new();
        let mut pending: Vec<PathBuf> = vec![root.clone()];
        while let Some(current) = pending.pop() {
            let entries =
                std::fs::read_dir(&current).map_err(|source| crate::DoctorError::ReadFixture {
                    path: current.display().to_string(),
                    source,
                })?;
            for entry in entries.filter_map(Result::ok) {
                let path = entry.path();
                if path.is_dir() {
                    pending.push(path);
                } else {
                    let bytes =
                        std::fs::read(&path).map_err(|source| crate::DoctorError::ReadFixture {
                            path: path.display().to_string(),
                            source,
                        })?;
                    let relative = path.strip_prefix(&root).unwrap_or(&path);
                    fixture
                        .files
                        .insert(format!("/{}", relative.display()), bytes);
                }
            }
        }
        let listing = directory.join("unreadable.txt");
        if listing.exists() {
            let text = std::fs::read_to_string(&listing).map_err(|source| {
                crate::DoctorError::ReadFixture {
                    path: listing.display().to_string(),
                    source,
                }
            })?;
            for line in text.lines().map(str::trim).filter(|line| !line.is_empty()) {
                fixture.deny(line);
            }
        }
        Ok(fixture)
    }

    /// Adds (or replaces) a readable file.
    pub fn insert(&mut self, path: &str, contents: impl Into<Vec<u8>>) -> &mut Self {
        self.unreadable.remove(path);
        self.files.insert(path.to_string(), contents.into());
        self
    }

    /// Marks a path as existing but not readable (permission denied).
    pub fn deny(&mut self, path: &str) -> &mut Self {
        self.files.remove(path);
        self.unreadable
            .insert(path.to_string(), "permission denied".to_string());
        self
    }

    /// Removes a path, making it absent.
    pub fn remove(&mut self, path: &str) -> &mut Self {
        self.files.remove(path);
        self.unreadable.remove(path);
        self
    }
}

impl SystemFiles for FixtureFiles {
    fn read(&self, path: &str) -> FileRead {
        if let Some(reason) = self.unreadable.get(path) {
            return FileRead::NotReadable(reason.clone());
        }
        match self.files.get(path) {
            Some(bytes) => FileRead::Present(bytes.clone()),
            None => FileRead::Absent,
        }
    }

    fn list(&self, path: &str) -> Vec<String> {
        let prefix = format!("{}/", path.trim_end_matches('/'));
        let mut names: Vec<String> = self
            .files
            .keys()
            .chain(self.unreadable.keys())
            .filter_map(|key| key.strip_prefix(&prefix))
            .filter_map(|rest| rest.split('/').next())
            .map(str::to_string)
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_are_classified() {
        assert_eq!(
            FileRead::from_io(Err(io::Error::from(io::ErrorKind::NotFound))),
            FileRead::Absent
        );
        assert_eq!(
            FileRead::from_io(Err(io::Error::from(io::ErrorKind::PermissionDenied))),
            FileRead::NotReadable("permission denied".to_string())
        );
        assert!(matches!(
            FileRead::from_io(Err(io::Error::from_raw_os_error(libc::EIO))),
            FileRead::NotReadable(_)
        ));
        assert_eq!(
            FileRead::from_io(Err(io::Error::from_raw_os_error(libc::ENOTDIR))),
            FileRead::Absent
        );
    }

    #[test]
    fn real_files_read_and_miss() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("governor");
        std::fs::write(&path, "performance\n").unwrap();
        let read = RealFiles.read(path.to_str().unwrap());
        assert_eq!(read.value().as_deref(), Some("performance"));
        let missing = directory.path().join("nope");
        assert_eq!(RealFiles.read(missing.to_str().unwrap()), FileRead::Absent);
        assert_eq!(
            RealFiles.list(directory.path().to_str().unwrap()),
            vec!["governor".to_string()]
        );
        assert!(RealFiles.list(missing.to_str().unwrap()).is_empty());
    }

    #[test]
    fn real_directory_read_is_not_readable() {
        // Reading a directory fails with EISDIR: exists, not readable.
        let directory = tempfile::tempdir().unwrap();
        let read = RealFiles.read(directory.path().to_str().unwrap());
        assert!(matches!(read, FileRead::NotReadable(_)), "{read:?}");
    }

    #[test]
    fn fixture_lists_and_denies() {
        let mut files = FixtureFiles::new();
        files
            .insert("/proc/1/stat", "1 (init) S")
            .insert("/proc/22/stat", "22 (x) S")
            .insert("/proc/stat", "cpu 1")
            .deny("/proc/1/environ");
        assert_eq!(files.list("/proc"), vec!["1", "22", "stat"]);
        assert_eq!(files.list("/proc/1"), vec!["environ", "stat"]);
        assert_eq!(
            files.read("/proc/1/environ"),
            FileRead::NotReadable("permission denied".to_string())
        );
        assert_eq!(files.read("/proc/2/stat"), FileRead::Absent);
        assert_eq!(files.read("/proc/1/environ").state_word(), "not readable");
    }
}
