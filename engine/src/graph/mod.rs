//! The knowledge graph (SPEC §4): entities and triples extracted from every
//! atom at write time, without a model, in Chinese (both scripts) and
//! English.
//!
//! - [`lexicon`] — known names with types and aliases (`lexicon.txt`);
//! - [`patterns`] — names found by shape (paths, URLs, identifiers, quoted
//!   and capitalised names, Chinese person names) and the junk filter;
//! - [`relations`] — relation templates in both languages;
//! - [`fold`] — the folding that makes aliases one entity;
//! - [`index`] — the per-tenant graph derived from the atoms (and the
//!   triples callers supplied), kept current per transaction.
//!
//! Extraction is a pure function of the text: the graph is an index, rebuilt
//! on open like the keyword index, so an entity or triple that came only
//! from destroyed content exists in no file. Triples a caller supplied are
//! stored (log records and a snapshot frame) with their atom and erased
//! with it.

pub mod fold;
pub mod index;
pub mod lexicon;
pub mod patterns;
pub mod relations;

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

static REDACTION: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"\[REDACTED:[a-z0-9_-]+\]").expect("marker pattern"));

/// What an entity is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum EntityType {
    Person,
    Organisation,
    Project,
    Technology,
    Product,
    Service,
    File,
    Place,
    Code,
    Other,
}

impl EntityType {
    pub const ALL: &'static [EntityType] = &[
        EntityType::Person,
        EntityType::Organisation,
        EntityType::Project,
        EntityType::Technology,
        EntityType::Product,
        EntityType::Service,
        EntityType::File,
        EntityType::Place,
        EntityType::Code,
        EntityType::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EntityType::Person => "person",
            EntityType::Organisation => "organisation",
            EntityType::Project => "project",
            EntityType::Technology => "technology",
            EntityType::Product => "product",
            EntityType::Service => "service",
            EntityType::File => "file",
            EntityType::Place => "place",
            EntityType::Code => "code",
            EntityType::Other => "other",
        }
    }

    pub fn parse(s: &str) -> Option<EntityType> {
        EntityType::ALL.iter().copied().find(|t| t.as_str() == s)
    }

    /// When two extractors disagree on a name, the more specific type wins.
    fn rank(self) -> u8 {
        match self {
            EntityType::Other => 0,
            EntityType::Code => 1,
            _ => 2,
        }
    }
}

/// One entity named in a text.
#[derive(Clone, Debug, PartialEq)]
pub struct Mention {
    /// The name to show: the lexicon's canonical name, or the text's.
    pub name: String,
    /// Identity: the folded name (aliases share it).
    pub key: String,
    pub kind: EntityType,
    /// The lexicon subtype (`language`, `database`…), empty otherwise.
    pub subtype: String,
    /// Byte range in the text.
    pub start: usize,
    pub end: usize,
}

/// Every entity named in `text`, in text order, without overlaps:
/// dictionary names first, then names found by shape.
pub fn mentions(text: &str) -> Vec<Mention> {
    // Redaction markers (`[REDACTED:password]`) are not names.
    let masked;
    let text = if text.contains("[REDACTED:") {
        masked = REDACTION.replace_all(text, |c: &regex::Captures<'_>| " ".repeat(c[0].len()));
        &*masked
    } else {
        text
    };
    let folded = fold::Folded::new(text);
    let lexicon = &*lexicon::LEXICON;
    let mut out: Vec<Mention> = lexicon
        .find(text, &folded)
        .into_iter()
        .map(|f| {
            let entry = &lexicon.entries[f.entry];
            Mention {
                name: entry.name.clone(),
                key: fold::key(&entry.name),
                kind: entry.kind,
                subtype: entry.subtype.clone(),
                start: f.start,
                end: f.end,
            }
        })
        .collect();
    let mut shaped = patterns::find(text);
    // A path or a URL is one thing: a known name inside it ("yaml" in
    // config/settings.yaml, "https" in a link) is no mention of its own.
    let whole: Vec<(usize, usize)> = shaped
        .iter()
        .filter(|s| {
            matches!(s.kind, EntityType::File | EntityType::Service)
                && s.end - s.start > s.name.len().min(4)
        })
        .map(|s| (s.start, s.end))
        .collect();
    out.retain(|m| {
        !whole
            .iter()
            .any(|&(s, e)| s <= m.start && m.end <= e && (s, e) != (m.start, m.end))
    });
    // Longer candidates first, so "Project Alpha" wins over "Alpha".
    shaped.sort_by_key(|s| {
        (
            std::cmp::Reverse(s.end - s.start),
            std::cmp::Reverse(s.kind.rank()),
        )
    });
    for s in shaped {
        let overlaps = out.iter().any(|m| s.start < m.end && m.start < s.end);
        if overlaps {
            continue;
        }
        // A shaped name that is a lexicon alias takes the lexicon's identity.
        let mention = match lexicon.lookup(&s.name) {
            Some(entry) => Mention {
                name: entry.name.clone(),
                key: fold::key(&entry.name),
                kind: entry.kind,
                subtype: entry.subtype.clone(),
                start: s.start,
                end: s.end,
            },
            None => Mention {
                key: fold::key(&s.name),
                name: s.name,
                kind: s.kind,
                subtype: String::new(),
                start: s.start,
                end: s.end,
            },
        };
        out.push(mention);
    }
    out.sort_by_key(|m| m.start);
    out
}

/// The entities of a text, each once (first mention wins), as
/// `extract_entities` answers.
pub fn entities(text: &str) -> Vec<Mention> {
    let mut seen = std::collections::HashSet::new();
    mentions(text)
        .into_iter()
        .filter(|m| seen.insert(m.key.clone()))
        .collect()
}

/// Whether `at` starts a sentence: only spaces and opening quotes since
/// the last sentence end or the text start.
pub(crate) fn sentence_start(text: &str, at: usize) -> bool {
    for c in text[..at].chars().rev() {
        if c.is_whitespace() || "\"'“‘(「『".contains(c) {
            continue;
        }
        return ".!?。！？\n:：".contains(c);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<(String, EntityType)> {
        entities(text)
            .into_iter()
            .map(|m| (m.name, m.kind))
            .collect()
    }

    #[test]
    fn chinese_and_english_text() {
        assert_eq!(
            names("專案用 PostgreSQL 16 做主資料庫，不用 MongoDB"),
            [
                ("PostgreSQL".into(), EntityType::Technology),
                ("MongoDB".into(), EntityType::Technology)
            ]
        );
        assert_eq!(
            names("部署在 k8s 上，用 Postgres 和 redis"),
            [
                ("Kubernetes".into(), EntityType::Technology),
                ("PostgreSQL".into(), EntityType::Technology),
                ("Redis".into(), EntityType::Technology)
            ]
        );
        let found = names("Caroline moved the auth service from AWS Lambda to Cloud Run last week");
        assert!(
            found.contains(&("AWS Lambda".into(), EntityType::Service)),
            "{found:?}"
        );
        assert!(
            found.contains(&("Cloud Run".into(), EntityType::Service)),
            "{found:?}"
        );
    }

    #[test]
    fn redaction_markers_are_not_entities() {
        let found = names("staging 連線字串 [REDACTED:connection_string] on Redis");
        assert_eq!(found, [("Redis".into(), EntityType::Technology)]);
        let found = names("token [REDACTED:github-pat] and [REDACTED:generic-api-key] on Redis");
        assert_eq!(found, [("Redis".into(), EntityType::Technology)]);
    }

    #[test]
    fn one_entity_per_alias_group() {
        let found = entities("Postgres, PostgreSQL and postgres are one");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].key, "postgresql");
    }
}
