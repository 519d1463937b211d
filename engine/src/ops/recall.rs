//! recall: hybrid retrieval fused into one score in (0, 1].
//!
//! Signals, each in [0, 1]:
//! - `semantic` — cosine of the query's and the memory's embeddings, spread
//!   from e5's narrow band (0.78–0.96) and capped at 0.8, for the nearest
//!   `limit + 50` recallable atoms (exact search, `index::vector`);
//! - `keyword` — BM25 coverage of the query (see `index::keyword`), zh/en
//!   concept tokens included; candidates are the `limit + 100` visible
//!   matches that score best on keyword evidence alone (and the `limit +
//!   50` of highest coverage), found without weighing every match
//!   ([`Memory::keyword_relevance`]);
//! - `chain` — relevance inherited by the head of a supersedes chain from a
//!   hidden older version that matched strongly (coverage ≥ 0.6, × 0.6), so
//!   "PostgreSQL 16" still finds the memory that now says 17, while a word the
//!   new version dropped on purpose does not drag it in;
//! - `temporal` — recency, or membership in the window a time word names;
//! - `categorical` — epistemic weight (necessary 1, actual 0.75, possible 0.5)
//!   and kind hints in the query (handoff/交接, lesson/教訓, constraint/約束);
//! - `graph` — the query's entities (`ops/graph.rs`): a memory that names
//!   one under another alias or script ("k8s" for Kubernetes, 臺北 for 台北)
//!   scores `1 / (1 + 0.001·(n−1)²)` (n: memories linked to that entity), a
//!   candidate that names an entity one triple away half that. Where the
//!   memory names the entity as the query does, the keyword signal has it
//!   already and the graph adds nothing (no double counting).
//!
//! - `reply` — a memory that asks (its text holds a question mark) hands
//!   0.9 × its relevance to the memory that answered it: the next memory of
//!   the same scope, written within ten minutes after it (for the questions
//!   among the `limit + 50` most relevant candidates). In a conversation
//!   kept turn by turn the words of a question are often in the turn that
//!   asks ("how was the trip to Paris?") and the answer in the one after
//!   (an adjacency pair, Schegloff & Sacks 1973), so the reply ranks right
//!   under the question that matched.
//!
//! `relevance = max(1 − (1 − keyword)(1 − semantic)(1 − 0.25·graph), chain, reply)` and
//! `score = relevance · (0.70 + 0.15·temporal + 0.15·categorical)`;
//! with a time window the weights are `0.55 / 0.30 / 0.15`. A query made only
//! of time words ranks by the window alone. Hits below relevance 0.12 are noise
//! and dropped. Only visible, non-superseded atoms in the caller's scope (and
//! its ancestors) are returned; negated ones only on request.

use std::collections::{BinaryHeap, HashMap};

use crate::atom::{Atom, AtomId, Epistemic, Exposure, Kind, Polarity};
use crate::embed::Role;
use crate::error::Result;
use crate::index::keyword::{Facts, KeywordHit, Matches};
use crate::index::temporal::{self, Window};
use crate::index::tokenize::{is_cjk_text, tokens};
use crate::index::vector::search_rows_with;
use crate::log::backend::Backend;
use crate::memory::Memory;
use crate::ops::graph::{Edge as GraphEdge, GraphScope, Node};
use crate::scope::Scope;
use crate::time::Timestamp;

pub const DEFAULT_MAX_RESULTS: u32 = 10;
pub const MAX_RESULTS_CAP: u32 = 200;
const MAX_QUERY_BYTES: usize = 4096;
const MIN_RELEVANCE: f64 = 0.12;
const CHAIN_DECAY: f64 = 0.6;
const CHAIN_MIN_COVERAGE: f64 = 0.6;
/// The share of a question's relevance its reply inherits.
const REPLY_DECAY: f64 = 0.9;
/// How long after a question its reply may be written.
const REPLY_WITHIN_MS: i64 = 10 * 60 * 1000;
/// Candidates beyond the requested limit whose replies are looked for.
const REPLY_QUESTIONS: usize = 50;
/// Keyword matches beyond the requested limit taken as candidates (a few
/// under test, so that the tests cross the cut).
const KEYWORD_CANDIDATES: usize = if cfg!(test) { 4 } else { 100 };
/// Atoms of other scopes skipped, at most, looking for a question's reply.
const REPLY_SCAN: usize = 32;

#[derive(Clone, Debug, Default)]
pub struct RecallRequest {
    pub query: String,
    pub max_results: Option<u32>,
    pub include_negated: bool,
    pub scope: Scope,
    pub remote: bool,
    pub explain: bool,
    /// Also return the query's entities and the edges at them.
    pub include_graph: bool,
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
    /// With `include_graph`: the query's entities, their neighbours and the
    /// edges between them (seed 001's searchWithGraphExpansion).
    pub graph: Option<(Vec<Node>, Vec<GraphEdge>)>,
}

