//! The file vocabulary the store needs, kept small so that every host can
//! provide it: std::fs natively (through WASI inside the component), OPFS in
//! the browser, memory in tests. Names are flat: one directory, no paths.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

pub trait Backend {
    /// Names of the files in the directory.
    fn list(&self) -> io::Result<Vec<String>>;
    /// Length of a file, `None` if it does not exist.
    fn len(&self, name: &str) -> io::Result<Option<u64>>;
    /// Reads up to `buf.len()` bytes at `offset`; returns how many were read.
    fn read_at(&self, name: &str, offset: u64, buf: &mut [u8]) -> io::Result<usize>;
    /// Writes at `offset`, creating the file if needed.
    fn write_at(&self, name: &str, offset: u64, data: &[u8]) -> io::Result<()>;
    fn truncate(&self, name: &str, len: u64) -> io::Result<()>;
    /// Makes a file's content durable.
    fn sync(&self, name: &str) -> io::Result<()>;
    /// Makes creations, renames and removals durable (best effort where the
    /// platform has no directory sync).
    fn sync_dir(&self) -> io::Result<()>;
    /// Atomically replaces `to` with `from`.
    fn rename(&self, from: &str, to: &str) -> io::Result<()>;
    fn remove(&self, name: &str) -> io::Result<()>;

    /// Fills as much of `buf` as the file holds from `offset`, however many
    /// short reads the platform needs (WASI hosts cap each read). Returns the
    /// bytes read: fewer than `buf.len()` only at end of file.
    fn read_full_at(&self, name: &str, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.read_at(name, offset + done as u64, &mut buf[done..])? {
                0 => break,
                n => done += n,
            }
        }
        Ok(done)
    }

    /// The whole file.
    fn read_all(&self, name: &str) -> io::Result<Vec<u8>> {
        let len = self
            .len(name)?
            .ok_or_else(|| io::Error::new(ErrorKind::NotFound, name.to_owned()))?;
        let mut buf = vec![0; usize::try_from(len).map_err(io::Error::other)?];
        let done = self.read_full_at(name, 0, &mut buf)?;
        buf.truncate(done);
        Ok(buf)
    }
}

/// A directory of the host's filesystem.
#[derive(Debug, Clone)]
pub struct FsBackend {
    root: PathBuf,
}

impl FsBackend {
    pub fn new(root: impl Into<PathBuf>) -> io::Result<FsBackend> {
        let root = root.into();
        fs::create_dir_all(&root)?;
        Ok(FsBackend { root })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    fn open(&self, name: &str, write: bool) -> io::Result<File> {
        OpenOptions::new()
            .read(true)
            .write(write)
            .create(write)
            .truncate(false)
            .open(self.path(name))
    }
}

impl Backend for FsBackend {
    fn list(&self) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(&self.root)? {
            let entry = entry?;
            if let Some(name) = entry.file_name().to_str() {
                names.push(name.to_owned());
            }
        }
        Ok(names)
    }

