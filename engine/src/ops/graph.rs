//! The knowledge-graph operations (SPEC §4): `extract_entities`,
//! `neighborhood`, `shortest_path`, `relate` (a caller's own triple), the
//! `graph_view` the page draws, and the graph signal recall uses.
//!
//! Every traversal stays inside the caller's visible scope: an atom counts
//! only if recall could see it (same tenant, its scope an ancestor of the
//! caller's, visible, not negated; personal ones hidden from remote
//! callers); an entity exists for the caller only through such atoms.
//! Superseded atoms' triples are invalid from the moment their successor
//! was written and are returned only when asked for.
//!
//! Work is bounded: at most [`MAX_ATOMS_PER_ENTITY`] atoms are read per
//! entity expanded, at most [`MAX_EXPANDED`] entities per query, and results
//! are cut at the caller's limit (`truncated`).

use std::collections::{HashMap, HashSet, VecDeque};

use crate::atom::{Atom, AtomId, Exposure, Kind};
use crate::error::Result;
use crate::graph::index::{CO_OCCURS, EntityId, SuppliedTriple, TenantGraph};
use crate::graph::{EntityType, entities};
use crate::log::backend::Backend;
use crate::memory::Memory;
use crate::ops::Effect;
use crate::ops::memorize::NewAtom;
use crate::scope::Scope;
use crate::time::Timestamp;

pub const DEFAULT_DEPTH: u32 = 1;
pub const MAX_DEPTH: u32 = 4;
pub const MAX_PATH_DEPTH: u32 = 6;
pub const DEFAULT_LIMIT: u32 = 50;
pub const MAX_LIMIT: u32 = 500;
/// Atoms read per entity expanded (the newest first).
pub const MAX_ATOMS_PER_ENTITY: usize = 2_000;
/// Entities expanded per query.
pub const MAX_EXPANDED: usize = 5_000;
const MAX_NAME_BYTES: usize = 256;
const MAX_RELATION_BYTES: usize = 64;

/// One entity as a query answers it.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub name: String,
    pub kind: EntityType,
    /// Visible, current atoms that mention it or state a triple with it.
    pub atom_count: u32,
}

/// One edge between two entities, with the atom that states it.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    pub source: String,
    pub relation: String,
    pub target: String,
    pub atom_id: AtomId,
    pub valid_at: Timestamp,
    /// When the atom was superseded (its successor's creation).
    pub invalid_at: Option<Timestamp>,
}

#[derive(Clone, Debug, Default)]
pub struct GraphScope {
    pub scope: Scope,
    pub remote: bool,
    /// Also triples of superseded atoms (with `invalid_at`).
    pub include_invalid: bool,
}

