//! Human-readable text for every result: the CLI's default output and the
//! text block beside MCP's structured content.

use crate::api::{self, Effect};

pub fn effect_line(effect: Effect, id: Option<&str>, reason: Option<&str>) -> String {
    match (effect, id, reason) {
        (Effect::Rejected, _, reason) => format!("rejected: {}", reason.unwrap_or("")),
        (Effect::NoOp, id, reason) => {
            format!("no_op {} ({})", id.unwrap_or(""), reason.unwrap_or(""))
        }
        (Effect::Applied, id, _) => format!("applied {}", id.unwrap_or("")),
    }
}

pub fn memorize(r: &api::MemorizeResult) -> String {
    effect_line(r.effect, r.atom_id.as_deref(), r.reason.as_deref())
}

pub fn handoff(r: &api::HandoffResult) -> String {
    effect_line(r.effect, r.atom_id.as_deref(), r.reason.as_deref())
}

pub fn correct(r: &api::CorrectResult) -> String {
    match &r.new_atom_id {
        Some(new) => format!("applied: {} superseded by {new}", r.target_atom),
        None => effect_line(r.effect, Some(&r.target_atom), r.reason.as_deref()),
    }
}

pub fn govern(r: &api::GovernResult) -> String {
    match &r.lesson_atom_id {
        Some(lesson) => format!(
            "applied: lesson {lesson} derived from {} (sealed)",
            r.target_atom
        ),
        None => effect_line(r.effect, Some(&r.target_atom), r.reason.as_deref()),
    }
}

pub fn stats(s: &api::StoreStats) -> String {
    format!(
        "atoms {}  edges {}  snapshot_version {}\nindexes: semantic {}  keyword {}  temporal {}  categorical {}\nmodel: {}",
        s.atoms,
        s.edges,
        s.snapshot_version,
        s.indexes.semantic,
        s.indexes.keyword,
        s.indexes.temporal,
        s.indexes.categorical,
        s.model
    )
}

pub fn import(r: &api::ImportResult) -> String {
    match &r.reason {
        Some(reason) => format!("rejected: {reason}"),
        None => format!(
            "imported: {} atoms added, {} already present, {} edges, {} events",
            r.atoms_added, r.atoms_skipped, r.edges_added, r.events_added
        ),
    }
}

pub fn recall(r: &api::RecallResult) -> String {
    if let Some(reason) = &r.reason {
        return format!("rejected: {reason}");
    }
    if r.atoms.is_empty() {
        return "no memories found".into();
    }
    let mut out = Vec::new();
    for a in &r.atoms {
        let negated = if a.negated { " [negated]" } else { "" };
        out.push(format!(
            "{:.2}  {}{}\n      {} · {} · {} · {}/{}",
            a.score,
            a.content,
            negated,
            a.atom_id,
            a.created_at.get(..10).unwrap_or(&a.created_at),
            a.source,
            a.kind.as_str(),
            a.epistemic.as_str()
        ));
        for s in a.explain.iter().flatten() {
            out.push(format!(
                "      {:<12} value {:.3}  contribution {:.3}",
                s.name, s.value, s.contribution
            ));
        }
    }
    out.join("\n")
}

pub fn history(r: &api::HistoryResult) -> String {
    let Some(current) = &r.current else {
        return format!("rejected: {}", r.reason.as_deref().unwrap_or("not found"));
    };
    let mut out = vec![
        format!("{}  {}", current.atom_id, current.content),
        format!(
            "  {} · {} · {} · {} · source {} · scope {}",
            current.kind.as_str(),
            current.epistemic.as_str(),
            current.polarity.as_str(),
            current.exposure_state.as_str(),
            current.source,
            current.scope.display()
        ),
        format!(
            "  created {}  updated {}{}",
            current.created_at,
            current.updated_at,
            if current.negated { "  [negated]" } else { "" }
        ),
    ];
    let rel = &r.relations;
    for (name, list) in [
        ("supersedes", &rel.supersedes),
        ("superseded_by", &rel.superseded_by),
        ("related_lessons", &rel.related_lessons),
    ] {
        if !list.is_empty() {
            out.push(format!("  {name}: {}", list.join(", ")));
        }
    }
    for c in &r.corrections {
        out.push(format!(
            "  correction {} ({}) at {} by {}: {}",
            c.action.as_str(),
            c.change,
            c.at,
            c.by,
            c.reason
        ));
    }
    for e in &r.exposure_history {
        out.push(format!(
            "  exposure {} -> {} at {} by {}: {}",
            e.from.as_str(),
            e.to.as_str(),
            e.at,
            e.by,
            e.reason
        ));
    }
    out.join("\n")
}
