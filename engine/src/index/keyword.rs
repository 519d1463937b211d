//! BM25 keyword index over [`tokenize`](super::tokenize) terms, with scores
//! normalised into [0, 1] so they compare across queries.
//!
//! `coverage(d, q) = Σ_{t ∈ d} w_t · idf_t / Σ_t w_t · idf_t` — the share of
//! the query's information the document contains — where `w_t` = 0.3 for a
//! lone CJK character and 1 otherwise, and a query term unknown to the index
//! counts with a quarter of its weight if it is a CJK bigram (most such
//! bigrams straddle a word boundary). Plain BM25 (k1 = 1.2, b = 0.75) is
//! returned beside it and breaks ties between equal coverages.
//!
//! Cross-lingual: the query is also run as a structured query of
//! dictionary translations ([`dictionary::translate`]): one group per
//! source word, a group matching a document that holds all the terms of
//! any one of its alternatives (the word itself or a translation), its idf
//! from the number of documents any alternative matches (Pirkola's
//! synonym operator). The same coverage formula runs over the groups, and
//! a document's coverage is the larger of the two (`translated` keeps the
//! structured query's own value for `--explain`).

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::dictionary::{self, Group};
use super::tokenize::{is_cjk, is_unigram, query_tokens, tokens};
use crate::atom::{AtomId, Epistemic, Kind};
use crate::time::Timestamp;

const K1: f64 = 1.2;
const B: f64 = 0.75;
const UNIGRAM_WEIGHT: f64 = 0.3;

#[derive(Debug, Default, Clone)]
pub struct KeywordIndex {
    term_ids: HashMap<String, u32>,
    /// Per term: (document number, term frequency) of the live documents,
    /// ordered by document number.
    postings: Vec<Vec<(u32, u32)>>,
    /// Per document number: its atom, its length in terms (`None` once
    /// removed; a number stays with its atom for the life of the index)
    /// and its facts.
    docs: Vec<(AtomId, Option<u32>, Facts)>,
    /// `docs[..sorted]` are ordered by atom (a restored index's documents)
    /// and found by binary search; later ones are found here.
    sorted: usize,
    added: HashMap<AtomId, u32>,
    /// Per document number, its terms — kept once a document is removed
    /// (removal needs them); a restored index derives them from the
    /// postings then, so that opening and reading never pay for them.
    terms_of: Option<Vec<Vec<u32>>>,
    live: usize,
    total_len: u64,
}

/// The index as a snapshot stores it (`super::persist`): the live
/// documents ordered by atom with their lengths, and per term (only terms
/// some document still has: an erased atom's words leave) its postings as
/// (position in `docs`, tf) — the form the index searches, so restoring
/// it allocates once per term and nothing per document.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Stored {
    terms: Vec<String>,
    postings: Vec<Vec<(u32, u32)>>,
    docs: Vec<(AtomId, u32, Facts)>,
}

/// What recall weighs a keyword match with besides its words (recency and
/// category), kept beside each document so that ranking many matches reads
/// no atom.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    pub created_at: Timestamp,
    pub epistemic: Epistemic,
    pub kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeywordHit {
    /// Normalised, in [0, 1].
    pub coverage: f64,
    /// Plain BM25, for tie-breaking and for the naive-oracle tests.
    pub bm25: f64,
    /// Coverage by the translated (structured) query, 0 when none.
    pub translated: f64,
}

impl KeywordIndex {
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    pub fn contains(&self, id: AtomId) -> bool {
        self.number(id)
            .is_some_and(|n| self.docs[n as usize].1.is_some())
    }

    /// The document number of an atom this index has seen.
    fn number(&self, id: AtomId) -> Option<u32> {
        match self.docs[..self.sorted].binary_search_by_key(&id, |d| d.0) {
            Ok(n) => Some(n as u32),
            Err(_) => self.added.get(&id).copied(),
        }
    }