#[derive(Clone, Debug, Default)]
pub struct NeighborhoodRequest {
    pub entity: String,
    pub depth: Option<u32>,
    pub limit: Option<u32>,
    pub within: GraphScope,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct NeighborhoodResult {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    pub truncated: bool,
    pub reason: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct PathRequest {
    pub from: String,
    pub to: String,
    pub max_depth: Option<u32>,
    pub within: GraphScope,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathResult {
    pub found: bool,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    pub reason: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct RelateRequest {
    pub source: String,
    pub relation: String,
    pub target: String,
    pub source_type: Option<EntityType>,
    pub target_type: Option<EntityType>,
    pub scope: Scope,
    pub by: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RelateResult {
    pub effect: Effect,
    pub atom_id: Option<AtomId>,
    pub reason: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct ViewRequest {
    pub within: GraphScope,
    /// Most atoms (newest first) and entities shown.
    pub limit: Option<u32>,
    pub kinds: Vec<EntityType>,
}

/// An atom that mentions an entity, for the page's Fact → Entity links.
#[derive(Clone, Debug, PartialEq)]
pub struct MentionEdge {
    pub atom_id: AtomId,
    pub entity: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ViewResult {
    pub nodes: Vec<Node>,
    pub mentions: Vec<MentionEdge>,
    pub edges: Vec<Edge>,
    pub truncated: bool,
}

/// The part of recall the graph adds: per atom, the graph signal in [0, 1],
/// and the entities and edges around the query's entities.
#[derive(Debug, Default)]
pub struct GraphEvidence {
    /// Atoms that mention an entity of the query.
    pub direct: HashMap<AtomId, f64>,
    /// Atoms one triple away (they only strengthen other evidence).
    pub hop: HashMap<AtomId, f64>,
    pub query_entities: Vec<EntityId>,
}

/// The entities of a text: `{name, type}` each once, in text order.
pub fn extract_entities(text: &str) -> Vec<(String, EntityType)> {
    entities(text)
        .into_iter()
        .map(|m| (m.name, m.kind))
        .collect()
}

/// Reads one tenant's graph for one caller.
struct View<'a> {
    graph: &'a TenantGraph,
    atoms: &'a std::collections::BTreeMap<AtomId, Atom>,
    within: &'a GraphScope,
}

impl View<'_> {
    /// Whether this caller sees an atom's graph contribution.
    fn sees(&self, id: AtomId) -> bool {
        self.atoms.get(&id).is_some_and(|a| {
            a.exposure == Exposure::Visible
                && !a.negated
                && (self.within.include_invalid || a.superseded_by.is_none())
                && a.scope.visible_from(&self.within.scope, self.within.remote)
        })
    }

    fn current(&self, id: AtomId) -> bool {
        self.atoms
            .get(&id)
            .is_some_and(|a| a.superseded_by.is_none())
    }

    /// Visible atoms of an entity, newest first, at most the budget.
    fn atoms_of(&self, entity: EntityId) -> impl Iterator<Item = AtomId> + '_ {
        self.graph
            .atoms_of(entity)
            .iter()
            .rev()
            .copied()
            .filter(|id| self.sees(*id))
            .take(MAX_ATOMS_PER_ENTITY)
    }

    fn node(&self, entity: EntityId) -> Node {
        let e = self.graph.entity(entity);
        let count = self
            .graph
            .atoms_of(entity)
            .iter()
            .filter(|id| self.sees(**id) && self.current(**id))
            .count();
        Node {
            name: e.name.clone(),
            kind: e.kind,
            atom_count: count as u32,
        }
    }

    /// The entity a caller names, if it exists for this caller.
    fn find(&self, name: &str) -> Option<EntityId> {
        let id = self.graph.find(name)?;
        self.atoms_of(id).next().map(|_| id)
    }

    fn edge(&self, source: EntityId, relation: &str, target: EntityId, atom: AtomId) -> Edge {
        let a = &self.atoms[&atom];
        Edge {
            source: self.graph.entity(source).name.clone(),
            relation: relation.to_owned(),
            target: self.graph.entity(target).name.clone(),
            atom_id: atom,
            valid_at: a.created_at,
            invalid_at: a
                .superseded_by
                .and_then(|next| self.atoms.get(&next))
                .map(|next| next.created_at),
        }
    }

    /// The edges at one entity: the triples of its visible atoms that touch
    /// it, then co-occurrences with the other entities those atoms mention
    /// (where no triple of the same atom already links the pair).
    fn edges_at(&self, entity: EntityId) -> Vec<(EntityId, String, EntityId, AtomId)> {
        let mut out = Vec::new();
        for atom in self.atoms_of(entity) {
            let triples = self.graph.triples_of(atom);
            let mut linked: HashSet<EntityId> = HashSet::new();
            for t in triples
                .iter()
                .filter(|t| t.source == entity || t.target == entity)
            {
                out.push((t.source, t.relation.clone(), t.target, atom));
                linked.insert(if t.source == entity {
                    t.target
                } else {
                    t.source
                });
            }
            for &other in self.graph.mentions_of(atom) {
                if other != entity
                    && self.graph.mentions_of(atom).contains(&entity)
                    && linked.insert(other)
                {
                    let (a, b) = if entity < other {
                        (entity, other)
                    } else {
                        (other, entity)
                    };
                    out.push((a, CO_OCCURS.to_owned(), b, atom));
                }
            }
        }
        out
    }
}

fn clamp(value: Option<u32>, default: u32, max: u32) -> u32 {
    value.unwrap_or(default).clamp(1, max)
}

impl<B: Backend> Memory<B> {
    fn view<'a>(&'a self, within: &'a GraphScope) -> Option<View<'a>> {
        Some(View {
            graph: self.indexes.graph.tenant(&within.scope.tenant_id)?,
            atoms: &self.state.atoms,
            within,
        })
    }

    /// Entities within `depth` hops of `entity`, and the edges between them.
    pub fn neighborhood(&mut self, req: &NeighborhoodRequest) -> Result<NeighborhoodResult> {
        self.refresh()?;
        if let Some(reason) = req
            .within
            .scope
            .problem()
            .or_else(|| name_problem(&req.entity, "entity"))
        {
            return Ok(NeighborhoodResult {
                reason: Some(reason),
                ..NeighborhoodResult::default()
            });
        }
        let depth = clamp(req.depth, DEFAULT_DEPTH, MAX_DEPTH);
        let limit = clamp(req.limit, DEFAULT_LIMIT, MAX_LIMIT) as usize;
        let Some(view) = self.view(&req.within) else {
            return Ok(not_found(&req.entity));
        };
        let Some(start) = view.find(&req.entity) else {
            return Ok(not_found(&req.entity));
        };
        let mut seen: HashSet<EntityId> = HashSet::from([start]);
        let mut order = vec![start];
        let mut edges = Vec::new();
        let mut edge_keys = HashSet::new();
        let mut frontier = vec![start];
        let mut truncated = false;
        let mut expanded = 0;
        'levels: for _ in 0..depth {
            let mut next = Vec::new();
            for entity in frontier {
                expanded += 1;
                if expanded > MAX_EXPANDED {
                    truncated = true;
                    break 'levels;
                }
                for (s, rel, t, atom) in view.edges_at(entity) {
                    if !edge_keys.insert((s, rel.clone(), t, atom)) {
                        continue;
                    }
                    if edges.len() >= limit {
                        truncated = true;
                        break 'levels;
                    }
                    edges.push(view.edge(s, &rel, t, atom));
                    for end in [s, t] {
                        if seen.insert(end) {
                            order.push(end);
                            next.push(end);
                        }
                    }
                }
            }
            frontier = next;
        }
        Ok(NeighborhoodResult {
            nodes: order.into_iter().map(|e| view.node(e)).collect(),
            edges,
            truncated,
            reason: None,
        })
    }

    /// The shortest chain of edges from `from` to `to`, if one exists within
    /// `max_depth` hops inside the caller's scope.
    pub fn shortest_path(&mut self, req: &PathRequest) -> Result<PathResult> {
        self.refresh()?;
        let problem = req
            .within
            .scope
            .problem()
            .or_else(|| name_problem(&req.from, "from"))
            .or_else(|| name_problem(&req.to, "to"));
        if let Some(reason) = problem {
            return Ok(PathResult {
                reason: Some(reason),
                ..PathResult::default()
            });
        }
        let max_depth = clamp(req.max_depth, MAX_DEPTH, MAX_PATH_DEPTH) as usize;
        let missing = |name: &str| PathResult {
            reason: Some(format!("no entity `{name}` in this scope")),
            ..PathResult::default()
        };
        let Some(view) = self.view(&req.within) else {
            return Ok(missing(&req.from));
        };
        let (Some(from), Some(to)) = (view.find(&req.from), view.find(&req.to)) else {
            let name = if view.find(&req.from).is_none() {
                &req.from
            } else {
                &req.to
            };
            return Ok(missing(name));
        };
        // Breadth first; each reached entity remembers the edge it came by.
        let mut came_by: HashMap<EntityId, (EntityId, String, EntityId, AtomId)> = HashMap::new();
        let mut depth_of: HashMap<EntityId, usize> = HashMap::from([(from, 0)]);
        let mut queue = VecDeque::from([from]);
        let mut expanded = 0;
        while let Some(entity) = queue.pop_front() {
            if entity == to {
                break;
            }
            let d = depth_of[&entity];
            expanded += 1;
            if d >= max_depth || expanded > MAX_EXPANDED {
                continue;
            }
            for (s, rel, t, atom) in view.edges_at(entity) {
                let other = if s == entity { t } else { s };
                if let std::collections::hash_map::Entry::Vacant(slot) = depth_of.entry(other) {
                    slot.insert(d + 1);
                    came_by.insert(other, (s, rel, t, atom));
                    queue.push_back(other);
                }
            }
        }
        if !depth_of.contains_key(&to) {
            return Ok(PathResult::default());
        }
        let mut nodes = vec![to];
        let mut edges = Vec::new();
        let mut at = to;
        while at != from {
            let (s, rel, t, atom) = came_by[&at].clone();
            edges.push(view.edge(s, &rel, t, atom));
            at = if s == at { t } else { s };
            nodes.push(at);
        }
        nodes.reverse();
        edges.reverse();
        Ok(PathResult {
            found: true,
            nodes: nodes.into_iter().map(|e| view.node(e)).collect(),
            edges,
            reason: None,
        })
    }

    /// What the page draws: the newest visible atoms, the entities they
    /// mention (filtered by type), and the triples among them.
    pub fn graph_view(&mut self, req: &ViewRequest) -> Result<ViewResult> {
        self.refresh()?;
        let limit = clamp(req.limit, 200, 5_000) as usize;
        let mut out = ViewResult::default();
        if req.within.scope.problem().is_some() {
            return Ok(out);
        }
        let Some(view) = self.view(&req.within) else {
            return Ok(out);
        };
        let wanted =
            |e: EntityId| req.kinds.is_empty() || req.kinds.contains(&view.graph.entity(e).kind);
        let mut shown: Vec<EntityId> = Vec::new();
        let mut atoms_shown = 0;
        for (&id, _) in self.state.atoms.iter().rev() {
            if !view.sees(id) {
                continue;
            }
            if atoms_shown >= limit {
                out.truncated = true;
                break;
            }
            let mentions = view.graph.mentions_of(id);
            let triples = view.graph.triples_of(id);
            if mentions.is_empty() && triples.is_empty() {
                continue;
            }
            atoms_shown += 1;
            for &e in mentions.iter().filter(|e| wanted(**e)) {
                out.mentions.push(MentionEdge {
                    atom_id: id,
                    entity: view.graph.entity(e).name.clone(),
                });
                if !shown.contains(&e) {
                    shown.push(e);
                }
            }
            for t in triples
                .iter()
                .filter(|t| wanted(t.source) && wanted(t.target))
            {
                out.edges
                    .push(view.edge(t.source, &t.relation, t.target, id));
                for e in [t.source, t.target] {
                    if !shown.contains(&e) {
                        shown.push(e);
                    }
                }
            }
        }
        out.nodes = shown.into_iter().map(|e| view.node(e)).collect();
        Ok(out)
    }

    /// Stores a caller's triple: a new `observation` atom stating it (so
    /// that scope, history and erasure work as for any memory), with the
    /// triple attached. Names are redacted like content.
    pub fn relate(&mut self, req: &RelateRequest) -> Result<RelateResult> {
        self.refresh()?;
        let refuse = |reason: String| RelateResult {
            effect: Effect::Rejected,
            atom_id: None,
            reason: Some(reason),
        };
        for (value, what) in [(&req.source, "source"), (&req.target, "target")] {
            if let Some(problem) = name_problem(value, what) {
                return Ok(refuse(problem));
            }
        }
        let relation = req.relation.trim().to_lowercase().replace([' ', '-'], "_");
        if relation.is_empty()
            || relation.len() > MAX_RELATION_BYTES
            || !relation.chars().all(|c| c.is_alphanumeric() || c == '_')
        {
            return Ok(refuse(format!(
                "relation must be 1-{MAX_RELATION_BYTES} letters, digits or underscores"
            )));
        }
        let source = crate::text::redact_noted(req.source.trim()).text;
        let target = crate::text::redact_noted(req.target.trim()).text;
        let content = format!("{source} {relation} {target}");
        let source_label = req.by.clone().unwrap_or_else(|| "graph".into());
        let memorized = self.write_new_atom_with(
            &NewAtom {
                content: &content,
                kind: Kind::Observation,
                source: Some(&source_label),
                scope: &req.scope,
                what: "triple",
            },
            vec![SuppliedTriple {
                source,
                source_type: req.source_type,
                relation,
                target,
                target_type: req.target_type,
            }],
        )?;
        Ok(RelateResult {
            effect: memorized.effect,
            atom_id: memorized.atom_id.or(memorized.deduped_with),
            reason: memorized.reason,
        })
    }

    /// The graph signal of recall: atoms mentioning an entity of the query
    /// under another name than the query's (an alias, the other script)
    /// score `1 / (1 + 0.001·(n−1)²)` (n: visible atoms linked to that
    /// entity, so a hub entity says little); atoms one triple away score half
    /// that, as support for evidence the other signals found.
    pub(crate) fn graph_evidence(&self, query: &str, within: &GraphScope) -> GraphEvidence {
        let mut evidence = GraphEvidence::default();
        let Some(view) = self.view(within) else {
            return evidence;
        };
        let mut seeds = Vec::new();
        let mut surfaces = Vec::new();
        for m in entities(query) {
            if let Some(id) = view.find(&m.name) {
                seeds.push(id);
                surfaces.push(crate::graph::fold::key(&query[m.start..m.end]));
            }
        }
        for (&seed, surface) in seeds.iter().zip(&surfaces) {
            let direct: Vec<AtomId> = view.atoms_of(seed).collect();
            let weight = specificity(direct.len());
            for &atom in &direct {
                // Where the memory says the name as the query does, the
                // keyword signal has seen it already; the graph adds what
                // it cannot see: another alias, script or spelling.
                let said = view.atoms.get(&atom).is_some_and(|a| {
                    crate::graph::fold::key(&a.content).contains(surface.as_str())
                });
                if said {
                    continue;
                }
                let slot = evidence.direct.entry(atom).or_default();
                *slot = slot.max(weight);
            }
            // One hop: entities the seed's triples reach (not mere co-occurrence).
            let mut neighbours: Vec<EntityId> = Vec::new();
            for &atom in direct.iter().take(200) {
                for t in view.graph.triples_of(atom) {
                    let other = if t.source == seed {
                        t.target
                    } else if t.target == seed {
                        t.source
                    } else {
                        continue;
                    };
                    if !seeds.contains(&other) && !neighbours.contains(&other) {
                        neighbours.push(other);
                    }
                }
            }
            for n in neighbours.into_iter().take(20) {
                let atoms: Vec<AtomId> = view.atoms_of(n).take(500).collect();
                let weight = 0.5 * specificity(atoms.len()) * weight;
                for atom in atoms {
                    let slot = evidence.hop.entry(atom).or_default();
                    *slot = slot.max(weight);
                }
            }
        }
        evidence.query_entities = seeds;
        evidence
    }

    /// The entities of the query and the edges at them, for `recall --graph`.
    pub(crate) fn graph_expansion(
        &self,
        seeds: &[EntityId],
        within: &GraphScope,
        limit: usize,
    ) -> (Vec<Node>, Vec<Edge>) {
        let Some(view) = self.view(within) else {
            return (Vec::new(), Vec::new());
        };
        let mut nodes: Vec<EntityId> = seeds.to_vec();
        let mut edges = Vec::new();
        let mut keys = HashSet::new();
        for &seed in seeds {
            for (s, rel, t, atom) in view.edges_at(seed) {
                if edges.len() >= limit {
                    break;
                }
                if keys.insert((s, rel.clone(), t)) {
                    edges.push(view.edge(s, &rel, t, atom));
                    for e in [s, t] {
                        if !nodes.contains(&e) {
                            nodes.push(e);
                        }
                    }
                }
            }
        }
        (nodes.into_iter().map(|e| view.node(e)).collect(), edges)
    }

    /// Entities, mentions and triples in the graph index, every tenant.
    pub fn graph_totals(&self) -> (usize, usize, usize) {
        self.indexes.graph.totals()
    }

    /// The triples an atom states, for `history` (also when superseded).
    pub(crate) fn triples_of(&self, atom: &Atom) -> Vec<Edge> {
        let within = GraphScope {
            scope: atom.scope.clone(),
            remote: false,
            include_invalid: true,
        };
        let Some(view) = self.view(&within) else {
            return Vec::new();
        };
        view.graph
            .triples_of(atom.id)
            .iter()
            .map(|t| view.edge(t.source, &t.relation, t.target, atom.id))
            .collect()
    }
}

/// `1 / (1 + 0.001·(n−1)²)`: mem0's damping of entities linked to many memories.
fn specificity(n: usize) -> f64 {
    let n = n.max(1) as f64;
    1.0 / (1.0 + 0.001 * (n - 1.0).powi(2))
}

fn not_found(name: &str) -> NeighborhoodResult {
    NeighborhoodResult {
        reason: Some(format!("no entity `{}` in this scope", name.trim())),
        ..NeighborhoodResult::default()
    }
}

fn name_problem(name: &str, what: &str) -> Option<String> {
    let name = name.trim();
    if name.is_empty() {
        return Some(format!("{what} is empty"));
    }
    if name.len() > MAX_NAME_BYTES {
        return Some(format!("{what} is longer than {MAX_NAME_BYTES} bytes"));
    }
    None
}
