//! Damaged stores through the real `hmg` binary: every corruption either is
//! refused with an error naming the file, or opens with every acknowledged
//! memory, or opens having said (stderr and `stats`) which bytes it kept
//! aside. Nothing acknowledged disappears without a word, and a refusal
//! changes nothing on disk.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hmg_cli::api::{MemorizeRequest, StoreConfig};
use hmg_e2e::{Shortcuts, hmg_binary, open_with};

const ATOMS: u32 = 120;

/// A store with a snapshot and a log after it: `(dir, acknowledged ids in
/// order, the generation's log and snapshot file names)`.
fn build(root: &Path) -> (PathBuf, Vec<String>) {
    let dir = root.join("golden");
    let config = StoreConfig {
        compact_log_bytes: Some(6 << 10),
        ..StoreConfig::default()
    };
    let mut session = open_with(&dir, None, &config);
    let mut ids = Vec::new();
    for n in 0..ATOMS {
        let r = session
            .memorize(&MemorizeRequest {
                content: format!("fact {n}: service s{n} listens on port {}", 9000 + n),
                source: None,
                scope: session.scope.clone(),
            })
            .unwrap();
        ids.push(r.atom_id.unwrap());
    }
    drop(session);
    (dir, ids)
}

/// Records (memorize transactions) in a log.
fn count_records(log: &[u8]) -> usize {
    record_boundaries(log).len() - 1
}

/// Offsets where a record of a log starts or the log ends.
fn record_boundaries(log: &[u8]) -> Vec<usize> {
    let mut at = 24;
    let mut out = vec![at];
    while at + 8 <= log.len() {
        let len = u32::from_le_bytes(log[at..at + 4].try_into().unwrap()) as usize;
        at += 8 + len;
        out.push(at);
    }
    out
}

fn store_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn copy(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for (name, bytes) in store_files(from) {
        fs::write(to.join(name), bytes).unwrap();
    }
}

fn hmg(store: &Path, args: &[&str]) -> Output {
    Command::new(hmg_binary())
        .arg("--store")
        .arg(store)
        .args(["--model", "none", "--tenant", "t"])
        .args(args)
        .output()
        .unwrap()
}

fn name_of(dir: &Path, prefix: &str) -> String {
    store_files(dir)
        .into_keys()
        .find(|n| n.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix}* in {}", dir.display()))
}

/// What opening a damaged copy did.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// Refused, naming a store file; nothing on disk changed.
    Refused,
    /// Opened with every acknowledged memory.
    Whole,
    /// Opened without some, having said so and kept the bytes aside.
    KeptAside { missing: usize },
}

fn open_damaged(dir: &Path, ids: &[String]) -> Outcome {
    open_checked(dir, ids, true)
}