    pub fn insert(&mut self, id: AtomId, text: &str, facts: Facts) {
        self.remove(id);
        let n = self.number(id).unwrap_or_else(|| {
            let n = self.docs.len() as u32;
            self.docs.push((id, None, facts));
            self.added.insert(id, n);
            n
        });
        let mut counts: HashMap<u32, u32> = HashMap::new();
        let terms = tokens(text);
        for term in &terms {
            let next = self.term_ids.len() as u32;
            let tid = *self.term_ids.entry(term.clone()).or_insert(next);
            if tid as usize == self.postings.len() {
                self.postings.push(Vec::new());
            }
            *counts.entry(tid).or_default() += 1;
        }
        if let Some(terms_of) = &mut self.terms_of {
            terms_of.resize(self.docs.len(), Vec::new());
            terms_of[n as usize] = counts.keys().copied().collect();
        }
        for (tid, tf) in counts {
            // Postings stay ordered by document number (a search merges
            // them); only a re-inserted document lands before the end.
            let postings = &mut self.postings[tid as usize];
            let at = postings.partition_point(|p| p.0 < n);
            postings.insert(at, (n, tf));
        }
        self.total_len += terms.len() as u64;
        self.docs[n as usize].1 = Some(terms.len() as u32);
        self.docs[n as usize].2 = facts;
        self.live += 1;
    }

    pub fn remove(&mut self, id: AtomId) {
        let Some(n) = self.number(id) else {
            return;
        };
        let Some(len) = self.docs[n as usize].1.take() else {
            return;
        };
        self.live -= 1;
        self.total_len -= u64::from(len);
        let terms_of = self.terms_of.get_or_insert_with(|| {
            let mut terms_of = vec![Vec::new(); self.docs.len()];
            for (tid, postings) in self.postings.iter().enumerate() {
                for &(d, _) in postings {
                    terms_of[d as usize].push(tid as u32);
                }
            }
            terms_of
        });
        terms_of.resize(self.docs.len(), Vec::new());
        for tid in std::mem::take(&mut terms_of[n as usize]) {
            self.postings[tid as usize].retain(|(d, _)| *d != n);
        }
    }

    /// What a snapshot stores of this index.
    pub fn store(&self) -> Stored {
        let mut live: Vec<(AtomId, u32, u32, Facts)> = self
            .docs
            .iter()
            .enumerate()
            .filter_map(|(n, (id, len, facts))| len.map(|len| (*id, len, n as u32, *facts)))
            .collect();
        live.sort_unstable_by_key(|d| d.0);
        let mut renumber = vec![u32::MAX; self.docs.len()];
        for (position, (_, _, n, _)) in live.iter().enumerate() {
            renumber[*n as usize] = position as u32;
        }
        let mut by_tid: Vec<(&String, u32)> = self
            .term_ids
            .iter()
            .filter(|(_, tid)| !self.postings[**tid as usize].is_empty())
            .map(|(term, tid)| (term, *tid))
            .collect();
        by_tid.sort_unstable_by_key(|(_, tid)| *tid);
        let mut stored = Stored {
            terms: Vec::with_capacity(by_tid.len()),
            postings: Vec::with_capacity(by_tid.len()),
            docs: live
                .iter()
                .map(|(id, len, _, facts)| (*id, *len, *facts))
                .collect(),
        };
        for (term, tid) in by_tid {
            let mut postings: Vec<(u32, u32)> = self.postings[tid as usize]
                .iter()
                .map(|&(n, tf)| (renumber[n as usize], tf))
                .collect();
            postings.sort_unstable();
            stored.terms.push(term.clone());
            stored.postings.push(postings);
        }
        stored
    }

    /// The index a snapshot stored, or `None` if it does not hold together.
    pub fn restore(stored: Stored) -> Option<KeywordIndex> {
        let n = stored.docs.len();
        if stored.terms.len() != stored.postings.len()
            || stored.docs.windows(2).any(|w| w[0].0 >= w[1].0)
            || stored.postings.iter().any(|postings| {
                postings.windows(2).any(|w| w[0].0 >= w[1].0)
                    || postings.last().is_some_and(|&(d, _)| d as usize >= n)
            })
        {
            return None;
        }
        let mut term_ids = HashMap::with_capacity(stored.terms.len());
        for (tid, term) in stored.terms.into_iter().enumerate() {
            if term_ids.insert(term, tid as u32).is_some() {
                return None;
            }
        }
        Some(KeywordIndex {
            term_ids,
            postings: stored.postings,
            total_len: stored.docs.iter().map(|d| u64::from(d.1)).sum(),
            docs: stored
                .docs
                .into_iter()
                .map(|(id, len, facts)| (id, Some(len), facts))
                .collect(),
            sorted: n,
            added: HashMap::new(),
            terms_of: None,
            live: n,
        })
    }

