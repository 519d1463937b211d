//! Shared pieces of the benchmark binaries: the real embedding model behind
//! a cache of exact texts, so that a re-run embeds nothing it embedded before.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use engine::embed::onnx::OnnxEmbedder;
use engine::embed::{Embedder, Role, normalize};

/// Milliseconds since `started`.
pub fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// The middle sample (the upper one of an even count).
pub fn median(samples: Vec<f64>) -> f64 {
    percentile(samples, 50)
}

/// The sample at the `p`-th percentile: sorted, the one at index
/// ⌊n·p/100⌋ (the last, at most).
pub fn percentile(mut samples: Vec<f64>, p: usize) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[(samples.len() * p / 100).min(samples.len() - 1)]
}

/// Ten short agent queries, Chinese (both scripts) and English, that the
/// speed benches embed and recall.
pub const QUERIES: &[&str] = &[
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

/// The model directory, found as the hosts find it (`$HMG_MODEL`, else the cache).
pub fn model_dir() -> PathBuf {
    hmg_cli::locate::model_dir(None).expect("no embedding model: run scripts/model/fetch.sh")
}

/// One import line: a visible memory of the bench scope, its id the `i`-th
/// of a fixed, sorted series.
pub fn atom_line(i: usize, content: &str) -> String {
    let id = ulid::Ulid::from_parts(1_793_491_200_000, i as u128 + 1).to_string();
    let atom = serde_json::json!({
        "type": "atom", "atom_id": id, "content": content, "kind": "memory",
        "source": "agent",
        "scope": {"tenant_id": "bench", "workspace": "acme", "repository": "shop", "branch": "main"},
        "epistemic": "actual", "polarity": "affirmative", "exposure_state": "visible",
        "negated": false, "superseded_by": null,
        "created_at": "2026-11-01T00:00:00Z", "updated_at": "2026-11-01T00:00:00Z"
    });
    let mut line = atom.to_string();
    line.push('\n');
    line
}

struct Inner {
    model: OnnxEmbedder,
    cache: HashMap<(bool, String), Vec<f32>>,
    path: PathBuf,
    added: usize,
}

/// An embedder several stores share (one model, one cache).
#[derive(Clone)]
pub struct SharedEmbedder {
    inner: Arc<Mutex<Inner>>,
    fingerprint: String,
}

impl SharedEmbedder {
    /// Loads the model and the cache file `~/.cache/hmg/bench/<name>-<fingerprint>.bin`.
    pub fn load(name: &str) -> SharedEmbedder {
        let dir = model_dir();
        let model = OnnxEmbedder::load(&dir).unwrap_or_else(|e| {
            panic!(
                "no model at {} ({e}); run scripts/model/fetch.sh",
                dir.display()
            )
        });
        let fingerprint = model.fingerprint().to_owned();
        let safe: String = fingerprint
            .chars()
            .map(|c| if c.is_alphanumeric() { c } else { '-' })
            .collect();
        let cache =
            hmg_cli::default_cache_dir().expect("a cache directory (HOME or HMG_CACHE_DIR)");
        let path = cache.join(format!("bench/{name}-{safe}.bin"));
        let cache = read_cache(&path, model.dim());
        eprintln!(
            "embedding cache: {} entries from {}",
            cache.len(),
            path.display()
        );
        SharedEmbedder {
            inner: Arc::new(Mutex::new(Inner {
                model,
                cache,
                path,
                added: 0,
            })),
            fingerprint,
        }
    }

    /// Embeds (in batches) whatever of these texts is not cached yet.
    pub fn warm(&self, passages: &[&str], queries: &[&str]) {
        for (texts, role) in [(passages, Role::Passage), (queries, Role::Query)] {
            let mut inner = self.inner.lock().unwrap();
            let query = role == Role::Query;
            let mut missing: Vec<&str> = texts
                .iter()
                .copied()
                .filter(|t| !inner.cache.contains_key(&(query, (*t).to_owned())))
                .collect();
            missing.sort_unstable();
            missing.dedup();
            let started = std::time::Instant::now();
            for chunk in missing.chunks(256) {
                let vs = inner.model.embed(chunk, role).expect("embed");
                for (t, v) in chunk.iter().zip(vs) {
                    inner.cache.insert((query, (*t).to_owned()), v);
                }
                inner.added += chunk.len();
            }
            if !missing.is_empty() {
                eprintln!(
                    "embedded {} {:?} texts in {:.1} s",
                    missing.len(),
                    role,
                    started.elapsed().as_secs_f64()
                );
            }
        }
    }

    pub fn fingerprint(&self) -> String {
        self.fingerprint.clone()
    }

    /// Writes the cache back if anything was added.
    pub fn save(&self) {
        let inner = self.inner.lock().unwrap();
        if inner.added == 0 {
            return;
        }
        if let Some(parent) = inner.path.parent() {
            std::fs::create_dir_all(parent).expect("cache dir");
        }
        let mut out = Vec::new();
        for ((query, text), v) in &inner.cache {
            out.push(u8::from(*query));
            out.extend_from_slice(&(text.len() as u32).to_le_bytes());
            out.extend_from_slice(text.as_bytes());
            for x in v {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        let tmp = inner.path.with_extension("tmp");
        std::fs::File::create(&tmp)
            .and_then(|mut f| f.write_all(&out))
            .and_then(|()| std::fs::rename(&tmp, &inner.path))
            .expect("write embedding cache");
    }
}

fn read_cache(path: &PathBuf, dim: usize) -> HashMap<(bool, String), Vec<f32>> {
    let mut cache = HashMap::new();
    let Ok(bytes) = std::fs::read(path) else {
        return cache;
    };
    let mut at = 0;
    while at + 5 <= bytes.len() {
        let query = bytes[at] == 1;
        let len = u32::from_le_bytes(bytes[at + 1..at + 5].try_into().unwrap()) as usize;
        let end = at + 5 + len + dim * 4;
        if end > bytes.len() {
            break;
        }
        let text = String::from_utf8_lossy(&bytes[at + 5..at + 5 + len]).into_owned();
        let v = bytes[at + 5 + len..end]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        cache.insert((query, text), v);
        at = end;
    }
    cache
}

impl Embedder for SharedEmbedder {
    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        self.inner.lock().unwrap().model.dim()
    }

    fn embed(&mut self, texts: &[&str], role: Role) -> engine::Result<Vec<Vec<f32>>> {
        let query = role == Role::Query;
        let mut inner = self.inner.lock().unwrap();
        let mut out = Vec::with_capacity(texts.len());
        for t in texts {
            let key = (query, (*t).to_owned());
            if let Some(v) = inner.cache.get(&key) {
                out.push(v.clone());
            } else {
                let v = inner.model.embed(&[t], role)?.remove(0);
                inner.cache.insert(key, v.clone());
                inner.added += 1;
                out.push(v);
            }
        }
        Ok(out)
    }
}

/// The LoCoMo benchmark file (`../shared/bench/locomo-dev.json`).
pub mod locomo {
    use serde_json::Value;

    pub struct Turn {
        pub id: String,
        pub content: String,
    }

    pub struct Question {
        pub text: String,
        pub evidence: Vec<String>,
        pub category: u64,
    }

    /// The conversations of a LoCoMo file: `(sample id, turns, questions)`;
    /// a turn's content is `speaker: text` (plus an image caption).
    pub fn load(path: &str) -> Vec<(String, Vec<Turn>, Vec<Question>)> {
        let data: Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("read LoCoMo json"))
                .expect("parse");
        let mut out = Vec::new();
        for sample in data.as_array().expect("array of samples") {
            let conv = &sample["conversation"];
            let mut sessions: Vec<(u64, &Vec<Value>)> = conv
                .as_object()
                .expect("conversation object")
                .iter()
                .filter_map(|(k, v)| {
                    Some((k.strip_prefix("session_")?.parse().ok()?, v.as_array()?))
                })
                .collect();
            sessions.sort_by_key(|(n, _)| *n);
            let mut turns = Vec::new();
            for (_, session) in sessions {
                for turn in session {
                    let mut content = format!(
                        "{}: {}",
                        turn["speaker"].as_str().unwrap_or(""),
                        turn["text"].as_str().unwrap_or("")
                    );
                    if let Some(caption) = turn["blip_caption"].as_str() {
                        content.push_str(&format!(" [image: {caption}]"));
                    }
                    turns.push(Turn {
                        id: turn["dia_id"].as_str().unwrap_or("").to_owned(),
                        content,
                    });
                }
            }
            let questions = sample["qa"]
                .as_array()
                .expect("qa")
                .iter()
                .map(|q| Question {
                    text: q["question"].as_str().unwrap_or("").to_owned(),
                    evidence: q["evidence"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|e| e.as_str().map(str::to_owned))
                        .collect(),
                    category: q["category"].as_u64().unwrap_or(0),
                })
                .collect();
            out.push((
                sample["sample_id"].as_str().unwrap_or("").to_owned(),
                turns,
                questions,
            ));
        }
        out
    }
}

/// Texts whose real embeddings replay at scale: every LoCoMo dev turn
/// (`../shared/bench/locomo-dev.json`, if present) and the agent-memory set.
pub fn pool_texts() -> Vec<String> {
    let mut pool_texts: Vec<String> = Vec::new();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/bench/locomo-dev.json"
    );
    let locomo: serde_json::Value = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    for sample in locomo.as_array().into_iter().flatten() {
        for (k, session) in sample["conversation"].as_object().into_iter().flatten() {
            if k.starts_with("session_") {
                for turn in session.as_array().into_iter().flatten() {
                    if let Some(text) = turn["text"].as_str() {
                        pool_texts.push(format!(
                            "{}: {text}",
                            turn["speaker"].as_str().unwrap_or("")
                        ));
                    }
                }
            }
        }
    }
    pool_texts.extend(
        include_str!("../data/agent-memory-memories.tsv")
            .lines()
            .filter_map(|l| l.split_once('\t').map(|p| p.1.to_owned())),
    );
    pool_texts
}

