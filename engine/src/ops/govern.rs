//! govern: change whether a memory exists — quarantine/restore, seal,
//! tombstone, derive_lesson.
//!
//! | action | from | to | content |
//! | --- | --- | --- | --- |
//! | quarantine | visible | quarantined | kept |
//! | restore | quarantined | visible | kept |
//! | seal | visible, quarantined | sealed | destroyed |
//! | tombstone | visible, quarantined, sealed | tombstoned | destroyed, with source and earlier reasons |
//! | derive_lesson | visible, quarantined | sealed | destroyed; a redacted lesson atom is written |
//!
//! Destroying actions commit by compaction: when the call returns, the bytes
//! are in no file of the store.

use super::memorize::NewAtom;
use super::{Effect, actor, required_reason};
use crate::atom::{AtomId, Change, Edge, EdgeKind, Event, Exposure, GovernAction, Kind};
use crate::error::Result;
use crate::memory::Memory;
use crate::scope::Scope;
use crate::state::Mutation;
use crate::store::backend::Backend;

#[derive(Clone, Debug)]
pub struct GovernRequest {
    pub target_atom: String,
    pub action: GovernAction,
    pub reason: String,
    pub lesson_content: Option<String>,
    pub scope: Scope,
    pub by: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GovernResult {
    pub effect: Effect,
    pub target_atom: String,
    pub lesson_atom_id: Option<AtomId>,
    pub reason: Option<String>,
}

impl<B: Backend> Memory<B> {
    pub fn govern(&mut self, req: &GovernRequest) -> Result<GovernResult> {
        self.refresh()?;
        let mut result =
            GovernResult { effect: Effect::Rejected, target_atom: req.target_atom.trim().to_owned(), lesson_atom_id: None, reason: None };
        match self.plan_governance(req) {
            Ok((mutations, lesson)) => {
                let erasing = matches!(req.action, GovernAction::Seal | GovernAction::Tombstone | GovernAction::DeriveLesson);
                self.write(mutations, erasing)?;
                result.effect = Effect::Applied;
                result.lesson_atom_id = lesson;
            }
            Err(reason) => result.reason = Some(reason),
        }
        Ok(result)
    }

    fn plan_governance(&mut self, req: &GovernRequest) -> std::result::Result<(Vec<Mutation>, Option<AtomId>), String> {
        use Exposure::*;
        let reason = required_reason(&req.reason)?;
        let target = self.target(&req.target_atom, &req.scope)?.clone();
        let action = req.action;
        if action != GovernAction::DeriveLesson && req.lesson_content.as_deref().is_some_and(|c| !c.trim().is_empty()) {
            return Err(format!("lesson_content is only for derive_lesson, not {action}"));
        }
        let from = target.exposure;
        let to = match (action, from) {
            (GovernAction::Quarantine, Visible) => Quarantined,
            (GovernAction::Restore, Quarantined) => Visible,
            (GovernAction::Seal | GovernAction::DeriveLesson, Visible | Quarantined) => Sealed,
            (GovernAction::Tombstone, Visible | Quarantined | Sealed) => Tombstoned,
            (GovernAction::Restore, _) => return Err(format!("atom {} is {from}, not quarantined: nothing to restore", target.id)),
            (_, _) if from == Tombstoned || from == Sealed => {
                return Err(format!("atom {} is already {from}: its content is gone", target.id));
            }
            (_, _) => return Err(format!("atom {} is already {from}", target.id)),
        };
        let now = self.now();
        let by = actor(req.by.as_deref(), None);
        let mut mutations = Vec::new();
        let mut lesson_id = None;
        if action == GovernAction::DeriveLesson {
            let content = req.lesson_content.as_deref().unwrap_or("");
            if content.trim().is_empty() {
                return Err("derive_lesson needs lesson_content".into());
            }
            let new =
                NewAtom { content, kind: Kind::Lesson, source: Some(&by), scope: &target.scope, what: "lesson_content" };
            let lesson = self.prepare_atom(&new)?;
            lesson_id = Some(lesson.id);
            mutations.push(Mutation::AddEdge(Edge { from: lesson.id, to: target.id, kind: EdgeKind::DerivedLessonFrom }));
            mutations.push(Mutation::PutAtom(lesson));
        }
        let mut updated = target.clone();
        updated.exposure = to;
        updated.updated_at = now;
        if to.destroyed() {
            updated.content.clear();
        }
        if to == Tombstoned {
            updated.source.clear();
            let placeholder = Tombstoned.placeholder().unwrap_or_default();
            mutations.push(Mutation::ScrubEvents { atom: target.id, placeholder });
        }
        mutations.push(Mutation::PutAtom(updated));
        let event = Event { id: self.new_id(now), atom: target.id, at: now, by, reason, change: Change::Exposure { from, to } };
        mutations.push(Mutation::Record(event));
        Ok((mutations, lesson_id))
    }
}
