//! Scopes: `tenant / workspace / repository / branch`, plus an optional
//! session. A memory is bound to a prefix of that path; recall sees the
//! caller's scope and its ancestors, never siblings, never another tenant.

use serde::{Deserialize, Serialize};

/// Longest accepted scope component, in bytes.
pub const MAX_COMPONENT_BYTES: usize = 256;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Scope {
    pub tenant_id: String,
    pub workspace: Option<String>,
    pub repository: Option<String>,
    pub branch: Option<String>,
    pub session: Option<String>,
}

/// What `stats` and `export` cover.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Filter {
    /// Every tenant's atoms.
    WholeStore,
    /// What this scope sees: itself and its ancestors.
    VisibleFrom(Scope),
}

impl Filter {
    /// Whether an atom bound to `scope` is covered.
    pub fn covers(&self, scope: &Scope) -> bool {
        match self {
            Filter::WholeStore => true,
            Filter::VisibleFrom(viewer) => scope.visible_from(viewer, false),
        }
    }
}

/// How far down the path a scope is bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// `{tenant}` only: a personal memory.
    Personal,
    /// `{tenant, workspace}`: an organisation memory.
    Organisation,
    Repository,
    Branch,
}

impl Scope {
    pub fn new(tenant: &str, workspace: &str, repository: &str, branch: &str) -> Scope {
        Scope {
            tenant_id: tenant.to_owned(),
            workspace: Some(workspace.to_owned()),
            repository: Some(repository.to_owned()),
            branch: Some(branch.to_owned()),
            session: None,
        }
    }

    pub fn personal(tenant: &str) -> Scope {
        Scope {
            tenant_id: tenant.to_owned(),
            ..Scope::default()
        }
    }

    /// The path components below the tenant, in order.
    fn path(&self) -> [Option<&str>; 3] {
        [
            self.workspace.as_deref(),
            self.repository.as_deref(),
            self.branch.as_deref(),
        ]
    }

    pub fn level(&self) -> Level {
        match self.path() {
            [None, _, _] => Level::Personal,
            [Some(_), None, _] => Level::Organisation,
            [Some(_), Some(_), None] => Level::Repository,
            _ => Level::Branch,
        }
    }

    /// Why this scope cannot be used, if it cannot.
    pub fn problem(&self) -> Option<String> {
        if self.tenant_id.trim().is_empty() {
            return Some("scope.tenant_id is empty".into());
        }
        let names = ["workspace", "repository", "branch"];
        let mut ended = false;
        for (name, part) in names.iter().zip(self.path()) {
            match part {
                None => ended = true,
                Some(_) if ended => {
                    return Some(format!(
                        "scope.{name} is set but a component before it is missing"
                    ));
                }
                Some(p) if p.trim().is_empty() => return Some(format!("scope.{name} is empty")),
                Some(_) => {}
            }
        }
        let all = [
            Some(self.tenant_id.as_str()),
            self.path()[0],
            self.path()[1],
            self.path()[2],
            self.session.as_deref(),
        ];
        if all.iter().flatten().any(|p| p.len() > MAX_COMPONENT_BYTES) {
            return Some(format!(
                "a scope component is longer than {MAX_COMPONENT_BYTES} bytes"
            ));
        }
        if self.session.as_deref().is_some_and(|s| s.trim().is_empty()) {
            return Some("scope.session is empty".into());
        }
        None
    }

    /// Whether a memory bound to `self` is visible to a caller in `viewer`:
    /// same tenant, `self`'s path a prefix of the viewer's, and a session-bound
    /// memory only inside that session. A remote caller never sees personal ones.
    pub fn visible_from(&self, viewer: &Scope, remote: bool) -> bool {
        if self.tenant_id != viewer.tenant_id {
            return false;
        }
        if remote && self.level() == Level::Personal {
            return false;
        }
        let prefix = self
            .path()
            .iter()
            .zip(viewer.path())
            .all(|(mine, theirs)| match mine {
                None => true,
                Some(m) => theirs == Some(*m),
            });
        prefix
            && self
                .session
                .as_ref()
                .is_none_or(|s| viewer.session.as_ref() == Some(s))
    }

    /// `tenant/workspace/repository/branch[#session]`, for humans.
    pub fn display(&self) -> String {
        let mut out = self.tenant_id.clone();
        for part in self.path().into_iter().flatten() {
            out.push('/');
            out.push_str(part);
        }
        if let Some(session) = &self.session {
            out.push('#');
            out.push_str(session);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn branch() -> Scope {
        Scope::new("qiankun", "mem0ai", "mem0", "main")
    }

    #[test]
    fn ancestors_are_visible_siblings_are_not() {
        let viewer = branch();
        let org = Scope {
            repository: None,
            branch: None,
            ..branch()
        };
        let repo = Scope {
            branch: None,
            ..branch()
        };
        assert!(Scope::personal("qiankun").visible_from(&viewer, false));
        assert!(org.visible_from(&viewer, false));
        assert!(repo.visible_from(&viewer, false));
        assert!(branch().visible_from(&viewer, false));
        assert!(!Scope::new("qiankun", "mem0ai", "mem0", "dev").visible_from(&viewer, false));
        assert!(!Scope::new("qiankun", "mem0ai", "other", "main").visible_from(&viewer, false));
        assert!(!Scope::new("other", "mem0ai", "mem0", "main").visible_from(&viewer, false));
        // A deeper memory is not visible from its ancestor.
        assert!(!branch().visible_from(&repo, false));
    }

    #[test]
    fn remote_callers_never_see_personal_memories() {
        let viewer = branch();
        assert!(!Scope::personal("qiankun").visible_from(&viewer, true));
        assert!(
            Scope {
                repository: None,
                branch: None,
                ..branch()
            }
            .visible_from(&viewer, true)
        );
    }

    #[test]
    fn sessions_are_private_to_themselves() {
        let in_session = Scope {
            session: Some("s1".into()),
            ..branch()
        };
        assert!(in_session.visible_from(&in_session, false));
        assert!(!in_session.visible_from(&branch(), false));
        assert!(branch().visible_from(&in_session, false));
        let other = Scope {
            session: Some("s2".into()),
            ..branch()
        };
        assert!(!in_session.visible_from(&other, false));
    }

    #[test]
    fn gaps_and_blanks_are_problems() {
        assert!(branch().problem().is_none());
        assert!(Scope::personal("").problem().is_some());
        let gap = Scope {
            repository: None,
            ..branch()
        };
        assert!(gap.problem().unwrap().contains("branch"));
        let blank = Scope {
            workspace: Some(" ".into()),
            ..branch()
        };
        assert!(blank.problem().is_some());
    }
}
