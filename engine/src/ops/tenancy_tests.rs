//! No path across tenants: random multi-tenant stores, then crafted and
//! mutated import lines, then every scoped read — checked against a naive
//! oracle (each returned atom's own scope, looked up one by one).

use proptest::prelude::*;
use serde_json::{Value, json};

use super::testing::Harness;
use super::*;
use crate::atom::{AtomId, CorrectAction};
use crate::scope::{Filter, Scope};

fn scopes() -> Vec<Scope> {
    vec![
        Scope::personal("ann"),
        Scope::new("ann", "acme", "shop", "main"),
        Scope::new("ann", "acme", "shop", "dev"),
        Scope::new("bob", "acme", "shop", "main"),
        Scope::personal("bob"),
        Scope::new("eve", "evil", "loot", "main"),
    ]
}

const FACTS: &[&str] = &[
    "PostgreSQL runs on Kubernetes",
    "Grafana depends on Prometheus",
    "the deploy password rotates every 90 days",
    "Redis caches sessions for the gateway",
    "Kafka feeds Grafana dashboards",
    "Vault depends on etcd",
];

fn scope_json(s: &Scope) -> Value {
    json!({
        "tenant_id": s.tenant_id,
        "workspace": s.workspace,
        "repository": s.repository,
        "branch": s.branch,
        "session": s.session,
    })
}

/// A fresh id for a crafted line (never one the harness made).
fn fresh(n: usize) -> AtomId {
    AtomId(0x0190_0000_0000_0000_0000_0000_0000_0000 + n as u128)
}

/// A reference a crafted line makes: to any atom there is (stored, of any
/// tenant, or the file's own), or — so that imports are often accepted and
/// the reads below have something to read — to one of the same tenant as
/// the line's first atom.
#[derive(Clone, Copy, Debug)]
struct Ref {
    index: usize,
    same_tenant: bool,
}

fn reference() -> impl Strategy<Value = Ref> {
    (0usize..64, prop::bool::weighted(0.7))
        .prop_map(|(index, same_tenant)| Ref { index, same_tenant })
}

/// One crafted import line.
#[derive(Clone, Debug)]
enum Craft {
    /// A new atom in `scope`, superseded by `next` if given.
    Atom {
        scope: usize,
        fact: usize,
        next: Option<Ref>,
    },
    Edge {
        from: Ref,
        to: Ref,
        lesson: bool,
    },
    /// A correction event on `on` naming `new`.
    Event {
        on: Ref,
        new: Option<Ref>,
    },
    Triple {
        on: Ref,
    },
}

fn craft() -> impl Strategy<Value = Craft> {
    prop_oneof![
        (
            0usize..6,
            0usize..FACTS.len(),
            prop::option::of(reference())
        )
            .prop_map(|(scope, fact, next)| Craft::Atom { scope, fact, next }),
        (reference(), reference(), any::<bool>()).prop_map(|(from, to, lesson)| Craft::Edge {
            from,
            to,
            lesson
        }),
        (reference(), prop::option::of(reference())).prop_map(|(on, new)| Craft::Event { on, new }),
        reference().prop_map(|on| Craft::Triple { on }),
    ]
}

