//! The host adapter: the only file that sees the wasmtime `bindgen!` types.
//! Converts [`crate::api`] records to WIT and back.

use crate::api;

wasmtime::component::bindgen!({
    path: "../wit",
    world: "engine",
});

pub use Engine as Bindings;
pub use exports::hmg::memory::types as wit;

pub fn scope(s: &api::Scope) -> wit::Scope {
    wit::Scope {
        tenant_id: s.tenant_id.clone(),
        workspace: s.workspace.clone(),
        repository: s.repository.clone(),
        branch: s.branch.clone(),
        session: s.session.clone(),
    }
}

fn api_scope(s: wit::Scope) -> api::Scope {
    api::Scope {
        tenant_id: s.tenant_id,
        workspace: s.workspace,
        repository: s.repository,
        branch: s.branch,
        session: s.session,
    }
}

pub fn config(c: &api::StoreConfig) -> wit::StoreConfig {
    wit::StoreConfig {
        max_content_bytes: c.max_content_bytes,
        compact_log_bytes: c.compact_log_bytes,
        brief_budget_chars: c.brief_budget_chars,
        model_dir: c.model_dir.as_ref().map(|_| GUEST_MODEL.to_owned()),
    }
}

/// Where the component sees the model directory.
pub const GUEST_MODEL: &str = "/model";

fn effect(e: wit::Effect) -> api::Effect {
    match e {
        wit::Effect::Applied => api::Effect::Applied,
        wit::Effect::NoOp => api::Effect::NoOp,
        wit::Effect::Rejected => api::Effect::Rejected,
    }
}

fn kind(k: wit::Kind) -> api::Kind {
    match k {
        wit::Kind::Memory => api::Kind::Memory,
        wit::Kind::Handoff => api::Kind::Handoff,
        wit::Kind::Lesson => api::Kind::Lesson,
        wit::Kind::Observation => api::Kind::Observation,
    }
}

fn epistemic(e: wit::Epistemic) -> api::Epistemic {
    match e {
        wit::Epistemic::Possible => api::Epistemic::Possible,
        wit::Epistemic::Actual => api::Epistemic::Actual,
        wit::Epistemic::Necessary => api::Epistemic::Necessary,
    }
}

fn polarity(p: wit::Polarity) -> api::Polarity {
    match p {
        wit::Polarity::Affirmative => api::Polarity::Affirmative,
        wit::Polarity::Negative => api::Polarity::Negative,
        wit::Polarity::Conditional => api::Polarity::Conditional,
    }
}

fn exposure(e: wit::ExposureState) -> api::ExposureState {
    match e {
        wit::ExposureState::Visible => api::ExposureState::Visible,
        wit::ExposureState::Quarantined => api::ExposureState::Quarantined,
        wit::ExposureState::Sealed => api::ExposureState::Sealed,
        wit::ExposureState::Tombstoned => api::ExposureState::Tombstoned,
    }
}

pub fn correct_action(a: api::CorrectAction) -> wit::CorrectAction {
    match a {
        api::CorrectAction::Negate => wit::CorrectAction::Negate,
        api::CorrectAction::ConfirmActual => wit::CorrectAction::ConfirmActual,
        api::CorrectAction::ConfirmNecessary => wit::CorrectAction::ConfirmNecessary,
        api::CorrectAction::Demote => wit::CorrectAction::Demote,
        api::CorrectAction::Replace => wit::CorrectAction::Replace,
    }
}

fn api_correct_action(a: wit::CorrectAction) -> api::CorrectAction {
    match a {
        wit::CorrectAction::Negate => api::CorrectAction::Negate,
        wit::CorrectAction::ConfirmActual => api::CorrectAction::ConfirmActual,
        wit::CorrectAction::ConfirmNecessary => api::CorrectAction::ConfirmNecessary,
        wit::CorrectAction::Demote => api::CorrectAction::Demote,
        wit::CorrectAction::Replace => api::CorrectAction::Replace,
    }
}

pub fn govern_action(a: api::GovernAction) -> wit::GovernAction {
    match a {
        api::GovernAction::Quarantine => wit::GovernAction::Quarantine,
        api::GovernAction::Restore => wit::GovernAction::Restore,
        api::GovernAction::Seal => wit::GovernAction::Seal,
        api::GovernAction::Tombstone => wit::GovernAction::Tombstone,
        api::GovernAction::DeriveLesson => wit::GovernAction::DeriveLesson,
    }
}

