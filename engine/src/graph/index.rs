//! The graph of each tenant, derived from its atoms: which entities each
//! atom mentions, and the triples each atom states (extracted by the
//! templates, or supplied by a caller). Rebuilt on open and kept current
//! per transaction, like the keyword index; no statistic or entity crosses
//! a tenant boundary.
//!
//! The index holds every atom's contribution, visible or not; queries
//! (`ops/graph.rs`) filter by the caller's scope and the atom's state, so an
//! entity mentioned only by atoms the caller cannot see does not exist for
//! that caller.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::relations::{self, End};
use super::{EntityType, fold, mentions};
use crate::atom::{Atom, AtomId};
use crate::scope::Scope;

/// An entity's number inside one tenant's graph.
pub type EntityId = u32;

#[derive(Clone, Debug, PartialEq)]
pub struct Entity {
    pub key: String,
    pub name: String,
    pub kind: EntityType,
    pub subtype: String,
}

/// A triple a caller supplied (`relate`, import), stored with its atom.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuppliedTriple {
    pub source: String,
    pub source_type: Option<EntityType>,
    pub relation: String,
    pub target: String,
    pub target_type: Option<EntityType>,
}

/// A triple of one atom, between two entities of its tenant.
#[derive(Clone, Debug, PartialEq)]
pub struct Triple {
    pub source: EntityId,
    pub relation: String,
    pub target: EntityId,
    /// Given by a caller rather than extracted.
    pub supplied: bool,
}

/// The relation name of the edges between entities one atom mentions
/// together without a template saying more.
pub const CO_OCCURS: &str = "co_occurs_with";

#[derive(Debug, Default)]
pub struct TenantGraph {
    entities: Vec<Entity>,
    by_key: HashMap<String, EntityId>,
    /// Atom → the entities it mentions (each once).
    mentions: HashMap<AtomId, Vec<EntityId>>,
    /// Entity → the atoms mentioning it or stating a triple with it.
    atoms_of: HashMap<EntityId, Vec<AtomId>>,
    /// Atom → its triples.
    triples: HashMap<AtomId, Vec<Triple>>,
}

#[derive(Debug, Default)]
pub struct GraphIndex {
    tenants: HashMap<String, TenantGraph>,
}

/// One tenant's graph as a snapshot stores it (`crate::index::persist`):
/// only entities some atom still mentions or relates (an erased atom's
/// names leave), renumbered; per atom, by id, its mentions and triples.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct StoredGraph {
    /// (key, name, kind, subtype)
    entities: Vec<(String, String, EntityType, String)>,
    /// (atom, mentions, [(source, relation, target, supplied)])
    atoms: Vec<StoredAtom>,
}

type StoredAtom = (
    AtomId,
    Vec<EntityId>,
    Vec<(EntityId, String, EntityId, bool)>,
);

impl GraphIndex {
    pub fn tenant(&self, tenant: &str) -> Option<&TenantGraph> {
        self.tenants.get(tenant)
    }

    /// Re-derives one atom's mentions and triples from its current record.
    pub fn upsert(&mut self, atom: &Atom, supplied: &[SuppliedTriple]) {
        let graph = self
            .tenants
            .entry(atom.scope.tenant_id.clone())
            .or_default();
        graph.remove(atom.id);
        if atom.exposure.destroyed() || atom.content.is_empty() {
            return;
        }
        graph.add(atom, supplied);
    }

    /// Every tenant's graph as a snapshot stores it.
    pub fn store(&self) -> Vec<(String, StoredGraph)> {
        let mut out: Vec<(String, StoredGraph)> = self
            .tenants
            .iter()
            .map(|(tenant, g)| (tenant.clone(), g.store()))
            .collect();
        out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// The graph a snapshot stored, or `None` if it does not hold together.
    pub fn restore(stored: Vec<(String, StoredGraph)>) -> Option<GraphIndex> {
        let mut index = GraphIndex::default();
        for (tenant, graph) in stored {
            index.tenants.insert(tenant, TenantGraph::restore(graph)?);
        }
        Some(index)
    }

    /// Entities, mention and triple counts over every tenant.
    pub fn totals(&self) -> (usize, usize, usize) {
        self.tenants.values().fold((0, 0, 0), |(e, m, t), g| {
            (
                e + g.atoms_of.len(),
                m + g.mentions.values().map(Vec::len).sum::<usize>(),
                t + g.triples.values().map(Vec::len).sum::<usize>(),
            )
        })
    }
}

impl TenantGraph {
    pub fn entity(&self, id: EntityId) -> &Entity {
        &self.entities[id as usize]
    }

    /// The entity a name or alias denotes here, if any atom ever named it.
    pub fn find(&self, name: &str) -> Option<EntityId> {
        let key = fold::key(name);
        let canonical = super::lexicon::LEXICON
            .lookup(name)
            .map(|e| fold::key(&e.name));
        canonical
            .and_then(|k| self.by_key.get(&k))
            .or_else(|| self.by_key.get(&key))
            .copied()
            .filter(|id| self.atoms_of.contains_key(id))
    }