    fn len(&self, name: &str) -> io::Result<Option<u64>> {
        match fs::metadata(self.path(name)) {
            Ok(meta) => Ok(Some(meta.len())),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn read_at(&self, name: &str, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = self.open(name, false)?;
        file.seek(SeekFrom::Start(offset))?;
        file.read(buf)
    }

    fn write_at(&self, name: &str, offset: u64, data: &[u8]) -> io::Result<()> {
        use std::io::{Seek, SeekFrom, Write};
        let mut file = self.open(name, true)?;
        file.seek(SeekFrom::Start(offset))?;
        file.write_all(data)
    }

    fn truncate(&self, name: &str, len: u64) -> io::Result<()> {
        self.open(name, true)?.set_len(len)
    }

    fn sync(&self, name: &str) -> io::Result<()> {
        self.open(name, true)?.sync_all()
    }

    fn sync_dir(&self) -> io::Result<()> {
        // Where the platform cannot open or sync a directory (it says
        // "unsupported" or "invalid argument"), rename durability rests on
        // the host's filesystem; any other failure is a real one.
        let cannot =
            |e: &io::Error| matches!(e.kind(), ErrorKind::Unsupported | ErrorKind::InvalidInput);
        match File::open(&self.root).and_then(|dir| dir.sync_all()) {
            Err(e) if cannot(&e) => Ok(()),
            other => other,
        }
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        fs::rename(self.path(from), self.path(to))
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        match fs::remove_file(self.path(name)) {
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
}

/// An in-memory directory that models a power cut: each file has the bytes a
/// process sees and the bytes that survived the last `sync`. Clones share the
/// directory, like two processes on one store.
#[derive(Debug, Clone, Default)]
pub struct MemBackend {
    inner: Arc<Mutex<MemDir>>,
}

#[derive(Debug, Default)]
struct MemDir {
    files: BTreeMap<String, MemFile>,
    /// Writes (write_at, truncate) allowed before power is cut; `None`: no limit.
    writes_left: Option<u64>,
    /// When power is cut mid-write, how many bytes of that write land.
    torn_bytes: usize,
    dead: bool,
    /// Most bytes one `read_at` returns (0: no cap), like a WASI host.
    read_cap: usize,
    /// Every change fails with "read-only file system".
    read_only: bool,
    /// The disk is full: a write that grows a file lands half its bytes,
    /// then fails with "no space left".
    full: bool,
}

#[derive(Debug, Default, Clone)]
struct MemFile {
    data: Vec<u8>,
    durable: Vec<u8>,
}

impl MemBackend {
    pub fn new() -> MemBackend {
        MemBackend::default()
    }

    fn dir(&self) -> MutexGuard<'_, MemDir> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Fault injection, for tests and fuzzing only (`--features simulation`).
#[cfg(any(test, feature = "simulation"))]
impl MemBackend {
    /// Cuts the power after `writes` more writes; the write that hits the
    /// limit lands only its first `torn_bytes` bytes.
    pub fn cut_power_after(&self, writes: u64, torn_bytes: usize) {
        let mut dir = self.dir();
        dir.writes_left = Some(writes);
        dir.torn_bytes = torn_bytes;
    }

    /// Caps every read at `bytes`, as WASI hosts do, to expose code that
    /// takes one short read for the whole file.
    pub fn cap_reads(&self, bytes: usize) {
        self.dir().read_cap = bytes;
    }

    /// Makes the directory read-only (or writable again).
    pub fn set_read_only(&self, read_only: bool) {
        self.dir().read_only = read_only;
    }

    /// Fills the disk (or frees it).
    pub fn set_full(&self, full: bool) {
        self.dir().full = full;
    }

    /// The directory as it is after a reboot: only synced bytes remain.
    pub fn after_power_cut(&self) -> MemBackend {
        let dir = self.dir();
        let files = dir
            .files
            .iter()
            .map(|(name, f)| {
                (
                    name.clone(),
                    MemFile {
                        data: f.durable.clone(),
                        durable: f.durable.clone(),
                    },
                )
            })
            .collect();
        MemBackend {
            inner: Arc::new(Mutex::new(MemDir {
                files,
                ..MemDir::default()
            })),
        }
    }

    /// Every byte of every file, for erasure checks.
    pub fn all_bytes(&self) -> Vec<(String, Vec<u8>)> {
        self.dir()
            .files
            .iter()
            .map(|(n, f)| (n.clone(), f.data.clone()))
            .collect()
    }

    /// Flips one byte of a file (bit rot).
    pub fn corrupt(&self, name: &str, offset: usize) {
        let mut dir = self.dir();
        if let Some(file) = dir.files.get_mut(name) {
            file.data[offset] ^= 0x55;
            file.durable = file.data.clone();
        }
    }
}

fn powered_off() -> io::Error {
    io::Error::other("power cut (simulated)")
}

impl MemDir {
    /// Counts one write against the power budget; `Some(n)`: only n bytes land.
    fn spend_write(&mut self) -> io::Result<Option<usize>> {
        if self.dead {
            return Err(powered_off());
        }
        match &mut self.writes_left {
            Some(0) => {
                self.dead = true;
                Ok(Some(self.torn_bytes))
            }
            Some(n) => {
                *n -= 1;
                Ok(None)
            }
            None => Ok(None),
        }
    }

    fn alive(&self) -> io::Result<()> {
        if self.dead {
            Err(powered_off())
        } else {
            Ok(())
        }
    }

    /// For anything that changes the directory.
    fn writable(&self) -> io::Result<()> {
        self.alive()?;
        if self.read_only {
            return Err(io::Error::new(
                ErrorKind::ReadOnlyFilesystem,
                "read-only file system (simulated)",
            ));
        }
        Ok(())
    }
}

fn disk_full() -> io::Error {
    io::Error::new(
        ErrorKind::StorageFull,
        "no space left on device (simulated)",
    )
}

impl Backend for MemBackend {
    fn list(&self) -> io::Result<Vec<String>> {
        let dir = self.dir();
        dir.alive()?;
        Ok(dir.files.keys().cloned().collect())
    }

    fn len(&self, name: &str) -> io::Result<Option<u64>> {
        let dir = self.dir();
        dir.alive()?;
        Ok(dir.files.get(name).map(|f| f.data.len() as u64))
    }

    fn read_at(&self, name: &str, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let dir = self.dir();
        dir.alive()?;
        let file = dir
            .files
            .get(name)
            .ok_or_else(|| io::Error::new(ErrorKind::NotFound, name.to_owned()))?;
        let start = (offset as usize).min(file.data.len());
        let cap = if dir.read_cap == 0 {
            usize::MAX
        } else {
            dir.read_cap
        };
        let n = buf.len().min(file.data.len() - start).min(cap);
        buf[..n].copy_from_slice(&file.data[start..start + n]);
        Ok(n)
    }

    fn write_at(&self, name: &str, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut dir = self.dir();
        dir.writable()?;
        let len = dir.files.get(name).map_or(0, |f| f.data.len());
        let grows = offset as usize + data.len() > len;
        if dir.full && (grows || !dir.files.contains_key(name)) {
            let room = len.saturating_sub(offset as usize);
            let half = room.max(data.len() / 2).min(data.len());
            let file = dir.files.entry(name.to_owned()).or_default();
            let end = offset as usize + half;
            if file.data.len() < end {
                file.data.resize(end, 0);
            }
            file.data[offset as usize..end].copy_from_slice(&data[..half]);
            return Err(disk_full());
        }
        let torn = dir.spend_write()?;
        let data = &data[..torn.unwrap_or(data.len()).min(data.len())];
        let file = dir.files.entry(name.to_owned()).or_default();
        let end = offset as usize + data.len();
        if file.data.len() < end {
            file.data.resize(end, 0);
        }
        file.data[offset as usize..end].copy_from_slice(data);
        if torn.is_some() {
            // What reached the platter before the lights went out.
            file.durable = file.data.clone();
            return Err(powered_off());
        }
        Ok(())
    }

    fn truncate(&self, name: &str, len: u64) -> io::Result<()> {
        let mut dir = self.dir();
        dir.writable()?;
        if dir.spend_write()?.is_some() {
            return Err(powered_off());
        }
        let file = dir.files.entry(name.to_owned()).or_default();
        file.data.resize(len as usize, 0);
        Ok(())
    }

    fn sync(&self, name: &str) -> io::Result<()> {
        let mut dir = self.dir();
        dir.writable()?;
        if let Some(file) = dir.files.get_mut(name) {
            file.durable = file.data.clone();
        }
        Ok(())
    }

    fn sync_dir(&self) -> io::Result<()> {
        self.dir().alive()
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let mut dir = self.dir();
        dir.writable()?;
        let file = dir
            .files
            .remove(from)
            .ok_or_else(|| io::Error::new(ErrorKind::NotFound, from.to_owned()))?;
        dir.files.insert(to.to_owned(), file);
        Ok(())
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        let mut dir = self.dir();
        dir.writable()?;
        dir.files.remove(name);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exercise(backend: &dyn Backend) {
        backend.write_at("a", 0, b"hello").unwrap();
        backend.write_at("a", 5, b" world").unwrap();
        assert_eq!(backend.len("a").unwrap(), Some(11));
        assert_eq!(backend.read_all("a").unwrap(), b"hello world");
        backend.truncate("a", 5).unwrap();
        backend.sync("a").unwrap();
        backend.rename("a", "b").unwrap();
        assert_eq!(backend.len("a").unwrap(), None);
        assert_eq!(backend.list().unwrap(), vec!["b".to_owned()]);
        let mut buf = [0; 3];
        assert_eq!(backend.read_at("b", 3, &mut buf).unwrap(), 2);
        backend.remove("b").unwrap();
        backend.remove("b").unwrap();
        assert!(backend.list().unwrap().is_empty());
    }

    #[test]
    fn memory_and_files_behave_alike() {
        exercise(&MemBackend::new());
        let dir = std::env::temp_dir().join(format!("hmg-backend-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        exercise(&FsBackend::new(&dir).unwrap());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn power_cut_keeps_only_synced_bytes() {
        let mem = MemBackend::new();
        mem.write_at("log", 0, b"acked").unwrap();
        mem.sync("log").unwrap();
        mem.cut_power_after(1, 2);
        mem.write_at("log", 5, b"-more").unwrap();
        assert!(mem.write_at("log", 10, b"-torn").is_err());
        assert!(mem.list().is_err());
        let rebooted = mem.after_power_cut();
        assert_eq!(rebooted.read_all("log").unwrap(), b"acked-more-t");
    }
}