    fn doc_len(&self, n: u32) -> f64 {
        self.docs[n as usize].1.unwrap_or(0) as f64
    }

    fn idf(&self, df: usize) -> f64 {
        let n = self.live as f64;
        (1.0 + (n - df as f64 + 0.5) / (df as f64 + 0.5)).ln()
    }

    /// Every document matching at least one query term, or one group of the
    /// query's dictionary translation.
    pub fn search(&self, query: &str) -> Matches<'_> {
        let plain = self.search_terms(query);
        let Some(groups) = dictionary::translate(query) else {
            return Matches {
                index: self,
                hits: plain,
            };
        };
        let translated = self.search_groups(&groups);
        let mut hits = Vec::with_capacity(plain.len().max(translated.len()));
        merge(&plain, &translated, &mut hits, |plain, translated| {
            let mut hit = plain.copied().unwrap_or(KeywordHit {
                coverage: 0.0,
                bm25: 0.0,
                translated: 0.0,
            });
            if let Some(&(coverage, bm25)) = translated {
                hit.translated = coverage;
                hit.coverage = hit.coverage.max(coverage);
                hit.bm25 = hit.bm25.max(bm25);
            }
            hit
        });
        Matches { index: self, hits }
    }

    /// Documents matching an alternative (all of its terms), with the
    /// smallest tf among those terms, ordered by document number.
    fn matching(&self, alternative: &[String]) -> Vec<(u32, u32)> {
        let mut lists: Vec<&[(u32, u32)]> = Vec::with_capacity(alternative.len());
        for term in alternative {
            match self.term_ids.get(term) {
                Some(t) => lists.push(&self.postings[*t as usize]),
                None => return Vec::new(),
            }
        }
        // Intersect from the shortest list: only candidates are kept.
        lists.sort_by_key(|l| l.len());
        let Some((first, rest)) = lists.split_first() else {
            return Vec::new();
        };
        let mut found = first.to_vec();
        for list in rest {
            let mut i = 0;
            found.retain_mut(|(n, least)| {
                i += list[i..].partition_point(|p| p.0 < *n);
                match list.get(i) {
                    Some(&(m, tf)) if m == *n => {
                        *least = (*least).min(tf);
                        true
                    }
                    _ => false,
                }
            });
        }
        found
    }

    /// BM25's saturated term frequency of `tf` in document number `n`.
    fn saturated(&self, n: u32, tf: u32, avg_len: f64) -> f64 {
        let tf = f64::from(tf);
        let norm = K1 * (1.0 - B + B * self.doc_len(n) / avg_len);
        tf * (K1 + 1.0) / (tf + norm)
    }

    /// Coverage and BM25 of the structured query by document number: each
    /// group once, its df the documents any of its alternatives matches.
    fn search_groups(&self, groups: &[Group]) -> Vec<(u32, (f64, f64))> {
        if self.live == 0 {
            return Vec::new();
        }
        let avg_len = (self.total_len as f64 / self.live as f64).max(1.0);
        let mut denominator = 0.0;
        let mut seen: HashSet<&[Vec<String>]> = HashSet::new();
        let mut matched_groups = Vec::new();
        for group in groups {
            if !seen.insert(&group.alternatives) {
                continue;
            }
            // The union of its alternatives' matches, the larger tf kept.
            let mut matched: Vec<(u32, u32)> = Vec::new();
            for alternative in &group.alternatives {
                let found = self.matching(alternative);
                let mut union = Vec::with_capacity(matched.len() + found.len());
                merge(&matched, &found, &mut union, |a, b| {
                    a.copied().max(b.copied()).unwrap_or_default()
                });
                matched = union;
            }
            let idf = self.idf(matched.len());
            denominator += group.weight * idf;
            matched_groups.push((group.weight * idf, matched));
        }
        let mut lists: Vec<(f64, &[(u32, u32)])> = matched_groups
            .iter()
            .map(|(weight, matched)| (*weight, matched.as_slice()))
            .collect();
        let mut hits = self.tally(&mut lists, avg_len);
        for (_, (coverage, _)) in &mut hits {
            *coverage = (*coverage / denominator).min(1.0);
        }
        hits
    }

    /// Per document, Σ weight and Σ weight · saturated tf over the lists it
    /// is on, ordered by document number. Short lists are merged first, so
    /// a long list is copied once.
    fn tally(&self, lists: &mut [(f64, &[(u32, u32)])], avg_len: f64) -> Vec<(u32, (f64, f64))> {
        lists.sort_by_key(|(_, list)| list.len());
        let mut sums: Vec<(u32, (f64, f64))> = Vec::new();
        for (weight, list) in lists.iter() {
            let weighed: Vec<(u32, (f64, f64))> = list
                .iter()
                .map(|&(n, tf)| (n, (*weight, weight * self.saturated(n, tf, avg_len))))
                .collect();
            let mut next = Vec::with_capacity(sums.len() + weighed.len());
            merge(&sums, &weighed, &mut next, |a, b| {
                let (a, b) = (
                    a.copied().unwrap_or_default(),
                    b.copied().unwrap_or_default(),
                );
                (a.0 + b.0, a.1 + b.1)
            });
            sums = next;
        }
        sums
    }

    /// The plain keyword search: every document matching a query term,
    /// ordered by document number.
    fn search_terms(&self, query: &str) -> Vec<(u32, KeywordHit)> {
        let mut terms = query_tokens(query);
        terms.sort();
        terms.dedup();
        if terms.is_empty() || self.live == 0 {
            return Vec::new();
        }
        let avg_len = (self.total_len as f64 / self.live as f64).max(1.0);
        let mut denominator = 0.0;
        let mut lists = Vec::with_capacity(terms.len());
        for term in &terms {
            let weight = if is_unigram(term) {
                UNIGRAM_WEIGHT
            } else {
                1.0
            };
            let postings = self.term_ids.get(term).map(|t| &self.postings[*t as usize]);
            let df = postings.map_or(0, Vec::len);
            let idf = self.idf(df);
            if df == 0 {
                let straddles = term.chars().all(is_cjk);
                denominator += weight * idf * if straddles { 0.25 } else { 1.0 };
                continue;
            }
            denominator += weight * idf;
            lists.push((weight * idf, postings.map_or(&[][..], Vec::as_slice)));
        }
        self.tally(&mut lists, avg_len)
            .into_iter()
            .map(|(n, (coverage, bm25))| {
                let hit = KeywordHit {
                    coverage: (coverage / denominator).min(1.0),
                    bm25,
                    translated: 0.0,
                };
                (n, hit)
            })
            .collect()
    }
}