    pub fn mentions_of(&self, atom: AtomId) -> &[EntityId] {
        self.mentions.get(&atom).map_or(&[], Vec::as_slice)
    }

    pub fn atoms_of(&self, entity: EntityId) -> &[AtomId] {
        self.atoms_of.get(&entity).map_or(&[], Vec::as_slice)
    }

    pub fn triples_of(&self, atom: AtomId) -> &[Triple] {
        self.triples.get(&atom).map_or(&[], Vec::as_slice)
    }

    fn store(&self) -> StoredGraph {
        let mut live: Vec<EntityId> = self.atoms_of.keys().copied().collect();
        live.sort_unstable();
        let renumber: HashMap<EntityId, EntityId> = live
            .iter()
            .enumerate()
            .map(|(new, old)| (*old, new as EntityId))
            .collect();
        let entities = live
            .iter()
            .map(|id| {
                let e = &self.entities[*id as usize];
                (e.key.clone(), e.name.clone(), e.kind, e.subtype.clone())
            })
            .collect();
        let mut ids: Vec<AtomId> = self
            .mentions
            .keys()
            .chain(self.triples.keys())
            .copied()
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let new = |id: &EntityId| renumber.get(id).copied().unwrap_or(EntityId::MAX);
        let atoms = ids
            .into_iter()
            .map(|atom| {
                let mentions = self.mentions_of(atom).iter().map(new).collect();
                let triples = self
                    .triples_of(atom)
                    .iter()
                    .map(|t| {
                        (
                            new(&t.source),
                            t.relation.clone(),
                            new(&t.target),
                            t.supplied,
                        )
                    })
                    .collect();
                (atom, mentions, triples)
            })
            .collect();
        StoredGraph { entities, atoms }
    }

    fn restore(stored: StoredGraph) -> Option<TenantGraph> {
        let mut graph = TenantGraph::default();
        for (key, name, kind, subtype) in stored.entities {
            let id = graph.entities.len() as EntityId;
            if graph.by_key.insert(key.clone(), id).is_some() {
                return None;
            }
            graph.entities.push(Entity {
                key,
                name,
                kind,
                subtype,
            });
        }
        let known = graph.entities.len() as EntityId;
        for (atom, mentioned, triples) in stored.atoms {
            let triples: Vec<Triple> = triples
                .into_iter()
                .map(|(source, relation, target, supplied)| Triple {
                    source,
                    relation,
                    target,
                    supplied,
                })
                .collect();
            // The same order `add` lists an atom under its entities in.
            let mut involved = mentioned.clone();
            for t in &triples {
                for id in [t.source, t.target] {
                    if !involved.contains(&id) {
                        involved.push(id);
                    }
                }
            }
            if involved.iter().any(|id| *id >= known) {
                return None;
            }
            for id in involved {
                graph.atoms_of.entry(id).or_default().push(atom);
            }
            if !mentioned.is_empty() {
                graph.mentions.insert(atom, mentioned);
            }
            if !triples.is_empty() {
                graph.triples.insert(atom, triples);
            }
        }
        Some(graph)
    }

    fn intern(&mut self, key: String, name: &str, kind: EntityType, subtype: &str) -> EntityId {
        if let Some(&id) = self.by_key.get(&key) {
            let e = &mut self.entities[id as usize];
            if kind.rank() > e.kind.rank() {
                e.kind = kind;
            }
            return id;
        }
        let id = self.entities.len() as EntityId;
        self.entities.push(Entity {
            key: key.clone(),
            name: name.to_owned(),
            kind,
            subtype: subtype.to_owned(),
        });
        self.by_key.insert(key, id);
        id
    }

    /// An entity by name, folded to the lexicon's canonical one if known.
    fn intern_name(&mut self, name: &str, kind: Option<EntityType>) -> EntityId {
        match super::lexicon::LEXICON.lookup(name) {
            Some(entry) => {
                let (key, name, kind, subtype) = (
                    fold::key(&entry.name),
                    entry.name.clone(),
                    entry.kind,
                    entry.subtype.clone(),
                );
                self.intern(key, &name, kind, &subtype)
            }
            None => self.intern(
                fold::key(name),
                name.trim(),
                kind.unwrap_or(EntityType::Other),
                "",
            ),
        }
    }

