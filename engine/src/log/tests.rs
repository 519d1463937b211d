use super::backend::MemBackend;
use super::*;
use crate::atom::{Atom, AtomId, Epistemic, Exposure, Kind, Polarity};
use crate::scope::Scope;
use crate::state::Mutation;
use crate::time::Timestamp;

fn atom(n: u128, content: &str) -> Atom {
    Atom {
        id: AtomId(n),
        content: content.to_owned(),
        kind: Kind::Memory,
        source: "agent".into(),
        scope: Scope::personal("t"),
        epistemic: Epistemic::Actual,
        polarity: Polarity::Affirmative,
        exposure: Exposure::Visible,
        negated: false,
        superseded_by: None,
        created_at: Timestamp(n as i64),
        updated_at: Timestamp(n as i64),
    }
}

fn put<B: Backend>(store: &mut Log<B>, state: &mut State, n: u128) -> Result<()> {
    let txn = state.txn(vec![Mutation::PutAtom(atom(
        n,
        &format!("memory number {n}"),
    ))]);
    store.commit(state, txn)
}

/// A fresh in-memory store (compacting after `compact_after` log bytes)
/// holding atoms 1 to 3.
fn with_three(compact_after: u64) -> (MemBackend, Log<MemBackend>, State) {
    let mem = MemBackend::new();
    let (mut store, mut state, _) = Log::open(mem.clone(), compact_after).unwrap();
    for n in 1..=3 {
        put(&mut store, &mut state, n).unwrap();
    }
    (mem, store, state)
}

#[test]
fn reopen_sees_every_commit() {
    let mem = MemBackend::new();
    let (mut store, mut state, _) = Log::open(mem.clone(), u64::MAX).unwrap();
    for n in 1..=20 {
        put(&mut store, &mut state, n).unwrap();
    }
    let (_, reopened, recovery) = Log::open(mem.after_power_cut(), u64::MAX).unwrap();
    assert_eq!(reopened, state);
    assert_eq!(recovery, Recovery::default());
}

/// A log long next to its snapshot is compacted (every open replays it),
/// one short next to a large snapshot is not; `u64::MAX` never compacts.
#[test]
fn a_log_long_next_to_its_snapshot_is_compacted() {
    let big = "x".repeat(1000);
    let put_big = |store: &mut Log<MemBackend>, state: &mut State, n: u128| {
        let txn = state.txn(vec![Mutation::PutAtom(atom(n, &format!("{n} {big}")))]);
        store.commit(state, txn).unwrap();
    };
    let mem = MemBackend::new();
    let (mut store, mut state, _) = Log::open(mem.clone(), 4 << 20).unwrap();
    // No snapshot yet: the log may reach MIN_COMPACT_LOG, not more.
    let mut n = 0;
    while store.generation() == 0 {
        n += 1;
        put_big(&mut store, &mut state, n);
        assert!(store.log_bytes() <= MIN_COMPACT_LOG + 2048);
    }
    assert!(n > 40, "compacted after {n} records");
    // A snapshot of 20 MB: the log grows to its 128th (≈ 160 kB) first.
    for _ in 0..20_000 {
        n += 1;
        state
            .apply(state.txn(vec![Mutation::PutAtom(atom(n, &format!("{n} {big}")))]))
            .unwrap();
    }
    store.compact(&mut state).unwrap();
    let snapshot = mem
        .len(&format!("snap-{:016x}.hmg", store.generation()))
        .unwrap()
        .unwrap();
    let generation = store.generation();
    let mut longest = 0;
    while store.generation() == generation {
        longest = store.log_bytes();
        n += 1;
        put_big(&mut store, &mut state, n);
    }
    assert!(
        longest > MIN_COMPACT_LOG && longest <= snapshot / 128,
        "{longest} of {snapshot}"
    );
    let (_, reopened, _) = Log::open(mem.clone(), 4 << 20).unwrap();
    assert_eq!(reopened.atoms, state.atoms);
    // Never, when told so.
    let mem = MemBackend::new();
    let (mut store, mut state, _) = Log::open(mem.clone(), u64::MAX).unwrap();
    for n in 1..=200 {
        put_big(&mut store, &mut state, n);
    }
    assert_eq!(store.generation(), 0);
}

