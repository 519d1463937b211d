//! Durable storage: an append-only log of checksummed transactions plus
//! snapshots, over a [`Backend`]. The byte layout and the recovery rules are
//! specified in docs/format.md.
//!
//! Files of generation `g`: `snap-g.hmg` (the state when the generation
//! began; absent for generation 0) and `log-g.hmg` (transactions since).
//! A compaction writes generation `g+1` and removes generation `g` — that is
//! also how destroyed content leaves every file of the store.

pub mod backend;
pub mod frame;

use crate::atom::AtomId;
use crate::error::{Error, Result};
use crate::state::{State, Txn};
use backend::Backend;
use frame::{HEADER_LEN, LOG_MAGIC, Next, SNAP_MAGIC};

/// What opening found and repaired.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Recovery {
    /// Bytes of a torn or corrupt log tail that were cut off.
    pub dropped_tail_bytes: u64,
    /// Files of older generations or interrupted compactions that were removed.
    pub removed_files: Vec<String>,
}

/// What [`Log::catch_up`] found.
#[derive(Debug, Default)]
pub struct CatchUp {
    /// The generation changed: everything was read again.
    pub reloaded: bool,
    /// Atoms written by others since the last call (when not reloaded).
    pub touched: Vec<AtomId>,
    pub recovery: Recovery,
}

pub struct Log<B: Backend> {
    backend: B,
    generation: u64,
    /// Offset just after the last transaction this process has applied.
    log_end: u64,
    compact_after: u64,
}

fn log_name(generation: u64) -> String {
    format!("log-{generation:016x}.hmg")
}

fn snap_name(generation: u64) -> String {
    format!("snap-{generation:016x}.hmg")
}

/// `(prefix, generation)` of a store file name.
fn parse_name(name: &str) -> Option<(&str, u64)> {
    let (prefix, rest) = name.split_once('-')?;
    let hex = rest.strip_suffix(".hmg")?;
    if hex.len() != 16 || !matches!(prefix, "log" | "snap") {
        return None;
    }
    Some((prefix, u64::from_str_radix(hex, 16).ok()?))
}

fn decode<T: serde::de::DeserializeOwned>(payload: &[u8], what: &str) -> Result<T> {
    postcard::from_bytes(payload).map_err(|e| {
        Error::Corrupt(format!(
            "{what} passed its checksum but does not decode: {e}"
        ))
    })
}

fn encode<T: serde::Serialize>(value: &T) -> Result<Vec<u8>> {
    postcard::to_stdvec(value).map_err(|e| Error::Internal(format!("cannot encode record: {e}")))
}

impl<B: Backend> Log<B> {
    /// Opens (or creates) the store and recovers it: picks the newest
    /// snapshot, replays its log, cuts a torn tail, removes stale files.
    pub fn open(backend: B, compact_after: u64) -> Result<(Log<B>, State, Recovery)> {
        let mut log = Log {
            backend,
            generation: 0,
            log_end: HEADER_LEN,
            compact_after,
        };
        let mut recovery = Recovery::default();
        let state = log.load(&mut recovery)?;
        Ok((log, state, recovery))
    }

