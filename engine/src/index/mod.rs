//! Indexes derived from the state, rebuilt on open and kept current per
//! transaction: keyword (BM25, CJK-aware) and vectors per tenant, exact-dedup
//! keys, the knowledge graph (`crate::graph::index`), and the temporal
//! signal (time words, recency). Categorical and chain signals read the
//! atoms directly.

pub mod dictionary;
pub mod keyword;
pub mod temporal;
pub mod tokenize;
pub mod vector;

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::atom::{Atom, AtomId, Kind};
use crate::graph::index::GraphIndex;
use crate::scope::Scope;
use crate::state::{State, Vectors};
use crate::text::normalize;
use keyword::KeywordIndex;
use vector::VectorIndex;

#[derive(Debug, Default)]
pub struct Indexes {
    /// One keyword index per tenant: no statistic crosses a tenant boundary.
    keyword: HashMap<String, KeywordIndex>,
    /// Dedup key → atoms with that scope, kind and normalised content.
    dedup: HashMap<u64, Vec<AtomId>>,
    dedup_key_of: HashMap<AtomId, u64>,
    /// One vector index per tenant, over the vectors of `vector_model`.
    vector: HashMap<String, VectorIndex>,
    vector_model: String,
    /// Entities and triples per tenant.
    pub graph: GraphIndex,
}

pub fn dedup_key(scope: &Scope, kind: Kind, content: &str) -> u64 {
    let mut h = DefaultHasher::new();
    (scope, kind.as_str(), normalize(content)).hash(&mut h);
    h.finish()
}

impl Indexes {
    pub fn build(state: &State) -> Indexes {
        let mut indexes = Indexes {
            vector_model: state.vectors.model.clone(),
            ..Indexes::default()
        };
        for atom in state.atoms.values() {
            indexes.upsert(atom, state);
        }
        indexes
    }

    /// Whether the vector indexes were built for another model than the
    /// state's (then everything is rebuilt).
    pub fn vector_model_changed(&self, vectors: &Vectors) -> bool {
        self.vector_model != vectors.model
    }

    /// Re-indexes one atom from its current record.
    pub fn upsert(&mut self, atom: &Atom, state: &State) {
        let vectors = &state.vectors;
        let supplied = state
            .supplied
            .triples
            .get(&atom.id)
            .map_or(&[][..], Vec::as_slice);
        self.graph.upsert(atom, supplied);
        let tenant_vectors = self
            .vector
            .entry(atom.scope.tenant_id.clone())
            .or_insert_with(|| VectorIndex::new(vectors.dim as usize));
        match vectors.rows.get(&atom.id) {
            Some(row) if !atom.exposure.destroyed() => {
                tenant_vectors.insert_scripted(atom.id, row, tokenize::is_cjk_text(&atom.content))
            }
            _ => tenant_vectors.remove(atom.id),
        }
        let keyword = self
            .keyword
            .entry(atom.scope.tenant_id.clone())
            .or_default();
        if let Some(old) = self.dedup_key_of.remove(&atom.id)
            && let Some(ids) = self.dedup.get_mut(&old)
        {
            ids.retain(|id| *id != atom.id);
        }
        if atom.exposure.destroyed() || atom.content.is_empty() {
            keyword.remove(atom.id);
            return;
        }
        keyword.insert(atom.id, &atom.content);
        if atom.active() {
            let key = dedup_key(&atom.scope, atom.kind, &atom.content);
            self.dedup.entry(key).or_default().push(atom.id);
            self.dedup_key_of.insert(atom.id, key);
        }
    }

    pub fn keyword(&self, tenant: &str) -> Option<&KeywordIndex> {
        self.keyword.get(tenant)
    }

    pub fn vector(&self, tenant: &str) -> Option<&VectorIndex> {
        self.vector.get(tenant)
    }

    pub fn keyword_docs(&self) -> usize {
        self.keyword.values().map(KeywordIndex::len).sum()
    }

    pub fn is_keyword_indexed(&self, atom: &Atom) -> bool {
        self.keyword
            .get(&atom.scope.tenant_id)
            .is_some_and(|k| k.contains(atom.id))
    }

    /// Active atoms that may share the given scope, kind and content.
    pub fn dedup_candidates(&self, key: u64) -> &[AtomId] {
        self.dedup.get(&key).map_or(&[], Vec::as_slice)
    }
}