/// A snapshot is written frame by frame into its `.tmp`; a longer file
/// left under that name (a crash, another process) leaves no tail in it.
#[test]
fn a_snapshot_written_over_a_longer_leftover_has_no_tail() {
    let (mem, mut store, mut state) = with_three(u64::MAX);
    mem.write_at("snap-0000000000000001.hmg.tmp", 0, &[0xAB; 1 << 16])
        .unwrap();
    store.compact(&mut state).unwrap();
    let len = mem.len("snap-0000000000000001.hmg").unwrap().unwrap();
    assert!(len < 1 << 16, "{len}");
    let (_, reopened, recovery) = Log::open(mem.after_power_cut(), u64::MAX).unwrap();
    assert_eq!(reopened, state);
    assert_eq!(recovery, Recovery::default());
}

#[test]
fn compaction_keeps_state_and_leaves_one_generation() {
    let mem = MemBackend::new();
    let (mut store, mut state, _) = Log::open(mem.clone(), 200).unwrap();
    for n in 1..=30 {
        put(&mut store, &mut state, n).unwrap();
    }
    assert!(store.generation() > 1);
    let mut names: Vec<_> = mem.list().unwrap();
    names.sort();
    assert_eq!(
        names,
        vec![log_name(store.generation()), snap_name(store.generation())]
    );
    let (_, reopened, _) = Log::open(mem.after_power_cut(), 200).unwrap();
    assert_eq!(reopened, state);
}

#[test]
fn erasing_commit_removes_the_bytes_from_every_file() {
    let mem = MemBackend::new();
    let (mut store, mut state, _) = Log::open(mem.clone(), u64::MAX).unwrap();
    let txn = state.txn(vec![Mutation::PutAtom(atom(1, "the launch code is 0000"))]);
    store.commit(&mut state, txn).unwrap();
    let mut sealed = atom(1, "");
    sealed.exposure = Exposure::Sealed;
    let txn = state.txn(vec![Mutation::PutAtom(sealed)]);
    store.commit_erasing(&mut state, txn).unwrap();
    for (name, bytes) in mem.all_bytes() {
        assert!(
            !bytes.windows(8).any(|w| w == b"launch c"),
            "{name} still holds the sealed text"
        );
    }
    let (_, reopened, _) = Log::open(mem.after_power_cut(), u64::MAX).unwrap();
    assert_eq!(reopened.atom(AtomId(1)).unwrap().exposure, Exposure::Sealed);
}

#[test]
fn power_cut_at_every_write_keeps_acknowledged_commits() {
    for torn in [0usize, 3, 9, 40] {
        for cut in 0..60u64 {
            let mem = MemBackend::new();
            let (mut store, mut state, _) = Log::open(mem.clone(), 300).unwrap();
            mem.cut_power_after(cut, torn);
            let mut acked = Vec::new();
            for n in 1..=15 {
                if put(&mut store, &mut state, n).is_err() {
                    break;
                }
                acked.push(n);
            }
            let (_, reopened, _) = Log::open(mem.after_power_cut(), 300)
                .unwrap_or_else(|e| panic!("cut {cut} torn {torn}: reopen failed: {e}"));
            for n in &acked {
                assert!(
                    reopened.atom(AtomId(*n)).is_some(),
                    "cut {cut} torn {torn}: lost acknowledged {n}"
                );
            }
            // Nothing half-read: every atom is whole, versions are contiguous.
            assert!(reopened.atoms.len() as u64 == reopened.version);
            for a in reopened.atoms.values() {
                assert_eq!(a.content, format!("memory number {}", a.id.0));
            }
        }
    }
}

