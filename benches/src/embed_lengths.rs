//! Embedding cost by text length, natively and inside the component (one
//! passage per call through `embed-ahead`, distinct texts so no cache
//! answers), then a query's cost inside recall (recall with the model minus
//! keyword-only recall on the same one-atom store) against native.
//!
//!     cargo run --release -p hmg-benches --bin embed-lengths   # REPS=15 by default
use std::time::Instant;

use engine::embed::onnx::OnnxEmbedder;
use engine::embed::{Embedder, Role};
use hmg_benches::model_dir;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

const WORDS: &[&str] = &[
    "the",
    "team",
    "uses",
    "PostgreSQL",
    "for",
    "orders",
    "and",
    "Redis",
    "cache",
    "sessions",
    "deploy",
    "friday",
    "night",
    "backup",
    "every",
    "hour",
    "Caroline",
    "went",
    "support",
    "group",
];

fn text(words: usize, rep: usize) -> String {
    let mut s = format!("{rep}");
    for i in 0..words {
        s.push(' ');
        s.push_str(WORDS[(i * 7 + rep) % WORDS.len()]);
    }
    s
}

fn main() {
    let dir = model_dir();
    let reps: usize = std::env::var("REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    let mut native = OnnxEmbedder::load(&dir).unwrap();
    native.embed(&["warm"], Role::Passage).unwrap();
    let store = tempfile::tempdir().unwrap();
    let runtime = hmg_cli::Runtime::new(hmg_cli::default_cache_dir().as_deref()).unwrap();
    let scope = hmg_cli::api::Scope {
        tenant_id: "p".into(),
        workspace: None,
        repository: None,
        branch: None,
        session: None,
    };
    let mut s = runtime
        .open(
            store.path(),
            Some(&dir),
            &hmg_cli::api::StoreConfig::default(),
            scope,
            "p",
        )
        .unwrap();
    s.embed_ahead(&["warm up".to_owned()]).unwrap();
    println!("| words | tokens | native ms | component ms | ratio |");
    for words in [1usize, 4, 8, 16, 32, 64, 128] {
        let tokens = native.token_ids(&text(words, 0), Role::Passage).len();
        let mut n = Vec::new();
        let mut c = Vec::new();
        for rep in 0..reps {
            let t = text(words, rep + 1000);
            let started = Instant::now();
            native.embed(&[t.as_str()], Role::Passage).unwrap();
            n.push(started.elapsed().as_secs_f64() * 1000.0);
            let t = text(words, rep + 2000);
            let started = Instant::now();
            s.embed_ahead(&[t]).unwrap();
            c.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        let (n, c) = (median(n), median(c));
        println!("| {words} | {tokens} | {n:.2} | {c:.2} | {:.2} |", c / n);
    }

    // Recall with the model minus keyword-only recall, one-atom store.
    let scope = s.scope.clone();
    s.memorize(&hmg_cli::api::MemorizeRequest {
        content: "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB".into(),
        source: None,
        scope: scope.clone(),
    })
    .unwrap();
    let mut k = runtime
        .open(
            store.path(),
            None,
            &hmg_cli::api::StoreConfig::default(),
            scope.clone(),
            "p",
        )
        .unwrap();
    let qs = [
        "資料庫選型",
        "数据库备份",
        "database choice",
        "我們部署在哪裡？",
        "How long do access tokens last?",
        "cache key prefix",
        "誰負責值班",
        "what did Caroline research",
        "error response format",
        "日誌保留多久？",
    ];
    let (mut with, mut without, mut nat) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..3 {
        for q in qs {
            let q = format!("{q} {round}");
            let req = hmg_cli::api::RecallRequest {
                query: q.clone(),
                scope: scope.clone(),
                ..Default::default()
            };
            let t = Instant::now();
            s.recall(&req).unwrap();
            with.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            k.recall(&req).unwrap();
            without.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            native.embed(&[q.as_str()], Role::Query).unwrap();
            nat.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let (w, wo, n) = (median(with), median(without), median(nat));
    println!(
        "recall with model {w:.2} ms, keyword-only {wo:.2} ms, native query embedding {n:.2} ms: component/native {:.2}",
        (w - wo) / n
    );
}
