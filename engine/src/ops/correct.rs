//! correct: change what a memory claims — negate, confirm, demote, replace.
//!
//! | action | from → to | refused when |
//! | --- | --- | --- |
//! | negate | active → negated | already negated, superseded, governed |
//! | confirm_actual | possible → actual | already actual, necessary |
//! | confirm_necessary | possible/actual → necessary | already necessary |
//! | demote | actual/necessary → possible | already possible |
//! | replace | new atom, edge new supersedes old | superseded, governed, no new_content |
//!
//! Also refused (decided here, documented in docs/SEMANTICS.md): any action on
//! a governed (quarantined/sealed/tombstoned) or superseded atom, and the
//! epistemic moves on a negated atom — its recovery is `replace`.

use super::memorize::NewAtom;
use super::{Effect, actor, required_reason};
use crate::atom::{AtomId, Change, CorrectAction, Edge, EdgeKind, Epistemic, Event};
use crate::error::Result;
use crate::log::backend::Backend;
use crate::memory::Memory;
use crate::scope::Scope;
use crate::state::Mutation;

#[derive(Clone, Debug)]
pub struct CorrectRequest {
    pub target_atom: String,
    pub action: CorrectAction,
    pub reason: String,
    pub new_content: Option<String>,
    pub scope: Scope,
    pub by: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CorrectResult {
    pub effect: Effect,
    pub target_atom: String,
    pub new_atom_id: Option<AtomId>,
    pub reason: Option<String>,
}

impl<B: Backend> Memory<B> {
    pub fn correct(&mut self, req: &CorrectRequest) -> Result<CorrectResult> {
        self.refresh()?;
        let mut result = CorrectResult {
            effect: Effect::Rejected,
            target_atom: req.target_atom.trim().to_owned(),
            new_atom_id: None,
            reason: None,
        };
        match self.plan_correction(req) {
            Ok((mutations, new_atom_id)) => {
                self.write(mutations, false)?;
                result.effect = Effect::Applied;
                result.new_atom_id = new_atom_id;
            }
            Err(reason) => result.reason = Some(reason),
        }
        Ok(result)
    }

