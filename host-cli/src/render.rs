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
    effect_line(r.effect, r.atom_id.as_deref(), r.reason.as_deref()) + &redacted(&r.redactions)
}

pub fn handoff(r: &api::HandoffResult) -> String {
    effect_line(r.effect, r.atom_id.as_deref(), r.reason.as_deref()) + &redacted(&r.redactions)
}

pub fn correct(r: &api::CorrectResult) -> String {
    let line = match &r.new_atom_id {
        Some(new) => format!("applied: {} superseded by {new}", r.target_atom),
        None => effect_line(r.effect, Some(&r.target_atom), r.reason.as_deref()),
    };
    line + &redacted(&r.redactions)
}

pub fn govern(r: &api::GovernResult) -> String {
    let line = match &r.lesson_atom_id {
        Some(lesson) => format!(
            "applied: lesson {lesson} derived from {} (sealed)",
            r.target_atom
        ),
        None => effect_line(r.effect, Some(&r.target_atom), r.reason.as_deref()),
    };
    line + &redacted(&r.redactions)
}

/// What was hidden before storing, in plain words (a second line), or "".
pub fn redacted(redactions: &[api::Redaction]) -> String {
    if redactions.is_empty() {
        return String::new();
    }
    let what: Vec<String> = redactions
        .iter()
        .map(|r| {
            let plain = match r.kind.as_str() {
                "payment-card" => "payment card number",
                "national-id" => "national ID number",
                "email" => "e-mail address",
                "phone" => "phone number",
                "url-password" => "password in a URL",
                "private-key" => "private key",
                "config-secret" | "password-statement" | "cli-flag-secret"
                | "cli-user-password" => "password or key",
                "http-basic-auth" | "http-bearer-token" => "HTTP credential",
                _ => "token or key",
            };
            format!("{} {plain} ({})", r.count, r.kind)
        })
        .collect();
    format!("\nhidden before storing: {}", what.join(", "))
}

pub fn stats(s: &api::StoreStats) -> String {
    let mut text = format!(
        "atoms {}  edges {}  snapshot_version {}\nindexes: semantic {}  keyword {}  temporal {}  categorical {}\nmodel: {}",
        s.atoms,
        s.edges,
        s.snapshot_version,
        s.indexes.semantic,
        s.indexes.keyword,
        s.indexes.temporal,
        s.indexes.categorical,
        s.model
    );
    text.push_str(&kept_aside(&s.kept_aside));
    text
}

/// The files recovery kept aside, if any, with what to do about them.
pub fn kept_aside(kept: &[api::KeptFile]) -> String {
    if kept.is_empty() {
        return String::new();
    }
    let mut text = format!(
        "\nkept aside: {} file(s) of bytes recovery did not apply (inspect them; delete them when done — they may hold text a seal was meant to destroy):",
        kept.len()
    );
    for file in kept {
        text.push_str(&format!("\n  {}  {} bytes", file.name, file.bytes));
    }
    text
}

pub fn import(r: &api::ImportResult) -> String {
    match &r.reason {
        Some(reason) => format!("rejected: {reason}"),
        None => {
            format!(
                "imported: {} atoms added, {} already present, {} edges, {} events",
                r.atoms_added, r.atoms_skipped, r.edges_added, r.events_added
            ) + &redacted(&r.redactions)
        }
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
    if let Some(graph) = &r.graph {
        out.push(format!(
            "graph: {} entities, {} edges",
            graph.nodes.len(),
            graph.edges.len()
        ));
        out.extend(graph.nodes.iter().map(node_line));
        out.extend(graph.edges.iter().map(edge_line));
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
    for t in &r.triples {
        out.push(format!("  triple {}", edge_line(t).trim_start()));
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

pub fn entities(r: &api::ExtractResult) -> String {
    if r.entities.is_empty() {
        return "no entities".into();
    }
    r.entities
        .iter()
        .map(|e| format!("{:<12} {}", e.type_.as_str(), e.name))
        .collect::<Vec<_>>()
        .join("\n")
}

fn edge_line(e: &api::GraphEdge) -> String {
    let until = e
        .invalid_at
        .as_deref()
        .map(|t| format!(" (until {})", t.get(..10).unwrap_or(t)))
        .unwrap_or_default();
    format!(
        "  {} -[{}]-> {}  · {}{until}",
        e.source, e.relation, e.target, e.atom_id
    )
}

fn node_line(n: &api::GraphNode) -> String {
    format!(
        "  {} ({}, {} memories)",
        n.name,
        n.type_.as_str(),
        n.atom_count
    )
}

pub fn neighborhood(r: &api::NeighborhoodResult) -> String {
    if let Some(reason) = &r.reason {
        return format!("rejected: {reason}");
    }
    let mut out = vec![format!(
        "{} entities, {} edges{}",
        r.nodes.len(),
        r.edges.len(),
        if r.truncated { " (truncated)" } else { "" }
    )];
    out.extend(r.nodes.iter().map(node_line));
    out.extend(r.edges.iter().map(edge_line));
    out.join("\n")
}

pub fn path(r: &api::PathResult) -> String {
    if let Some(reason) = &r.reason {
        return format!("rejected: {reason}");
    }
    if !r.found {
        return "no path within the depth searched".into();
    }
    let names: Vec<&str> = r.nodes.iter().map(|n| n.name.as_str()).collect();
    let mut out = vec![names.join(" → ")];
    out.extend(r.edges.iter().map(edge_line));
    out.join("\n")
}

pub fn relate(r: &api::RelateResult) -> String {
    effect_line(r.effect, r.atom_id.as_deref(), r.reason.as_deref())
}

pub fn graph_view(r: &api::GraphViewResult) -> String {
    let mut out = vec![format!(
        "{} entities, {} mentions, {} triples{}",
        r.nodes.len(),
        r.mentions.len(),
        r.edges.len(),
        if r.truncated { " (truncated)" } else { "" }
    )];
    out.extend(r.nodes.iter().map(node_line));
    out.extend(r.edges.iter().map(edge_line));
    out.join("\n")
}

pub fn observe(r: &api::ObserveResult) -> String {
    if let Some(reason) = &r.reason {
        return format!("rejected: {reason}");
    }
    let mut out = Vec::new();
    if let Some(why) = r.excluded {
        out.push(format!("not captured: {}", why.as_str()));
    }
    if r.candidates.is_empty() && r.excluded.is_none() {
        out.push("nothing to capture".into());
    }
    for c in &r.candidates {
        let what = match (c.captured, c.effect) {
            (true, Some(api::Effect::Applied)) => {
                format!("captured {}", c.atom_id.as_deref().unwrap_or(""))
            }
            (_, Some(api::Effect::NoOp)) => "already known".into(),
            (true, None) => "would capture".into(),
            _ => "skipped".into(),
        };
        out.push(format!(
            "{:.2} {:<15} {what}: {}",
            c.confidence,
            c.signal.as_str(),
            c.content
        ));
        if let Some(reason) = &c.reason {
            out.push(format!("     {reason}"));
        }
    }
    out.join("\n") + &redacted(&r.redactions)
}