/// Merges two lists ordered by document number into `out`, combining each
/// document's entries (either may be missing).
fn merge<A, B, C>(
    a: &[(u32, A)],
    b: &[(u32, B)],
    out: &mut Vec<(u32, C)>,
    combine: impl Fn(Option<&A>, Option<&B>) -> C,
) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let (n, x, y) = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x.0 == y.0 => (x.0, Some(&x.1), Some(&y.1)),
            (Some(x), Some(y)) if x.0 < y.0 => (x.0, Some(&x.1), None),
            (Some(x), None) => (x.0, Some(&x.1), None),
            (_, Some(y)) => (y.0, None, Some(&y.1)),
            (None, None) => unreachable!("the loop runs while one list has entries"),
        };
        i += usize::from(x.is_some());
        j += usize::from(y.is_some());
        out.push((n, combine(x, y)));
    }
}

/// A query's matches in one index, by document number.
#[derive(Debug)]
pub struct Matches<'a> {
    index: &'a KeywordIndex,
    hits: Vec<(u32, KeywordHit)>,
}

impl<'a> Matches<'a> {
    pub fn len(&self) -> usize {
        self.hits.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hits.is_empty()
    }

    /// The hit of this atom, if it matched.
    pub fn get(&self, id: AtomId) -> Option<KeywordHit> {
        let n = self.index.number(id)?;
        let i = self.hits.binary_search_by_key(&n, |h| h.0).ok()?;
        Some(self.hits[i].1)
    }

