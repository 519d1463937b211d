//! `hmg-mcp`: the HMG MCP server. The six tools of the MCP reference (seed
//! 003) with exactly its fields — `memory_memorize`, `memory_recall` (plus
//! `include_graph`), `memory_correct`, `memory_govern`, `memory_handoff`,
//! `memory_stats` — and two more: `memory_graph` (entities, neighbourhood,
//! path, relate) and `memory_observe` (capture from a conversation turn),
//! over the same engine component as the CLI (host-cli's [`Session`]).
//!
//! Scope is the server's: inferred from its working directory at start, and
//! any scope an agent passes is overridden. Engine calls queue for one
//! engine thread ([`worker`]); a refusal is a normal result with
//! `effect: "rejected"`, a broken store or a call that timed out in the
//! queue a tool error; writes queued behind the running one are embedded on
//! a second core meanwhile ([`prefetch`]). [`stdio`] is the transport: every
//! request line gets an answer, malformed and oversized ones included.

pub mod prefetch;
pub mod stdio;
pub mod worker;

use std::sync::Arc;
use std::thread::JoinHandle;
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
    /// Also return the entities of the query and the knowledge-graph edges around them (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_graph: Option<bool>,
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

/// What `memory_graph` does.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GraphOp {
    /// The entities named in `text`.
    Entities,
    /// The entities within `depth` hops of `entity` and the edges between them.
    Neighborhood,
    /// The shortest chain of edges from `entity` to `target`.
    Path,
    /// Store the triple `entity` -[`relation`]-> `target`.
    Relate,
}

