//! `hmg-mcp` — the HMG MCP server over stdio. stdout carries only protocol
//! messages; diagnostics go to stderr. Exits cleanly when stdin closes.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use hmg_cli::{SessionOptions, open_session};
use hmg_mcp::HmgServer;
use rmcp::ServiceExt;

#[derive(Parser)]
#[command(name = "hmg-mcp", version, about = "HMG MCP server (stdio)")]
struct Args {
    /// Store directory [default: $HMG_STORE, else ~/.local/share/hmg/store]
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
    /// Embedding model directory, or `none` for keyword-only recall
    /// [default: $HMG_MODEL, else ~/.cache/hmg/model/e5-small-v2 if present]
    #[arg(long, value_name = "DIR")]
    model: Option<PathBuf>,
    /// Per-call timeout in milliseconds.
    #[arg(long, env = "HMG_MCP_TIMEOUT_MS", default_value_t = 25_000)]
    timeout_ms: u64,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hmg-mcp: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<()> {
    let session = open_session(&SessionOptions {
        store: args.store,
        model: args.model,
        by: Some("agent".into()),
        ..SessionOptions::default()
    })?;
    eprintln!("hmg-mcp: scope {}", session.scope.display());
    let server = HmgServer::new(session, Duration::from_millis(args.timeout_ms));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let service = server
            .serve(rmcp::transport::stdio())
            .await
            .context("MCP initialisation failed")?;
        service.waiting().await.context("MCP service failed")?;
        anyhow::Ok(())
    })
}
