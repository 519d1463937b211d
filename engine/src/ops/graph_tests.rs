//! The knowledge-graph operations against real stores: extraction at write
//! time, neighbourhood depths, shortest paths, caller-supplied triples,
//! invalidation on replace, hiding on negate, erasure from every file,
//! persistence across reopen and compaction, graph-expanded recall, and
//! scope isolation of every query against a naive oracle.

use proptest::prelude::*;

use super::testing::Harness;
use super::*;
use crate::atom::{CorrectAction, GovernAction};
use crate::graph::EntityType;
use crate::scope::Scope;

fn within(h: &Harness) -> GraphScope {
    GraphScope {
        scope: h.scope.clone(),
        remote: false,
        include_invalid: false,
    }
}

fn neighborhood(h: &mut Harness, entity: &str, depth: u32) -> NeighborhoodResult {
    let req = NeighborhoodRequest {
        entity: entity.into(),
        depth: Some(depth),
        limit: None,
        within: within(h),
    };
    h.memory.neighborhood(&req).unwrap()
}

fn names(r: &NeighborhoodResult) -> Vec<String> {
    let mut n: Vec<String> = r.nodes.iter().map(|n| n.name.clone()).collect();
    n.sort();
    n
}

fn edges(r: &[GraphEdge]) -> Vec<(String, String, String)> {
    r.iter()
        .map(|e| (e.source.clone(), e.relation.clone(), e.target.clone()))
        .collect()
}

fn relate(h: &mut Harness, s: &str, r: &str, t: &str) -> RelateResult {
    let req = RelateRequest {
        source: s.into(),
        relation: r.into(),
        target: t.into(),
        scope: h.scope.clone(),
        ..RelateRequest::default()
    };
    h.memory.relate(&req).unwrap()
}

#[test]
fn extraction_at_write_time_feeds_neighbourhoods_of_every_depth() {
    let mut h = Harness::new();
    h.id("專案用 PostgreSQL 16 做主資料庫，不用 MongoDB");
    h.id("PostgreSQL runs on Kubernetes");
    h.id("Kubernetes depends on etcd");
    h.id("etcd uses Raft");
    let one = neighborhood(&mut h, "postgres", 1);
    assert_eq!(one.reason, None);
    assert_eq!(names(&one), ["Kubernetes", "MongoDB", "PostgreSQL", "mem0"]);
    assert!(edges(&one.edges).contains(&("mem0".into(), "uses".into(), "PostgreSQL".into())));
    assert!(edges(&one.edges).contains(&(
        "PostgreSQL".into(),
        "located_in".into(),
        "Kubernetes".into()
    )));
    let pg = one.nodes.iter().find(|n| n.name == "PostgreSQL").unwrap();
    assert_eq!((pg.kind, pg.atom_count), (EntityType::Technology, 2));
    assert!(names(&neighborhood(&mut h, "PostgreSQL", 2)).contains(&"etcd".to_owned()));
    assert!(!names(&neighborhood(&mut h, "PostgreSQL", 2)).contains(&"Raft".to_owned()));
    assert!(names(&neighborhood(&mut h, "PostgreSQL", 3)).contains(&"Raft".to_owned()));
    assert_eq!(
        names(&neighborhood(&mut h, "PostgreSQL", 4)),
        names(&neighborhood(&mut h, "PostgreSQL", 3))
    );
    // Depth is clamped to 1..=4; unknown entities are a refusal, not an error.
    assert_eq!(
        neighborhood(&mut h, "PostgreSQL", 9),
        neighborhood(&mut h, "PostgreSQL", 4)
    );
    assert!(
        neighborhood(&mut h, "Oracle", 1)
            .reason
            .unwrap()
            .contains("no entity")
    );
    let limited = h
        .memory
        .neighborhood(&NeighborhoodRequest {
            entity: "PostgreSQL".into(),
            depth: Some(4),
            limit: Some(2),
            within: within(&h),
        })
        .unwrap();
    assert!(limited.truncated && limited.edges.len() == 2);
}

