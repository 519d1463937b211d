//! Scale (issue 15): what opening a large store costs, natively and in the
//! component, with the indexes stored in the snapshot (since format version 4)
//! against rebuilding them from every atom (what version 3 did).
//!
//!     cargo run --release -p hmg-benches --bin scale [-- 10000 100000]
//!
//! Stores are built once under `~/.cache/hmg/bench/scale-<n>` (kept between
//! runs; delete to rebuild) by importing the LoCoMo dev turns and the
//! agent-memory texts over and over, each copy numbered, with their real e5
//! vectors plus small noise (`hmg_benches::Replay`, as `--bin speed` does).
//! Cold `hmg` figures use the `hmg` binary beside this one (`--model none`:
//! keyword-only, no query embedding). Recall figures here embed the query
//! from the cache, so they are index work only.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use engine::atom::AtomId;
use engine::embed::{Embedder, Role};
use engine::index::Indexes;
use engine::index::tokenize::is_cjk_text;
use engine::index::vector::VectorIndex;
use engine::log::Log;
use engine::ops::RecallRequest;
use engine::state::{Row, Vectors};
use engine::{Config, FsBackend, Memory, Scope, SystemEnv};
use hmg_benches::{Replay, SharedEmbedder, atom_line, median, ms, percentile};

const QUERIES: &[&str] = &[
    "資料庫選型",
    "database choice",
    "我們部署在哪裡？",
    "How long do access tokens last?",
    "what did Caroline research",
    "日誌保留多久？",
];

fn scope() -> Scope {
    Scope::new("bench", "acme", "shop", "main")
}

fn open(path: &Path) -> Memory<FsBackend> {
    Memory::open(
        FsBackend::new(path).unwrap(),
        Config::default(),
        Box::new(SystemEnv),
    )
    .unwrap()
}

/// Builds the store of `n` atoms if it is not there; returns import seconds.
fn build(path: &Path, n: usize, replay: &Replay) -> Option<f64> {
    if path.join("done").exists() {
        return None;
    }
    let _ = std::fs::remove_dir_all(path);
    let started = Instant::now();
    // No compaction until the end: the default (a compaction each time the
    // log passes 4 MB) would rewrite the whole snapshot every 5,000 lines,
    // quadratic in `n` — a million atoms would write over 100 GB.
    let mut memory = Memory::open(
        FsBackend::new(path).unwrap(),
        Config {
            compact_log_bytes: u64::MAX,
            ..Config::default()
        },
        Box::new(SystemEnv),
    )
    .unwrap();
    memory.set_embedder(Box::new(replay.clone()));
    for chunk in (0..n).collect::<Vec<_>>().chunks(5000) {
        let mut lines = String::new();
        for &i in chunk {
            lines.push_str(&atom_line(i, &replay.text(i)));
        }
        memory.import(&lines).unwrap();
    }
    memory.compact().unwrap();
    std::fs::write(path.join("done"), "").unwrap();
    Some(started.elapsed().as_secs_f64())
}

fn store_bytes(path: &Path) -> u64 {
    std::fs::read_dir(path)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".hmg"))
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

fn hmg() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let hmg = exe.parent()?.join("hmg");
    hmg.exists().then_some(hmg)
}

