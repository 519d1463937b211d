//! The `hmg` binary: the seed walk-through with `--json`, exact field names,
//! exit codes, one-line errors, scope inference from git, and the
//! session-start hook.

use std::path::Path;
use std::process::{Command, Output};

use hmg_e2e::{files_containing, hmg_binary, model_dir};
use serde_json::Value;

struct Cli {
    store: tempfile::TempDir,
}

impl Cli {
    fn new() -> Cli {
        Cli {
            store: tempfile::tempdir().unwrap(),
        }
    }

    fn command(&self, cwd: Option<&Path>) -> Command {
        let mut cmd = Command::new(hmg_binary());
        cmd.arg("--store")
            .arg(self.store.path())
            .arg("--model")
            .arg(model_dir())
            // ./setup.sh prepared the pre-initialised engine: use it or fail.
            .env("HMG_REQUIRE_PRELOADED", "1")
            .env_remove("HMG_STORE")
            .env_remove("HMG_SESSION");
        if let Some(dir) = cwd {
            cmd.current_dir(dir);
        }
        cmd
    }

    fn raw(&self, args: &[&str]) -> Output {
        self.command(None)
            .args([
                "--tenant",
                "qiankun",
                "--workspace",
                "mem0ai",
                "--repository",
                "mem0",
                "--branch",
                "main",
            ])
            .args(args)
            .output()
            .unwrap()
    }

    /// Runs with `--json`; returns the object and the exit code.
    fn json(&self, args: &[&str]) -> (Value, i32) {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = self.raw(&all);
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(
            stdout.lines().count(),
            1,
            "exactly one JSON line expected, got {stdout:?}"
        );
        (
            serde_json::from_str(&stdout).unwrap(),
            out.status.code().unwrap(),
        )
    }

    fn ok(&self, args: &[&str]) -> Value {
        let (value, code) = self.json(args);
        assert_eq!(code, 0, "{args:?} -> {value}");
        value
    }
}

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    keys
}

fn s<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} missing in {value}"))
}