    fn plan_correction(
        &mut self,
        req: &CorrectRequest,
    ) -> std::result::Result<(Vec<Mutation>, Option<AtomId>), String> {
        let reason = required_reason(&req.reason)?;
        let target = self.target(&req.target_atom, &req.scope, false)?.clone();
        if target.exposure != crate::atom::Exposure::Visible {
            return Err(format!(
                "atom {} is {}: governed atoms cannot be corrected",
                target.id, target.exposure
            ));
        }
        if let Some(head) = target.superseded_by {
            return Err(format!(
                "atom {} is superseded by {head}: correct its head instead",
                target.id
            ));
        }
        let action = req.action;
        if action != CorrectAction::Replace
            && req
                .new_content
                .as_deref()
                .is_some_and(|c| !c.trim().is_empty())
        {
            return Err(format!("new_content is only for replace, not {action}"));
        }
        let now = self.now();
        let mut updated = target.clone();
        updated.updated_at = now;
        let mut new_atom_id = None;
        let mut mutations = Vec::new();
        let detail = match action {
            CorrectAction::Negate => {
                if target.negated {
                    return Err(format!("atom {} is already negated", target.id));
                }
                updated.negated = true;
                "active -> negated".to_owned()
            }
            CorrectAction::Replace => {
                let content = req.new_content.as_deref().unwrap_or("");
                if content.trim().is_empty() {
                    return Err("replace needs new_content".into());
                }
                let new = NewAtom {
                    content,
                    kind: target.kind,
                    source: Some(&target.source),
                    scope: &target.scope,
                    what: "new_content",
                };
                let mut atom = self.prepare_atom(&new)?;
                atom.created_at = now;
                new_atom_id = Some(atom.id);
                updated.superseded_by = Some(atom.id);
                mutations.push(Mutation::PutAtom(atom.clone()));
                mutations.push(Mutation::AddEdge(Edge {
                    from: atom.id,
                    to: target.id,
                    kind: EdgeKind::Supersedes,
                }));
                format!("superseded by {}", atom.id)
            }
            epistemic_move => {
                if target.negated {
                    return Err(format!(
                        "atom {} is negated: recover it with replace",
                        target.id
                    ));
                }
                let to = epistemic_target(epistemic_move, target.epistemic, target.id)?;
                updated.epistemic = to;
                format!("{} -> {}", target.epistemic, to)
            }
        };
        let event = Event {
            id: self.new_id(now),
            atom: target.id,
            at: now,
            by: actor(req.by.as_deref(), None),
            reason,
            change: Change::Correction {
                action,
                detail,
                new_atom: new_atom_id,
            },
        };
        mutations.push(Mutation::PutAtom(updated));
        mutations.push(Mutation::Record(event));
        Ok((mutations, new_atom_id))
    }
}

/// The epistemic ladder: where a confirm/demote goes from `from`, or why not.
fn epistemic_target(
    action: CorrectAction,
    from: Epistemic,
    id: AtomId,
) -> std::result::Result<Epistemic, String> {
    use Epistemic::*;
    match (action, from) {
        (CorrectAction::ConfirmActual, Possible) => Ok(Actual),
        (CorrectAction::ConfirmActual, Actual) => Err(format!("atom {id} is already actual")),
        (CorrectAction::ConfirmActual, Necessary) => Err(format!(
            "atom {id} is necessary: confirm_actual cannot lower it (demote to possible first, then confirm_actual)"
        )),
        (CorrectAction::ConfirmNecessary, Necessary) => {
            Err(format!("atom {id} is already necessary"))
        }
        (CorrectAction::ConfirmNecessary, _) => Ok(Necessary),
        (CorrectAction::Demote, Possible) => Err(format!("atom {id} is already possible")),
        (CorrectAction::Demote, _) => Ok(Possible),
        (CorrectAction::Negate | CorrectAction::Replace, _) => {
            unreachable!("not an epistemic move")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;
    use CorrectAction::*;

    fn epistemic(h: &Harness, id: AtomId) -> Epistemic {
        h.memory.state().atom(id).unwrap().epistemic
    }

    fn rejected(r: &CorrectResult, needle: &str) {
        assert_eq!(r.effect, Effect::Rejected, "{r:?}");
        assert!(
            r.reason.as_deref().unwrap_or("").contains(needle),
            "{r:?} lacks {needle}"
        );
    }

    #[test]
    fn the_epistemic_ladder() {
        let mut h = Harness::new();
        let id = h.id("考慮用 Kong 做 API 閘道器");
        assert_eq!(epistemic(&h, id), Epistemic::Possible);
        rejected(&h.correct(id, Demote, None), "already possible");
        assert_eq!(h.correct(id, ConfirmActual, None).effect, Effect::Applied);
        assert_eq!(epistemic(&h, id), Epistemic::Actual);
        rejected(&h.correct(id, ConfirmActual, None), "already actual");
        assert_eq!(h.correct(id, Demote, None).effect, Effect::Applied);
        assert_eq!(h.correct(id, ConfirmActual, None).effect, Effect::Applied);
        assert_eq!(
            h.correct(id, ConfirmNecessary, None).effect,
            Effect::Applied
        );
        assert_eq!(epistemic(&h, id), Epistemic::Necessary);
        rejected(&h.correct(id, ConfirmNecessary, None), "already necessary");
        rejected(&h.correct(id, ConfirmActual, None), "demote");
        // demote goes straight down to possible, never to actual.
        assert_eq!(h.correct(id, Demote, None).effect, Effect::Applied);
        assert_eq!(epistemic(&h, id), Epistemic::Possible);
        assert_eq!(
            h.correct(id, ConfirmNecessary, None).effect,
            Effect::Applied
        );
        let history = h.history(id);
        let changes: Vec<_> = history
            .corrections
            .iter()
            .map(|c| c.change.as_str())
            .collect();
        assert_eq!(
            changes,
            [
                "possible -> actual",
                "actual -> possible",
                "possible -> actual",
                "actual -> necessary",
                "necessary -> possible",
                "possible -> necessary"
            ]
        );
    }

    #[test]
    fn negate_hides_and_refuses_twice() {
        let mut h = Harness::new();
        let id = h.id("用 MongoDB 做會話快取");
        assert_eq!(h.recall_ids("MongoDB 快取"), vec![id]);
        assert_eq!(h.correct(id, Negate, None).effect, Effect::Applied);
        assert!(h.recall_ids("MongoDB 快取").is_empty());
        rejected(&h.correct(id, Negate, None), "already negated");
        rejected(&h.correct(id, ConfirmActual, None), "replace");
        let with_negated = h.recall_with(super::super::RecallRequest {
            query: "MongoDB 快取".into(),
            include_negated: true,
            scope: h.scope.clone(),
            ..Default::default()
        });
        assert!(with_negated[0].negated);
        // The content is untouched.
        assert_eq!(
            h.memory.state().atom(id).unwrap().content,
            "用 MongoDB 做會話快取"
        );
    }

    #[test]
    fn replace_builds_a_chain_with_one_head() {
        let mut h = Harness::new();
        let old = h.id("專案用 PostgreSQL 16 做主資料庫");
        let r = h.correct(old, Replace, Some("專案用 PostgreSQL 17 做主資料庫"));
        assert_eq!(r.effect, Effect::Applied);
        let new = r.new_atom_id.unwrap();
        assert_eq!(h.recall_ids("PostgreSQL 主資料庫"), vec![new]);
        rejected(&h.correct(old, Replace, Some("again")), "correct its head");
        rejected(&h.correct(old, Negate, None), "superseded");
        rejected(&h.correct(new, Replace, None), "new_content");
        rejected(&h.correct(new, Replace, Some("   ")), "new_content");
        rejected(&h.correct(new, Negate, Some("text")), "only for replace");
        // Recovery from a wrong replace: replace the faulty head.
        let back = h
            .correct(new, Replace, Some("專案用 PostgreSQL 16 做主資料庫"))
            .new_atom_id
            .unwrap();
        assert_eq!(h.recall_ids("PostgreSQL"), vec![back]);
        let heads = h
            .memory
            .state()
            .atoms
            .values()
            .filter(|a| a.superseded_by.is_none())
            .count();
        assert_eq!(heads, 1);
        let history = h.history(new);
        assert_eq!(history.relations.supersedes, vec![old]);
        assert_eq!(history.relations.superseded_by, vec![back]);
        assert_eq!(history.corrections.len(), 2);
        assert_eq!(history.corrections[0].new_atom_id, Some(old));
        assert!(history.corrections[0].reason.contains("replace"));
    }

    #[test]
    fn replace_recovers_a_wrong_negate() {
        let mut h = Harness::new();
        let id = h.id("用 MongoDB 做會話快取");
        h.correct(id, Negate, None);
        let r = h.correct(id, Replace, Some("用 MongoDB 做會話快取，仍在使用"));
        assert_eq!(r.effect, Effect::Applied);
        assert_eq!(h.recall_ids("MongoDB 快取"), vec![r.new_atom_id.unwrap()]);
    }

    #[test]
    fn governed_targets_and_bad_input_are_refused() {
        let mut h = Harness::new();
        let id = h.id("a fact about caching");
        h.govern(id, crate::atom::GovernAction::Quarantine, None);
        for action in CorrectAction::ALL {
            rejected(&h.correct(id, *action, Some("x")), "quarantined");
        }
        let r = h.memory.correct(&CorrectRequest {
            target_atom: "nope".into(),
            action: Negate,
            reason: "r".into(),
            new_content: None,
            scope: h.scope.clone(),
            by: None,
        });
        rejected(&r.unwrap(), "not an atom id");
        let other = h.id("another fact");
        let r = h.memory.correct(&CorrectRequest {
            target_atom: other.to_string(),
            action: Negate,
            reason: "  ".into(),
            new_content: None,
            scope: h.scope.clone(),
            by: None,
        });
        rejected(&r.unwrap(), "reason is required");
        let r = h.memory.correct(&CorrectRequest {
            target_atom: other.to_string(),
            action: Negate,
            reason: "sibling".into(),
            new_content: None,
            scope: Scope::new("qiankun", "mem0ai", "mem0", "dev"),
            by: None,
        });
        rejected(&r.unwrap(), "not found in this scope");
        let r = h.correct(other, Replace, Some("password=hunter2"));
        rejected(&r, "secret");
    }
}