/// `stored`: the store's atoms with their tenants.
fn lines(crafts: &[Craft], stored: &[(AtomId, String)]) -> Vec<String> {
    let all = scopes();
    // The file's own atoms come after the stored ones.
    let mut ids: Vec<(AtomId, String)> = stored.to_vec();
    for (n, c) in crafts.iter().enumerate() {
        if let Craft::Atom { scope, .. } = c {
            ids.push((fresh(n), all[*scope].tenant_id.clone()));
        }
    }
    let anchor = ids[0].1.clone();
    let pick = |r: Ref, tenant: &str| {
        let pool: Vec<&(AtomId, String)> = ids
            .iter()
            .filter(|(_, t)| !r.same_tenant || t == tenant)
            .collect();
        let pool = if pool.is_empty() {
            ids.iter().collect()
        } else {
            pool
        };
        pool[r.index % pool.len()].0.to_string()
    };
    let at = "2026-07-25T14:00:00Z";
    crafts
        .iter()
        .enumerate()
        .map(|(n, c)| {
            let line = match c {
                Craft::Atom { scope, fact, next } => json!({
                    "type": "atom",
                    "atom_id": fresh(n).to_string(),
                    "content": format!("imported: {}", FACTS[*fact]),
                    "kind": "memory",
                    "source": "import",
                    "scope": scope_json(&all[*scope]),
                    "epistemic": "actual",
                    "polarity": "affirmative",
                    "exposure_state": "visible",
                    "negated": false,
                    "superseded_by": next.map(|r| pick(r, &all[*scope].tenant_id)),
                    "created_at": at,
                    "updated_at": at,
                }),
                Craft::Edge { from, to, lesson } => json!({
                    "type": "edge",
                    "from": pick(*from, &anchor),
                    "to": pick(*to, &anchor),
                    "kind": if *lesson { "derived_lesson_from" } else { "supersedes" },
                }),
                Craft::Event { on, new } => json!({
                    "type": "event",
                    "event_id": fresh(1000 + n).to_string(),
                    "atom_id": pick(*on, &anchor),
                    "at": at,
                    "by": "mallory",
                    "reason": "crafted",
                    "change": "correction",
                    "action": "replace",
                    "detail": "crafted",
                    "new_atom_id": new.map(|r| pick(r, &anchor)),
                    "from": null,
                    "to": null,
                }),
                Craft::Triple { on } => json!({
                    "type": "triple",
                    "atom_id": pick(*on, &anchor),
                    "source": "Mallory",
                    "relation": "uses",
                    "target": "Grafana",
                }),
            };
            line.to_string()
        })
        .collect()
}

/// The oracle: which tenant an atom id belongs to, from the state itself.
fn tenant_of(h: &Harness, id: AtomId) -> Option<String> {
    h.memory.state().atom(id).map(|a| a.scope.tenant_id.clone())
}

