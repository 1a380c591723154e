//! The local machine as a [`Target`](crate::Target): the file and clock half
//! of `SystemExecutor` (its `run` is in `system.rs`). Reads files with
//! std::fs and the clock with `SystemTime`; must not start processes.

use std::io;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Reads a whole local file.
pub(crate) fn read_file(path: &Path) -> io::Result<Vec<u8>> {
    std::fs::read(path)
}

/// The sorted entry names of a local directory.
pub(crate) fn list_directory(path: &Path) -> io::Result<Vec<String>> {
    let mut names = std::fs::read_dir(path)?
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect::<Vec<_>>();
    names.sort();
    Ok(names)
}

/// This machine's wall clock in milliseconds since the Unix epoch (0 before
/// it, which only a broken clock reports).
pub(crate) fn now_unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lists_and_tells_the_time() {
        let directory = tempfile::tempdir().unwrap();
        std::fs::write(directory.path().join("b"), b"two").unwrap();
        std::fs::write(directory.path().join("a"), b"one").unwrap();
        assert_eq!(read_file(&directory.path().join("b")).unwrap(), b"two");
        assert_eq!(list_directory(directory.path()).unwrap(), vec!["a", "b"]);
        assert_eq!(
            read_file(&directory.path().join("missing"))
                .unwrap_err()
                .kind(),
            io::ErrorKind::NotFound
        );
        // After 2020-01-01: a clock that reads the epoch is a bug here.
        assert!(now_unix_ms() > 1_577_836_800_000);
    }
}
