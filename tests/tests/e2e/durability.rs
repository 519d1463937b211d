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

/// A long import with the model (each content embedded) beside a CLI
/// recall loop and an MCP server: the import embeds outside the store lock
/// and takes it only to write, so no caller waits for its embedding. Bound:
/// every call answers within 5 s and within a third of the import's time
/// (when the import held the lock while embedding, the first call waited
/// for nearly all of it — 18 s here — and hmg-mcp calls ran into their
/// timeout).
#[test]
fn a_long_import_holds_no_caller_up() {
    use std::io::Write;
    use std::time::Instant;

    const BOUND: Duration = Duration::from_secs(5);
    let dir = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let model = hmg_e2e::model_dir();
    let cli = |args: &[&str]| {
        let mut cmd = Command::new(hmg_binary());
        cmd.arg("--store")
            .arg(dir.path())
            .arg("--model")
            .arg(&model)
            .env("HMG_REQUIRE_PRELOADED", "1")
            .args([
                "--tenant",
                "t",
                "--workspace",
                "acme",
                "--repository",
                "shop",
            ])
            .args(["--branch", "main"])
            .args(args);
        cmd
    };
    let out = cli(&["memorize", "The deploy target is ECS in us-east-1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut lines = String::new();
    for i in 0..400u128 {
        const ALPHABET: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
        let v = (1_793_491_200_000u128 << 80) | (i + 1);
        let id: String = (0..26)
            .map(|k| ALPHABET[((v >> (5 * (25 - k))) & 31) as usize] as char)
            .collect();
        let line = serde_json::json!({
            "type": "atom", "atom_id": id, "kind": "memory", "source": "agent",
            "content": format!("imported decision {i}: billing service {i} caches in Redis for {} days", i % 7),
            "scope": {"tenant_id": "t", "workspace": "acme", "repository": "shop", "branch": "main"},
            "epistemic": "actual", "polarity": "affirmative", "exposure_state": "visible",
            "negated": false, "superseded_by": null,
            "created_at": "2026-11-01T00:00:00Z", "updated_at": "2026-11-01T00:00:00Z"
        });
        lines.push_str(&format!("{line}\n"));
    }
    let file = dir.path().join("import.jsonl");
    std::fs::write(&file, lines).unwrap();

    let mcp_bin = hmg_binary().with_file_name(format!("hmg-mcp{}", std::env::consts::EXE_SUFFIX));
    let mut mcp = Command::new(mcp_bin)
        .arg("--store")
        .arg(dir.path())
        .arg("--model")
        .arg(&model)
        .env("HMG_REQUIRE_PRELOADED", "1")
        .current_dir(cwd.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = mcp.stdin.take().unwrap();
    let mut replies = BufReader::new(mcp.stdout.take().unwrap()).lines();
    let mut ask = |id: u64, line: serde_json::Value| -> Duration {
        let started = Instant::now();
        writeln!(stdin, "{line}").unwrap();
        if id == u64::MAX {
            return Duration::ZERO;
        }
        loop {
            let reply: serde_json::Value =
                serde_json::from_str(&replies.next().unwrap().unwrap()).unwrap();
            if reply["id"] == id {
                assert!(reply.get("error").is_none(), "{reply}");
                assert_ne!(reply["result"]["isError"], true, "{reply}");
                return started.elapsed();
            }
        }
    };
    ask(
        0,
        serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "lock", "version": "1"}}}),
    );
    // A notification: no reply to wait for.
    ask(
        u64::MAX,
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    let tool = |id: u64, name: &str, arguments: serde_json::Value| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                           "params": {"name": name, "arguments": arguments}})
    };
    // Warm both up (the first call of a process maps the engine image).
    ask(
        1,
        tool(1, "memory_recall", serde_json::json!({"query": "deploy"})),
    );

    let started = Instant::now();
    let mut import = cli(&["import", file.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut waits = Vec::new();
    let mut id = 10;
    while import.try_wait().unwrap().is_none() {
        let t = Instant::now();
        let out = cli(&["--json", "recall", "deploy target"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        waits.push(("cli recall", t.elapsed()));
        id += 1;
        let content = format!("mcp note {id}: the queue worker restarts nightly");
        waits.push((
            "mcp memorize",
            ask(
                id,
                tool(
                    id,
                    "memory_memorize",
                    serde_json::json!({"content": content}),
                ),
            ),
        ));
        id += 1;
        waits.push((
            "mcp recall",
            ask(
                id,
                tool(
                    id,
                    "memory_recall",
                    serde_json::json!({"query": "queue worker"}),
                ),
            ),
        ));
    }
    let took = started.elapsed();
    assert!(import.wait().unwrap().success());
    drop(stdin);
    let _ = mcp.wait();
    assert!(
        waits.len() >= 6,
        "the import ended before the callers ran: {took:?}"
    );
    let longest = waits.iter().map(|w| w.1).max().unwrap();
    assert!(
        longest < BOUND && longest * 3 < took,
        "import took {took:?}; the longest call waited {longest:?}: {waits:?}"
    );
    let out = cli(&["--json", "stats"]).output().unwrap();
    let stats: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stats["indexes"]["semantic"], stats["atoms"], "{stats}");
}
