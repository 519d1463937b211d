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
use crate::state::{State, Txn, Unread, Vectors};
use backend::Backend;
use frame::{Checksum, FRAME_OVERHEAD, HEADER_LEN, LOG_MAGIC, MAX_FRAME, Next, SNAP_MAGIC};

/// A snapshot's vectors frame at least this long is read when a call first
/// needs its rows, not at open; a smaller one is read (and checked) with the
/// rest of the snapshot at little cost. Tests and fuzzing leave every frame
/// unread, so that every reopen in them runs the lazy path.
pub const LAZY_VECTORS_FROM: u64 = if cfg!(any(test, feature = "simulation")) {
    1
} else {
    1 << 20
};

/// The shortest log a commit compacts for being long relative to the
/// snapshot ([`Log::compact_threshold`]).
pub const MIN_COMPACT_LOG: u64 = 64 << 10;

/// What opening (or catching up) found, repaired and set aside.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Recovery {
    /// Bytes at the end of the log that were not a whole record (a write
    /// cut short), or (salvage) damaged bytes: not applied, kept aside.
    pub dropped_tail_bytes: u64,
    /// Files of older generations or interrupted compactions that were removed.
    pub removed_files: Vec<String>,
    /// Files written to keep bytes that were not applied. The engine never
    /// deletes them.
    pub kept_files: Vec<String>,
    /// What the user should hear about, in plain words.
    pub notices: Vec<String>,
}

impl Recovery {
    fn absorb(&mut self, other: Recovery) {
        self.dropped_tail_bytes += other.dropped_tail_bytes;
        self.removed_files.extend(other.removed_files);
        self.kept_files.extend(other.kept_files);
        self.notices.extend(other.notices);
    }
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

/// The indexes a snapshot carries (its fourth frame, opaque here), with
/// what the log changed after it: the caller restores the indexes from the
/// bytes and re-indexes the touched atoms (`crate::index::persist`).
#[derive(Debug, Default)]
pub struct Derived {
    /// The state version of the snapshot the bytes were derived from.
    pub snapshot_version: u64,
    pub bytes: Vec<u8>,
    /// Atoms the log replayed after the snapshot touched.
    pub touched: Vec<AtomId>,
}

/// Repairs recovery decided on but has not done yet — because the store
/// could not be written when it was read (read-only, disk full). Reads do
/// not need them; every write does them first.
#[derive(Debug, Default)]
struct Untidy {
    /// The log is missing or shorter than its header: (re)write the header.
    header: bool,
    /// The log's bytes from this offset on were not applied: keep them
    /// aside, then cut them off.
    tail: Option<u64>,
    /// The tail is damage salvage skipped, not a write cut short.
    tail_damaged: bool,
    /// Whole files to keep aside before they are replaced (salvage).
    keep: Vec<String>,
    /// Salvage loaded less than the files hold: write a clean generation.
    compact: bool,
    /// Files of other generations or interrupted compactions are left.
    stale: bool,
}

impl Untidy {
    fn any(&self) -> bool {
        self.header || self.tail.is_some() || !self.keep.is_empty() || self.compact || self.stale
    }
}

pub struct Log<B: Backend> {
    backend: B,
    generation: u64,
    /// Offset just after the last transaction this process has applied.
    log_end: u64,
    compact_after: u64,
    /// Open a damaged store on purpose: what cannot be read is kept aside
    /// and the rest loads (`hmg repair`).
    salvage: bool,
    untidy: Untidy,
    /// Notices of repairs made during writes, until the caller takes them.
    notices: Vec<String>,
    /// The last load's snapshot indexes, until the caller takes them.
    derived: Option<Derived>,
    /// Compact at the next commit even if the log is short (the snapshot's
    /// indexes are missing or were derived by another engine).
    compact_soon: bool,
    /// How the live log's frames are checksummed (its header's version): a
    /// log an older build began keeps its kind until the next compaction.
    log_checksum: Checksum,
}

/// A file written front to back, frame by frame.
struct Staging<'a, B: Backend> {
    backend: &'a B,
    name: &'a str,
    at: u64,
}

