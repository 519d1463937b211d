//! The indexes as a snapshot stores them (its fourth frame, format version
//! 4), so that opening a store does not derive them again from every atom.
//!
//! Payload: `derivation: u64 LE | snapshot version: u64 LE | postcard(Stored)`.
//! `derivation` fingerprints the code and dependencies the indexes are
//! derived with (`build.rs`); bytes of any other derivation, of another
//! version than the snapshot's state, or that do not decode or hold
//! together are ignored and the indexes are rebuilt — they are derived
//! data, never the only copy of anything. What the log changed after the
//! snapshot is re-indexed atom by atom.
//!
//! Stored: the keyword index and the graph per tenant, and the dedup keys.
//! Vectors are not stored twice: the vector index is built from the
//! snapshot's vectors frame when a recall first needs it. Only live terms and entities are written, so
//! an erased atom's words and names leave with the compaction that commits
//! the erasure, like its content.

use serde::{Deserialize, Serialize};

use super::keyword::{self, KeywordIndex};
use super::{Dedup, Indexes};
use crate::atom::AtomId;
use crate::graph::index::{GraphIndex, StoredGraph};
use crate::log::Derived;
use crate::state::State;

include!(concat!(env!("OUT_DIR"), "/derivation.rs"));

const HEAD: usize = 16;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Stored {
    keyword: Vec<(String, keyword::Stored)>,
    graph: Vec<(String, StoredGraph)>,
    dedup: Vec<(AtomId, u64)>,
}

impl Indexes {
    /// The indexes frame for a snapshot of `state` (these indexes must be
    /// current with it).
    pub fn encode(&self, state: &State) -> Option<Vec<u8>> {
        let mut keyword: Vec<(String, keyword::Stored)> = self
            .keyword
            .iter()
            .filter(|(_, k)| !k.is_empty())
            .map(|(tenant, k)| (tenant.clone(), k.store()))
            .collect();
        keyword.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let dedup = self.dedup.pairs();
        let stored = Stored {
            keyword,
            graph: self.graph.store(),
            dedup,
        };
        let mut out = Vec::with_capacity(HEAD);
        out.extend_from_slice(&DERIVATION.to_le_bytes());
        out.extend_from_slice(&state.version.to_le_bytes());
        postcard::to_extend(&stored, out).ok()
    }

    /// The indexes of `state` (already caught up with the log): restored
    /// from the snapshot's frame when it is usable, else rebuilt. The flag
    /// says whether the frame was used.
    pub fn restore(state: &State, derived: Option<Derived>) -> (Indexes, bool) {
        let Some(derived) = derived else {
            return (Indexes::build(state), false);
        };
        match Indexes::decode(state, &derived) {
            Some(mut indexes) => {
                indexes.reindex(derived.touched, state);
                (indexes, true)
            }
            None => (Indexes::build(state), false),
        }
    }

