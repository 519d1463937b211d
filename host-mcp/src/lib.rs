//! `hmg-mcp`: the HMG MCP server. Six tools with exactly the fields of the
//! MCP reference (seed 003) — `memory_memorize`, `memory_recall`,
//! `memory_correct`, `memory_govern`, `memory_handoff`, `memory_stats` — over
//! the same engine component as the CLI (host-cli's [`Session`]).
//!
//! Scope is the server's: inferred from its working directory at start, and
//! any scope an agent passes is overridden. Engine calls run on a blocking
//! thread under a per-call timeout; a refusal is a normal result with
//! `effect: "rejected"`, a broken store a tool error.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hmg_cli::api::{self, CorrectAction, GovernAction};
use hmg_cli::{Session, render};
use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ErrorData as McpError};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The optional scope every tool accepts (an agent does not pass it; the
/// server injects its own and overrides this).
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ScopeInput {
    /// Tenant: the local user name, read from the store configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<String>,
    /// Workspace, usually the git remote owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Repository name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// Branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct MemorizeInput {
    /// The memory: one self-contained sentence, in the language of the user's conversation.
    pub content: String,
    /// Attribution: `user` (said by the user, more authoritative), `agent` (summarised by the agent), or a custom label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Injected by the server; do not pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ScopeInput>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RecallInput {
    /// What to look for: a noun phrase keeping the key entities (people, projects, technologies, file names) works best.
    pub query: String,
    /// Most results to return (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_results: Option<u32>,
    /// Also return memories that were negated (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_negated: Option<bool>,
    /// Injected by the server; do not pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ScopeInput>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CorrectInput {
    /// The atom to correct: an `atom_id` from memory_recall.
    pub target_atom: String,
    /// `negate` (no longer true, no replacement), `confirm_actual` (possible → confirmed), `confirm_necessary` (→ hard constraint), `demote` (→ possible), `replace` (new content supersedes this atom).
    pub action: CorrectAction,
    /// Why; written to the audit trail.
    pub reason: String,
    /// Required for `replace`: the new content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_content: Option<String>,
    /// Defaults to the target atom's scope; do not pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ScopeInput>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct GovernInput {
    /// The atom to govern.
    pub target_atom: String,
    /// `quarantine` (hide, keep content; undo with `restore`), `seal` (destroy content), `tombstone` (destroy everything but id and timestamps), `derive_lesson` (keep a redacted lesson as a new atom, seal the original).
    pub action: GovernAction,
    /// Why; written to the audit trail.
    pub reason: String,
    /// Required for `derive_lesson`: the redacted lesson to keep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lesson_content: Option<String>,
    /// Defaults to the target atom's scope; do not pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ScopeInput>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct HandoffInput {
    /// The handoff: what was done / why / how it was verified / risks / next steps (free form).
    pub summary: String,
    /// Attribution (default `agent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Injected by the server; do not pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ScopeInput>,
}

/// The server: one open store, shared by all tool calls.
#[derive(Clone)]
pub struct HmgServer {
    session: Arc<Mutex<Session>>,
    timeout: Duration,
    tool_router: ToolRouter<HmgServer>,
}

fn internal(message: impl std::fmt::Display) -> McpError {
    McpError::internal_error(message.to_string(), None)
}

/// Structured content plus the same result as readable text.
fn reply<T: Serialize>(value: &T, text: String) -> Result<CallToolResult, McpError> {
    let json = serde_json::to_value(value).map_err(internal)?;
    let mut result = CallToolResult::structured(json);
    result.content = vec![ContentBlock::text(text)];
    Ok(result)
}

impl HmgServer {
    pub fn new(session: Session, timeout: Duration) -> HmgServer {
        HmgServer {
            session: Arc::new(Mutex::new(session)),
            timeout,
            tool_router: Self::tool_router(),
        }
    }

    /// Runs one engine call on a blocking thread, bounded by the timeout.
    async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Session) -> anyhow::Result<T> + Send + 'static,
    ) -> Result<T, McpError> {
        let session = self.session.clone();
        let work = tokio::task::spawn_blocking(move || {
            let mut guard = session.lock().unwrap_or_else(|e| e.into_inner());
            f(&mut guard)
        });
        match tokio::time::timeout(self.timeout, work).await {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(e))) => Err(internal(format!("{e:#}"))),
            Ok(Err(join)) => Err(internal(format!("the engine call failed: {join}"))),
            Err(_) => Err(internal(format!(
                "the engine call ran past the {} ms timeout",
                self.timeout.as_millis()
            ))),
        }
    }
}