fn visible(h: &Harness, id: AtomId, viewer: &Scope) -> bool {
    h.memory
        .state()
        .atom(id)
        .is_some_and(|a| a.scope.visible_from(viewer, false))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_read_reaches_outside_the_callers_scope_after_any_import(
        writes in prop::collection::vec((0usize..6, 0usize..FACTS.len()), 1..12),
        replaces in prop::collection::vec((0usize..12, 0usize..FACTS.len()), 0..4),
        crafts in prop::collection::vec(craft(), 1..8),
        // A byte of one line changed (a quarter of the cases), to reach the
        // parser's edges.
        mutate in (0usize..32, 0usize..400, any::<u8>()),
        with_header in any::<bool>(),
    ) {
        let all = scopes();
        let mut h = Harness::new();
        let mut stored = Vec::new();
        for (s, f) in &writes {
            if let Some(id) = h.memorize_in(&format!("{} ({s})", FACTS[*f]), &all[*s]).atom_id {
                stored.push(id);
            }
        }
        for (i, f) in &replaces {
            let id = stored[i % stored.len()];
            let owner = h.memory.state().atom(id).unwrap().scope.clone();
            let req = CorrectRequest {
                target_atom: id.to_string(),
                action: CorrectAction::Replace,
                reason: "newer".into(),
                new_content: Some(format!("now: {}", FACTS[*f])),
                scope: owner,
                by: None,
            };
            if let Some(new) = h.memory.correct(&req).unwrap().new_atom_id {
                stored.push(new);
            }
        }
        let owners: Vec<(AtomId, String)> = stored.iter().map(|id| (*id, tenant_of(&h, *id).unwrap())).collect();
        let mut file = lines(&crafts, &owners);
        let (which, at, byte) = mutate;
        if which < 8 {
            let line = &mut file[which % crafts.len()];
            let mut bytes = line.clone().into_bytes();
            let at = at % bytes.len();
            bytes[at] = byte;
            *line = String::from_utf8_lossy(&bytes).into_owned();
        }
        if with_header {
            file.insert(0, r#"{"type":"header","format":"hmg-export","version":1,"snapshot_version":0}"#.into());
        }
        let result = h.memory.import(&file.join("\n")).unwrap();
        if result.reason.is_some() {
            prop_assert_eq!(result.atoms_added + result.edges_added + result.events_added + result.triples_added, 0);
        }

        // Whatever was accepted: no stored reference crosses tenants.
        let state = h.memory.state();
        for atom in state.atoms.values() {
            if let Some(next) = atom.superseded_by {
                prop_assert_eq!(tenant_of(&h, next), Some(atom.scope.tenant_id.clone()));
            }
        }
        for edge in &state.edges {
            prop_assert_eq!(tenant_of(&h, edge.from), tenant_of(&h, edge.to), "edge {:?}", edge);
        }

        for viewer in &all {
            // recall, with the graph
            for query in ["Grafana", "Kubernetes password", "imported Redis", "Mallory uses Grafana"] {
                let r = h.memory.recall(&RecallRequest {
                    query: query.into(),
                    scope: viewer.clone(),
                    include_graph: true,
                    ..Default::default()
                }).unwrap();
                for a in &r.atoms {
                    prop_assert!(visible(&h, a.atom_id, viewer), "recall as {viewer:?} returned {a:?}");
                    let stored = h.memory.state().atom(a.atom_id).unwrap().shown_content();
                    prop_assert_eq!(&a.content, &stored);
                }
                if let Some((_, edges)) = &r.graph {
                    for e in edges {
                        prop_assert!(visible(&h, e.atom_id, viewer), "graph edge {e:?}");
                    }
                }
            }
            // history of every atom there is
            let ids: Vec<AtomId> = h.memory.state().atoms.keys().copied().collect();
            for id in ids {
                let r = h.memory.history(&HistoryRequest {
                    atom_id: id.to_string(),
                    scope: viewer.clone(),
                    remote: false,
                }).unwrap();
                match &r.current {
                    None => prop_assert!(r.reason.is_some()),
                    Some(current) => {
                        prop_assert!(visible(&h, current.atom_id, viewer));
                        let mine = Some(viewer.tenant_id.clone());
                        let named = r.relations.supersedes.iter()
                            .chain(&r.relations.superseded_by)
                            .chain(&r.relations.related_lessons)
                            .copied()
                            .chain(r.corrections.iter().filter_map(|c| c.new_atom_id))
                            .chain(current.superseded_by);
                        for other in named {
                            prop_assert_eq!(tenant_of(&h, other), mine.clone(), "history names {}", other);
                        }
                        for t in &r.triples {
                            prop_assert!(visible(&h, t.atom_id, viewer));
                        }
                    }
                }
            }
            // the graph
            let within = GraphScope { scope: viewer.clone(), remote: false, include_invalid: true };
            for entity in ["Grafana", "Kubernetes", "Mallory", "Redis"] {
                let n = h.memory.neighborhood(&NeighborhoodRequest {
                    entity: entity.into(),
                    depth: Some(3),
                    limit: Some(500),
                    within: within.clone(),
                }).unwrap();
                for e in &n.edges {
                    prop_assert!(visible(&h, e.atom_id, viewer), "neighbourhood edge {e:?}");
                }
            }
            let view = h.memory.graph_view(&ViewRequest { within: within.clone(), limit: Some(1000), kinds: vec![] }).unwrap();
            for m in &view.mentions {
                prop_assert!(visible(&h, m.atom_id, viewer));
            }
            for e in &view.edges {
                prop_assert!(visible(&h, e.atom_id, viewer));
            }
            // stats and export cover what the viewer sees, and no more
            let seen = h.memory.state().atoms.values().filter(|a| a.scope.visible_from(viewer, false)).count();
            let stats = h.memory.stats(&Filter::VisibleFrom(viewer.clone())).unwrap();
            prop_assert_eq!(stats.atoms as usize, seen);
            let export = h.memory.export(&Filter::VisibleFrom(viewer.clone())).unwrap();
            for line in export.lines() {
                let v: Value = serde_json::from_str(line).unwrap();
                if let Some(id) = v.get("atom_id").and_then(Value::as_str) {
                    prop_assert!(visible(&h, id.parse().unwrap(), viewer), "export line {line}");
                }
            }
        }
    }
}
