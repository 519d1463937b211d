//! The MCP server in process: an rmcp client over an in-memory duplex,
//! the real engine component behind it. Every tool, every refusal, malformed
//! arguments, scope override, timeout, and the golden tool list.

use std::path::Path;
use std::time::Duration;

use hmg_cli::api::StoreConfig;
use hmg_cli::{Runtime, default_cache_dir};
use hmg_e2e::{Shortcuts, scope};
use hmg_mcp::HmgServer;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

async fn connect(store: &Path, timeout: Duration) -> RunningService<RoleClient, ()> {
    // Synchronous engine calls must not run on an async worker.
    let session = tokio::task::block_in_place(|| {
        let runtime = Runtime::new(default_cache_dir().as_deref()).unwrap();
        runtime
            .open(store, None, &StoreConfig::default(), scope(), "agent")
            .unwrap()
    });
    let (server, _engine) = HmgServer::new(session, timeout);
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    // The server's own transport, as `hmg-mcp` runs it on stdio.
    let (input, output) = tokio::io::split(server_io);
    tokio::spawn(hmg_mcp::stdio::serve(
        server,
        tokio::io::BufReader::new(input),
        output,
        timeout * 2,
    ));
    ().serve(client_io).await.unwrap()
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> CallToolResult {
    let params = CallToolRequestParams::new(tool.to_owned())
        .with_arguments(args.as_object().unwrap().clone());
    client.call_tool(params).await.unwrap()
}

/// The structured content of a successful call.
async fn ok(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> Value {
    let r = call(client, tool, args.clone()).await;
    assert_ne!(r.is_error, Some(true), "{tool} {args} -> {r:?}");
    let text = r.content[0].as_text().unwrap().text.clone();
    assert!(
        !text.trim_start().starts_with('{'),
        "the text block is for people: {text}"
    );
    r.structured_content.unwrap()
}

fn id(v: &Value, key: &str) -> String {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} in {v}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_and_every_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(dir.path(), Duration::from_secs(30)).await;

    let m = ok(
        &c,
        "memory_memorize",
        json!({"content": "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB", "source": "user"}),
    )
    .await;
    assert_eq!(m["effect"], "applied");
    let pg = id(&m, "atom_id");
    let d = ok(
        &c,
        "memory_memorize",
        json!({"content": "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB"}),
    )
    .await;
    assert_eq!(
        (d["effect"].as_str(), d["deduped_with"].as_str()),
        (Some("no_op"), Some(pg.as_str()))
    );
    for bad in ["", "   ", "password=hunter2"] {
        let r = ok(&c, "memory_memorize", json!({"content": bad})).await;
        assert_eq!(r["effect"], "rejected");
        assert!(r["reason"].is_string() && r.get("atom_id").is_none());
    }

    let r = ok(
        &c,
        "memory_recall",
        json!({"query": "資料庫選型", "max_results": 5}),
    )
    .await;
    assert_eq!(r["atoms"][0]["atom_id"], pg.as_str());
    assert!(r["atoms"][0]["score"].as_f64().unwrap() > 0.0);
    let r = ok(&c, "memory_recall", json!({"query": " "})).await;
    assert!(r["reason"].is_string());

    let r = ok(&c, "memory_correct", json!({"target_atom": pg, "action": "replace", "reason": "已升級", "new_content": "專案用 PostgreSQL 17 做主資料庫"})).await;
    let pg17 = id(&r, "new_atom_id");
    let refusals = [
        json!({"target_atom": pg, "action": "replace", "reason": "old", "new_content": "x"}),
        json!({"target_atom": pg17, "action": "replace", "reason": "no content"}),
        json!({"target_atom": "nope", "action": "negate", "reason": "bad id"}),
        json!({"target_atom": pg17, "action": "demote", "reason": ""}),
        json!({"target_atom": pg17, "action": "confirm_actual", "reason": "already actual"}),
    ];
    for args in refusals {
        let r = ok(&c, "memory_correct", args.clone()).await;
        assert_eq!(r["effect"], "rejected", "{args}");
        assert!(r["reason"].is_string());
    }
    assert_eq!(
        ok(
            &c,
            "memory_correct",
            json!({"target_atom": pg17, "action": "negate", "reason": "gone"})
        )
        .await["effect"],
        "applied"
    );
    assert_eq!(
        ok(
            &c,
            "memory_correct",
            json!({"target_atom": pg17, "action": "negate", "reason": "twice"})
        )
        .await["effect"],
        "rejected"
    );

    let s = id(
        &ok(
            &c,
            "memory_memorize",
            json!({"content": "資料庫密碼是 pg_admin_123"}),
        )
        .await,
        "atom_id",
    );
    let r = ok(
        &c,
        "memory_govern",
        json!({"target_atom": s, "action": "derive_lesson", "reason": "secret"}),
    )
    .await;
    assert_eq!(
        r["effect"], "rejected",
        "derive_lesson needs lesson_content"
    );
    let r = ok(&c, "memory_govern", json!({"target_atom": s, "action": "derive_lesson", "reason": "secret", "lesson_content": "不要在記憶中儲存密碼"})).await;
    assert!(r["lesson_atom_id"].is_string());
    for (action, effect) in [
        ("seal", "rejected"),
        ("quarantine", "rejected"),
        ("restore", "rejected"),
        ("tombstone", "applied"),
    ] {
        let r = ok(
            &c,
            "memory_govern",
            json!({"target_atom": s, "action": action, "reason": "r"}),
        )
        .await;
        assert_eq!(r["effect"], effect, "{action}");
    }
    let k = id(
        &ok(&c, "memory_memorize", json!({"content": "用 K8s 部署"})).await,
        "atom_id",
    );
    assert_eq!(
        ok(
            &c,
            "memory_govern",
            json!({"target_atom": k, "action": "quarantine", "reason": "check"})
        )
        .await["effect"],
        "applied"
    );
    assert_eq!(
        ok(
            &c,
            "memory_govern",
            json!({"target_atom": k, "action": "restore", "reason": "ok"})
        )
        .await["effect"],
        "applied"
    );
    assert_eq!(
        ok(
            &c,
            "memory_govern",
            json!({"target_atom": k, "action": "seal", "reason": "done"})
        )
        .await["effect"],
        "applied"
    );

    let h = ok(
        &c,
        "memory_handoff",
        json!({"summary": "修復了 login.py；下一步補測試", "source": "agent"}),
    )
    .await;
    assert_eq!(h["effect"], "applied");
    assert_eq!(
        ok(&c, "memory_handoff", json!({"summary": "  "})).await["effect"],
        "rejected"
    );

    let st = ok(&c, "memory_stats", json!({})).await;
    assert_eq!(
        (st["atoms"].as_u64(), st["edges"].as_u64()),
        (Some(6), Some(2))
    );
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_graph_and_capture_tools() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(dir.path(), Duration::from_secs(30)).await;
    let o = ok(
        &c,
        "memory_observe",
        json!({"turn": "我叫張三。我們決定用 PostgreSQL 跑在 Kubernetes 上"}),
    )
    .await;
    assert_eq!(
        (o["mode"].as_str(), o["excluded"].is_null()),
        (Some("standard"), true)
    );
    let signals: Vec<&str> = o["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["signal"].as_str().unwrap())
        .collect();
    assert_eq!(signals, ["profile", "decision"]);
    let q = ok(
        &c,
        "memory_observe",
        json!({"turn": "what is my name?", "mode": "relaxed"}),
    )
    .await;
    assert_eq!(q["excluded"], "question");
    let e = ok(
        &c,
        "memory_graph",
        json!({"op": "entities", "text": "用 Postgres 和 k8s"}),
    )
    .await;
    assert_eq!(
        e["entities"],
        json!([{"name": "PostgreSQL", "type": "technology"}, {"name": "Kubernetes", "type": "technology"}])
    );
    let n = ok(
        &c,
        "memory_graph",
        json!({"op": "neighborhood", "entity": "postgres"}),
    )
    .await;
    assert!(
        n["edges"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["relation"] == "located_in"),
        "{n}"
    );
    let r = ok(
        &c,
        "memory_graph",
        json!({"op": "relate", "entity": "payment-service", "relation": "depends_on", "target": "Redis"}),
    )
    .await;
    assert_eq!(r["effect"], "applied");
    let p = ok(
        &c,
        "memory_graph",
        json!({"op": "path", "entity": "payment-service", "target": "Redis"}),
    )
    .await;
    assert_eq!(p["found"], true);
    let bad = call(&c, "memory_graph", json!({"op": "path", "entity": "Redis"})).await;
    assert_eq!(bad.is_error, Some(true), "path needs a target");
    let recalled = ok(
        &c,
        "memory_recall",
        json!({"query": "k8s", "include_graph": true}),
    )
    .await;
    assert_eq!(recalled["graph"]["nodes"][0]["name"], "Kubernetes");
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_arguments_are_tool_errors_and_the_server_lives_on() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(dir.path(), Duration::from_secs(30)).await;
    for (tool, args) in [
        ("memory_memorize", json!({})),
        ("memory_memorize", json!({"content": 42})),
        ("memory_recall", json!({"query": "x", "max_results": -1})),
        (
            "memory_correct",
            json!({"target_atom": "x", "action": "undo", "reason": "r"}),
        ),
        ("memory_govern", json!({"target_atom": "x", "reason": "r"})),
    ] {
        let r = call(&c, tool, args.clone()).await;
        assert_eq!(r.is_error, Some(true), "{tool} {args} -> {r:?}");
    }
    let err = c
        .call_tool(CallToolRequestParams::new("memory_forget"))
        .await;
    assert!(err.is_err(), "an unknown tool is a protocol error");
    assert_eq!(
        ok(&c, "memory_memorize", json!({"content": "still alive"})).await["effect"],
        "applied"
    );
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_scope_is_overridden() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(dir.path(), Duration::from_secs(30)).await;
    let evil = json!({"tenant_id": "mallory", "workspace": "x", "repository": "y", "branch": "z"});
    let m = ok(
        &c,
        "memory_memorize",
        json!({"content": "scoped by the server", "scope": evil}),
    )
    .await;
    let r = ok(
        &c,
        "memory_recall",
        json!({"query": "scoped server", "scope": evil}),
    )
    .await;
    assert_eq!(r["atoms"][0]["atom_id"], m["atom_id"]);
    c.cancel().await.unwrap();
    let h = tokio::task::block_in_place(|| {
        let runtime = Runtime::new(default_cache_dir().as_deref()).unwrap();
        let mut s = runtime
            .open(dir.path(), None, &StoreConfig::default(), scope(), "test")
            .unwrap();
        s.history_of(m["atom_id"].as_str().unwrap()).unwrap()
    });
    assert_eq!(h.current.unwrap().scope, scope());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_call_times_out_instead_of_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(dir.path(), Duration::from_millis(300)).await;
    // Another process holds the store's lock.
    let lock = std::fs::File::open(dir.path()).unwrap();
    lock.lock().unwrap();
    let started = std::time::Instant::now();
    // The first call waits for the lock as long as the timeout allows, then
    // fails; the ones queued behind it are not started after their deadline
    // and say that nothing was done.
    let calls = (0..3).map(|_| c.call_tool(CallToolRequestParams::new("memory_stats")));
    let outcomes = futures::future::join_all(calls).await;
    let elapsed = started.elapsed();
    let messages: Vec<String> = outcomes
        .into_iter()
        .map(|r| match r {
            Err(e) => e.to_string(),
            Ok(result) => panic!("expected an error, got {result:?}"),
        })
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("locked by another process for over 300 ms")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("was not run (nothing was done)")),
        "{messages:?}"
    );
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    lock.unlock().unwrap();
    // The server lives on.
    let r = c
        .call_tool(CallToolRequestParams::new("memory_stats"))
        .await;
    assert!(r.is_ok(), "{r:?}");
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_list_matches_the_golden_file() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(dir.path(), Duration::from_secs(30)).await;
    let mut tools = c.list_all_tools().await.unwrap();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "memory_correct",
            "memory_govern",
            "memory_graph",
            "memory_handoff",
            "memory_memorize",
            "memory_observe",
            "memory_recall",
            "memory_stats"
        ]
    );
    let required = |name: &str| -> Vec<String> {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        let mut r: Vec<String> = tool
            .input_schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
        r.sort();
        r
    };
    assert_eq!(required("memory_memorize"), ["content"]);
    assert_eq!(required("memory_recall"), ["query"]);
    assert_eq!(
        required("memory_correct"),
        ["action", "reason", "target_atom"]
    );
    assert_eq!(
        required("memory_govern"),
        ["action", "reason", "target_atom"]
    );
    assert_eq!(required("memory_handoff"), ["summary"]);
    assert!(required("memory_stats").is_empty());
    assert_eq!(required("memory_graph"), ["op"]);
    assert_eq!(required("memory_observe"), ["turn"]);
    let actual = serde_json::to_string_pretty(&tools).unwrap() + "\n";
    // Found at run time: a binary built from another checkout sharing the
    // target directory must compare with this checkout's golden file.
    let crate_dir =
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    let golden = Path::new(&crate_dir).join("tests/golden/tools.json");
    if std::env::var_os("HMG_BLESS").is_some() {
        std::fs::write(&golden, &actual).unwrap();
    }
    let expected =
        std::fs::read_to_string(&golden).expect("golden file (refresh with HMG_BLESS=1)");
    assert_eq!(
        actual, expected,
        "tools/list changed; review and refresh with HMG_BLESS=1"
    );
    c.cancel().await.unwrap();
}
