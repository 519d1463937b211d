//! Fuzzing harnesses (`fuzz/`, cargo-fuzz): each takes arbitrary bytes,
//! drives one part of the engine, and panics when an invariant breaks.
//! `fuzz/regressions/<target>/` keeps every input a run found; the test
//! below replays them all on each `cargo test`.

use std::collections::BTreeMap;

use crate::atom::{AtomId, CorrectAction, GovernAction};
use crate::log::Log;
use crate::log::backend::{Backend, MemBackend};
use crate::memory::{Config, FixedEnv, Memory};
use crate::ops::{CorrectRequest, GovernRequest, MemorizeRequest, RecallRequest};
use crate::scope::{Filter, Scope};
use crate::time::Timestamp;

fn env() -> Box<FixedEnv> {
    Box::new(FixedEnv {
        now: Timestamp(1_784_988_000_000),
        counter: 0,
    })
}

/// Store files from arbitrary bytes: `[split: u16 LE][snapshot][log]`, as
/// generation 1. Opening must never panic; a refusal must change nothing;
/// whatever opens must open the same way again; salvage must open anything
/// whose bytes it can read.
pub fn log_files(data: &[u8]) {
    let split = data
        .get(..2)
        .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]) as usize);
    let rest = data.get(2..).unwrap_or_default();
    let split = split.min(rest.len());
    let mem = MemBackend::new();
    let (snap, log) = rest.split_at(split);
    if !snap.is_empty() {
        mem.write_at("snap-0000000000000001.hmg", 0, snap).unwrap();
    }
    mem.write_at("log-0000000000000001.hmg", 0, log).unwrap();
    let before = mem.all_bytes();
    match Log::open(mem.clone(), u64::MAX) {
        Err(_) => assert_eq!(mem.all_bytes(), before, "a refusal changed the store"),
        Ok((_, state, _)) => {
            let (_, again, recovery) = Log::open(mem.clone(), u64::MAX).expect("reopens");
            assert_eq!(again, state, "a second open reads something else");
            assert_eq!(recovery.dropped_tail_bytes, 0, "the tail was not settled");
        }
    }
    let salvaged = Log::open_with(mem.clone(), u64::MAX, true);
    if let Ok((_, state, _)) = salvaged {
        let (log, again, _) = Log::open(mem, u64::MAX).expect("a salvaged store opens plainly");
        // Salvage reads every row; a plain open leaves the snapshot's rows
        // unread until a call needs them: compared once they are read.
        assert_eq!(loaded(&log, again), state);
    }
}

/// `state` with the snapshot rows its open left unread read in.
fn loaded(log: &Log<MemBackend>, mut state: crate::state::State) -> crate::state::State {
    log.read_vectors(&mut state.vectors)
        .expect("a salvaged store's rows read back");
    state
}

fn fresh_memory(backend: MemBackend, compact: u64) -> Memory<MemBackend> {
    let config = Config {
        compact_log_bytes: compact,
        ..Config::default()
    };
    Memory::open(backend, config, env()).expect("a fresh store opens")
}

/// A small deterministic embedder, so that writes store vector rows.
fn embedder() -> Box<crate::embed::hashed::HashedEmbedder> {
    Box::new(crate::embed::hashed::HashedEmbedder::new(16))
}

