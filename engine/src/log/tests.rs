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

fn put(store: &mut Log<MemBackend>, state: &mut State, n: u128) -> Result<()> {
    let txn = state.txn(vec![Mutation::PutAtom(atom(
        n,
        &format!("memory number {n}"),
    ))]);
    store.commit(state, txn)
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
fn torn_tail_is_cut_and_reported() {
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
}

#[test]
fn damage_in_the_middle_is_refused_not_dropped() {
    let mem = MemBackend::new();
    let (mut store, mut state, _) = Log::open(mem.clone(), u64::MAX).unwrap();
    for n in 1..=3 {
        put(&mut store, &mut state, n).unwrap();
    }
    mem.corrupt(&log_name(0), HEADER_LEN as usize + 12);
    match Log::open(mem.clone(), u64::MAX) {
        Err(Error::Corrupt(msg)) => assert!(msg.contains("refusing")),
        other => panic!(
            "expected corruption, got {:?}",
            other.map(|(_, s, _)| s.version)
        ),
    }
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
    store.compact(&state).unwrap();
    let (_, reopened, _) = Log::open(mem, u64::MAX).unwrap();
    assert_eq!(reopened.atoms.len(), 301);
}
