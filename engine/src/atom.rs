//! The atom — the smallest unit of memory — and the records around it:
//! edges between atoms and the audit events of corrections and governance.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::scope::Scope;
use crate::time::Timestamp;

/// A ULID, kept as its 128-bit value; shown as its 26-character text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AtomId(pub u128);

impl fmt::Display for AtomId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", ulid::Ulid(self.0))
    }
}

impl FromStr for AtomId {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ulid::Ulid::from_string(s.trim())
            .map(|u| AtomId(u.0))
            .map_err(|_| {
                format!(
                    "'{}' is not an atom id (a 26-character ULID)",
                    truncate(s, 40)
                )
            })
    }
}

impl AtomId {
    /// Creation time encoded in the id.
    pub fn timestamp(self) -> Timestamp {
        Timestamp(ulid::Ulid(self.0).timestamp_ms() as i64)
    }
}

fn truncate(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

macro_rules! names {
    ($ty:ident { $($variant:ident = $name:literal),+ $(,)? }) => {
        impl $ty {
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($ty::$variant => $name),+ }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $ty {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($name => Ok($ty::$variant),)+
                    other => Err(format!(
                        "unknown {} '{}' (expected one of: {})",
                        stringify!($ty).to_lowercase(),
                        truncate(other, 40),
                        [$($name),+].join(", ")
                    )),
                }
            }
        }
    };
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Kind {
    Memory,
    Handoff,
    Lesson,
    Observation,
}
names!(Kind { Memory = "memory", Handoff = "handoff", Lesson = "lesson", Observation = "observation" });

/// How certain a statement is: heard of → confirmed → hard constraint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Epistemic {
    Possible,
    Actual,
    Necessary,
}
names!(Epistemic { Possible = "possible", Actual = "actual", Necessary = "necessary" });

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Polarity {
    Affirmative,
    Negative,
    Conditional,
}
names!(Polarity { Affirmative = "affirmative", Negative = "negative", Conditional = "conditional" });

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Exposure {
    Visible,
    Quarantined,
    Sealed,
    Tombstoned,
}
names!(Exposure { Visible = "visible", Quarantined = "quarantined", Sealed = "sealed", Tombstoned = "tombstoned" });

impl Exposure {
    /// Sealed and tombstoned atoms have no content any more.
    pub fn destroyed(self) -> bool {
        matches!(self, Exposure::Sealed | Exposure::Tombstoned)
    }

    /// What history and export show instead of destroyed content.
    pub fn placeholder(self) -> Option<String> {
        self.destroyed()
            .then(|| format!("[governed payload hidden: {self}]"))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CorrectAction {
    Negate,
    ConfirmActual,
    ConfirmNecessary,
    Demote,
    Replace,
}
names!(CorrectAction {
    Negate = "negate",
    ConfirmActual = "confirm_actual",
    ConfirmNecessary = "confirm_necessary",
    Demote = "demote",
    Replace = "replace",
});

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GovernAction {
    Quarantine,
    Restore,
    Seal,
    Tombstone,
    DeriveLesson,
}
names!(GovernAction {
    Quarantine = "quarantine",
    Restore = "restore",
    Seal = "seal",
    Tombstone = "tombstone",
    DeriveLesson = "derive_lesson",
});

/// One self-contained statement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Atom {
    pub id: AtomId,
    /// Empty once the atom is sealed or tombstoned: the bytes are gone.
    pub content: String,
    pub kind: Kind,
    pub source: String,
    pub scope: Scope,
    pub epistemic: Epistemic,
    pub polarity: Polarity,
    pub exposure: Exposure,
    pub negated: bool,
    pub superseded_by: Option<AtomId>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Atom {
    /// Active: could be recalled by default (visible, not negated, not superseded).
    pub fn active(&self) -> bool {
        self.exposure == Exposure::Visible && !self.negated && self.superseded_by.is_none()
    }

    /// The content as any interface may show it.
    pub fn shown_content(&self) -> String {
        self.exposure
            .placeholder()
            .unwrap_or_else(|| self.content.clone())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EdgeKind {
    /// new → old, written by `replace`.
    Supersedes,
    /// lesson → original, written by `derive_lesson`.
    DerivedLessonFrom,
}
names!(EdgeKind { Supersedes = "supersedes", DerivedLessonFrom = "derived_lesson_from" });

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Edge {
    pub from: AtomId,
    pub to: AtomId,
    pub kind: EdgeKind,
}

/// An audit record: a correction or an exposure change, with its reason.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Unique per event, so that import can tell events apart.
    pub id: AtomId,
    pub atom: AtomId,
    pub at: Timestamp,
    pub by: String,
    pub reason: String,
    pub change: Change,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Change {
    Correction {
        action: CorrectAction,
        /// e.g. `possible -> actual`, `active -> negated`, `superseded`.
        detail: String,
        /// For replace: the new atom.
        new_atom: Option<AtomId>,
    },
    Exposure {
        from: Exposure,
        to: Exposure,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_text() {
        let id = AtomId(0x0191_2345_6789_abcd_ef01_2345_6789_abcd);
        let text = id.to_string();
        assert_eq!(text.len(), 26);
        assert_eq!(text.parse::<AtomId>(), Ok(id));
        assert!("not-an-id".parse::<AtomId>().is_err());
    }

    #[test]
    fn names_parse_and_print() {
        for action in CorrectAction::ALL {
            assert_eq!(action.as_str().parse::<CorrectAction>(), Ok(*action));
        }
        assert!(
            "undo"
                .parse::<GovernAction>()
                .unwrap_err()
                .contains("derive_lesson")
        );
        assert_eq!(
            Exposure::Sealed.placeholder().unwrap(),
            "[governed payload hidden: sealed]"
        );
        assert_eq!(Exposure::Quarantined.placeholder(), None);
    }
}