/// JSON Lines import of arbitrary text into a store that already holds two
/// tenants' memories: never a panic; whatever is imported survives a
/// reopen; the other tenant's atoms are untouched and nothing imported is
/// visible from a scope that could not see it.
pub fn import(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mem = MemBackend::new();
    let mut memory = fresh_memory(mem.clone(), 4096);
    let alice = Scope::new("alice", "acme", "shop", "main");
    let bob = Scope::new("bob", "acme", "shop", "main");
    for (scope, content) in [(&alice, "alice uses postgres"), (&bob, "bob uses redis")] {
        memory
            .memorize(&MemorizeRequest {
                content: content.into(),
                source: None,
                scope: scope.clone(),
            })
            .unwrap();
    }
    let bob_before = memory.export(&Filter::VisibleFrom(bob.clone())).unwrap();
    let _ = memory.import(&text);
    let whole = memory.export(&Filter::WholeStore).unwrap();
    let reopened = fresh_memory(mem, 4096).export(&Filter::WholeStore).unwrap();
    assert_eq!(whole, reopened, "an import did not survive a reopen");
    // Lines for tenant bob could be imported (an import is trusted with its
    // lines' tenants), but bob's own atoms stay as they were.
    let bob_after = memory.export(&Filter::VisibleFrom(bob)).unwrap();
    // (The header line carries the store's version, which any import moves.)
    for line in bob_before
        .lines()
        .filter(|l| !l.contains(r#""type":"header""#))
    {
        assert!(bob_after.contains(line), "bob's {line} changed");
    }
}

/// The redactor on arbitrary text: never a panic, and redacting its own
/// output changes nothing (no secret survives one pass).
pub fn redact(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let once = crate::text::redact::redact(&text);
    let twice = crate::text::redact::redact(&once.text);
    assert_eq!(twice.text, once.text, "a second pass found more");
    let _ = crate::text::redact::nothing_but_markers(&once.text);
}

/// The tokenizer on arbitrary text: never a panic, no empty token, and
/// the query tokenizer agrees on what is indexable.
pub fn tokenize(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for token in crate::index::tokenize::tokens(&text) {
        assert!(!token.is_empty(), "empty token from {text:?}");
    }
    let _ = crate::index::tokenize::query_tokens(&text);
    let _ = crate::index::tokenize::fold(&text);
    // The dictionary translation: every group has a source and an
    // alternative, and searching with the text over itself finds it.
    for group in crate::index::dictionary::translate(&text)
        .into_iter()
        .flatten()
    {
        assert!(!group.alternatives.is_empty(), "empty group from {text:?}");
        assert!(group.alternatives.iter().all(|a| !a.is_empty()));
    }
    let mut index = crate::index::keyword::KeywordIndex::default();
    let facts = crate::index::keyword::Facts {
        created_at: crate::time::Timestamp(0),
        epistemic: crate::atom::Epistemic::Actual,
        kind: crate::atom::Kind::Memory,
    };
    index.insert(crate::atom::AtomId(1), &text, facts);
    for (_, hit) in index.search(&text).iter() {
        assert!((0.0..=1.0).contains(&hit.coverage) && hit.coverage >= hit.translated);
    }
}

/// Operations from arbitrary bytes against the in-memory backend, with power
/// cuts: after every reboot the store opens (a crash is never refused),
/// every acknowledged memory is there, and sealed content is in no store
/// file.
pub fn operations(data: &[u8]) {
    let mut bytes = data.iter().copied();
    let mut mem = MemBackend::new();
    let mut memory = fresh_memory(mem.clone(), 1024);
    memory.set_embedder(embedder());
    let scope = Scope::new("t", "w", "r", "main");
    // Acknowledged atoms: id → content a seal destroyed (if any).
    let mut acked: BTreeMap<AtomId, Option<String>> = BTreeMap::new();
    let mut contents: BTreeMap<AtomId, String> = BTreeMap::new();
    let mut n = 0u32;
    let pick = |acked: &BTreeMap<AtomId, Option<String>>, b: u8| {
        (!acked.is_empty()).then(|| *acked.keys().nth(b as usize % acked.len()).unwrap())
    };
    while let Some(op) = bytes.next() {
        let arg = bytes.next().unwrap_or(0);
        n += 1;
        match op % 8 {
            0..=2 => {
                let words = ["kafka", "redis", "部署", "postgres", "日誌", "queue"];
                let content = format!(
                    "fact {n}: {} uses {} on port {}",
                    words[arg as usize % words.len()],
                    words[(arg / 7) as usize % words.len()],
                    arg
                );
                let req = MemorizeRequest {
                    content: content.clone(),
                    source: None,
                    scope: scope.clone(),
                };
                if let Ok(r) = memory.memorize(&req)
                    && let Some(id) = r.atom_id
                {
                    acked.entry(id).or_insert(None);
                    contents.entry(id).or_insert(content);
                }
            }
            3 => {
                let _ = memory.recall(&RecallRequest {
                    query: ["kafka port", "部署", "redis"][arg as usize % 3].into(),
                    max_results: Some(5),
                    include_negated: arg % 2 == 0,
                    scope: scope.clone(),
                    remote: false,
                    explain: false,
                    include_graph: arg % 3 == 0,
                });
            }
            4 => {
                if let Some(id) = pick(&acked, arg) {
                    let action = [CorrectAction::Negate, CorrectAction::Replace][arg as usize % 2];
                    let r = memory.correct(&CorrectRequest {
                        target_atom: id.to_string(),
                        action,
                        reason: "fuzz".into(),
                        new_content: Some(format!("fact {n}: replaced")),
                        scope: scope.clone(),
                        by: None,
                    });
                    if let Ok(r) = r
                        && let Some(new) = r.new_atom_id
                    {
                        acked.insert(new, None);
                    }
                }
            }
            5 => {
                if let Some(id) = pick(&acked, arg) {
                    let action = [
                        GovernAction::Seal,
                        GovernAction::Quarantine,
                        GovernAction::Restore,
                    ][arg as usize % 3];
                    let r = memory.govern(&GovernRequest {
                        target_atom: id.to_string(),
                        action,
                        reason: "fuzz".into(),
                        lesson_content: None,
                        scope: scope.clone(),
                        by: None,
                    });
                    if action == GovernAction::Seal
                        && r.is_ok_and(|r| r.effect == crate::ops::Effect::Applied)
                    {
                        acked.insert(id, contents.get(&id).cloned());
                    }
                }
            }
            6 => mem.cut_power_after(u64::from(arg % 6), usize::from(arg / 6)),
            _ => {
                // Reboot: only synced bytes are left.
                mem = mem.after_power_cut();
                memory = Memory::open(mem.clone(), memory.config.clone(), env())
                    .unwrap_or_else(|e| panic!("a crash left a store that does not open: {e}"));
                memory.set_embedder(embedder());
                memory.read_vectors().expect("the vector rows read");
                let rows = memory.state().vectors.rows().cloned().unwrap_or_default();
                for (id, sealed) in &acked {
                    let atom = memory
                        .state()
                        .atom(*id)
                        .unwrap_or_else(|| panic!("acknowledged {id} lost"));
                    if sealed.is_some() {
                        assert!(atom.content.is_empty(), "sealed {id} has content again");
                        assert!(!rows.contains_key(id), "sealed {id} kept its vector");
                    }
                }
                for (id, row) in &rows {
                    assert!(
                        memory.state().atom(*id).is_some(),
                        "a vector without its atom"
                    );
                    assert_eq!(
                        crate::state::Vectors::values(row),
                        16,
                        "a row of another size"
                    );
                }
                for (name, file) in mem.all_bytes() {
                    if crate::log::is_kept(&name) {
                        continue;
                    }
                    for content in acked.values().flatten() {
                        assert!(
                            !file.windows(content.len()).any(|w| w == content.as_bytes()),
                            "sealed {content:?} is still in {name}"
                        );
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Every input a fuzz run kept, replayed.
    #[test]
    fn fuzz_regressions_stay_fixed() {
        // Found at run time, not from the checkout the binary was built in.
        let crate_dir = std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
        let root = Path::new(&crate_dir).join("../fuzz/regressions");
        type Target = fn(&[u8]);
        let targets: [(&str, Target); 5] = [
            ("log_files", super::log_files),
            ("import", super::import),
            ("redact", super::redact),
            ("tokenize", super::tokenize),
            ("operations", super::operations),
        ];
        let mut replayed = 0;
        for (name, target) in targets {
            let Ok(dir) = std::fs::read_dir(root.join(name)) else {
                continue;
            };
            for entry in dir {
                let path = entry.unwrap().path();
                target(&std::fs::read(&path).unwrap());
                replayed += 1;
            }
        }
        eprintln!("replayed {replayed} fuzz regression inputs");
    }
}
