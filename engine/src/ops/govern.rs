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
use crate::log::backend::Backend;
use crate::memory::Memory;
use crate::scope::Scope;
use crate::state::Mutation;

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
        let mut result = GovernResult {
            effect: Effect::Rejected,
            target_atom: req.target_atom.trim().to_owned(),
            lesson_atom_id: None,
            reason: None,
        };
        match self.plan_governance(req) {
            Ok((mutations, lesson)) => {
                let erasing = matches!(
                    req.action,
                    GovernAction::Seal | GovernAction::Tombstone | GovernAction::DeriveLesson
                );
                self.write(mutations, erasing)?;
                result.effect = Effect::Applied;
                result.lesson_atom_id = lesson;
            }
            Err(reason) => result.reason = Some(reason),
        }
        Ok(result)
    }

    fn plan_governance(
        &mut self,
        req: &GovernRequest,
    ) -> std::result::Result<(Vec<Mutation>, Option<AtomId>), String> {
        use Exposure::*;
        let reason = required_reason(&req.reason)?;
        let target = self.target(&req.target_atom, &req.scope, false)?.clone();
        let action = req.action;
        if action != GovernAction::DeriveLesson
            && req
                .lesson_content
                .as_deref()
                .is_some_and(|c| !c.trim().is_empty())
        {
            return Err(format!(
                "lesson_content is only for derive_lesson, not {action}"
            ));
        }
        let from = target.exposure;
        let to = match (action, from) {
            (GovernAction::Quarantine, Visible) => Quarantined,
            (GovernAction::Restore, Quarantined) => Visible,
            (GovernAction::Seal | GovernAction::DeriveLesson, Visible | Quarantined) => Sealed,
            (GovernAction::Tombstone, Visible | Quarantined | Sealed) => Tombstoned,
            (GovernAction::Restore, _) => {
                return Err(format!(
                    "atom {} is {from}, not quarantined: nothing to restore",
                    target.id
                ));
            }
            (_, _) if from == Tombstoned || from == Sealed => {
                return Err(format!(
                    "atom {} is already {from}: its content is gone",
                    target.id
                ));
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
            let new = NewAtom {
                content,
                kind: Kind::Lesson,
                source: Some(&by),
                scope: &target.scope,
                what: "lesson_content",
            };
            let lesson = self.prepare_atom(&new)?;
            lesson_id = Some(lesson.id);
            mutations.push(Mutation::AddEdge(Edge {
                from: lesson.id,
                to: target.id,
                kind: EdgeKind::DerivedLessonFrom,
            }));
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
            mutations.push(Mutation::ScrubEvents {
                atom: target.id,
                placeholder,
            });
        }
        mutations.push(Mutation::PutAtom(updated));
        let event = Event {
            id: self.new_id(now),
            atom: target.id,
            at: now,
            by,
            reason,
            change: Change::Exposure { from, to },
        };
        mutations.push(Mutation::Record(event));
        Ok((mutations, lesson_id))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;
    use GovernAction::*;

    fn rejected(r: &GovernResult, needle: &str) {
        assert_eq!(r.effect, Effect::Rejected, "{r:?}");
        assert!(
            r.reason.as_deref().unwrap_or("").contains(needle),
            "{r:?} lacks {needle}"
        );
    }

    #[test]
    fn quarantine_and_restore_keep_content() {
        let mut h = Harness::new();
        let id = h.id("部署用 ECS 不用 K8s");
        rejected(&h.govern(id, Restore, None), "not quarantined");
        assert_eq!(h.govern(id, Quarantine, None).effect, Effect::Applied);
        assert!(h.recall_ids("ECS 部署").is_empty());
        rejected(&h.govern(id, Quarantine, None), "already quarantined");
        assert_eq!(h.govern(id, Restore, None).effect, Effect::Applied);
        assert_eq!(h.recall_ids("ECS 部署"), vec![id]);
        let exposure: Vec<_> = h
            .history(id)
            .exposure_history
            .iter()
            .map(|e| (e.from, e.to))
            .collect();
        assert_eq!(
            exposure,
            [
                (Exposure::Visible, Exposure::Quarantined),
                (Exposure::Quarantined, Exposure::Visible)
            ]
        );
    }

    #[test]
    fn seal_destroys_bytes_everywhere() {
        let mut h = Harness::new();
        let id = h.id("資料庫主機是 pg-main-7 號機");
        assert!(h.files_contain("pg-main-7"));
        assert_eq!(h.govern(id, Seal, None).effect, Effect::Applied);
        assert!(!h.files_contain("pg-main-7"));
        assert!(h.recall_ids("資料庫主機").is_empty());
        let history = h.history(id);
        assert_eq!(
            history.current.unwrap().content,
            "[governed payload hidden: sealed]"
        );
        rejected(&h.govern(id, Seal, None), "already sealed");
        rejected(&h.govern(id, Quarantine, None), "already sealed");
        rejected(&h.govern(id, Restore, None), "not quarantined");
        rejected(
            &h.govern(id, DeriveLesson, Some("lesson")),
            "already sealed",
        );
        // Reopen: still gone, still sealed.
        let reopened = Harness::with(h.backend.after_power_cut(), Default::default());
        let atom = reopened.memory.state().atom(id).unwrap();
        assert_eq!(
            (atom.exposure, atom.content.as_str()),
            (Exposure::Sealed, "")
        );
    }

    #[test]
    fn tombstone_leaves_only_id_and_times() {
        let mut h = Harness::new();
        let id = h.id("a note with a customer's name: Alice Example");
        h.govern(id, Quarantine, None);
        assert_eq!(h.govern(id, Tombstone, None).effect, Effect::Applied);
        let atom = h.memory.state().atom(id).unwrap().clone();
        assert_eq!((atom.content.as_str(), atom.source.as_str()), ("", ""));
        assert!(!h.files_contain("Alice Example"));
        let history = h.history(id);
        assert_eq!(
            history.current.unwrap().content,
            "[governed payload hidden: tombstoned]"
        );
        assert_eq!(
            history.exposure_history[0].reason,
            "[governed payload hidden: tombstoned]"
        );
        assert_eq!(history.exposure_history[1].reason, "test tombstone");
        rejected(&h.govern(id, Tombstone, None), "already tombstoned");
        // A sealed atom can still be tombstoned.
        let other = h.id("sealed first");
        h.govern(other, Seal, None);
        assert_eq!(h.govern(other, Tombstone, None).effect, Effect::Applied);
    }

    #[test]
    fn derive_lesson_seals_and_links_both_ways() {
        let mut h = Harness::new();
        let secret = h.id("資料庫密碼是 pg_admin_123，連線串在 .env");
        rejected(&h.govern(secret, DeriveLesson, None), "lesson_content");
        rejected(
            &h.govern(secret, Seal, Some("not for seal")),
            "only for derive_lesson",
        );
        rejected(
            &h.govern(secret, DeriveLesson, Some("password=hunter2")),
            "secret",
        );
        let r = h.govern(
            secret,
            DeriveLesson,
            Some("不要在記憶中儲存資料庫密碼和連線串，使用環境變數"),
        );
        assert_eq!(r.effect, Effect::Applied);
        let lesson = r.lesson_atom_id.unwrap();
        assert!(!h.files_contain("pg_admin_123"));
        assert_eq!(h.memory.state().atom(lesson).unwrap().kind, Kind::Lesson);
        assert_eq!(h.recall_ids("資料庫密碼 環境變數"), vec![lesson]);
        let of_lesson = h.history(lesson);
        assert_eq!(of_lesson.relations.related_lessons, vec![secret]);
        assert!(of_lesson.exposure_history.is_empty());
        let of_secret = h.history(secret);
        assert_eq!(of_secret.relations.related_lessons, vec![lesson]);
        assert_eq!(
            of_secret.current.unwrap().content,
            "[governed payload hidden: sealed]"
        );
        let record = &of_secret.exposure_history[0];
        assert_eq!(
            (record.from, record.to, record.by.as_str()),
            (Exposure::Visible, Exposure::Sealed, "agent")
        );
    }

    #[test]
    fn missing_reason_or_scope_is_refused() {
        let mut h = Harness::new();
        let id = h.id("fact");
        let mut req = GovernRequest {
            target_atom: id.to_string(),
            action: Quarantine,
            reason: "".into(),
            lesson_content: None,
            scope: h.scope.clone(),
            by: None,
        };
        rejected(&h.memory.govern(&req).unwrap(), "reason is required");
        req.reason = "cross tenant".into();
        req.scope = Scope::new("mallory", "mem0ai", "mem0", "main");
        rejected(&h.memory.govern(&req).unwrap(), "not found");
        assert_eq!(
            h.memory.state().atom(id).unwrap().exposure,
            Exposure::Visible
        );
    }
}
