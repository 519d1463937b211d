//! Stores written by format version 3 (before the snapshot carried its
//! indexes) must keep opening, with the same answers: the fixture was
//! written by the `hmg` CLI of that version (vectors of the real model, a
//! caller's triple, a seal that compacted, a log tail after it). The first
//! write after opening compacts, so the store moves to this build's version with its
//! indexes stored, and reopening gives the same answers again.

use std::path::Path;

use engine::ops::{MemorizeRequest, RecallRequest};
use engine::scope::Filter;
use engine::{Config, FsBackend, Memory, Scope, SystemEnv};

/// The fixture's directory, found at run time: a test binary built from
/// another checkout sharing the target directory must not read that one's.
fn fixture() -> std::path::PathBuf {
    let crate_dir =
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    Path::new(&crate_dir).join("tests/fixtures/v3")
}

fn open(dir: &Path) -> Memory<FsBackend> {
    Memory::open(
        FsBackend::new(dir).unwrap(),
        Config::default(),
        Box::new(SystemEnv),
    )
    .unwrap()
}

fn scope() -> Scope {
    Scope::new("alice", "acme", "shop", "main")
}

fn recall(memory: &mut Memory<FsBackend>, query: &str) -> Vec<String> {
    let req = RecallRequest {
        query: query.into(),
        scope: scope(),
        ..Default::default()
    };
    let hits = memory.recall(&req).unwrap();
    hits.atoms.iter().map(|a| a.content.clone()).collect()
}

fn header_version(dir: &Path) -> u32 {
    let snap = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("snap-"))
        .unwrap();
    let bytes = std::fs::read(snap.path()).unwrap();
    u32::from_le_bytes(bytes[8..12].try_into().unwrap())
}

#[test]
fn version_3_store_opens_answers_the_same_and_moves_to_the_current_version() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["snap-0000000000000001.hmg", "log-0000000000000001.hmg"] {
        std::fs::copy(fixture().join(name), dir.path().join(name)).unwrap();
    }
    assert_eq!(header_version(dir.path()), 3);
    let mut memory = open(dir.path());
    let golden = std::fs::read_to_string(fixture().join("export.jsonl")).unwrap();
    assert_eq!(memory.export(&Filter::WholeStore).unwrap(), golden);
    let before = recall(&mut memory, "資料庫選型");
    assert!(before[0].contains("PostgreSQL"), "{before:?}");
    let graph_before = recall(&mut memory, "billing service");
    // The first write compacts: the snapshot is rewritten with its indexes.
    memory
        .memorize(&MemorizeRequest {
            content: "The staging database is refreshed from production every Sunday".into(),
            source: None,
            scope: scope(),
        })
        .unwrap();
    assert_eq!(
        header_version(dir.path()),
        engine::log::frame::FORMAT_VERSION
    );
    drop(memory);
    let mut memory = open(dir.path());
    assert_eq!(recall(&mut memory, "資料庫選型")[0], before[0]);
    assert_eq!(recall(&mut memory, "billing service"), graph_before);
    assert!(recall(&mut memory, "staging refresh")[0].contains("Sunday"));
    let stats = memory.stats(&Filter::WholeStore).unwrap();
    assert_eq!(stats.atoms, 8);
}
