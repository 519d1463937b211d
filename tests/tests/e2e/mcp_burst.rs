//! The real `hmg-mcp` binary under raw JSON-RPC over stdio: a burst of
//! 1,000 pipelined tool calls with a ping in the middle, then oversized and
//! malformed requests, then a normal walk-through on the same process, then
//! stdin closes. Every request must be answered (with its id), the ping
//! before the burst is through, every acknowledged memorize must be in the
//! store, and the process must exit.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use hmg_e2e::{Shortcuts, hmg_binary};
use serde_json::{Value, json};

const BURST: u64 = 1_000;
const PING: u64 = 5_000;

fn call(id: u64, tool: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
    .to_string()
}

#[test]
fn a_burst_and_malformed_traffic_are_all_answered() {
    let store = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let mcp = hmg_binary().with_file_name(format!("hmg-mcp{}", std::env::consts::EXE_SUFFIX));
    let mut child = Command::new(&mcp)
        .args(["--store"])
        .arg(store.path())
        .args(["--model", "none"])
        .env("HMG_MCP_TIMEOUT_MS", "60000")
        .current_dir(cwd.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("hmg-mcp starts");

    // Read every line as it comes, in order.
    let stdout = child.stdout.take().unwrap();
    let (lines_tx, lines) = mpsc::channel::<Value>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let value: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout carries only JSON-RPC: {e}: {line}"));
            if lines_tx.send(value).is_err() {
                break;
            }
        }
    });

    let mut stdin = child.stdin.take().unwrap();
    let mut send = |line: &str| {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
    };
    send(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "burst", "version": "1"}}})
        .to_string(),
    );
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    // The burst: odd ids memorize, even ids recall; a ping halfway.
    for id in 1..=BURST {
        if id == BURST / 2 {
            send(&json!({"jsonrpc": "2.0", "id": PING, "method": "ping"}).to_string());
        }
        let line = if id % 2 == 1 {
            call(
                id,
                "memory_memorize",
                json!({"content": format!("burst fact {id}: service {} owns queue {}", id % 7, id)}),
            )
        } else {
            call(
                id,
                "memory_recall",
                json!({"query": format!("service {}", id % 7)}),
            )
        };
        send(&line);
    }
    // Oversized (2 MiB of content, the id last, as the TS SDK writes it)
    // and malformed requests.
    let big = "x".repeat(2 << 20);
    send(&format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"memory_memorize","arguments":{{"content":"{big}"}}}},"id":2001}}"#
    ));
    send("{not json");
    send(r#"{"jsonrpc":"1.0","id":2002,"method":"ping"}"#);
    send(r#"{"jsonrpc":"2.0","id":2003,"method":"tools/call","params":"memory_stats"}"#);
    send(r#"{"jsonrpc":"2.0","id":2004}"#);
    send(r#"[{"jsonrpc":"2.0","id":2005,"method":"ping"}]"#);
    // A normal walk-through on the same process.
    send(&call(
        3001,
        "memory_memorize",
        json!({"content": "部署前要先跑 smoke test", "source": "user"}),
    ));
    send(&call(
        3002,
        "memory_recall",
        json!({"query": "smoke test 部署"}),
    ));
    send(&call(3003, "memory_stats", json!({})));

    // Collect the answers.
    // initialize, ping, the burst, 2001-2004, two without id, 3001-3003
    let expected = 1 + 1 + BURST as usize + 4 + 2 + 3;
    let mut by_id: HashMap<String, Value> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut null_ids = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(300);
    while by_id.len() + null_ids.len() < expected {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(message) = lines.recv_timeout(left) else {
            panic!(
                "only {} of {expected} answers within 300 s",
                by_id.len() + null_ids.len()
            );
        };
        match &message["id"] {
            Value::Null => null_ids.push(message),
            id => {
                let key = id.to_string();
                order.push(key.clone());
                assert!(by_id.insert(key, message).is_none(), "one answer per id");
            }
        }
    }

    // The burst: every call answered with a result; memorize acknowledged.
    let mut acknowledged = Vec::new();
    for id in 1..=BURST {
        let answer = &by_id[&id.to_string()];
        let result = &answer["result"];
        assert!(
            result.is_object() && result["isError"] != json!(true),
            "call {id}: {answer}"
        );
        if id % 2 == 1 {
            let s = &result["structuredContent"];
            assert_eq!(s["effect"], "applied", "{answer}");
            acknowledged.push(s["atom_id"].as_str().unwrap().to_owned());
        }
    }
    // The ping was answered while the burst was still being worked through.
    let at = |id: u64| order.iter().position(|k| *k == id.to_string()).unwrap();
    assert!(
        at(PING) < at(BURST),
        "ping answered at {} of {}, after the burst's last call",
        at(PING),
        order.len()
    );
    assert_eq!(by_id[&PING.to_string()]["result"], json!({}));

    // Refusals carry their codes and ids.
    let code = |id: u64| by_id[&id.to_string()]["error"]["code"].as_i64();
    assert_eq!(code(2001), Some(-32600), "{}", by_id["2001"]);
    assert!(
        by_id["2001"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too large")
    );
    for id in [2002, 2003, 2004] {
        assert_eq!(code(id), Some(-32600), "{}", by_id[&id.to_string()]);
    }
    let mut null_codes: Vec<i64> = null_ids
        .iter()
        .map(|m| m["error"]["code"].as_i64().unwrap())
        .collect();
    null_codes.sort();
    assert_eq!(null_codes, [-32700, -32600], "{null_ids:?}");

    // The walk-through works on the same process.
    assert_eq!(
        by_id["3001"]["result"]["structuredContent"]["effect"],
        "applied"
    );
    let recalled = by_id["3002"]["result"]["structuredContent"]["atoms"]
        .as_array()
        .unwrap();
    assert!(
        recalled[0]["content"]
            .as_str()
            .unwrap()
            .contains("smoke test")
    );
    let atoms = by_id["3003"]["result"]["structuredContent"]["atoms"]
        .as_u64()
        .unwrap();
    assert_eq!(atoms, BURST / 2 + 1, "{}", by_id["3003"]);

    // stdin closes: the server exits.
    drop(stdin);
    let closed = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            closed.elapsed() < Duration::from_secs(30),
            "hmg-mcp did not exit after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    reader.join().unwrap();

    // Every acknowledged memorize is in the store.
    let export = hmg_e2e::open(store.path()).export_all().unwrap();
    for id in &acknowledged {
        assert!(export.contains(id.as_str()), "acknowledged {id} is missing");
    }
}

/// Memorize calls queued together, with the model: the server embeds the
/// ones behind the running call in a second instance (on a machine with a
/// second core) and the writes use those vectors. They must be the vectors
/// one instance makes for the same contents: every signal of a recall with
/// `explain` equal to that of a store written one call at a time.
#[test]
fn writes_queued_together_are_embedded_on_a_second_core_as_one_instance_would() {
    let topics = [
        "The staging cluster is rebuilt every Friday night",
        "Customer invoices are stored for seven years",
        "部署前要先跑 smoke test，失敗就回滾",
        "We picked PostgreSQL 16 over MongoDB for the ledger",
        "The on-call rotation changes on Monday at 9am",
        "日誌保留三十天，之後歸檔到冷儲存",
        "Alice owns the payments service and its alerts",
        "The cache key carries the tenant prefix",
        "Rotate the API signing keys every ninety days",
        "前端用 React 18，後端用 Rust 的 axum",
        "Backups are restored once a quarter as a drill",
        "The mobile app talks to the gateway over gRPC",
    ];
    // Twice each topic in other words, so the burst outlasts the second
    // instance's start.
    let contents: Vec<String> = topics
        .iter()
        .flat_map(|t| [t.to_string(), format!("Noted in the weekly review: {t}")])
        .collect();
    let cwd = tempfile::tempdir().unwrap();
    let served = tempfile::tempdir().unwrap();
    let model = hmg_e2e::model_dir();
    let mcp = hmg_binary().with_file_name(format!("hmg-mcp{}", std::env::consts::EXE_SUFFIX));
    let mut child = Command::new(&mcp)
        .arg("--store")
        .arg(served.path())
        .arg("--model")
        .arg(&model)
        .env("HMG_MCP_TIMEOUT_MS", "120000")
        .current_dir(cwd.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hmg-mcp starts");
    {
        let mut stdin = child.stdin.take().unwrap();
        let mut lines = vec![
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "queued", "version": "1"}}})
            .to_string(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        ];
        for (i, content) in contents.iter().enumerate() {
            lines.push(call(
                i as u64 + 1,
                "memory_memorize",
                json!({ "content": content }),
            ));
        }
        // All written before any answer is read; then stdin closes.
        stdin
            .write_all((lines.join("\n") + "\n").as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        stdout.matches(r#""effect":"applied""#).count(),
        contents.len(),
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    assert_eq!(
        stderr.contains("embedded on a second core"),
        cores > 1,
        "{stderr}"
    );

    // The same contents written one call at a time, by one instance.
    let alone = tempfile::tempdir().unwrap();
    let options = |store: &std::path::Path| hmg_cli::SessionOptions {
        store: Some(store.to_owned()),
        model: Some(model.clone()),
        cwd: Some(cwd.path().to_owned()),
        ..Default::default()
    };
    let mut one = hmg_cli::open_session(&options(alone.path())).unwrap();
    for content in &contents {
        let req = hmg_cli::api::MemorizeRequest {
            content: content.clone(),
            source: None,
            scope: one.scope.clone(),
        };
        assert_eq!(
            one.memorize(&req).unwrap().effect,
            hmg_cli::api::Effect::Applied
        );
    }
    let mut two = hmg_cli::open_session(&options(served.path())).unwrap();
    assert_eq!(
        two.stats_all().unwrap().indexes.semantic,
        contents.len() as u64
    );
    for query in [
        "which database for the ledger",
        "日誌要保存多久",
        "who is on call",
    ] {
        let signals = |s: &mut hmg_cli::Session| {
            let req = hmg_cli::api::RecallRequest {
                query: query.to_owned(),
                max_results: Some(contents.len() as u32),
                include_negated: None,
                scope: s.scope.clone(),
                remote: None,
                explain: Some(true),
                include_graph: None,
            };
            let mut hits: Vec<String> = s
                .recall(&req)
                .unwrap()
                .atoms
                .into_iter()
                .map(|a| {
                    // The semantic signal: what the stored vectors give
                    // (the time-dependent ones differ between stores).
                    let semantic = a
                        .explain
                        .unwrap_or_default()
                        .into_iter()
                        .find(|s| s.name == "semantic");
                    format!("{} {:?}", a.content, semantic.map(|s| s.value))
                })
                .collect();
            hits.sort();
            hits
        };
        let (served_hits, alone_hits) = (signals(&mut two), signals(&mut one));
        assert!(
            served_hits.iter().all(|h| h.contains("Some(")),
            "every hit has a semantic signal: {served_hits:?}"
        );
        assert_eq!(served_hits, alone_hits, "{query}");
    }
}