/// The vector index alone at `n` rows (replayed vectors, no store): exact
/// against approximate search, recall@10 and latency, language-neutral
/// scoring as recall uses it.
fn approximate(replay: &Replay, n: usize, queries: &[(Vec<f32>, bool)]) {
    let mut noise = replay.clone();
    let texts: Vec<String> = (0..n).map(|i| replay.text(i)).collect();
    let mut rows: Vec<(AtomId, Row, bool)> = Vec::with_capacity(n);
    for (chunk_at, chunk) in texts.chunks(10_000).enumerate() {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        let vectors = noise.embed(&refs, Role::Passage).unwrap();
        for (i, (text, v)) in chunk.iter().zip(vectors).enumerate() {
            let id = AtomId((chunk_at * 10_000 + i) as u128);
            rows.push((id, Vectors::encode(&v).into(), is_cjk_text(text)));
        }
    }
    let started = Instant::now();
    let mut index =
        VectorIndex::from_rows(384, rows.iter().map(|(id, v, cjk)| (*id, v.clone(), *cjk)));
    let build = ms(started);
    drop(rows);
    let (mut exact_ms, mut approx_ms, mut found, mut wanted) = (Vec::new(), Vec::new(), 0, 0);
    for (q, cjk) in queries {
        index.set_approximate(usize::MAX, None);
        let started = Instant::now();
        let exact = index.search_neutral(q, 10, |_| true, *cjk).0;
        exact_ms.push(ms(started));
        let depth = std::env::var("HMG_SCALE_DEPTH")
            .ok()
            .and_then(|d| d.parse().ok());
        index.set_approximate(0, depth);
        let started = Instant::now();
        let approx = index.search_neutral(q, 10, |_| true, *cjk).0;
        approx_ms.push(ms(started));
        wanted += exact.len();
        found += exact
            .iter()
            .filter(|h| approx.iter().any(|a| a.0 == h.0))
            .count();
    }
    let p = |v: &[f64], q: f64| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[((v.len() - 1) as f64 * q).round() as usize]
    };
    println!(
        "| {n} | {build:.0} ms | {:.1} / {:.1} ms | {:.1} / {:.1} ms | {:.3} |",
        p(&exact_ms, 0.5),
        p(&exact_ms, 0.95),
        p(&approx_ms, 0.5),
        p(&approx_ms, 0.95),
        found as f64 / wanted as f64
    );
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![10_000, 100_000]
    } else {
        sizes
    };
    let cache = hmg_cli::default_cache_dir().expect("a cache directory");
    let shared = SharedEmbedder::load("speed");
    // HMG_SCALE_AS_MODEL=1: stores whose replayed vectors carry the real
    // model's fingerprint (`scale-<n>-as-model`), so that hmg and hmg-mcp
    // with the model search them (benches/mcp-rss.py).
    let as_model = std::env::var_os("HMG_SCALE_AS_MODEL").is_some_and(|v| v == "1");
    let replay = Replay {
        pool: hmg_benches::pool(&shared, hmg_benches::pool_texts(), QUERIES),
        model: shared.clone(),
        seed: 0x9E37_79B9_7F4A_7C15,
        fingerprint: if as_model {
            shared.fingerprint()
        } else {
            "replay-e5".into()
        },
    };
    println!(
        "| atoms | open, indexes stored (median of 5) | open, indexes rebuilt | of which the snapshot read | first recall (over the rows) | the next {UNINDEXED} (the last builds the vector index) | warm recall p50 / p95 (hybrid, query embedding cached) | cold `hmg --model none recall` (median of 5) | bytes per atom |",
        UNINDEXED = engine::index::UNINDEXED_SEARCHES,
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for n in sizes {
        let suffix = if as_model { "-as-model" } else { "" };
        let path = cache.join(format!("bench/scale-{n}{suffix}"));
        if let Some(secs) = build(&path, n, &replay) {
            eprintln!("built {n} atoms in {secs:.0} s");
        }
        // A store built by another engine build carries indexes of another
        // derivation (rebuilt at every open until a write): store current ones.
        open(&path).compact().unwrap();
        let mut stored = Vec::new();
        for _ in 0..5 {
            let started = Instant::now();
            let memory = open(&path);
            stored.push(ms(started));
            drop(memory);
        }
        let (mut read, mut rebuilt) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            let started = Instant::now();
            let (_log, state, _) = Log::open(FsBackend::new(&path).unwrap(), 4 << 20).unwrap();
            read.push(ms(started));
            let _ = Indexes::build(&state);
            rebuilt.push(ms(started));
        }
        let mut memory = open(&path);
        let req = |q: &str| RecallRequest {
            query: q.into(),
            scope: scope(),
            ..Default::default()
        };
        memory.set_embedder(Box::new(replay.clone()));
        let started = Instant::now();
        memory.recall(&req("資料庫選型")).unwrap();
        let first = ms(started);
        // The first few semantic searches of a process go over the rows;
        // the one after them builds the vector index. Warm means after it.
        let started = Instant::now();
        for _ in 0..engine::index::UNINDEXED_SEARCHES {
            memory.recall(&req("資料庫選型")).unwrap();
        }
        let built = ms(started);
        let mut warm = Vec::new();
        for q in QUERIES {
            for _ in 0..5 {
                let started = Instant::now();
                memory.recall(&req(q)).unwrap();
                warm.push(ms(started));
            }
        }
        let cold = hmg().map(|bin| {
            // The first run may compile the component into the cache.
            let runs: Vec<f64> = (0..6)
                .map(|_| {
                    let started = Instant::now();
                    let out = Command::new(&bin)
                        .args([
                            "--model",
                            "none",
                            "--tenant",
                            "bench",
                            "--workspace",
                            "acme",
                        ])
                        .args(["--repository", "shop", "--branch", "main", "--store"])
                        .arg(&path)
                        .args(["recall", "database choice"])
                        .output()
                        .unwrap();
                    assert!(out.status.success(), "{out:?}");
                    ms(started)
                })
                .collect();
            median(runs[1..].to_vec())
        });
        println!(
            "| {n} | {:.0} ms | {:.0} ms | {:.0} ms | {first:.0} ms | {built:.0} ms | {:.1} / {:.1} ms | {} | {:.0} |",
            median(stored),
            median(rebuilt),
            median(read),
            median(warm.clone()),
            percentile(warm, 95),
            cold.map_or("(no hmg binary)".into(), |c| format!("{c:.0} ms")),
            store_bytes(&path) as f64 / n as f64
        );
    }
    // The approximate index against the exact one.
    let mut model = shared.clone();
    let mut queries: Vec<(Vec<f32>, bool)> = QUERIES
        .iter()
        .map(|q| {
            (
                model.embed(&[q], Role::Query).unwrap().remove(0),
                is_cjk_text(q),
            )
        })
        .collect();
    // Passages as queries too: other copies of pool texts, other noise.
    let mut other = Replay {
        seed: 0x1234_5678_9abc_def1,
        ..replay.clone()
    };
    for i in (0..replay.pool.len()).step_by(replay.pool.len() / 60) {
        let text = replay.text(i);
        let v = other.embed(&[&text], Role::Passage).unwrap().remove(0);
        queries.push((v, is_cjk_text(&text)));
    }
    println!(
        "\n| rows | build (one pass) | exact search p50 / p95 | approximate p50 / p95 | recall@10 vs exact |"
    );
    println!("| --- | --- | --- | --- | --- |");
    let rows: Vec<usize> = std::env::var("HMG_SCALE_ANN")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_else(|| vec![100_000, 1_000_000]);
    for n in rows {
        approximate(&replay, n, &queries);
    }
}
