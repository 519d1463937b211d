//! `hmg hook user-prompt-submit`: capture and recall on every turn, without
//! the agent calling a tool (seed 001: 每次對話都會查詢相關記憶注入上下文，
//! 每輪互動結束後自動擷取新的記憶).
//!
//! Reads Claude Code's UserPromptSubmit hook JSON on stdin (`prompt`,
//! `session_id`, `cwd`), observes the prompt in that session (scope from
//! `cwd`), recalls what is relevant to it (the whole prompt and each of its
//! first sentences), and prints
//! `{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
//! "additionalContext": "…"}}` — or nothing when there is nothing to say. A
//! hook never holds a turn up: after `$HMG_HOOK_TIMEOUT_MS` (default 5000)
//! it prints nothing, says why on stderr and exits 0.

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use hmg_cli::api;
use hmg_cli::{SessionOptions, open_session};
use serde::Deserialize;

use super::Global;

/// Recalled memories below this score are not worth the agent's context.
const MIN_SCORE: f64 = 0.35;
const MAX_MEMORIES: u32 = 5;
/// Sentences of a prompt recalled on their own.
const MAX_SENTENCES: usize = 3;
const DEFAULT_TIMEOUT_MS: u64 = 5_000;

/// The fields of Claude Code's hook input this hook reads.
#[derive(Deserialize)]
struct HookInput {
    prompt: String,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    cwd: Option<PathBuf>,
}

pub fn user_prompt_submit(g: &Global) -> Result<ExitCode> {
    let mut raw = String::new();
    io::stdin()
        .read_to_string(&mut raw)
        .context("cannot read the hook input on stdin")?;
    let input: HookInput = serde_json::from_str(&raw)
        .context("the hook input is not UserPromptSubmit JSON (with a `prompt` string)")?;
    let timeout = std::env::var("HMG_HOOK_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_TIMEOUT_MS);
    let options = SessionOptions {
        store: g.store.clone(),
        model: g.model.clone(),
        tenant: g.tenant.clone(),
        workspace: g.workspace.clone(),
        repository: g.repository.clone(),
        branch: g.branch.clone(),
        session: input
            .session_id
            .clone()
            .filter(|s| !s.trim().is_empty())
            .or_else(|| g.session.clone()),
        by: Some("hook".into()),
        cwd: input.cwd.clone(),
        salvage: false,
        recalls: Vec::new(),
    };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(context_for(&options, &input.prompt));
    });
    match rx.recv_timeout(Duration::from_millis(timeout)) {
        Ok(Ok(Some(context))) => {
            let out = serde_json::json!({
                "hookSpecificOutput": {
                    "hookEventName": "UserPromptSubmit",
                    "additionalContext": context,
                }
            });
            writeln!(io::stdout().lock(), "{out}")?;
            Ok(ExitCode::SUCCESS)
        }
        Ok(Ok(None)) => Ok(ExitCode::SUCCESS),
        Ok(Err(e)) => Err(e),
        Err(_) => {
            eprintln!("hmg: the prompt hook gave up after {timeout} ms; nothing was injected");
            // The worker may hold the store lock: leave without waiting for it.
            std::process::exit(0);
        }
    }
}

/// What a prompt is recalled by: the whole prompt, and each of its first
/// sentences on its own (a long prompt asks several things); the best score
/// per memory wins.
fn queries_of(prompt: &str) -> Vec<String> {
    let mut queries: Vec<String> = vec![prompt.chars().take(1000).collect()];
    queries.extend(
        prompt
            .split(['。', '？', '！', '?', '!', '\n'])
            .map(str::trim)
            .filter(|s| s.chars().count() >= 4)
            .take(MAX_SENTENCES)
            .map(str::to_owned),
    );
    if queries.len() == 2 {
        queries.pop(); // one sentence: the whole prompt already asked it
    }
    queries
}

/// Observe, then recall; the text to inject, if any.
fn context_for(options: &SessionOptions, prompt: &str) -> Result<Option<String>> {
    if prompt.trim().is_empty() {
        bail!("the prompt is empty");
    }
    let queries = queries_of(prompt);
    // Their query embeddings are made on a second core while the store opens.
    let mut session = open_session(&SessionOptions {
        recalls: queries.clone(),
        ..options.clone()
    })?;
    let observed = session.observe(&api::ObserveRequest {
        turn: prompt.to_owned(),
        mode: None,
        role: Some(api::Speaker::User),
        dry_run: None,
        scope: session.scope.clone(),
        by: None,
    })?;
    let mut best: Vec<api::RecalledAtom> = Vec::new();
    for query in queries {
        let r = session.recall(&api::RecallRequest {
            query,
            max_results: Some(MAX_MEMORIES),
            scope: session.scope.clone(),
            ..api::RecallRequest::default()
        })?;
        for atom in r.atoms {
            match best.iter_mut().find(|b| b.atom_id == atom.atom_id) {
                Some(b) if b.score < atom.score => *b = atom,
                Some(_) => {}
                None => best.push(atom),
            }
        }
    }
    best.sort_by(|a, b| b.score.total_cmp(&a.score));
    best.truncate(MAX_MEMORIES as usize);
    let captured: Vec<&api::CaptureCandidate> = observed
        .candidates
        .iter()
        .filter(|c| c.captured && c.effect == Some(api::Effect::Applied))
        .collect();
    let relevant: Vec<&api::RecalledAtom> = best
        .iter()
        .filter(|a| {
            a.score >= MIN_SCORE
                && !captured
                    .iter()
                    .any(|c| c.atom_id.as_deref() == Some(&a.atom_id))
        })
        .collect();
    if relevant.is_empty() && captured.is_empty() {
        return Ok(None);
    }
    let mut text = String::new();
    if !relevant.is_empty() {
        text.push_str("Relevant long-term memories (HMG):\n");
        for a in &relevant {
            let day = a.created_at.get(..10).unwrap_or(&a.created_at);
            text.push_str(&format!(
                "- {} ({day}, {}, id {})\n",
                a.content, a.source, a.atom_id
            ));
        }
    }
    if !captured.is_empty() {
        text.push_str("Remembered from this message:\n");
        for c in &captured {
            text.push_str(&format!("- {} ({})\n", c.content, c.signal.as_str()));
        }
    }
    Ok(Some(text.trim_end().to_owned()))
}
