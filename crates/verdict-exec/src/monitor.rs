//! Monitors: the system's counters read on the target just before a
//! command starts and just after it is reaped, so their difference is what
//! the machine did during the command (CPU time by mode, context switches,
//! interrupts, softirqs, vmstat). The files are read where the command runs
//! (by `SystemExecutor` itself, which on a remote target is the agent's), so
//! a remote or VM target costs no extra round trip.
//!
//! Plain data and one reading function; it must not parse the files (the
//! pure parsers in verdict-parse turn two snapshots into deltas) or start
//! processes.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The system counter files a monitored command snapshots by default.
pub const SYSTEM_COUNTER_FILES: [&str; 4] = [
    "/proc/stat",
    "/proc/interrupts",
    "/proc/softirqs",
    "/proc/vmstat",
];

/// Which files to snapshot around a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorRequest {
    pub files: Vec<PathBuf>,
}

impl MonitorRequest {
    /// [`SYSTEM_COUNTER_FILES`].
    pub fn system_counters() -> Self {
        Self {
            files: SYSTEM_COUNTER_FILES.iter().map(PathBuf::from).collect(),
        }
    }
}

/// One file as read at one instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSnapshot {
    pub path: PathBuf,
    /// The file's text (the counter files are ASCII; other bytes are
    /// replaced), or `None` when it could not be read there.
    pub text: Option<String>,
}

/// The requested files before the command started and after it was reaped,
/// in request order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshots {
    /// `sysconf(_SC_CLK_TCK)` where the files were read: the unit of the
    /// CPU times in /proc/stat.
    pub ticks_per_second: u64,
    pub before: Vec<FileSnapshot>,
    pub after: Vec<FileSnapshot>,
}

impl Snapshots {
    /// The text of `path` before and after, when both were read.
    pub fn pair(&self, path: &Path) -> Option<(&str, &str)> {
        fn find<'a>(files: &'a [FileSnapshot], path: &Path) -> Option<&'a str> {
            files
                .iter()
                .find(|file| file.path == path)
                .and_then(|file| file.text.as_deref())
        }
        Some((find(&self.before, path)?, find(&self.after, path)?))
    }
}

/// Reads every requested file on this machine.
pub(crate) fn read_all(request: &MonitorRequest) -> Vec<FileSnapshot> {
    request
        .files
        .iter()
        .map(|path| FileSnapshot {
            path: path.clone(),
            text: read_counter_file(path),
        })
        .collect()
}

/// A counter file's text in as few reads as the kernel allows: /proc files
/// report a size of 0, so `std::fs::read` would start with a 32-byte read
/// and double (nine reads of /proc/interrupts on a 2-CPU machine, each a
/// system call); a 16 KiB buffer takes such a file in one read and the
/// end-of-file read (a larger file still reads whole).
fn read_counter_file(path: &Path) -> Option<String> {
    let mut bytes = Vec::with_capacity(16 * 1024);
    std::fs::File::open(path)
        .ok()?
        .read_to_end(&mut bytes)
        .ok()?;
    Some(
        String::from_utf8(bytes)
            .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned()),
    )
}

/// This machine's clock ticks per second (USER_HZ), 100 when unknown.
pub(crate) fn ticks_per_second() -> u64 {
    // SAFETY: sysconf has no memory arguments.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks)
        .ok()
        .filter(|&ticks| ticks > 0)
        .unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_exists_and_marks_what_does_not() {
        let request = MonitorRequest {
            files: vec![
                PathBuf::from("/proc/stat"),
                PathBuf::from("/proc/nonexistent"),
            ],
        };
        let files = read_all(&request);
        assert!(
            files[0]
                .text
                .as_deref()
                .is_some_and(|text| text.starts_with("cpu "))
        );
        assert_eq!(files[1].text, None);
        let snapshots = Snapshots {
            ticks_per_second: ticks_per_second(),
            before: files.clone(),
            after: files,
        };
        assert!(snapshots.pair(Path::new("/proc/stat")).is_some());
        assert!(snapshots.pair(Path::new("/proc/nonexistent")).is_none());
        assert_eq!(snapshots.ticks_per_second, 100);
    }
}
