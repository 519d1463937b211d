//! Warm recall on a large store, per query (for `perf`).
//!
//! The ten queries of `hmg_benches::QUERIES`; keyword-only, or with
//! `HMG_PROFILE_HYBRID=1` hybrid with the real model's query embeddings
//! taken from the bench cache (a store whose vectors carry the model's
//! fingerprint: `HMG_SCALE_AS_MODEL=1 … --bin scale`), so the figures are
//! the index work.
//!
//!     cargo run --release -p hmg-benches --bin recall-profile -- STORE_DIR [ROUNDS]
use std::time::Instant;

use engine::Scope;
use engine::log::backend::FsBackend;
use engine::ops::RecallRequest;
use hmg_benches::QUERIES;

fn main() {
    let dir = std::env::args().nth(1).expect("store dir");
    let rounds: usize = std::env::args()
        .nth(2)
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let mut memory = engine::Memory::open(
        FsBackend::new(std::path::Path::new(&dir)).unwrap(),
        engine::Config::default(),
        Box::new(engine::SystemEnv),
    )
    .unwrap();
    if std::env::var_os("HMG_PROFILE_HYBRID").is_some_and(|v| v == "1") {
        let model = hmg_benches::SharedEmbedder::load("speed");
        // Every query embedded once here, so that recalls read the cache.
        let mut model = model;
        let _ = engine::embed::Embedder::embed(&mut model, QUERIES, engine::embed::Role::Query);
        memory.set_embedder(Box::new(model));
        let t = Instant::now();
        memory
            .recall(&RecallRequest {
                query: QUERIES[0].into(),
                scope: Scope::new("bench", "acme", "shop", "main"),
                ..Default::default()
            })
            .unwrap();
        println!(
            "first recall (reads vectors, builds their index): {:.0} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
    }
    for _ in 0..rounds {
        for &q in QUERIES {
            let t = Instant::now();
            let r = memory
                .recall(&RecallRequest {
                    query: q.into(),
                    scope: Scope::new("bench", "acme", "shop", "main"),
                    ..Default::default()
                })
                .unwrap();
            println!(
                "{:8.1} ms  {} hits  {q}",
                t.elapsed().as_secs_f64() * 1e3,
                r.atoms.len()
            );
        }
    }
}
