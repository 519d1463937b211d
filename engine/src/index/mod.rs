//! Indexes derived from the state, rebuilt on open and kept current per
//! transaction: keyword (BM25, CJK-aware) and vectors per tenant, exact-dedup
//! keys, the knowledge graph (`crate::graph::index`), and the temporal
//! signal (time words, recency). Categorical and chain signals read the
//! atoms directly.

pub mod dictionary;
pub mod keyword;
mod persist;
pub mod temporal;
pub mod tokenize;
pub mod vector;

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hasher};

use crate::atom::{Atom, AtomId, Kind};
use crate::graph::index::GraphIndex;
use crate::scope::Scope;
use crate::state::{Row, State, Vectors};
use crate::text::normalize;
use keyword::KeywordIndex;
use vector::VectorIndex;

#[derive(Debug, Default)]
pub struct Indexes {
    /// One keyword index per tenant: no statistic crosses a tenant boundary.
    keyword: HashMap<String, KeywordIndex>,
    /// Dedup key → atoms with that scope, kind and normalised content.
    dedup: Dedup,
    /// One vector index per tenant, over the vectors of `vector_model`;
    /// built on the first semantic search ([`Indexes::ensure_vectors`]),
    /// so that calls that never search vectors do not pay for them.
    vector: HashMap<String, VectorIndex>,
    vectors_built: bool,
    /// Semantic searches answered straight from the rows
    /// ([`Indexes::take_unindexed`]), and per tenant the rows and script
    /// means they used, kept until a write changes an atom.
    unindexed_searches: usize,
    unindexed: HashMap<String, Unindexed>,
    vector_model: String,
    /// Entities and triples per tenant.
    pub graph: GraphIndex,
}

/// The same on every target (snapshots store these keys, and a native
/// process and the component must agree): only byte strings and `u64`
/// lengths are hashed, never `usize` or enum discriminants.
pub fn dedup_key(scope: &Scope, kind: Kind, content: &str) -> u64 {
    let mut h = DefaultHasher::new();
    let mut part = |s: Option<&str>| match s {
        Some(s) => {
            h.write_u64(s.len() as u64);
            h.write(s.as_bytes());
        }
        None => h.write_u64(u64::MAX),
    };
    part(Some(&scope.tenant_id));
    part(scope.workspace.as_deref());
    part(scope.repository.as_deref());
    part(scope.branch.as_deref());
    part(scope.session.as_deref());
    part(Some(kind.as_str()));
    part(Some(&normalize(content)));
    h.finish()
}

/// Semantic searches of a process that go straight over the rows before
/// one builds the index. Measured at 100k rows (`open_profile`, natively
/// and in the component, since the scans vectorise): the first search
/// over the rows 40–55 ms (of which the script means 15–24, kept for the
/// next ones), each later one 22–32 ms; building the index 120–195 ms,
/// then 6–8 ms a search. Building costs about six later searches over the
/// rows, so a process renting five before buying pays at most about twice
/// the least it could have (the ski-rental rule) — and a hook's four
/// queries never build it. (Two before: the scans were three times
/// slower; four in format 5.)
pub const UNINDEXED_SEARCHES: usize = 5;

/// A tenant's searchable rows ([`vector_rows`]) and their script means
/// ([`vector::row_means`]), for searches without an index.
#[derive(Debug, Default)]
pub struct Unindexed {
    pub rows: Vec<(AtomId, Row, bool)>,
    pub means: [Vec<f32>; 2],
}

