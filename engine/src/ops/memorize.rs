//! memorize: admission, redaction, exact dedup, then a new atom with inferred
//! epistemic status and polarity, indexed at once.

use super::Effect;
use crate::atom::{Atom, AtomId, Exposure, Kind};
use crate::error::Result;
use crate::graph::index::SuppliedTriple;
use crate::index::dedup_key;
use crate::log::backend::Backend;
use crate::memory::Memory;
use crate::scope::Scope;
use crate::state::Mutation;
use crate::text::{admit, infer, normalize};

#[derive(Clone, Debug)]
pub struct MemorizeRequest {
    pub content: String,
    pub source: Option<String>,
    pub scope: Scope,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MemorizeResult {
    pub atom_id: Option<AtomId>,
    pub effect: Effect,
    pub reason: Option<String>,
    pub deduped_with: Option<AtomId>,
}

impl MemorizeResult {
    pub(crate) fn rejected(reason: String) -> MemorizeResult {
        MemorizeResult {
            atom_id: None,
            effect: Effect::Rejected,
            reason: Some(reason),
            deduped_with: None,
        }
    }
}

/// Where a new atom comes from and what it is.
pub(crate) struct NewAtom<'a> {
    pub content: &'a str,
    pub kind: Kind,
    pub source: Option<&'a str>,
    pub scope: &'a Scope,
    pub what: &'a str,
}

impl<B: Backend> Memory<B> {
    pub fn memorize(&mut self, req: &MemorizeRequest) -> Result<MemorizeResult> {
        self.refresh()?;
        let new = NewAtom {
            content: &req.content,
            kind: Kind::Memory,
            source: req.source.as_deref(),
            scope: &req.scope,
            what: "content",
        };
        self.write_new_atom(&new)
    }

    /// memorize and handoff: checks, dedup, write.
    pub(crate) fn write_new_atom(&mut self, new: &NewAtom<'_>) -> Result<MemorizeResult> {
        self.write_new_atom_with(new, Vec::new())
    }

    /// As [`Memory::write_new_atom`], with triples the new atom states.
    pub(crate) fn write_new_atom_with(
        &mut self,
        new: &NewAtom<'_>,
        triples: Vec<SuppliedTriple>,
    ) -> Result<MemorizeResult> {
        let atom = match self.prepare_atom(new) {
            Ok(atom) => atom,
            Err(reason) => return Ok(MemorizeResult::rejected(reason)),
        };
        if let Some(existing) = self.duplicate_of(&atom) {
            return Ok(MemorizeResult {
                atom_id: Some(existing),
                effect: Effect::NoOp,
                reason: Some(format!("duplicate of active atom {existing}")),
                deduped_with: Some(existing),
            });
        }
        let id = atom.id;
        let mut mutations = vec![Mutation::PutAtom(atom)];
        mutations.extend(
            triples
                .into_iter()
                .map(|triple| Mutation::Relate { atom: id, triple }),
        );
        self.write(mutations, false)?;
        Ok(MemorizeResult {
            atom_id: Some(id),
            effect: Effect::Applied,
            reason: None,
            deduped_with: None,
        })
    }

    /// A checked, redacted, inferred atom — not yet written — or the refusal.
    pub(crate) fn prepare_atom(&mut self, new: &NewAtom<'_>) -> std::result::Result<Atom, String> {
        if let Some(problem) = new.scope.problem() {
            return Err(problem);
        }
        let content = admit(new.content, self.config.max_content_bytes, new.what)?;
        let source = new
            .source
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .unwrap_or("agent");
        if source.len() > 256 {
            return Err("source is longer than 256 bytes".into());
        }
        let now = self.now();
        Ok(Atom {
            id: self.new_id(now),
            epistemic: infer::epistemic(&content),
            polarity: infer::polarity(&content),
            content,
            kind: new.kind,
            source: source.to_owned(),
            scope: new.scope.clone(),
            exposure: Exposure::Visible,
            negated: false,
            superseded_by: None,
            created_at: now,
            updated_at: now,
        })
    }

