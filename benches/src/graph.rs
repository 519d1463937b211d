//! Knowledge-graph benchmarks (issue 11).
//!
//! 1. Extraction quality on `benches/data/entities.tsv` (90 zh-Hant,
//!    zh-Hans and en sentences labelled by hand): precision and recall of
//!    entity names (aliases count as their canonical name), type accuracy
//!    of the names found, per half and per language.
//! 2. Extraction cost per memory (entities + relation templates), native,
//!    beside the embedding of the same texts (the model's own cost).
//! 3. Neighbourhood and shortest-path latency at 10k and 100k atoms, p50 and
//!    p95, and the graph's size: entities, mentions, triples per atom.
//!
//! `cargo run --release -p hmg-benches --bin graph`

use std::collections::BTreeMap;
use std::time::Instant;

use engine::atom::AtomId;
use engine::embed::onnx::OnnxEmbedder;
use engine::embed::{Embedder, Role};
use engine::graph::fold::key;
use engine::graph::{entities, mentions, relations};
use engine::log::backend::Backend;
use engine::ops::{GraphScope, NeighborhoodRequest, PathRequest};
use engine::{Config, FixedEnv, MemBackend, Memory, Scope, Signals, Timestamp};

const SAMPLE: &str = include_str!("../data/entities.tsv");

fn main() {
    quality();
    cost();
    for n in [10_000usize, 100_000] {
        latency(n);
    }
}

/// A labelled sentence: line, language, text, expected `(name, type)`s.
type Row<'a> = (usize, &'a str, &'a str, Vec<(String, String)>);

struct Tally {
    found: usize,
    expected: usize,
    right: usize,
    typed: usize,
}

fn quality() {
    let rows: Vec<Row<'_>> = SAMPLE
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .enumerate()
        .map(|(n, l)| {
            let f: Vec<&str> = l.splitn(3, '\t').collect();
            let want = f[2]
                .split(" ; ")
                .filter_map(|e| e.rsplit_once(':'))
                .map(|(name, t)| (name.trim().to_owned(), t.trim().to_owned()))
                .collect();
            (n + 1, f[0], f[1], want)
        })
        .collect();
    println!(
        "## entity extraction: {} sentences (benches/data/entities.tsv)\n",
        rows.len()
    );
    println!("| part | sentences | precision | recall | type accuracy |");
    println!("| --- | --- | --- | --- | --- |");
    let mut groups: BTreeMap<String, Tally> = BTreeMap::new();
    let mut misses = Vec::new();
    for (line, lang, text, want) in &rows {
        let got = entities(text);
        let half = if line % 2 == 1 {
            "tuning half"
        } else {
            "held-out half"
        };
        for part in [half.to_owned(), (*lang).to_owned(), "all".to_owned()] {
            let t = groups.entry(part).or_insert(Tally {
                found: 0,
                expected: 0,
                right: 0,
                typed: 0,
            });
            t.found += got.len();
            t.expected += want.len();
            for (name, kind) in want {
                if let Some(m) = got.iter().find(|m| m.key == key(name)) {
                    t.right += 1;
                    t.typed += usize::from(m.kind.as_str() == kind);
                }
            }
        }
        let got_names: Vec<String> = got
            .iter()
            .map(|m| format!("{}:{}", m.name, m.kind.as_str()))
            .collect();
        let want_names: Vec<String> = want.iter().map(|(n, k)| format!("{n}:{k}")).collect();
        if got.len() != want.len()
            || want
                .iter()
                .any(|(n, _)| !got.iter().any(|m| m.key == key(n)))
        {
            misses.push(format!(
                "- line {line} ({lang}) want {want_names:?} got {got_names:?}: {text}"
            ));
        }
    }
    for (part, t) in &groups {
        let n = rows
            .iter()
            .filter(|(line, lang, _, _)| match part.as_str() {
                "all" => true,
                "tuning half" => line % 2 == 1,
                "held-out half" => line % 2 == 0,
                l => *lang == l,
            })
            .count();
        println!(
            "| {part} | {n} | {:.3} | {:.3} | {:.3} |",
            t.right as f64 / t.found.max(1) as f64,
            t.right as f64 / t.expected.max(1) as f64,
            t.typed as f64 / t.right.max(1) as f64
        );
    }
    if std::env::var_os("VERBOSE").is_some() {
        println!("\n{}", misses.join("\n"));
    }
    println!();
}

/// Texts like the memories agents write, zh and en.
fn corpus(n: usize) -> Vec<String> {
    const TECH: &[&str] = &[
        "PostgreSQL",
        "Redis",
        "Kafka",
        "Kubernetes",
        "React",
        "TypeScript",
        "MySQL",
        "MongoDB",
        "Elasticsearch",
        "Docker",
        "Nginx",
        "Grafana",
        "Prometheus",
        "Vue",
        "Django",
        "FastAPI",
        "Terraform",
        "RabbitMQ",
        "ClickHouse",
        "Spark",
    ];
    const FORMS: &[&str] = &[
        "{s} 服務用 {a} 做主資料庫，不用 {b}",
        "{s} depends on {a} and runs on {b}",
        "我們決定把 {s} 從 {a} 遷移到 {b}",
        "The {s} team prefers {a} over {b} for new work",
        "{s} 的快取改用 {a}，監控接 {b}",
        "{s} uses {a}; the config is in config/{s}.yaml",
    ];
    (0..n)
        .map(|i| {
            let service = format!("Svc{}Api", i % 997);
            let a = TECH[i % TECH.len()];
            let b = TECH[(i * 7 + 3) % TECH.len()];
            FORMS[i % FORMS.len()]
                .replace("{s}", &service)
                .replace("{a}", a)
                .replace("{b}", b)
        })
        .collect()
}

