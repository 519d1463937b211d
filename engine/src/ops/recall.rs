//! recall: hybrid retrieval fused into one score in (0, 1].
//!
//! Signals, each in [0, 1]:
//! - `keyword` — BM25 coverage of the query (see `index::keyword`);
//! - `chain` — relevance inherited by the head of a supersedes chain from a
//!   hidden older version that matched (× 0.8), so "PostgreSQL 16" still finds
//!   the memory that now says 17;
//! - `temporal` — recency, or membership in the window a time word names;
//! - `categorical` — epistemic weight (necessary 1, actual 0.75, possible 0.5)
//!   and kind hints in the query (handoff/交接, lesson/教訓, constraint/約束).
//!
//! `relevance = max(keyword, chain)` (the semantic signal joins this max-fusion
//! when embeddings land), and
//! `score = relevance · (0.70 + 0.15·temporal + 0.15·categorical)`;
//! with a time window the weights are `0.55 / 0.30 / 0.15`. A query made only
//! of time words ranks by the window alone. Hits below relevance 0.12 are noise
//! and dropped. Only visible, non-superseded atoms in the caller's scope (and
//! its ancestors) are returned; negated ones only on request.

use std::collections::HashMap;

use crate::atom::{Atom, AtomId, Epistemic, Exposure, Kind, Polarity};
use crate::error::Result;
use crate::index::keyword::KeywordHit;
use crate::index::temporal::{self, Window};
use crate::index::tokenize::tokens;
use crate::memory::Memory;
use crate::scope::Scope;
use crate::store::backend::Backend;
use crate::time::Timestamp;

pub const DEFAULT_MAX_RESULTS: u32 = 10;
pub const MAX_RESULTS_CAP: u32 = 200;
const MAX_QUERY_BYTES: usize = 4096;
const MIN_RELEVANCE: f64 = 0.12;
const CHAIN_DECAY: f64 = 0.8;