    fn add(&mut self, atom: &Atom, supplied: &[SuppliedTriple]) {
        let found = mentions(&atom.content);
        let ids: Vec<EntityId> = found
            .iter()
            .map(|m| self.intern(m.key.clone(), &m.name, m.kind, &m.subtype))
            .collect();
        let mut mentioned: Vec<EntityId> = Vec::new();
        for id in &ids {
            if !mentioned.contains(id) {
                mentioned.push(*id);
            }
        }
        let mut triples = Vec::new();
        for raw in relations::triples(&atom.content, &found) {
            let source = self.resolve(&raw.source, &ids, &atom.scope);
            let target = self.resolve(&raw.target, &ids, &atom.scope);
            if source != target {
                triples.push(Triple {
                    source,
                    relation: raw.relation.to_owned(),
                    target,
                    supplied: false,
                });
            }
        }
        for s in supplied {
            let source = self.intern_name(&s.source, s.source_type);
            let target = self.intern_name(&s.target, s.target_type);
            triples.push(Triple {
                source,
                relation: s.relation.clone(),
                target,
                supplied: true,
            });
        }
        triples.dedup();
        let mut involved = mentioned.clone();
        for t in &triples {
            for id in [t.source, t.target] {
                if !involved.contains(&id) {
                    involved.push(id);
                }
            }
        }
        for id in involved {
            self.atoms_of.entry(id).or_default().push(atom.id);
        }
        if !mentioned.is_empty() {
            self.mentions.insert(atom.id, mentioned);
        }
        if !triples.is_empty() {
            self.triples.insert(atom.id, triples);
        }
    }

    /// The entity an end of a template's triple denotes for this atom: the
    /// user is the tenant, the project the repository (else the
    /// organisation, else the user).
    fn resolve(&mut self, end: &End, ids: &[EntityId], scope: &Scope) -> EntityId {
        match end {
            End::Mention(i) => ids[*i],
            End::Named { name, kind } => self.intern(fold::key(name), name, *kind, ""),
            End::User => self.hub_user(scope),
            End::Project => match (&scope.repository, &scope.workspace) {
                (Some(repo), _) => self.intern(fold::key(repo), repo, EntityType::Project, ""),
                (None, Some(org)) => self.intern(fold::key(org), org, EntityType::Organisation, ""),
                (None, None) => self.hub_user(scope),
            },
        }
    }

    fn hub_user(&mut self, scope: &Scope) -> EntityId {
        self.intern(
            fold::key(&scope.tenant_id),
            &scope.tenant_id,
            EntityType::Person,
            "",
        )
    }

    fn remove(&mut self, atom: AtomId) {
        let mut involved = self.mentions.remove(&atom).unwrap_or_default();
        for t in self.triples.remove(&atom).unwrap_or_default() {
            involved.extend([t.source, t.target]);
        }
        involved.sort_unstable();
        involved.dedup();
        for id in involved {
            if let Some(list) = self.atoms_of.get_mut(&id) {
                list.retain(|a| *a != atom);
                if list.is_empty() {
                    self.atoms_of.remove(&id);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atom::{Epistemic, Exposure, Kind, Polarity};
    use crate::time::Timestamp;

    fn atom(id: u128, content: &str) -> Atom {
        Atom {
            id: AtomId(id),
            content: content.into(),
            kind: Kind::Memory,
            source: "agent".into(),
            scope: Scope::new("qiankun", "mem0ai", "mem0", "main"),
            epistemic: Epistemic::Actual,
            polarity: Polarity::Affirmative,
            exposure: Exposure::Visible,
            negated: false,
            superseded_by: None,
            created_at: Timestamp(0),
            updated_at: Timestamp(0),
        }
    }

    #[test]
    fn atoms_add_mentions_and_triples_and_leave_nothing_behind() {
        let mut index = GraphIndex::default();
        let a = atom(1, "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB");
        index.upsert(&a, &[]);
        let g = index.tenant("qiankun").unwrap();
        let pg = g.find("postgres").unwrap();
        assert_eq!(g.entity(pg).name, "PostgreSQL");
        assert_eq!(g.atoms_of(pg), [AtomId(1)]);
        let triples: Vec<(String, &str, String)> = g
            .triples_of(AtomId(1))
            .iter()
            .map(|t| {
                (
                    g.entity(t.source).name.clone(),
                    t.relation.as_str(),
                    g.entity(t.target).name.clone(),
                )
            })
            .collect();
        assert_eq!(
            triples,
            [
                ("mem0".to_owned(), "uses", "PostgreSQL".to_owned()),
                ("mem0".to_owned(), "avoids", "MongoDB".to_owned())
            ]
        );
        let mut sealed = a.clone();
        sealed.exposure = Exposure::Sealed;
        sealed.content.clear();
        index.upsert(&sealed, &[]);
        let g = index.tenant("qiankun").unwrap();
        assert_eq!(g.find("PostgreSQL"), None);
        assert_eq!(index.totals(), (0, 0, 0));
    }

    #[test]
    fn supplied_triples_fold_aliases() {
        let mut index = GraphIndex::default();
        let supplied = SuppliedTriple {
            source: "k8s".into(),
            source_type: None,
            relation: "depends_on".into(),
            target: "etcd".into(),
            target_type: Some(EntityType::Technology),
        };
        index.upsert(&atom(2, "k8s depends_on etcd"), &[supplied]);
        let g = index.tenant("qiankun").unwrap();
        let k8s = g.find("Kubernetes").unwrap();
        assert!(
            g.triples_of(AtomId(2))
                .iter()
                .any(|t| t.supplied && t.source == k8s)
        );
    }
}
