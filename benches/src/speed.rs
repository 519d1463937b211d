//! Speed: embedding latency natively and inside the component, warm recall
//! at 1k / 10k / 100k atoms, memorize and import throughput, store size per
//! atom. Cold `hmg recall` from a fresh process is measured by
//! `benches/cli-wall-time.sh`.
//!
//!     cargo run --release -p hmg-benches --bin speed [-- --max 100000]
//!
//! The scale runs use the engine natively on real files (fsync included).
//! Embedding 100k passages with the real model would take hours here, so
//! passages at scale get *replayed* embeddings: real e5 vectors of the
//! LoCoMo and agent-memory texts (cached by the quality benchmarks; embedded
//! now if missing), each atom a different text-and-vector pair with small
//! noise. Queries are embedded by the real model on every recall, so the
//! recall figures include the query embedding.

use std::path::Path;
use std::time::Instant;

use engine::embed::onnx::OnnxEmbedder;
use engine::embed::{Embedder, Role};
use engine::ops::{MemorizeRequest, RecallRequest};
use engine::{Config, FsBackend, Memory, Scope, SystemEnv};
use hmg_benches::{QUERIES, Replay, SharedEmbedder, atom_line, model_dir, ms};

fn percentile(samples: &mut [f64], p: f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    let at = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[at]
}

fn jsonl(texts: impl Iterator<Item = (usize, String)>) -> String {
    texts.map(|(i, content)| atom_line(i, &content)).collect()
}