#[derive(Clone, Debug, Default)]
pub struct RecallRequest {
    pub query: String,
    pub max_results: Option<u32>,
    pub include_negated: bool,
    pub scope: Scope,
    pub remote: bool,
    pub explain: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Signal {
    pub name: &'static str,
    pub value: f64,
    pub contribution: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Recalled {
    pub atom_id: AtomId,
    pub content: String,
    pub score: f64,
    pub created_at: Timestamp,
    pub source: String,
    pub kind: Kind,
    pub epistemic: Epistemic,
    pub polarity: Polarity,
    pub negated: bool,
    pub explain: Vec<Signal>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecallResult {
    pub atoms: Vec<Recalled>,
    /// Why the query was refused, if it was.
    pub reason: Option<String>,
}

/// Relevance of one candidate before fusion.
#[derive(Clone, Copy, Default)]
struct Relevance {
    keyword: f64,
    chain: f64,
    bm25: f64,
}

struct Hints {
    kind: Option<Kind>,
    constraint: bool,
}

fn hints(query: &str) -> Hints {
    let q = query.to_lowercase();
    let any = |words: &[&str]| words.iter().any(|w| q.contains(w));
    let kind = if any(&["handoff", "hand-off", "交接", "上次做到", "進度", "进度"]) {
        Some(Kind::Handoff)
    } else if any(&["lesson", "教訓", "教训", "經驗", "经验"]) {
        Some(Kind::Lesson)
    } else {
        None
    };
    Hints { kind, constraint: any(&["constraint", "rule", "must", "約束", "约束", "規則", "规则", "必須", "必须", "合規", "合规"]) }
}

fn categorical(atom: &Atom, hints: &Hints) -> f64 {
    let mut value = match atom.epistemic {
        Epistemic::Necessary => 1.0,
        Epistemic::Actual => 0.75,
        Epistemic::Possible => 0.5,
    };
    if hints.constraint && atom.epistemic != Epistemic::Necessary {
        value *= 0.6;
    }
    match hints.kind {
        Some(kind) if kind == atom.kind => value = 1.0,
        Some(_) => value *= 0.6,
        None => {}
    }
    value
}

impl<B: Backend> Memory<B> {
    pub fn recall(&mut self, req: &RecallRequest) -> Result<RecallResult> {
        self.refresh()?;
        if let Some(reason) = refusal(req) {
            return Ok(RecallResult { atoms: Vec::new(), reason: Some(reason) });
        }
        let now = self.now();
        let window = temporal::window(&req.query, now);
        let text = window.as_ref().map_or_else(|| req.query.clone(), |w| temporal::strip(&req.query, w));
        let mut relevance = self.keyword_relevance(&text, req);
        if tokens(&text).is_empty()
            && let Some(w) = &window
        {
            self.window_candidates(w, req, &mut relevance);
        }
        let hints = hints(&req.query);
        let mut hits: Vec<(Recalled, f64)> = relevance
            .into_iter()
            .filter_map(|(id, rel)| {
                let atom = self.state.atom(id)?;
                let value = rel.keyword.max(rel.chain);
                (value >= MIN_RELEVANCE).then(|| (fuse(atom, rel, now, window.as_ref(), &hints, req.explain), rel.bm25))
            })
            .collect();
        hits.sort_by(|(a, a_bm25), (b, b_bm25)| {
            b.score.total_cmp(&a.score).then(b_bm25.total_cmp(a_bm25)).then(b.atom_id.cmp(&a.atom_id))
        });
        let limit = req.max_results.unwrap_or(DEFAULT_MAX_RESULTS).clamp(1, MAX_RESULTS_CAP) as usize;
        hits.truncate(limit);
        Ok(RecallResult { atoms: hits.into_iter().map(|(r, _)| r).collect(), reason: None })
    }

    /// Whether an atom may appear in this caller's results at all.
    fn recallable(&self, atom: &Atom, req: &RecallRequest) -> bool {
        atom.exposure == Exposure::Visible
            && atom.superseded_by.is_none()
            && (req.include_negated || !atom.negated)
            && atom.scope.visible_from(&req.scope, req.remote)
    }

    fn keyword_relevance(&self, text: &str, req: &RecallRequest) -> HashMap<AtomId, Relevance> {
        let mut out: HashMap<AtomId, Relevance> = HashMap::new();
        let Some(index) = self.indexes.keyword(&req.scope.tenant_id) else { return out };
        for (id, KeywordHit { coverage, bm25 }) in index.search(text) {
            let Some(atom) = self.state.atom(id) else { continue };
            if self.recallable(atom, req) {
                let entry = out.entry(id).or_default();
                entry.keyword = entry.keyword.max(coverage);
                entry.bm25 = entry.bm25.max(bm25);
            } else if atom.superseded_by.is_some() && atom.scope.visible_from(&req.scope, req.remote) {
                if let Some(head) = self.chain_head(atom) {
                    let entry = out.entry(head).or_default();
                    entry.chain = entry.chain.max(coverage * CHAIN_DECAY);
                }
            }
        }
        out
    }

    /// The current head of the chain an atom was superseded into, if recallable.
    fn chain_head(&self, atom: &Atom) -> Option<AtomId> {
        let mut current = atom;
        for _ in 0..64 {
            match current.superseded_by {
                Some(next) => current = self.state.atom(next)?,
                None => break,
            }
        }
        (current.exposure == Exposure::Visible && current.superseded_by.is_none() && !current.negated).then_some(current.id)
    }

    /// A query of time words only: every recallable atom, ranked by the window.
    fn window_candidates(&self, window: &Window, req: &RecallRequest, out: &mut HashMap<AtomId, Relevance>) {
        for atom in self.state.atoms.values().filter(|a| self.recallable(a, req)) {
            let inside = temporal::signal(atom.created_at, atom.created_at, Some(window));
            out.entry(atom.id).or_default().keyword = inside;
        }
    }
}

fn refusal(req: &RecallRequest) -> Option<String> {
    if let Some(problem) = req.scope.problem() {
        return Some(problem);
    }
    if req.query.trim().is_empty() {
        return Some("query is empty".into());
    }
    if req.query.len() > MAX_QUERY_BYTES {
        return Some(format!("query is {} bytes, over the limit of {MAX_QUERY_BYTES}", req.query.len()));
    }
    None
}

fn fuse(atom: &Atom, rel: Relevance, now: Timestamp, window: Option<&Window>, hints: &Hints, explain: bool) -> Recalled {
    let relevance = rel.keyword.max(rel.chain);
    let time = temporal::signal(atom.created_at, now, window);
    let category = categorical(atom, hints);
    let (w_rel, w_time, w_cat) = if window.is_some() { (0.55, 0.30, 0.15) } else { (0.70, 0.15, 0.15) };
    let parts = [
        ("keyword", rel.keyword, if rel.keyword >= rel.chain { relevance * w_rel } else { 0.0 }),
        ("chain", rel.chain, if rel.chain > rel.keyword { relevance * w_rel } else { 0.0 }),
        ("temporal", time, relevance * w_time * time),
        ("categorical", category, relevance * w_cat * category),
    ];
    let score: f64 = parts.iter().map(|p| p.2).sum();
    Recalled {
        atom_id: atom.id,
        content: atom.content.clone(),
        score: score.clamp(f64::MIN_POSITIVE, 1.0),
        created_at: atom.created_at,
        source: atom.source.clone(),
        kind: atom.kind,
        epistemic: atom.epistemic,
        polarity: atom.polarity,
        negated: atom.negated,
        explain: if explain {
            parts.iter().map(|&(name, value, contribution)| Signal { name, value, contribution }).collect()
        } else {
            Vec::new()
        },
    }
}