/// [`open_damaged`]; `fresh`: the damage is new, so this open must say what
/// it kept aside on stderr (after a repair, `stats` alone still says it).
fn open_checked(dir: &Path, ids: &[String], fresh: bool) -> Outcome {
    let before = store_files(dir);
    let out = hmg(dir, &["--json", "export", "--all"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        assert!(
            stderr.contains(".hmg") && stderr.contains("hmg repair"),
            "a refusal names the file and the way out: {stderr}"
        );
        assert_eq!(store_files(dir), before, "a refusal changed the store");
        return Outcome::Refused;
    }
    let export = String::from_utf8_lossy(&out.stdout);
    let missing = ids
        .iter()
        .filter(|id| !export.contains(id.as_str()))
        .count();
    if missing == 0 {
        return Outcome::Whole;
    }
    assert!(
        !fresh || stderr.contains("kept as kept-"),
        "{missing} acknowledged memories gone without a word: {stderr} {:?}",
        store_files(dir).keys().collect::<Vec<_>>()
    );
    let stats = hmg(dir, &["--json", "stats"]);
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    let kept = stats["kept_aside"].as_array().unwrap();
    assert!(!kept.is_empty(), "stats shows nothing kept aside: {stats}");
    for file in kept {
        let name = file["name"].as_str().unwrap();
        assert!(dir.join(name).is_file(), "{name} is listed but absent");
    }
    Outcome::KeptAside { missing }
}

#[test]
fn corruptions_are_refused_or_reported_never_silent() {
    let root = tempfile::tempdir().unwrap();
    let (golden, ids) = build(root.path());
    let log = name_of(&golden, "log-");
    let snap = name_of(&golden, "snap-");
    assert_ne!(log, "log-0000000000000000.hmg", "the store has compacted");
    let files = store_files(&golden);
    let log_len = files[&log].len();
    let snap_len = files[&snap].len();
    let mut seen: BTreeMap<&str, Vec<Outcome>> = BTreeMap::new();
    let mut trial = 0;
    let mut fresh = || {
        trial += 1;
        let dir = root.path().join(format!("trial-{trial}"));
        copy(&golden, &dir);
        dir
    };

    // The log cut anywhere but exactly between two records (such a cut
    // looks like records never written; docs/format.md says so): what
    // precedes the cut opens, the rest is kept.
    let boundaries = record_boundaries(&files[&log]);
    for cut in (25..log_len)
        .step_by(log_len / 23 + 1)
        .filter(|c| !boundaries.contains(c))
    {
        let dir = fresh();
        let file = fs::OpenOptions::new()
            .write(true)
            .open(dir.join(&log))
            .unwrap();
        file.set_len(cut as u64).unwrap();
        seen.entry("log cut")
            .or_default()
            .push(open_damaged(&dir, &ids));
    }
    // One byte flipped anywhere in the log or the snapshot.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for _ in 0..30 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let (name, len, kind) = if state.is_multiple_of(3) {
            (&snap, snap_len, "snapshot byte flipped")
        } else {
            (&log, log_len, "log byte flipped")
        };
        let dir = fresh();
        let path = dir.join(name);
        let mut bytes = fs::read(&path).unwrap();
        bytes[(state >> 20) as usize % len] ^= 0x41;
        fs::write(&path, bytes).unwrap();
        seen.entry(kind).or_default().push(open_damaged(&dir, &ids));
    }
    // The current snapshot deleted: refused every time, its log untouched.
    let dir = fresh();
    fs::remove_file(dir.join(&snap)).unwrap();
    for _ in 0..2 {
        assert_eq!(open_damaged(&dir, &ids), Outcome::Refused);
        assert_eq!(fs::read(dir.join(&log)).unwrap(), files[&log]);
    }
    // `hmg repair` opens it on purpose: the log kept whole, its records loaded.
    let repaired = hmg(&dir, &["repair"]);
    assert!(repaired.status.success(), "{repaired:?}");
    let kept = dir.join(format!("kept-{}", log));
    assert_eq!(fs::read(&kept).unwrap(), files[&log]);
    assert_eq!(
        open_checked(&dir, &ids, false),
        Outcome::KeptAside {
            missing: ids.len() - count_records(&files[&log])
        }
    );

    // The last record damaged at full length: refused, then repaired.
    let dir = fresh();
    let path = dir.join(&log);
    let mut bytes = fs::read(&path).unwrap();
    let last = bytes.len() - 2;
    bytes[last] ^= 0x41;
    fs::write(&path, bytes).unwrap();
    assert_eq!(open_damaged(&dir, &ids), Outcome::Refused);
    assert!(hmg(&dir, &["repair"]).status.success());
    assert_eq!(
        open_checked(&dir, &ids, false),
        Outcome::KeptAside { missing: 1 }
    );

    // Cuts are never silent and never refused; flips are never silent.
    for outcome in &seen["log cut"] {
        assert!(
            matches!(outcome, Outcome::KeptAside { .. } | Outcome::Whole),
            "{outcome:?}"
        );
    }
    eprintln!("corruption outcomes: {seen:?}");
}

#[test]
fn only_the_engines_files_are_touched_and_config_errors_are_clear() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("store");
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("backup.tmp"), "a user's file").unwrap();
    fs::create_dir(dir.join("cache.tmp")).unwrap();
    for n in 0..3 {
        let out = hmg(&dir, &["memorize", &format!("fact {n} about the queue")]);
        assert!(out.status.success(), "{out:?}");
    }
    // A seal compacts: a new generation, the old one removed.
    let out = hmg(&dir, &["--json", "recall", "fact 0 queue"]);
    let found: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = found["atoms"][0]["atom_id"].as_str().unwrap().to_owned();
    let out = hmg(&dir, &["govern", &id, "seal", "--reason", "test"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        fs::read_to_string(dir.join("backup.tmp")).unwrap(),
        "a user's file"
    );
    assert!(dir.join("cache.tmp").is_dir());

    // A malformed config.json is an error naming it, not another tenant.
    fs::write(dir.join("config.json"), "{\"tenant_id\": ").unwrap();
    let out = Command::new(hmg_binary())
        .arg("--store")
        .arg(&dir)
        .args(["--model", "none", "stats"])
        .env_remove("HMG_TENANT")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("config.json"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn a_whole_store_still_opens_after_all_this() {
    // Sanity: the golden store itself opens whole, through the binary.
    let root = tempfile::tempdir().unwrap();
    let (golden, ids) = build(root.path());
    assert_eq!(open_damaged(&golden, &ids), Outcome::Whole);
    let mut session = hmg_e2e::open(&golden);
    assert!(session.stats_all().unwrap().kept_aside.is_empty());
}
