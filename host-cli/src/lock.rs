//! The store lock: every engine call runs holding an exclusive `flock` on
//! the store directory itself, so calls from several processes on one store
//! are serialised (the engine catches up with the others' writes at the
//! start of each).
//!
//! The directory, not a file in it: a lock file can be unlinked while a
//! writer holds it, and the next writer would lock a new file of the same
//! name — two writers at once. A directory cannot be unlinked while the
//! store's files are in it. After taking the lock the path is checked to
//! still name the locked directory (it could have been renamed away and
//! replaced); if not, the lock is dropped and taken again on what the path
//! names now. Locking needs only read access, so a read-only store can be
//! read.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// How long a call waits for another process's call before giving up.
pub const DEFAULT_PATIENCE: Duration = Duration::from_secs(60);

pub struct StoreLock {
    dir: PathBuf,
    file: File,
    patience: Duration,
}

impl StoreLock {
    /// Opens the store directory `dir` for locking.
    pub fn open(dir: &Path) -> Result<StoreLock> {
        Ok(StoreLock {
            dir: dir.to_owned(),
            file: open_dir(dir)?,
            patience: DEFAULT_PATIENCE,
        })
    }

    /// How long [`hold`](Self::hold) waits for another process.
    pub fn set_patience(&mut self, patience: Duration) {
        self.patience = patience;
    }

    /// Runs `f` holding the lock; gives up after the patience with a clear
    /// error.
    pub fn hold<T>(&mut self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let deadline = Instant::now() + self.patience;
        loop {
            match self.file.try_lock() {
                Ok(()) if self.still_the_store()? => break,
                Ok(()) => {
                    // The path names another directory now: lock that one.
                    let _ = self.file.unlock();
                    self.file = open_dir(&self.dir)?;
                }
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(std::fs::TryLockError::WouldBlock) => bail!(
                    "the store is locked by another process for over {} ms",
                    self.patience.as_millis()
                ),
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(e).context("cannot lock the store");
                }
            }
        }
        let outcome = f();
        let _ = self.file.unlock();
        outcome
    }

    /// Bytes an unprivileged writer may still use on the store's file
    /// system (`None` where the platform cannot say).
    #[cfg(unix)]
    pub fn free_space(&self) -> Option<u64> {
        let stat = rustix::fs::fstatvfs(&self.file).ok()?;
        Some(stat.f_bavail.saturating_mul(stat.f_frsize))
    }

    #[cfg(not(unix))]
    pub fn free_space(&self) -> Option<u64> {
        None
    }

    /// Whether the locked directory is still the one at the path.
    #[cfg(unix)]
    fn still_the_store(&self) -> Result<bool> {
        use std::os::unix::fs::MetadataExt;
        let held = self.file.metadata().context("cannot inspect the store")?;
        Ok(match std::fs::metadata(&self.dir) {
            Ok(now) => now.dev() == held.dev() && now.ino() == held.ino(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                bail!("the store directory {} was removed", self.dir.display())
            }
            Err(e) => return Err(e).context("cannot inspect the store"),
        })
    }

    #[cfg(not(unix))]
    fn still_the_store(&self) -> Result<bool> {
        Ok(true)
    }
}

fn open_dir(dir: &Path) -> Result<File> {
    File::open(dir).with_context(|| format!("cannot open the store directory {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_waits_and_gives_up_with_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = StoreLock::open(dir.path()).unwrap();
        let mut second = StoreLock::open(dir.path()).unwrap();
        second.set_patience(Duration::from_millis(50));
        let err = first
            .hold(|| second.hold(|| Ok(())).map_err(|e| anyhow::anyhow!("{e}")))
            .unwrap_err();
        assert!(
            err.to_string().contains("locked by another process"),
            "{err}"
        );
        // Released after the call.
        second.hold(|| Ok(())).unwrap();
    }

    #[test]
    fn a_replaced_directory_is_locked_anew() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("store");
        std::fs::create_dir(&dir).unwrap();
        let mut lock = StoreLock::open(&dir).unwrap();
        std::fs::rename(&dir, parent.path().join("old")).unwrap();
        std::fs::create_dir(&dir).unwrap();
        let mut other = StoreLock::open(&dir).unwrap();
        other.set_patience(Duration::from_millis(50));
        // `lock` notices its directory is gone from the path and takes the
        // new one, so `other` cannot hold it at the same time.
        lock.hold(|| {
            assert!(other.hold(|| Ok(())).is_err());
            Ok(())
        })
        .unwrap();
    }

    #[test]
    fn a_read_only_directory_can_be_locked() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
        let mut lock = StoreLock::open(dir.path()).unwrap();
        lock.hold(|| Ok(())).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}
