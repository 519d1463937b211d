//! brief: the session-start text — newest handoffs first, then hard
//! constraints (`necessary`), recent decisions, and the personal and
//! organisation profile sections — within a size budget in characters.

use crate::atom::{Atom, AtomId, Epistemic, Kind};
use crate::error::Result;
use crate::log::backend::Backend;
use crate::memory::Memory;
use crate::scope::{Level, Scope};

#[derive(Clone, Debug)]
pub struct BriefRequest {
    pub scope: Scope,
    pub remote: bool,
    pub budget_chars: Option<u32>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct BriefResult {
    pub text: String,
    pub atom_ids: Vec<AtomId>,
}

const MAX_ITEM_CHARS: usize = 600;

struct Section {
    title: &'static str,
    limit: usize,
    keep: fn(&Atom) -> bool,
}

const SECTIONS: &[Section] = &[
    Section {
        title: "Handoffs (newest first)",
        limit: 3,
        keep: |a| a.kind == Kind::Handoff,
    },
    Section {
        title: "Hard constraints",
        limit: 20,
        keep: |a| a.epistemic == Epistemic::Necessary && a.kind != Kind::Handoff,
    },
    Section {
        title: "Recent decisions",
        limit: 10,
        keep: |a| {
            matches!(a.kind, Kind::Memory | Kind::Lesson) && a.scope.level() >= Level::Repository
        },
    },
    Section {
        title: "Personal profile",
        limit: 10,
        keep: |a| a.scope.level() == Level::Personal && a.kind != Kind::Handoff,
    },
    Section {
        title: "Organisation profile",
        limit: 10,
        keep: |a| a.scope.level() == Level::Organisation && a.kind != Kind::Handoff,
    },
];

fn clip(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

impl<B: Backend> Memory<B> {
    pub fn brief(&mut self, req: &BriefRequest) -> Result<BriefResult> {
        self.refresh()?;
        let budget = req
            .budget_chars
            .map_or(self.config.brief_budget_chars, |b| b as usize)
            .max(200);
        let mut text = format!("# HMG memory brief — {}\n", req.scope.display());
        let mut used: Vec<AtomId> = Vec::new();
        // Newest first: ids are time-ordered.
        let visible: Vec<&Atom> = self
            .state
            .atoms
            .values()
            .rev()
            .filter(|a| a.active() && a.scope.visible_from(&req.scope, req.remote))
            .collect();
        let mut full = false;
        for section in SECTIONS {
            let items: Vec<&&Atom> = visible
                .iter()
                .filter(|a| (section.keep)(a) && !used.contains(&a.id))
                .take(section.limit)
                .collect();
            if items.is_empty() || full {
                continue;
            }
            let mut block = format!("\n## {}\n", section.title);
            let mut any = false;
            for atom in items {
                let line = format!(
                    "- {} ({}, {})\n",
                    clip(&atom.content, MAX_ITEM_CHARS),
                    &atom.created_at.rfc3339()[..10],
                    atom.id
                );
                if text.chars().count() + block.chars().count() + line.chars().count() > budget {
                    full = true;
                    break;
                }
                block.push_str(&line);
                used.push(atom.id);
                any = true;
            }
            if any {
                text.push_str(&block);
            }
        }
        if used.is_empty() {
            text.push_str("\nNo memories yet for this scope.\n");
        }
        Ok(BriefResult {
            text,
            atom_ids: used,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::HandoffRequest;
    use super::super::testing::Harness;
    use super::*;

    #[test]
    fn sections_in_order_newest_handoff_first() {
        let mut h = Harness::new();
        let brief = h
            .memory
            .brief(&BriefRequest {
                scope: h.scope.clone(),
                remote: false,
                budget_chars: None,
            })
            .unwrap();
        assert!(brief.text.contains("No memories yet"));
        h.id("專案用 PostgreSQL 17 做主資料庫");
        h.id("所有 API 必須加認證");
        h.memorize_in("I prefer dark mode", &Scope::personal("qiankun"));
        let org = Scope {
            repository: None,
            branch: None,
            ..h.scope.clone()
        };
        h.memorize_in("公司使用 React 技術棧", &org);
        for summary in ["first handoff: fixed login", "second handoff: added tests"] {
            h.advance_days(1.0);
            let req = HandoffRequest {
                summary: summary.into(),
                source: None,
                scope: h.scope.clone(),
            };
            h.memory.handoff(&req).unwrap();
        }
        let text = h
            .memory
            .brief(&BriefRequest {
                scope: h.scope.clone(),
                remote: false,
                budget_chars: None,
            })
            .unwrap()
            .text;
        let at = |needle: &str| {
            text.find(needle)
                .unwrap_or_else(|| panic!("{needle} missing from\n{text}"))
        };
        assert!(at("second handoff") < at("first handoff"));
        assert!(at("first handoff") < at("Hard constraints"));
        assert!(at("必須加認證") < at("Recent decisions"));
        assert!(at("PostgreSQL 17") < at("Personal profile"));
        assert!(at("dark mode") < at("Organisation profile"));
        assert!(at("Organisation profile") < at("React"));
        let remote = h
            .memory
            .brief(&BriefRequest {
                scope: h.scope.clone(),
                remote: true,
                budget_chars: None,
            })
            .unwrap();
        assert!(!remote.text.contains("dark mode"));
        let small = h
            .memory
            .brief(&BriefRequest {
                scope: h.scope.clone(),
                remote: false,
                budget_chars: Some(200),
            })
            .unwrap();
        assert!(small.text.chars().count() <= 200, "{}", small.text);
        assert!(small.text.contains("second handoff"));
    }
}