#[tool_router]
impl HmgServer {
    /// Writes one long-term memory. No need to recall first: exact duplicates are detected (`no_op`).
    #[tool(
        name = "memory_memorize",
        output_schema = schema_for_output::<api::MemorizeResult>(),
        description = "Write one long-term memory: a single self-contained statement (a decision, fact, preference or constraint), in the user's language. Exact duplicates are not stored twice (effect no_op). Certainty and polarity are inferred from the wording; structured secrets are redacted. If a similar memory is already in context, update it with memory_correct (replace) instead of adding a new one."
    )]
    async fn memory_memorize(
        &self,
        Parameters(input): Parameters<MemorizeInput>,
    ) -> Result<CallToolResult, McpError> {
        let r = self
            .call(move |s| {
                s.memorize(&api::MemorizeRequest {
                    content: input.content,
                    source: input.source,
                    scope: s.scope.clone(),
                })
            })
            .await?;
        reply(&r, render::memorize(&r))
    }

    #[tool(
        name = "memory_recall",
        output_schema = schema_for_output::<api::RecallResult>(),
        description = "Search long-term memories in natural language. Use a noun phrase that keeps the key entities (people, projects, technologies, file names); questions work too. Returns atoms best first with atom_id (for memory_correct / memory_govern), content, score 0.0-1.0, created_at and source. One call is usually enough: semantic, keyword, time and correction-chain signals are combined inside."
    )]
    async fn memory_recall(
        &self,
        Parameters(input): Parameters<RecallInput>,
    ) -> Result<CallToolResult, McpError> {
        let r = self
            .call(move |s| {
                s.recall(&api::RecallRequest {
                    query: input.query,
                    max_results: input.max_results,
                    include_negated: input.include_negated,
                    scope: s.scope.clone(),
                    remote: None,
                    explain: None,
                })
            })
            .await?;
        reply(&r, render::recall(&r))
    }

    #[tool(
        name = "memory_correct",
        output_schema = schema_for_output::<api::CorrectResult>(),
        description = "Correct a memory, append-only (history keeps everything). Content changes -> replace (new_content required; the new atom supersedes the old). The thing no longer holds and has no replacement -> negate. Only certainty changes -> confirm_actual, confirm_necessary or demote (demote goes straight to possible). To undo a wrong negate or replace, replace that atom again."
    )]
    async fn memory_correct(
        &self,
        Parameters(input): Parameters<CorrectInput>,
    ) -> Result<CallToolResult, McpError> {
        let r = self
            .call(move |s| {
                s.correct(&api::CorrectRequest {
                    target_atom: input.target_atom,
                    action: input.action,
                    reason: input.reason,
                    new_content: input.new_content,
                    scope: s.scope.clone(),
                    by: None,
                })
            })
            .await?;
        reply(&r, render::correct(&r))
    }

    #[tool(
        name = "memory_govern",
        output_schema = schema_for_output::<api::GovernResult>(),
        description = "Govern whether a memory may exist. quarantine hides it and keeps the content (reversible with restore); seal destroys the content; tombstone destroys everything but id and timestamps; derive_lesson keeps a redacted lesson (lesson_content required) as a new atom and seals the original. Use derive_lesson when something sensitive was stored and a reusable lesson remains, seal or tombstone otherwise."
    )]
    async fn memory_govern(
        &self,
        Parameters(input): Parameters<GovernInput>,
    ) -> Result<CallToolResult, McpError> {
        let r = self
            .call(move |s| {
                s.govern(&api::GovernRequest {
                    target_atom: input.target_atom,
                    action: input.action,
                    reason: input.reason,
                    lesson_content: input.lesson_content,
                    scope: s.scope.clone(),
                    by: None,
                })
            })
            .await?;
        reply(&r, render::govern(&r))
    }

    #[tool(
        name = "memory_handoff",
        output_schema = schema_for_output::<api::HandoffResult>(),
        description = "Write the session handoff: what was done, why, how it was verified, risks, next steps. Call it when a task or milestone ends or the session is about to end; the next session's start brief shows the newest handoffs first. Use memory_memorize for single facts."
    )]
    async fn memory_handoff(
        &self,
        Parameters(input): Parameters<HandoffInput>,
    ) -> Result<CallToolResult, McpError> {
        let r = self
            .call(move |s| {
                s.handoff(&api::HandoffRequest {
                    summary: input.summary,
                    source: input.source,
                    scope: s.scope.clone(),
                })
            })
            .await?;
        reply(&r, render::handoff(&r))
    }

    #[tool(
        name = "memory_stats",
        output_schema = schema_for_output::<api::StoreStats>(),
        description = "Overview of what this server's scope sees: atom and edge counts, index coverage (semantic, keyword, temporal, categorical) and the snapshot version, which increases with every write. Mostly for the session-start hook; agents rarely need it."
    )]
    async fn memory_stats(&self) -> Result<CallToolResult, McpError> {
        let r = self.call(|s| s.stats(&s.visible())).await?;
        reply(&r, render::stats(&r))
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "hmg-mcp",
    instructions = "HMG long-term memory. Recall before answering questions about earlier decisions; memorize decisions, facts and constraints as single statements; correct (replace/negate) instead of duplicating; hand off at the end of a session. Scope is set by the server."
)]
impl ServerHandler for HmgServer {}
