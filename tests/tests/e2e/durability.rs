//! Crash safety and multi-process sharing, with real processes: a writer
//! killed with SIGKILL mid-stream, and several writers on one store.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::thread;
use std::time::Duration;

use hmg_cli::api::{MemorizeRequest, StoreConfig};
use hmg_e2e::{Shortcuts, hmg_binary, open, open_with};

const CHILD_ENV: &str = "HMG_E2E_WRITER";

/// Small logs, so that writers compact (change generation) under each other.
fn small_log() -> StoreConfig {
    StoreConfig {
        compact_log_bytes: Some(4096),
        ..StoreConfig::default()
    }
}

/// Not a test on its own: the body of a writer child process. It memorizes
/// `count` atoms and prints `ACK <atom_id> <n>` after each acknowledged one.
#[test]
fn writer_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let mut parts = spec.splitn(3, '|');
    let (store, prefix, count) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    let mut session = open_with(Path::new(store), None, &small_log());
    for n in 0..count.parse::<u32>().unwrap() {
        let content = format!("{prefix} memory number {n}");
        let r = session
            .memorize(&MemorizeRequest {
                content,
                source: None,
                scope: session.scope.clone(),
            })
            .unwrap();
        println!("ACK {} {n}", r.atom_id.unwrap());
    }
}

fn spawn_writer(store: &Path, prefix: &str, count: u32) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "durability::writer_child",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD_ENV, format!("{}|{prefix}|{count}", store.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// `(atom_id, n)` for every ACK the child printed (libtest may print its
/// own words before the first one, on the same line).
fn acks(stdout: ChildStdout) -> Vec<(String, u32)> {
    acks_iter(stdout).collect()
}

fn acks_iter(stdout: ChildStdout) -> impl Iterator<Item = (String, u32)> {
    BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| {
            let at = line.find("ACK ")?;
            let mut words = line[at + 4..].split(' ');
            Some((words.next()?.to_owned(), words.next()?.parse().ok()?))
        })
}

#[test]
fn killed_writers_lose_nothing_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let mut acknowledged = Vec::new();
    for round in 0..5u64 {
        let mut child = spawn_writer(dir.path(), &format!("round {round}"), 1_000_000);
        let stdout = child.stdout.take().unwrap();
        let (first_tx, first_rx) = std::sync::mpsc::channel();
        let reader = thread::spawn(move || {
            let mut all = Vec::new();
            for ack in acks_iter(stdout) {
                if all.is_empty() {
                    let _ = first_tx.send(());
                }
                all.push(ack);
            }
            all
        });
        // Start the clock once the writer is writing (it may compile first).
        first_rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the writer never acknowledged a write");
        thread::sleep(Duration::from_millis(50 + round * 60));
        child.kill().unwrap(); // SIGKILL: no destructor, no flush
        child.wait().unwrap();
        let got = reader.join().unwrap();
        acknowledged.extend(got.into_iter().map(|(id, n)| (id, round, n)));
    }
    let mut session = open(dir.path());
    let dump = session.export_all().unwrap();
    for (id, round, n) in &acknowledged {
        assert!(
            dump.contains(id.as_str()),
            "acknowledged atom {id} (round {round}, #{n}) was lost"
        );
    }
    // Nothing half-read: every atom is a whole line of a writer.
    let atoms = dump
        .lines()
        .filter(|l| l.contains("\"type\":\"atom\""))
        .count() as u64;
    assert!(atoms >= acknowledged.len() as u64);
    assert!(
        dump.lines()
            .filter(|l| l.contains("\"type\":\"atom\""))
            .all(|l| l.contains(" memory number "))
    );
    assert_eq!(session.stats_all().unwrap().snapshot_version, atoms);
}

#[test]
fn concurrent_writers_and_the_cli_share_one_store() {
    let dir = tempfile::tempdir().unwrap();
    let mut writers: Vec<Child> = ["alpha", "beta"]
        .iter()
        .map(|p| spawn_writer(dir.path(), p, 60))
        .collect();
    let mut cli_ids = Vec::new();
    for n in 0..10 {
        let out = Command::new(hmg_binary())
            .args([
                "--store",
                dir.path().to_str().unwrap(),
                "--json",
                "--tenant",
                "qiankun",
            ])
            .args([
                "--workspace",
                "mem0ai",
                "--repository",
                "mem0",
                "--branch",
                "main",
                "memorize",
            ])
            .arg(format!("cli memory number {n}"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        cli_ids.push(json["atom_id"].as_str().unwrap().to_owned());
    }
    let mut ids: Vec<String> = writers
        .iter_mut()
        .flat_map(|w| {
            let got = acks(w.stdout.take().unwrap());
            assert!(w.wait().unwrap().success());
            assert_eq!(got.len(), 60);
            got.into_iter().map(|(id, _)| id)
        })
        .collect();
    ids.extend(cli_ids);
    let mut session = open(dir.path());
    let stats = session.stats_all().unwrap();
    assert_eq!((stats.atoms, stats.snapshot_version), (130, 130));
    let dump = session.export_all().unwrap();
    for id in ids {
        assert!(dump.contains(&id), "{id} lost");
    }
}

/// One large transaction (an import of 3,000 atoms) read back through WASI,
/// whose reads are short: it must reopen whole, not look torn.
#[test]
fn large_transactions_reopen_whole() {
    let dir = tempfile::tempdir().unwrap();
    let line = |n: u32| {
        format!(
            "{{\"type\":\"atom\",\"atom_id\":\"01M6A6FT{n:018}\",\"content\":\"bulk memory number {n} about caching\",\"kind\":\"memory\",\"source\":\"agent\",\"scope\":{{\"tenant_id\":\"qiankun\"}},\"epistemic\":\"actual\",\"polarity\":\"affirmative\",\"exposure_state\":\"visible\",\"negated\":false,\"superseded_by\":null,\"created_at\":\"2026-11-01T00:00:00Z\",\"updated_at\":\"2026-11-01T00:00:00Z\"}}"
        )
    };
    let jsonl: String = (0..3000).map(|n| line(n) + "\n").collect();
    let mut session = open(dir.path());
    let r = session.import(&jsonl).unwrap();
    assert_eq!((r.atoms_added, r.reason), (3000, None));
    drop(session);
    let mut session = open(dir.path());
    assert_eq!(session.stats_all().unwrap().atoms, 3000);
}