    pub fn backend(&self) -> &B {
        &self.backend
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Log bytes after the header.
    pub fn log_bytes(&self) -> u64 {
        self.log_end - HEADER_LEN
    }

    fn latest_generation(&self, names: &[String]) -> u64 {
        names
            .iter()
            .filter_map(|n| parse_name(n))
            .filter(|(p, _)| *p == "snap")
            .map(|(_, g)| g)
            .max()
            .unwrap_or(0)
    }

    fn load(&mut self, recovery: &mut Recovery) -> Result<State> {
        let names = self.backend.list()?;
        let generation = self.latest_generation(&names);
        let mut state = if generation == 0 {
            State::default()
        } else {
            self.read_snapshot(generation)?
        };
        self.generation = generation;
        self.log_end = HEADER_LEN;
        let log = log_name(generation);
        if self.backend.len(&log)?.is_none() {
            self.backend
                .write_at(&log, 0, &frame::header(LOG_MAGIC, generation))?;
            self.backend.sync(&log)?;
            self.backend.sync_dir()?;
        }
        recovery.dropped_tail_bytes += self.replay(&mut state, &mut Vec::new())?;
        for name in names {
            let stale =
                name.ends_with(".tmp") || parse_name(&name).is_some_and(|(_, g)| g != generation);
            if stale {
                self.backend.remove(&name)?;
                recovery.removed_files.push(name);
            }
        }
        if !recovery.removed_files.is_empty() {
            self.backend.sync_dir()?;
        }
        Ok(state)
    }

    fn read_snapshot(&self, generation: u64) -> Result<State> {
        let bytes = self.backend.read_all(&snap_name(generation))?;
        let found = frame::parse_header(SNAP_MAGIC, &bytes)?;
        if found != generation {
            return Err(Error::Corrupt(format!(
                "snapshot {generation} claims generation {found}"
            )));
        }
        let bad = || Error::Corrupt(format!("snapshot {generation} fails its checksum"));
        let Next::Frame(payload, after) = frame::next(&bytes, HEADER_LEN as usize) else {
            return Err(bad());
        };
        let mut state: State = decode(payload, "snapshot")?;
        // Version 2 added the vectors frame, version 3 the supplied triples.
        let mut at = after;
        for part in ["vectors", "supplied triples"] {
            match frame::next(&bytes, at) {
                Next::Frame(payload, next) => {
                    match part {
                        "vectors" => state.vectors = decode(payload, "snapshot vectors")?,
                        _ => state.supplied = decode(payload, "snapshot triples")?,
                    }
                    at = next;
                }
                Next::End => break,
                Next::Bad => return Err(bad()),
            }
        }
        Ok(state)
    }

    /// Applies the log from `log_end` on, noting the atoms it touched; cuts a
    /// torn tail. Returns the bytes cut.
    fn replay(&mut self, state: &mut State, touched: &mut Vec<AtomId>) -> Result<u64> {
        let log = log_name(self.generation);
        let len = self.backend.len(&log)?.unwrap_or(0);
        if self.log_end == HEADER_LEN {
            let mut head = vec![0; HEADER_LEN as usize];
            let n = self.backend.read_full_at(&log, 0, &mut head)?;
            if n < head.len() {
                // A log whose header never made it: nothing acknowledged is in it.
                self.backend.truncate(&log, 0)?;
                self.backend
                    .write_at(&log, 0, &frame::header(LOG_MAGIC, self.generation))?;
                self.backend.sync(&log)?;
                return Ok(n as u64);
            }
            let found = frame::parse_header(LOG_MAGIC, &head)?;
            if found != self.generation {
                return Err(Error::Corrupt(format!(
                    "log {} claims generation {found}",
                    self.generation
                )));
            }
        }
        if len <= self.log_end {
            return Ok(0);
        }
        let mut tail = vec![0; (len - self.log_end) as usize];
        let n = self.backend.read_full_at(&log, self.log_end, &mut tail)?;
        tail.truncate(n);
        let mut at = 0;
        loop {
            match frame::next(&tail, at) {
                Next::Frame(payload, after) => {
                    let txn: Txn = decode(payload, "log record")?;
                    if txn.version > state.version {
                        touched.extend(txn.touched());
                        state.apply(txn)?;
                    }
                    at = after;
                }
                Next::End => break,
                Next::Bad if frame::valid_frame_after(&tail, at) => {
                    return Err(Error::Corrupt(format!(
                        "log record at byte {} is damaged and valid records follow it; refusing to drop them",
                        self.log_end + at as u64
                    )));
                }
                Next::Bad => {
                    let cut = self.log_end + at as u64;
                    self.backend.truncate(&log, cut)?;
                    self.backend.sync(&log)?;
                    self.log_end = cut;
                    return Ok(len - cut);
                }
            }
        }
        self.log_end += at as u64;
        Ok(0)
    }

    /// Brings `state` up to date with what other processes wrote. The caller
    /// holds the host's store lock, so a torn tail found here is a crash.
    pub fn catch_up(&mut self, state: &mut State) -> Result<CatchUp> {
        let mut caught = CatchUp::default();
        let names = self.backend.list()?;
        if self.latest_generation(&names) != self.generation
            || !names.contains(&log_name(self.generation))
        {
            *state = self.load(&mut caught.recovery)?;
            caught.reloaded = true;
        } else {
            caught.recovery.dropped_tail_bytes = self.replay(state, &mut caught.touched)?;
        }
        Ok(caught)
    }

    /// Reads everything again from disk (after a failed write).
    pub fn reload(&mut self) -> Result<State> {
        self.load(&mut Recovery::default())
    }

    /// Appends a transaction, syncs it, then applies it to `state`.
    pub fn commit(&mut self, state: &mut State, txn: Txn) -> Result<()> {
        let bytes = frame::frame(&encode(&txn)?);
        let log = log_name(self.generation);
        self.backend.write_at(&log, self.log_end, &bytes)?;
        self.backend.sync(&log)?;
        self.log_end += bytes.len() as u64;
        state.apply(txn)?;
        if self.log_bytes() > self.compact_after {
            self.compact(state)?;
        }
        Ok(())
    }

    /// Applies a transaction that destroys content, then compacts, so that
    /// when this returns no file holds the destroyed bytes. The new snapshot
    /// is the commit point: before its rename the write did not happen.
    pub fn commit_erasing(&mut self, state: &mut State, txn: Txn) -> Result<()> {
        state.apply(txn)?;
        self.compact(state)
    }

    /// Writes `state` as generation `g+1` and removes generation `g`.
    pub fn compact(&mut self, state: &State) -> Result<()> {
        let next = self.generation + 1;
        let mut bytes = frame::header(SNAP_MAGIC, next);
        bytes.extend(frame::frame(&encode(state)?));
        bytes.extend(frame::frame(&encode(&state.vectors)?));
        bytes.extend(frame::frame(&encode(&state.supplied)?));
        let tmp = format!("{}.tmp", snap_name(next));
        self.backend.write_at(&tmp, 0, &bytes)?;
        self.backend.sync(&tmp)?;
        self.backend.rename(&tmp, &snap_name(next))?;
        let log = log_name(next);
        self.backend.remove(&log)?;
        self.backend
            .write_at(&log, 0, &frame::header(LOG_MAGIC, next))?;
        self.backend.sync(&log)?;
        self.backend.sync_dir()?;
        self.backend.remove(&log_name(self.generation))?;
        self.backend.remove(&snap_name(self.generation))?;
        self.backend.sync_dir()?;
        self.generation = next;
        self.log_end = HEADER_LEN;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