/// Per tenant (or only `tenant`'s), its searchable rows in atom order:
/// (atom, stored vector, CJK bucket); none of a destroyed atom. Empty
/// before the state's rows are read.
pub fn vector_rows<'a>(
    state: &'a State,
    tenant: Option<&str>,
) -> HashMap<&'a str, Vec<(AtomId, Row, bool)>> {
    let mut tenants: HashMap<&str, Vec<(AtomId, Row, bool)>> = HashMap::new();
    let Some(stored) = state.vectors.rows() else {
        return tenants;
    };
    // Atoms and rows are both ordered by atom: walked side by side, no
    // lookup per row.
    let mut rows_in_order = stored.iter().peekable();
    for atom in state.atoms.values() {
        if tenant.is_some_and(|t| t != atom.scope.tenant_id) {
            continue;
        }
        let rows = tenants.entry(&atom.scope.tenant_id).or_default();
        while rows_in_order.next_if(|(id, _)| **id < atom.id).is_some() {}
        if let Some((_, row)) = rows_in_order.next_if(|(id, _)| **id == atom.id)
            && !atom.exposure.destroyed()
        {
            rows.push((atom.id, row.clone(), tokenize::is_cjk_text(&atom.content)));
        }
    }
    tenants
}

impl Indexes {
    pub fn build(state: &State) -> Indexes {
        let mut indexes = Indexes {
            vector_model: state.vectors.model.clone(),
            ..Indexes::default()
        };
        for atom in state.atoms.values() {
            indexes.upsert_text(atom, state);
        }
        indexes
    }

    /// The rows and means for the next semantic search if it should go
    /// straight over the rows ([`vector::search_rows_with`]) instead of
    /// building the indexes: the first [`UNINDEXED_SEARCHES`] of a process
    /// do (the rows and means taken once, kept while no atom changes),
    /// later ones build the indexes once and use them. Hand them back with
    /// [`Indexes::keep_unindexed`]. Not before the state's rows are read.
    pub fn take_unindexed(&mut self, state: &State, tenant: &str) -> Option<Unindexed> {
        if self.vectors_built || self.unindexed_searches >= UNINDEXED_SEARCHES {
            return None;
        }
        self.unindexed_searches += 1;
        let kept = self.unindexed.remove(tenant);
        Some(kept.unwrap_or_else(|| {
            let rows = vector_rows(state, Some(tenant))
                .remove(tenant)
                .unwrap_or_default();
            let means = vector::row_means(state.vectors.dim as usize, &rows);
            Unindexed { rows, means }
        }))
    }

    /// Keeps what [`Indexes::take_unindexed`] gave for the next search of
    /// the tenant, unless no search will go over the rows again.
    pub fn keep_unindexed(&mut self, tenant: &str, unindexed: Unindexed) {
        if self.unindexed_searches < UNINDEXED_SEARCHES {
            self.unindexed.insert(tenant.to_owned(), unindexed);
        }
    }

    /// Builds the vector indexes if this is their first use.
    /// Not before the state's rows are read ([`crate::state::Vectors::rows`]).
    pub fn ensure_vectors(&mut self, state: &State) {
        if !self.vectors_built && state.vectors.rows().is_some() {
            self.unindexed.clear();
            self.build_vectors(state);
            self.vectors_built = true;
        }
    }

    /// The vector indexes of every tenant, from the state's vectors.
    fn build_vectors(&mut self, state: &State) {
        let dim = state.vectors.dim as usize;
        for (tenant, rows) in vector_rows(state, None) {
            self.vector
                .insert(tenant.to_owned(), VectorIndex::from_rows(dim, rows));
        }
    }

    /// Whether the vector indexes were built for another model than the
    /// state's (then everything is rebuilt).
    pub fn vector_model_changed(&self, vectors: &Vectors) -> bool {
        self.vector_model != vectors.model
    }

    /// Re-indexes these atoms from their current records (everything, if
    /// the vectors' model changed).
    pub fn reindex(&mut self, ids: impl IntoIterator<Item = AtomId>, state: &State) {
        if self.vector_model_changed(&state.vectors) {
            *self = Indexes::build(state);
            return;
        }
        for id in ids {
            if let Some(atom) = state.atoms.get(&id) {
                self.upsert(atom, state);
            }
        }
    }

