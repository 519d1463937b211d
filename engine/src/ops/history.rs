//! history: an atom's current record, its relations (supersedes,
//! superseded_by, related_lessons in both directions), its corrections and
//! its exposure changes, and the knowledge-graph triples it states (with
//! `invalid_at` once a newer version replaced it). Destroyed content shows
//! as the placeholder, and has no triples.

use crate::atom::{
    Atom, AtomId, Change, CorrectAction, EdgeKind, Epistemic, Exposure, Kind, Polarity,
};
use crate::error::Result;
use crate::log::backend::Backend;
use crate::memory::Memory;
use crate::scope::Scope;
use crate::time::Timestamp;

#[derive(Clone, Debug)]
pub struct HistoryRequest {
    pub atom_id: String,
    pub scope: Scope,
    pub remote: bool,
}

/// An atom as interfaces show it.
#[derive(Clone, Debug, PartialEq)]
pub struct AtomView {
    pub atom_id: AtomId,
    pub content: String,
    pub kind: Kind,
    pub source: String,
    pub scope: Scope,
    pub epistemic: Epistemic,
    pub polarity: Polarity,
    pub exposure_state: Exposure,
    pub negated: bool,
    pub superseded_by: Option<AtomId>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl From<&Atom> for AtomView {
    fn from(atom: &Atom) -> AtomView {
        AtomView {
            atom_id: atom.id,
            content: atom.shown_content(),
            kind: atom.kind,
            source: atom.source.clone(),
            scope: atom.scope.clone(),
            epistemic: atom.epistemic,
            polarity: atom.polarity,
            exposure_state: atom.exposure,
            negated: atom.negated,
            superseded_by: atom.superseded_by,
            created_at: atom.created_at,
            updated_at: atom.updated_at,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Relations {
    pub supersedes: Vec<AtomId>,
    pub superseded_by: Vec<AtomId>,
    pub related_lessons: Vec<AtomId>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CorrectionRecord {
    pub action: CorrectAction,
    pub reason: String,
    pub at: Timestamp,
    pub by: String,
    pub new_atom_id: Option<AtomId>,
    pub change: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ExposureRecord {
    pub from: Exposure,
    pub to: Exposure,
    pub reason: String,
    pub at: Timestamp,
    pub by: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct HistoryResult {
    pub current: Option<AtomView>,
    pub relations: Relations,
    pub corrections: Vec<CorrectionRecord>,
    pub exposure_history: Vec<ExposureRecord>,
    pub triples: Vec<crate::ops::graph::Edge>,
    pub reason: Option<String>,
}

impl<B: Backend> Memory<B> {
    pub fn history(&mut self, req: &HistoryRequest) -> Result<HistoryResult> {
        self.refresh()?;
        let refused = |reason: String| {
            Ok(HistoryResult {
                reason: Some(reason),
                ..HistoryResult::default()
            })
        };
        if let Some(problem) = req.scope.problem() {
            return refused(problem);
        }
        let atom = match self.target(&req.atom_id, &req.scope, req.remote) {
            Ok(atom) => atom,
            Err(reason) => return refused(reason),
        };
        let id = atom.id;
        let mut result = HistoryResult {
            current: Some(AtomView::from(atom)),
            triples: self.triples_of(atom),
            ..HistoryResult::default()
        };
        for edge in &self.state.edges {
            match edge.kind {
                EdgeKind::Supersedes if edge.from == id => {
                    result.relations.supersedes.push(edge.to)
                }
                EdgeKind::Supersedes if edge.to == id => {
                    result.relations.superseded_by.push(edge.from)
                }
                EdgeKind::DerivedLessonFrom if edge.from == id => {
                    result.relations.related_lessons.push(edge.to)
                }
                EdgeKind::DerivedLessonFrom if edge.to == id => {
                    result.relations.related_lessons.push(edge.from)
                }
                _ => {}
            }
        }
        for event in &self.state.events {
            match &event.change {
                Change::Correction {
                    action,
                    detail,
                    new_atom,
                } if event.atom == id || *new_atom == Some(id) => {
                    result.corrections.push(CorrectionRecord {
                        action: *action,
                        reason: event.reason.clone(),
                        at: event.at,
                        by: event.by.clone(),
                        new_atom_id: if event.atom == id {
                            *new_atom
                        } else {
                            Some(event.atom)
                        },
                        change: if event.atom == id {
                            detail.clone()
                        } else {
                            format!("supersedes {}", event.atom)
                        },
                    });
                }
                Change::Exposure { from, to } if event.atom == id => {
                    result.exposure_history.push(ExposureRecord {
                        from: *from,
                        to: *to,
                        reason: event.reason.clone(),
                        at: event.at,
                        by: event.by.clone(),
                    })
                }
                _ => {}
            }
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;

    #[test]
    fn unknown_foreign_and_malformed_ids_are_refused() {
        let mut h = Harness::new();
        let id = h.id("fact");
        assert!(h.history(AtomId(42)).reason.unwrap().contains("not found"));
        let req = HistoryRequest {
            atom_id: "zzz".into(),
            scope: h.scope.clone(),
            remote: false,
        };
        assert!(
            h.memory
                .history(&req)
                .unwrap()
                .reason
                .unwrap()
                .contains("ULID")
        );
        let req = HistoryRequest {
            atom_id: id.to_string(),
            scope: Scope::personal("mallory"),
            remote: false,
        };
        assert!(h.memory.history(&req).unwrap().current.is_none());
        let fresh = h.history(id);
        assert_eq!(fresh.current.unwrap().content, "fact");
        assert!(fresh.corrections.is_empty() && fresh.exposure_history.is_empty());
    }
}
