//! export / import as JSON Lines: a header line, then atoms, edges, events
//! and the triples callers supplied. Destroyed content is never exported
//! (it no longer exists); extracted entities and triples are not exported
//! either — they are derived again from the content on import.
//! Import is all-or-nothing and idempotent: known atom, edge and event ids
//! are skipped, so importing the same file twice changes nothing. Every
//! reference (supersedes, lessons, events, triples, an atom's
//! `superseded_by`) must name an atom of the same tenant, in the store or in
//! the file, or nothing is imported: no line can reach into another tenant.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::atom::{Atom, AtomId, Change, CorrectAction, Edge, EdgeKind, Event, Exposure};
use crate::error::{Error, Result};
use crate::graph::EntityType;
use crate::graph::index::SuppliedTriple;
use crate::log::backend::Backend;
use crate::memory::Memory;
use crate::scope::{Filter, Scope};
use crate::state::Mutation;
use crate::text::admit;
use crate::time::Timestamp;

pub const EXPORT_FORMAT: &str = "hmg-export";
pub const EXPORT_VERSION: u32 = 1;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportResult {
    pub atoms_added: u64,
    pub atoms_skipped: u64,
    pub edges_added: u64,
    pub events_added: u64,
    pub triples_added: u64,
    pub rejected_lines: u64,
    pub reason: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Line {
    Header {
        format: String,
        version: u32,
        snapshot_version: u64,
    },
    Atom(AtomLine),
    Edge {
        from: String,
        to: String,
        kind: String,
    },
    Event(EventLine),
    Triple(TripleLine),
}

#[derive(Serialize, Deserialize)]
struct TripleLine {
    atom_id: String,
    source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source_type: Option<String>,
    relation: String,
    target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    target_type: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct AtomLine {
    atom_id: String,
    content: Option<String>,
    kind: String,
    source: String,
    scope: ScopeLine,
    epistemic: String,
    polarity: String,
    exposure_state: String,
    negated: bool,
    superseded_by: Option<String>,
    created_at: String,
    updated_at: String,
}

#[derive(Serialize, Deserialize)]
struct ScopeLine {
    tenant_id: String,
    workspace: Option<String>,
    repository: Option<String>,
    branch: Option<String>,
    session: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct EventLine {
    event_id: String,
    atom_id: String,
    at: String,
    by: String,
    reason: String,
    /// `correction` or `exposure`.
    change: String,
    action: Option<String>,
    detail: Option<String>,
    new_atom_id: Option<String>,
    from: Option<String>,
    to: Option<String>,
}

fn atom_line(atom: &Atom) -> AtomLine {
    let s = &atom.scope;
    AtomLine {
        atom_id: atom.id.to_string(),
        content: (!atom.exposure.destroyed()).then(|| atom.content.clone()),
        kind: atom.kind.to_string(),
        source: atom.source.clone(),
        scope: ScopeLine {
            tenant_id: s.tenant_id.clone(),
            workspace: s.workspace.clone(),
            repository: s.repository.clone(),
            branch: s.branch.clone(),
            session: s.session.clone(),
        },
        epistemic: atom.epistemic.to_string(),
        polarity: atom.polarity.to_string(),
        exposure_state: atom.exposure.to_string(),
        negated: atom.negated,
        superseded_by: atom.superseded_by.map(|id| id.to_string()),
        created_at: atom.created_at.rfc3339(),
        updated_at: atom.updated_at.rfc3339(),
    }
}

fn event_line(event: &Event) -> EventLine {
    let mut line = EventLine {
        event_id: event.id.to_string(),
        atom_id: event.atom.to_string(),
        at: event.at.rfc3339(),
        by: event.by.clone(),
        reason: event.reason.clone(),
        change: String::new(),
        action: None,
        detail: None,
        new_atom_id: None,
        from: None,
        to: None,
    };
    match &event.change {
        Change::Correction {
            action,
            detail,
            new_atom,
        } => {
            line.change = "correction".into();
            line.action = Some(action.to_string());
            line.detail = Some(detail.clone());
            line.new_atom_id = new_atom.map(|id| id.to_string());
        }
        Change::Exposure { from, to } => {
            line.change = "exposure".into();
            line.from = Some(from.to_string());
            line.to = Some(to.to_string());
        }
    }
    line
}

fn json(line: &Line) -> Result<String> {
    serde_json::to_string(line)
        .map_err(|e| Error::Internal(format!("cannot encode export line: {e}")))
}

fn time(text: &str) -> std::result::Result<Timestamp, String> {
    Timestamp::parse_rfc3339(text).ok_or_else(|| format!("'{text}' is not an RFC 3339 time"))
}

fn opt_id(text: Option<&String>) -> std::result::Result<Option<AtomId>, String> {
    text.map(|t| t.parse()).transpose()
}

impl AtomLine {
    fn into_atom(self, max_bytes: usize) -> std::result::Result<Atom, String> {
        let exposure: Exposure = self.exposure_state.parse()?;
        let scope = Scope {
            tenant_id: self.scope.tenant_id,
            workspace: self.scope.workspace,
            repository: self.scope.repository,
            branch: self.scope.branch,
            session: self.scope.session,
        };
        if let Some(problem) = scope.problem() {
            return Err(problem);
        }
        let content = if exposure.destroyed() {
            String::new()
        } else {
            admit(self.content.as_deref().unwrap_or(""), max_bytes, "content")?
        };
        Ok(Atom {
            id: self.atom_id.parse()?,
            content,
            kind: self.kind.parse()?,
            source: if exposure == Exposure::Tombstoned {
                String::new()
            } else {
                self.source
            },
            scope,
            epistemic: self.epistemic.parse()?,
            polarity: self.polarity.parse()?,
            exposure,
            negated: self.negated,
            superseded_by: opt_id(self.superseded_by.as_ref())?,
            created_at: time(&self.created_at)?,
            updated_at: time(&self.updated_at)?,
        })
    }
}

impl EventLine {
    fn into_event(self) -> std::result::Result<Event, String> {
        let change = match self.change.as_str() {
            "correction" => Change::Correction {
                action: self
                    .action
                    .as_deref()
                    .unwrap_or("")
                    .parse::<CorrectAction>()?,
                detail: self.detail.unwrap_or_default(),
                new_atom: opt_id(self.new_atom_id.as_ref())?,
            },
            "exposure" => Change::Exposure {
                from: self.from.as_deref().unwrap_or("").parse()?,
                to: self.to.as_deref().unwrap_or("").parse()?,
            },
            other => return Err(format!("unknown event change '{other}'")),
        };
        Ok(Event {
            id: self.event_id.parse()?,
            atom: self.atom_id.parse()?,
            at: time(&self.at)?,
            by: self.by,
            reason: self.reason,
            change,
        })
    }
}

impl TripleLine {
    fn into_triple(self) -> std::result::Result<(AtomId, SuppliedTriple), String> {
        let kind = |t: Option<String>| -> std::result::Result<Option<EntityType>, String> {
            t.map(|t| EntityType::parse(&t).ok_or_else(|| format!("unknown entity type '{t}'")))
                .transpose()
        };
        for (name, what) in [
            (&self.source, "source"),
            (&self.target, "target"),
            (&self.relation, "relation"),
        ] {
            if name.trim().is_empty() || name.len() > 256 {
                return Err(format!("triple {what} must be 1-256 bytes"));
            }
        }
        Ok((
            self.atom_id.parse()?,
            SuppliedTriple {
                source: self.source,
                source_type: kind(self.source_type)?,
                relation: self.relation,
                target: self.target,
                target_type: kind(self.target_type)?,
            },
        ))
    }
}

impl<B: Backend> Memory<B> {
    /// What `filter` covers, as JSON Lines.
    pub fn export(&mut self, filter: &Filter) -> Result<String> {
        self.refresh()?;
        let state = &self.state;
        let included = |id: &AtomId| state.atom(*id).is_some_and(|a| filter.covers(&a.scope));
        let mut lines = vec![json(&Line::Header {
            format: EXPORT_FORMAT.into(),
            version: EXPORT_VERSION,
            snapshot_version: state.version,
        })?];
        for atom in state.atoms.values().filter(|a| included(&a.id)) {
            lines.push(json(&Line::Atom(atom_line(atom)))?);
        }
        for edge in state
            .edges
            .iter()
            .filter(|e| included(&e.from) && included(&e.to))
        {
            lines.push(json(&Line::Edge {
                from: edge.from.to_string(),
                to: edge.to.to_string(),
                kind: edge.kind.to_string(),
            })?);
        }
        for event in state.events.iter().filter(|e| included(&e.atom)) {
            lines.push(json(&Line::Event(event_line(event)))?);
        }
        for (atom, triples) in state.supplied.triples.iter().filter(|(id, _)| included(id)) {
            for t in triples {
                lines.push(json(&Line::Triple(TripleLine {
                    atom_id: atom.to_string(),
                    source: t.source.clone(),
                    source_type: t.source_type.map(|k| k.as_str().to_owned()),
                    relation: t.relation.clone(),
                    target: t.target.clone(),
                    target_type: t.target_type.map(|k| k.as_str().to_owned()),
                }))?);
            }
        }
        let mut out = lines.join("\n");
        out.push('\n');
        Ok(out)
    }

    pub fn import(&mut self, jsonl: &str) -> Result<ImportResult> {
        self.refresh()?;
        let mut result = ImportResult::default();
        match self.plan_import(jsonl, &mut result) {
            Ok(mutations) if !mutations.is_empty() => self.write(mutations, false)?,
            Ok(_) => {}
            Err(reason) => {
                return Ok(ImportResult {
                    rejected_lines: result.rejected_lines.max(1),
                    reason: Some(reason),
                    ..ImportResult::default()
                });
            }
        }
        Ok(result)
    }

    fn plan_import(
        &self,
        jsonl: &str,
        result: &mut ImportResult,
    ) -> std::result::Result<Vec<Mutation>, String> {
        let max = self.config.max_content_bytes;
        let mut atoms = Vec::new();
        let mut edges: Vec<Edge> = Vec::new();
        let mut events = Vec::new();
        let mut triples: Vec<(AtomId, SuppliedTriple)> = Vec::new();
        let mut first_error = None;
        for (n, raw) in jsonl
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let parsed = serde_json::from_str::<Line>(raw)
                .map_err(|e| e.to_string())
                .and_then(|line| match line {
                    Line::Header {
                        format, version, ..
                    } if format != EXPORT_FORMAT || version != EXPORT_VERSION => {
                        Err(format!("unsupported export {format} v{version}"))
                    }
                    Line::Header { .. } => Ok(()),
                    Line::Atom(a) => a.into_atom(max).map(|a| atoms.push(a)),
                    Line::Edge { from, to, kind } => {
                        let edge = Edge {
                            from: from.parse()?,
                            to: to.parse()?,
                            kind: kind.parse::<EdgeKind>()?,
                        };
                        edges.push(edge);
                        Ok(())
                    }
                    Line::Event(e) => e.into_event().map(|e| events.push(e)),
                    Line::Triple(t) => t.into_triple().map(|t| triples.push(t)),
                });
            if let Err(e) = parsed {
                result.rejected_lines += 1;
                first_error.get_or_insert(format!("line {}: {e}", n + 1));
            }
        }
        if let Some(reason) = first_error {
            return Err(format!("nothing imported; {reason}"));
        }
        let mut mutations = Vec::new();
        // Every atom the import can refer to, with its tenant: the store's,
        // then the file's (a file's atom never overrides a stored one).
        let mut tenant_of: HashMap<AtomId, String> = self
            .state
            .atoms
            .values()
            .map(|a| (a.id, a.scope.tenant_id.clone()))
            .collect();
        let mut new_atoms = Vec::new();
        for atom in atoms {
            match tenant_of.entry(atom.id) {
                std::collections::hash_map::Entry::Occupied(_) => result.atoms_skipped += 1,
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(atom.scope.tenant_id.clone());
                    new_atoms.push(atom);
                }
            }
        }
        let same_tenant =
            |a: AtomId, b: AtomId, what: &str| match (tenant_of.get(&a), tenant_of.get(&b)) {
                (Some(x), Some(y)) if x == y => Ok(()),
                (Some(_), Some(_)) => Err(format!(
                    "nothing imported; {what} {a} -> {b} crosses tenants"
                )),
                _ => Err(format!(
                    "nothing imported; {what} {a} -> {b} names an unknown atom"
                )),
            };
        for atom in &new_atoms {
            if let Some(next) = atom.superseded_by {
                same_tenant(atom.id, next, "superseded_by")?;
            }
        }
        for atom in new_atoms {
            result.atoms_added += 1;
            mutations.push(Mutation::PutAtom(atom));
        }
        let known: HashSet<AtomId> = tenant_of.keys().copied().collect();
        let mut have_edges: HashSet<Edge> = self.state.edges.iter().copied().collect();
        for edge in edges {
            same_tenant(edge.from, edge.to, "edge")?;
            if have_edges.insert(edge) {
                result.edges_added += 1;
                mutations.push(Mutation::AddEdge(edge));
            }
        }
        let mut have_events: HashSet<AtomId> = self.state.events.iter().map(|e| e.id).collect();
        for event in events {
            if !known.contains(&event.atom) {
                return Err(format!(
                    "nothing imported; event {} names an unknown atom {}",
                    event.id, event.atom
                ));
            }
            if let Change::Correction {
                new_atom: Some(other),
                ..
            } = &event.change
            {
                same_tenant(event.atom, *other, "event")?;
            }
            if have_events.insert(event.id) {
                result.events_added += 1;
                mutations.push(Mutation::Record(event));
            }
        }
        for (atom, triple) in triples {
            if !known.contains(&atom) {
                return Err(format!(
                    "nothing imported; a triple names an unknown atom {atom}"
                ));
            }
            let stored = self
                .state
                .supplied
                .triples
                .get(&atom)
                .is_some_and(|list| list.contains(&triple));
            if !stored {
                result.triples_added += 1;
                mutations.push(Mutation::Relate { atom, triple });
            }
        }
        Ok(mutations)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;
    use crate::atom::GovernAction;

    fn populated() -> Harness {
        let mut h = Harness::new();
        let old = h.id("專案用 PostgreSQL 16 做主資料庫");
        h.correct(
            old,
            CorrectAction::Replace,
            Some("專案用 PostgreSQL 17 做主資料庫"),
        );
        let secret = h.id("資料庫密碼是 pg_admin_123");
        h.govern(
            secret,
            GovernAction::DeriveLesson,
            Some("不要在記憶中儲存密碼"),
        );
        let q = h.id("quarantined thought");
        h.govern(q, GovernAction::Quarantine, None);
        h.memorize_in("other tenant note", &Scope::personal("mallory"));
        h
    }

    #[test]
    fn round_trip_is_lossless_and_idempotent() {
        let mut h = populated();
        let dump = h.memory.export(&Filter::WholeStore).unwrap();
        assert!(!dump.contains("pg_admin_123"));
        let mut fresh = Harness::new();
        let first = fresh.memory.import(&dump).unwrap();
        assert_eq!(first.reason, None);
        assert_eq!(first.atoms_added, 6);
        assert_eq!(fresh.memory.state().atoms, h.memory.state().atoms);
        assert_eq!(fresh.memory.state().edges, h.memory.state().edges);
        assert_eq!(fresh.memory.state().events, h.memory.state().events);
        let version = fresh.memory.state().version;
        let again = fresh.memory.import(&dump).unwrap();
        assert_eq!(
            (
                again.atoms_added,
                again.atoms_skipped,
                again.edges_added,
                again.events_added
            ),
            (0, 6, 0, 0)
        );
        assert_eq!(fresh.memory.state().version, version);
        assert_eq!(
            fresh
                .memory
                .export(&Filter::WholeStore)
                .unwrap()
                .lines()
                .skip(1)
                .collect::<Vec<_>>(),
            dump.lines().skip(1).collect::<Vec<_>>()
        );
        assert_eq!(fresh.recall_ids("PostgreSQL").len(), 1);
    }

    #[test]
    fn scoped_export_stays_in_scope() {
        let mut h = populated();
        let scope = h.scope.clone();
        let dump = h
            .memory
            .export(&Filter::VisibleFrom(scope.clone()))
            .unwrap();
        assert!(!dump.contains("mallory"));
        assert!(dump.contains("PostgreSQL 17"));
    }

    #[test]
    fn malformed_imports_change_nothing() {
        let mut h = populated();
        let mut dump = h.memory.export(&Filter::WholeStore).unwrap();
        dump.push_str("{\"type\":\"atom\",\"atom_id\":\"nope\"}\nnot json\n");
        let mut fresh = Harness::new();
        let r = fresh.memory.import(&dump).unwrap();
        assert_eq!(r.rejected_lines, 2);
        assert!(r.reason.unwrap().starts_with("nothing imported"));
        assert_eq!(fresh.memory.state().version, 0);
        let secret_line = "{\"type\":\"atom\",\"atom_id\":\"01M8NN1ZBGCATK0BFF5SHXS18G\",\"content\":\"password=Hunter2x9\",\"kind\":\"memory\",\"source\":\"user\",\"scope\":{\"tenant_id\":\"t\"},\"epistemic\":\"actual\",\"polarity\":\"affirmative\",\"exposure_state\":\"visible\",\"negated\":false,\"superseded_by\":null,\"created_at\":\"2026-01-01T00:00:00Z\",\"updated_at\":\"2026-01-01T00:00:00Z\"}";
        assert!(
            fresh
                .memory
                .import(secret_line)
                .unwrap()
                .reason
                .unwrap()
                .contains("secret")
        );
    }
}
