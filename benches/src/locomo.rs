//! LoCoMo turn-level evidence retrieval (protocol: ../shared/bench/README.md).
//!
//! One store per conversation, one memory per dialogue turn
//! (`"<speaker>: <text>"` plus ` [image: <caption>]`), memorized in order
//! (one fixed clock: every turn has the same time); each question is a
//! recall query;
//! a question counts for recall_any@k when one evidence turn is in the top k,
//! for recall_all@k when all are. Questions whose evidence does not resolve
//! to a turn are skipped.
//!
//! Systems: `bm25` (the reference: lower-cased word tokens, English stop
//! words removed, plain BM25 k1 = 1.2, b = 0.75) and the engine's recall, run
//! natively, three ways: `keyword` (semantic signal off), `semantic`
//! (keyword signal off) and `hybrid` (the default engine). The embedding
//! model is the one `scripts/model/fetch.sh` prepares (or `HMG_MODEL_DIR`);
//! embeddings are cached by exact text under `~/.cache/hmg/bench/` so that
//! re-runs only pay for recall.
//!
//!     cargo run --release -p hmg-benches --bin locomo -- [path/to/locomo-dev.json]

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io::Write;

use engine::embed::{Embedder, Role, dot};
use engine::ops::{MemorizeRequest, RecallRequest};
use engine::{Config, FixedEnv, MemBackend, Memory, Scope, Signals, Timestamp};
use hmg_benches::SharedEmbedder;
use hmg_benches::locomo::{Turn, load};

const KS: [usize; 2] = [5, 10];
/// The first three conversations of the file (conv-26, conv-30, conv-41)
/// are the half ranking changes are tuned on; the other two (conv-42,
/// conv-43) are held out. Fixed before the reply signal was tuned.
const TUNING_CONVERSATIONS: usize = 3;

/// A retrieval system over one conversation.
trait System {
    fn top(&mut self, query: &str, k: usize) -> Vec<String>;
}

struct Hmg {
    memory: Memory<MemBackend>,
    scope: Scope,
    /// atom id → dialogue ids (exact duplicates share an atom).
    turns_of: HashMap<String, Vec<String>>,
}

impl Hmg {
    fn new(turns: &[Turn], signals: Signals, embedder: &SharedEmbedder) -> Hmg {
        let env = FixedEnv {
            now: Timestamp(1_683_000_000_000),
            counter: 0,
        };
        let mut memory = Memory::open(
            MemBackend::new(),
            Config {
                max_content_bytes: 1 << 16,
                signals,
                ..Config::default()
            },
            Box::new(env),
        )
        .unwrap();
        memory.set_embedder(Box::new(embedder.clone()));
        let scope = Scope::new("bench", "locomo", "conversation", "main");
        let mut turns_of: HashMap<String, Vec<String>> = HashMap::new();
        for turn in turns {
            let r = memory
                .memorize(&MemorizeRequest {
                    content: turn.content.clone(),
                    source: None,
                    scope: scope.clone(),
                })
                .unwrap();
            if let Some(id) = r.atom_id {
                turns_of
                    .entry(id.to_string())
                    .or_default()
                    .push(turn.id.clone());
            }
        }
        Hmg {
            memory,
            scope,
            turns_of,
        }
    }
}

impl System for Hmg {
    fn top(&mut self, query: &str, k: usize) -> Vec<String> {
        let req = RecallRequest {
            query: query.to_owned(),
            max_results: Some(k as u32),
            scope: self.scope.clone(),
            ..Default::default()
        };
        let hits = self.memory.recall(&req).unwrap().atoms;
        hits.iter()
            .flat_map(|h| {
                self.turns_of
                    .get(&h.atom_id.to_string())
                    .cloned()
                    .unwrap_or_default()
            })
            .take(k)
            .collect()
    }
}

/// Plain cosine ranking over the same embeddings (a reference for `semantic`).
struct Cosine {
    embedder: SharedEmbedder,
    docs: Vec<(String, Vec<f32>)>,
}

impl Cosine {
    fn new(turns: &[Turn], embedder: &SharedEmbedder) -> Cosine {
        let mut embedder = embedder.clone();
        let texts: Vec<&str> = turns.iter().map(|t| t.content.as_str()).collect();
        let vs = embedder.embed(&texts, Role::Passage).unwrap();
        Cosine {
            embedder,
            docs: turns.iter().map(|t| t.id.clone()).zip(vs).collect(),
        }
    }
}