#[test]
fn torn_tail_is_kept_aside_cut_and_reported() {
    let mem = MemBackend::new();
    let (mut store, mut state, _) = Log::open(mem.clone(), u64::MAX).unwrap();
    put(&mut store, &mut state, 1).unwrap();
    let log = log_name(0);
    let len = mem.len(&log).unwrap().unwrap();
    mem.write_at(&log, len, &[9, 0, 0, 0, 1, 2]).unwrap();
    let (_, reopened, recovery) = Log::open(mem.clone(), u64::MAX).unwrap();
    assert_eq!(reopened.atoms.len(), 1);
    assert_eq!(recovery.dropped_tail_bytes, 6);
    assert_eq!(mem.len(&log).unwrap(), Some(len));
    let kept = format!("kept-log-0000000000000000-{len:016x}.hmg");
    assert_eq!(recovery.kept_files, std::slice::from_ref(&kept));
    assert_eq!(mem.read_all(&kept).unwrap(), [9, 0, 0, 0, 1, 2]);
    assert!(
        recovery.notices[0].contains(&kept),
        "{:?}",
        recovery.notices
    );
    // Kept files outlive compactions and further opens.
    let (mut store, mut state, _) = Log::open(mem.clone(), 100).unwrap();
    for n in 2..=10 {
        put(&mut store, &mut state, n).unwrap();
    }
    assert!(store.generation() > 0);
    Log::open(mem.clone(), 100).unwrap();
    assert_eq!(mem.read_all(&kept).unwrap(), [9, 0, 0, 0, 1, 2]);
}

#[test]
fn a_zero_filled_tail_is_torn_not_corrupt() {
    let mem = MemBackend::new();
    let (mut store, mut state, _) = Log::open(mem.clone(), u64::MAX).unwrap();
    put(&mut store, &mut state, 1).unwrap();
    let len = mem.len(&log_name(0)).unwrap().unwrap();
    mem.write_at(&log_name(0), len, &[0; 40]).unwrap();
    let (_, reopened, recovery) = Log::open(mem.clone(), u64::MAX).unwrap();
    assert_eq!(reopened, state);
    assert_eq!(recovery.dropped_tail_bytes, 40);
}

fn refused(mem: &MemBackend) -> String {
    match Log::open(mem.clone(), u64::MAX) {
        Err(Error::Corrupt(msg)) => msg,
        other => panic!(
            "expected a refusal, got {:?}",
            other.map(|(_, s, _)| s.version)
        ),
    }
}

#[test]
fn damage_in_the_middle_is_refused_not_dropped() {
    let (mem, _, _) = with_three(u64::MAX);
    let before = mem.all_bytes();
    mem.corrupt(&log_name(0), HEADER_LEN as usize + 12);
    let damaged = mem.all_bytes();
    let msg = refused(&mem);
    assert!(msg.contains("whole records follow"), "{msg}");
    assert!(
        msg.contains(&log_name(0)) && msg.contains("hmg repair"),
        "{msg}"
    );
    assert_eq!(mem.all_bytes(), damaged, "a refusal changes nothing");
    assert_ne!(before, damaged);
    // Salvage keeps the damaged rest aside and opens what precedes it.
    let (_, salvaged, recovery) = Log::open_with(mem.clone(), u64::MAX, true).unwrap();
    assert_eq!(salvaged.atoms.len(), 0);
    assert_eq!(recovery.kept_files.len(), 1);
    let kept = mem.read_all(&recovery.kept_files[0]).unwrap();
    assert!(kept.windows(13).any(|w| w == b"memory number"));
    Log::open(mem.clone(), u64::MAX).unwrap();
}

#[test]
fn a_whole_last_record_with_a_bad_checksum_is_refused() {
    let (mem, _, _) = with_three(u64::MAX);
    let len = mem.len(&log_name(0)).unwrap().unwrap();
    mem.corrupt(&log_name(0), len as usize - 3);
    let msg = refused(&mem);
    assert!(msg.contains("fails its checksum"), "{msg}");
    let (_, salvaged, recovery) = Log::open_with(mem.clone(), u64::MAX, true).unwrap();
    assert_eq!(salvaged.atoms.len(), 2);
    assert_eq!(recovery.kept_files.len(), 1);
}