#[test]
fn shortest_paths_found_not_found_and_cut_by_scope() {
    let mut h = Harness::new();
    h.id("Grafana depends on Prometheus");
    h.id("Prometheus runs on Kubernetes");
    h.id("Redis is a cache");
    let path = |h: &mut Harness, a: &str, b: &str, scope: &Scope| {
        h.memory
            .shortest_path(&PathRequest {
                from: a.into(),
                to: b.into(),
                max_depth: None,
                within: GraphScope {
                    scope: scope.clone(),
                    ..GraphScope::default()
                },
            })
            .unwrap()
    };
    let scope = h.scope.clone();
    let found = path(&mut h, "grafana", "k8s", &scope);
    assert!(found.found);
    let nodes: Vec<&str> = found.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(nodes, ["Grafana", "Prometheus", "Kubernetes"]);
    assert_eq!(found.edges.len(), 2);
    assert!(!path(&mut h, "Grafana", "Redis", &scope).found);
    // The middle link lives in a sibling branch: the path is cut there.
    let sibling = Scope::new("qiankun", "mem0ai", "mem0", "dev");
    h.memorize_in("Jaeger exports to Kafka", &sibling);
    h.memorize_in("Kafka feeds Grafana", &sibling);
    h.id("Jaeger traces the gateway");
    assert!(!path(&mut h, "Jaeger", "Grafana", &scope).found);
    assert!(path(&mut h, "Jaeger", "Grafana", &sibling).found);
}

#[test]
fn caller_triples_replace_invalidates_negate_hides() {
    let mut h = Harness::new();
    let r = relate(&mut h, "payment-service", "depends_on", "Redis");
    assert_eq!(r.effect, Effect::Applied);
    let stated = r.atom_id.unwrap();
    let n = neighborhood(&mut h, "payment-service", 1);
    assert_eq!(
        edges(&n.edges),
        [(
            "payment-service".into(),
            "depends_on".into(),
            "Redis".into()
        )]
    );
    assert_eq!(n.edges[0].atom_id, stated);
    // The same triple again is the same memory.
    assert_eq!(
        relate(&mut h, "payment-service", "depends_on", "Redis").effect,
        Effect::NoOp
    );
    assert_eq!(relate(&mut h, " ", "uses", "x").effect, Effect::Rejected);
    assert_eq!(
        relate(&mut h, "a", "no spaces please!", "b").effect,
        Effect::Rejected
    );

    let old = h.id("The gateway uses Redis");
    h.advance_days(1.0);
    let new = h
        .correct(old, CorrectAction::Replace, Some("The gateway uses Valkey"))
        .new_atom_id
        .unwrap();
    let n = neighborhood(&mut h, "Redis", 1);
    assert!(
        !n.edges.iter().any(|e| e.atom_id == old),
        "replaced: not current"
    );
    let with_old = h
        .memory
        .neighborhood(&NeighborhoodRequest {
            entity: "Redis".into(),
            depth: Some(1),
            limit: None,
            within: GraphScope {
                include_invalid: true,
                ..within(&h)
            },
        })
        .unwrap();
    let invalid = with_old.edges.iter().find(|e| e.atom_id == old).unwrap();
    let new_atom = h.memory.state().atom(new).unwrap().created_at;
    assert_eq!(invalid.invalid_at, Some(new_atom));
    // history shows the old triple with the time it stopped holding.
    let hist = h.history(old);
    assert_eq!(hist.triples[0].invalid_at, Some(new_atom));
    assert_eq!(h.history(new).triples[0].target, "Valkey");

    h.correct(stated, CorrectAction::Negate, None);
    let n = neighborhood(&mut h, "payment-service", 1);
    assert!(
        n.reason.is_some(),
        "negated: its entity is gone for the caller"
    );
}