impl System for Cosine {
    fn top(&mut self, query: &str, k: usize) -> Vec<String> {
        let q = self
            .embedder
            .embed(&[query], Role::Query)
            .unwrap()
            .remove(0);
        let scored: Vec<(f32, usize)> = self
            .docs
            .iter()
            .enumerate()
            .map(|(i, (_, v))| (dot(&q, v), i))
            .collect();
        best(scored, k, |i| self.docs[i].0.clone())
    }
}

/// Ids of the `k` best-scored documents (ties: earlier document first).
fn best<S: PartialOrd>(
    mut scored: Vec<(S, usize)>,
    k: usize,
    id: impl Fn(usize) -> String,
) -> Vec<String> {
    scored.sort_by(|a, b| {
        b.0.partial_cmp(&a.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.1.cmp(&b.1))
    });
    scored.into_iter().take(k).map(|(_, i)| id(i)).collect()
}

const STOP: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "did", "do", "does", "for", "from",
    "had", "has", "have", "he", "her", "his", "how", "i", "if", "in", "into", "is", "it", "its",
    "me", "my", "not", "of", "on", "or", "our", "she", "so", "that", "the", "their", "them",
    "they", "this", "to", "was", "we", "were", "what", "when", "where", "which", "who", "why",
    "will", "with", "you", "your",
];

fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP.contains(w))
        .map(str::to_owned)
        .collect()
}

struct Bm25 {
    docs: Vec<(String, Vec<String>)>,
    df: HashMap<String, usize>,
    avg: f64,
}

impl Bm25 {
    fn new(turns: &[Turn]) -> Bm25 {
        let docs: Vec<(String, Vec<String>)> = turns
            .iter()
            .map(|t| (t.id.clone(), words(&t.content)))
            .collect();
        let mut df: HashMap<String, usize> = HashMap::new();
        for (_, d) in &docs {
            for w in d.iter().collect::<HashSet<_>>() {
                *df.entry(w.clone()).or_default() += 1;
            }
        }
        let avg =
            docs.iter().map(|(_, d)| d.len()).sum::<usize>() as f64 / docs.len().max(1) as f64;
        Bm25 { docs, df, avg }
    }
}

impl System for Bm25 {
    fn top(&mut self, query: &str, k: usize) -> Vec<String> {
        let n = self.docs.len() as f64;
        let q: HashSet<String> = words(query).into_iter().collect();
        let scored: Vec<(f64, usize)> = self
            .docs
            .iter()
            .enumerate()
            .map(|(i, (_, d))| {
                let score = q
                    .iter()
                    .map(|w| {
                        let tf = d.iter().filter(|x| *x == w).count() as f64;
                        let df = *self.df.get(w).unwrap_or(&0) as f64;
                        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                        idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * d.len() as f64 / self.avg))
                    })
                    .sum::<f64>();
                (score, i)
            })
            .filter(|(s, _)| *s > 0.0)
            .collect();
        best(scored, k, |i| self.docs[i].0.clone())
    }
}

#[derive(Default, Clone, Copy)]
struct Tally {
    questions: usize,
    any: [usize; 2],
    all: [usize; 2],
}