#[test]
fn a_missing_snapshot_is_refused_and_its_log_never_deleted() {
    let (mem, mut store, mut state) = with_three(u64::MAX);
    store.compact(&mut state).unwrap();
    for n in 4..=5 {
        put(&mut store, &mut state, n).unwrap();
    }
    let log = log_name(1);
    let log_bytes = mem.read_all(&log).unwrap();
    mem.remove(&snap_name(1)).unwrap();
    for _ in 0..2 {
        let msg = refused(&mem);
        assert!(
            msg.contains(&snap_name(1)) && msg.contains("missing"),
            "{msg}"
        );
        assert_eq!(mem.read_all(&log).unwrap(), log_bytes);
    }
    // Salvage: the log is kept aside whole and replayed on an empty store.
    let (_, salvaged, recovery) = Log::open_with(mem.clone(), u64::MAX, true).unwrap();
    let mut ids: Vec<u128> = salvaged.atoms.keys().map(|a| a.0).collect();
    ids.sort();
    assert_eq!(ids, [4, 5]);
    let kept = &recovery.kept_files[0];
    assert_eq!(&mem.read_all(kept).unwrap(), &log_bytes);
    let (_, reopened, _) = Log::open(mem.clone(), u64::MAX).unwrap();
    assert_eq!(reopened.atoms.len(), 2);
}

#[test]
fn reads_need_no_write_access() {
    let (mem, _, state) = with_three(u64::MAX);
    let len = mem.len(&log_name(0)).unwrap().unwrap();
    mem.write_at(&log_name(0), len, &[50, 0, 0, 0, 1, 2, 3, 4, 5])
        .unwrap();
    mem.write_at("snap-0000000000000009.hmg.tmp", 0, b"half")
        .unwrap();
    mem.set_read_only(true);
    let before = mem.all_bytes();
    let (mut store, mut reopened, recovery) = Log::open(mem.clone(), u64::MAX).unwrap();
    assert_eq!(reopened, state);
    assert!(
        recovery.notices[0].contains("next write"),
        "{:?}",
        recovery.notices
    );
    assert_eq!(mem.all_bytes(), before);
    store.catch_up(&mut reopened).unwrap();
    assert!(put(&mut store, &mut reopened, 4).is_err());
    assert_eq!(mem.all_bytes(), before);
    // Writable again: the next write tidies first, then commits.
    mem.set_read_only(false);
    let mut reopened = store.reload().unwrap();
    put(&mut store, &mut reopened, 4).unwrap();
    let notices = store.take_notices();
    assert!(notices.iter().any(|n| n.contains("kept as")), "{notices:?}");
    assert!(!mem.list().unwrap().iter().any(|n| n.ends_with(".tmp")));
    let (_, after, _) = Log::open(mem.clone(), u64::MAX).unwrap();
    assert_eq!(after.atoms.len(), 4);
}

#[test]
fn a_full_disk_fails_writes_without_effect_and_reads_go_on() {
    let (mem, mut store, mut state) = with_three(400);
    mem.set_full(true);
    let before = Log::open(mem.clone(), 400).unwrap().1;
    for n in 4..=6 {
        let e = put(&mut store, &mut state, n).unwrap_err();
        assert!(
            matches!(&e, Error::Io(io) if io.kind() == std::io::ErrorKind::StorageFull),
            "{e}"
        );
        state = store.reload().unwrap();
        assert_eq!(state, before);
    }
    // An erasing commit (a compaction) fails before its commit point.
    let mut sealed = atom(1, "");
    sealed.exposure = Exposure::Sealed;
    let txn = state.txn(vec![Mutation::PutAtom(sealed)]);
    assert!(store.commit_erasing(&mut state, txn).is_err());
    let (_, reopened, recovery) = Log::open(mem.clone(), 400).unwrap();
    assert_eq!(reopened, before);
    assert_eq!(recovery.dropped_tail_bytes, 0, "no partial record left");
    mem.set_full(false);
    let mut state = store.reload().unwrap();
    put(&mut store, &mut state, 7).unwrap();
    assert_eq!(Log::open(mem, 400).unwrap().1.atoms.len(), 4);
}

