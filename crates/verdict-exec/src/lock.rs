//! An exclusive advisory lock on a file of the controller (`flock`), held
//! as long as the value lives: how two verdict processes building kernels
//! in one cache take turns on a source checkout and its object directory.
//! Must not: lock anything on a target, or time out on its own (the other
//! holder is a build that ends).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// An exclusive `flock` on a file, released when dropped (or when the
/// process dies, however it dies).
#[derive(Debug)]
pub struct FileLock {
    file: File,
    path: PathBuf,
}

impl FileLock {
    /// Opens (creating) `path` and waits until the lock is this process's.
    pub fn exclusive(path: &Path) -> io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        loop {
            // SAFETY: flock takes a file descriptor this value owns and
            // flags; no memory is passed.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(Self {
                    file,
                    path: path.to_path_buf(),
                });
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }

    /// Takes the lock if no one holds it; `None` when another holder does.
    pub fn try_exclusive(path: &Path) -> io::Result<Option<Self>> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        // SAFETY: as in `exclusive`.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(Some(Self {
                file,
                path: path.to_path_buf(),
            }));
        }
        let error = io::Error::last_os_error();
        if error.raw_os_error() == Some(libc::EWOULDBLOCK) {
            Ok(None)
        } else {
            Err(error)
        }
    }

    /// The locked file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // SAFETY: as in `exclusive`; closing the file would release it too.
        unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_waits_until_the_first_lets_go() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("lock");
        let first = FileLock::exclusive(&path).unwrap();
        assert!(FileLock::try_exclusive(&path).unwrap().is_none());
        drop(first);
        let second = FileLock::try_exclusive(&path).unwrap();
        assert_eq!(second.unwrap().path(), path);
    }
}