fn scope() -> Scope {
    Scope::new("bench", "acme", "shop", "main")
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

fn recall_times(memory: &mut Memory<FsBackend>, rounds: usize) -> Vec<f64> {
    let mut times = Vec::new();
    for r in 0..rounds {
        for q in QUERIES {
            let started = Instant::now();
            let req = RecallRequest {
                query: (*q).to_owned(),
                scope: scope(),
                ..Default::default()
            };
            let hits = memory.recall(&req).unwrap();
            if r > 0 {
                times.push(ms(started));
            }
            assert!(hits.reason.is_none());
        }
    }
    times
}

fn main() {
    let max: usize = std::env::args()
        .skip_while(|a| a != "--max")
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let dir = model_dir();

    // 1. Embedding latency, native.
    let started = Instant::now();
    let mut native = OnnxEmbedder::load(&dir).expect("model (run scripts/model/fetch.sh)");
    let load_ms = ms(started);
    native.embed(&["warm-up"], Role::Query).unwrap();
    let mut single: Vec<f64> = Vec::new();
    for _ in 0..5 {
        for q in QUERIES {
            let started = Instant::now();
            native.embed(&[q], Role::Query).unwrap();
            single.push(ms(started));
        }
    }
    let native_p50 = percentile(&mut single, 0.5);
    let passages: Vec<String> = (0..64)
        .map(|i| {
            format!("decision {i}: the team uses PostgreSQL for orders and Redis 快取 for sessions")
        })
        .collect();
    let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
    let started = Instant::now();
    native.embed(&refs, Role::Passage).unwrap();
    let batch_per_text = ms(started) / refs.len() as f64;
    println!(
        "## Embedding (multilingual-e5-small, {})\n",
        native.fingerprint()
    );
    println!("| where | measure | value |");
    println!("| --- | --- | --- |");
    println!("| native | model load + optimise | {load_ms:.0} ms |");
    println!(
        "| native | one query (p50 of {}) | {native_p50:.1} ms |",
        single.len()
    );
    println!("| native | passages in batches of 16 | {batch_per_text:.1} ms per text |");

    // 2. Inside the component: recall with the model minus recall without,
    // on the same one-atom store = the query embedding.
    let store = tempfile::tempdir().unwrap();
    let runtime = hmg_cli::Runtime::new(hmg_cli::default_cache_dir().as_deref()).unwrap();
    let scope_api = hmg_cli::api::Scope {
        tenant_id: "bench".into(),
        workspace: Some("acme".into()),
        repository: Some("shop".into()),
        branch: Some("main".into()),
        session: None,
    };
    let config = hmg_cli::api::StoreConfig::default();
    let mut semantic = runtime
        .open(
            store.path(),
            Some(&dir),
            &config,
            scope_api.clone(),
            "bench",
        )
        .unwrap();
    let mut keyword = runtime
        .open(store.path(), None, &config, scope_api.clone(), "bench")
        .unwrap();
    let started = Instant::now();
    semantic
        .memorize(&hmg_cli::api::MemorizeRequest {
            content: "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB".into(),
            source: None,
            scope: scope_api.clone(),
        })
        .unwrap();
    let first_memorize_ms = ms(started);
    let timed = |session: &mut hmg_cli::Session| -> f64 {
        let mut t = Vec::new();
        for _ in 0..5 {
            for q in QUERIES {
                let started = Instant::now();
                session
                    .recall(&hmg_cli::api::RecallRequest {
                        query: (*q).to_owned(),
                        scope: session.scope.clone(),
                        ..Default::default()
                    })
                    .unwrap();
                t.push(ms(started));
            }
        }
        percentile(&mut t, 0.5)
    };
    let with = timed(&mut semantic);
    let without = timed(&mut keyword);
    let component_embed = with - without;
    println!("| component | first memorize (loads the model) | {first_memorize_ms:.0} ms |");
    println!(
        "| component | one query (recall p50 {with:.1} ms − keyword-only {without:.2} ms) | {component_embed:.1} ms |"
    );
    println!(
        "| ratio | component / native, one query | {:.2}× |",
        component_embed / native_p50
    );
    let mut t = Vec::new();
    for i in 0..20 {
        let started = Instant::now();
        semantic
            .memorize(&hmg_cli::api::MemorizeRequest {
                content: format!("component memorize probe {i}: 部署用 ECS，不用 K8s"),
                source: None,
                scope: scope_api.clone(),
            })
            .unwrap();
        t.push(ms(started));
    }
    println!(
        "| component | memorize (embed + fsync), p50 of 20 | {:.1} ms → {:.0}/s |",
        percentile(&mut t, 0.5),
        1000.0 / percentile(&mut t, 0.5)
    );
    drop((semantic, keyword));

    // 3. Native memorize and import throughput with the real model.
    let shared = SharedEmbedder::load("speed");
    let work = tempfile::tempdir().unwrap();
    let mut memory = Memory::open(
        FsBackend::new(work.path().join("memorize")).unwrap(),
        Config::default(),
        Box::new(SystemEnv),
    )
    .unwrap();
    memory.set_embedder(Box::new(OnnxEmbedder::load(&dir).unwrap()));
    let mut t = Vec::new();
    for i in 0..50 {
        let started = Instant::now();
        memory
            .memorize(&MemorizeRequest {
                content: format!("native memorize probe {i}: 前端用 React 18 和 TypeScript"),
                source: None,
                scope: scope(),
            })
            .unwrap();
        t.push(ms(started));
    }
    let p50 = percentile(&mut t, 0.5);
    println!(
        "| native | memorize (embed + fsync), p50 of 50 | {p50:.1} ms → {:.0}/s |",
        1000.0 / p50
    );
    let mut memory = Memory::open(
        FsBackend::new(work.path().join("import")).unwrap(),
        Config::default(),
        Box::new(SystemEnv),
    )
    .unwrap();
    memory.set_embedder(Box::new(OnnxEmbedder::load(&dir).unwrap()));
    let lines = jsonl((0..1000).map(|i| {
        (
            i,
            format!("imported decision {i}: use Redis 快取 for component {i}"),
        )
    }));
    let started = Instant::now();
    let r = memory.import(&lines).unwrap();
    let secs = started.elapsed().as_secs_f64();
    println!(
        "| native | import 1,000 atoms (batched embedding, one fsync) | {secs:.1} s → {:.0} atoms/s |",
        r.atoms_added as f64 / secs
    );

    // 4. Warm recall at scale (replayed passage vectors, real query embedding).
    let pool_texts = hmg_benches::pool_texts();
    let pool = hmg_benches::pool(&shared, pool_texts, QUERIES);
    println!(
        "\n## Warm recall at scale (native engine on files; {} real e5 passage vectors replayed with noise; real query embedding)\n",
        pool.len()
    );
    println!("| atoms | recall p50 | recall p95 | open (cold, from disk) | store bytes per atom |");
    println!("| --- | --- | --- | --- | --- |");
    for n in [1_000usize, 10_000, 100_000]
        .into_iter()
        .filter(|n| *n <= max)
    {
        let path = work.path().join(format!("scale-{n}"));
        let replay = Replay {
            pool: pool.clone(),
            model: shared.clone(),
            seed: 0x9E37_79B9_7F4A_7C15,
            fingerprint: "replay-e5".into(),
        };
        let mut memory = Memory::open(
            FsBackend::new(&path).unwrap(),
            Config::default(),
            Box::new(SystemEnv),
        )
        .unwrap();
        memory.set_embedder(Box::new(replay.clone()));
        for chunk in (0..n).collect::<Vec<_>>().chunks(5_000) {
            let lines = jsonl(chunk.iter().map(|&i| (i, replay.text(i))));
            memory.import(&lines).unwrap();
        }
        drop(memory);
        let started = Instant::now();
        let mut memory = Memory::open(
            FsBackend::new(&path).unwrap(),
            Config::default(),
            Box::new(SystemEnv),
        )
        .unwrap();
        let open_ms = ms(started);
        memory.set_embedder(Box::new(replay));
        let mut times = recall_times(&mut memory, 4);
        let p50 = percentile(&mut times, 0.5);
        let p95 = percentile(&mut times, 0.95);
        println!(
            "| {n} | {p50:.1} ms | {p95:.1} ms | {open_ms:.0} ms | {:.0} |",
            dir_bytes(&path) as f64 / n as f64
        );
    }
    shared.save();
}
