//! Stores written by format version 1 must keep opening: the fixture was
//! written by the `hmg` CLI (a snapshot from a derive_lesson compaction plus a
//! log tail) and its export is the golden answer.

use std::path::Path;

use engine::scope::Filter;
use engine::{Config, FsBackend, Memory, SystemEnv};

/// The fixture's directory, found at run time: a test binary built from
/// another checkout sharing the target directory must not read that one's.
fn fixture() -> std::path::PathBuf {
    let crate_dir =
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    Path::new(&crate_dir).join("tests/fixtures/v1")
}

fn copy_fixture(to: &Path) {
    for name in ["snap-0000000000000001.hmg", "log-0000000000000001.hmg"] {
        std::fs::copy(fixture().join(name), to.join(name)).unwrap();
    }
}

#[test]
fn version_1_store_opens_and_exports_identically() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture(dir.path());
    let mut memory = Memory::open(
        FsBackend::new(dir.path()).unwrap(),
        Config::default(),
        Box::new(SystemEnv),
    )
    .unwrap();
    assert_eq!(memory.recovery().dropped_tail_bytes, 0);
    let golden = std::fs::read_to_string(fixture().join("export.jsonl")).unwrap();
    assert_eq!(memory.export(&Filter::WholeStore).unwrap(), golden);
    let stats = memory.stats(&Filter::WholeStore).unwrap();
    assert_eq!(
        (stats.atoms, stats.edges, stats.snapshot_version),
        (7, 2, 8)
    );
}

#[test]
fn version_1_store_with_a_torn_tail_still_opens() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture(dir.path());
    let log = dir.path().join("log-0000000000000001.hmg");
    let bytes = std::fs::read(&log).unwrap();
    std::fs::write(&log, &bytes[..bytes.len() - 5]).unwrap();
    let mut memory = Memory::open(
        FsBackend::new(dir.path()).unwrap(),
        Config::default(),
        Box::new(SystemEnv),
    )
    .unwrap();
    assert!(memory.recovery().dropped_tail_bytes > 0);
    // The last transaction (the handoff) was torn off; everything before it is whole.
    assert_eq!(
        memory.stats(&Filter::WholeStore).unwrap().snapshot_version,
        7
    );
}
