//! Embedding cost by text length, natively and inside the component (one
//! passage per call through `embed-ahead`, distinct texts so no cache
//! answers), then a query's cost inside recall (recall with the model minus
//! keyword-only recall on the same one-atom store) against native.
//!
//!     cargo run --release -p hmg-benches --bin embed-lengths   # REPS=15 by default
use std::time::Instant;

use engine::embed::onnx::OnnxEmbedder;
use engine::embed::{Embedder, Role};
use hmg_benches::{QUERIES, median, model_dir, ms};

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
            n.push(ms(started));
            let t = text(words, rep + 2000);
            let started = Instant::now();
            s.embed_ahead(&[t]).unwrap();
            c.push(ms(started));
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
    let (mut with, mut without, mut nat) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..3 {
        for q in QUERIES {
            let q = format!("{q} {round}");
            let req = hmg_cli::api::RecallRequest {
                query: q.clone(),
                scope: scope.clone(),
                ..Default::default()
            };
            let t = Instant::now();
            s.recall(&req).unwrap();
            with.push(ms(t));
            let t = Instant::now();
            k.recall(&req).unwrap();
            without.push(ms(t));
            let t = Instant::now();
            native.embed(&[q.as_str()], Role::Query).unwrap();
            nat.push(ms(t));
        }
    }
    let (w, wo, n) = (median(with), median(without), median(nat));
    println!(
        "recall with model {w:.2} ms, keyword-only {wo:.2} ms, native query embedding {n:.2} ms: component/native {:.2}",
        (w - wo) / n
    );
}
