//! stats: counts of atoms, edges and index coverage, and the snapshot version.

use crate::error::Result;
use crate::log::backend::Backend;
use crate::memory::Memory;
use crate::scope::Filter;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct IndexCoverage {
    pub semantic: u64,
    pub keyword: u64,
    pub temporal: u64,
    pub categorical: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    pub atoms: u64,
    pub edges: u64,
    pub indexes: IndexCoverage,
    pub snapshot_version: u64,
    /// The embedding model's fingerprint, or why recall is keyword-only.
    pub model: String,
    /// Files recovery kept aside (name, bytes): bytes it did not apply.
    pub kept_aside: Vec<(String, u64)>,
}

impl<B: Backend> Memory<B> {
    /// Counts of what `filter` covers.
    pub fn stats(&mut self, filter: &Filter) -> Result<Stats> {
        self.refresh()?;
        if self.has_model() {
            // Which atoms have a vector: the rows say.
            self.read_vectors()?;
        }
        let in_scope = |a: &crate::atom::Atom| filter.covers(&a.scope);
        let atoms: Vec<_> = self.state.atoms.values().filter(|a| in_scope(a)).collect();
        let edges = self
            .state
            .edges
            .iter()
            .filter(|e| {
                [e.from, e.to]
                    .iter()
                    .all(|id| self.state.atom(*id).is_some_and(&in_scope))
            })
            .count();
        let keyword = atoms
            .iter()
            .filter(|a| self.indexes.is_keyword_indexed(a))
            .count() as u64;
        let placed = atoms.iter().filter(|a| !a.exposure.destroyed()).count() as u64;
        let semantic = match self.state.vectors.rows() {
            Some(rows) if self.has_model() => {
                atoms.iter().filter(|a| rows.contains_key(&a.id)).count() as u64
            }
            _ => 0,
        };
        Ok(Stats {
            atoms: atoms.len() as u64,
            edges: edges as u64,
            indexes: IndexCoverage {
                semantic,
                keyword,
                temporal: placed,
                categorical: placed,
            },
            snapshot_version: self.state.version,
            model: self.model_status(),
            kept_aside: self.kept_aside()?,
        })
    }

    /// The `kept-*.hmg` files in the store (store-wide, whatever the scope:
    /// they are bytes no scope could be read from).
    fn kept_aside(&self) -> Result<Vec<(String, u64)>> {
        let backend = self.log.backend();
        let mut kept = Vec::new();
        for name in backend.list()? {
            if crate::log::is_kept(&name) {
                let len = backend.len(&name)?.unwrap_or(0);
                kept.push((name, len));
            }
        }
        kept.sort();
        Ok(kept)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;
    use crate::atom::{CorrectAction, GovernAction};
    use crate::scope::Scope;

    #[test]
    fn counts_and_versions() {
        let mut h = Harness::new();
        let a = h.id("one fact");
        h.id("two fact");
        h.correct(a, CorrectAction::Replace, Some("one fact, revised"));
        h.memorize("two fact"); // no_op: no version bump
        let b = h.id("three");
        h.govern(b, GovernAction::Seal, None);
        let s = h.memory.stats(&Filter::WholeStore).unwrap();
        assert_eq!((s.atoms, s.edges, s.snapshot_version), (4, 1, 5));
        assert_eq!(
            (s.indexes.keyword, s.indexes.temporal, s.indexes.semantic),
            (3, 3, 0)
        );
        let elsewhere = h
            .memory
            .stats(&Filter::VisibleFrom(Scope::personal("mallory")))
            .unwrap();
        assert_eq!(elsewhere.atoms, 0);
    }
}