impl GraphOp {
    fn as_str(self) -> &'static str {
        match self {
            GraphOp::Entities => "entities",
            GraphOp::Neighborhood => "neighborhood",
            GraphOp::Path => "path",
            GraphOp::Relate => "relate",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct GraphInput {
    /// `entities`, `neighborhood`, `path` or `relate`.
    pub op: GraphOp,
    /// For `entities`: the text to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// For `neighborhood`, `path` and `relate`: the (source) entity, by name or alias.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity: Option<String>,
    /// For `path` and `relate`: the other entity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// For `relate`: the relation, e.g. `uses`, `depends_on`, `works_on`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relation: Option<String>,
    /// For `neighborhood`: hops, 1-4 (default 1); for `path`: most hops searched, 1-6 (default 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// For `neighborhood`: most edges returned (default 50, at most 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ObserveInput {
    /// One conversation turn, as it was said.
    pub turn: String,
    /// `strict` (confidence ≥ 0.85), `standard` (≥ 0.65, default) or `relaxed` (≥ 0.50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<api::CaptureMode>,
    /// Who said it: `user` (default) or `assistant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<api::Speaker>,
}

/// The server: one open store, owned by the engine thread, shared by all
/// tool calls.
#[derive(Clone)]
pub struct HmgServer {
    worker: worker::Worker,
    /// Embeds queued writes' contents on a second core (None: one core, or
    /// no model).
    prefetch: Option<Arc<prefetch::Prefetch>>,
    tool_router: ToolRouter<HmgServer>,
}

/// What is left running once the server is built: the engine thread and the
/// embedding helper. [`Threads::join`] waits for both after the service ends.
pub struct Threads {
    engine: JoinHandle<()>,
    prefetch: Option<(Arc<prefetch::Prefetch>, JoinHandle<()>)>,
}

impl Threads {
    /// Lets the engine finish the call it is running, stops the helper, and
    /// says on stderr how many writes the helper embedded for.
    pub fn join(self) {
        let _ = self.engine.join();
        if let Some((prefetch, thread)) = self.prefetch {
            prefetch.stop();
            let _ = thread.join();
            let helped = prefetch.helped();
            if helped > 0 {
                eprintln!(
                    "hmg-mcp: note: {helped} contents of writes were embedded on a second core"
                );
            }
        }
    }
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
    /// The server and its engine thread (which ends once every clone of the
    /// server is dropped and the calls queued have been run or dropped).
    pub fn new(session: Session, timeout: Duration) -> (HmgServer, Threads) {
        let prefetch = session
            .embedder()
            .filter(|_| hmg_cli::second_core())
            .map(prefetch::Prefetch::start);
        let (worker, engine) = worker::Worker::start(session, timeout);
        let server = HmgServer {
            worker,
            prefetch: prefetch.as_ref().map(|(p, _)| Arc::clone(p)),
            tool_router: Self::tool_router(),
        };
        (server, Threads { engine, prefetch })
    }

    /// Queues a write that stores `content` (see [`prefetch`]): offered to
    /// the helper now, taken from it when the write runs.
    async fn write<T: Send + 'static>(
        &self,
        content: Option<String>,
        f: impl FnOnce(&mut Session) -> anyhow::Result<T> + Send + 'static,
    ) -> Result<T, McpError> {
        let (Some(prefetch), Some(content)) = (self.prefetch.clone(), content) else {
            return self.call(f).await;
        };
        prefetch.offer(&content);
        self.call(move |s| {
            prefetch.before_write(&content, s);
            f(s)
        })
        .await
    }

    /// Queues one engine call and waits for it (see [`worker`] for timeouts).
    async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Session) -> anyhow::Result<T> + Send + 'static,
    ) -> Result<T, McpError> {
        self.worker.call(f).await.map_err(internal)
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
        let content = Some(input.content.clone());
        let r = self
            .write(content, move |s| {
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
                    include_graph: input.include_graph,
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
        let content = input.new_content.clone();
        let r = self
            .write(content, move |s| {
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

    #[tool(
        name = "memory_graph",
        description = "The knowledge graph of the memories this server's scope sees. op=entities: the entities named in `text`. op=neighborhood: the entities within `depth` hops of `entity` and the edges between them (each edge names the memory that states it, with valid_at / invalid_at). op=path: the shortest chain of edges from `entity` to `target`. op=relate: store a triple you already know, `entity` -[`relation`]-> `target` (kept as a memory of its own)."
    )]
    async fn memory_graph(
        &self,
        Parameters(input): Parameters<GraphInput>,
    ) -> Result<CallToolResult, McpError> {
        let op = input.op;
        // A missing field is the caller's mistake: a tool error, as bad arguments are.
        macro_rules! need {
            ($value:expr, $field:literal) => {
                match $value.clone().filter(|v: &String| !v.trim().is_empty()) {
                    Some(v) => v,
                    None => {
                        return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                            "memory_graph: op `{}` needs `{}`",
                            op.as_str(),
                            $field
                        ))]));
                    }
                }
            };
        }
        match input.op {
            GraphOp::Entities => {
                let text = need!(input.text, "text");
                let r = self.call(move |s| s.extract_entities(&text)).await?;
                reply(&r, render::entities(&r))
            }
            GraphOp::Neighborhood => {
                let entity = need!(input.entity, "entity");
                let r = self
                    .call(move |s| {
                        s.neighborhood(&api::NeighborhoodRequest {
                            entity,
                            depth: input.depth,
                            limit: input.limit,
                            include_invalid: None,
                            scope: s.scope.clone(),
                            remote: None,
                        })
                    })
                    .await?;
                reply(&r, render::neighborhood(&r))
            }
            GraphOp::Path => {
                let (from, to) = (need!(input.entity, "entity"), need!(input.target, "target"));
                let r = self
                    .call(move |s| {
                        s.shortest_path(&api::PathRequest {
                            from,
                            to,
                            max_depth: input.depth,
                            scope: s.scope.clone(),
                            remote: None,
                        })
                    })
                    .await?;
                reply(&r, render::path(&r))
            }
            GraphOp::Relate => {
                let source = need!(input.entity, "entity");
                let target = need!(input.target, "target");
                let relation = need!(input.relation, "relation");
                let r = self
                    .call(move |s| {
                        s.relate(&api::RelateRequest {
                            source,
                            relation,
                            target,
                            source_type: None,
                            target_type: None,
                            scope: s.scope.clone(),
                            by: None,
                        })
                    })
                    .await?;
                reply(&r, render::relate(&r))
            }
        }
    }

    #[tool(
        name = "memory_observe",
        output_schema = schema_for_output::<api::ObserveResult>(),
        description = "Capture what one conversation turn says to remember, without writing memories one by one: explicit commands (記住/remember → memorize, 忘掉/forget → negate the best match), the user's profile, possessions, preferences and wishes about your answers (kept as personal memories), decisions and constraints. Questions, chit-chat, code, time-bound remarks and bug reports are never captured. Returns each candidate with its signal, confidence and whether it was written; a newer fact about the same thing replaces the older one."
    )]
    async fn memory_observe(
        &self,
        Parameters(input): Parameters<ObserveInput>,
    ) -> Result<CallToolResult, McpError> {
        let r = self
            .call(move |s| {
                s.observe(&api::ObserveRequest {
                    turn: input.turn,
                    mode: input.mode,
                    role: input.role,
                    dry_run: None,
                    scope: s.scope.clone(),
                    by: None,
                })
            })
            .await?;
        reply(&r, render::observe(&r))
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "hmg-mcp",
    instructions = "HMG long-term memory. Recall before answering questions about earlier decisions; memorize decisions, facts and constraints as single statements (or pass the user's turn to memory_observe); correct (replace/negate) instead of duplicating; hand off at the end of a session. memory_graph explores the entities the memories name. Scope is set by the server."
)]
impl ServerHandler for HmgServer {}