/// The pool texts with their real passage embeddings (and `queries`
/// embedded too), from the cache or the model.
pub fn pool(
    shared: &SharedEmbedder,
    texts: Vec<String>,
    queries: &[&str],
) -> Vec<(String, Vec<f32>)> {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    shared.warm(&refs, queries);
    shared.save();
    let mut cache = shared.clone();
    let vectors = cache.embed(&refs, Role::Passage).unwrap();
    texts.into_iter().zip(vectors).collect()
}

/// Passages: the real vector of a pool text plus small noise; queries: the
/// real model.
#[derive(Clone)]
pub struct Replay {
    pub pool: Vec<(String, Vec<f32>)>,
    pub model: SharedEmbedder,
    pub seed: u64,
    /// What the stored vectors say they were made with: `replay-e5`, or the
    /// real model's fingerprint for a store the real hosts should search
    /// with the model (its passages are still replays).
    pub fingerprint: String,
}

impl Replay {
    pub fn text(&self, i: usize) -> String {
        format!("{} (#{i})", self.pool[i % self.pool.len()].0)
    }
}

impl Embedder for Replay {
    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        self.pool[0].1.len()
    }

    fn embed(&mut self, texts: &[&str], role: Role) -> engine::Result<Vec<Vec<f32>>> {
        if role == Role::Query {
            return self.model.embed(texts, role);
        }
        Ok(texts
            .iter()
            .map(|t| {
                let i: usize = t
                    .rsplit("(#")
                    .next()
                    .and_then(|n| n.trim_end_matches(')').parse().ok())
                    .unwrap_or(0);
                let mut v = self.pool[i % self.pool.len()].1.clone();
                for x in &mut v {
                    // xorshift noise, σ ≈ 0.01 per dimension
                    self.seed ^= self.seed << 13;
                    self.seed ^= self.seed >> 7;
                    self.seed ^= self.seed << 17;
                    *x += ((self.seed % 2000) as f32 / 1000.0 - 1.0) * 0.017;
                }
                normalize(&mut v);
                v
            })
            .collect())
    }
}
