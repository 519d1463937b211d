//! Shared pieces of the benchmark binaries: the real embedding model behind
//! a cache of exact texts, so that a re-run embeds nothing it embedded before.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use engine::embed::onnx::OnnxEmbedder;
use engine::embed::{Embedder, Role};

/// The model directory, found as the hosts find it (`$HMG_MODEL`, else the cache).
pub fn model_dir() -> PathBuf {
    hmg_cli::locate::model_dir(None).expect("no embedding model: run scripts/model/fetch.sh")
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
