//! The hosts' request and result types: serde (snake_case JSON, exactly the
//! seed's field names) and JSON Schema for MCP. Converted to and from the
//! WIT bindings in `component.rs` only.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a memory lives. Hosts infer it; an agent never needs to pass it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Scope {
    /// Tenant: the store owner / local user name.
    pub tenant_id: String,
    /// Workspace, usually the git remote owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Repository name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// Branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Optional session: memories bound to it are seen only inside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

impl Scope {
    /// This scope cut to `{tenant}` (personal) or `{tenant, workspace}` (organisation).
    pub fn truncated(&self, keep_workspace: bool) -> Scope {
        Scope {
            tenant_id: self.tenant_id.clone(),
            workspace: if keep_workspace {
                self.workspace.clone()
            } else {
                None
            },
            ..Scope::default()
        }
    }

    pub fn display(&self) -> String {
        let mut out = self.tenant_id.clone();
        for part in [&self.workspace, &self.repository, &self.branch]
            .into_iter()
            .flatten()
        {
            out.push('/');
            out.push_str(part);
        }
        if let Some(s) = &self.session {
            out.push('#');
            out.push_str(s);
        }
        out
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    Applied,
    NoOp,
    Rejected,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Memory,
    Handoff,
    Lesson,
    Observation,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Epistemic {
    Possible,
    Actual,
    Necessary,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Polarity {
    Affirmative,
    Negative,
    Conditional,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExposureState {
    Visible,
    Quarantined,
    Sealed,
    Tombstoned,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum CorrectAction {
    /// Mark as no longer true, with no replacement (hidden from recall).
    Negate,
    /// possible → actual: confirmed true.
    ConfirmActual,
    /// possible/actual → necessary: a hard constraint.
    ConfirmNecessary,
    /// actual/necessary → possible (straight down).
    Demote,
    /// A new atom with new_content supersedes this one.
    Replace,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum GovernAction {
    /// Hide from recall, keep content; reversible with restore.
    Quarantine,
    /// Bring a quarantined atom back.
    Restore,
    /// Destroy the content; history shows a placeholder. Irreversible.
    Seal,
    /// Destroy content and everything but id and timestamps. Irreversible.
    Tombstone,
    /// Write a redacted lesson atom, then seal the original. Irreversible.
    DeriveLesson,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct MemorizeRequest {
    /// The memory: one self-contained statement, in the user's language.
    pub content: String,
    /// Attribution: `user` (said by the user, more authoritative), `agent` (default), or any label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Injected by the host; an agent does not pass it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MemorizeResult {
    /// The atom's ULID (the existing atom's on dedup).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atom_id: Option<String>,
    /// `applied` (new), `no_op` (exact duplicate), `rejected` (refused at admission).
    pub effect: Effect,
    /// Why it was deduplicated or refused (absent when applied).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The existing atom this duplicates (only for no_op).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deduped_with: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct RecallRequest {
    /// What to look for; noun phrases with key entities work best, questions work too.
    pub query: String,
    /// Most results to return (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_results: Option<u32>,
    /// Also return negated memories (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_negated: Option<bool>,
    /// Injected by the host; an agent does not pass it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// The caller acts on someone else's store: personal memories stay hidden.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<bool>,
    /// Show each signal's contribution per hit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Signal {
    pub name: String,
    pub value: f64,
    pub contribution: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecalledAtom {
    /// Use it with correct / govern.
    pub atom_id: String,
    pub content: String,
    /// Relevance, 0.0–1.0.
    pub score: f64,
    /// RFC 3339.
    pub created_at: String,
    pub source: String,
    pub kind: Kind,
    pub epistemic: Epistemic,
    pub polarity: Polarity,
    pub negated: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub explain: Vec<Signal>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecallResult {
    /// Best first.
    pub atoms: Vec<RecalledAtom>,
    /// Why the query was refused, if it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CorrectRequest {
    /// The atom to correct (an atom_id from recall).
    pub target_atom: String,
    pub action: CorrectAction,
    /// Why; kept in the audit trail.
    pub reason: String,
    /// Required for replace: the new content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_content: Option<String>,
    /// Defaults to the caller's scope; an agent does not pass it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CorrectResult {
    /// `applied` or `rejected`.
    pub effect: Effect,
    pub target_atom: String,
    /// The new atom (replace only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_atom_id: Option<String>,
    /// Why it was refused (rejected only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct GovernRequest {
    /// The atom to govern.
    pub target_atom: String,
    pub action: GovernAction,
    /// Why; kept in the audit trail.
    pub reason: String,
    /// Required for derive_lesson: the redacted lesson to keep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lesson_content: Option<String>,
    /// Defaults to the caller's scope; an agent does not pass it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GovernResult {
    /// `applied` or `rejected`.
    pub effect: Effect,
    pub target_atom: String,
    /// The lesson atom (derive_lesson only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lesson_atom_id: Option<String>,
    /// Why it was refused (rejected only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct HandoffRequest {
    /// What was done / why / verification / risks / next steps.
    pub summary: String,
    /// Attribution (default `agent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Injected by the host; an agent does not pass it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HandoffResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atom_id: Option<String>,
    /// `applied` or `rejected` (`no_op` for an exact repeat).
    pub effect: Effect,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AtomView {
    pub atom_id: String,
    pub content: String,
    pub kind: Kind,
    pub source: String,
    pub scope: Scope,
    pub epistemic: Epistemic,
    pub polarity: Polarity,
    pub exposure_state: ExposureState,
    pub negated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Relations {
    pub supersedes: Vec<String>,
    pub superseded_by: Vec<String>,
    pub related_lessons: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CorrectionRecord {
    pub action: CorrectAction,
    pub reason: String,
    pub at: String,
    pub by: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_atom_id: Option<String>,
    pub change: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExposureRecord {
    pub from: ExposureState,
    pub to: ExposureState,
    pub reason: String,
    pub at: String,
    pub by: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HistoryResult {
    pub current: Option<AtomView>,
    pub relations: Relations,
    pub corrections: Vec<CorrectionRecord>,
    pub exposure_history: Vec<ExposureRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IndexCoverage {
    pub semantic: u64,
    pub keyword: u64,
    pub temporal: u64,
    pub categorical: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StoreStats {
    pub atoms: u64,
    pub edges: u64,
    pub indexes: IndexCoverage,
    pub snapshot_version: u64,
    /// The embedding model's fingerprint, or why recall is keyword-only.
    pub model: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BriefResult {
    pub text: String,
    pub atom_ids: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportResult {
    pub atoms_added: u64,
    pub atoms_skipped: u64,
    pub edges_added: u64,
    pub events_added: u64,
    pub rejected_lines: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Options fixed when a store is opened.
#[derive(Clone, Debug, Default)]
pub struct StoreConfig {
    pub max_content_bytes: Option<u32>,
    pub compact_log_bytes: Option<u64>,
    pub brief_budget_chars: Option<u32>,
    /// The embedding model's directory on the host (granted read-only to the
    /// engine); `None`: keyword-only recall.
    pub model_dir: Option<std::path::PathBuf>,
}