#[test]
fn destroyed_content_takes_its_entities_and_triples_out_of_every_file() {
    let mut h = Harness::new();
    h.id("Project Nightjar runs on Kubernetes");
    let secret = h.id("Codename Bluefalcon depends on Vault");
    let supplied = relate(&mut h, "Bluefalcon", "owned_by", "Zephyrine Q")
        .atom_id
        .unwrap();
    // Compaction writes the supplied triple into a snapshot frame first.
    h.memory.compact().unwrap();
    assert!(h.files_contain("Zephyrine"));
    h.govern(secret, GovernAction::Seal, None);
    h.govern(supplied, GovernAction::Tombstone, None);
    for gone in ["Bluefalcon", "Zephyrine"] {
        assert!(!h.files_contain(gone), "{gone} is still on disk");
    }
    assert!(neighborhood(&mut h, "Bluefalcon", 1).reason.is_some());
    let view = h
        .memory
        .graph_view(&ViewRequest {
            within: within(&h),
            ..ViewRequest::default()
        })
        .unwrap();
    assert!(!view.nodes.iter().any(|n| n.name.contains("Bluefalcon")));
    assert!(view.nodes.iter().any(|n| n.name == "Kubernetes"));
}

#[test]
fn graph_survives_reopen_and_compaction() {
    let mut h = Harness::new();
    h.id("Grafana depends on Prometheus");
    relate(&mut h, "Prometheus", "scrapes", "node-exporter");
    let before = neighborhood(&mut h, "Prometheus", 2);
    h.memory.compact().unwrap();
    h.reopen(None);
    assert_eq!(neighborhood(&mut h, "Prometheus", 2), before);
    let export = h.memory.export(&crate::scope::Filter::WholeStore).unwrap();
    assert!(export.contains(r#""type":"triple""#), "{export}");
    let mut other = Harness::new();
    let r = other.memory.import(&export).unwrap();
    assert_eq!((r.triples_added, r.reason), (1, None));
    assert_eq!(neighborhood(&mut other, "Prometheus", 2), before);
}

#[test]
fn recall_finds_aliases_and_returns_the_expansion() {
    let mut h = Harness::new();
    let k8s = h.id("我們的服務都部署在 Kubernetes 上");
    h.id("前端用 React 18");
    let req = RecallRequest {
        query: "k8s".into(),
        scope: h.scope.clone(),
        explain: true,
        include_graph: true,
        ..RecallRequest::default()
    };
    let r = h.memory.recall(&req).unwrap();
    assert_eq!(r.atoms.first().map(|a| a.atom_id), Some(k8s), "{r:?}");
    let graph = r.atoms[0]
        .explain
        .iter()
        .find(|s| s.name == "graph")
        .unwrap();
    assert!(graph.value > 0.9 && graph.contribution > 0.0);
    let (nodes, edges) = r.graph.unwrap();
    assert_eq!(nodes[0].name, "Kubernetes");
    assert!(
        edges
            .iter()
            .any(|e| e.target == "Kubernetes" && e.relation == "located_in")
    );
    // Without the signal the alias finds nothing.
    h.memory.config.signals.graph = false;
    assert!(h.recall_ids("k8s").is_empty());
}

#[test]
fn remote_callers_never_reach_personal_entities() {
    let mut h = Harness::new();
    h.memorize_in("I keep my notes in Obsidian", &Scope::personal("qiankun"));
    h.id("The team wiki is on Confluence");
    let mut remote = within(&h);
    remote.remote = true;
    let view = h
        .memory
        .graph_view(&ViewRequest {
            within: remote.clone(),
            ..ViewRequest::default()
        })
        .unwrap();
    let names: Vec<&str> = view.nodes.iter().map(|n| n.name.as_str()).collect();
    assert!(
        names.contains(&"Confluence") && !names.contains(&"Obsidian"),
        "{names:?}"
    );
    let r = h
        .memory
        .neighborhood(&NeighborhoodRequest {
            entity: "Obsidian".into(),
            within: remote,
            ..NeighborhoodRequest::default()
        })
        .unwrap();
    assert!(r.reason.is_some());
}

/// Scopes the oracle test draws from: two tenants, two repositories, two
/// branches, personal and organisation levels.
fn scopes() -> Vec<Scope> {
    vec![
        Scope::personal("ann"),
        Scope {
            tenant_id: "ann".into(),
            workspace: Some("acme".into()),
            ..Scope::default()
        },
        Scope::new("ann", "acme", "shop", "main"),
        Scope::new("ann", "acme", "shop", "dev"),
        Scope::new("ann", "acme", "blog", "main"),
        Scope::new("bob", "acme", "shop", "main"),
        Scope::personal("bob"),
    ]
}

const FACTS: &[&str] = &[
    "PostgreSQL runs on Kubernetes",
    "Grafana depends on Prometheus",
    "Prometheus runs on Kubernetes",
    "Redis depends on Kubernetes",
    "Kafka feeds Grafana",
    "The gateway uses Redis and PostgreSQL",
    "Vault depends on etcd",
    "etcd runs on Kubernetes",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Every node and edge a caller gets comes from an atom that caller may
    /// see (the naive oracle: scope visibility of the edge's atom, checked
    /// one by one), whatever was written where.
    #[test]
    fn every_graph_query_stays_inside_the_callers_scope(
        writes in prop::collection::vec((0usize..7, 0usize..FACTS.len()), 1..20),
        viewer in 0usize..7,
        remote in any::<bool>(),
        entity in 0usize..FACTS.len(),
        depth in 1u32..5,
    ) {
        let mut h = Harness::new();
        let all = scopes();
        for (s, f) in &writes {
            h.memorize_in(FACTS[*f], &all[*s]);
        }
        let viewer = all[viewer].clone();
        let within = GraphScope { scope: viewer.clone(), remote, include_invalid: false };
        let visible = |h: &Harness, id: crate::atom::AtomId| {
            h.memory.state().atom(id).is_some_and(|a| a.scope.visible_from(&viewer, remote))
        };
        let name = crate::graph::entities(FACTS[entity])[0].name.clone();
        let n = h.memory.neighborhood(&NeighborhoodRequest {
            entity: name.clone(),
            depth: Some(depth),
            limit: Some(500),
            within: within.clone(),
        }).unwrap();
        for e in &n.edges {
            prop_assert!(visible(&h, e.atom_id), "edge from an invisible atom: {e:?}");
        }
        // An entity is returned only if a visible atom names it.
        let seen_atoms: Vec<String> = h.memory.state().atoms.values()
            .filter(|a| a.scope.visible_from(&viewer, remote))
            .map(|a| a.content.clone())
            .collect();
        for node in &n.nodes {
            let named = seen_atoms.iter().any(|c| {
                crate::graph::entities(c).iter().any(|m| m.name == node.name)
                    || c.contains(&node.name)
                    || node.name == viewer.tenant_id
                    || Some(&node.name) == viewer.repository.as_ref()
                    || Some(&node.name) == viewer.workspace.as_ref()
            });
            prop_assert!(named, "{} is not named by anything {viewer:?} sees", node.name);
        }
        let view = h.memory.graph_view(&ViewRequest { within: within.clone(), limit: Some(1000), kinds: vec![] }).unwrap();
        for m in &view.mentions {
            prop_assert!(visible(&h, m.atom_id));
        }
        for e in &view.edges {
            prop_assert!(visible(&h, e.atom_id));
        }
        let p = h.memory.shortest_path(&PathRequest {
            from: name,
            to: "Kubernetes".into(),
            max_depth: Some(6),
            within,
        }).unwrap();
        for e in &p.edges {
            prop_assert!(visible(&h, e.atom_id));
        }
        let r = h.memory.recall(&RecallRequest {
            query: FACTS[entity].into(),
            scope: viewer.clone(),
            remote,
            include_graph: true,
            ..RecallRequest::default()
        }).unwrap();
        for a in &r.atoms {
            prop_assert!(visible(&h, a.atom_id));
        }
        for e in &r.graph.unwrap().1 {
            prop_assert!(visible(&h, e.atom_id));
        }
    }
}
