//! Crash safety and multi-process sharing, with real processes: a writer
//! killed with SIGKILL mid-stream, and several writers on one store.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::thread;
use std::time::Duration;

use hmg_cli::api::{MemorizeRequest, StoreConfig};
use hmg_e2e::{hmg_binary, open, open_with};

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
    let mut session = open_with(Path::new(store), &small_log());
    for n in 0..count.parse::<u32>().unwrap() {
        let content = format!("{prefix} memory number {n}");
        let r = session
            .memorize(&MemorizeRequest {
                content,
                source: None,
                scope: None,
            })
            .unwrap();
        println!("ACK {} {n}", r.atom_id.unwrap());
    }
}

fn spawn_writer(store: &Path, prefix: &str, count: u32) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "writer_child",
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
    BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| {
            let at = line.find("ACK ")?;
            let mut words = line[at + 4..].split(' ');
            Some((words.next()?.to_owned(), words.next()?.parse().ok()?))
        })
        .collect()
}

#[test]
fn killed_writers_lose_nothing_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let mut acknowledged = Vec::new();
    for round in 0..5u64 {
        let mut child = spawn_writer(dir.path(), &format!("round {round}"), 1_000_000);
        let stdout = child.stdout.take().unwrap();
        let reader = thread::spawn(move || acks(stdout));
        thread::sleep(Duration::from_millis(150 + round * 70));
        child.kill().unwrap(); // SIGKILL: no destructor, no flush
        child.wait().unwrap();
        let got = reader.join().unwrap();
        assert!(
            !got.is_empty(),
            "round {round}: the writer acknowledged nothing"
        );
        acknowledged.extend(got.into_iter().map(|(id, n)| (id, round, n)));
    }
    let mut session = open(dir.path());
    let dump = session.export(None).unwrap();
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
    assert_eq!(session.stats(None).unwrap().snapshot_version, atoms);
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
    let stats = session.stats(None).unwrap();
    assert_eq!((stats.atoms, stats.snapshot_version), (130, 130));
    let dump = session.export(None).unwrap();
    for id in ids {
        assert!(dump.contains(&id), "{id} lost");
    }
}