fn pct(n: usize, d: usize) -> String {
    if d == 0 {
        "-".into()
    } else {
        format!("{:.1}", 100.0 * n as f64 / d as f64)
    }
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/bench/locomo-dev.json".into());
    let data = load(&path);
    let systems: [&str; 6] = [
        "bm25",
        "cosine",
        "keyword",
        "semantic",
        "hybrid-no-graph",
        "hybrid",
    ];
    let embedder = SharedEmbedder::load("locomo");
    // Embed every turn and question up front, in batches (the cache keeps them).
    let turns_text: Vec<&str> = data
        .iter()
        .flat_map(|(_, t, _)| t.iter().map(|t| t.content.as_str()))
        .collect();
    let questions_text: Vec<&str> = data
        .iter()
        .flat_map(|(_, _, q)| q.iter().map(|q| q.text.as_str()))
        .collect();
    embedder.warm(&turns_text, &questions_text);
    // `HMG_LOCOMO_DUMP=FILE`: one JSON line per question with every system's
    // top 10, for looking at misses.
    let mut dump = std::env::var_os("HMG_LOCOMO_DUMP")
        .map(|p| std::io::BufWriter::new(std::fs::File::create(p).expect("dump file")));
    // system → (half, category) → tally
    let mut tallies: BTreeMap<&str, BTreeMap<(char, u64), Tally>> = BTreeMap::new();
    let mut skipped = 0;
    for (position, (sample, turns, questions)) in data.iter().enumerate() {
        let half = if position < TUNING_CONVERSATIONS {
            'A'
        } else {
            'B'
        };
        let known: HashSet<&str> = turns.iter().map(|t| t.id.as_str()).collect();
        let mut runners: Vec<(&str, Box<dyn System>)> = vec![
            ("bm25", Box::new(Bm25::new(turns))),
            ("cosine", Box::new(Cosine::new(turns, &embedder))),
            (
                "keyword",
                Box::new(Hmg::new(
                    turns,
                    Signals {
                        keyword: true,
                        semantic: false,
                        graph: false,
                    },
                    &embedder,
                )),
            ),
            (
                "semantic",
                Box::new(Hmg::new(
                    turns,
                    Signals {
                        keyword: false,
                        semantic: true,
                        graph: false,
                    },
                    &embedder,
                )),
            ),
            (
                "hybrid-no-graph",
                Box::new(Hmg::new(
                    turns,
                    Signals {
                        graph: false,
                        ..Signals::default()
                    },
                    &embedder,
                )),
            ),
            (
                "hybrid",
                Box::new(Hmg::new(turns, Signals::default(), &embedder)),
            ),
        ];
        for q in questions {
            let evidence: Vec<&str> = q
                .evidence
                .iter()
                .map(String::as_str)
                .filter(|e| known.contains(e))
                .collect();
            if evidence.is_empty() {
                skipped += 1;
                continue;
            }
            let mut tops = serde_json::Map::new();
            for (name, system) in &mut runners {
                let top = system.top(&q.text, 10);
                tops.insert((*name).into(), top.clone().into());
                let t = tallies
                    .entry(name)
                    .or_default()
                    .entry((half, q.category))
                    .or_default();
                t.questions += 1;
                for (slot, k) in KS.iter().enumerate() {
                    let got: HashSet<&str> = top.iter().take(*k).map(String::as_str).collect();
                    t.any[slot] += usize::from(evidence.iter().any(|e| got.contains(e)));
                    t.all[slot] += usize::from(evidence.iter().all(|e| got.contains(e)));
                }
            }
            if let Some(out) = &mut dump {
                let line = serde_json::json!({
                    "sample": sample, "category": q.category, "question": q.text,
                    "evidence": evidence, "top": tops,
                });
                writeln!(out, "{line}").expect("dump write");
            }
        }
        eprintln!(
            "{sample}: {} turns, {} questions",
            turns.len(),
            questions.len()
        );
    }
    embedder.save();
    println!(
        "LoCoMo turn-level retrieval on {path} ({skipped} questions skipped: evidence not a turn; model {})\n",
        embedder.fingerprint()
    );
    println!("| system | categories | questions | any@5 | any@10 | all@5 | all@10 |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for name in systems {
        let per = &tallies[name];
        let sum = |filter: &dyn Fn(char, u64) -> bool| {
            per.iter().filter(|((h, c), _)| filter(*h, *c)).fold(
                Tally::default(),
                |mut acc, (_, t)| {
                    acc.questions += t.questions;
                    for i in 0..2 {
                        acc.any[i] += t.any[i];
                        acc.all[i] += t.all[i];
                    }
                    acc
                },
            )
        };
        let mut rows: Vec<(String, Tally)> = vec![
            ("all".into(), sum(&|_, _| true)),
            ("without 5".into(), sum(&|_, c| c != 5)),
            ("half A (tuning)".into(), sum(&|h, _| h == 'A')),
            ("half B (held out)".into(), sum(&|h, _| h == 'B')),
        ];
        let categories: BTreeSet<u64> = per.keys().map(|(_, c)| *c).collect();
        rows.extend(
            categories
                .into_iter()
                .map(|c| (format!("cat {c}"), sum(&|_, x| x == c))),
        );
        for (label, t) in rows {
            println!(
                "| {name} | {label} | {} | {} | {} | {} | {} |",
                t.questions,
                pct(t.any[0], t.questions),
                pct(t.any[1], t.questions),
                pct(t.all[0], t.questions),
                pct(t.all[1], t.questions)
            );
        }
    }
}
