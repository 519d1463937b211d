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
use crate::atom::AtomId;

const K1: f64 = 1.2;
const B: f64 = 0.75;
const UNIGRAM_WEIGHT: f64 = 0.3;

#[derive(Debug, Default, Clone)]
pub struct KeywordIndex {
    term_ids: HashMap<String, u32>,
    /// Per term: (document number, term frequency) of the live documents.
    postings: Vec<Vec<(u32, u32)>>,
    /// Per document number: its atom and its length in terms (`None` once
    /// removed; a number stays with its atom for the life of the index).
    docs: Vec<(AtomId, Option<u32>)>,
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
    docs: Vec<(AtomId, u32)>,
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

    pub fn insert(&mut self, id: AtomId, text: &str) {
        self.remove(id);
        let n = self.number(id).unwrap_or_else(|| {
            let n = self.docs.len() as u32;
            self.docs.push((id, None));
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
            self.postings[tid as usize].push((n, tf));
        }
        self.total_len += terms.len() as u64;
        self.docs[n as usize].1 = Some(terms.len() as u32);
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
        let mut live: Vec<(AtomId, u32, u32)> = self
            .docs
            .iter()
            .enumerate()
            .filter_map(|(n, (id, len))| len.map(|len| (*id, len, n as u32)))
            .collect();
        live.sort_unstable_by_key(|d| d.0);
        let mut renumber = vec![u32::MAX; self.docs.len()];
        for (position, (_, _, n)) in live.iter().enumerate() {
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
            docs: live.iter().map(|(id, len, _)| (*id, *len)).collect(),
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
            || stored
                .postings
                .iter()
                .flatten()
                .any(|&(d, _)| d as usize >= n)
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
                .map(|(id, len)| (id, Some(len)))
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
    pub fn search(&self, query: &str) -> HashMap<AtomId, KeywordHit> {
        let mut hits = self.search_terms(query);
        let Some(groups) = dictionary::translate(query) else {
            return hits;
        };
        for (id, (coverage, bm25)) in self.search_groups(&groups) {
            let hit = hits.entry(id).or_insert(KeywordHit {
                coverage: 0.0,
                bm25: 0.0,
                translated: 0.0,
            });
            hit.translated = coverage;
            hit.coverage = hit.coverage.max(coverage);
            hit.bm25 = hit.bm25.max(bm25);
        }
        hits
    }

    /// Documents matching an alternative (all of its terms), with the
    /// smallest tf among those terms.
    fn matching(&self, alternative: &[String], into: &mut HashMap<u32, u32>) {
        let mut lists: Vec<&Vec<(u32, u32)>> = Vec::with_capacity(alternative.len());
        for term in alternative {
            match self.term_ids.get(term) {
                Some(t) => lists.push(&self.postings[*t as usize]),
                None => return,
            }
        }
        // Intersect from the shortest list: only candidates are kept.
        lists.sort_by_key(|l| l.len());
        let Some((first, rest)) = lists.split_first() else {
            return;
        };
        let mut found: HashMap<u32, u32> = first.iter().copied().collect();
        for list in rest {
            let mut both = HashMap::with_capacity(found.len());
            for &(id, tf) in list.iter() {
                if let Some(&least) = found.get(&id) {
                    both.insert(id, least.min(tf));
                }
            }
            found = both;
        }
        for (id, least) in found {
            let e = into.entry(id).or_default();
            *e = (*e).max(least);
        }
    }

    /// BM25's saturated term frequency of `tf` in document number `n`.
    fn saturated(&self, n: u32, tf: u32, avg_len: f64) -> f64 {
        let tf = f64::from(tf);
        let norm = K1 * (1.0 - B + B * self.doc_len(n) / avg_len);
        tf * (K1 + 1.0) / (tf + norm)
    }

    /// Coverage and BM25 of the structured query: each group once, its df
    /// the documents any of its alternatives matches.
    fn search_groups(&self, groups: &[Group]) -> HashMap<AtomId, (f64, f64)> {
        let mut hits: HashMap<u32, (f64, f64)> = HashMap::new();
        if self.live == 0 {
            return HashMap::new();
        }
        let avg_len = (self.total_len as f64 / self.live as f64).max(1.0);
        let mut denominator = 0.0;
        let mut seen: HashSet<&[Vec<String>]> = HashSet::new();
        for group in groups {
            if !seen.insert(&group.alternatives) {
                continue;
            }
            let mut matched: HashMap<u32, u32> = HashMap::new();
            for alternative in &group.alternatives {
                self.matching(alternative, &mut matched);
            }
            let idf = self.idf(matched.len());
            denominator += group.weight * idf;
            for (n, tf) in matched {
                let hit = hits.entry(n).or_default();
                hit.0 += group.weight * idf;
                hit.1 += group.weight * idf * self.saturated(n, tf, avg_len);
            }
        }
        hits.into_iter()
            .map(|(n, (coverage, bm25))| {
                let coverage = (coverage / denominator).min(1.0);
                (self.docs[n as usize].0, (coverage, bm25))
            })
            .collect()
    }

    /// The plain keyword search: every document matching a query term.
    fn search_terms(&self, query: &str) -> HashMap<AtomId, KeywordHit> {
        let mut hits: HashMap<u32, KeywordHit> = HashMap::new();
        let mut terms = query_tokens(query);
        terms.sort();
        terms.dedup();
        if terms.is_empty() || self.live == 0 {
            return HashMap::new();
        }
        let avg_len = (self.total_len as f64 / self.live as f64).max(1.0);
        let mut denominator = 0.0;
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
            for &(n, tf) in postings.into_iter().flatten() {
                let tfn = self.saturated(n, tf, avg_len);
                let hit = hits.entry(n).or_insert(KeywordHit {
                    coverage: 0.0,
                    bm25: 0.0,
                    translated: 0.0,
                });
                hit.coverage += weight * idf;
                hit.bm25 += weight * idf * tfn;
            }
        }
        hits.into_iter()
            .map(|(n, mut hit)| {
                hit.coverage = (hit.coverage / denominator).min(1.0);
                (self.docs[n as usize].0, hit)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn index(docs: &[&str]) -> KeywordIndex {
        let mut index = KeywordIndex::default();
        for (i, d) in docs.iter().enumerate() {
            index.insert(AtomId(i as u128), d);
        }
        index
    }

    #[test]
    fn cross_script_match() {
        let idx = index(&[
            "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB",
            "前端用 React",
            "部署用 ECS",
        ]);
        let hits = idx.search("数据库 资料库");
        let best = hits
            .iter()
            .max_by(|a, b| a.1.coverage.total_cmp(&b.1.coverage))
            .unwrap();
        assert_eq!(*best.0, AtomId(0));
        assert!(idx.search("PostgreSQL").get(&AtomId(0)).unwrap().coverage > 0.9);
    }

    #[test]
    fn dictionary_translation_crosses_languages() {
        let idx = index(&[
            "The spare key is with our neighbour at number 12",
            "專案用 PostgreSQL 16 做主資料庫",
            "Trash pickup is on Tuesday",
        ]);
        let hits = idx.search("備用鑰匙");
        let hit = hits.get(&AtomId(0)).expect("the English memory is found");
        assert!(
            hit.translated > 0.9 && hit.coverage == hit.translated,
            "{hit:?}"
        );
        let hits = idx.search("database");
        assert!(
            hits.get(&AtomId(1)).is_some_and(|h| h.translated > 0.5),
            "{hits:?}"
        );
        // a query in the memory's own language needs no translation
        let plain = idx.search("trash pickup")[&AtomId(2)];
        assert!(plain.coverage > 0.9);
        assert!(!idx.search("備用鑰匙").contains_key(&AtomId(2)));
    }

    #[test]
    fn remove_forgets_the_document() {
        let mut idx = index(&["alpha beta", "beta gamma"]);
        idx.remove(AtomId(0));
        assert!(!idx.search("alpha").contains_key(&AtomId(0)));
        assert_eq!(idx.len(), 1);
        idx.insert(AtomId(1), "delta");
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
                idx.insert(AtomId(i as u128), d);
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
                    idx.insert(AtomId(i as u128), &text);
                    live.retain(|(id, _)| *id != i as u128);
                    live.push((i as u128, text));
                }
            }
            prop_assume!(!live.is_empty());
            let want = brute_bm25(&live, &query);
            let got = idx.search_terms(&query);
            prop_assert_eq!(got.len(), want.len());
            prop_assert_eq!(idx.len(), live.len());
            for (id, score) in want {
                let hit = got[&id];
                prop_assert!((hit.bm25 - score).abs() < 1e-9);
                prop_assert!(hit.coverage > 0.0 && hit.coverage <= 1.0);
            }
        }
    }
}