fn cost() {
    let texts = corpus(2_000);
    let started = Instant::now();
    let mut entities_found = 0;
    let mut triples = 0;
    for t in &texts {
        let m = mentions(t);
        triples += relations::triples(t, &m).len();
        entities_found += m.len();
    }
    let per = started.elapsed().as_secs_f64() * 1e6 / texts.len() as f64;
    let mut model = OnnxEmbedder::load(&hmg_benches::model_dir()).expect("the embedding model");
    let sample: Vec<&str> = texts.iter().take(32).map(String::as_str).collect();
    let started = Instant::now();
    for t in &sample {
        model.embed(&[t], Role::Passage).unwrap();
    }
    let embed = started.elapsed().as_secs_f64() * 1e6 / sample.len() as f64;
    println!("## extraction cost (native, one core)\n");
    println!(
        "entities + triples per memory: {per:.1} µs ({:.2} entities, {:.2} triples each); embedding the same texts: {:.0} µs each → extraction is {:.2} % of it\n",
        entities_found as f64 / texts.len() as f64,
        triples as f64 / texts.len() as f64,
        embed,
        100.0 * per / embed
    );
}

fn latency(n: usize) {
    let scope = Scope::new("bench", "acme", "shop", "main");
    let mut memory = Memory::open(
        MemBackend::new(),
        Config {
            signals: Signals {
                semantic: false,
                ..Signals::default()
            },
            compact_log_bytes: u64::MAX,
            ..Config::default()
        },
        Box::new(FixedEnv {
            now: Timestamp(1_783_000_000_000),
            counter: 0,
        }),
    )
    .unwrap();
    let texts = corpus(n);
    let started = Instant::now();
    let mut jsonl = String::from(
        "{\"type\":\"header\",\"format\":\"hmg-export\",\"version\":1,\"snapshot_version\":0}\n",
    );
    for (i, t) in texts.iter().enumerate() {
        let id = AtomId(((1_783_000_000_000u128 + i as u128) << 80) | i as u128).to_string();
        let line = serde_json::json!({
            "type": "atom", "atom_id": id, "content": t, "kind": "memory", "source": "bench",
            "scope": {"tenant_id": "bench", "workspace": "acme", "repository": "shop", "branch": "main"},
            "epistemic": "actual", "polarity": "affirmative", "exposure_state": "visible",
            "negated": false, "created_at": "2026-07-01T00:00:00Z", "updated_at": "2026-07-01T00:00:00Z"
        });
        jsonl.push_str(&line.to_string());
        jsonl.push('\n');
    }
    let r = memory.import(&jsonl).unwrap();
    assert_eq!(r.reason, None);
    let build = started.elapsed().as_secs_f64();
    let within = GraphScope {
        scope: scope.clone(),
        ..GraphScope::default()
    };
    let time = |f: &mut dyn FnMut()| {
        let mut t = Vec::new();
        for _ in 0..30 {
            let s = Instant::now();
            f();
            t.push(s.elapsed().as_secs_f64() * 1000.0);
        }
        t.sort_by(f64::total_cmp);
        (t[t.len() / 2], t[t.len() * 95 / 100])
    };
    let mut results = Vec::new();
    for (name, entity, depth) in [
        ("hub entity (PostgreSQL)", "PostgreSQL", 1),
        ("hub entity, depth 2", "PostgreSQL", 2),
        ("rare entity (Svc7Api)", "Svc7Api", 2),
    ] {
        let req = NeighborhoodRequest {
            entity: entity.into(),
            depth: Some(depth),
            limit: Some(50),
            within: within.clone(),
        };
        let (p50, p95) = time(&mut || {
            memory.neighborhood(&req).unwrap();
        });
        results.push(format!(
            "| {n} | neighborhood, {name} | {p50:.2} | {p95:.2} |"
        ));
    }
    let req = PathRequest {
        from: "Svc7Api".into(),
        to: "Svc911Api".into(),
        max_depth: Some(4),
        within: within.clone(),
    };
    let (p50, p95) = time(&mut || {
        memory.shortest_path(&req).unwrap();
    });
    results.push(format!(
        "| {n} | shortest_path Svc7Api → Svc911Api | {p50:.2} | {p95:.2} |"
    ));
    let (entities, mentions, triples) = memory.graph_totals();
    let backend = memory.backend();
    let disk: u64 = backend
        .list()
        .unwrap()
        .iter()
        .filter_map(|f| backend.len(f).unwrap())
        .sum();
    println!("## graph at {n} atoms (built by import in {build:.1} s)\n");
    println!("| atoms | query | p50 ms | p95 ms |\n| --- | --- | --- | --- |");
    println!("{}", results.join("\n"));
    println!(
        "\n{entities} entities, {:.2} mentions and {:.2} triples per atom; the extracted graph adds 0 bytes on disk (derived on open; store {:.0} bytes per atom)\n",
        mentions as f64 / n as f64,
        triples as f64 / n as f64,
        disk as f64 / n as f64
    );
}
