//! The store's lock file (`<store>/LOCK`): every engine call runs holding it
//! exclusively, so calls from several processes on one store are serialised
//! (the engine catches up with the others' writes at the start of each).

use std::fs::{File, OpenOptions};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

const LOCK_FILE: &str = "LOCK";
/// How long a call waits for another process's call before giving up.
const PATIENCE: Duration = Duration::from_secs(60);

pub struct StoreLock {
    file: File,
}

impl StoreLock {
    /// Opens (creates) the lock file of the store in `dir`.
    pub fn open(dir: &Path) -> Result<StoreLock> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(LOCK_FILE))
            .with_context(|| format!("cannot open the lock file in {}", dir.display()))?;
        Ok(StoreLock { file })
    }

    /// Runs `f` holding the lock; gives up after a minute with a clear error.
    pub fn hold<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    bail!("the store is locked by another process for over 60 s")
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(e).context("cannot lock the store");
                }
            }
        }
        let outcome = f();
        let _ = self.file.unlock();
        outcome
    }
}