    /// Re-indexes one atom from its current record.
    pub fn upsert(&mut self, atom: &Atom, state: &State) {
        // Rows kept for searches without an index may no longer be the
        // tenant's (a new row, a destroyed atom).
        self.unindexed.clear();
        if self.vectors_built {
            let vectors = &state.vectors;
            let tenant_vectors = self
                .vector
                .entry(atom.scope.tenant_id.clone())
                .or_insert_with(|| VectorIndex::new(vectors.dim as usize));
            match vectors.rows().and_then(|rows| rows.get(&atom.id)) {
                Some(row) if !atom.exposure.destroyed() => tenant_vectors.insert_scripted(
                    atom.id,
                    row.clone(),
                    tokenize::is_cjk_text(&atom.content),
                ),
                _ => tenant_vectors.remove(atom.id),
            }
        }
        self.upsert_text(atom, state);
    }

    /// Re-indexes one atom's text: keyword, dedup, graph.
    fn upsert_text(&mut self, atom: &Atom, state: &State) {
        let supplied = state
            .supplied
            .triples
            .get(&atom.id)
            .map_or(&[][..], Vec::as_slice);
        self.graph.upsert(atom, supplied);
        let keyword = self
            .keyword
            .entry(atom.scope.tenant_id.clone())
            .or_default();
        let (by_key, key_of) = self.dedup.maps();
        if let Some(old) = key_of.remove(&atom.id)
            && let Some(ids) = by_key.get_mut(&old)
        {
            ids.retain(|id| *id != atom.id);
        }
        if atom.exposure.destroyed() || atom.content.is_empty() {
            keyword.remove(atom.id);
            return;
        }
        keyword.insert(
            atom.id,
            &atom.content,
            keyword::Facts {
                created_at: atom.created_at,
                epistemic: atom.epistemic,
                kind: atom.kind,
            },
        );
        if atom.active() {
            let key = dedup_key(&atom.scope, atom.kind, &atom.content);
            by_key.entry(key).or_default().push(atom.id);
            key_of.insert(atom.id, key);
        }
    }

    pub fn keyword(&self, tenant: &str) -> Option<&KeywordIndex> {
        self.keyword.get(tenant)
    }

    /// A tenant's vector index (`None` before [`Indexes::ensure_vectors`]).
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
    pub fn dedup_candidates(&mut self, key: u64) -> &[AtomId] {
        self.dedup.maps().0.get(&key).map_or(&[], Vec::as_slice)
    }
}

/// The dedup keys of active atoms. A restored index keeps the stored pairs
/// as they are until a write needs the maps: reads never look at them.
#[derive(Debug, Default)]
struct Dedup {
    by_key: HashMap<u64, Vec<AtomId>>,
    key_of: HashMap<AtomId, u64>,
    /// (atom, key) pairs not put in the maps yet.
    stored: Vec<(AtomId, u64)>,
}

impl Dedup {
    fn from_stored(stored: Vec<(AtomId, u64)>) -> Dedup {
        Dedup {
            stored,
            ..Dedup::default()
        }
    }

    fn maps(&mut self) -> (&mut HashMap<u64, Vec<AtomId>>, &mut HashMap<AtomId, u64>) {
        if !self.stored.is_empty() {
            self.key_of.reserve(self.stored.len());
            for (id, key) in std::mem::take(&mut self.stored) {
                self.by_key.entry(key).or_default().push(id);
                self.key_of.insert(id, key);
            }
        }
        (&mut self.by_key, &mut self.key_of)
    }

    /// Every (atom, key), ordered by atom.
    fn pairs(&self) -> Vec<(AtomId, u64)> {
        let mut pairs: Vec<(AtomId, u64)> = self.key_of.iter().map(|(id, k)| (*id, *k)).collect();
        pairs.extend_from_slice(&self.stored);
        pairs.sort_unstable();
        pairs
    }
}