#[test]
fn only_the_engines_own_names_are_touched() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("backup.tmp"), b"mine").unwrap();
    std::fs::create_dir(dir.path().join("cache.tmp")).unwrap();
    std::fs::write(dir.path().join("log-notes.hmg"), b"mine too").unwrap();
    let fs = super::backend::FsBackend::new(dir.path()).unwrap();
    let (mut store, mut state, _) = Log::open(fs.clone(), 200).unwrap();
    for n in 1..=20 {
        put(&mut store, &mut state, n).unwrap();
    }
    assert!(store.generation() > 1);
    let (_, reopened, _) = Log::open(fs, 200).unwrap();
    assert_eq!(reopened, state);
    assert_eq!(
        std::fs::read(dir.path().join("backup.tmp")).unwrap(),
        b"mine"
    );
    assert!(dir.path().join("cache.tmp").is_dir());
    assert!(dir.path().join("log-notes.hmg").exists());
}

#[test]
fn two_handles_catch_up_with_each_other() {
    let mem = MemBackend::new();
    let (mut a, mut sa, _) = Log::open(mem.clone(), 250).unwrap();
    let (mut b, mut sb, _) = Log::open(mem.clone(), 250).unwrap();
    for n in 1..=20 {
        let (store, state) = if n % 2 == 0 {
            (&mut a, &mut sa)
        } else {
            (&mut b, &mut sb)
        };
        store.catch_up(state).unwrap();
        put(store, state, n).unwrap();
    }
    a.catch_up(&mut sa).unwrap();
    b.catch_up(&mut sb).unwrap();
    assert_eq!(sa, sb);
    assert_eq!(sa.atoms.len(), 20);
}

#[test]
fn short_reads_never_look_like_a_torn_tail() {
    let mem = MemBackend::new();
    mem.cap_reads(7);
    let (mut store, mut state, _) = Log::open(mem.clone(), u64::MAX).unwrap();
    let big: Vec<Mutation> = (1..=300)
        .map(|n| Mutation::PutAtom(atom(n, &format!("memory number {n}"))))
        .collect();
    let txn = state.txn(big);
    store.commit(&mut state, txn).unwrap();
    put(&mut store, &mut state, 301).unwrap();
    let (_, reopened, recovery) = Log::open(mem.clone(), u64::MAX).unwrap();
    assert_eq!(recovery.dropped_tail_bytes, 0);
    assert_eq!(reopened, state);
    // And through a snapshot too.
    store.compact(&mut state).unwrap();
    let (_, reopened, _) = Log::open(mem, u64::MAX).unwrap();
    assert_eq!(reopened.atoms.len(), 301);
}

/// A vectors frame with its rows as f16, as formats 2–5 stored them.
fn half_rows(payload: &[u8]) -> Vec<u8> {
    #[derive(serde::Serialize, serde::Deserialize)]
    struct Frame {
        model: String,
        dim: u32,
        rows: Vec<(AtomId, Vec<u8>)>,
    }
    let mut frame: Frame = postcard::from_bytes(payload).unwrap();
    for (_, row) in &mut frame.rows {
        *row = Vectors::decode(row)
            .iter()
            .flat_map(|x| half::f16::from_f32(*x).to_le_bytes())
            .collect();
    }
    postcard::to_stdvec(&frame).unwrap()
}