#[test]
fn seed_walkthrough_with_json() {
    let cli = Cli::new();
    let m = cli.ok(&[
        "memorize",
        "--source",
        "user",
        "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB",
    ]);
    assert_eq!(keys(&m), ["atom_id", "effect", "redactions"]);
    assert_eq!(m["effect"], "applied");
    assert_eq!(m["redactions"], serde_json::json!([]));
    let pg16 = s(&m, "atom_id").to_owned();

    // What was hidden is named, per kind; the label stays.
    let red = cli.ok(&[
        "memorize",
        "staging DB_PASSWORD=Pg4dm1n!2024，卡號 4111 1111 1111 1111",
    ]);
    assert_eq!(
        red["redactions"],
        serde_json::json!([
            {"kind": "config-secret", "count": 1},
            {"kind": "payment-card", "count": 1}
        ])
    );

    let d = cli.ok(&["memorize", "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB"]);
    assert_eq!(
        keys(&d),
        ["atom_id", "deduped_with", "effect", "reason", "redactions"]
    );
    assert_eq!(
        (d["effect"].as_str(), s(&d, "deduped_with")),
        (Some("no_op"), pg16.as_str())
    );

    let r = cli.ok(&["recall", "資料庫選型"]);
    assert_eq!(keys(&r), ["atoms"]);
    let hit = &r["atoms"][0];
    assert_eq!(
        keys(hit),
        [
            "atom_id",
            "content",
            "created_at",
            "epistemic",
            "kind",
            "negated",
            "polarity",
            "score",
            "source"
        ]
    );
    assert_eq!(
        (s(hit, "atom_id"), s(hit, "source")),
        (pg16.as_str(), "user")
    );
    let score = hit["score"].as_f64().unwrap();
    assert!(score > 0.0 && score <= 1.0);

    let c = cli.ok(&[
        "correct",
        &pg16,
        "replace",
        "--reason",
        "已升級到 PostgreSQL 17",
        "--new-content",
        "專案用 PostgreSQL 17 做主資料庫",
    ]);
    assert_eq!(
        keys(&c),
        ["effect", "new_atom_id", "redactions", "target_atom"]
    );
    let pg17 = s(&c, "new_atom_id").to_owned();

    let (rej, code) = cli.json(&["correct", &pg16, "negate", "--reason", "superseded already"]);
    assert_eq!(code, 3);
    assert_eq!(
        keys(&rej),
        ["effect", "reason", "redactions", "target_atom"]
    );
    assert_eq!(rej["effect"], "rejected");

    let h = cli.ok(&["history", &pg17]);
    assert_eq!(
        keys(&h),
        [
            "corrections",
            "current",
            "exposure_history",
            "relations",
            "triples"
        ]
    );
    assert_eq!(
        keys(&h["relations"]),
        ["related_lessons", "superseded_by", "supersedes"]
    );
    assert_eq!(h["relations"]["supersedes"][0], pg16.as_str());
    assert_eq!(h["corrections"][0]["reason"], "已升級到 PostgreSQL 17");

    let mongo = s(&cli.ok(&["memorize", "用 MongoDB 做會話快取"]), "atom_id").to_owned();
    cli.ok(&[
        "correct",
        &mongo,
        "negate",
        "--reason",
        "MongoDB 快取方案已廢棄，改用 Redis",
    ]);
    let ids = |v: &Value| -> Vec<String> {
        v["atoms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["atom_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(!ids(&cli.ok(&["recall", "MongoDB 會話快取"])).contains(&mongo));
    let negated = cli.ok(&["recall", "--include-negated", "MongoDB 會話快取"]);
    assert_eq!(negated["atoms"][0]["negated"], true);
    cli.ok(&[
        "correct",
        &mongo,
        "replace",
        "--reason",
        "negate 有誤",
        "--new-content",
        "用 MongoDB 做會話快取，仍在使用",
    ]);

    let kong = s(&cli.ok(&["memorize", "考慮 API 閘道器用 Kong"]), "atom_id").to_owned();
    for (action, code) in [
        ("confirm_actual", 0),
        ("confirm_actual", 3),
        ("confirm_necessary", 0),
        ("confirm_actual", 3),
        ("demote", 0),
        ("demote", 3),
    ] {
        assert_eq!(
            cli.json(&["correct", &kong, action, "--reason", "ladder"])
                .1,
            code,
            "{action}"
        );
    }

    let (red, code) = cli.json(&["memorize", "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789"]);
    assert_eq!((red["effect"].as_str(), code), (Some("rejected"), 3));

    let secret = s(
        &cli.ok(&["memorize", "資料庫密碼是 女兒生日加貓名"]),
        "atom_id",
    )
    .to_owned();
    let g = cli.ok(&[
        "govern",
        &secret,
        "derive_lesson",
        "--reason",
        "內容含明文資料庫密碼",
        "--lesson-content",
        "不要在記憶中儲存資料庫密碼和連線串，使用環境變數",
    ]);
    assert_eq!(
        keys(&g),
        ["effect", "lesson_atom_id", "redactions", "target_atom"]
    );
    assert!(files_containing(cli.store.path(), "女兒生日加貓名").is_empty());
    let sealed = cli.ok(&["history", &secret]);
    assert_eq!(
        sealed["current"]["content"],
        "[governed payload hidden: sealed]"
    );
    assert_eq!(
        keys(&sealed["exposure_history"][0]),
        ["at", "by", "from", "reason", "to"]
    );
    assert_eq!(sealed["exposure_history"][0]["by"], "qiankun");

    let k8s = s(&cli.ok(&["memorize", "用 K8s 部署"]), "atom_id").to_owned();
    cli.ok(&["govern", &k8s, "quarantine", "--reason", "待確認"]);
    assert!(!ids(&cli.ok(&["recall", "K8s"])).contains(&k8s));
    cli.ok(&["govern", &k8s, "restore", "--reason", "確認"]);
    cli.ok(&["govern", &k8s, "tombstone", "--reason", "不再需要"]);

    let ho = cli.ok(&[
        "handoff",
        "修復了 login.py 的空指標問題；下一步：補整合測試",
    ]);
    assert_eq!(keys(&ho), ["atom_id", "effect", "redactions"]);
    let brief = cli.ok(&["brief"]);
    assert!(s(&brief, "text").contains("login.py"));

    let st = cli.ok(&["stats"]);
    assert_eq!(
        keys(&st),
        [
            "atoms",
            "edges",
            "indexes",
            "kept_aside",
            "model",
            "snapshot_version"
        ]
    );
    assert!(s(&st, "model").starts_with("multilingual-e5-small:"));
    assert_eq!(st["indexes"]["semantic"], st["indexes"]["keyword"]);
    assert_eq!(
        keys(&st["indexes"]),
        ["categorical", "keyword", "semantic", "temporal"]
    );
    assert_eq!(
        (st["atoms"].as_u64(), st["edges"].as_u64()),
        (Some(10), Some(3))
    );

    let hook = cli.raw(&["hook", "session-start"]);
    let hook: Value = serde_json::from_slice(&hook.stdout).unwrap();
    assert_eq!(hook["hookSpecificOutput"]["hookEventName"], "SessionStart");
    assert!(
        hook["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("login.py")
    );
}

#[test]
fn human_output_errors_and_exit_codes() {
    let cli = Cli::new();
    let out = cli.raw(&["memorize", "前端用 React 18"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("applied "));
    let out = cli.raw(&["recall", "React"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("前端用 React 18"));
    // Across languages through the dictionary, keyword-only, and `--explain`
    // names the translated signal.
    cli.raw(&[
        "memorize",
        "The spare key is with our neighbour at number 12",
    ]);
    let out = cli.raw(&["recall", "備用鑰匙", "--explain"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("The spare key is with our neighbour"),
        "{text}"
    );
    assert!(text.contains("translation "), "{text}");
    // A question hands its relevance to the reply written after it, and
    // `--explain` names that signal.
    cli.raw(&["memorize", "Caroline: How was your trip to Lisbon?"]);
    cli.raw(&["memorize", "Melanie: Wonderful, we rode tram 28 every day"]);
    let out = cli.raw(&["recall", "Lisbon trip", "--explain"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let reply = text
        .split("Melanie: Wonderful")
        .nth(1)
        .and_then(|after| after.lines().find(|l| l.trim_start().starts_with("reply ")))
        .unwrap_or_else(|| panic!("the reply is recalled with its signal: {text}"));
    assert!(!reply.ends_with("contribution 0.000"), "{text}");

    let out = cli.raw(&["memorize", "   "]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stdout).contains("rejected: content is empty"));

    let out = cli.raw(&["correct", "not-an-id", "frobnicate", "--reason", "x"]);
    assert_eq!(out.status.code(), Some(2), "usage error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("hmg: ") && err.contains("frobnicate"),
        "{err}"
    );
    // A missing flag is named on that one line.
    let out = cli.raw(&["correct", "01M8NNJ9JBR9P1EP3N7A8XRPSR", "negate"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--reason"), "{err}");

    // A reader that stops early (`hmg export | head`) ends it quietly.
    for n in 0..20 {
        cli.raw(&["memorize", &format!("note number {n} for the pipe test")]);
    }
    let mut child = cli
        .command(None)
        .args(["--tenant", "qiankun", "export"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let help = cli.raw(&["--help"]);
    assert!(help.status.success() && String::from_utf8_lossy(&help.stdout).contains("memorize"));

    let file = cli.store.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let out = Command::new(hmg_binary())
        .arg("--store")
        .arg(&file)
        .args(["stats"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("hmg: "), "{err}");
}

#[test]
fn scope_comes_from_git_and_siblings_stay_apart() {
    let cli = Cli::new();
    let work = tempfile::tempdir().unwrap();
    let repo = |branch: &str| {
        let git = work.path().join("shop/.git");
        std::fs::create_dir_all(&git).unwrap();
        std::fs::write(git.join("HEAD"), format!("ref: refs/heads/{branch}\n")).unwrap();
        std::fs::write(
            git.join("config"),
            "[remote \"origin\"]\n\turl = git@github.com:acme/shop.git\n",
        )
        .unwrap();
        work.path().join("shop")
    };
    let run = |dir: &Path, args: &[&str]| -> Value {
        let out = cli
            .command(Some(dir))
            .env("HMG_TENANT", "alice")
            .arg("--json")
            .args(args)
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let main = repo("main");
    let id = s(
        &run(&main, &["memorize", "checkout uses Stripe"]),
        "atom_id",
    )
    .to_owned();
    let org = s(
        &run(
            &main,
            &["memorize", "--org", "acme deploys on Fridays never"],
        ),
        "atom_id",
    )
    .to_owned();
    let view = run(&main, &["history", &id]);
    assert_eq!(
        view["current"]["scope"],
        serde_json::json!({"tenant_id": "alice", "workspace": "acme", "repository": "shop", "branch": "main"})
    );
    assert_eq!(
        run(&main, &["history", &org])["current"]["scope"],
        serde_json::json!({"tenant_id": "alice", "workspace": "acme"})
    );
    let feature = repo("feature");
    let hits = run(&feature, &["recall", "Stripe checkout deploys Fridays"]);
    let ids: Vec<&str> = hits["atoms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["atom_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [org.as_str()],
        "the branch memory must stay on its branch; the org memory is inherited"
    );
}

#[test]
fn graph_commands_print_the_documented_shapes() {
    let cli = Cli::new();
    for m in [
        "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB",
        "PostgreSQL runs on Kubernetes",
        "Grafana depends on Prometheus, which runs on k8s",
    ] {
        cli.ok(&["memorize", m]);
    }
    let e = cli.ok(&[
        "graph",
        "entities",
        "前端用 React 和 Postgres，程式碼在 src/app.tsx",
    ]);
    assert_eq!(keys(&e), ["entities"]);
    assert_eq!(
        e["entities"],
        serde_json::json!([
            {"name": "React", "type": "technology"},
            {"name": "PostgreSQL", "type": "technology"},
            {"name": "src/app.tsx", "type": "file"}
        ])
    );
    let n = cli.ok(&["graph", "neighborhood", "postgres", "--depth", "2"]);
    assert_eq!(keys(&n), ["edges", "nodes", "truncated"]);
    assert_eq!(keys(&n["nodes"][0]), ["atom_count", "name", "type"]);
    assert_eq!(
        keys(&n["edges"][0]),
        [
            "atom_id",
            "invalid_at",
            "relation",
            "source",
            "target",
            "valid_at"
        ]
    );
    assert_eq!(n["edges"][0]["invalid_at"], Value::Null);
    let names: Vec<&str> = n["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| s(n, "name"))
        .collect();
    assert!(
        names.contains(&"Kubernetes") && names.contains(&"mem0"),
        "{names:?}"
    );
    let p = cli.ok(&["graph", "path", "Grafana", "PostgreSQL"]);
    assert_eq!(keys(&p), ["edges", "found", "nodes"]);
    assert_eq!(p["found"], true);
    let r = cli.ok(&["graph", "relate", "payment-service", "depends_on", "Redis"]);
    assert_eq!(
        (keys(&r), &r["effect"]),
        (vec!["atom_id", "effect"], &Value::from("applied"))
    );
    let (missing, code) = cli.json(&["graph", "neighborhood", "Oracle"]);
    assert_eq!(code, 3);
    assert!(s(&missing, "reason").contains("no entity"));
    let recalled = cli.ok(&["recall", "--graph", "k8s"]);
    assert_eq!(recalled["graph"]["nodes"][0]["name"], "Kubernetes");
    // The human form, as in the README.
    let out = cli.raw(&["graph", "neighborhood", "postgres"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("mem0 -[uses]-> PostgreSQL"), "{text}");
}

#[test]
fn observe_and_the_prompt_hook() {
    let cli = Cli::new();
    let o = cli.ok(&["observe", "我叫張三，以後請用中文回覆"]);
    assert_eq!(
        keys(&o),
        ["candidates", "excluded", "mode", "redactions", "threshold"]
    );
    assert_eq!(
        (o["mode"].as_str(), o["threshold"].as_f64(), &o["excluded"]),
        (Some("standard"), Some(0.65), &Value::Null)
    );
    assert_eq!(
        keys(&o["candidates"][0]),
        [
            "atom_id",
            "captured",
            "confidence",
            "content",
            "effect",
            "signal"
        ]
    );
    assert_eq!(o["candidates"][0]["content"], "使用者叫張三");
    assert_eq!(o["candidates"][1]["signal"], "assistant_style");
    let q = cli.ok(&["observe", "--mode", "relaxed", "你知道我叫什麼嗎？"]);
    assert_eq!(
        (
            q["excluded"].as_str(),
            q["candidates"].as_array().unwrap().len()
        ),
        (Some("question"), 0)
    );
    let dry = cli.ok(&[
        "observe",
        "--dry-run",
        "--mode",
        "strict",
        "We decided to use pnpm",
    ]);
    let c = &dry["candidates"][0];
    assert_eq!(
        (c["confidence"].as_f64(), &c["captured"]),
        (Some(0.8), &Value::Bool(false))
    );
    assert!(s(c, "reason").contains("below the strict threshold"));

    // The hook: Claude Code's UserPromptSubmit JSON in, additionalContext out.
    let hook = |stdin: &str, extra: &[(&str, &str)]| {
        use std::io::Write;
        let mut cmd = cli.command(None);
        cmd.args([
            "--tenant",
            "qiankun",
            "--workspace",
            "mem0ai",
            "--repository",
            "mem0",
        ])
        .args(["--branch", "main", "hook", "user-prompt-submit"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    cli.ok(&["memorize", "正式環境部署在 AWS ECS，不用 Kubernetes"]);
    let work = tempfile::tempdir().unwrap();
    let input = serde_json::json!({
        "session_id": "sess-1",
        "prompt": "我們決定用 pnpm 管理依賴。正式環境部署在哪裡？",
        "cwd": work.path(),
        "hook_event_name": "UserPromptSubmit",
    });
    let out = hook(&input.to_string(), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        printed["hookSpecificOutput"]["hookEventName"],
        "UserPromptSubmit"
    );
    let context = s(&printed["hookSpecificOutput"], "additionalContext");
    assert!(
        context.contains("正式環境部署在 AWS ECS"),
        "the relevant memory: {context}"
    );
    assert!(
        context.contains("團隊決定用 pnpm 管理依賴"),
        "and the decision captured: {context}"
    );
    // The decision went into that session.
    let in_session = |session: Option<&str>| {
        let mut args = vec!["--json"];
        if let Some(s) = session {
            args.extend(["--session", s]);
        }
        args.extend(["recall", "pnpm 依賴"]);
        let out = cli.raw(&args);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["atoms"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| s(a, "content").contains("pnpm"))
            .count()
    };
    assert_eq!((in_session(Some("sess-1")), in_session(None)), (1, 0));

    // Held up (another process holds the store): nothing printed, exit 0, why on stderr.
    let lock = std::fs::File::open(cli.store.path()).unwrap();
    lock.lock().unwrap();
    let started = std::time::Instant::now();
    let out = hook(&input.to_string(), &[("HMG_HOOK_TIMEOUT_MS", "400")]);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!((out.status.code(), out.stdout.len()), (Some(0), 0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("gave up after 400 ms"));
    lock.unlock().unwrap();
    // Not hook JSON: a one-line error.
    let out = hook("not json", &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("hmg: ") && err.lines().count() == 1,
        "{err}"
    );
}

/// `hmg recall` embeds its query in a second instance while the first opens
/// the store (with the pre-initialised engine and a second core): the
/// session keeps that embedding, and the answer is the one a session that
/// embeds its own query gives, score for score.
#[test]
fn a_query_embedded_while_the_store_opens_answers_as_the_recall_would() {
    let cli = Cli::new();
    for content in [
        "we deploy to production with blue green on ECS",
        "the staging database resets every Sunday night",
        "cache keys carry the tenant prefix",
        "客戶王先生的合約在三月續約",
    ] {
        cli.ok(&["memorize", content]);
    }
    let query = "how do we ship a release to prod";
    let from_cli = cli.ok(&["recall", "--explain", query]);
    assert!(
        !from_cli["atoms"].as_array().unwrap().is_empty(),
        "{from_cli}"
    );

    let cwd = tempfile::tempdir().unwrap();
    let options = |recalls: Vec<String>| hmg_cli::SessionOptions {
        store: Some(cli.store.path().to_owned()),
        model: Some(model_dir()),
        tenant: Some("qiankun".into()),
        workspace: Some("mem0ai".into()),
        repository: Some("mem0".into()),
        branch: Some("main".into()),
        cwd: Some(cwd.path().to_owned()),
        recalls,
        ..Default::default()
    };
    let ask = |session: &mut hmg_cli::Session| {
        let r = session
            .recall(&hmg_cli::api::RecallRequest {
                query: query.into(),
                scope: session.scope.clone(),
                explain: Some(true),
                ..Default::default()
            })
            .unwrap();
        serde_json::to_value(r).unwrap()
    };
    let mut alone = hmg_cli::open_session(&options(Vec::new())).unwrap();
    assert_eq!(alone.queries_ahead(), 0);
    let answer = ask(&mut alone);
    drop(alone);
    let mut helped = hmg_cli::open_session(&options(vec![query.into()])).unwrap();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    assert_eq!(helped.queries_ahead(), u32::from(cores > 1));
    // The semantic signal of every hit, exactly (the total score moves
    // with the clock between calls: recency).
    let semantic = |answer: &Value| -> Vec<(String, f64)> {
        answer["atoms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|atom| {
                let signal = atom["explain"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|s| s["name"] == "semantic")
                    .map_or(0.0, |s| s["value"].as_f64().unwrap());
                (atom["atom_id"].as_str().unwrap().to_owned(), signal)
            })
            .collect()
    };
    assert!(semantic(&answer).iter().any(|(_, v)| *v > 0.0), "{answer}");
    assert_eq!(semantic(&ask(&mut helped)), semantic(&answer));
    assert_eq!(semantic(&from_cli), semantic(&answer));
}
