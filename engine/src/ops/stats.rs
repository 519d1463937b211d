//! stats: counts of atoms, edges and index coverage, and the snapshot version.

use crate::error::Result;
use crate::memory::Memory;
use crate::scope::Scope;
use crate::store::backend::Backend;

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
}

impl<B: Backend> Memory<B> {
    /// The whole store, or only what is visible from `scope` (ancestors included).
    pub fn stats(&mut self, scope: Option<&Scope>) -> Result<Stats> {
        self.refresh()?;
        let in_scope = |a: &crate::atom::Atom| scope.is_none_or(|s| a.scope.visible_from(s, false));
        let atoms: Vec<_> = self.state.atoms.values().filter(|a| in_scope(a)).collect();
        let edges = self
            .state
            .edges
            .iter()
            .filter(|e| [e.from, e.to].iter().all(|id| self.state.atom(*id).is_some_and(&in_scope)))
            .count();
        let keyword = atoms.iter().filter(|a| self.indexes.is_keyword_indexed(a)).count() as u64;
        let placed = atoms.iter().filter(|a| !a.exposure.destroyed()).count() as u64;
        Ok(Stats {
            atoms: atoms.len() as u64,
            edges: edges as u64,
            indexes: IndexCoverage { semantic: 0, keyword, temporal: placed, categorical: placed },
            snapshot_version: self.state.version,
        })
    }
}