impl<B: Backend> Staging<'_, B> {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.backend.write_at(self.name, self.at, bytes)?;
        self.at += bytes.len() as u64;
        Ok(())
    }

    /// One frame of `payload`: its length and checksum.
    fn frame(&mut self, payload: &[u8]) -> Result<(u32, u32)> {
        let head = frame::head(payload);
        self.put(&head)?;
        self.put(payload)?;
        Ok(frame::parse_head(&head))
    }
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
    if hex.len() != 16 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    if !matches!(prefix, "log" | "snap") {
        return None;
    }
    Some((prefix, u64::from_str_radix(hex, 16).ok()?))
}

/// A snapshot being written (`snap-<g>.hmg.tmp`): exactly this name, nothing
/// else ending in `.tmp` is ours.
fn is_snapshot_tmp(name: &str) -> bool {
    name.strip_suffix(".tmp")
        .and_then(parse_name)
        .is_some_and(|(prefix, _)| prefix == "snap")
}

/// Whether a file name is one of the kept-aside files recovery writes.
pub fn is_kept(name: &str) -> bool {
    name.starts_with("kept-") && name.ends_with(".hmg")
}

const SALVAGE_HINT: &str = "Nothing was changed. To open the rest on purpose, open the store with salvage (`hmg repair`): the unreadable bytes are kept aside in a `kept-*.hmg` file and everything else loads";

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
    /// generation, replays its log, sets a torn tail aside, removes stale
    /// files. Damage a crash cannot cause is refused.
    pub fn open(backend: B, compact_after: u64) -> Result<(Log<B>, State, Recovery)> {
        Log::open_with(backend, compact_after, false)
    }

    /// [`Log::open`]; with `salvage`, damage is kept aside instead of refused.
    pub fn open_with(
        backend: B,
        compact_after: u64,
        salvage: bool,
    ) -> Result<(Log<B>, State, Recovery)> {
        let mut log = Log {
            backend,
            generation: 0,
            log_end: HEADER_LEN,
            compact_after,
            salvage,
            untidy: Untidy::default(),
            notices: Vec::new(),
            derived: None,
            compact_soon: false,
            log_checksum: Checksum::CURRENT,
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

    /// How long the log may grow before a commit compacts it: a 128th of
    /// the live snapshot, at least [`MIN_COMPACT_LOG`], at most
    /// `compact_after` (`u64::MAX`: never by itself). Every open replays
    /// the log, and replaying a record (indexing its text) costs what
    /// reading a few hundred times its bytes of snapshot costs, so a log
    /// held to this share keeps a cold open within a few times a compacted
    /// one's at any size (docs/format.md).
    ///
    /// Asked past the commit point, so it cannot fail: a snapshot that
    /// cannot be measured leaves the plain limit.
    fn compact_threshold(&self) -> u64 {
        if self.compact_after == u64::MAX || self.log_bytes() <= MIN_COMPACT_LOG {
            return self.compact_after;
        }
        match self.backend.len(&snap_name(self.generation)) {
            Ok(snapshot) => (snapshot.unwrap_or(0) / 128)
                .max(MIN_COMPACT_LOG)
                .min(self.compact_after),
            Err(_) => self.compact_after,
        }
    }

    /// The indexes the last load's snapshot carried, if any (once).
    pub fn take_derived(&mut self) -> Option<Derived> {
        self.derived.take()
    }

    /// Asks for a compaction at the next commit, to rewrite the snapshot's
    /// indexes.
    pub fn compact_at_next_commit(&mut self) {
        self.compact_soon = true;
    }

    /// Notices of repairs made since they were last taken.
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// The generation to load: the newest one any file names. A log newer
    /// than every snapshot means that generation's snapshot is missing.
    fn newest_generation(names: &[String]) -> u64 {
        names
            .iter()
            .filter_map(|n| parse_name(n))
            .map(|(_, g)| g)
            .max()
            .unwrap_or(0)
    }

    fn is_stale(&self, name: &str) -> bool {
        is_snapshot_tmp(name) || parse_name(name).is_some_and(|(_, g)| g < self.generation)
    }

    fn load(&mut self, recovery: &mut Recovery) -> Result<State> {
        let names = self.backend.list()?;
        let generation = Self::newest_generation(&names);
        self.untidy = Untidy::default();
        self.generation = generation;
        self.log_end = HEADER_LEN;
        let snap = snap_name(generation);
        let log = log_name(generation);
        // Salvage loads what it can on an older base: versions may jump.
        let mut gap_ok = false;
        self.derived = None;
        let mut derived = None;
        let mut state = if generation == 0 {
            State::default()
        } else if names.contains(&snap) {
            match self.read_snapshot(generation, !self.salvage) {
                Ok((mut state, bytes)) => {
                    if self.salvage && state.vectors.unread().is_some() {
                        // Only the vectors are damaged: the atoms load
                        // without them (new writes are embedded again).
                        recovery.notices.push(format!(
                            "salvage: the vectors in {snap} are damaged; the atoms load without them (semantic recall covers what is written from now on)"
                        ));
                        state.vectors = Vectors::default();
                        self.untidy.keep.push(snap.clone());
                        self.untidy.compact = true;
                    }
                    derived = bytes.map(|bytes| Derived {
                        snapshot_version: state.version,
                        bytes,
                        touched: Vec::new(),
                    });
                    state
                }
                Err(e) if self.salvage => {
                    recovery.notices.push(format!("salvage: {e}"));
                    self.untidy.keep.push(snap.clone());
                    gap_ok = true;
                    self.base_state(&names, generation, recovery)
                }
                Err(e) => return Err(Error::Corrupt(format!("{e}. {SALVAGE_HINT}."))),
            }
        } else if self.salvage {
            recovery.notices.push(format!(
                "salvage: {snap} is missing; {log} is kept aside and replayed on the newest snapshot left"
            ));
            self.untidy.keep.push(log.clone());
            gap_ok = true;
            self.base_state(&names, generation, recovery)
        } else {
            return Err(Error::Corrupt(format!(
                "{snap} is missing while {log} of the same generation exists: the state that log builds on is gone (a compaction never leaves a log without its snapshot). {SALVAGE_HINT}, and {log} is replayed on the newest snapshot left (or on an empty store)."
            )));
        };
        let mut touched = Vec::new();
        self.replay(&mut state, &mut touched, gap_ok, recovery)?;
        self.derived = derived.map(|d| Derived { touched, ..d });
        self.untidy.stale = names.iter().any(|n| self.is_stale(n));
        self.untidy.compact |= gap_ok;
        if let Err(e) = self.tidy(&mut state, recovery) {
            if self.salvage {
                return Err(e);
            }
            recovery.notices.push(match self.untidy.tail {
                Some(cut) => format!(
                    "{log}: {} bytes after byte {cut} are not a whole record (a write cut short); they are skipped and will be kept aside at the next write (cannot write now: {e})",
                    self.backend.len(&log).ok().flatten().unwrap_or(cut) - cut
                ),
                None => format!(
                    "the store could not be tidied now ({e}); reading works, the next write retries"
                ),
            });
        }
        Ok(state)
    }

    /// Salvage's base when the live snapshot is missing or unreadable: the
    /// newest older snapshot that reads, else an empty store.
    fn base_state(&self, names: &[String], below: u64, recovery: &mut Recovery) -> State {
        let mut older: Vec<u64> = names
            .iter()
            .filter_map(|n| parse_name(n))
            .filter(|(p, g)| *p == "snap" && *g < below)
            .map(|(_, g)| g)
            .collect();
        older.sort_unstable();
        for g in older.into_iter().rev() {
            if let Ok((mut state, _)) = self.read_snapshot(g, false) {
                if state.vectors.unread().is_some() {
                    state.vectors = Vectors::default();
                }
                recovery
                    .notices
                    .push(format!("salvage: starting from {}", snap_name(g)));
                return state;
            }
        }
        recovery
            .notices
            .push("salvage: no older snapshot; starting from an empty store".into());
        State::default()
    }

    /// A snapshot's state, and the bytes of its indexes frame if it has one.
    /// Read frame by frame; with `lazy`, a large vectors frame is left
    /// unread (its head read, its place noted) until a call needs the rows
    /// ([`Log::read_vectors`]), and its checksum is checked then.
    fn read_snapshot(&self, generation: u64, lazy: bool) -> Result<(State, Option<Vec<u8>>)> {
        let name = snap_name(generation);
        let named = |e: Error| match e {
            Error::Corrupt(m) => Error::Corrupt(format!("{name}: {m}")),
            other => other,
        };
        let file_len = self
            .backend
            .len(&name)?
            .ok_or_else(|| Error::Corrupt(format!("{name} is missing")))?;
        let mut header = [0; HEADER_LEN as usize];
        let got = self.backend.read_full_at(&name, 0, &mut header)?;
        let (found, checksum) = frame::parse_header(SNAP_MAGIC, &header[..got]).map_err(named)?;
        let half = frame::version(&header) < frame::INT8_ROWS_FROM;
        if found != generation {
            return Err(Error::Corrupt(format!("{name} claims generation {found}")));
        }
        let bad = || Error::Corrupt(format!("{name} fails its checksum"));
        let mut at = HEADER_LEN;
        let Some((len, crc)) = self.frame_head(&name, at, file_len)? else {
            return Err(bad());
        };
        let payload = self
            .frame_payload(&name, at, len, (checksum, crc))
            .ok_or_else(bad)??;
        let mut state: State = decode(&payload, "snapshot").map_err(named)?;
        drop(payload);
        at += FRAME_OVERHEAD as u64 + u64::from(len);
        // Version 2 added the vectors frame, version 3 the supplied triples,
        // version 4 the indexes.
        let mut derived = None;
        for part in ["vectors", "supplied triples", "indexes"] {
            if at == file_len {
                break;
            }
            let Some((len, crc)) = self.frame_head(&name, at, file_len)? else {
                return Err(bad());
            };
            let offset = at + FRAME_OVERHEAD as u64;
            at = offset + u64::from(len);
            if part == "vectors" && lazy && u64::from(len) >= LAZY_VECTORS_FROM {
                let mut prefix = vec![0; 1024.min(len as usize)];
                self.backend.read_full_at(&name, offset, &mut prefix)?;
                if let Some((model, dim, rows)) = Vectors::head(&prefix)
                    && rows > 0
                {
                    let unread = Unread::new(name.clone(), offset, len, (checksum, crc), half);
                    state.vectors = Vectors::unread_from(model, dim, unread);
                    continue;
                }
            }
            let payload =
                self.frame_payload(&name, offset - FRAME_OVERHEAD as u64, len, (checksum, crc));
            if part == "vectors" && self.salvage && payload.is_none() {
                // Damaged (an I/O error is no damage: it goes up). Left
                // unread: `load` drops them and says so.
                let unread = Unread::new(name.clone(), offset, len, (checksum, crc), half);
                state.vectors = Vectors::unread_from(String::new(), 0, unread);
                continue;
            }
            let payload = payload.ok_or_else(bad)??;
            match part {
                "vectors" => match Vectors::from_bytes(payload.into(), half) {
                    Ok(vectors) => state.vectors = vectors,
                    Err(_) if self.salvage => {
                        let unread = Unread::new(name.clone(), offset, len, (checksum, crc), half);
                        state.vectors = Vectors::unread_from(String::new(), 0, unread);
                    }
                    Err(e) => {
                        return Err(Error::Corrupt(format!(
                            "{name}: snapshot vectors do not decode: {e}"
                        )));
                    }
                },
                "supplied triples" => {
                    state.supplied = decode(&payload, "snapshot triples").map_err(named)?
                }
                _ => derived = Some(payload),
            }
        }
        Ok((state, derived))
    }

    /// The length and checksum of the frame at `at`, if it fits in the file.
    fn frame_head(&self, name: &str, at: u64, file_len: u64) -> Result<Option<(u32, u32)>> {
        let mut head = [0; FRAME_OVERHEAD];
        if self.backend.read_full_at(name, at, &mut head)? < FRAME_OVERHEAD {
            return Ok(None);
        }
        let (len, crc) = frame::parse_head(&head);
        let fits = len <= MAX_FRAME && at + FRAME_OVERHEAD as u64 + u64::from(len) <= file_len;
        Ok(fits.then_some((len, crc)))
    }

    /// The payload of the frame at `at`; `None` if it fails its checksum
    /// (the kind of the file, and the value its head holds).
    fn frame_payload(
        &self,
        name: &str,
        at: u64,
        len: u32,
        (checksum, sum): (Checksum, u32),
    ) -> Option<Result<Vec<u8>>> {
        let mut payload = vec![0; len as usize];
        match self
            .backend
            .read_full_at(name, at + FRAME_OVERHEAD as u64, &mut payload)
        {
            Err(e) => Some(Err(e.into())),
            Ok(n) if n < payload.len() => None,
            Ok(_) => (checksum.of(&payload) == sum).then_some(Ok(payload)),
        }
    }

    /// Reads the snapshot rows `vectors` left unread (checked against their
    /// checksum) under what the log changed since. Calls run under the
    /// store lock after catching up, so the snapshot is the live one.
    pub fn read_vectors(&self, vectors: &mut Vectors) -> Result<()> {
        let Some(unread) = vectors.unread() else {
            return Ok(());
        };
        let name = unread.file.clone();
        let at = unread.offset - FRAME_OVERHEAD as u64;
        let bad = || {
            Error::Corrupt(format!(
                "{name}: its vectors frame fails its checksum. {SALVAGE_HINT}."
            ))
        };
        let payload = self
            .frame_payload(&name, at, unread.len, unread.checksum)
            .ok_or_else(bad)??;
        let snapshot = Vectors::from_bytes(payload.into(), unread.half).map_err(|e| {
            Error::Corrupt(format!(
                "{name}: snapshot vectors do not decode: {e}. {SALVAGE_HINT}."
            ))
        })?;
        vectors.read_in(snapshot);
        Ok(())
    }

    /// Applies the log from `log_end` on, noting the atoms it touched. A torn
    /// tail (the only damage a crash can do: the record being written is
    /// cut short) is skipped and marked to be kept aside; any other damage
    /// is refused unless salvaging.
    fn replay(
        &mut self,
        state: &mut State,
        touched: &mut Vec<AtomId>,
        gap_ok: bool,
        recovery: &mut Recovery,
    ) -> Result<()> {
        let log = log_name(self.generation);
        let Some(len) = self.backend.len(&log)? else {
            // A crash between a snapshot's rename and its log's creation.
            self.untidy.header = true;
            return Ok(());
        };
        if self.log_end == HEADER_LEN {
            let mut head = vec![0; HEADER_LEN as usize];
            let n = self.backend.read_full_at(&log, 0, &mut head)?;
            if n < head.len() {
                // A log whose header never made it: nothing acknowledged is in it.
                self.untidy.header = true;
                return Ok(());
            }
            let checked = frame::parse_header(LOG_MAGIC, &head).and_then(|(found, checksum)| {
                if found == self.generation {
                    self.log_checksum = checksum;
                    Ok(())
                } else {
                    Err(Error::Corrupt(format!("claims generation {found}")))
                }
            });
            if let Err(e) = checked {
                if !self.salvage {
                    return Err(Error::Corrupt(format!("{log}: {e}. {SALVAGE_HINT}.")));
                }
                recovery
                    .notices
                    .push(format!("salvage: {log}: {e}; the whole log is kept aside"));
                self.untidy.keep.push(log.clone());
                self.untidy.header = true;
                self.untidy.compact = true;
                return Ok(());
            }
            self.untidy.header = false;
        }
        if len <= self.log_end {
            return Ok(());
        }
        let mut tail = vec![0; (len - self.log_end) as usize];
        let n = self.backend.read_full_at(&log, self.log_end, &mut tail)?;
        tail.truncate(n);
        let mut at = 0;
        let damage = loop {
            match frame::next(&tail, at, self.log_checksum) {
                Next::Frame(payload, after) => {
                    if frame::all_zero(&tail[at..]) {
                        break None;
                    }
                    let txn: Txn = match decode(payload, "record") {
                        Ok(txn) => txn,
                        Err(e) => break Some(e.to_string()),
                    };
                    if txn.version > state.version {
                        if gap_ok && txn.version > state.version + 1 {
                            state.version = txn.version - 1;
                        }
                        touched.extend(txn.touched());
                        if let Err(e) = state.apply(txn) {
                            break Some(e.to_string());
                        }
                    }
                    at = after;
                }
                Next::End => {
                    self.log_end += at as u64;
                    return Ok(());
                }
                Next::Bad => {
                    let rest = &tail[at..];
                    if frame::valid_frame_after(&tail, at, self.log_checksum) {
                        break Some(
                            "the record there is damaged and whole records follow it".into(),
                        );
                    }
                    if !frame::is_torn(rest) {
                        break Some(format!(
                            "the last record ({} bytes) is whole but fails its checksum; a crash cannot do that, so the file was damaged after it was written",
                            rest.len()
                        ));
                    }
                    break None;
                }
            }
        };
        let cut = self.log_end + at as u64;
        if let Some(why) = damage {
            if !self.salvage {
                return Err(Error::Corrupt(format!(
                    "{log}, byte {cut}: {why}. {SALVAGE_HINT}."
                )));
            }
            recovery.notices.push(format!(
                "salvage: {log}, byte {cut}: {why}; the rest of the log is kept aside"
            ));
            self.untidy.compact = true;
            self.untidy.tail_damaged = true;
        }
        recovery.dropped_tail_bytes += len - cut;
        self.log_end = cut;
        self.untidy.tail = Some(cut);
        Ok(())
    }

    /// Does the repairs recovery decided on: keeps what was not applied in
    /// `kept-*` files, rewrites a missing log header, cuts the tail, writes a
    /// clean generation after a salvage, removes stale files.
    fn tidy(&mut self, state: &mut State, recovery: &mut Recovery) -> Result<()> {
        if !self.untidy.any() {
            return Ok(());
        }
        let log = log_name(self.generation);
        while let Some(name) = self.untidy.keep.first().cloned() {
            let bytes = self.backend.read_all(&name)?;
            let kept = self.keep_aside(name.trim_end_matches(".hmg"), &bytes)?;
            recovery.notices.push(format!(
                "{name} ({} bytes) is kept as {kept}; the engine never deletes it",
                bytes.len()
            ));
            recovery.kept_files.push(kept);
            self.untidy.keep.remove(0);
        }
        if let Some(cut) = self.untidy.tail {
            let len = self.backend.len(&log)?.unwrap_or(0);
            if len > cut {
                let mut bytes = vec![0; (len - cut) as usize];
                let n = self.backend.read_full_at(&log, cut, &mut bytes)?;
                bytes.truncate(n);
                let kept = self.keep_aside(
                    &format!("{}-{cut:016x}", log.trim_end_matches(".hmg")),
                    &bytes,
                )?;
                self.backend.truncate(&log, cut)?;
                self.backend.sync(&log)?;
                let what = if self.untidy.tail_damaged {
                    "are damaged"
                } else {
                    "are not a whole record (a write cut short by a crash, or a file cut short)"
                };
                recovery.notices.push(format!(
                    "{log}: the {} bytes after byte {cut} {what}; they were not applied and are kept as {kept}",
                    bytes.len()
                ));
                recovery.kept_files.push(kept);
            }
            self.untidy.tail = None;
            self.untidy.tail_damaged = false;
        }
        if self.untidy.header {
            self.backend.remove(&log)?;
            self.backend
                .write_at(&log, 0, &frame::header(LOG_MAGIC, self.generation))?;
            self.backend.sync(&log)?;
            self.backend.sync_dir()?;
            self.log_end = HEADER_LEN;
            self.log_checksum = Checksum::CURRENT;
            self.untidy.header = false;
        }
        if self.untidy.compact {
            self.compact_now(state, None)?;
            self.untidy.compact = false;
        }
        if self.untidy.stale {
            let mut removed = false;
            for name in self.backend.list()? {
                if self.is_stale(&name) {
                    self.backend.remove(&name)?;
                    recovery.removed_files.push(name);
                    removed = true;
                }
            }
            if removed {
                self.backend.sync_dir()?;
            }
            self.untidy.stale = false;
        }
        Ok(())
    }

    /// Writes a snapshot of `state` as generation `generation` to `name`,
    /// frame by frame (the file is never one buffer in memory: at a million
    /// atoms it is most of a gigabyte): where its vectors frame's payload
    /// starts, its length and checksum. Not synced.
    fn write_snapshot(
        &self,
        name: &str,
        generation: u64,
        state: &mut State,
        derived: Option<Vec<u8>>,
    ) -> Result<(u64, u32, u32)> {
        let mut out = Staging {
            backend: &self.backend,
            name,
            at: 0,
        };
        out.put(&frame::header(SNAP_MAGIC, generation))?;
        out.frame(&encode(state)?)?;
        self.read_vectors(&mut state.vectors)?;
        let vectors = state.vectors.to_bytes()?;
        let vectors_at = out.at + FRAME_OVERHEAD as u64;
        let (vectors_len, vectors_crc) = out.frame(&vectors)?;
        drop(vectors);
        out.frame(&encode(&state.supplied)?)?;
        if let Some(derived) = derived {
            out.frame(&derived)?;
        }
        // A file left by a crash under this name may have been longer.
        self.backend.truncate(name, out.at)?;
        Ok((vectors_at, vectors_len, vectors_crc))
    }

    /// Writes `bytes` to a new `kept-<base>[-n].hmg` and makes it durable.
    fn keep_aside(&self, base: &str, bytes: &[u8]) -> Result<String> {
        let names = self.backend.list()?;
        let name = (0..)
            .map(|n| match n {
                0 => format!("kept-{base}.hmg"),
                n => format!("kept-{base}-{n}.hmg"),
            })
            .find(|name| !names.contains(name))
            .expect("some name is free");
        self.backend.write_at(&name, 0, bytes)?;
        self.backend.sync(&name)?;
        self.backend.sync_dir()?;
        Ok(name)
    }

    /// Before any write: the repairs a read could not make.
    fn tidy_for_write(&mut self, state: &mut State) -> Result<()> {
        let mut recovery = Recovery::default();
        let done = self.tidy(state, &mut recovery);
        self.notices.append(&mut recovery.notices);
        done
    }

    /// Brings `state` up to date with what other processes wrote. The caller
    /// holds the host's store lock, so a torn tail found here is a crash.
    pub fn catch_up(&mut self, state: &mut State) -> Result<CatchUp> {
        let mut caught = CatchUp::default();
        let names = self.backend.list()?;
        if Self::newest_generation(&names) != self.generation
            || (!names.contains(&log_name(self.generation)) && !self.untidy.header)
        {
            *state = self.load(&mut caught.recovery)?;
            caught.reloaded = true;
        } else {
            // A tail this process skipped may since have been set aside and
            // written over by another: read again from where we stopped.
            let known = self.untidy.tail.take();
            let mut recovery = Recovery::default();
            self.replay(state, &mut caught.touched, false, &mut recovery)?;
            if known.is_some() {
                recovery.dropped_tail_bytes = 0;
            }
            if let Some(cut) = self.untidy.tail
                && known != Some(cut)
            {
                recovery.notices.push(format!(
                    "{}: {} bytes after byte {cut} are not a whole record (a write cut short); they are skipped and will be kept aside at the next write",
                    log_name(self.generation),
                    recovery.dropped_tail_bytes
                ));
            }
            caught.recovery.absorb(recovery);
        }
        Ok(caught)
    }

    /// Reads everything again from disk (after a failed write).
    pub fn reload(&mut self) -> Result<State> {
        let mut recovery = Recovery::default();
        let state = self.load(&mut recovery)?;
        self.notices.append(&mut recovery.notices);
        Ok(state)
    }

    /// Appends a transaction, syncs it, then applies it to `state`. A write
    /// that fails leaves no partial record behind (best effort: a crash can
    /// still leave one, which the next open sets aside).
    pub fn commit(&mut self, state: &mut State, txn: Txn) -> Result<()> {
        self.commit_deriving(state, txn, &mut |_| None)
    }

    /// [`Log::commit`]; a compaction it runs stores `derive(state)` as the
    /// snapshot's indexes frame.
    pub fn commit_deriving(
        &mut self,
        state: &mut State,
        txn: Txn,
        derive: &mut dyn FnMut(&State) -> Option<Vec<u8>>,
    ) -> Result<()> {
        self.tidy_for_write(state)?;
        let bytes = frame::frame_with(self.log_checksum, &encode(&txn)?);
        let log = log_name(self.generation);
        let written = self
            .backend
            .write_at(&log, self.log_end, &bytes)
            .and_then(|()| self.backend.sync(&log));
        if let Err(e) = written {
            let _ = self
                .backend
                .truncate(&log, self.log_end)
                .and_then(|()| self.backend.sync(&log));
            return Err(e.into());
        }
        self.log_end += bytes.len() as u64;
        state.apply(txn)?;
        if self.compact_soon || self.log_bytes() > self.compact_threshold() {
            // The commit stands: a compaction that cannot run now runs later.
            let derived = derive(state);
            if let Err(e) = self.compact_now(state, derived) {
                self.notices.push(format!(
                    "the log could not be compacted now ({e}); it will be retried"
                ));
            }
        }
        Ok(())
    }

    /// Applies a transaction that destroys content, then compacts, so that
    /// when this returns no file holds the destroyed bytes. The new snapshot
    /// is the commit point: before its rename the write did not happen.
    pub fn commit_erasing(&mut self, state: &mut State, txn: Txn) -> Result<()> {
        self.commit_erasing_deriving(state, txn, &mut |_| None)
    }

    /// [`Log::commit_erasing`], storing `derive(state)` as the new
    /// snapshot's indexes frame.
    pub fn commit_erasing_deriving(
        &mut self,
        state: &mut State,
        txn: Txn,
        derive: &mut dyn FnMut(&State) -> Option<Vec<u8>>,
    ) -> Result<()> {
        self.tidy_for_write(state)?;
        state.apply(txn)?;
        let derived = derive(state);
        self.compact_now(state, derived)
    }

    /// Writes `state` as generation `g+1` and removes generation `g`. Fails
    /// without effect before the new snapshot's rename (the commit point);
    /// after it nothing fails: what is left undone is done by the next
    /// write or open, and said in a notice.
    pub fn compact(&mut self, state: &mut State) -> Result<()> {
        self.compact_deriving(state, None)
    }

    /// [`Log::compact`], with the indexes frame to store.
    pub fn compact_deriving(&mut self, state: &mut State, derived: Option<Vec<u8>>) -> Result<()> {
        self.tidy_for_write(state)?;
        self.compact_now(state, derived)
    }

    fn compact_now(&mut self, state: &mut State, derived: Option<Vec<u8>>) -> Result<()> {
        let next = self.generation + 1;
        // Rows left unread are read now, and left unread again (in the new
        // snapshot) once it is written.
        let set_aside = state.vectors.unread().is_some();
        let tmp = format!("{}.tmp", snap_name(next));
        let staged = self
            .write_snapshot(&tmp, next, state, derived)
            .and_then(|vectors| {
                self.backend.sync(&tmp)?;
                self.backend.rename(&tmp, &snap_name(next))?;
                Ok(vectors)
            });
        let (vectors_at, vectors_len, vectors_crc) = match staged {
            Ok(vectors) => vectors,
            Err(e) => {
                let _ = self.backend.remove(&tmp);
                return Err(e);
            }
        };
        // Committed. Generation `next` is live from here on.
        if set_aside && u64::from(vectors_len) >= LAZY_VECTORS_FROM {
            let sum = (Checksum::CURRENT, vectors_crc);
            let unread = Unread::new(snap_name(next), vectors_at, vectors_len, sum, false);
            state.vectors.set_aside(unread);
        }
        self.compact_soon = false;
        let old = self.generation;
        self.generation = next;
        self.log_end = HEADER_LEN;
        self.untidy = Untidy {
            header: true,
            stale: true,
            ..Untidy::default()
        };
        let mut recovery = Recovery::default();
        if let Err(e) = self.tidy(state, &mut recovery) {
            self.notices.push(format!(
                "compacted into {}, but {} and {} could not be removed yet ({e}); the next call that can write removes them",
                snap_name(next),
                log_name(old),
                snap_name(old)
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