    fn decode(state: &State, derived: &Derived) -> Option<Indexes> {
        let bytes = &derived.bytes;
        let word = |at: usize| -> Option<u64> {
            Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
        };
        if word(0)? != DERIVATION || word(8)? != derived.snapshot_version {
            return None;
        }
        let stored: Stored = postcard::from_bytes(&bytes[HEAD..]).ok()?;
        let mut indexes = Indexes {
            vector_model: state.vectors.model.clone(),
            graph: GraphIndex::restore(stored.graph)?,
            ..Indexes::default()
        };
        for (tenant, k) in stored.keyword {
            indexes.keyword.insert(tenant, KeywordIndex::restore(k)?);
        }
        if stored.dedup.windows(2).any(|w| w[0].0 >= w[1].0) {
            return None;
        }
        indexes.dedup = Dedup::from_stored(stored.dedup);
        Some(indexes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atom::{CorrectAction, GovernAction};
    use crate::index::keyword::Facts;
    use crate::log::Log;
    use crate::log::backend::MemBackend;
    use crate::memory::Config;
    use crate::ops::testing::Harness;
    use crate::scope::Scope;
    use proptest::prelude::*;

    const QUERIES: &[&str] = &[
        "PostgreSQL database",
        "資料庫 部署",
        "redis cache",
        "Alice owns billing",
        "weekly rotation",
        "主資料庫",
    ];

    /// What a caller can observe of two index sets over the same state:
    /// keyword hits per tenant and query, the graph per atom (names), the
    /// dedup keys, and vector search per tenant.
    fn assert_same(got: &mut Indexes, want: &mut Indexes, state: &State) {
        let mut tenants: Vec<&str> = state
            .atoms
            .values()
            .map(|a| a.scope.tenant_id.as_str())
            .collect();
        tenants.sort_unstable();
        tenants.dedup();
        for tenant in &tenants {
            for q in QUERIES {
                let hits = |i: &Indexes| {
                    let mut v: Vec<(AtomId, f64, f64, f64, Facts)> = i
                        .keyword(tenant)
                        .map(|k| {
                            k.search(q)
                                .best_first()
                                .map(|(id, h, f)| (id, h.coverage, h.bm25, h.translated, f))
                                .collect()
                        })
                        .unwrap_or_default();
                    v.sort_by_key(|h| h.0);
                    v
                };
                let (g, w) = (hits(got), hits(want));
                assert_eq!(g.len(), w.len(), "{tenant} {q}");
                for (a, b) in g.iter().zip(&w) {
                    assert_eq!(a.0, b.0);
                    assert!((a.1 - b.1).abs() < 1e-9 && (a.2 - b.2).abs() < 1e-9);
                    assert!((a.3 - b.3).abs() < 1e-9);
                    assert_eq!(a.4, b.4, "the facts recall weighs a match with");
                }
            }
        }
        let graph = |i: &Indexes| {
            let mut out = Vec::new();
            for atom in state.atoms.values() {
                let Some(g) = i.graph.tenant(&atom.scope.tenant_id) else {
                    continue;
                };
                let mut names: Vec<String> = g
                    .mentions_of(atom.id)
                    .iter()
                    .map(|e| g.entity(*e).key.clone())
                    .collect();
                names.sort();
                let mut triples: Vec<String> = g
                    .triples_of(atom.id)
                    .iter()
                    .map(|t| {
                        let (s, o) = (&g.entity(t.source).key, &g.entity(t.target).key);
                        format!("{s} {} {o} {}", t.relation, t.supplied)
                    })
                    .collect();
                triples.sort();
                out.push((atom.id, names, triples));
            }
            out
        };
        assert_eq!(graph(got), graph(want));
        assert_eq!(got.graph.totals(), want.graph.totals());
        assert_eq!(got.dedup.pairs(), want.dedup.pairs());
        got.ensure_vectors(state);
        want.ensure_vectors(state);
        let query: Vec<f32> = (0..state.vectors.dim).map(|i| (i as f32).sin()).collect();
        for tenant in &tenants {
            let search = |i: &Indexes| {
                i.vector(tenant)
                    .map(|v| v.search_neutral(&query, 5, |_| true, false).0)
                    .unwrap_or_default()
            };
            assert_eq!(search(got), search(want), "{tenant}");
        }
    }

    /// The indexes the store's files give, restored, and whether the
    /// snapshot's frame was used.
    fn restored(backend: &MemBackend) -> (Indexes, bool, State) {
        let (mut log, mut state, _) = Log::open(backend.clone(), 1 << 30).unwrap();
        let (indexes, used) = Indexes::restore(&state, log.take_derived());
        log.read_vectors(&mut state.vectors).unwrap();
        (indexes, used, state)
    }

    const WORDS: &[&str] = &[
        "PostgreSQL",
        "Redis",
        "Alice",
        "Bob",
        "billing",
        "deploy",
        "database",
        "資料庫",
        "部署",
        "快取",
        "weekly",
        "rotation",
        "owns",
        "uses",
        "depends on",
        "Kubernetes",
        "the",
        "主",
    ];

    fn text(words: &[usize]) -> String {
        let mut t: Vec<&str> = words.iter().map(|w| WORDS[w % WORDS.len()]).collect();
        t.push("note");
        t.join(" ")
    }

    #[derive(Debug, Clone)]
    enum Op {
        Memorize(Vec<usize>, bool),
        Replace(usize, Vec<usize>),
        Seal(usize),
        Compact,
    }

    fn op() -> impl Strategy<Value = Op> {
        let words = prop::collection::vec(0usize..40, 1..8);
        prop_oneof![
            4 => (words.clone(), any::<bool>()).prop_map(|(w, t)| Op::Memorize(w, t)),
            1 => (0usize..50, words).prop_map(|(i, w)| Op::Replace(i, w)),
            1 => (0usize..50).prop_map(Op::Seal),
            1 => Just(Op::Compact),
        ]
    }

    fn run(ops: &[Op]) -> Harness {
        let mut h = Harness::with(MemBackend::new(), Config::default());
        h.memory
            .set_embedder(Box::new(crate::embed::hashed::HashedEmbedder::new(16)));
        let other = Scope::new("bob", "acme", "shop", "main");
        let mut ids = Vec::new();
        for op in ops {
            match op {
                Op::Memorize(words, theirs) => {
                    let scope = if *theirs {
                        other.clone()
                    } else {
                        h.scope.clone()
                    };
                    if let Some(id) = h.memorize_in(&text(words), &scope).atom_id {
                        ids.push(id);
                    }
                }
                Op::Replace(i, words) if !ids.is_empty() => {
                    let id = ids[i % ids.len()];
                    h.correct(id, CorrectAction::Replace, Some(&text(words)));
                }
                Op::Seal(i) if !ids.is_empty() => {
                    let id = ids[i % ids.len()];
                    h.govern(id, GovernAction::Seal, None);
                }
                Op::Compact => h.memory.compact().unwrap(),
                _ => {}
            }
        }
        h
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn stored_indexes_answer_as_rebuilt_ones(ops in prop::collection::vec(op(), 1..40)) {
            let mut h = run(&ops);
            h.memory.compact().unwrap();
            // A log tail after the snapshot is re-indexed atom by atom.
            h.memorize("Alice moved the billing database to Kubernetes");
            let (mut got, used, state) = restored(&h.backend);
            prop_assert!(used);
            assert_same(&mut got, &mut Indexes::build(&state), &state);
        }

        /// A power cut at any write of a compaction leaves files whose
        /// indexes (restored or rebuilt) are those of the state they hold.
        #[test]
        fn a_power_cut_never_leaves_indexes_out_of_step(
            ops in prop::collection::vec(op(), 1..20),
            cut in 0u64..6,
            torn in 0usize..64,
        ) {
            let mut h = run(&ops);
            h.backend.cut_power_after(cut, torn);
            let _ = h.memory.compact();
            let after = h.backend.after_power_cut();
            let (mut got, _, state) = restored(&after);
            assert_same(&mut got, &mut Indexes::build(&state), &state);
        }
    }

    #[test]
    fn erased_words_and_names_leave_the_stored_indexes() {
        let mut h = Harness::new();
        h.id("Project Nightjar runs on Kubernetes");
        let secret = h.id("Codename Zqxwvbk ships on Fridays");
        h.memory.compact().unwrap();
        // The lower-cased term is only in the stored keyword index.
        assert!(h.files_contain("zqxwvbk"));
        h.govern(secret, GovernAction::Seal, None);
        assert!(!h.files_contain("zqxwvbk"));
        assert!(!h.files_contain("Zqxwvbk"));
        assert!(h.files_contain("nightjar"));
    }

    #[test]
    fn indexes_of_another_derivation_or_version_are_rebuilt() {
        let h = run(&[Op::Memorize(vec![0, 1, 2], false), Op::Compact]);
        let (mut log, state, _) = Log::open(h.backend.clone(), 1 << 30).unwrap();
        let derived = log.take_derived().unwrap();
        for at in [0, 8] {
            let mut bytes = derived.bytes.clone();
            bytes[at] ^= 1;
            let changed = Derived {
                bytes,
                touched: Vec::new(),
                snapshot_version: derived.snapshot_version,
            };
            let (mut got, used) = Indexes::restore(&state, Some(changed));
            assert!(!used);
            assert_same(&mut got, &mut Indexes::build(&state), &state);
        }
        let garbage = Derived {
            bytes: [&derived.bytes[..16], &[0xff; 9][..]].concat(),
            ..Derived::default()
        };
        assert!(!Indexes::restore(&state, Some(garbage)).1);
    }

    #[test]
    fn a_snapshot_without_indexes_gets_them_when_opened() {
        let mut h = Harness::new();
        h.id("The deploy target is ECS");
        // A snapshot as version 3 wrote it: no indexes frame.
        h.memory.log.compact(&mut h.memory.state).unwrap();
        let generation = h.memory.log.generation();
        assert!(!restored(&h.backend).1);
        // A store that cannot be written is still opened and read; the
        // indexes are stored by the next open that can write.
        h.backend.set_read_only(true);
        h.reopen(None);
        assert_eq!(h.memory.log.generation(), generation);
        assert_eq!(h.recall_ids("deploy target").len(), 1);
        h.backend.set_read_only(false);
        // Opening (a read, no write) stores them: the next open reads them.
        h.reopen(None);
        assert_eq!(h.memory.log.generation(), generation + 1);
        assert!(restored(&h.backend).1);
        assert_eq!(h.recall_ids("deploy target").len(), 1);
    }
}
