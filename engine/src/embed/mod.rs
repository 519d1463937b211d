//! Text embeddings: the [`Embedder`] seam, the real model (an ONNX
//! BERT-family encoder run by tract, [`onnx::OnnxEmbedder`]) and a
//! deterministic stand-in for tests ([`hashed::HashedEmbedder`]).
//!
//! A model directory holds `model.onnx` (or `e5-small.onnx`), a tokenizer
//! (`tokenizer.bin`, HMG's compact Unigram file) and optionally
//! `hmg-model.json` naming the files, the query/passage prefixes, the pooling
//! and the token window (see docs/model.md). Texts longer than the window are
//! truncated to it: memories are short, and the head of a long one carries
//! its subject.

pub mod hashed;
pub mod onnx;
pub mod unigram;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Deserialize;

use crate::error::{Error, Result};

/// An embedder loaded ahead of any store (see [`preload`]).
static PRELOADED: Mutex<Option<(PathBuf, onnx::OnnxEmbedder)>> = Mutex::new(None);

/// Loads the model in `dir` and keeps it for the first store opened with the
/// same model directory; returns its fingerprint. Embeds one text so that
/// everything lazily built on first use is built now.
pub fn preload(dir: &Path) -> Result<String> {
    let mut embedder = onnx::OnnxEmbedder::load(dir)?;
    embedder.embed(&["warm-up"], Role::Query)?;
    let fingerprint = embedder.fingerprint().to_owned();
    *PRELOADED.lock().unwrap_or_else(|e| e.into_inner()) = Some((dir.to_owned(), embedder));
    Ok(fingerprint)
}

/// The preloaded embedder, if it was loaded from `dir` (taken: one store owns it).
pub fn take_preloaded(dir: &Path) -> Option<onnx::OnnxEmbedder> {
    let mut slot = PRELOADED.lock().unwrap_or_else(|e| e.into_inner());
    match slot.take() {
        Some((loaded, embedder)) if loaded == dir => Some(embedder),
        other => {
            *slot = other;
            None
        }
    }
}

/// Runs `f` on the model in `dir` with no store open (a host's embedding
/// instance): the preloaded embedder when it came from `dir`, else the
/// model loaded from `dir` now and kept for the next call.
pub fn with_detached<R>(dir: &Path, f: impl FnOnce(&mut dyn Embedder) -> R) -> Result<R> {
    let mut slot = PRELOADED.lock().unwrap_or_else(|e| e.into_inner());
    if slot.as_ref().is_none_or(|(loaded, _)| loaded != dir) {
        *slot = Some((dir.to_owned(), onnx::OnnxEmbedder::load(dir)?));
    }
    let (_, embedder) = slot.as_mut().expect("loaded above");
    Ok(f(embedder))
}

/// What a text is, for models that embed queries and passages differently
/// (e5: `query: ` / `passage: ` prefixes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Query,
    Passage,
}

pub trait Embedder: Send {
    /// Identifies the model and tokenizer: vectors made under another
    /// fingerprint are not comparable and are not used.
    fn fingerprint(&self) -> &str;
    fn dim(&self) -> usize;
    /// One L2-normalised vector per text, in order.
    fn embed(&mut self, texts: &[&str], role: Role) -> Result<Vec<Vec<f32>>>;
}

/// `hmg-model.json`; every field is optional.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    pub onnx: Option<String>,
    pub tokenizer: Option<String>,
    pub query_prefix: String,
    pub passage_prefix: String,
    pub pooling: Pooling,
    pub max_tokens: usize,
    /// Texts embedded per forward pass when many are embedded at once.
    pub batch: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pooling {
    /// Mean of the token states under the attention mask (e5).
    Mean,
    /// The first token's state (bge, BERT `[CLS]`).
    Cls,
}

impl Default for Manifest {
    fn default() -> Manifest {
        Manifest {
            name: "multilingual-e5-small".into(),
            onnx: None,
            tokenizer: None,
            query_prefix: "query: ".into(),
            passage_prefix: "passage: ".into(),
            pooling: Pooling::Mean,
            max_tokens: 512,
            batch: 16,
        }
    }
}

impl Manifest {
    pub fn parse(json: &str) -> Result<Manifest> {
        serde_json::from_str(json).map_err(|e| Error::Model(format!("hmg-model.json: {e}")))
    }

    pub fn prefix(&self, role: Role) -> &str {
        match role {
            Role::Query => &self.query_prefix,
            Role::Passage => &self.passage_prefix,
        }
    }
}

/// Scales a vector to unit length (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
