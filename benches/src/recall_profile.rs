//! Keyword-only warm recall on a large store, per query (for `perf`).
//!
//! The ten queries of `hmg_benches::QUERIES`; no model is loaded.
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