/// Edges `recall --graph` returns at most.
const GRAPH_EXPANSION_EDGES: usize = 50;
/// The graph signal's weight in the relevance (see the module doc).
const GRAPH_WEIGHT: f64 = 0.25;

/// Relevance of one candidate before fusion.
#[derive(Clone, Copy, Default)]
struct Relevance {
    keyword: f64,
    /// The keyword coverage of the dictionary-translated query (part of
    /// `keyword`, which is the larger of the two; shown by `--explain`).
    translation: f64,
    semantic: f64,
    chain: f64,
    /// Inherited from the question this memory answered.
    reply: f64,
    bm25: f64,
    graph: f64,
    /// Whether the keyword values were set (from the query's matches).
    keyword_seen: bool,
}

/// A keyword match with its score on its own, ordered as results are
/// (score, then BM25, then the later atom).
struct Weighed {
    score: f64,
    id: AtomId,
    hit: KeywordHit,
}

impl Ord for Weighed {
    fn cmp(&self, other: &Weighed) -> std::cmp::Ordering {
        self.score
            .total_cmp(&other.score)
            .then(self.hit.bm25.total_cmp(&other.hit.bm25))
            .then(self.id.cmp(&other.id))
    }
}

impl PartialOrd for Weighed {
    fn partial_cmp(&self, other: &Weighed) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Weighed {
    fn eq(&self, other: &Weighed) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Weighed {}

impl Relevance {
    fn with_keyword(mut self, hit: KeywordHit) -> Relevance {
        self.set_keyword(Some(hit));
        self
    }

    fn set_keyword(&mut self, hit: Option<KeywordHit>) {
        self.keyword_seen = true;
        if let Some(hit) = hit {
            self.keyword = hit.coverage;
            self.translation = hit.translated;
            self.bm25 = hit.bm25;
        }
    }

    /// Keyword, semantic and graph evidence combined as independent chances
    /// (noisy-or), so a hit several signals see outranks one only one sees.
    fn direct(&self) -> f64 {
        1.0 - (1.0 - self.keyword) * (1.0 - self.semantic) * (1.0 - GRAPH_WEIGHT * self.graph)
    }

    /// The direct evidence, or an inheritance (chain, reply) when that is
    /// stronger.
    fn value(&self) -> f64 {
        self.direct().max(self.inherited())
    }

    fn inherited(&self) -> f64 {
        self.chain.max(self.reply)
    }
}

/// Cosine similarity of e5-style embeddings mapped to [0, 1]: unrelated
/// texts sit around `SEMANTIC_FLOOR`, paraphrases near `SEMANTIC_CEILING`.
const SEMANTIC_FLOOR: f64 = 0.78;
const SEMANTIC_CEILING: f64 = 0.96;
/// The same for centred (language-neutral) cosines, which run lower: set on
/// the tuning half of the zh-en set (a plateau from 0.0–0.05 / 0.45–0.55).
const NEUTRAL_FLOOR: f64 = 0.05;
const NEUTRAL_CEILING: f64 = 0.5;
/// The semantic signal's top value: a perfect embedding match alone is
/// slightly less evidence than every query term matched.
const SEMANTIC_WEIGHT: f64 = 0.8;
/// Semantic candidates per query beyond the requested limit.
const SEMANTIC_CANDIDATES: usize = 50;

fn semantic_signal(cosine: f32, neutral: bool) -> f64 {
    let (floor, ceiling) = if neutral {
        (NEUTRAL_FLOOR, NEUTRAL_CEILING)
    } else {
        (SEMANTIC_FLOOR, SEMANTIC_CEILING)
    };
    SEMANTIC_WEIGHT * ((f64::from(cosine) - floor) / (ceiling - floor)).clamp(0.0, 1.0)
}

struct Hints {
    kind: Option<Kind>,
    constraint: bool,
    /// The hint words found, removed from the text the relevance signals see.
    words: Vec<&'static str>,
}

const HANDOFF_WORDS: &[&str] = &[
    "handoffs",
    "handoff",
    "hand-off",
    "交接",
    "上次做到",
    "進度",
    "进度",
];
const LESSON_WORDS: &[&str] = &["lessons", "lesson", "教訓", "教训", "經驗", "经验"];
const CONSTRAINT_WORDS: &[&str] = &[
    "constraints",
    "constraint",
    "rules",
    "rule",
    "約束",
    "约束",
    "規則",
    "规则",
    "硬性要求",
    "合規",
    "合规",
];

fn hints(query: &str) -> Hints {
    let q = query.to_lowercase();
    let found = |words: &'static [&'static str]| {
        words
            .iter()
            .copied()
            .filter(|w| q.contains(w))
            .collect::<Vec<_>>()
    };
    let (handoff, lesson, constraint) = (
        found(HANDOFF_WORDS),
        found(LESSON_WORDS),
        found(CONSTRAINT_WORDS),
    );
    let kind = if !handoff.is_empty() {
        Some(Kind::Handoff)
    } else if !lesson.is_empty() {
        Some(Kind::Lesson)
    } else {
        None
    };
    let constraint_hint = !constraint.is_empty();
    Hints {
        kind,
        constraint: constraint_hint,
        words: [handoff, lesson, constraint].concat(),
    }
}

/// The query without hint words, unless nothing would be left.
fn strip_hints(text: &str, hints: &Hints) -> String {
    let lower = text.to_lowercase();
    let stripped = hints.words.iter().fold(lower, |t, w| t.replace(w, " "));
    if tokens(&stripped).is_empty() {
        text.to_owned()
    } else {
        stripped
    }
}

fn categorical(facts: Facts, hints: &Hints) -> f64 {
    let mut value = match facts.epistemic {
        Epistemic::Necessary => 1.0,
        Epistemic::Actual => 0.75,
        Epistemic::Possible => 0.5,
    };
    if hints.constraint && facts.epistemic != Epistemic::Necessary {
        value *= 0.6;
    }
    match hints.kind {
        Some(kind) if kind == facts.kind => value = 1.0,
        Some(_) => value *= 0.6,
        None => {}
    }
    value
}

/// The query without the words of its time window: what the semantic
/// signal embeds (and, without its hints, what the keyword signal searches).
fn without_window(query: &str, window: Option<&Window>) -> String {
    window.map_or_else(|| query.to_owned(), |w| temporal::strip(query, w))
}

/// The text a recall of `query` at `now` embeds as its query.
pub(crate) fn semantic_text(query: &str, now: Timestamp) -> String {
    without_window(query, temporal::window(query, now).as_ref())
}

impl<B: Backend> Memory<B> {
    pub fn recall(&mut self, req: &RecallRequest) -> Result<RecallResult> {
        self.refresh()?;
        if let Some(reason) = refusal(req) {
            return Ok(RecallResult {
                atoms: Vec::new(),
                reason: Some(reason),
                graph: None,
            });
        }
        let now = self.now();
        let window = temporal::window(&req.query, now);
        let hints = hints(&req.query);
        let text = without_window(&req.query, window.as_ref());
        let semantic_text = text.clone();
        let text = strip_hints(&text, &hints);
        let limit = req
            .max_results
            .unwrap_or(DEFAULT_MAX_RESULTS)
            .clamp(1, MAX_RESULTS_CAP) as usize;
        let mut relevance = HashMap::new();
        if self.config.signals.semantic && !tokens(&semantic_text).is_empty() {
            self.semantic_relevance(&semantic_text, req, limit, &mut relevance)?;
        }
        let matches = self
            .config
            .signals
            .keyword
            .then(|| self.indexes.keyword(&req.scope.tenant_id))
            .flatten()
            .map(|index| index.search(&text));
        if let Some(matches) = &matches {
            let weigh = |hit: KeywordHit, facts: Facts| {
                let rel = Relevance::default().with_keyword(hit);
                score(&parts(facts, rel, now, window.as_ref(), &hints))
            };
            self.keyword_relevance(matches, weigh, req, limit, &mut relevance);
        }
        if tokens(&text).is_empty()
            && let Some(w) = &window
        {
            self.window_candidates(w, req, &mut relevance);
        }
        let mut graph = None;
        if self.config.signals.graph {
            let within = GraphScope {
                scope: req.scope.clone(),
                remote: req.remote,
                include_invalid: false,
            };
            let evidence = self.graph_evidence(&semantic_text, &within);
            for (id, value) in evidence.hop {
                if let Some(rel) = relevance.get_mut(&id) {
                    rel.graph = rel.graph.max(value);
                } else if matches.as_ref().is_some_and(|m| m.get(id).is_some())
                    && self.state.atom(id).is_some_and(|a| self.recallable(a, req))
                {
                    // A keyword match past the candidates' cut.
                    relevance.entry(id).or_default().graph = value;
                }
            }
            for (id, value) in evidence.direct {
                if self.state.atom(id).is_some_and(|a| self.recallable(a, req)) {
                    let rel = relevance.entry(id).or_default();
                    rel.graph = rel.graph.max(value);
                }
            }
            if req.include_graph {
                graph = Some(self.graph_expansion(
                    &evidence.query_entities,
                    &within,
                    GRAPH_EXPANSION_EDGES,
                ));
            }
        }
        fill_keyword(&mut relevance, matches.as_ref());
        self.replies(&mut relevance, req, limit);
        fill_keyword(&mut relevance, matches.as_ref());
        // Scored without the memories' text; only the results are built.
        let mut hits: Vec<(f64, f64, AtomId, &Atom, Relevance)> = relevance
            .into_iter()
            .filter_map(|(id, rel)| {
                let atom = self.state.atom(id)?;
                (rel.value() >= MIN_RELEVANCE).then(|| {
                    let parts = parts(facts_of(atom), rel, now, window.as_ref(), &hints);
                    (score(&parts), rel.bm25, id, atom, rel)
                })
            })
            .collect();
        let order = |a: &(f64, f64, AtomId, &Atom, Relevance),
                     b: &(f64, f64, AtomId, &Atom, Relevance)| {
            b.0.total_cmp(&a.0)
                .then(b.1.total_cmp(&a.1))
                .then(b.2.cmp(&a.2))
        };
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, order);
            hits.truncate(limit);
        }
        hits.sort_by(order);
        Ok(RecallResult {
            atoms: hits
                .into_iter()
                .map(|(_, _, _, atom, rel)| {
                    fuse(atom, rel, now, window.as_ref(), &hints, req.explain)
                })
                .collect(),
            reason: None,
            graph: graph.or_else(|| req.include_graph.then(Default::default)),
        })
    }

    /// Whether an atom may appear in this caller's results at all.
    fn recallable(&self, atom: &Atom, req: &RecallRequest) -> bool {
        atom.exposure == Exposure::Visible
            && atom.superseded_by.is_none()
            && (req.include_negated || !atom.negated)
            && atom.scope.visible_from(&req.scope, req.remote)
    }

    /// Adds the `limit + 100` keyword matches this caller may see that
    /// score best on their own (`weigh`: coverage with recency and
    /// category), and the `limit + 50` of highest coverage — a match further
    /// down could only rise into the results on other signals, and those
    /// fill its keyword value in ([`fill_keyword`]) — and the chain
    /// relevance their superseded versions hand to the heads.
    /// Matches are read by falling coverage, which bounds the score of every
    /// match not read yet, so only as many are weighed as may compete.
    fn keyword_relevance(
        &self,
        matches: &Matches,
        weigh: impl Fn(KeywordHit, Facts) -> f64,
        req: &RecallRequest,
        limit: usize,
        out: &mut HashMap<AtomId, Relevance>,
    ) {
        let wanted = limit + KEYWORD_CANDIDATES;
        let mut taken = 0;
        // Whether the match is taken as a candidate.
        let mut take = |weighed: Weighed| {
            let Some(atom) = self.state.atom(weighed.id) else {
                return false;
            };
            let hit = weighed.hit;
            if self.recallable(atom, req) {
                out.entry(weighed.id).or_default().set_keyword(Some(hit));
                return true;
            }
            if atom.superseded_by.is_some()
                && hit.coverage >= CHAIN_MIN_COVERAGE
                && atom.scope.visible_from(&req.scope, req.remote)
                && let Some(head) = self.chain_head(atom)
                // The head is shown only if this caller may see it (an
                // imported chain could otherwise point into another tenant).
                && self.state.atom(head).is_some_and(|h| self.recallable(h, req))
            {
                let entry = out.entry(head).or_default();
                entry.chain = entry.chain.max(hit.coverage * CHAIN_DECAY);
            }
            false
        };
        let mut weighed: BinaryHeap<Weighed> = BinaryHeap::new();
        // The best by keyword relevance alone are candidates whatever their
        // time and category: the reply signal ranks candidates so.
        let mut by_relevance = 0;
        for (id, hit, facts) in matches.best_first() {
            if by_relevance < limit + REPLY_QUESTIONS {
                let score = 0.0;
                by_relevance += usize::from(take(Weighed { score, id, hit }));
                continue;
            }
            // No match after this one scores above its coverage.
            while weighed.peek().is_some_and(|w| w.score >= hit.coverage) {
                taken += usize::from(take(weighed.pop().expect("peeked")));
                if taken >= wanted {
                    return;
                }
            }
            weighed.push(Weighed {
                score: weigh(hit, facts),
                id,
                hit,
            });
        }
        while let Some(w) = weighed.pop() {
            taken += usize::from(take(w));
            if taken >= wanted {
                return;
            }
        }
    }

    /// Adds the semantic signal of the nearest recallable atoms. Without a
    /// model, or without vectors in this tenant, recall stays keyword-only
    /// (and builds no vector index: a keyword-only process never pays for it).
    fn semantic_relevance(
        &mut self,
        text: &str,
        req: &RecallRequest,
        limit: usize,
        out: &mut HashMap<AtomId, Relevance>,
    ) -> Result<()> {
        if self.state.vectors.is_empty() || !self.has_model() {
            return Ok(());
        }
        let stored_model = self.state.vectors.model.clone();
        if self
            .embedder()
            .is_none_or(|e| e.fingerprint() != stored_model)
        {
            return Ok(());
        }
        self.read_vectors()?;
        let tenant = req.scope.tenant_id.as_str();
        // The first few searches of a process go straight over the
        // tenant's rows; later ones build the index once and use it.
        let rows = self.indexes.take_unindexed(&self.state, tenant);
        if rows.is_none() {
            self.indexes.ensure_vectors(&self.state);
        }
        let searchable = match &rows {
            Some(rows) => !rows.rows.is_empty(),
            None => self.indexes.vector(tenant).is_some_and(|v| !v.is_empty()),
        };
        let made_ahead = self.take_query(text);
        let Some(embedder) = self.embedder().filter(|_| searchable) else {
            return Ok(());
        };
        let query = match made_ahead {
            Some(v) => v,
            None => match embedder.embed(&[text], Role::Query) {
                Ok(mut v) => v.remove(0),
                Err(e) => {
                    eprintln!("hmg: query embedding failed ({e}); keyword-only recall");
                    return Ok(());
                }
            },
        };
        let accept = |id: AtomId| {
            self.state
                .atom(id)
                .is_some_and(|atom| self.recallable(atom, req))
        };
        let (k, cjk) = (limit + SEMANTIC_CANDIDATES, is_cjk_text(text));
        let (hits, neutral) = match (&rows, self.indexes.vector(tenant)) {
            (Some(rows), _) => search_rows_with(
                self.state.vectors.dim as usize,
                &rows.rows,
                &rows.means,
                &query,
                k,
                accept,
                cjk,
            ),
            (None, Some(index)) => index.search_neutral(&query, k, accept, cjk),
            (None, None) => return Ok(()),
        };
        if let Some(rows) = rows {
            self.indexes.keep_unindexed(tenant, rows);
        }
        for (id, cosine) in hits {
            out.entry(id).or_default().semantic = semantic_signal(cosine, neutral);
        }
        Ok(())
    }

    /// Gives the reply of each question among the `limit + 50` most relevant
    /// candidates its share of the question's relevance (a question further
    /// down could not lift its reply into the results; looking only at these
    /// keeps a recall over many candidates from visiting every one).
    fn replies(
        &self,
        relevance: &mut HashMap<AtomId, Relevance>,
        req: &RecallRequest,
        limit: usize,
    ) {
        let mut ranked: Vec<(f64, AtomId)> = relevance
            .iter()
            .map(|(&id, rel)| (rel.direct().max(rel.chain), id))
            .filter(|&(value, _)| value >= MIN_RELEVANCE)
            .collect();
        let keep = limit + REPLY_QUESTIONS;
        if ranked.len() > keep {
            // Ties by id: which questions pass the cut must not follow the
            // map's order (random per map, so per process and per call).
            ranked.select_nth_unstable_by(keep - 1, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            ranked.truncate(keep);
        }
        let inherited: Vec<(AtomId, f64)> = ranked
            .into_iter()
            .filter_map(|(value, id)| {
                let question = self.state.atom(id)?;
                asks(&question.content)
                    .then(|| self.reply_to(question, req))
                    .flatten()
                    .map(|reply| (reply, REPLY_DECAY * value))
            })
            .collect();
        for (id, value) in inherited {
            let rel = relevance.entry(id).or_default();
            rel.reply = rel.reply.max(value);
        }
    }

    /// The memory written next in the question's scope, if it came soon
    /// after and this caller may see it.
    fn reply_to(&self, question: &Atom, req: &RecallRequest) -> Option<AtomId> {
        use std::ops::Bound::{Excluded, Unbounded};
        let next = self
            .state
            .atoms
            .range((Excluded(question.id), Unbounded))
            .map(|(_, atom)| atom)
            .take(REPLY_SCAN)
            .find(|atom| atom.scope == question.scope)?;
        (next.created_at.0 - question.created_at.0 <= REPLY_WITHIN_MS && self.recallable(next, req))
            .then_some(next.id)
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
        (current.exposure == Exposure::Visible
            && current.superseded_by.is_none()
            && !current.negated)
            .then_some(current.id)
    }

    /// A query of time words only: every recallable atom, ranked by the window.
    fn window_candidates(
        &self,
        window: &Window,
        req: &RecallRequest,
        out: &mut HashMap<AtomId, Relevance>,
    ) {
        for atom in self
            .state
            .atoms
            .values()
            .filter(|a| self.recallable(a, req))
        {
            let inside = temporal::signal(atom.created_at, atom.created_at, Some(window));
            let rel = out.entry(atom.id).or_default();
            rel.keyword = inside;
            rel.keyword_seen = true;
        }
    }
}