pub fn memorize_result(r: wit::MemorizeResult) -> api::MemorizeResult {
    api::MemorizeResult {
        atom_id: r.atom_id,
        effect: effect(r.effect),
        reason: r.reason,
        deduped_with: r.deduped_with,
    }
}

pub fn recall_result(r: wit::RecallResult) -> api::RecallResult {
    let atoms = r
        .atoms
        .into_iter()
        .map(|a| api::RecalledAtom {
            atom_id: a.atom_id,
            content: a.content,
            score: a.score,
            created_at: a.created_at,
            source: a.source,
            kind: kind(a.kind),
            epistemic: epistemic(a.epistemic),
            polarity: polarity(a.polarity),
            negated: a.negated,
            explain: a
                .explain
                .into_iter()
                .map(|s| api::Signal {
                    name: s.name,
                    value: s.value,
                    contribution: s.contribution,
                })
                .collect(),
        })
        .collect();
    api::RecallResult {
        atoms,
        reason: r.reason,
    }
}

pub fn correct_result(r: wit::CorrectResult) -> api::CorrectResult {
    api::CorrectResult {
        effect: effect(r.effect),
        target_atom: r.target_atom,
        new_atom_id: r.new_atom_id,
        reason: r.reason,
    }
}

pub fn govern_result(r: wit::GovernResult) -> api::GovernResult {
    api::GovernResult {
        effect: effect(r.effect),
        target_atom: r.target_atom,
        lesson_atom_id: r.lesson_atom_id,
        reason: r.reason,
    }
}

pub fn handoff_result(r: wit::HandoffResult) -> api::HandoffResult {
    api::HandoffResult {
        atom_id: r.atom_id,
        effect: effect(r.effect),
        reason: r.reason,
    }
}

fn atom_view(v: wit::AtomView) -> api::AtomView {
    api::AtomView {
        atom_id: v.atom_id,
        content: v.content,
        kind: kind(v.kind),
        source: v.source,
        scope: api_scope(v.scope),
        epistemic: epistemic(v.epistemic),
        polarity: polarity(v.polarity),
        exposure_state: exposure(v.exposure_state),
        negated: v.negated,
        superseded_by: v.superseded_by,
        created_at: v.created_at,
        updated_at: v.updated_at,
    }
}

pub fn history_result(r: wit::HistoryResult) -> api::HistoryResult {
    api::HistoryResult {
        current: r.current.map(atom_view),
        relations: api::Relations {
            supersedes: r.relations.supersedes,
            superseded_by: r.relations.superseded_by,
            related_lessons: r.relations.related_lessons,
        },
        corrections: r
            .corrections
            .into_iter()
            .map(|c| api::CorrectionRecord {
                action: api_correct_action(c.action),
                reason: c.reason,
                at: c.at,
                by: c.by,
                new_atom_id: c.new_atom_id,
                change: c.change,
            })
            .collect(),
        exposure_history: r
            .exposure_history
            .into_iter()
            .map(|e| api::ExposureRecord {
                from: exposure(e.from),
                to: exposure(e.to),
                reason: e.reason,
                at: e.at,
                by: e.by,
            })
            .collect(),
        reason: r.reason,
    }
}

pub fn stats(s: wit::StoreStats) -> api::StoreStats {
    api::StoreStats {
        atoms: s.atoms,
        edges: s.edges,
        indexes: api::IndexCoverage {
            semantic: s.indexes.semantic,
            keyword: s.indexes.keyword,
            temporal: s.indexes.temporal,
            categorical: s.indexes.categorical,
        },
        snapshot_version: s.snapshot_version,
        model: s.model,
    }
}

pub fn brief_result(r: wit::BriefResult) -> api::BriefResult {
    api::BriefResult {
        text: r.text,
        atom_ids: r.atom_ids,
    }
}

pub fn import_result(r: wit::ImportResult) -> api::ImportResult {
    api::ImportResult {
        atoms_added: r.atoms_added,
        atoms_skipped: r.atoms_skipped,
        edges_added: r.edges_added,
        events_added: r.events_added,
        rejected_lines: r.rejected_lines,
        reason: r.reason,
    }
}

pub fn error(e: wit::Error) -> anyhow::Error {
    match e {
        wit::Error::Io(m) => anyhow::anyhow!("store I/O failed: {m}"),
        wit::Error::Corrupt(m) => anyhow::anyhow!("store is corrupt: {m}"),
        wit::Error::Invalid(m) => anyhow::anyhow!("invalid request: {m}"),
    }
}
