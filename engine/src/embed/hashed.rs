//! A deterministic stand-in for the neural model, for tests that exercise
//! the vector path (storage, erasure, fusion, batching) without loading
//! 200 MB: each keyword token adds ±1 to a hashed dimension, then the vector
//! is normalised. Texts sharing terms are close; it knows no synonyms and no
//! other language, so a test passing with it proves plumbing, not semantics.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{Embedder, Role, normalize};
use crate::error::Result;
use crate::index::tokenize::tokens;

#[derive(Debug, Clone)]
pub struct HashedEmbedder {
    dim: usize,
    fingerprint: String,
    /// Calls to `embed` and texts embedded, shared with clones (tests check
    /// batching, and that opening a store embeds nothing).
    pub calls: Arc<AtomicUsize>,
    pub texts: Arc<AtomicUsize>,
}

impl HashedEmbedder {
    pub fn new(dim: usize) -> HashedEmbedder {
        HashedEmbedder {
            dim,
            fingerprint: format!("hashed-{dim}"),
            calls: Arc::default(),
            texts: Arc::default(),
        }
    }

    /// The same vectors under another fingerprint (a different model).
    pub fn renamed(mut self, fingerprint: &str) -> HashedEmbedder {
        fingerprint.clone_into(&mut self.fingerprint);
        self
    }

    pub fn vector(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dim];
        for token in tokens(text) {
            let mut h = DefaultHasher::new();
            token.hash(&mut h);
            let bits = h.finish();
            let sign = if bits >> 63 == 0 { 1.0 } else { -1.0 };
            v[(bits % self.dim as u64) as usize] += sign;
        }
        normalize(&mut v);
        v
    }
}

impl Embedder for HashedEmbedder {
    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&mut self, texts: &[&str], _role: Role) -> Result<Vec<Vec<f32>>> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.texts.fetch_add(texts.len(), Ordering::Relaxed);
        Ok(texts.iter().map(|t| self.vector(t)).collect())
    }
}