    /// An active atom with the same scope, kind and normalised content.
    pub(crate) fn duplicate_of(&mut self, atom: &Atom) -> Option<AtomId> {
        let key = dedup_key(&atom.scope, atom.kind, &atom.content);
        let wanted = normalize(&atom.content);
        self.indexes
            .dedup_candidates(key)
            .iter()
            .copied()
            .find(|id| {
                self.state.atom(*id).is_some_and(|other| {
                    other.active()
                        && other.scope == atom.scope
                        && other.kind == atom.kind
                        && normalize(&other.content) == wanted
                })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Harness;
    use super::*;
    use crate::atom::{Epistemic, Polarity};

    #[test]
    fn applied_then_exact_dedup() {
        let mut h = Harness::new();
        let first = h.memorize("專案用 PostgreSQL 16 做主資料庫，不用 MongoDB");
        assert_eq!(first.effect, Effect::Applied);
        assert_eq!(first.reason, None);
        let again = h.memorize("  專案用 PostgreSQL 16   做主資料庫，不用 MongoDB\n");
        assert_eq!(again.effect, Effect::NoOp);
        assert_eq!(again.deduped_with, first.atom_id);
        assert_eq!(again.atom_id, first.atom_id);
        assert_eq!(h.memory.state().version, 1);
    }

    #[test]
    fn dedup_is_per_scope_and_kind() {
        let mut h = Harness::new();
        h.memorize("shared fact");
        let other = Scope::new("qiankun", "mem0ai", "mem0", "dev");
        assert_eq!(h.memorize_in("shared fact", &other).effect, Effect::Applied);
        let handoff = super::super::HandoffRequest {
            summary: "shared fact".into(),
            source: None,
            scope: h.scope.clone(),
        };
        assert_eq!(h.memory.handoff(&handoff).unwrap().effect, Effect::Applied);
    }

    #[test]
    fn refusals_have_reasons() {
        let mut h = Harness::new();
        for (content, needle) in [
            ("", "empty"),
            ("  \t", "empty"),
            (&"長".repeat(3000), "limit"),
            ("password=hunter2", "secret"),
        ] {
            let r = h.memorize(content);
            assert_eq!(r.effect, Effect::Rejected);
            assert!(r.reason.as_deref().unwrap().contains(needle), "{r:?}");
            assert_eq!(r.atom_id, None);
        }
        let bad_scope = Scope {
            repository: None,
            ..h.scope.clone()
        };
        assert!(
            h.memorize_in("fact", &bad_scope)
                .reason
                .unwrap()
                .contains("branch")
        );
        assert_eq!(h.memory.state().version, 0);
    }

    #[test]
    fn personal_data_follows_the_store_policy() {
        let mut h = Harness::new();
        let id = h.id("聯絡 alice@example.org，卡號 4111 1111 1111 1111");
        let content = h.memory.state().atom(id).unwrap().content.clone();
        assert_eq!(
            content,
            "聯絡 alice@example.org，卡號 [REDACTED:payment-card]"
        );
        let config = crate::memory::Config {
            personal_data: crate::text::secrets::PersonalData {
                emails: true,
                payment_cards: false,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut h = Harness::with(crate::log::backend::MemBackend::new(), config);
        let id = h.id("聯絡 alice@example.org，卡號 4111 1111 1111 1111");
        let content = h.memory.state().atom(id).unwrap().content.clone();
        assert_eq!(content, "聯絡 [REDACTED:email]，卡號 4111 1111 1111 1111");
    }

    #[test]
    fn redaction_happens_before_storage() {
        let mut h = Harness::new();
        let id = h.id("主庫連線 postgres://admin:s3cr3t@db:5432/app，token=abcd1234");
        let atom = h.memory.state().atom(id).unwrap();
        assert_eq!(
            atom.content,
            "主庫連線 postgres://admin:[REDACTED:url-password]@db:5432/app，token=[REDACTED:config-secret]"
        );
        assert!(!h.files_contain("s3cr3t"));
        assert!(!h.files_contain("abcd1234"));
    }

    #[test]
    fn inference_is_recorded() {
        let mut h = Harness::new();
        let id = h.id("所有 API 必須加認證");
        assert_eq!(
            h.memory.state().atom(id).unwrap().epistemic,
            Epistemic::Necessary
        );
        let id = h.id("考慮用 K8s 部署");
        assert_eq!(
            h.memory.state().atom(id).unwrap().epistemic,
            Epistemic::Possible
        );
        let id = h.id("不要在記憶中儲存密碼");
        assert_eq!(
            h.memory.state().atom(id).unwrap().polarity,
            Polarity::Negative
        );
    }

    #[test]
    fn ids_are_monotonic_ulids() {
        let mut h = Harness::new();
        let a = h.id("one");
        let b = h.id("two");
        assert!(b > a);
        assert_eq!(a.to_string().len(), 26);
    }
}