/// The bytes of a file as format version 4 wrote them: the same frames
/// (vectors as f16 rows), each checksummed with CRC-32, under a version-4
/// header.
fn as_version_4(bytes: &[u8], magic: &[u8; 8]) -> Vec<u8> {
    let (generation, checksum) = frame::parse_header(magic, bytes).unwrap();
    let mut header = bytes[..20].to_vec();
    header[8..12].copy_from_slice(&4u32.to_le_bytes());
    let crc = crc32fast::hash(&header);
    header.extend_from_slice(&crc.to_le_bytes());
    assert_eq!(frame::parse_header(magic, &header).unwrap().0, generation);
    let mut at = HEADER_LEN as usize;
    let mut n = 0;
    while let Next::Frame(payload, next) = frame::next(bytes, at, checksum) {
        // A snapshot's second frame holds the vectors: f16 rows up to
        // version 5.
        let payload = if magic == SNAP_MAGIC && n == 1 {
            half_rows(payload)
        } else {
            payload.to_vec()
        };
        header.extend(frame::frame_with(Checksum::Crc32, &payload));
        at = next;
        n += 1;
    }
    assert_eq!(at, bytes.len(), "every frame converted");
    header
}

/// A store an older build wrote (CRC-32 frames) opens, its lazily read
/// vectors check against CRC-32, writes appended to its log keep CRC-32
/// (so that its frames stay readable together), and the next compaction
/// moves it to this build's version and checksum.
#[test]
fn a_version_4_store_keeps_its_checksums_until_it_compacts() {
    let mem = MemBackend::new();
    let (mut store, mut state, _) = Log::open(mem.clone(), u64::MAX).unwrap();
    for n in 1..=3 {
        put(&mut store, &mut state, n).unwrap();
        // Values f16 keeps exactly (multiples of 1/1024), so that the rows
        // read back from the version-4 snapshot are these rows.
        let values = [127.0 / 1024.0, n as f32 / 1024.0, -3.0 / 1024.0, 0.0];
        let txn = state.txn(vec![Mutation::EmbedRow {
            model: "m".into(),
            atom: AtomId(n),
            row: Vectors::encode(&values),
        }]);
        store.commit(&mut state, txn).unwrap();
    }
    store.compact(&mut state).unwrap();
    put(&mut store, &mut state, 4).unwrap();
    drop(store);
    for (name, bytes) in mem.all_bytes() {
        let magic = if name.starts_with("snap-") {
            SNAP_MAGIC
        } else {
            LOG_MAGIC
        };
        let old = as_version_4(&bytes, magic);
        mem.remove(&name).unwrap();
        mem.write_at(&name, 0, &old).unwrap();
        mem.sync(&name).unwrap();
    }
    mem.sync_dir().unwrap();
    let version = |mem: &MemBackend, name: &str| {
        let bytes = mem
            .all_bytes()
            .into_iter()
            .find(|(n, _)| n == name)
            .unwrap()
            .1;
        u32::from_le_bytes(bytes[8..12].try_into().unwrap())
    };
    let (snap, log) = (snap_name(1), log_name(1));
    assert_eq!((version(&mem, &snap), version(&mem, &log)), (4, 4));
    let (mut store, mut reopened, recovery) = Log::open(mem.clone(), u64::MAX).unwrap();
    assert_eq!(recovery, Recovery::default());
    assert!(reopened.vectors.unread().is_some(), "rows left unread");
    store.read_vectors(&mut reopened.vectors).unwrap();
    assert_eq!(reopened, state);
    put(&mut store, &mut reopened, 5).unwrap();
    put(&mut store, &mut state, 5).unwrap();
    assert_eq!(
        version(&mem, &log),
        4,
        "appended to the old log in its own kind"
    );
    let mem = mem.after_power_cut();
    let (mut store, mut again, recovery) = Log::open(mem.clone(), u64::MAX).unwrap();
    assert_eq!(recovery, Recovery::default());
    store.read_vectors(&mut again.vectors).unwrap();
    assert_eq!(again, state);
    store.compact(&mut again).unwrap();
    assert_eq!(version(&mem, &snap_name(2)), frame::FORMAT_VERSION);
    put(&mut store, &mut again, 6).unwrap();
    put(&mut store, &mut state, 6).unwrap();
    assert_eq!(version(&mem, &log_name(2)), frame::FORMAT_VERSION);
    let (store, mut last, recovery) = Log::open(mem.after_power_cut(), u64::MAX).unwrap();
    assert_eq!(recovery, Recovery::default());
    store.read_vectors(&mut last.vectors).unwrap();
    assert_eq!(last, state);
}