    pub fn iter(&self) -> impl Iterator<Item = (AtomId, KeywordHit)> + '_ {
        self.hits
            .iter()
            .map(|&(n, hit)| (self.index.docs[n as usize].0, hit))
    }

    /// The matches best first: by coverage (compared at `f32` precision),
    /// equal coverages in document order. Sorted lazily, a chunk at a
    /// time, so that taking the best few of many matches costs about one
    /// pass over eight bytes per match.
    pub fn best_first(&self) -> impl Iterator<Item = (AtomId, KeywordHit, Facts)> + '_ {
        // Coverage and position as one integer whose falling order is
        // theirs: coverage ≥ 0, and a non-negative f32's bits order as the
        // number does; the position inverted, so that the earlier leads.
        let mut order: Vec<u64> = self
            .hits
            .iter()
            .enumerate()
            .map(|(i, (_, hit))| {
                u64::from((hit.coverage as f32).to_bits()) << 32 | u64::from(u32::MAX - i as u32)
            })
            .collect();
        let mut sorted = 0;
        let mut next = 0;
        std::iter::from_fn(move || {
            if next == sorted {
                let rest = &mut order[sorted..];
                if rest.is_empty() {
                    return None;
                }
                let chunk = sorted.max(FIRST_CHUNK).min(rest.len());
                if chunk < rest.len() {
                    rest.select_nth_unstable_by(chunk - 1, |a, b| b.cmp(a));
                }
                rest[..chunk].sort_unstable_by(|a, b| b.cmp(a));
                sorted += chunk;
            }
            let i = u32::MAX - order[next] as u32;
            next += 1;
            let (n, hit) = self.hits[i as usize];
            let (id, _, facts) = self.index.docs[n as usize];
            Some((id, hit, facts))
        })
    }
}