/// Gives every candidate whose keyword match was not looked at yet (one
/// that other signals brought in) its keyword values.
fn fill_keyword(relevance: &mut HashMap<AtomId, Relevance>, matches: Option<&Matches>) {
    for (&id, rel) in relevance.iter_mut() {
        if !rel.keyword_seen {
            rel.set_keyword(matches.and_then(|m| m.get(id)));
        }
    }
}

/// Whether a memory asks something: its text holds a question mark.
fn asks(content: &str) -> bool {
    content.contains(['?', '？'])
}

fn refusal(req: &RecallRequest) -> Option<String> {
    if let Some(problem) = req.scope.problem() {
        return Some(problem);
    }
    if req.query.trim().is_empty() {
        return Some("query is empty".into());
    }
    if req.query.len() > MAX_QUERY_BYTES {
        return Some(format!(
            "query is {} bytes, over the limit of {MAX_QUERY_BYTES}",
            req.query.len()
        ));
    }
    None
}

fn facts_of(atom: &Atom) -> Facts {
    Facts {
        created_at: atom.created_at,
        epistemic: atom.epistemic,
        kind: atom.kind,
    }
}

/// Each signal's (name, value, contribution to the score).
type Parts = [(&'static str, f64, f64); 8];

fn score(parts: &Parts) -> f64 {
    parts
        .iter()
        .map(|p| p.2)
        .sum::<f64>()
        .clamp(f64::MIN_POSITIVE, 1.0)
}

/// A result as the caller sees it.
fn fuse(
    atom: &Atom,
    rel: Relevance,
    now: Timestamp,
    window: Option<&Window>,
    hints: &Hints,
    explain: bool,
) -> Recalled {
    let parts = parts(facts_of(atom), rel, now, window, hints);
    Recalled {
        atom_id: atom.id,
        content: atom.content.clone(),
        score: score(&parts),
        created_at: atom.created_at,
        source: atom.source.clone(),
        kind: atom.kind,
        epistemic: atom.epistemic,
        polarity: atom.polarity,
        negated: atom.negated,
        explain: if explain {
            parts
                .iter()
                .map(|&(name, value, contribution)| Signal {
                    name,
                    value,
                    contribution,
                })
                .collect()
        } else {
            Vec::new()
        },
    }
}

/// The fused score's parts: relevance weighted with time and category.
fn parts(
    facts: Facts,
    rel: Relevance,
    now: Timestamp,
    window: Option<&Window>,
    hints: &Hints,
) -> Parts {
    let relevance = rel.value();
    let time = temporal::signal(facts.created_at, now, window);
    let category = categorical(facts, hints);
    let (w_rel, w_time, w_cat) = if window.is_some() {
        (0.55, 0.30, 0.15)
    } else {
        (0.70, 0.15, 0.15)
    };
    // The relevance share is split between keyword and semantic in
    // proportion to their values, or goes whole to the inheritance (chain or
    // reply) when it won.
    let graph = GRAPH_WEIGHT * rel.graph;
    let signals = rel.keyword + rel.semantic + graph;
    let inherited_won = rel.inherited() > rel.direct();
    let chain_won = inherited_won && rel.chain >= rel.reply;
    let reply_won = inherited_won && !chain_won;
    let share = |value: f64| {
        if inherited_won || signals <= 0.0 {
            0.0
        } else {
            relevance * w_rel * value / signals
        }
    };
    [
        ("semantic", rel.semantic, share(rel.semantic)),
        ("keyword", rel.keyword, share(rel.keyword)),
        // Already inside `keyword` (its value is the larger of the plain and
        // the translated coverage): shown, never counted twice.
        ("translation", rel.translation, 0.0),
        ("graph", rel.graph, share(graph)),
        (
            "chain",
            rel.chain,
            if chain_won { relevance * w_rel } else { 0.0 },
        ),
        (
            "reply",
            rel.reply,
            if reply_won { relevance * w_rel } else { 0.0 },
        ),
        ("temporal", time, relevance * w_time * time),
        ("categorical", category, relevance * w_cat * category),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;
    use crate::atom::CorrectAction;

    #[test]
    fn traditional_simplified_and_question_forms() {
        let mut h = Harness::new();
        let pg = h.id("專案用 PostgreSQL 16 做主資料庫，不用 MongoDB");
        h.id("前端用 React 18 和 TypeScript");
        h.id("部署用 ECS，不用 K8s");
        for query in [
            "資料庫選型",
            "数据库选型",
            "我們資料庫用的什麼來著？",
            "PostgreSQL",
            "postgres 資料庫",
        ] {
            let hits = h.recall(query);
            assert_eq!(
                hits.first().map(|r| r.atom_id),
                Some(pg),
                "{query}: {hits:?}"
            );
            assert!(hits[0].score > 0.0 && hits[0].score <= 1.0);
        }
    }

    #[test]
    fn scope_isolation() {
        let mut h = Harness::new();
        let mine = h.id("branch memory about Redis");
        let personal = h
            .memorize_in("personal: I prefer Redis", &Scope::personal("qiankun"))
            .atom_id
            .unwrap();
        let org = Scope {
            repository: None,
            branch: None,
            ..h.scope.clone()
        };
        let org_id = h
            .memorize_in("org: company standard is Redis", &org)
            .atom_id
            .unwrap();
        h.memorize_in(
            "sibling branch Redis",
            &Scope::new("qiankun", "mem0ai", "mem0", "dev"),
        );
        h.memorize_in(
            "other repo Redis",
            &Scope::new("qiankun", "mem0ai", "other", "main"),
        );
        h.memorize_in(
            "other tenant Redis",
            &Scope::new("mallory", "mem0ai", "mem0", "main"),
        );
        let mut ids = h.recall_ids("Redis");
        ids.sort();
        let mut want = vec![mine, personal, org_id];
        want.sort();
        assert_eq!(ids, want);
        let remote = h.recall_with(RecallRequest {
            query: "Redis".into(),
            scope: h.scope.clone(),
            remote: true,
            ..Default::default()
        });
        assert!(remote.iter().all(|r| r.atom_id != personal));
        assert_eq!(remote.len(), 2);
    }

    #[test]
    fn chain_head_inherits_an_old_match() {
        let mut h = Harness::new();
        let old = h.id("主資料庫是 PostgreSQL 16");
        let new = h
            .correct(
                old,
                CorrectAction::Replace,
                Some("主資料庫升級完成，現在是 17 版"),
            )
            .new_atom_id
            .unwrap();
        let hits = h.recall_with(RecallRequest {
            query: "PostgreSQL".into(),
            scope: h.scope.clone(),
            explain: true,
            ..Default::default()
        });
        assert_eq!(
            hits.iter().map(|r| r.atom_id).collect::<Vec<_>>(),
            vec![new]
        );
        let chain = hits[0].explain.iter().find(|s| s.name == "chain").unwrap();
        assert!(chain.contribution > 0.0);
        let total: f64 = hits[0].explain.iter().map(|s| s.contribution).sum();
        assert!((total - hits[0].score).abs() < 1e-9);
    }

    #[test]
    fn a_dropped_word_does_not_drag_the_head_in() {
        let mut h = Harness::new();
        let old = h.id("專案用 PostgreSQL 16 做主資料庫，不用 MongoDB");
        h.correct(
            old,
            CorrectAction::Replace,
            Some("專案用 PostgreSQL 17 做主資料庫"),
        );
        let cache = h.id("用 MongoDB 做會話快取");
        h.correct(cache, CorrectAction::Negate, None);
        assert!(h.recall_ids("MongoDB 快取").is_empty());
    }

    #[test]
    fn a_question_hands_its_relevance_to_the_reply() {
        let mut h = Harness::new();
        let question = h.id("Caroline: How was your trip to Lisbon last month?");
        let other = Scope::new("qiankun", "mem0ai", "mem0", "dev");
        h.memorize_in("an unrelated note in another branch", &other);
        let reply = h.id("Melanie: Wonderful, we rode tram 28 and ate pastel de nata");
        h.id("Melanie: I adopted a cat called Oliver");
        let hits = h.recall_with(RecallRequest {
            query: "What did Melanie do on the Lisbon trip?".into(),
            scope: h.scope.clone(),
            explain: true,
            ..Default::default()
        });
        let ids: Vec<AtomId> = hits.iter().map(|r| r.atom_id).collect();
        assert_eq!(ids[..2], [question, reply], "{hits:?}");
        let signal = |r: &Recalled, name: &str| {
            r.explain
                .iter()
                .find(|s| s.name == name)
                .unwrap()
                .contribution
        };
        assert!(signal(&hits[1], "reply") > 0.0 && signal(&hits[0], "reply") == 0.0);
        let total: f64 = hits[1].explain.iter().map(|s| s.contribution).sum();
        assert!((total - hits[1].score).abs() < 1e-9);
    }

    #[test]
    fn better_matches_out_of_scope_do_not_crowd_the_callers_out() {
        let mut h = Harness::new();
        let other = Scope::new("qiankun", "mem0ai", "mem0", "dev");
        for i in 0..40 {
            h.memorize_in(&format!("redis eviction policy {i} redis eviction"), &other);
        }
        // As good a match by coverage, and ranked below all of those by BM25.
        let mine: Vec<AtomId> = (0..3)
            .map(|i| {
                h.id(&format!(
                    "we once read the redis eviction policy page, then went on to postgres ({i})"
                ))
            })
            .collect();
        let mut got = h.recall_ids("redis eviction policy");
        got.sort();
        assert_eq!(got, mine);
    }

    #[test]
    fn a_candidate_past_the_keyword_cut_keeps_its_keyword_value() {
        let mut h = Harness::new();
        for i in 0..20 {
            h.id(&format!("Lisbon tram fares rose in spring ({i})"));
        }
        h.id("How was the Lisbon tram?");
        // Matches one word of three: far below the cut; the reply signal
        // brings it in, and its own keyword match is counted as well.
        let reply = h.id("Crowded, but the fares were fine");
        let hits = h.recall_with(RecallRequest {
            query: "Lisbon tram fares".into(),
            scope: h.scope.clone(),
            max_results: Some(30),
            explain: true,
            ..Default::default()
        });
        let hit = hits.iter().find(|r| r.atom_id == reply).expect("the reply");
        let keyword = hit.explain.iter().find(|s| s.name == "keyword").unwrap();
        assert!(keyword.value > 0.2, "{hit:?}");
    }

    #[test]
    fn replies_of_tied_questions_are_chosen_the_same_every_time() {
        let mut h = Harness::new();
        // More equally relevant questions than the replies step looks at
        // (the limit plus REPLY_QUESTIONS): which of them pass its cut must
        // not follow a hash map's order, which differs from map to map.
        let questions: Vec<(AtomId, AtomId)> = (0..(10 + REPLY_QUESTIONS + 30))
            .map(|i| {
                let question = h.id(&format!("Is the Lisbon tram on time, {i}?"));
                (question, h.id(&format!("Mostly yes, said friend {i}")))
            })
            .collect();
        let req = RecallRequest {
            query: "Lisbon tram".into(),
            scope: h.scope.clone(),
            ..Default::default()
        };
        let inheriting = |h: &Harness| {
            let mut relevance: HashMap<AtomId, Relevance> = questions
                .iter()
                .map(|(q, _)| {
                    (
                        *q,
                        Relevance {
                            keyword: 1.0,
                            ..Default::default()
                        },
                    )
                })
                .collect();
            h.memory.replies(&mut relevance, &req, 10);
            let mut got: Vec<AtomId> = relevance
                .iter()
                .filter(|(_, r)| r.reply > 0.0)
                .map(|(id, _)| *id)
                .collect();
            got.sort();
            got
        };
        // Ties go to the earlier atoms, every time.
        let want: Vec<AtomId> = questions[..10 + REPLY_QUESTIONS]
            .iter()
            .map(|(_, r)| *r)
            .collect();
        for _ in 0..8 {
            assert_eq!(inheriting(&h), want);
        }
    }

    #[test]
    fn only_a_prompt_reply_to_a_question_inherits() {
        let mut h = Harness::new();
        // A statement hands nothing to the memory after it.
        h.id("We moved the nightly backup of Lisbon's database to 02:00");
        let after_statement = h.id("Rotated the staging certificates");
        // A question answered a day later: not its reply.
        h.id("Which region hosts the Lisbon replica?");
        h.advance_days(1.0);
        let late = h.id("Frankfurt, since the outage");
        let ids = h.recall_ids("Lisbon");
        assert!(
            !ids.contains(&after_statement) && !ids.contains(&late),
            "{ids:?}"
        );
    }

    #[test]
    fn time_words_prefer_the_window() {
        let mut h = Harness::new();
        let old = h.id("決定用 Kafka 做事件匯流排");
        h.advance_days(10.0);
        let recent = h.id("決定用 NATS 做內部通知");
        h.advance_days(1.0);
        let hits = h.recall_ids("昨天的決定");
        assert_eq!(hits.first(), Some(&recent));
        let hits = h.recall_ids("yesterday");
        assert_eq!(hits, vec![recent, old]);
        // Without time words, recency only breaks near-ties.
        assert_eq!(h.recall_ids("Kafka").first(), Some(&old));
    }

    #[test]
    fn categorical_hints_and_limits() {
        let mut h = Harness::new();
        for i in 0..30 {
            h.id(&format!("cache note number {i}"));
        }
        assert_eq!(h.recall_ids("cache note").len(), 10);
        let req = RecallRequest {
            query: "cache note".into(),
            max_results: Some(25),
            scope: h.scope.clone(),
            ..Default::default()
        };
        assert_eq!(h.recall_with(req).len(), 25);
        let rule = h.id("All cache keys must carry a tenant prefix");
        assert_eq!(h.recall_ids("cache constraint").first(), Some(&rule));
    }

    #[test]
    fn bad_queries_are_refused() {
        let mut h = Harness::new();
        for query in ["", "   ", &"q".repeat(5000)] {
            let r = h
                .memory
                .recall(&RecallRequest {
                    query: query.into(),
                    scope: h.scope.clone(),
                    ..Default::default()
                })
                .unwrap();
            assert!(r.reason.is_some() && r.atoms.is_empty());
        }
        let r = h
            .memory
            .recall(&RecallRequest {
                query: "x".into(),
                scope: Scope::personal(" "),
                ..Default::default()
            })
            .unwrap();
        assert!(r.reason.unwrap().contains("tenant"));
    }
}
