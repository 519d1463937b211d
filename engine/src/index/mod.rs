//! Indexes derived from the state, rebuilt on open and kept current per
//! transaction: keyword (BM25, CJK-aware) per tenant, exact-dedup keys, and
//! the temporal signal (time words, recency). Categorical and chain signals
//! read the atoms directly.

pub mod keyword;
pub mod temporal;
pub mod tokenize;

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::atom::{Atom, AtomId, Kind};
use crate::scope::Scope;
use crate::state::State;
use crate::text::normalize;
use keyword::KeywordIndex;

#[derive(Debug, Default)]
pub struct Indexes {
    /// One keyword index per tenant: no statistic crosses a tenant boundary.
    keyword: HashMap<String, KeywordIndex>,
    /// Dedup key → atoms with that scope, kind and normalised content.
    dedup: HashMap<u64, Vec<AtomId>>,
    dedup_key_of: HashMap<AtomId, u64>,
}

pub fn dedup_key(scope: &Scope, kind: Kind, content: &str) -> u64 {
    let mut h = DefaultHasher::new();
    (scope, kind.as_str(), normalize(content)).hash(&mut h);
    h.finish()
}

impl Indexes {
    pub fn build(state: &State) -> Indexes {
        let mut indexes = Indexes::default();
        for atom in state.atoms.values() {
            indexes.upsert(atom);
        }
        indexes
    }

    /// Re-indexes one atom from its current record.
    pub fn upsert(&mut self, atom: &Atom) {
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