/// How many matches [`Matches::best_first`] sorts first (then as many
/// again as are sorted, each time more are wanted).
/// (A few under test, so that the property tests cross chunks.)
const FIRST_CHUNK: usize = if cfg!(test) { 3 } else { 1024 };

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn index(docs: &[&str]) -> KeywordIndex {
        let mut index = KeywordIndex::default();
        for (i, d) in docs.iter().enumerate() {
            index.insert(AtomId(i as u128), d, FACTS);
        }
        index
    }

    fn facts(i: usize) -> Facts {
        Facts {
            created_at: Timestamp(i as i64),
            ..FACTS
        }
    }

    const FACTS: Facts = Facts {
        created_at: Timestamp(0),
        epistemic: Epistemic::Actual,
        kind: Kind::Memory,
    };

    #[test]
    fn cross_script_match() {
        let idx = index(&[
            "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB",
            "前端用 React",
            "部署用 ECS",
        ]);
        let hits = idx.search("数据库 资料库");
        let best = hits.best_first().next().unwrap();
        assert_eq!(best.0, AtomId(0));
        assert!(idx.search("PostgreSQL").get(AtomId(0)).unwrap().coverage > 0.9);
    }

    #[test]
    fn dictionary_translation_crosses_languages() {
        let idx = index(&[
            "The spare key is with our neighbour at number 12",
            "專案用 PostgreSQL 16 做主資料庫",
            "Trash pickup is on Tuesday",
        ]);
        let hits = idx.search("備用鑰匙");
        let hit = hits.get(AtomId(0)).expect("the English memory is found");
        assert!(
            hit.translated > 0.9 && hit.coverage == hit.translated,
            "{hit:?}"
        );
        let hits = idx.search("database");
        assert!(
            hits.get(AtomId(1)).is_some_and(|h| h.translated > 0.5),
            "{hits:?}"
        );
        // a query in the memory's own language needs no translation
        let plain = idx.search("trash pickup").get(AtomId(2)).unwrap();
        assert!(plain.coverage > 0.9);
        assert!(idx.search("備用鑰匙").get(AtomId(2)).is_none());
    }

    #[test]
    fn remove_forgets_the_document() {
        let mut idx = index(&["alpha beta", "beta gamma"]);
        idx.remove(AtomId(0));
        assert!(idx.search("alpha").get(AtomId(0)).is_none());
        assert_eq!(idx.len(), 1);
        idx.insert(AtomId(1), "delta", FACTS);
        assert!(idx.search("beta").is_empty());
    }

    /// The naive oracle: BM25 computed from scratch over the live documents.
    fn brute_bm25(docs: &[(u128, String)], query: &str) -> HashMap<AtomId, f64> {
        let toks: Vec<Vec<String>> = docs.iter().map(|(_, d)| tokens(d)).collect();
        let n = docs.len() as f64;
        let avg = (toks.iter().map(Vec::len).sum::<usize>() as f64 / n).max(1.0);
        let mut q = query_tokens(query);
        q.sort();
        q.dedup();
        let mut out = HashMap::new();
        for term in &q {
            let df = toks.iter().filter(|t| t.contains(term)).count() as f64;
            if df == 0.0 {
                continue;
            }
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            let w = if is_unigram(term) {
                UNIGRAM_WEIGHT
            } else {
                1.0
            };
            for ((id, _), t) in docs.iter().zip(&toks) {
                let tf = t.iter().filter(|x| *x == term).count() as f64;
                if tf > 0.0 {
                    let tfn = tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * t.len() as f64 / avg));
                    *out.entry(AtomId(*id)).or_insert(0.0) += w * idf * tfn;
                }
            }
        }
        out
    }

    proptest! {
        #[test]
        fn matches_brute_force(
            docs in proptest::collection::vec("(alpha|beta|gamma|資料|数据|庫|库|選型| ){1,12}", 1..20),
            removed in proptest::collection::vec(any::<bool>(), 20),
            later in proptest::collection::vec(0u8..3, 20),
            query in "(alpha|beta|資料庫|选型|gamma| ){1,5}",
        ) {
            let mut idx = KeywordIndex::default();
            let mut live = Vec::new();
            for (i, d) in docs.iter().enumerate() {
                idx.insert(AtomId(i as u128), d, facts(i));
                if removed[i] { idx.remove(AtomId(i as u128)); } else { live.push((i as u128, d.clone())); }
            }
            // Through the stored form, then more writes on the restored
            // index (removal derives a document's terms from the postings).
            let mut idx = KeywordIndex::restore(idx.store()).unwrap();
            for (i, d) in docs.iter().enumerate() {
                if later[i] == 1 && !removed[i] {
                    idx.remove(AtomId(i as u128));
                    live.retain(|(id, _)| *id != i as u128);
                } else if later[i] == 2 {
                    let text = format!("{d} gamma");
                    idx.insert(AtomId(i as u128), &text, facts(i));
                    live.retain(|(id, _)| *id != i as u128);
                    live.push((i as u128, text));
                }
            }
            prop_assume!(!live.is_empty());
            let want = brute_bm25(&live, &query);
            let got: HashMap<AtomId, KeywordHit> = idx
                .search_terms(&query)
                .into_iter()
                .map(|(n, hit)| (idx.docs[n as usize].0, hit))
                .collect();
            prop_assert_eq!(got.len(), want.len());
            prop_assert_eq!(idx.len(), live.len());
            // Every match comes out of best_first once, best first, and get
            // finds it.
            let matches = idx.search(&query);
            let ranked: Vec<(AtomId, KeywordHit, Facts)> = matches.best_first().collect();
            prop_assert_eq!(ranked.len(), matches.len());
            let mut ids: Vec<AtomId> = ranked.iter().map(|h| h.0).collect();
            ids.sort();
            ids.dedup();
            prop_assert_eq!(ids.len(), ranked.len());
            for pair in ranked.windows(2) {
                prop_assert!(pair[0].1.coverage as f32 >= pair[1].1.coverage as f32);
            }
            for (id, hit, facts) in &ranked {
                prop_assert_eq!(matches.get(*id), Some(*hit));
                prop_assert_eq!(facts.created_at, Timestamp(id.0 as i64));
            }
            for (id, score) in want {
                let hit = got[&id];
                prop_assert!((hit.bm25 - score).abs() < 1e-9);
                prop_assert!(hit.coverage > 0.0 && hit.coverage <= 1.0);
            }
        }
    }
}
